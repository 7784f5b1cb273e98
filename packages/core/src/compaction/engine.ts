/**
 * The basic compaction backend (§0.2 "CompactionEngine"): the automatic policy entry points (§3.5 pressure,
 * §3.6 overflow), the explicit span (§3.8), manual idle compaction with its error classes, cancellation and
 * flush (§3.7, §7.9–§7.11), and the pre-step listener (§3.9). All mutual exclusion is the log-recorded lock
 * (§11.1): no in-memory mutex exists, so a restored log carries everything the engine decides on.
 */
import type { LlmRuntime } from '../adapter/runtime.ts'
import { assertNever, errorChain } from '../errors.ts'
import type { EventLog } from '../log/event-log.ts'
import type { CapacityWarning, EventDraft, SessionEvent } from '../log/events.ts'
import {
  calibratedRetain, calibratedTotal, calibrationValue, CALIBRATION_MIN_PERMILLE,
} from '../meter/calibration.ts'
import type { Measurement } from '../meter/measurement.ts'
import { TokenMeter } from '../meter/meter.ts'
import { harnessReadOnlyPath, type ReadOnlyPathResolver } from '../offload/projection.ts'
import { offloadOversizedText, oversizedTextBound } from '../offload/text.ts'
import type { CompactionPolicySpec, CompactionTrigger, RouteTarget } from '../policy/config.ts'
import { hardeningOf, type HardeningSpec } from '../policy/hardening.ts'
import { CompactionBusyError, evaluatePressure, PressureWarningGate, routedTarget } from '../policy/pressure.ts'
import type { PruneSpec } from '../prune/config.ts'
import { pruneSession } from '../prune/session.ts'
import { selectCompactableRange, type SelectionOptions } from '../range/select.ts'
import { BracketFailure, runBracket, type BracketEnvironment, type CompactionResult, type HardenedShrink } from './bracket.ts'
import { CompactionConvergenceError, CompactionError, ManualCompactionError, SummarizerError } from './errors.ts'
import { TRANSIENT_FAILURE_CODES } from '../adapter/contract.ts'
import { LlmSummarizer, type Summarizer } from './summarizer.ts'
import { nodeFixedPrice, resolveSummaryRoute, summaryFitOf, summaryPromptOverhead, type SummaryRoute } from './summary-room.ts'

/** A granted idle-maintenance reservation (§3.7 step 2); `signal` aborts when the agent cancels it (FAULT-82). */
export interface IdleReservation {
  readonly signal: AbortSignal
  /** Ends the reservation; called exactly once, after the flush (§3.7 step 5). */
  release(): void
}

/** The agent's idle admission (§3.7 step 2): a synchronous reservation, or null when it runs or has waking queued work. */
export interface IdleAdmission {
  tryReserve(): IdleReservation | null
}

/** Everything a `CompactionEngine` works with; only `log`, `runtime`, `policy`, the clock and the id generators are required. */
export interface CompactionEngineOptions {
  log: EventLog
  runtime: LlmRuntime
  /** The resolved policy (`resolveCompactionConfig`, §3.2). */
  policy: CompactionPolicySpec
  /** The tool-result pruner's spec; absent = no pruner loaded (§5). */
  pruner?: PruneSpec
  /** Event time (a virtual clock in the harness); read once per appended event. */
  clock: () => number
  /** Fresh, unique, non-empty compaction ids (§1.4.14). */
  newCompactionId: () => string
  /** Fresh checkpoint message ids (§8.5); read once per committed checkpoint. */
  newMessageId: () => string
  /** Ids of the never-logged summary instruction messages (§8.2); default `compaction-instruction-<n>` per engine. */
  newInstructionId?: () => string
  /** The agent's configured route: the §8.1 fallback summary target. */
  agentRoute?: RouteTarget
  sessionId?: string
  /** A meter shared with the loop; else the engine creates one over `log`. */
  meter?: TokenMeter
  /** The append path of every bracket event (default `log.append`); tests inject storage faults here (FAULT-60…63). */
  append?: (draft: EventDraft) => SessionEvent
  /** The session durability checkpoint awaited after a closed manual bracket (§7.11). */
  flush?: () => Promise<void>
  /** §8.6 override; default the §8 LLM summarizer. */
  summarizer?: Summarizer
  /** Read-only attachment paths for offload placeholders (§6.5); the harness rule by default. */
  readOnlyPath?: ReadOnlyPathResolver
  /** Operational warnings (§3.9). */
  warn?: (message: string) => void
  /** Informational messages (§3.9 "compaction (step pressure): …"). */
  info?: (message: string) => void
}

