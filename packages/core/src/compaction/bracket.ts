/**
 * The compaction bracket (§7), shared by every entry point: entry checks that write nothing on failure
 * (§7.2), prepare and re-prepare (§7.3), the summarizer attempt loop with `compaction/summary-error` and
 * region-only image offload (§7.4, §6.8), the shrink rule (§7.5), revalidation (§7.6), the synchronous
 * commit (§7.7) and exactly one close attempt on failure (§7.8). The lock is the log itself (§11.1).
 */
import { LlmError } from '../adapter/contract.ts'
import { CompactionId, MessageId, type Seq } from '../brand.ts'
import { assertNever, errorChain, InvariantError } from '../errors.ts'
import type { EventLog } from '../log/event-log.ts'
import type { CompactionSummaryData, Dialect, EventDataMap, EventDraft, SessionEvent, SummaryRoomRecord } from '../log/events.ts'
import { frozenDenseList } from '../log/validate.ts'
import type { LlmFailure, Message, TextBlock, UserMessage } from '../log/llm.ts'
import { messageContent, type OpenBracket } from '../log/session-state.ts'
import type { PricedNode } from '../meter/measurement.ts'
import { envelopePrice, type TokenMeter } from '../meter/meter.ts'
import { blocksPrice, fixedPrice, ROLE_OVERHEAD } from '../meter/price.ts'
import { countImages, type ReadOnlyPathResolver } from '../offload/projection.ts'
import { offloadCountOf, selectOffload, type RequestNode } from '../offload/select.ts'
import { CompactionBusyError } from '../policy/pressure.ts'
import { RegionError, systemHeadCount } from '../range/select.ts'
import { deriveEventMessage, projectNodeMessage } from '../surface/derive.ts'
import { toolPairingBalancedAfter, toolPairingBalancedBefore } from '../surface/tool-pairing.ts'
import { compactCheckpointSource, frameCheckpoint } from './checkpoint.ts'
import {
  BracketOwnerError, CheckpointBudgetError, ManualCompactionError, NotRelievedError, SummarizerError, SummaryNotSmallerError,
  SurfaceChangedError,
} from './errors.ts'
import type { Summarizer, SummaryInput, SummaryOutput } from './summarizer.ts'
import { clampSummaryTokens, summaryPromptOverhead, type SummaryRoute } from './summary-room.ts'

/** The outcome of a committed bracket (§7.13). */
export interface CompactionResult {
  compactionId: string
  sourceCommandId?: string
  startSeq: Seq
  summarySeq: Seq
  endSeq: Seq
  /** The raw (unframed) text summary, as on `compaction/summary.summary`. */
  summary: TextBlock[]
  /** Positional span; `start` may exceed `end` numerically (§4.3). */
  shadowedRange: { start: Seq; end: Seq }
  /** Authoritative shadowed nodes, in surface order. */
  shadowedSeqs: Seq[]
  /** `P_fixed` shadow price of the shadowed nodes (§2.6). */
  shadowedTokenCount: number
}

/**
 * Who owns a bracket (§7.2): `'current-turn'` (automatic triggers, `compactRegion`: numeric owner, whole-surface
 * stability) or `null` (manual `compactNow`: between turns, selected-span stability, caller-signal re-check).
 */
export type BracketOwner = 'current-turn' | null

/** What a bracket needs from its engine. Every event goes through `append` (tests inject storage faults there). */
export interface BracketEnvironment {
  readonly log: EventLog
  readonly meter: TokenMeter
  readonly summarizer: Summarizer
  readonly clock: () => number
  readonly newCompactionId: () => string
  readonly newMessageId: () => string
  readonly append: (draft: EventDraft) => SessionEvent
  readonly readOnlyPath: ReadOnlyPathResolver
}

/** One bracket request over the inclusive positional span `start … end` (node seqs). */
export interface BracketRequest {
  readonly start: number
  readonly end: number
  readonly owner: BracketOwner
  readonly sourceCommandId?: string
  /** Forwarded to the summarizer (§7.10); for a `null` owner also re-checked after the summary returned. */
  readonly signal?: AbortSignal
  /** The hardened profile's extra shrink checks (HARD-3, HARD-4); absent = the §7.5 rule alone (faithful). */
  readonly hardened?: HardenedShrink
  /**
   * HARD-2 (`hardening.summaryRoom`): the summary route's limits; each attempt's cap is clamped to them and the
   * room is recorded on `compaction/summary(-error)`. Absent = the §8.2 policy cap (faithful).
   */
  readonly summaryRoute?: SummaryRoute
  /**
   * HARD-2: the span's last node before the summary-route fit shrank it (`CompactableRange.deferredTo`); recorded
   * in `summaryRoom.deferredTo`, and HARD-3's budget does not count the nodes after the span up to it as retained.
   */
  readonly deferredTo?: number
}

