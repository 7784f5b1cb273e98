/**
 * The reference core as a subject (design §2): `Agent` + `CompactionEngine` over an `EventLog` whose every
 * event is appended to a durable, fsync'ed `JsonlLogStore`, talking to the mock provider over HTTP through
 * `OpenAiCompatibleAdapter` (wires `openai`, `deepseek`) or `AnthropicMessagesAdapter` (wire `anthropic`). It
 * feeds the transcript's user turns, answers tool calls with the transcript's results (with their `error` and
 * `meta`, logged in the transcript's order: `transcriptResultOrder`), enters the transcript's steering messages
 * when the next step opens (`transcriptSteering`), runs the scenario's manual actions (`compactNow` after its turn,
 * `afterTurn: 0` before the first; each one that writes nothing leaves a warning saying why), and records turn
 * outcomes, warnings and the §1.1 request capture.
 *
 * Contract (the crash harness calls it from a child process):
 *
 *   runReferenceSession(options: SubjectSessionOptions): Promise<SubjectSessionResult>
 *     options = { scenario, transcript, logPath, baseUrl, fetch?, seed, resume?, onDurable?, onRequest?, hooks? }
 *
 * - new session (`resume` absent/false): `logPath` is replaced by a fresh log; turns 1…n run.
 * - `resume: true`: the stored log is read (a torn tail truncated), restored (§11.4: repair closers, then
 *   `session/end-seed` unless it already ends with one) — restore's events are appended to the file — and the
 *   session continues with transcript turn k+1, where k is the log's last turn (an interrupted turn is not
 *   re-run), after the manual `compactNow` actions due after turn k whose bracket the log does not show begun. Everything the continuation depends on is recovered from the log: the provider world is told
 *   each turn before it runs (`hooks.beginTurn`), so it serves that turn's replies; ids continue from the
 *   log's length; the clock continues after the log's last time.
 * - `onDurable(event)` is the store's hook: it runs synchronously after the event's line is fsync'ed, in seq
 *   order, before the next write (so the crash child can block there and be killed exactly at that event).
 * - `onRequest(request, logLength)` gets each capture entry at dispatch (outcome `aborted`/`TRANSPORT` until it
 *   finishes) and again when it finishes, synchronously, so a crash child can persist the capture as it goes.
 * - `hooks` connect the session to the provider world (`run/world.ts`): turn alignment, aborts, timeouts,
 *   direct API use (FAULT-09), append faults on the engine's bracket events (FAULT-60…63) and flush faults on its
 *   manual durability checkpoint (FAULT-64/65). The engine's `flush` awaits every event appended so far being fsync'ed.
 * Resolves once every event is durable; rejects with the store's `LogError` when a write failed, or with the
 * loop's misuse / integrity errors. Provider failures never reject: they end turns.
 */
import { rm } from 'node:fs/promises'
import {
  Agent, AnthropicMessagesAdapter, assertNever, CompactionConfigError, CompactionEngine, EventLog, JsonlLogStore, LlmRuntime, LlmSummarizer,
  MeterReplayError, OpenAiCompatibleAdapter, pruneSession, repairClosers, resolveCompactionConfig, restoreSession, TokenMeter,
  type AgentCompactionEngine, type CapturedRequest, type CompactionPolicySpec, type EventDraft, type GenerateOptions, type LlmAdapter,
  type LogEvent, type MessageKind, type PruneSpec, CallId, type SessionEvent, type StaticModelInfo, type SteeringSource, type ToolExecutor,
  type ToolOutcome, type ToolResultOrder, type TurnOutcome,
} from '@compaction-sim/core'
import type { Transcript } from '@compaction-sim/fixtures'
import { CLOCK_ORIGIN_MS, CLOCK_STEP_MS, VirtualClock } from '../world/clock.ts'
import { worldStream } from '../world/prng.ts'
import { reportedWindow } from '../provider/route.ts'
import { systemPromptRenderer, volatileSystemPromptOf } from '../run/system-prompt.ts'
import { worldMockRoutes } from '../run/world.ts'
import type { ResolvedManualAction, ResolvedScenario } from '../scenario/resolve.ts'
import { ConcurrencyPlan } from './concurrency.ts'
import type { FlushPoint, Subject, SubjectSessionOptions, SubjectSessionResult, SubjectTurnOutcome } from './types.ts'