/**
 * The compaction engine of one session. Every entry point evaluates the log lock synchronously right before
 * `compaction/start` (§11.1); the pressure path also after its capacity lookup, the overflow path also before
 * it prunes.
 */
export class CompactionEngine {
  private readonly log: EventLog
  private readonly runtime: LlmRuntime
  private readonly policy: CompactionPolicySpec
  private readonly pruner: PruneSpec | undefined
  private readonly clock: () => number
  private readonly meter: TokenMeter
  private readonly flush: (() => Promise<void>) | undefined
  private readonly warnSink: (message: string) => void
  private readonly infoSink: (message: string) => void
  private readonly readOnlyPath: ReadOnlyPathResolver
  private readonly env: BracketEnvironment
  /** §3.9: target-pressure config errors warn once per route for this engine's lifetime (§11.5). */
  private readonly warnings = new PressureWarningGate()
  /** The hardened rules of `policy` (all `null` when faithful). */
  private readonly hardening: HardeningSpec
  /**
   * HARD-1 back-off after a failed automatic pressure attempt (`docs/hardened.md`); null when the last attempt
   * succeeded or none failed. In memory only: a restored engine starts without back-off.
   */
  private backoff: FailureBackoffState | null = null
  /** The agent's configured route (the §8.1 fallback), for HARD-2's summary route lookup. */
  private readonly agentRoute: RouteTarget | undefined

  constructor(options: CompactionEngineOptions) {
    this.log = options.log
    this.runtime = options.runtime
    this.policy = options.policy
    this.hardening = hardeningOf(options.policy)
    this.agentRoute = options.agentRoute
    this.pruner = options.pruner
    this.clock = options.clock
    this.readOnlyPath = options.readOnlyPath ?? harnessReadOnlyPath
    this.meter = options.meter ?? new TokenMeter(options.log, { dialect: options.log.dialect, readOnlyPath: this.readOnlyPath })
    this.flush = options.flush
    this.warnSink = options.warn ?? ((): void => {})
    this.infoSink = options.info ?? ((): void => {})
    let instructions = 0
    const summarizer = options.summarizer ?? new LlmSummarizer({
      runtime: options.runtime,
      log: options.log,
      policy: options.policy,
      ...(options.agentRoute === undefined ? {} : { agentRoute: options.agentRoute }),
      ...(options.sessionId === undefined ? {} : { sessionId: options.sessionId }),
      newInstructionId: options.newInstructionId ?? ((): string => `compaction-instruction-${++instructions}`),
    })
    const log = options.log
    this.env = {
      log,
      meter: this.meter,
      summarizer,
      clock: options.clock,
      newCompactionId: options.newCompactionId,
      newMessageId: options.newMessageId,
      append: options.append ?? ((draft: EventDraft): SessionEvent => log.append(draft)),
      readOnlyPath: this.readOnlyPath,
    }
  }

  /**
   * §3.5 (`pressure`) or §3.6 (`context-overflow`). Returns the last committed result, or null when nothing
   * was compacted — a prune may still have landed (compare `replaceGeneration`). Throws: `CompactionBusyError`
   * (live lock; nothing written), `TargetPressureConfigError` / capacity lookup errors (pressure only),
   * `CompactionError` (a bracket failed), `CompactionConvergenceError` (§3.5 step 11), `PruneError`.
   */
  compactIfNeeded(trigger: CompactionTrigger, signal?: AbortSignal): Promise<CompactionResult | null> {
    switch (trigger) {
      case 'pressure':
        return this.compactForPressure(signal)
      case 'context-overflow':
        return this.compactForOverflow(signal)
      default:
        return assertNever(trigger, 'compaction trigger')
    }
  }