/**
 * Extra shrink conditions of the hardened profile (`docs/hardened.md`), checked right after the §7.5 rule and
 * failing the attempt the same way (a summary failure; the bracket closes).
 */
export interface HardenedShrink {
  /**
   * HARD-3: `P_route(checkpoint) ≤ thresholdTokens − envelope − P_route(surface outside the span) − marginTokens`.
   */
  readonly checkpointBudget?: { readonly thresholdTokens: number; readonly marginTokens: number; readonly reliefRatio: number }
  /** HARD-4: `P_route(checkpoint) < P_route(shadowed nodes)` at the meter's route prices. */
  readonly meteredRelief?: boolean
}

/** Final class of a failed bracket (§7.9): a close failure is always `commit`; `cancelled` only for a `null` owner. */
export type BracketFailureCode = 'summary' | 'changed' | 'commit' | 'cancelled'

/**
 * A bracket that failed after `compaction/start`. `closed` tells whether a `compaction/end` was appended
 * (false: a live orphan, §7.8). `cause` is the failure that decided `code` (the close error when closing
 * failed); `original` is the failure that triggered the close when that close then failed.
 */
export class BracketFailure extends Error {
  override readonly name = 'BracketFailure'
  readonly code: BracketFailureCode
  readonly compactionId: string
  readonly closed: boolean
  readonly original?: unknown

  constructor(code: BracketFailureCode, compactionId: string, closed: boolean, cause: unknown, original?: unknown) {
    const message = original === undefined
      ? errorChain(cause)
      : `failed to close compaction ${compactionId}: ${errorChain(cause)} (after: ${errorChain(original)})`
    super(message, { cause })
    this.code = code
    this.compactionId = compactionId
    this.closed = closed
    if (original !== undefined) this.original = original
  }
}

/** A positional span that passed the §7.2 step 2 checks. */
interface Span {
  readonly start: Seq
  readonly end: Seq
  readonly shadowedSeqs: readonly Seq[]
}

/** The §7.3 preparation: shadow price, summarizer input, offload candidates and the stability baseline. */
interface Prepared {
  readonly shadowedTokenCount: number
  readonly input: SummaryInput
  /** The region's projected messages with their node seqs (the §6.8 selection input). */
  readonly regionNodes: readonly RequestNode[]
  /** Whole surface (numeric owner) or the selected nodes (null owner), with `P_route` prices. */
  readonly baseline: readonly PricedNode[]
  /** HARD-2: the clamped cap (`input.maxTokens`) and its record; absent without a summary route. */
  readonly room?: { readonly maxTokens: number; readonly record: SummaryRoomRecord }
}

/**
 * §7.2 step 2: `start` and `end` are current nodes, `pos(start) ≤ pos(end)`, both cuts balanced, and the span
 * does not contain the system head (seed dialect). Returns the span or the `RegionError` that rejects it.
 */
export function checkSpan(log: EventLog, start: number, end: number): Span | RegionError {
  const surface = log.state.surface
  const i = surface.position(start)
  const j = surface.position(end)
  const shadowedNote = (seq: number): string => (surface.isShadowed(seq) ? ' (it was shadowed)' : '')
  if (i < 0) return new RegionError('not-a-node', `start seq ${start} not found in surface${shadowedNote(start)}`)
  if (j < 0) return new RegionError('not-a-node', `end seq ${end} not found in surface${shadowedNote(end)}`)
  if (i > j) return new RegionError('reversed', `start seq ${start} at position ${i} is after end seq ${end} at position ${j}`)
  if (!toolPairingBalancedBefore(surface, start)) {
    return new RegionError('unbalanced-before', `the cut before start seq ${start} (position ${i}) is not a balanced boundary`)
  }
  if (!toolPairingBalancedAfter(surface, end)) {
    return new RegionError('unbalanced-after', `the cut after end seq ${end} (position ${j}) is not a balanced boundary`)
  }
  if (i < systemHeadCount(log)) {
    return new RegionError('contains-system-head', `the span ${start}…${end} includes the system head at position 0`)
  }
  return { start: surface.nodes[i] as Seq, end: surface.nodes[j] as Seq, shadowedSeqs: surface.nodes.slice(i, j + 1) }
}