/** The API key the subject sends (redacted in captures). */
const SIM_API_KEY = 'sk-compaction-sim'

/** The reference subject (`subject: reference`). */
export const referenceSubject: Subject = {
  name: 'reference',
  runSession: (options) => runReferenceSession(options),
}

/**
 * TEST-ONLY internals of a reference session: `plantAppend` wraps the engine's bracket-event append path (the
 * engine's existing `append` option, the FAULT-60…63 injection point) so a test can plant a bug in a copy of the
 * engine and replay a fuzz finding through `runScenario` (issue #8). No production path passes it.
 */
export interface ReferenceInternals {
  plantAppend?: (log: EventLog) => (draft: EventDraft) => SessionEvent
}

/** Runs (or resumes) one reference session; see the module doc for the contract. */
export async function runReferenceSession(options: SubjectSessionOptions, internals: ReferenceInternals = {}): Promise<SubjectSessionResult> {
  const { transcript, logPath, hooks = {} } = options
  if (options.resume !== true) await rm(logPath, { force: true })
  const onDurable = options.onDurable
  const opened = await JsonlLogStore.open(logPath, {
    dialect: 'seed', create: options.resume !== true, ...(onDurable === undefined ? {} : { onDurable }),
  })
  const store = opened.store
  let log: EventLog | null = null
  const stored = opened.events
  const restoreLength = stored.length + (options.resume === true ? repairClosers(stored).length : 0)
  const lastTime = stored.at(-1)?.time
  const clock = new VirtualClock({
    length: () => log?.length ?? restoreLength,
    offsetMs: lastTime === undefined ? 0 : Math.max(0, lastTime + CLOCK_STEP_MS - (CLOCK_ORIGIN_MS + CLOCK_STEP_MS * restoreLength)),
  })
  let storeError: unknown = null
  // The store serializes appends, so the latest one settling means every event so far is durable.
  let lastWrite: Promise<void> = Promise.resolve()
  // A clean stop inside a bracket (issue #16): nothing after the stop point's compaction/start reaches the file.
  const stop = inBracketStop(options, stored)
  const persist = (event: LogEvent): void => {
    if (stop.stopped()) return
    lastWrite = store.append([event]).catch((err: unknown) => { storeError ??= err })
    stop.observe(event)
  }
  /** The session durability checkpoint (§7.11): every event appended so far is fsync'ed, or the store's failure. */
  const durable = async (): Promise<void> => {
    await lastWrite
    if (storeError !== null) throw storeError
  }
  if (options.resume === true) {
    const restored = restoreSession(stored, { dialect: 'seed', clock: clock.now })
    log = restored.log
    for (const event of log.events.slice(stored.length)) persist(event)
  } else {
    log = new EventLog({ dialect: 'seed' })
  }
  const theLog = log
  const unsubscribe = theLog.subscribe(persist)
  let result: SubjectSessionResult
  try {
    result = await drive(options, theLog, clock, hooks, transcript, internals, durable, stop)
  } finally {
    unsubscribe()
    await store.close()
  }
  if (storeError !== null) throw storeError
  return result
}

/** A lifecycle's in-bracket stop point (`SubjectSessionOptions.stop`): when reached, persisting ends and `signal` aborts. */
interface BracketStop {
  /** Aborted at the stop point (never, without an `inBracket` stop). */
  readonly signal: AbortSignal | undefined
  /** True once the stop point's `compaction/start` has been handed to the store. */
  stopped(): boolean
  /** The log's length at the stop point, or null before it. */
  at(): number | null
  /** Counts `event` (persisted just now) towards the stop point. */
  observe(event: LogEvent): void
}