  /**
   * §3.8: one summary compaction of the inclusive positional span `start … end`, owned by the open turn, with
   * whole-surface stability. Entry failures write nothing and throw `RegionError` (span, no open turn) or
   * `CompactionBusyError`; later failures close the bracket and throw `CompactionError`.
   */
  async compactRegion(start: number, end: number, signal?: AbortSignal): Promise<CompactionResult> {
    const summaryRoute = this.hardening.summaryRoom === null ? undefined : await this.summaryRoute(signal) // HARD-2
    return this.compactAutomatic(start, end, signal, undefined, summaryRoute)
  }

  /**
   * §3.7 manual idle compaction (owner null, selected-span stability, flush). A pre-aborted `signal` throws its
   * reason synchronously, before anything is reserved, measured or written (FAULT-80). Resolves to the result,
   * or null when nothing is compactable (nothing written). Rejects with the caller's exact abort reason when the
   * caller cancelled first (after close and flush), else `ManualCompactionError` (§7.9 precedence: cancelled,
   * commit, changed, summary, persistence). The reservation is released last, in every case.
   */
  compactNow(options: { signal?: AbortSignal; sourceCommandId?: string; admission: IdleAdmission }): Promise<CompactionResult | null> {
    const caller = options.signal
    if (caller?.aborted === true) throw caller.reason
    return this.runManual(caller, options.sourceCommandId, options.admission)
  }

  /**
   * §3.9 automatic pre-step listener: a no-op when the policy has `auto: false` or `signal` is already aborted
   * (FAULT-83); otherwise a pressure check. Never throws: failures become warnings ("step compaction failed:
   * <message>; continuing the turn"), target-pressure configuration errors once per route; below pressure it
   * writes nothing.
   */
  async preStep(signal?: AbortSignal): Promise<void> {
    if (!this.policy.auto || signal?.aborted === true) return
    try {
      if (this.hardening.failureBackoff !== null && this.backingOff()) return // HARD-1 (measuring may throw: inside)
      const r = await this.compactIfNeeded('pressure', signal)
      if (r !== null) {
        this.backoff = null // HARD-1: a committed pass resets the back-off (nothing to do leaves it as it is)
        const { shadowedRange: range } = r
        const what = `${r.shadowedSeqs.length} nodes (seqs ${range.start}-${range.end}, ~${r.shadowedTokenCount} tokens)`
        this.infoSink(`compaction (step pressure): shadowed ${what}`)
      }
    } catch (err) {
      if (this.hardening.failureBackoff !== null) this.noteFailure(err)
      if (this.warnings.shouldWarn(err)) this.warnSink(`step compaction failed: ${errorChain(err)}; continuing the turn`)
    }
  }

  /**
   * HARD-1: true when this pre-step is skipped because the last automatic attempt failed and either the surface
   * has not changed enough (`minGrowthTokens` of priced surface, or a `replaceGeneration` move) or the back-off
   * (`baseSteps · 2^(failures−1)`, at most `maxSteps` pre-steps) has not elapsed. Writes nothing to the log.
   */
  private backingOff(): boolean {
    const state = this.backoff
    const rule = this.hardening.failureBackoff
    if (state === null || rule === null) return false
    state.skipped++
    const grown = this.meter.measure().surfaceTokens - state.surfaceTokens
    const moved = this.log.state.surface.replaceGeneration !== state.generation
    const wait = Math.min(rule.maxSteps, rule.baseSteps * 2 ** Math.min(state.failures - 1, 30))
    if ((grown >= rule.minGrowthTokens || moved) && state.skipped > wait) return false
    this.infoSink(`compaction (step pressure): hardened back-off after ${state.failures} failed attempt(s): ` +
      `pre-step ${state.skipped} of ${wait}, surface +${grown} tokens of ${rule.minGrowthTokens}` +
      `${moved ? ', replaceGeneration moved' : ''}; skipped`)
    return true
  }