/**
 * Runs one bracket (§7.1–§7.8). The entry checks and the `compaction/start` append happen synchronously on
 * call (no asynchronous gap between the lock check and the start, §7.2, §11.1). Entry failures write nothing
 * and throw: `RegionError` (span, no open turn), `CompactionBusyError` (live lock, numeric owner) or
 * `ManualCompactionError('busy')` (live lock or open turn, null owner); a pre-aborted signal with a null owner
 * throws its reason. After the start every failure closes the bracket once and rejects with `BracketFailure`.
 */
export function runBracket(env: BracketEnvironment, request: BracketRequest): Promise<CompactionResult> {
  let bracket: Bracket
  try {
    bracket = enter(env, request)
  } catch (err) {
    return Promise.reject(err)
  }
  return bracket.run()
}

function enter(env: BracketEnvironment, request: BracketRequest): Bracket {
  const { log } = env
  if (request.owner === null && request.signal?.aborted === true) throw request.signal.reason // step 1
  const span = checkSpan(log, request.start, request.end) // step 2
  if (span instanceof RegionError) throw span
  const lock = log.state.lock // step 3, evaluated synchronously right before the start (§11.1)
  if (lock.state === 'live') throw busyError(request.owner, lock.bracket)
  let owner: number | null // step 4
  if (request.owner === 'current-turn') {
    owner = log.state.openTurn
    if (owner === null) throw new RegionError('no-open-turn', 'no open turn: an automatic or explicit-region compaction runs inside a turn')
  } else {
    const turn = log.state.openTurn
    if (turn !== null) throw new ManualCompactionError('busy', `busy: turn ${turn} is open; a manual compaction runs between turns`)
    owner = null
  }
  const compactionId = CompactionId(env.newCompactionId()) // step 5
  if (compactionId === '') throw new InvariantError('newCompactionId() returned an empty id')
  const data: EventDataMap['compaction/start'] = { compactionId, ...commandOf(request), turn: owner }
  const start = env.append({ time: env.clock(), type: 'compaction/start', data }) // step 6
  return new Bracket(env, request, span, compactionId, owner, start.seq)
}

function busyError(owner: BracketOwner, bracket: OpenBracket): Error {
  if (owner !== null) return new CompactionBusyError(bracket)
  return new ManualCompactionError('busy', `busy: compaction ${bracket.compactionId} (started at seq ${bracket.startSeq}) is still open`)
}

/** The structured failure of a summarizer rejection (§7.4 `structured(err)`). */
export function structuredFailure(err: unknown): LlmFailure {
  if (err instanceof SummarizerError || err instanceof LlmError) return err.failure
  const code: unknown = typeof err === 'object' && err !== null ? (err as { code?: unknown }).code : undefined
  return { message: errorChain(err), code: typeof code === 'string' && code !== '' ? code : 'UNKNOWN' }
}

/** Whether the dialect records failed attempts as `compaction/summary-error` (D-07: rc.8 has none). */
function recordsSummaryErrors(dialect: Dialect): boolean {
  switch (dialect) {
    case 'seed':
      return true
    case 'dsh-0.1.0-rc.8':
      return false
    default:
      return assertNever(dialect, 'dialect')
  }
}

type Stage = 'prepare' | 'summary' | 'commit'

/** One open bracket: everything after `compaction/start`. */
class Bracket {
  private readonly env: BracketEnvironment
  private readonly request: BracketRequest
  private readonly span: Span
  private readonly compactionId: CompactionId
  private readonly owner: number | null
  private readonly startSeq: Seq

  constructor(
    env: BracketEnvironment, request: BracketRequest, span: Span, compactionId: CompactionId, owner: number | null, startSeq: Seq,
  ) {
    this.env = env
    this.request = request
    this.span = span
    this.compactionId = compactionId
    this.owner = owner
    this.startSeq = startSeq
  }

