/**
 * The system under test of the model-based suite and `sim fuzz` (issue #8): the reference core (`Agent` +
 * `CompactionEngine` over an in-memory `EventLog`) driven one protocol move at a time. Conversation requests
 * and tool executions *park* until a command answers them (a gated in-process adapter, no HTTP), so a turn
 * is a sequence of commands: user input, an assistant reply or a provider fault, tool results, … Compaction
 * requests are answered at once, by an armed summarizer fault (§13.2) or the mock provider's deterministic summary. Every request is
 * recorded in a plain-data trace that `scenario-writer.ts` turns into a replayable scenario.
 *
 * Everything is deterministic: a virtual clock, counter ids, no timers; `settle()` only waits for microtasks.
 */
import {
  Agent, CompactionEngine, EventLog, Seq, LlmError, LlmRuntime, ManualCompactionError, replyChunks, resolveCompactionConfig,
  resolvePruneConfig,
  restoreSession, type AgentCompactionEngine, type BasicCompactionConfig, type CapturedRequest, type ContentBlock, type EventDraft,
  type FinishReason, type GenerateOptions, type LlmAdapter, type LlmFailure, type LlmModelInfo, type LogEvent, type SessionEvent,
  type StreamChunk,
  type ImageAttachmentRef, type TokenUsage, type ToolOutcome, type ToolResultPruneConfig, type TurnOutcome,
} from '@compaction-sim/core'
import { deterministicSummary } from '../provider/deterministic-summary.ts'
import type { ConcurrentAction } from '../scenario/types.ts'
import { VirtualClock } from '../world/clock.ts'

/** The route of every fuzz session. */
export const FUZZ_ROUTE = { provider: 'mock', model: 'mock-fuzz' } as const

/** The one tool of fuzz sessions. */
export const FUZZ_TOOL = {
  name: 'read', description: 'Read a UTF-8 text file from the workspace.',
  parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
}

/** The system prompt of fuzz sessions. */
export const FUZZ_SYSTEM_PROMPT = 'You are a careful coding agent.'

/** Configuration of one fuzz session (drawn per run). */
export interface SessionConfig {
  contextWindow: number
  /** Tokens per image the route reports (§2.3), or null = not reported (subjects that ignore it, D-09). */
  imageTokens: number | null
  policy: BasicCompactionConfig
  /** §5.1 pruner overrides, or null = not loaded. */
  pruner: ToolResultPruneConfig | null
}

/** How a parked conversation request is answered. */
export type ConversationAnswer =
  | { kind: 'reply'; blocks: ContentBlock[]; usage?: TokenUsage }
  | { kind: 'fail'; failure: LlmFailure; delivery: 'thrown' | 'in-band' }

/** Summarizer faults of §13.2 provokable in-process (FAULT-22 needs the bracket signal; FAULT-31/32 hooks). */
export const SUMMARY_FAULTS = [
  'FAULT-20', 'FAULT-21', 'FAULT-23', 'FAULT-24', 'FAULT-25', 'FAULT-26', 'FAULT-27', 'FAULT-28', 'FAULT-29',
] as const

/** One summarizer fault kind. */
export type SummaryFault = (typeof SUMMARY_FAULTS)[number]

/** One dispatched request as the trace records it (the scenario writer's input). */
export type TraceRequest =
  | { index: number; purpose: 'conversation'; turn: number; answer: ConversationAnswer }
  | { index: number; purpose: 'compaction'; fault: SummaryFault | null }

/** One tool result as answered. */
export interface TraceToolResult { callId: string; content: ContentBlock[]; isError: boolean }

/** A manual action as the scenario format places it. */
export type TraceManual =
  | { kind: 'compactNow'; afterTurn: number }
  | { kind: 'compactRegion'; turn: number; beforeStep: number; start: number; end: number }

/**
 * A §13.6 interleaving as the scenario format places it (`concurrent:`, issue #16): the action ran while the
 * `occurrence`-th summary call was in flight, before its first chunk (where the gated adapter runs `duringSummary`).
 */
export interface TraceConcurrent {
  readonly action: ConcurrentAction
  /** The §13.6 fault the interleaving exercises (listed in the scenario's `faults`). */
  readonly fault: 'FAULT-70' | 'FAULT-77' | 'FAULT-78'
}