  /**
   * HARD-1: records a failed (or non-converging) automatic attempt; busy and configuration errors are not failures,
   * and neither is a summary call that failed transiently (a §1.2.1 transient code: rate limit, server error,
   * timeout, transport, empty response): retrying it costs no full-price summary, and backing off from a flaky
   * summary route let pressure run into the window (`scenarios/hardened/flaky-summary-route-long.yaml`).
   */
  private noteFailure(err: unknown): void {
    if (!(err instanceof CompactionError) && !(err instanceof CompactionConvergenceError)) return
    if (transientSummaryFailure(err)) return
    this.backoff = {
      failures: (this.backoff?.failures ?? 0) + 1,
      skipped: 0,
      surfaceTokens: this.meter.measure().surfaceTokens,
      generation: this.log.state.surface.replaceGeneration,
    }
  }

  /** The hardened shrink checks (HARD-3 when a threshold is known, HARD-4), or undefined when none is on. */
  private hardenedShrink(thresholdTokens: number | undefined): HardenedShrink | undefined {
    const budget = this.hardening.checkpointBudget
    const relief = this.hardening.meteredRelief !== null
    const withBudget = budget !== null && thresholdTokens !== undefined
    if (!withBudget && !relief) return undefined
    return {
      ...(withBudget ? { checkpointBudget: { thresholdTokens, marginTokens: budget.marginTokens, reliefRatio: budget.reliefRatio } } : {}),
      ...(relief ? { meteredRelief: true } : {}),
    }
  }

  /**
   * HARD-2: the summary route with its reported limits when `summaryRoom` is on (undefined when off, or when no
   * target or metadata resolves: the bracket then runs as the protocol says).
   */
  private async summaryRoute(signal: AbortSignal | undefined): Promise<SummaryRoute | undefined> {
    const route = await resolveSummaryRoute({
      log: this.log, policy: this.policy, runtime: this.runtime,
      ...(this.agentRoute === undefined ? {} : { agentRoute: this.agentRoute }),
      ...(signal === undefined ? {} : { signal }),
    }, this.infoSink)
    return route ?? undefined
  }

  /** One automatic bracket (an explicit region, pressure or overflow), with the hardened shrink checks when any is on. */
  private async compactAutomatic(
    start: number, end: number, signal: AbortSignal | undefined, hardened: HardenedShrink | undefined,
    summaryRoute: SummaryRoute | undefined, deferredTo?: number,
  ): Promise<CompactionResult> {
    try {
      return await runBracket(this.env, {
        start, end, owner: 'current-turn', ...(signal === undefined ? {} : { signal }), ...(hardened === undefined ? {} : { hardened }),
        ...(summaryRoute === undefined ? {} : { summaryRoute }),
        ...(deferredTo === undefined ? {} : { deferredTo }),
      })
    } catch (err) {
      if (err instanceof BracketFailure) throw automaticError(err)
      throw err
    }
  }

  /**
   * HARD-5 (`hardening.oversizedUserText`): projects oversized user text before anything is measured or selected,
   * with the window of the route context in force. The agent does this before every conversation request, so
   * this only writes for a log whose paste no request has carried yet (e.g. one restored after a crash). Not
   * while a bracket is live: its §7.6 stability check would see the re-priced node.
   */
  private projectOversizedText(): void {
    const rule = this.hardening.oversizedUserText
    const window = this.log.state.routeContext?.data.contextWindow
    if (rule === null || window === undefined || this.log.state.lock.state === 'live') return
    offloadOversizedText(this.log, oversizedTextBound(rule.maxWindowRatio, window), this.clock, this.env.append)
  }