  async run(): Promise<CompactionResult> {
    let stage: Stage = 'prepare'
    let closing = false
    let cancelled = false
    try {
      let prepared = this.prepare()
      stage = 'summary'
      // Bound (TigerStyle): every in-bracket offload removes at least one of the region's images (§6.3).
      const attemptsMax = this.regionImagesLeft() + 1
      let output: SummaryOutput | undefined
      for (let attempt = 1; output === undefined; attempt++) {
        if (attempt > attemptsMax) throw new InvariantError(`summary attempts exceeded ${attemptsMax} in bracket ${this.compactionId}`)
        try {
          this.checkRoom(prepared)
          output = checkOutput(await this.env.summarizer.summarize(prepared.input, this.request.signal))
        } catch (err) {
          const next = this.afterSummaryFailure(err, prepared)
          if (next === null) throw err
          prepared = next
        }
      }
      // §7.10: a manual bracket re-checks the caller signal after the summary returned; automatic ones commit.
      const signal = this.request.signal
      if (this.owner === null && signal?.aborted === true) {
        cancelled = true
        throw signal.reason
      }
      const summary = output.summary.map((b): TextBlock => ({ type: 'text', text: b.text }))
      const content = frameCheckpoint(summary)
      const framedTokens = blocksPrice(content) + ROLE_OVERHEAD // P_fixed of the framed checkpoint (§7.5, Q-10)
      if (framedTokens >= prepared.shadowedTokenCount) throw new SummaryNotSmallerError(framedTokens, prepared.shadowedTokenCount)
      if (this.request.hardened !== undefined) this.checkHardened(this.request.hardened, content)
      this.revalidate(prepared) // §7.6, after the summarizer continuation (FAULT-79)
      stage = 'commit'
      return this.commit(prepared, output, summary, content, () => { closing = true })
    } catch (err) {
      if (closing) throw new BracketFailure('commit', this.compactionId, false, err) // the success-path end failed: no second end
      const code: BracketFailureCode = cancelled
        ? 'cancelled'
        : err instanceof SurfaceChangedError ? 'changed' : stage === 'commit' ? 'commit' : 'summary'
      try {
        this.env.append({ time: this.env.clock(), type: 'compaction/end', data: this.endData(errorChain(err)) })
      } catch (closeErr) {
        throw new BracketFailure('commit', this.compactionId, false, closeErr, err) // a deliberate live orphan (§7.8)
      }
      throw new BracketFailure(code, this.compactionId, true, err)
    }
  }

  /**
   * §7.4 catch branch: records the failed attempt, then (§6.8) offloads region images and re-prepares when the
   * failure asks for it and some are selectable. Returns the new preparation, or null when the bracket fails.
   */
  private afterSummaryFailure(err: unknown, prepared: Prepared): Prepared | null {
    const { log } = this.env
    const failure = structuredFailure(err)
    if (recordsSummaryErrors(log.dialect)) {
      // Key order as the §1.4.16 example: id, command, span, target, failure.
      const target: { provider?: string; model?: string; maxTokens?: number } = err instanceof SummarizerError ? err : {}
      const data: EventDataMap['compaction/summary-error'] = {
        compactionId: this.compactionId,
        ...commandOf(this.request),
        shadowedRange: { start: this.span.start, end: this.span.end },
        shadowedSeqs: [...this.span.shadowedSeqs],
        ...optional('provider', target.provider),
        ...optional('model', target.model),
        ...optional('maxTokens', target.maxTokens),
        ...optional('summaryRoom', prepared.room?.record),
        failure,
      }
      this.env.append({ time: this.env.clock(), type: 'compaction/summary-error', data })
    }
    const count = offloadCountOf(failure)
    if (count === undefined || this.request.signal?.aborted === true) return null
    const region = new Set<number>(this.span.shadowedSeqs)
    const targets = selectOffload(prepared.regionNodes, log, count, region)
    if (targets.length === 0) return null // FAULT-30: nothing selectable in the region
    const copy = targets.map((t) => ({ seq: t.seq, imageIndexes: [...t.imageIndexes] }))
    this.env.append({ time: this.env.clock(), type: 'image/offload', data: { targets: copy } })
    return this.prepare() // §6.8 step 4: re-derive the input, re-price, refresh the baseline
  }