/** What the session did, in order: the input of the scenario writer. */
export interface SessionTrace {
  users: ContentBlock[][]
  requests: TraceRequest[]
  toolResults: TraceToolResult[]
  manual: TraceManual[]
  /** §13.6 interleavings with a scenario equivalent (`concurrent:` items). */
  concurrent: TraceConcurrent[]
  /** Commands of the run that have no scenario equivalent (crash, §13.6 interleavings); the writer refuses them. */
  inProcessOnly: string[]
  /** Seqs of the last event kept by each in-process crash (manifest `crashes`). */
  crashes: number[]
  explicitRegionStarts: number[]
  /** The §13.5 kind of each rejected `compaction/end` append (FAULT-60 success path, FAULT-61 error path). */
  appendFaults: Array<'FAULT-60' | 'FAULT-61'>
}

/** Where the agent is waiting. */
export type Phase = 'idle' | 'awaiting-reply' | 'awaiting-results'

/** Options of a driver. */
export interface DriverOptions {
  config: SessionConfig
  /**
   * TEST-ONLY: wraps the engine's bracket-event append path (the engine's existing `append` option, the same
   * injection point as the FAULT-60…63 storage faults). Absent in every production path.
   */
  plantAppend?: (log: EventLog) => (draft: EventDraft) => SessionEvent
}

const MAX_SETTLE_ROUNDS = 10_000

/** The driven session (module doc). */
export class SessionDriver {
  readonly config: SessionConfig
  readonly trace: SessionTrace = {
    users: [], requests: [], toolResults: [], manual: [], concurrent: [], inProcessOnly: [], crashes: [], explicitRegionStarts: [], appendFaults: [],
  }
  readonly captures: CapturedRequest[] = []
  readonly warnings: string[] = []
  readonly outcomes: TurnOutcome[] = []
  log: EventLog
  /** Summarizer faults armed for the next compaction requests, in order. */
  readonly armed: SummaryFault[] = []
  /** Runs after every state-changing command (the per-command checker); rejects to fail the command. */
  afterCommand: ((command: string) => Promise<void>) | null = null
  /** Commands run so far (counted by the model's agreement check). */
  commandsRun = 0
  /** `compaction/end` appends still to reject (FAULT-60/61, §13.5), and how many were rejected. */
  appendFaultsArmed = 0
  appendFaultsFired = 0
  /** Runs while a summary request is in flight (the §13.6 commands interleave through it), then clears. */
  duringSummary: (() => Promise<void>) | null = null
  private readonly options: DriverOptions
  private readonly runtime: LlmRuntime
  private agent!: Agent
  private engine!: CompactionEngine
  private clock!: VirtualClock
  private turn: Promise<void> | null = null
  private parkedReply: ((answer: ConversationAnswer) => void) | null = null
  private parkedTools: { calls: string[]; resolve: () => void } | null = null
  private batch: { calls: string[]; results: Map<string, ToolOutcome> | null } | null = null
  private wake: (() => void) | null = null
  private failure: unknown = null
  private regions: Array<{ start: number; end: number }> = []
  private regionTurn: number | null = null
  private regionStep = 0
  private ids = 0

  constructor(options: DriverOptions) {
    this.options = options
    this.config = options.config
    this.runtime = new LlmRuntime({ onDispatch: (call) => this.capture(call), onFinish: (call, reason) => this.finish(call, reason) })
    this.runtime.registerAdapter(FUZZ_ROUTE.provider, new GatedAdapter(this))
    this.log = new EventLog({ dialect: 'seed' })
    this.build()
  }

  /** Where the agent waits now. */
  get phase(): Phase {
    if (this.parkedTools !== null) return 'awaiting-results'
    if (this.parkedReply !== null) return 'awaiting-reply'
    return 'idle'
  }

  /** Call ids of the batch awaiting results ([] unless `awaiting-results`). */
  get pendingCalls(): readonly string[] { return this.parkedTools?.calls ?? [] }

  /** A loop error (misuse, integrity) that ended a turn by rejection; a bug of the subject. */
  get error(): unknown { return this.failure }

  /** Starts a turn with `content` and settles. Requires `idle`. */
  async userTurn(content: ContentBlock[]): Promise<void> {
    if (this.phase !== 'idle' || this.turn !== null) throw new Error('userTurn: a turn is already running')
    this.trace.users.push(structuredClone(content))
    this.turn = this.agent.runTurn({ content }).then(
      (outcome) => { this.outcomes.push(outcome) },
      (err: unknown) => { this.failure ??= err },
    ).finally(() => {
      this.turn = null
      this.wake?.()
    })
    await this.settle()
  }

  /** Answers the parked conversation request and settles. Requires `awaiting-reply`. */
  async answer(answer: ConversationAnswer): Promise<void> {
    const resolve = this.parkedReply
    if (resolve === null) throw new Error('answer: no conversation request is parked')
    this.parkedReply = null
    if (answer.kind === 'reply') {
      const calls = answer.blocks.flatMap((b) => (b.type === 'tool-call' ? [String(b['id'])] : []))
      this.batch = calls.length > 0 ? { calls, results: null } : null
    }
    resolve(answer)
    await this.settle()
  }