  private async compactForPressure(signal: AbortSignal | undefined): Promise<CompactionResult | null> {
    this.projectOversizedText()
    const calibration = this.calibration() // HARD-8: 1000 (no scaling) unless the rule calibrates
    const pressureOf = (x: Measurement): number => calibratedTotal(x, calibration)
    const decision = await evaluatePressure({ // §3.5 steps 1–8 (lock checked after the capacity lookup)
      log: this.log,
      spec: this.policy,
      measure: () => this.meter.measure(),
      resolveModelInfo: (provider, model, s) => this.runtime.resolveModelInfo(provider, model, s),
      ...(signal === undefined ? {} : { signal }),
      ...(calibration === CALIBRATION_MIN_PERMILLE ? {} : { pressureOf }),
    })
    switch (decision.kind) {
      case 'no-target':
      case 'below':
        return null // §3.11: below pressure nothing is written, not even a prune
      case 'above':
        break
      default:
        return assertNever(decision, 'pressure decision')
    }
    const { thresholdTokens } = decision.compact
    const retainTokens = calibratedRetain(decision.compact.retainTokens, calibration) // HARD-8: the tail in estimate units
    let m: Measurement = decision.measurement
    if (this.pruner !== undefined) { // step 9
      pruneSession(this.log, this.pruner, this.clock, { readOnlyPath: this.readOnlyPath })
      m = this.meter.measure()
      if (pressureOf(m) < thresholdTokens) return null
    }
    const hardened = this.hardenedShrink(thresholdTokens)
    // HARD-2: the summary route's limits (after the prune, which stays right after the lock check); the surface
    // is measured again after the lookup. Faithful: no lookup.
    const summaryRoute = this.hardening.summaryRoom === null ? undefined : await this.summaryRoute(signal)
    // Whatever awaited since `m` was taken (the pressure check's return, HARD-2's lookup, also one that found no route)
    // may have let a foreign append land: select on the log as it is now.
    if (this.hardening.summaryRoom !== null || m.logRevision !== this.log.length) m = this.meter.measure()
    const attempts = decision.policy.compactionRetries + 1 // step 10
    let result: CompactionResult | null = null
    for (let attempt = 0; attempt < attempts; attempt++) {
      const range = selectCompactableRange(this.log, m, retainTokens, this.selection(m, summaryRoute))
      if (range === null) {
        if (result === null) return null
        break
      }
      result = await this.compactAutomatic(range.start, range.end, signal, hardened, summaryRoute, range.deferredTo)
      m = this.meter.measure()
      if (pressureOf(m) < thresholdTokens) return result
    }
    throw new CompactionConvergenceError(attempts, pressureOf(m), thresholdTokens) // step 11
  }

  /**
   * HARD-8: the calibration factor (thousandths) of the routed target, learned from the log (`meter/calibration.ts`);
   * 1000 when `hardening.capacitySanity.calibrate` is off or the route has no evidence.
   */
  private calibration(): number {
    const rule = this.hardening.capacitySanity
    const target = routedTarget(this.log)
    if (rule === null || !rule.calibrate || target === null) return CALIBRATION_MIN_PERMILLE
    return this.meter.capacityEvidence(target.provider, target.model).calibration?.permille ?? CALIBRATION_MIN_PERMILLE
  }