  /** §7.3: measure, check the span is still the entry span, price it with `P_fixed`, build the input. */
  private prepare(): Prepared {
    const { log, meter } = this.env
    const m = meter.measure()
    const nodes = m.nodes
    const surface = log.state.surface
    const i = surface.position(this.span.start)
    const j = surface.position(this.span.end)
    if (!pricedSpanIs(nodes, i, j, this.span.shadowedSeqs)) {
      const selected = i >= 0 && j >= i ? nodes.slice(i, j + 1) : []
      throw new SurfaceChangedError(
        `the selected span ${this.span.start}…${this.span.end} changed: expected nodes [${this.span.shadowedSeqs.join(', ')}], ` +
          `found [${selected.map((n) => n.seq).join(', ')}]`,
      )
    }
    let shadowedTokenCount = 0
    // Sized once (a pushed list of a long region regrows through several large-object allocations).
    const regionNodes = Array.from<RequestNode>({ length: this.span.shadowedSeqs.length })
    const messages = Array.from<Message>({ length: this.span.shadowedSeqs.length })
    let kept = 0
    for (const seq of this.span.shadowedSeqs) {
      const message = this.projected(seq)
      if (message === null) continue
      shadowedTokenCount += fixedPrice(message)
      regionNodes[kept] = { seq, message }
      messages[kept++] = message
    }
    regionNodes.length = kept
    messages.length = kept
    const head = surface.nodes[0]
    const systemHead = head !== undefined && systemHeadCount(log) === 1 ? this.projected(head) : null
    const tools = log.state.header?.header.tools
    const route = this.request.summaryRoute
    let room: Prepared['room']
    if (route !== undefined) { // HARD-2: price this attempt's summary prompt and clamp its cap to the route
      let promptTokens = summaryPromptOverhead(log, m, tools)
      for (let k = i; k <= j; k++) promptTokens += (nodes[k] as PricedNode).tokens
      room = clampSummaryTokens(route, promptTokens)
      const deferredTo = this.request.deferredTo
      if (deferredTo !== undefined) room = { maxTokens: room.maxTokens, record: { ...room.record, deferredTo: deferredTo as Seq } }
    }
    const input: SummaryInput = {
      ...(systemHead === null ? {} : { systemHead }),
      ...(tools === undefined || tools.length === 0 ? {} : { tools }),
      messages,
      ...(room === undefined ? {} : { maxTokens: room.maxTokens }),
    }
    const baseline = this.owner === null ? nodes.slice(i, j + 1) : nodes
    return { shadowedTokenCount, input, regionNodes, baseline, ...(room === undefined ? {} : { room }) }
  }

  /**
   * HARD-2: an attempt whose priced prompt leaves no room in the summary route's window is refused before it is
   * sent (a summarizer failure, recorded as `compaction/summary-error` with the room): no cap could make it fit.
   */
  private checkRoom(prepared: Prepared): void {
    const room = prepared.room
    const route = this.request.summaryRoute
    if (room === undefined || route === undefined || room.maxTokens >= 1) return
    throw new SummarizerError({
      message: `summary request does not fit its route (hardened HARD-2): the prompt prices ${room.record.promptTokens} tokens, ` +
        `the window of ${route.provider}/${route.model} is ${String(route.contextWindow)}`,
      code: 'CONTEXT_WINDOW_EXCEEDED',
    }, { provider: route.provider, model: route.model })
  }

  /**
   * HARD-3 and HARD-4 (`docs/hardened.md`): prices the framed checkpoint at the route's prices and compares it
   * with the metered span (HARD-4) and with the headroom left under the threshold (HARD-3). Throws the failure.
   */
  private checkHardened(hardened: HardenedShrink, content: UserMessage['content']): void {
    const { log, meter } = this.env
    const checkpoint = blocksPrice(content, meter.imagePrice) + ROLE_OVERHEAD // P_route of the framed checkpoint
    const m = meter.measure()
    const i = log.state.surface.position(this.span.start)
    let shadowed = 0
    for (let k = 0; k < this.span.shadowedSeqs.length; k++) shadowed += m.nodes[i + k]?.tokens ?? 0
    if (hardened.meteredRelief === true && checkpoint >= shadowed) throw new NotRelievedError(checkpoint, shadowed)
    const budget = hardened.checkpointBudget
    if (budget !== undefined) {
      // HARD-2 left the nodes after the span up to `deferredTo` for a later round: they are not the retained tail.
      let deferred = 0
      const deferredTo = this.request.deferredTo
      if (deferredTo !== undefined) {
        const last = log.state.surface.position(deferredTo)
        for (let k = i + this.span.shadowedSeqs.length; k <= last; k++) deferred += m.nodes[k]?.tokens ?? 0
      }
      const rest = m.surfaceTokens - shadowed - deferred
      const allowed = budget.thresholdTokens - envelopePrice(log.state.header?.header, log.dialect) - rest - budget.marginTokens
      // A checkpoint that is at most `reliefRatio` of what it shadows is real relief, not a treadmill step: it is
      // kept even over budget (refusing it let the span outgrow what a summary request can carry).
      if (checkpoint > allowed && checkpoint > budget.reliefRatio * shadowed) throw new CheckpointBudgetError(checkpoint, allowed)
    }
  }