  /** Supplies the results of the parked tool batch (one per call, in order) and settles. Requires `awaiting-results`. */
  async results(outcomes: ToolOutcome[]): Promise<void> {
    const parked = this.parkedTools
    const batch = this.batch
    if (parked === null || batch === null) throw new Error('results: no tool batch is parked')
    batch.results = new Map(batch.calls.map((id, i) => [id, outcomes[i] ?? { content: [{ type: 'text', text: 'ok' }] }]))
    for (const [callId, o] of batch.results) {
      this.trace.toolResults.push({ callId, content: structuredClone(o.content), isError: o.isError === true })
    }
    this.parkedTools = null
    parked.resolve()
    await this.settle()
  }

  /** Queues an explicit region (0-based surface positions, negative from the end) for the next pre-step. */
  queueRegion(start: number, end: number): void {
    this.regions.push({ start, end })
  }

  /** Runs `compactNow` (§3.7) at idle; a `ManualCompactionError` becomes a warning. Returns its code or 'ok'. */
  async compactNow(): Promise<string> {
    this.trace.manual.push({ kind: 'compactNow', afterTurn: this.log.state.lastTurn })
    try {
      await this.agent.compactNow()
      return 'ok'
    } catch (err) {
      if (err instanceof ManualCompactionError) {
        this.warnings.push(`compactNow: ${err.message}`)
        return err.code
      }
      throw err
    }
  }

  /**
   * Starts `compactNow` without awaiting it (the §13.6 commands interleave with it). `record` adds it to the trace's
   * manual actions (after the last turn); a racing call is recorded by its command once its interleaving is known.
   */
  startCompactNow(record = true): Promise<string> {
    if (record) this.trace.manual.push({ kind: 'compactNow', afterTurn: this.log.state.lastTurn })
    return this.agent.compactNow().then(() => 'ok', (err: unknown) => {
      if (err instanceof ManualCompactionError) return err.code
      throw err
    })
  }

  /**
   * §13.4 crash in-process: keeps the log up to and including `afterSeq`, restores it (§11.4: repair closers,
   * `session/end-seed`) and continues with a fresh agent and engine. Mid-turn, the parked turn is abandoned.
   */
  crash(afterSeq: number): void {
    // Mid-turn, the parked turn is abandoned (its promises never settle), as a killed process's would be.
    this.turn = null
    this.parkedReply = null
    this.parkedTools = null
    this.batch = null
    this.regions = []
    const kept = this.log.events.slice(0, afterSeq + 1)
    this.trace.inProcessOnly.push(`crash after #${afterSeq}`)
    this.trace.crashes.push(afterSeq)
    // As `sim run` after a real crash: the capture holds only the new lifecycle's requests (the child's are lost).
    this.captures.length = 0
    let time = kept.at(-1)?.time ?? 0
    this.log = restoreSession(kept, { dialect: 'seed', clock: () => (time += 5) }).log
    this.build()
  }

  /** Appends a foreign event (another writer, §13.6) to the log; its command records how it interleaved. */
  foreignAppend(draft: EventDraft): void {
    if (draft.type === 'user/message') this.log.append(draft)
    else this.log.accept({ ...draft, seq: Seq(this.log.length) } as LogEvent)
  }

  /** Waits until the agent parks, or the turn ends (bounded). */
  async settle(): Promise<void> {
    for (let round = 0; round < MAX_SETTLE_ROUNDS; round++) {
      if (this.parkedReply !== null || this.parkedTools !== null || this.turn === null) return
      await new Promise<void>((resolve) => { this.wake = resolve })
      this.wake = null
    }
    throw new Error(`settle: the agent neither parked nor finished in ${MAX_SETTLE_ROUNDS} rounds`)
  }

  /** @internal the adapter parks a conversation request here. */
  parkReply(): Promise<ConversationAnswer> {
    return new Promise((resolve) => {
      this.parkedReply = resolve
      this.wake?.()
    })
  }

  /** @internal the next compaction outcome (an armed fault or success). */
  nextSummaryFault(): SummaryFault | null {
    return this.armed.shift() ?? null
  }

  /** @internal records a request of the trace. */
  record(request: TraceRequest): void {
    this.trace.requests.push(request)
  }

  /** Summary calls dispatched so far (a `concurrent:` item's `occurrence` counts them, 1-based). */
  get summaryCalls(): number { return this.trace.requests.filter((r) => r.purpose === 'compaction').length }