  /**
   * HARD-8 (`hardening.capacitySanity`): the fields the next `request/context` of a route carries — the calibration
   * factor when above 1 (with `calibrate`), and `capacityWarning` when usage exceeded the route's reported window and
   * no record of the route carried the warning yet. Both come from the log alone (the meter's capacity evidence).
   * Says so on the sinks: the warning on `warn` (once per route: the agent writes it right away), a changed factor on
   * `info`. `{}` when the rule is off, so the faithful record is unchanged.
   */
  routeContextNotes(provider: string, model: string): RouteContextNotes {
    const rule = this.hardening.capacitySanity
    if (rule === null) return {}
    const evidence = this.meter.capacityEvidence(provider, model)
    const notes: { calibration?: number; capacityWarning?: CapacityWarning } = {}
    const observation = evidence.calibration
    if (rule.calibrate && observation !== undefined && observation.permille > CALIBRATION_MIN_PERMILLE) {
      notes.calibration = calibrationValue(observation.permille)
    }
    const ctx = this.log.state.routeContext?.data
    const previous = ctx !== undefined && ctx.provider === provider && ctx.model === model ? ctx.calibration : undefined
    if (rule.calibrate && observation !== undefined && notes.calibration !== previous) {
      this.infoSink(`capacity (hardened HARD-8): calibration of ${provider}/${model} ${previous ?? 1} → ${notes.calibration ?? 1} ` +
        `(provider ${observation.observedTokens} tokens / estimate ${observation.estimatedTokens}, ${observation.source} at seq ${observation.seq})`)
    }
    const excess = evidence.excess
    if (excess !== undefined && !evidence.warned) {
      notes.capacityWarning = { usageSeq: excess.usageSeq, usageTokens: excess.usageTokens, contextWindow: excess.contextWindow }
      this.warnSink(`capacity (hardened HARD-8): provider usage of ${excess.usageTokens} tokens at seq ${excess.usageSeq} exceeds ` +
        `the context window ${excess.contextWindow} the adapter reports for ${provider}/${model}; the reported capacity looks wrong`)
    }
    return notes
  }

  /**
   * Selection options of the hardened profile; `{}` (faithful §4.2) when no rule applies. HARD-2 bounds the
   * span's price so that its summary prompt leaves the summary route room for a summary (`summary-room.ts`).
   */
  private selection(m: Measurement, summaryRoute: SummaryRoute | undefined): SelectionOptions {
    return { ...(this.hardening.openTurnPrompt !== null ? { keepOpenTurnPrompt: true } : {}), ...this.summaryFit(m, summaryRoute) }
  }

  /** HARD-2's selection bound (`summaryFit`), or `{}` without a summary route or a known window. */
  private summaryFit(m: Measurement, summaryRoute: SummaryRoute | undefined): SelectionOptions {
    if (summaryRoute === undefined) return {}
    const overhead = summaryPromptOverhead(this.log, m, this.log.state.header?.header.tools)
    const fit = summaryFitOf(summaryRoute, overhead, (seq) => nodeFixedPrice(this.log, seq, this.readOnlyPath))
    return fit === undefined ? {} : { summaryFit: fit }
  }

  private async compactForOverflow(signal: AbortSignal | undefined): Promise<CompactionResult | null> {
    if (routedTarget(this.log) === null) return null // step 1
    // HARD-2: the summary route's limits, looked up before the lock check so that check, the prune and the
    // bracket entry stay synchronous (faithful: no lookup, no await).
    const summaryRoute = this.hardening.summaryRoom === null ? undefined : await this.summaryRoute(signal)
    const lock = this.log.state.lock // step 2: before pruning (Q-17, INV-24)
    if (lock.state === 'live') throw new CompactionBusyError(lock.bracket)
    this.projectOversizedText()
    if (this.pruner !== undefined) pruneSession(this.log, this.pruner, this.clock, { readOnlyPath: this.readOnlyPath })
    const m = this.meter.measure()
    const range = selectCompactableRange(this.log, m, 0, this.selection(m, summaryRoute)) // steps 3–4: retain only the newest unit
    if (range === null) return null
    return this.compactAutomatic(range.start, range.end, signal, this.hardenedShrink(undefined), summaryRoute, range.deferredTo) // step 6: one attempt
  }