  /** The node's message after projection (§1.7, §6.5), or null. */
  private projected(seq: number): Message | null {
    const { log } = this.env
    const event = log.event(seq)
    if (event === undefined) throw new InvariantError(`surface node ${seq} is not in the log`)
    const message = deriveEventMessage(event)
    if (message === null) return null
    return projectNodeMessage(message, seq, log, this.env.readOnlyPath)
  }

  /** Image occurrences of the region not yet offloaded (the bound of the attempt loop). */
  private regionImagesLeft(): number {
    const { log } = this.env
    let left = 0
    for (const seq of this.span.shadowedSeqs) {
      const event = log.event(seq)
      if (event === undefined) continue
      left += Math.max(0, countImages(messageContent(event)) - log.offloadedIndexes(seq).size)
    }
    return left
  }

  /**
   * §7.6: whole-surface (numeric owner) — every node and price equals the baseline; selected-span (null owner) —
   * the span still passes the §7.2 step 2 checks with the same nodes and prices. Log-only appends are tolerated.
   */
  private revalidate(prepared: Prepared): void {
    const { log, meter } = this.env
    const nodes = meter.measure().nodes
    if (this.owner !== null) {
      const drift = firstDifference(prepared.baseline, nodes)
      if (drift !== null) throw new SurfaceChangedError(`the surface changed while the summary was prepared: ${drift}`)
      return
    }
    const span = checkSpan(log, this.span.start, this.span.end)
    if (span instanceof RegionError) {
      throw new SurfaceChangedError(`the selected span ${this.span.start}…${this.span.end} changed: ${span.message}`, { cause: span })
    }
    const i = log.state.surface.position(span.start)
    const drift = firstDifference(prepared.baseline, nodes.slice(i, i + span.shadowedSeqs.length))
    if (drift !== null || !sameSeqs(span.shadowedSeqs, this.span.shadowedSeqs)) {
      throw new SurfaceChangedError(`the selected span ${this.span.start}…${this.span.end} changed: ${drift ?? 'different nodes'}`)
    }
  }

  /**
   * §7.7: pre-validates the summary and the checkpoint (range, provenance, owner) before writing either, then
   * appends summary, checkpoint and end synchronously. `markClosing` is called right before the end append.
   */
  private commit(
    prepared: Prepared, output: SummaryOutput, summary: TextBlock[], content: UserMessage['content'], markClosing: () => void,
  ): CompactionResult {
    const { log, append, clock } = this.env
    const { start, end } = this.span
    // Frozen now (the append would freeze them anyway) and known dense: validation never enumerates their keys.
    const shadowedSeqs = frozenDenseList([], this.span.shadowedSeqs)
    // Key order as the §1.4.15 example.
    const data: CompactionSummaryData = {
      compactionId: this.compactionId,
      ...commandOf(this.request),
      summary,
      ...optional('rawOutput', output.rawOutput === undefined ? undefined : structuredClone(output.rawOutput)),
      ...optional('llmStreamCall', output.llmStreamCall),
      shadowedRange: { start, end },
      shadowedSeqs,
      shadowedTokenCount: prepared.shadowedTokenCount,
      provider: output.provider,
      model: output.model,
      ...optional('maxTokens', output.maxTokens),
      ...optional('summaryRoom', prepared.room?.record),
      ...optional('usage', output.usage === undefined ? undefined : structuredClone(output.usage)),
    }
    const summaryDraft: EventDraft<'compaction/summary'> = { time: clock(), type: 'compaction/summary', data }
    const summarySeq = log.length as Seq
    const message: UserMessage = {
      id: MessageId(this.env.newMessageId()),
      role: 'user',
      content,
      source: compactCheckpointSource(this.compactionId, this.request.sourceCommandId),
    }
    // One provenance list for the pre-validated and the appended checkpoint.
    const sourceEventSeqs = frozenDenseList([this.startSeq, summarySeq], shadowedSeqs)
    const checkpoint = (time: number): EventDraft<'user/message'> => ({
      time,
      type: 'user/message',
      data: message,
      surfaceOp: { op: 'replace', start, end },
      sourceEventSeqs,
    })
    if (log.state.openTurn !== this.owner) {
      const now = String(log.state.openTurn)
      throw new BracketOwnerError(`compaction ${this.compactionId} is owned by turn ${String(this.owner)}, but the open turn is ${now}`)
    }
    log.validate(summaryDraft)
    log.validate(checkpoint(summaryDraft.time), 1)
    const s = append(summaryDraft)
    if (s.seq !== summarySeq) throw new InvariantError(`compaction/summary landed at seq ${s.seq}, expected ${summarySeq}`)
    append(checkpoint(clock()))
    markClosing()
    const e = append({ time: clock(), type: 'compaction/end', data: this.endData(undefined) })
    return {
      compactionId: this.compactionId,
      ...commandOf(this.request),
      startSeq: this.startSeq,
      summarySeq: s.seq,
      endSeq: e.seq,
      summary,
      shadowedRange: { start, end },
      shadowedSeqs,
      shadowedTokenCount: prepared.shadowedTokenCount,
    }
  }