  /** @internal the global request index (all chat requests, scenario `when.requestIndex`). */
  get requestCount(): number { return this.trace.requests.length }

  private build(): void {
    const log = this.log
    this.clock = new VirtualClock({ length: () => log.length, offsetMs: Math.max(0, (log.events.at(-1)?.time ?? 0) - 1_700_000_000_000) })
    const policy = resolveCompactionConfig(this.config.policy)
    const warn = (message: string): void => { this.warnings.push(message) }
    const plant = this.options.plantAppend?.(log)
    const base = plant ?? ((draft: EventDraft): SessionEvent => log.append(draft))
    // FAULT-60/61: an armed storage fault rejects the next compaction/end before anything is written.
    const append = (draft: EventDraft): SessionEvent => {
      if (draft.type === 'compaction/end' && this.appendFaultsArmed > 0) {
        this.appendFaultsArmed--
        this.appendFaultsFired++
        this.trace.appendFaults.push((draft.data as { error?: string }).error === undefined ? 'FAULT-60' : 'FAULT-61')
        throw new Error('injected storage fault: compaction/end append rejected (FAULT-60/61)')
      }
      return base(draft)
    }
    this.engine = new CompactionEngine({
      log, runtime: this.runtime, policy, clock: this.clock.now, warn, info: () => {}, agentRoute: FUZZ_ROUTE, sessionId: 'fuzz-1',
      ...(this.config.pruner === null ? {} : { pruner: resolvePruneConfig(this.config.pruner) }),
      append,
      newCompactionId: () => `cmp-${++this.ids}`,
      newMessageId: () => `m-checkpoint-${++this.ids}`,
    })
    this.agent = new Agent({
      log, runtime: this.runtime, engine: this.port(), policy, route: FUZZ_ROUTE, sessionId: 'fuzz-1', clock: this.clock.now, warn,
      systemPrompt: () => FUZZ_SYSTEM_PROMPT,
      tools: [FUZZ_TOOL],
      executeTool: async (call) => {
        const batch = this.batch
        if (batch === null || !batch.calls.includes(call.callId)) throw new Error(`tool call ${call.callId} outside the answered batch`)
        if (batch.results === null) {
          await new Promise<void>((resolve) => {
            this.parkedTools = { calls: batch.calls, resolve }
            this.wake?.()
          })
        }
        return batch.results?.get(call.callId) ?? { content: [{ type: 'text', text: 'ok' }] }
      },
      newMessageId: (kind) => `m-${kind}-${++this.ids}`,
      newRetryId: () => `r-${++this.ids}`,
      sleep: async () => {},
    })
  }

  /** The engine as the loop sees it, with queued explicit regions run before the pre-step (as `sim run` does). */
  private port(): AgentCompactionEngine {
    const engine = this.engine
    const log = this.log
    return {
      preStep: async (signal) => {
        const open = log.state.openTurn
        if (open !== this.regionTurn) {
          this.regionTurn = open
          this.regionStep = 0
        }
        this.regionStep++
        const queued = this.regions
        this.regions = []
        for (const r of queued) {
          this.trace.manual.push({ kind: 'compactRegion', turn: open ?? 0, beforeStep: this.regionStep, start: r.start, end: r.end })
          const nodes = log.state.surface.nodes
          const at = (p: number): number => nodes[p < 0 ? nodes.length + p : p] ?? -1
          const startSeq = log.length
          try {
            await engine.compactRegion(at(r.start), at(r.end), signal)
          } catch (err) {
            this.warnings.push(`compactRegion(${r.start}, ${r.end}) failed: ${err instanceof Error ? err.message : String(err)}`)
          }
          if (log.event(startSeq)?.type === 'compaction/start') this.trace.explicitRegionStarts.push(startSeq)
        }
        await engine.preStep(signal)
      },
      compactIfNeeded: (trigger, signal) => engine.compactIfNeeded(trigger, signal),
      compactNow: (o) => engine.compactNow(o),
      routeContextNotes: (provider, model) => engine.routeContextNotes(provider, model), // hardened HARD-8 ({} when off)
    }
  }

  private readonly pending = new Map<GenerateOptions, CapturedRequest>()

  private capture(call: GenerateOptions): void {
    if (call.purpose === 'session-title') return
    const captured: CapturedRequest = {
      index: this.captures.length, logRevisionAtDispatch: this.log.length, time: this.clock.peek(),
      purpose: call.purpose === 'compaction' ? 'compaction' : 'conversation', provider: call.provider, model: call.model,
      messages: structuredClone(call.messages), outcome: 'stop',
    }
    if (call.maxTokens !== undefined) captured.maxTokens = call.maxTokens
    if (call.tools !== undefined) captured.tools = structuredClone(call.tools)
    this.captures.push(captured)
    this.pending.set(call, captured)
  }