/** The in-bracket stop of `options` over a log whose stored events are `stored` (their starts count too). */
function inBracketStop(options: SubjectSessionOptions, stored: readonly LogEvent[]): BracketStop {
  const stop = options.stop
  if (stop?.kind !== 'inBracket') return { signal: undefined, stopped: () => false, at: () => null, observe: () => {} }
  const controller = new AbortController()
  let starts = stored.filter((e) => e.type === 'compaction/start').length
  let at: number | null = null
  return {
    signal: controller.signal,
    stopped: () => at !== null,
    at: () => at,
    observe: (event) => {
      if (event.type !== 'compaction/start' || ++starts !== stop.occurrence) return
      at = event.seq + 1
      controller.abort(new Error(`clean stop inside compaction/start ${event.seq} (restart inBracket ${stop.occurrence})`))
    },
  }
}

async function drive(
  options: SubjectSessionOptions, log: EventLog, clock: VirtualClock, hooks: NonNullable<SubjectSessionOptions['hooks']>,
  transcript: Transcript, internals: ReferenceInternals = {}, durable: () => Promise<void> = () => Promise.resolve(),
  stop: BracketStop = inBracketStop(options, []),
): Promise<SubjectSessionResult> {
  const { scenario } = options
  const provider = scenario.provider.name
  const route = { provider, model: scenario.provider.model }
  const ids = worldStream(options.seed, 'ids')
  const sessionId = `sim-${ids.hex(8)}`
  const idTag = ids.hex(6)
  let counter = log.length
  const next = (): number => ++counter
  const warnings: string[] = []
  const warn = (message: string): void => { warnings.push(message) }
  const requests: CapturedRequest[] = []
  const pending = new Map<GenerateOptions, CapturedRequest>()
  // The engine's meter, shared so each capture records what the engine saw at dispatch (issue #15 drift).
  const meter = new TokenMeter(log, { dialect: log.dialect })
  const runtime = new LlmRuntime({
    onDispatch: (call) => {
      if (call.purpose === 'session-title' || stop.stopped()) return // a stopped lifecycle records nothing more
      const captured: CapturedRequest = {
        index: requests.length,
        logRevisionAtDispatch: log.length,
        time: clock.peek(),
        purpose: call.purpose === 'compaction' ? 'compaction' : 'conversation',
        provider: call.provider,
        model: call.model,
        messages: structuredClone(call.messages),
        outcome: 'stop',
      }
      const meterTokens = meterTokensOf(meter)
      if (meterTokens !== null) captured.meterTokensAtDispatch = meterTokens
      if (call.reasoningEffort !== undefined) captured.reasoningEffort = call.reasoningEffort
      if (call.temperature !== undefined) captured.temperature = call.temperature
      if (call.maxTokens !== undefined) captured.maxTokens = call.maxTokens
      if (call.stop !== undefined) captured.stop = [...call.stop]
      if (call.tools !== undefined) captured.tools = structuredClone(call.tools)
      requests.push(captured)
      pending.set(call, captured)
      // Until it finishes, a request reads as cut off (what it stays if the process dies, §13.4).
      options.onRequest?.({ ...structuredClone(captured), outcome: 'aborted', failureCode: 'TRANSPORT' }, captured.logRevisionAtDispatch)
    },
    onFinish: (call, reason) => {
      const captured = pending.get(call)
      if (captured === undefined) return
      pending.delete(call)
      captured.outcome = reason.kind
      if (reason.kind === 'error' || reason.kind === 'aborted') captured.failureCode = reason.failure.code
      options.onRequest?.(structuredClone(captured), log.length)
    },
  })
  // §13.6/§13.7 `concurrent:` items (issue #16); the plan's wrappers are installed only when the scenario has some.
  let agentRef: Agent | null = null
  let engineRef: CompactionEngine | null = null
  let turnAbort: AbortController | null = null
  let promptNext: () => Promise<unknown> | null = () => null
  const theAgent = (): Agent => {
    if (agentRef === null) throw new Error('concurrent: the agent is not built yet')
    return agentRef
  }
  const plan = new ConcurrencyPlan(scenario.concurrent, options.seed, {
    log,
    engine: () => {
      if (engineRef === null) throw new Error('concurrent: the engine is not built yet')
      return engineRef
    },
    compactNow: (signal) => theAgent().compactNow({ signal }),
    cancelMaintenance: (reason) => theAgent().cancelMaintenance(reason),
    reserved: () => (theAgent().admission as { readonly reserved?: boolean }).reserved === true,
    promptNextTurn: () => promptNext(),
    abortTurn: (reason) => { turnAbort?.abort(reason) },
    route: () => ({ ...route, contextWindow: scenario.provider.conversationRoute.contextWindow, imageTokens: scenario.provider.conversationRoute.imageTokens }),
    now: clock.now,
    warn,
    ran: (index) => { hooks.concurrentRan?.(index) },
  })
  const adapter = wireAdapter(scenario, options, hooks)
  runtime.registerAdapter(provider, plan.empty ? adapter : plan.wrapAdapter(adapter))
  for (const middleware of hooks.middleware ?? []) runtime.use(middleware)
  let instructions = 0
  const unroutable = hooks.unroutableSummarizer === true
    ? new LlmSummarizer({
      runtime, log: new EventLog({ dialect: 'seed' }), policy: scenario.policy, sessionId,
      newInstructionId: () => `compaction-instruction-${++instructions}`,
    })
    : null
  // The engine's own default summarizer, built here so the plan can wrap it (the after-resolve point).
  const summarizer = unroutable ?? (plan.empty ? null : new LlmSummarizer({
    runtime, log, policy: scenario.policy, agentRoute: route, sessionId, newInstructionId: () => `compaction-instruction-${++instructions}`,
  }))
  const rejectAppend = hooks.rejectAppend
  // Engine construction validates the configuration as written (§3.2); a rejected one installs nothing (FAULT-43).
  const policy = constructionPolicy(scenario, warn)
  const engine = policy === null ? null : new CompactionEngine({
    log, runtime, policy, clock: clock.now, warn, info: () => {}, agentRoute: route, sessionId, meter,
    ...(scenario.pruner === null ? {} : { pruner: scenario.pruner }),
    ...(rejectAppend === undefined ? {} : { append: faultyAppend(log, rejectAppend) }),
    ...(summarizer === null ? {} : { summarizer: plan.empty ? summarizer : plan.wrapSummarizer(summarizer) }),
    flush: plan.empty ? manualFlush(log, durable, hooks.rejectFlush) : plan.flush(manualFlush(log, durable, hooks.rejectFlush)),
    ...(internals.plantAppend === undefined ? {} : { append: internals.plantAppend(log) }),
    newCompactionId: () => `cmp-${idTag}-${next()}`,
    newMessageId: () => `m-checkpoint-${next()}`,
  })
  const explicitRegionStarts: number[] = []
  engineRef = engine
  const port = engine === null ? null : regionPort(engine, log, scenario.manual, explicitRegionStarts, warn, plan)
  const agent = new Agent({
    log, runtime, ...(port === null ? {} : { engine: port }), policy: policy ?? scenario.policy, route, sessionId, clock: clock.now, warn,
    systemPrompt: systemPromptRenderer(transcript.systemPrompt, volatileSystemPromptOf(scenario.transcript), options.seed, () => log.state.openStep),
    tools: transcript.tools,
    executeTool: toolExecutor(transcript),
    toolResultOrder: transcriptResultOrder(transcript),
    steering: transcriptSteering(transcript),
    newMessageId: (kind: MessageKind) => `m-${kind}-${next()}`,
    newRetryId: () => `r-${next()}`,
    sleep: (ms, signal) => clock.sleep(ms, signal),
    ...(hooks.directApi === true ? { requestHeaders: 'omit' as const } : {}),
  })
  agentRef = agent
  hooks.observeSession?.({ now: () => clock.peek(), originMs: CLOCK_ORIGIN_MS, logLength: () => log.length })
  const startedAfterTurn = log.state.lastTurn
  const outcomes: SubjectTurnOutcome[] = []
  /** Runs the scenario's `compactNow` (§3.7) and `prune` actions due after `turn`, skipping the first `done` `compactNow`s. */
  const runManual = async (turn: number, done: number): Promise<void> => {
    let skip = done
    for (const action of scenario.manual) {
      if (action.kind === 'prune' && action.afterTurn === turn) { // FAULT-66: the pruner called on the idle session
        idlePrune(log, scenario.pruner, clock.now, turn, warn)
        continue
      }
      if (action.kind !== 'compactNow' || action.afterTurn !== turn) continue
      if (skip > 0) { // its bracket began before the crash (manualBracketsAfterLastTurn)
        skip--
        continue
      }
      const when = turn === 0 ? 'before the first turn' : `after turn ${turn}`
      // The world's caller signal (FAULT-22 aborts it while the summary call hangs, §7.10), with the `concurrent:`
      // plan's caller signal when the scenario has items (caller aborts at a named point).
      const world = hooks.beginManual?.({ kind: 'compactNow', afterTurn: turn })
      const own = plan.empty ? undefined : plan.callerSignal()
      const signal = anySignal(anySignal(world, own), stop.signal)
      try {
        const result = await plan.waitFor(agent.compactNow({
          ...(signal === undefined ? {} : { signal }),
          ...(action.sourceCommandId === null ? {} : { sourceCommandId: action.sourceCommandId }),
        }))
        // §3.7 step 3c: nothing compactable → null, nothing written. Said, so the action is never silently without effect.
        if (result === null) warn(`manual compactNow ${when}: nothing to compact (§3.7: null, nothing written)`)
      } catch (err) {
        if (stop.stopped()) return // the clean stop inside this bracket (restart inBracket): restore repairs it (§11.4)
        warn(`manual compactNow ${when} failed: ${err instanceof Error ? err.message : String(err)}`)
      }
    }
  }
  const control = { setModel: (model: string): void => { agent.setRoute({ ...route, model }) } }
  // A turn the plan prompted early (`user-prompt`): queued now, told to the world when its turn/start is logged.
  const claimed = new Map<number, Promise<TurnOutcome>>()
  let nextTurn = startedAfterTurn + 1
  promptNext = () => {
    const turn = nextTurn
    const input = transcript.turns[turn - 1]
    if (input === undefined || claimed.has(turn)) return null
    nextTurn++
    const own = new AbortController()
    const unsubscribeTurn = log.subscribe((event) => {
      if (event.type !== 'turn/start' || (event.data as { turn: number }).turn !== turn) return
      unsubscribeTurn()
      turnAbort = own
      const world = hooks.beginTurn?.(turn, control)
      world?.addEventListener('abort', () => { own.abort(world.reason) }, { once: true })
    })
    const running = agent.runTurn({ content: structuredClone(input.user) }, own.signal)
    claimed.set(turn, running)
    return running
  }
  // The actions due after the turn this session starts after run first (issue #16: they used to be dropped):
  // `afterTurn: 0` on a new session, and after a restore (§11.4) those of the crash turn — minus the ones whose
  // bracket the crashed process had already started (a restored log shows them; a re-run would compact twice).
  await runManual(startedAfterTurn, manualBracketsAfterLastTurn(log.events))
  if (startedAfterTurn === 0) plan.idle(0)
  const stopAfterTurn = options.stop?.kind === 'afterTurn' ? options.stop.turn : null
  for (let turn = startedAfterTurn + 1; turn <= transcript.turns.length; turn++) {
    const input = transcript.turns[turn - 1]
    if (input === undefined) break
    let running = claimed.get(turn)
    if (running === undefined) {
      nextTurn = turn + 1
      const world = hooks.beginTurn?.(turn, control)
      let signal = world
      if (!plan.empty) {
        turnAbort = new AbortController()
        signal = world === undefined ? turnAbort.signal : AbortSignal.any([world, turnAbort.signal])
      }
      running = agent.runTurn({ content: structuredClone(input.user) }, anySignal(signal, stop.signal))
    }
    const outcome = await plan.waitFor(running)
    if (stop.stopped()) break // the stop point's turn is not recorded: restore repairs it (§11.4)
    outcomes.push({ turn: outcome.turn, reason: outcome.reason })
    await runManual(turn, 0)
    if (stop.stopped()) break
    plan.idle(turn)
    await plan.settle()
    if (turn === stopAfterTurn) {
      return { outcomes, warnings, requests, explicitRegionStarts, events: log.length, startedAfterTurn, stoppedAt: { events: log.length } }
    }
  }
  const stoppedAt = stop.at()
  if (stoppedAt !== null) return { outcomes, warnings, requests, explicitRegionStarts, events: stoppedAt, startedAfterTurn, stoppedAt: { events: stoppedAt } }
  await plan.settle()
  plan.reportUnrun()
  return { outcomes, warnings, requests, explicitRegionStarts, events: log.length, startedAfterTurn }
}