  private endData(error: string | undefined): EventDataMap['compaction/end'] {
    return { compactionId: this.compactionId, ...commandOf(this.request), turn: this.owner, ...optional('error', error) }
  }
}

/**
 * A summarizer result must be storable as-is (INV-16, INV-18): text-only summary with a non-whitespace
 * character, `rawOutput` whenever `llmStreamCall`, a named route. Violations are summarizer failures.
 */
function checkOutput(output: SummaryOutput): SummaryOutput {
  const target: { provider?: string; model?: string; maxTokens?: number } = {}
  if (typeof output.provider === 'string') target.provider = output.provider
  if (typeof output.model === 'string') target.model = output.model
  if (output.maxTokens !== undefined) target.maxTokens = output.maxTokens
  const fail = (code: string, message: string): never => { throw new SummarizerError({ message, code }, target) }
  if (!Array.isArray(output.summary) || output.summary.some((b) => b.type !== 'text' || typeof b.text !== 'string')) {
    fail('UNSUPPORTED_CONTENT', 'the summary must hold text blocks only')
  }
  if (!output.summary.some((b) => b.text.trim() !== '')) fail('UNKNOWN', 'summarization produced no text summary content')
  if (output.llmStreamCall === true && output.rawOutput === undefined) {
    fail('UNKNOWN', 'a summary from a runtime stream call must carry its rawOutput (§8.6)')
  }
  if (typeof output.provider !== 'string' || typeof output.model !== 'string') {
    fail('UNKNOWN', 'the summary must name the route that produced it')
  }
  return output
}

/** `{ sourceCommandId }` when the request has one, else `{}` (spread to keep the event key order). */
function commandOf(request: BracketRequest): { sourceCommandId?: string } {
  return request.sourceCommandId === undefined ? {} : { sourceCommandId: request.sourceCommandId }
}

/** `{ [key]: value }` when `value` is defined, else `{}`: optional fields are absent, never `undefined` (§1.1 rule 2). */
function optional<K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: V }
}

/** True when the priced nodes at positions `i … j` are exactly `seqs`, in order (compared in place). */
function pricedSpanIs(nodes: readonly PricedNode[], i: number, j: number, seqs: readonly number[]): boolean {
  const valid = i >= 0 && j >= i
  const begin = valid ? Math.min(i, nodes.length) : 0
  const end = valid ? Math.min(j + 1, nodes.length) : 0
  if (end - begin !== seqs.length) return false
  for (let k = 0; k < seqs.length; k++) if (nodes[begin + k]?.seq !== seqs[k]) return false
  return true
}

function sameSeqs(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((s, k) => s === b[k])
}

/** The first position where two priced node lists differ, described; null when equal (§7.6). */
function firstDifference(baseline: readonly PricedNode[], now: readonly PricedNode[]): string | null {
  const length = Math.max(baseline.length, now.length)
  for (let k = 0; k < length; k++) {
    const a = baseline[k]
    const b = now[k]
    if (a?.seq === b?.seq && a?.tokens === b?.tokens) continue
    const show = (n: PricedNode | undefined): string => (n === undefined ? 'nothing' : `node ${n.seq} (${n.tokens} tokens)`)
    return `at position ${k} expected ${show(a)}, found ${show(b)}`
  }
  return null
}