  private finish(call: GenerateOptions, reason: FinishReason): void {
    const captured = this.pending.get(call)
    if (captured === undefined) return
    this.pending.delete(call)
    captured.outcome = reason.kind
    if (reason.kind === 'error' || reason.kind === 'aborted') captured.failureCode = reason.failure.code
  }
}

/** The in-process adapter: conversation requests park on the driver; compaction requests answer at once. */
class GatedAdapter implements LlmAdapter {
  constructor(private readonly driver: SessionDriver) {}

  async resolveModel(provider: string, model: string): Promise<LlmModelInfo> {
    const c = this.driver.config
    const info: LlmModelInfo = { provider, id: model, name: model, context: { contextWindow: c.contextWindow } }
    if (c.imageTokens !== null) info.imageTokens = c.imageTokens
    return info
  }

  async *stream(options: GenerateOptions): AsyncGenerator<StreamChunk> {
    const index = this.driver.requestCount
    if (options.purpose === 'compaction') {
      const fault = this.driver.nextSummaryFault()
      this.driver.record({ index, purpose: 'compaction', fault })
      const during = this.driver.duringSummary
      this.driver.duringSummary = null
      if (during !== null) await during()
      yield* summaryOutcome(fault, options)
      return
    }
    const turn = this.driver.log.state.openTurn ?? 0
    // Recorded at dispatch with a placeholder, so the index order is dispatch order; the answer fills it in.
    const entry: TraceRequest = { index, purpose: 'conversation', turn, answer: { kind: 'reply', blocks: [] } }
    this.driver.record(entry)
    const answer = await this.driver.parkReply()
    entry.answer = structuredClone(answer)
    if (answer.kind === 'fail') {
      if (answer.delivery === 'in-band') {
        yield { type: 'finish', reason: { kind: 'error', failure: answer.failure } }
        return
      }
      throw new LlmError(answer.failure)
    }
    yield* replyChunks(answer.blocks, answer.usage)
  }
}

/** The chunks (or thrown failure) of one summary call under `fault` (§13.2). */
function* summaryOutcome(fault: SummaryFault | null, request: GenerateOptions): Generator<StreamChunk> {
  const text = (t: string): ContentBlock => ({ type: 'text', text: t })
  switch (fault) {
    // The mock provider's own summarizer, so a scenario replay over HTTP commits the same brackets (§8.3).
    case null: {
      const messages = request.messages.map((m) => ({ role: m.role, content: m.content }))
      return yield* replyChunks([text(deterministicSummary({ messages }))])
    }
    case 'FAULT-20': throw new LlmError({ message: 'summarizer unavailable', code: 'SERVER' })
    case 'FAULT-21': throw new LlmError({ message: 'summary call timed out', code: 'TIMEOUT' })
    case 'FAULT-23': return yield* replyChunks([text('## Primary Request')], undefined, { kind: 'max-tokens' })
    case 'FAULT-24': return yield* replyChunks([{ type: 'reasoning', text: 'thinking only' }])
    case 'FAULT-25': return yield* replyChunks([text('see'), { type: 'image', attachment: imageRef('9', 'summary.png') }])
    case 'FAULT-26': return yield* replyChunks([
      { type: 'reasoning', text: 'weighing' }, text('## Primary Request and Intent\n- continue the task'),
      { type: 'tool-call', id: 'c-summary', name: 'read', arguments: '{}' },
    ])
    case 'FAULT-27': return yield* replyChunks([text('x '.repeat(60_000))])
    case 'FAULT-28': throw new LlmError({ message: 'summary request exceeds the context window', code: 'CONTEXT_WINDOW_EXCEEDED' })
    case 'FAULT-29': throw new LlmError({ message: 'too many images', code: 'IMAGE_OFFLOAD_REQUIRED', offloadImages: 1 })
  }
}

/** A deterministic image attachment reference. */
export function imageRef(digit: string, name: string): ImageAttachmentRef {
  return { attachmentId: `sha256:${digit.repeat(64)}`, mediaType: 'image/png', bytes: 100, width: 10, height: 10, name }
}

/** The events of `log` of one type (a typed filter). */
export function eventsOfType<T extends SessionEvent['type']>(events: readonly LogEvent[], type: T): Array<SessionEvent<T>> {
  return events.filter((e): e is SessionEvent<T> => e.type === type)
}