/**
 * How many manual brackets (`compaction/start` with `turn: null`, §3.7) the log holds after its last `turn/start`
 * (in the whole log when it has none): the `compactNow` calls due after that turn that already began. A call that
 * returned null or `busy` wrote nothing; it runs again after a restore, which writes nothing again.
 */
export function manualBracketsAfterLastTurn(events: readonly LogEvent[]): number {
  let count = 0
  for (const event of events) {
    if (event.type === 'turn/start') count = 0
    else if (event.type === 'compaction/start' && event.data.turn === null) count++
  }
  return count
}

/** `a` and `b` combined (either aborts it); just `a` when there is no `b`, so runs without a stop keep their signal. */
function anySignal(a: AbortSignal | undefined, b: AbortSignal | undefined): AbortSignal | undefined {
  if (b === undefined) return a
  return a === undefined ? b : AbortSignal.any([a, b])
}

/**
 * The compaction engine's configuration, validated as the engine is constructed (§3.2): `scenario.policyConfig` as
 * written. A rejected configuration (FAULT-43) is reported as a warning and yields null: the session runs with no
 * engine — no pre-step listener, no overflow recovery, and `compactNow` fails — which is what "nothing is installed"
 * means for a host that keeps running after the failed construction.
 */
function constructionPolicy(scenario: ResolvedScenario, warn: (m: string) => void): CompactionPolicySpec | null {
  try {
    return resolveCompactionConfig(scenario.policyConfig)
  } catch (err) {
    if (!(err instanceof CompactionConfigError)) throw err
    warn(`compaction engine construction failed: ${err.message}; the session runs without compaction (nothing installed)`)
    return null
  }
}