  private async runManual(
    caller: AbortSignal | undefined, sourceCommandId: string | undefined, admission: IdleAdmission,
  ): Promise<CompactionResult | null> {
    const reservation = admission.tryReserve() // §3.7 step 2, synchronously on call
    if (reservation === null) throw new ManualCompactionError('busy', 'busy: the agent is running or has queued work')
    const agent = reservation.signal
    // §7.9: whichever signal aborted first decides between the caller's exact reason and `cancelled`.
    let firstAbort: 'caller' | 'agent' | null = agent.aborted ? 'agent' : null
    const onCaller = (): void => { firstAbort ??= 'caller' }
    const onAgent = (): void => { firstAbort ??= 'agent' }
    caller?.addEventListener('abort', onCaller, { once: true })
    agent.addEventListener('abort', onAgent, { once: true })
    const op = caller === undefined ? agent : AbortSignal.any([agent, caller])
    const cancellation = (): unknown => firstAbort === 'caller' && caller !== undefined
      ? caller.reason
      : new ManualCompactionError('cancelled', `cancelled: ${errorChain(agent.reason)}`, { cause: agent.reason })
    try {
      if (op.aborted) throw cancellation() // step 3a
      let summaryRoute: SummaryRoute | undefined
      if (this.hardening.summaryRoom !== null) { // HARD-2: the summary route's limits (faithful: no lookup, no await)
        try {
          summaryRoute = await this.summaryRoute(op)
        } catch (err) {
          if (op.aborted) throw cancellation()
          throw err
        }
        if (op.aborted) throw cancellation()
      }
      this.projectOversizedText()
      const m = this.meter.measure()
      const range = selectCompactableRange(this.log, m, 0, this.summaryFit(m, summaryRoute)) // step 3b
      if (range === null) return null // step 3c: nothing written
      let result: CompactionResult | null = null
      let failure: BracketFailure | null = null
      try {
        result = await runBracket(this.env, {
          start: range.start, end: range.end, owner: null, signal: op, ...(sourceCommandId === undefined ? {} : { sourceCommandId }),
          ...(summaryRoute === undefined ? {} : { summaryRoute }),
          ...(range.deferredTo === undefined ? {} : { deferredTo: range.deferredTo }),
        })
      } catch (err) {
        if (!(err instanceof BracketFailure)) throw err // entry failures: busy (lock, open turn); nothing written
        failure = err
      }
      let flushError: unknown = null
      const closed = failure === null || failure.closed
      if (closed && this.flush !== undefined) { // §7.11: a failed close skips the flush
        try {
          await this.flush()
        } catch (err) {
          flushError = err ?? new Error('flush failed')
        }
      }
      if (op.aborted) throw cancellation() // cancellation wins, reported after close and flush (§7.10)
      if (failure !== null) throw manualError(failure)
      if (flushError !== null) {
        const message = `persistence: compaction committed but the flush failed: ${errorChain(flushError)}`
        throw new ManualCompactionError('persistence', message, { cause: flushError })
      }
      return result
    } finally {
      caller?.removeEventListener('abort', onCaller)
      agent.removeEventListener('abort', onAgent)
      reservation.release() // §3.7 step 5: after the flush, in every case
    }
  }
}

/** HARD-8: the optional `request/context` fields of a route (`CompactionEngine.routeContextNotes`). */
export interface RouteContextNotes {
  readonly calibration?: number
  readonly capacityWarning?: CapacityWarning
}

/** HARD-1 back-off state: consecutive failures, pre-steps skipped since the last, the surface at that failure. */
/** True when the cause chain of `err` (at most 16 deep) holds a summarizer failure with a transient code. */
function transientSummaryFailure(err: unknown): boolean {
  let e: unknown = err
  for (let depth = 0; depth < 16 && e instanceof Error; depth++) {
    if (e instanceof SummarizerError) return TRANSIENT_FAILURE_CODES.has(e.code)
    e = e.cause
  }
  return false
}

interface FailureBackoffState {
  failures: number
  skipped: number
  surfaceTokens: number
  generation: number
}

/** The automatic caller's error for a failed bracket (§7.9 "error thrown"); cancellation never applies there. */
function automaticError(failure: BracketFailure): CompactionError {
  const code = failure.code === 'cancelled' ? 'summary' : failure.code
  return new CompactionError(code, failure.compactionId, failure.closed, failure.message, { cause: failure.cause })
}

/** The manual error for a failed bracket when no cancellation applies (§7.9). */
function manualError(failure: BracketFailure): ManualCompactionError {
  const code = failure.code === 'cancelled' ? 'summary' : failure.code
  return new ManualCompactionError(code, `${code}: ${failure.message}`, { cause: failure.cause })
}