/**
 * A `manual: prune` action (FAULT-66): the core's pruner called on the idle session, with no turn open. Its
 * pre-validation refuses before it writes anything (§5.4 rule 4); the thrown error becomes a warning. A pass that
 * returns (it would not, with no turn open) is reported too, with what it pruned.
 */
function idlePrune(log: EventLog, pruner: PruneSpec | null, clock: () => number, turn: number, warn: (m: string) => void): void {
  if (pruner === null) return // resolve refuses a prune action without a pruner
  try {
    const { pruned } = pruneSession(log, pruner, clock)
    warn(`manual prune after turn ${turn} returned: pruned ${pruned.length} tool results with no turn open`)
  } catch (err) {
    warn(`manual prune after turn ${turn} failed: ${err instanceof Error ? err.message : String(err)}`)
  }
}

/** The meter's §2.5 `totalTokens` now, or null for a log it cannot replay (the engine reports that itself). */
function meterTokensOf(meter: TokenMeter): number | null {
  try {
    return meter.measure().totalTokens
  } catch (err) {
    if (err instanceof MeterReplayError) return null
    throw err
  }
}

/**
 * The HTTP adapter for the scenario's wire: `OpenAiCompatibleAdapter` for `openai` and `deepseek` (route
 * metadata from the mock's `GET /models/<id>`), `AnthropicMessagesAdapter` for `anthropic`. The Anthropic
 * wire has no capacity endpoint a real client could rely on, so that adapter reads a static table: the
 * scenario's routes as the mock serves them (`worldMockRoutes`: the reported window — FAULT-41's scripted one
 * included, none for FAULT-40 — and image price), which is what the mock serves — the analogue of the model table a real Anthropic client ships. Its
 * `max_tokens` default is the adapter's (`ANTHROPIC_DEFAULT_MAX_TOKENS`), reported as each route's
 * `defaultMaxTokens`, so the agent logs it in the effective config (§1.4.10).
 */
function wireAdapter(scenario: ResolvedScenario, options: SubjectSessionOptions, hooks: NonNullable<SubjectSessionOptions['hooks']>): LlmAdapter {
  const common = {
    baseURL: options.baseUrl,
    apiKey: SIM_API_KEY,
    ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
    ...(hooks.adapterTimeout === undefined ? {} : { timeout: hooks.adapterTimeout }),
  }
  const wire = scenario.provider.wire
  switch (wire) {
    case 'openai':
    case 'deepseek':
      return new OpenAiCompatibleAdapter({ ...common, wire })
    case 'anthropic': {
      const models: StaticModelInfo[] = worldMockRoutes(scenario).map((r) => {
        const window = reportedWindow(r) // what the mock's model endpoint reports, FAULT-41's scripted value included
        return {
          id: r.model,
          ...(window === null ? {} : { contextWindow: window }),
          ...(r.imageTokens === null ? {} : { imageTokens: r.imageTokens }),
          ...(r.maxOutputTokens === null ? {} : { maxOutputTokens: r.maxOutputTokens }),
        }
      })
      return new AnthropicMessagesAdapter({ ...common, models })
    }
    default:
      return assertNever(wire, 'provider wire')
  }
}

/** A storage fault injected on the engine's append path (§13.5, FAULT-60…63): the event was not persisted. */
export class InjectedAppendError extends Error {
  override readonly name = 'InjectedAppendError'
  readonly code = 'STORAGE_FAULT'
}

/** The engine's append path with the world's append faults: a refused draft throws before anything is written. */
function faultyAppend(log: EventLog, reject: (draft: EventDraft) => string | null): (draft: EventDraft) => SessionEvent {
  return (draft) => {
    const refusal = reject(draft)
    if (refusal !== null) throw new InjectedAppendError(refusal)
    return log.append(draft)
  }
}

/** A storage fault injected on the manual durability checkpoint (§13.5, FAULT-64/65): the flush failed. */
export class InjectedFlushError extends Error {
  override readonly name = 'InjectedFlushError'
  readonly code = 'STORAGE_FAULT'
}

/**
 * The engine's manual flush (§7.11): the world's flush fault, if it refuses this checkpoint (told whether the bracket
 * just closed with `end{error}`, the log's last `compaction/end`), else the store's durability checkpoint.
 */
function manualFlush(
  log: EventLog, durable: () => Promise<void>, reject: ((bracket: FlushPoint) => string | null) | undefined,
): () => Promise<void> {
  return async () => {
    if (reject !== undefined) {
      let failed = false
      for (let seq = log.length - 1; seq >= 0; seq--) {
        const event = log.event(seq)
        if (event?.type !== 'compaction/end') continue
        failed = 'error' in event.data
        break
      }
      const refusal = reject({ failed })
      if (refusal !== null) throw new InjectedFlushError(refusal)
    }
    await durable()
  }
}

/**
 * Answers each tool call with the transcript's result for its call id, with its `error` and `meta` (logged on
 * `tool/result`, §1.4.9; an `error` makes it an error result); an unknown id is an error result.
 */
function toolExecutor(transcript: Transcript): ToolExecutor {
  const results = new Map(transcript.turns.flatMap((t) => t.steps.flatMap((s) => s.toolResults.map((r) => [r.callId, r] as const))))
  return async (call) => {
    const result = results.get(call.callId)
    if (result === undefined) throw new Error(`the transcript has no result for tool call ${call.callId}`)
    const content = structuredClone(result.content)
    const outcome: ToolOutcome = result.isError === true || result.error !== undefined ? { content, isError: true } : { content }
    if (result.error !== undefined) outcome.error = { ...result.error }
    if (result.meta !== undefined) outcome.meta = structuredClone(result.meta)
    return outcome
  }
}

/**
 * The transcript's result order for the agent (`AgentOptions.toolResultOrder`): the calls of a step are
 * found by id in the transcript step whose results answer them; when that step lists the results in call
 * order (or the ids do not match one transcript step) the loop keeps sequential dispatch (`null`), otherwise
 * it dispatches every call and logs the results in the transcript's order.
 */
export function transcriptResultOrder(transcript: Transcript): ToolResultOrder {
  const orderOf = new Map<string, readonly string[]>()
  for (const turn of transcript.turns) {
    for (const step of turn.steps) {
      const order = step.toolResults.map((r) => r.callId)
      for (const id of order) orderOf.set(id, order)
    }
  }
  return (calls) => {
    const first = calls[0]
    const order = first === undefined ? undefined : orderOf.get(first.callId)
    if (order === undefined || order.length !== calls.length) return null
    const ids = new Set<string>(calls.map((c) => c.callId))
    if (!order.every((id) => ids.has(id)) || order.every((id, i) => id === calls[i]?.callId)) return null
    return order.map((id) => CallId(id))
  }
}

/**
 * The transcript's steering messages for the agent (`AgentOptions.steering`): step s ≥ 2 of turn t opens with
 * the `steer` of transcript step s − 1 of turn t (the steps line up with the replies the mock serves).
 */
export function transcriptSteering(transcript: Transcript): SteeringSource {
  return (turn, step) => {
    const steer = step >= 2 ? transcript.turns[turn - 1]?.steps[step - 2]?.steer : undefined
    return steer === undefined ? [] : [{ content: structuredClone(steer) }]
  }
}

/**
 * The engine as the loop sees it, with the scenario's `compactRegion` actions (§3.8) run right before the
 * pre-step check of their step; failures become warnings, as the pre-step listener's do.
 */
function regionPort(
  engine: CompactionEngine, log: EventLog, manual: readonly ResolvedManualAction[], starts: number[], warn: (m: string) => void,
  plan: ConcurrencyPlan,
): AgentCompactionEngine {
  let turn: number | null = null
  let step = 0
  return {
    preStep: async (signal) => {
      const open = log.state.openTurn
      if (open !== turn) {
        turn = open
        step = 0
      }
      step++
      for (const action of manual) {
        if (action.kind !== 'compactRegion' || action.turn !== open || action.beforeStep !== step) continue
        // Scenario positions are 0-based surface positions (negative from the end); the engine takes node seqs.
        const nodes = log.state.surface.nodes
        const at = (p: number): number => nodes[p < 0 ? nodes.length + p : p] ?? -1
        const startSeq = log.length
        try {
          await engine.compactRegion(at(action.start), at(action.end), signal)
        } catch (err) {
          const reason = err instanceof Error ? err.message : String(err)
          warn(`compactRegion(${action.start}, ${action.end}) in turn ${action.turn} failed: ${reason}`)
        }
        if (log.event(startSeq)?.type === 'compaction/start') starts.push(startSeq)
      }
      plan.preStep(open, step) // `concurrent: during: pre-step` (FAULT-72, FAULT-83)
      await engine.preStep(signal)
    },
    compactIfNeeded: (trigger, signal) => engine.compactIfNeeded(trigger, signal),
    compactNow: (o) => engine.compactNow(o),
    routeContextNotes: (provider, model) => engine.routeContextNotes(provider, model), // hardened HARD-8
  }
}
