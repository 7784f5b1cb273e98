/**
 * The reference agent loop (§0.2 "AgentLoop", §10.4): turns and steps over an `EventLog`, request assembly
 * from the log with `series` headers (§10.3), every stream chunk logged (§1.4.6), request-error recovery
 * inside the failed step (§3.10, §6.6, §1.4.13), tool execution, and the automatic pre-step listener
 * (§3.9, run by the engine) between steps. Event order is exactly the step flow of §10.4:
 *
 *   turn/start · [pre-step] · step/start · system/message? · user/message… · request/header? ·
 *   request/context? · assistant/chunk… · (recovery → back to request/header?) · assistant/message ·
 *   (tool/call · tool/result)… · step/end · … · turn/end
 */
import type { LlmRuntime, RuntimeCall } from '../adapter/runtime.ts'
import { failureOf } from '../adapter/runtime.ts'
import type { CallId, MessageId, Seq } from '../brand.ts'
import { MessageId as toMessageId } from '../brand.ts'
import { assertNever, errorChain, InvariantError, LogError } from '../errors.ts'
import { assembleAttempt, type AssembledAttempt } from '../log/assembly.ts'
import type { EventLog } from '../log/event-log.ts'
import type { EpochHeader, EventDraft, LogEvent, SessionEvent, TurnEndReason } from '../log/events.ts'
import type { JsonValue } from '../log/json.ts'
import type {
  AssistantMessage, ContentBlock, FinishReason, LlmFailure, LlmModelInfo, StreamChunk, TextBlock, ToolCallBlock, ToolResultMessage,
  ToolSchema,
} from '../log/llm.ts'
import { TOOL_NOT_STARTED, TOOL_NOT_STARTED_TEXT } from '../log/lifecycle.ts'
import type { CapturedRequest } from '../log/manifest.ts'
import { harnessReadOnlyPath, type ReadOnlyPathResolver } from '../offload/projection.ts'
import { offloadOversizedText, oversizedTextBound } from '../offload/text.ts'
import type { CompactionPolicySpec } from '../policy/config.ts'
import { hardeningOf } from '../policy/hardening.ts'
import { systemHeadCount } from '../range/select.ts'
import { deriveNodeMessages, type DerivedMessage } from '../surface/derive.ts'
import type { CompactionResult } from '../compaction/bracket.ts'
import type { IdleAdmission } from '../compaction/engine.ts'
import { TurnQueue } from './admission.ts'
import type { AgentCompactionEngine } from './compaction-port.ts'
import {
  AgentConfigError, resolveAgentLimits, resolveRetryPolicy,
  type AgentLimits, type AgentRoute, type MessageKind, type RetryPolicyConfig, type RetryPolicySpec, type SteeringSource, type ToolExecutor,
  type ToolOutcome, type ToolResultOrder, type UserInput,
} from './options.ts'
import {
  imageOffloadListener, OverflowRecovery, runRequestErrorWaterfall, TransientRetry, type RequestErrorListener,
} from './recovery.ts'
import { conversationRequest, headerRecord, requestHeader, routeContextRecord } from './request.ts'

/** A conversation request as dispatched, for the harness capture (§1.1); the harness assigns `index`. */
export type ConversationCapture = Omit<CapturedRequest, 'index'>

/** Options of an `Agent`. Everything non-deterministic (clock, ids, sleep) is injected. */
export interface AgentOptions {
  readonly log: EventLog
  readonly runtime: LlmRuntime
  /** The compaction engine; without it there is no pre-step compaction and no overflow recovery. */
  readonly engine?: AgentCompactionEngine
  /** The resolved compaction policy (`auto`, `maxOverflowRetries` per route), the same one the engine uses. */
  readonly policy: CompactionPolicySpec
  /** The initial proposed route; `setRoute` switches it. */
  readonly route: AgentRoute
  /** Renders the system prompt; called once per step open (§1.4.5). */
  readonly systemPrompt: () => string
  readonly tools: readonly ToolSchema[]
  readonly executeTool: ToolExecutor
  /** Virtual clock: epoch ms for every event this loop writes. */
  readonly clock: () => number
  /** Fresh message ids, per kind (deterministic generators keep one counter per kind). */
  readonly newMessageId: (kind: MessageKind) => string
  /** Fresh `llm/retry` ids. */
  readonly newRetryId: () => string
  /** Virtual back-off of the transient retry policy; may reject when the signal aborts. */
  readonly sleep: (ms: number, signal: AbortSignal) => Promise<void>
  readonly retry?: RetryPolicyConfig
  readonly limits?: Partial<AgentLimits>
  readonly sessionId?: string
  /** Read-only attachment paths in offload placeholders (§6.5); the harness rule by default. */
  readonly readOnlyPath?: ReadOnlyPathResolver
  /**
   * Called once per conversation attempt after its stream ended, with the request exactly as dispatched;
   * `time` is the time of the attempt's first chunk (virtual time at dispatch), so capturing reads no clock.
   */
  readonly onRequest?: (request: ConversationCapture) => void
  /** Warnings of the overflow listener (§3.10); discarded when absent. */
  readonly warn?: (message: string) => void
  /**
   * `omit` models direct API use (§13.1 FAULT-09): requests are dispatched without logging `request/header`
   * or `request/context`, so the log has no routed target (§2.7) and automatic policy and overflow recovery
   * do nothing. Such a log no longer records the call configuration (§10), so this exists to exercise that
   * path only. Default `log`.
   */
  readonly requestHeaders?: 'log' | 'omit'
  /**
   * The order a step's tool results are logged in. Absent, or `null` for a step: sequential dispatch — each
   * call is logged (`tool/call`), executed and answered (`tool/result`) before the next, in call order. A
   * permutation of the step's call ids: parallel dispatch — every `tool/call` is logged first, in call order
   * (all calls are in flight), then each call is executed and its `tool/result` (citing its `tool/call`)
   * logged in the returned order, as the results of concurrently running tools arrive. Either way every call
   * of the step is answered exactly once before `step/end` (§1.4.9, INV-09); the assistant message keeps the
   * model's call order. Anything but a permutation rejects the turn with `AgentError('TOOL_ORDER')`.
   */
  readonly toolResultOrder?: ToolResultOrder
  /**
   * Steering: user input that arrives while a turn runs, claimed when each step opens (§10.4 pre-step "claim
   * queued input"). Called once per step with the open turn and the step about to be dispatched; each input is
   * appended as a `user/message` (source `{kind:'user'}` unless given) after the step's `system/message` and,
   * in step 1, after the entered batch — so it sits in the open turn and reaches the model in this step's
   * request (§1.3: a `user/message` may be appended anywhere). Absent = no steering.
   */
  readonly steering?: SteeringSource
}

/** How a turn ended. */
export interface TurnOutcome {
  readonly turn: number
  readonly steps: number
  readonly reason: TurnEndReason
}

/** Closed set of loop misuse errors (never provider failures, which end turns instead). */
export type AgentErrorCode =
  | 'TURN_OPEN' // the log already has an open turn (restore it first, §11.4)
  | 'NO_ENGINE' // compactNow without a compaction engine
  | 'TOOL_ORDER' // toolResultOrder returned something other than a permutation of the step's call ids

/** Misuse of the loop. */
export class AgentError extends Error {
  override readonly name = 'AgentError'
  readonly code: AgentErrorCode

  constructor(code: AgentErrorCode, message: string) {
    super(message)
    this.code = code
  }
}

/** One finished attempt of a step: its logged chunks and what they assemble to. */
interface Attempt {
  readonly call: RuntimeCall
  readonly nodes: readonly DerivedMessage[]
  readonly chunkSeqs: Seq[]
  readonly chunks: StreamChunk[]
  readonly finish: FinishReason
  readonly replayState: JsonValue | undefined
}

/** What a step decided. */
type StepOutcome = { readonly kind: 'continue' } | { readonly kind: 'end'; readonly reason: TurnEndReason }

const USER_ABORT: TurnEndReason = Object.freeze({ kind: 'aborted', reason: Object.freeze({ kind: 'user' as const }) })
const NEVER_ABORTED: AbortSignal = new AbortController().signal
/** Text of the error result of a dispatched call that was still waiting when its turn was cancelled. */
const ABORTED_TOOL_TEXT = 'The tool call was dispatched, but the turn was cancelled before its result arrived.'

/**
 * The agent loop. `runTurn` queues a turn and resolves with how it ended; provider failures and cancellation
 * end turns (they do not reject). It rejects only for misuse (`AgentError`) and for log-integrity failures
 * (`LogError`, `InvariantError`), after closing the open step and turn when the log still accepts them.
 */
export class Agent {
  private readonly options: AgentOptions
  private readonly log: EventLog
  private tools: ToolSchema[]
  private route: AgentRoute
  private readonly warn: (message: string) => void
  private readonly retrySpec: RetryPolicySpec
  private readonly limits: AgentLimits
  private readonly queue = new TurnQueue()
  private readonly overflow: OverflowRecovery | null
  private readonly transient: TransientRetry
  private readonly listeners: RequestErrorListener[]
  private readonly readOnlyPath: ReadOnlyPathResolver
  /** Whether this loop instance has written a `request/header` (§10.3 `resume`). */
  private loggedHeader = false
  private systemScan = 0
  private lastSystemText = ''
  /** HARD-7 (`hardening.headRefresh`): a changed system prompt replaces the head instead of appending. */
  private readonly headRefresh: boolean

  constructor(options: AgentOptions) {
    if (options.log.dialect !== 'seed') {
      const reason = `the reference loop writes the seed dialect (system/message, §1.4.5), not ${options.log.dialect}`
      throw new AgentConfigError('DIALECT', 'log', reason)
    }
    this.options = options
    this.log = options.log
    this.tools = structuredClone([...options.tools])
    this.route = structuredClone(options.route)
    this.retrySpec = resolveRetryPolicy(options.retry)
    this.limits = resolveAgentLimits(options.limits)
    this.readOnlyPath = options.readOnlyPath ?? harnessReadOnlyPath
    this.headRefresh = hardeningOf(options.policy).headRefresh !== null
    const warn = options.warn ?? (() => {})
    this.warn = warn
    // §3.10: the overflow listener is installed with `auto`; image offload has no configuration (§3.1).
    this.overflow = options.engine !== undefined && options.policy.auto
      ? new OverflowRecovery({ log: options.log, engine: options.engine, policy: options.policy, warn })
      : null
    this.transient = new TransientRetry({
      log: options.log, spec: this.retrySpec, clock: options.clock, newRetryId: options.newRetryId, sleep: options.sleep,
    })
    this.listeners = [
      ...(this.overflow !== null ? [this.overflow.listener] : []),
      imageOffloadListener(options.log, options.clock),
      this.transient.listener,
    ]
  }

  /** The idle admission manual compaction reserves (§3.7 step 2). */
  get admission(): IdleAdmission { return this.queue }

  /** True while a turn runs or waits. */
  get busy(): boolean { return this.queue.busy }

  /** The current `overflowRetries` counter (§3.10); 0 when deleted. */
  get overflowRetries(): number { return this.overflow?.count ?? 0 }

  /** The resolved transient-retry policy (its `policyKey` is logged on `llm/retry`). */
  get retryPolicy(): RetryPolicySpec { return this.retrySpec }

  /**
   * Queues one turn with the entered batch `input` (written after `step/start` of step 1) and runs it:
   * steps until the model requests no more tools. Resolves with the `turn/end` reason; rejects with
   * `AgentError('TURN_OPEN')` when the log already has an open turn, or with a log-integrity error.
   */
  runTurn(input: UserInput | readonly UserInput[], signal: AbortSignal = NEVER_ABORTED): Promise<TurnOutcome> {
    const batch: readonly UserInput[] = Array.isArray(input) ? input : [input as UserInput]
    return this.queue.run(() => this.turn(batch, signal), () => this.overflow?.reset())
  }

  /**
   * Switches the proposed route from the next request on (FAULT-44): the next header is a `change`, and
   * capacity and policy are re-resolved by the next pressure check.
   */
  setRoute(route: AgentRoute): void {
    this.route = structuredClone(route)
  }

  /** Replaces the offered tools from the next request on (a `change` header, §10.3). */
  setTools(tools: readonly ToolSchema[]): void {
    this.tools = structuredClone([...tools])
  }

  /** Manual idle compaction (§3.7) through this agent's admission. Throws `AgentError('NO_ENGINE')` without an engine. */
  compactNow(options: { signal?: AbortSignal; sourceCommandId?: string } = {}): Promise<CompactionResult | null> {
    const engine = this.options.engine
    if (engine === undefined) throw new AgentError('NO_ENGINE', 'compactNow needs a compaction engine')
    return engine.compactNow({ ...options, admission: this.queue })
  }

  /** Aborts a held maintenance reservation (FAULT-82); false when none is held. */
  cancelMaintenance(reason: unknown): boolean {
    return this.queue.cancelReservation(reason)
  }

  private async turn(batch: readonly UserInput[], signal: AbortSignal): Promise<TurnOutcome> {
    const log = this.log
    if (log.state.openTurn !== null) {
      throw new AgentError('TURN_OPEN', `turn ${log.state.openTurn} is still open; restore the session first (§11.4)`)
    }
    const turn = log.state.lastTurn + 1
    this.append({ type: 'turn/start', data: { turn } })
    let step = 0
    try {
      for (;;) {
        if (signal.aborted) return this.endTurn(turn, step, USER_ABORT, false) // FAULT-83: no pre-step compaction
        if (step >= this.limits.maxSteps) return this.endTurn(turn, step, { kind: 'blocked' }, false)
        await this.preStep(signal)
        if (signal.aborted) return this.endTurn(turn, step, USER_ABORT, false)
        step++
        this.append({ type: 'step/start', data: { turn, step } })
        this.transient.startStep()
        this.appendSystemIfChanged()
        if (step === 1) for (const input of batch) this.appendUser(input)
        for (const input of this.options.steering?.(turn, step) ?? []) this.appendUser(input)
        const outcome = await this.runStep(turn, step, signal)
        this.append({ type: 'step/end', data: { turn, step } })
        if (outcome.kind === 'end') return this.endTurn(turn, step, outcome.reason, false)
      }
    } catch (err) {
      return this.failTurn(turn, step, err, signal)
    }
  }

  /** §3.9: the engine's pre-step listener, installed with `auto`. It never throws by contract. */
  private async preStep(signal: AbortSignal): Promise<void> {
    const engine = this.options.engine
    if (engine === undefined || !this.options.policy.auto) return
    await engine.preStep(signal)
  }

  /** One step: attempts until success or a final failure (§10.4), then tool execution. */
  private async runStep(turn: number, step: number, signal: AbortSignal): Promise<StepOutcome> {
    for (let attempts = 1; ; attempts++) {
      if (signal.aborted) return { kind: 'end', reason: USER_ABORT }
      const attempt = await this.attempt(turn, step, signal)
      const finish = attempt.finish
      switch (finish.kind) {
        case 'error': {
          const decision = await runRequestErrorWaterfall(this.listeners, {
            failure: finish.failure, signal, turn, step, provider: attempt.call.provider, requestNodes: attempt.nodes,
          })
          if (signal.aborted) return { kind: 'end', reason: USER_ABORT } // FAULT-10: cancellation wins
          if (decision.kind === 'retry' && attempts < this.limits.maxAttemptsPerStep) continue
          return { kind: 'end', reason: { kind: 'error', error: finish.failure } } // INV-34: the original failure
        }
        case 'aborted':
          this.appendInterrupted(turn, step, attempt)
          return { kind: 'end', reason: USER_ABORT }
        case 'stop':
        case 'tool-calls':
        case 'max-tokens': {
          const content = this.appendAssistant(turn, step, attempt)
          const calls = content.filter((b): b is ToolCallBlock => b.type === 'tool-call')
          if (calls.length > 0) {
            await this.runTools(turn, step, calls, signal)
            return signal.aborted ? { kind: 'end', reason: USER_ABORT } : { kind: 'continue' }
          }
          return { kind: 'end', reason: finish.kind === 'max-tokens' ? { kind: 'max-tokens' } : { kind: 'completed' } }
        }
        default:
          return assertNever(finish, 'finish reason')
      }
    }
  }

  /**
   * Builds the request from the log and dispatches it: model info → `request/header` (§10.3) →
   * `request/context` when changed (§1.4.11) → `deriveMessages(log)` → stream, logging every chunk.
   */
  private async attempt(turn: number, step: number, signal: AbortSignal): Promise<Attempt> {
    const { clock, sessionId } = this.options
    const route = this.route
    const log = this.log
    const info = await this.modelInfo(route, signal)
    const header: EpochHeader = requestHeader(route, info, this.tools)
    const logged = this.options.requestHeaders !== 'omit'
    const record = logged ? headerRecord(log, header, this.loggedHeader) : null
    if (record !== null) {
      this.append({ type: 'request/header', data: record })
      this.loggedHeader = true
    }
    const notes = logged ? this.options.engine?.routeContextNotes?.(route.provider, route.model) : undefined // HARD-8
    const context = logged ? routeContextRecord(log, route, info, notes) : null
    if (context !== null) this.append({ type: 'request/context', data: context })
    this.offloadOversizedText(info)
    const nodes = deriveNodeMessages(log, this.readOnlyPath)
    const logRevisionAtDispatch = log.length
    const call = this.options.runtime.stream(conversationRequest(header, nodes, signal, sessionId))
    const chunkSeqs: Seq[] = []
    const chunks: StreamChunk[] = []
    let finish: FinishReason = { kind: 'stop' }
    let replayState: Attempt['replayState']
    for await (const raw of call.chunks) {
      const chunk = this.logChunk(turn, step, raw, chunkSeqs, chunks)
      if (chunk.type === 'finish') {
        finish = chunk.reason
        replayState = chunk.replayState
        break
      }
    }
    // time(R) (§9.3) is the time of the attempt's first chunk: the clock is read once per logged event and
    // nothing is logged between dispatch and that chunk; an attempt that streamed nothing reads it now.
    const first = chunkSeqs[0]
    const time = first !== undefined ? (log.event(first) as LogEvent).time : clock()
    this.options.onRequest?.(capture(call, logRevisionAtDispatch, time, finish))
    return { call, nodes, chunkSeqs, chunks, finish, replayState }
  }

  /**
   * Hardened `oversizedUserText` (HARD-5, packages/core/docs/hardened.md): after the route records and before
   * the request is built from the log, every
   * surface user text block priced above `floor(maxWindowRatio × contextWindow)` of this route gets its
   * `text/offload`, so neither this request nor any later one (conversation or summary) carries it. Off (the
   * faithful default) or with no known window, nothing is written.
   */
  private offloadOversizedText(info: LlmModelInfo): void {
    const rule = hardeningOf(this.options.policy).oversizedUserText
    const window = info.context?.contextWindow
    if (rule === null || window === undefined) return
    offloadOversizedText(this.log, oversizedTextBound(rule.maxWindowRatio, window), this.options.clock)
  }

  /**
   * Route metadata for this request (§2.7, §2.3). When the runtime cannot resolve it (e.g. an invalid
   * reported window, `INVALID_MODEL_CONTEXT`, FAULT-41) the request is still dispatched without metadata —
   * the provider, not the loop, decides whether it is acceptable — and a warning is given.
   */
  private async modelInfo(route: AgentRoute, signal: AbortSignal): Promise<LlmModelInfo> {
    try {
      return await this.options.runtime.resolveModelInfo(route.provider, route.model, signal)
    } catch (err) {
      if (signal.aborted) throw err
      this.warn(`route metadata of ${route.provider}/${route.model} is unavailable: ${errorChain(err)}; dispatching without it`)
      return { provider: route.provider, id: route.model, name: route.model }
    }
  }

  /**
   * Logs one chunk as `assistant/chunk` (a copy, so the adapter's objects are not frozen). A chunk the log
   * refuses (not lossless JSON, wrong shape) is an adapter failure: it is replaced by a failed finish.
   */
  private logChunk(turn: number, step: number, raw: StreamChunk, seqs: Seq[], chunks: StreamChunk[]): StreamChunk {
    let chunk: StreamChunk
    let event: SessionEvent
    try {
      chunk = structuredClone(raw)
      event = this.append({ type: 'assistant/chunk', data: { turn, step, chunk } })
    } catch (err) {
      if (!(err instanceof LogError) && !(err instanceof DOMException)) throw err
      const failure: LlmFailure = { message: `the adapter streamed an invalid chunk: ${errorChain(err)}`, code: 'UNKNOWN' }
      chunk = { type: 'finish', reason: { kind: 'error', failure } }
      event = this.append({ type: 'assistant/chunk', data: { turn, step, chunk } })
    }
    seqs.push(event.seq)
    chunks.push(chunk)
    return chunk
  }

  /** Appends the successful attempt's `assistant/message` (§1.4.7) and deletes the overflow counter (§3.10). */
  private appendAssistant(turn: number, step: number, attempt: Attempt): ContentBlock[] {
    const assembled: AssembledAttempt = assembleAttempt(attempt.chunks)
    this.appendAssistantEvent(turn, step, attempt, assembled.blocks, assembled, false)
    return assembled.blocks
  }

  /** A cancelled stream keeps only its non-blank text and reasoning blocks; appended only when one is kept (§1.4.6). */
  private appendInterrupted(turn: number, step: number, attempt: Attempt): void {
    const kept = interruptedContent(attempt.chunks)
    if (kept.blocks.length === 0) return
    this.appendAssistantEvent(turn, step, attempt, kept.blocks, kept, true)
  }

  private appendAssistantEvent(
    turn: number, step: number, attempt: Attempt, content: ContentBlock[],
    assembled: { usage?: AssembledAttempt['usage'] }, interrupted: boolean,
  ): void {
    const source: AssistantMessage['source'] = {
      kind: 'model', provider: attempt.call.provider, model: attempt.call.model,
    }
    if (attempt.replayState !== undefined) source.replayState = attempt.replayState
    const message = { id: this.messageId('assistant'), role: 'assistant' as const, content, source }
    const data: SessionEvent<'assistant/message'>['data'] = { turn, step, message }
    if (assembled.usage !== undefined) data.usage = assembled.usage
    if (interrupted) data.interrupted = true
    this.append({ type: 'assistant/message', data, surfaceOp: 'append', sourceEventSeqs: [...attempt.chunkSeqs] })
    this.overflow?.reset()
  }

  /**
   * Runs the requested calls: sequentially in call order (`tool/call`, execution, `tool/result` citing the
   * call, §1.4.9), or — when `toolResultOrder` gives an order for this step — dispatched together and answered
   * in that order (`runToolsInOrder`). Once the signal aborts, every remaining call that was never dispatched
   * gets a synthetic `TOOL_NOT_STARTED` result without a `tool/call` (INV-09), so the surface never keeps an
   * unanswered call.
   */
  private async runTools(turn: number, step: number, calls: readonly ToolCallBlock[], signal: AbortSignal): Promise<void> {
    const requests = calls.map((block) => ({ callId: block.id, name: block.name, arguments: block.arguments }))
    const order = signal.aborted ? null : this.options.toolResultOrder?.(requests, { turn, step }) ?? null
    if (order !== null) return this.runToolsInOrder(turn, step, calls, order, signal)
    for (const block of calls) {
      if (signal.aborted) {
        const error = { name: 'ToolNotStartedError', code: TOOL_NOT_STARTED }
        this.appendToolResult(turn, step, block.id, { content: [text(TOOL_NOT_STARTED_TEXT)], isError: true, error }, undefined)
        continue
      }
      const data = { turn, step, callId: block.id, name: block.name, arguments: block.arguments }
      const callEvent = this.append({ type: 'tool/call', data })
      this.appendToolResult(turn, step, block.id, await this.execute(block, signal), callEvent.seq)
    }
  }

  /**
   * Parallel dispatch: every call's `tool/call` first (call order), then one execution and `tool/result` per
   * call in `order`. A call still waiting when the signal aborts is answered with an `ABORTED` error result
   * citing its `tool/call` (it was dispatched, so it is not a `TOOL_NOT_STARTED` result). Throws
   * `AgentError('TOOL_ORDER')` before logging anything when `order` is not a permutation of the call ids.
   */
  private async runToolsInOrder(
    turn: number, step: number, calls: readonly ToolCallBlock[], order: readonly CallId[], signal: AbortSignal,
  ): Promise<void> {
    const byId = new Map(calls.map((block) => [block.id as string, block]))
    if (order.length !== calls.length || new Set(order).size !== order.length || order.some((id) => !byId.has(id))) {
      const given = JSON.stringify(order)
      const ids = JSON.stringify(calls.map((c) => c.id))
      throw new AgentError('TOOL_ORDER', `toolResultOrder returned ${given}, not a permutation of ${ids}`)
    }
    const callSeqs = new Map<string, Seq>()
    for (const block of calls) {
      const data = { turn, step, callId: block.id, name: block.name, arguments: block.arguments }
      callSeqs.set(block.id, this.append({ type: 'tool/call', data }).seq)
    }
    for (const id of order) {
      const block = byId.get(id) as ToolCallBlock
      const outcome: ToolOutcome = signal.aborted
        ? { content: [text(ABORTED_TOOL_TEXT)], isError: true, error: { name: 'AbortError', code: 'ABORTED' } }
        : await this.execute(block, signal)
      this.appendToolResult(turn, step, id, outcome, callSeqs.get(id))
    }
  }

  /** Executes one call; a rejection becomes an error outcome (the model sees it; the turn goes on). */
  private async execute(block: ToolCallBlock, signal: AbortSignal): Promise<ToolOutcome> {
    try {
      return await this.options.executeTool({ callId: block.id, name: block.name, arguments: block.arguments }, signal)
    } catch (err) {
      const error = signal.aborted ? { name: 'AbortError', code: 'ABORTED' } : { name: errorName(err), code: errorCode(err) }
      return { content: [text(errorChain(err))], isError: true, error }
    }
  }

  private appendToolResult(turn: number, step: number, callId: CallId, outcome: ToolOutcome, callSeq: Seq | undefined): void {
    const message: ToolResultMessage = {
      id: this.messageId('tool'),
      role: 'user',
      content: [{ type: 'tool-result', toolCallId: callId, content: structuredClone(outcome.content), isError: outcome.isError ?? false }],
      source: { kind: 'tool', callId },
    }
    const data: SessionEvent<'tool/result'>['data'] = { turn, step, message }
    const error = outcome.error
    if (error !== undefined) data.error = { name: error.name, code: error.code }
    if (outcome.meta !== undefined) data.meta = structuredClone(outcome.meta)
    this.append({ type: 'tool/result', data, surfaceOp: 'append', ...(callSeq !== undefined ? { sourceEventSeqs: [callSeq] } : {}) })
  }

  /**
   * §1.4.5: at step open, a `system/message` when the surface is empty and the prompt is non-empty, or when
   * the prompt differs from the text of the most recently appended `system/message` ('' when none). Under
   * hardened HARD-7 (`hardening.headRefresh`) a changed prompt replaces the system head instead (`refreshHead`).
   */
  private appendSystemIfChanged(): void {
    const prompt = this.options.systemPrompt()
    const events = this.log.events
    for (; this.systemScan < events.length; this.systemScan++) {
      const e = events[this.systemScan]
      if (e?.type === 'system/message') this.lastSystemText = textOf((e as SessionEvent<'system/message'>).data.content)
    }
    if (this.headRefresh && this.refreshHead(prompt)) return
    const head = this.log.nodes.length === 0 && prompt !== ''
    if (!head && prompt === this.lastSystemText) return
    this.append({
      type: 'system/message',
      data: { id: this.messageId('system'), role: 'system', content: [text(prompt)], source: { kind: 'plugin', plugin: 'system-prompt' } },
      surfaceOp: 'append',
    })
  }

  /**
   * HARD-7: when the surface has a system head (a `system/message` at position 0, §4.2 `h = 1`), the prompt is
   * compared with the head's own text (not with the last appended system message) and a change replaces exactly
   * the head: `surfaceOp {op:'replace', start: h, end: h}`, `sourceEventSeqs [h]`. The head stays at position 0
   * and is the only system message the loop ever puts on such a surface. Read from the surface, so a restored log
   * refreshes the head it holds. Returns false when there is no head: then §1.4.5 applies as written (the first
   * non-empty prompt of a session whose initial prompt was empty is appended at the tail).
   */
  private refreshHead(prompt: string): boolean {
    if (systemHeadCount(this.log) === 0) return false
    const headSeq = this.log.nodes[0] as Seq
    const head = this.log.event(headSeq) as SessionEvent<'system/message'>
    if (textOf(head.data.content) === prompt) return true
    this.append({
      type: 'system/message',
      data: { id: this.messageId('system'), role: 'system', content: [text(prompt)], source: { kind: 'plugin', plugin: 'system-prompt' } },
      surfaceOp: { op: 'replace', start: headSeq, end: headSeq },
      sourceEventSeqs: [headSeq],
    })
    return true
  }

  private appendUser(input: UserInput): void {
    const id = input.id !== undefined ? toMessageId(input.id) : this.messageId('user')
    this.append({
      type: 'user/message',
      data: {
        id, role: 'user', content: structuredClone(input.content),
        source: input.source !== undefined ? structuredClone(input.source) : { kind: 'user' },
      },
      surfaceOp: 'append',
    })
  }

  /** Closes the open step (if any) and the turn with `reason`. */
  private endTurn(turn: number, step: number, reason: TurnEndReason, stepOpen: boolean): TurnOutcome {
    if (stepOpen) this.append({ type: 'step/end', data: { turn, step } })
    this.append({ type: 'turn/end', data: { turn, reason } })
    return { turn, steps: step, reason }
  }

  /**
   * An exception escaped a step: a listener, middleware or hook threw around the request (FAULT-17, not
   * offered to recovery), or the log refused an event. Closes the open step and the turn with
   * `{kind:'error'}` (or `aborted` when cancelled); log-integrity errors and loop misuse (`AgentError`) are rethrown after
   * closing.
   */
  private failTurn(turn: number, step: number, err: unknown, signal: AbortSignal): TurnOutcome {
    const integrity = err instanceof LogError || err instanceof InvariantError || err instanceof AgentError
    const reason: TurnEndReason = signal.aborted ? USER_ABORT : { kind: 'error', error: failureOf(err) }
    let outcome: TurnOutcome
    try {
      const open = this.log.state.openStep
      outcome = this.endTurn(turn, step, reason, open !== null && open.turn === turn)
    } catch (closeErr) {
      throw new AggregateError([err, closeErr], `turn ${turn} failed and could not be closed`, { cause: err })
    }
    if (integrity) throw err
    return outcome
  }

  private messageId(kind: MessageKind): MessageId {
    return toMessageId(this.options.newMessageId(kind))
  }

  private append(draft: TimelessDraft): SessionEvent {
    return this.log.append({ ...draft, time: this.options.clock() } as EventDraft)
  }
}

/** An event draft before the loop stamps its `time`. */
type TimelessDraft = EventDraft extends infer D ? D extends unknown ? Omit<D, 'time'> : never : never

function text(value: string): TextBlock {
  return { type: 'text', text: value }
}

function textOf(content: readonly ContentBlock[]): string {
  let out = ''
  for (const b of content) if (b.type === 'text') out += String(b['text'])
  return out
}

function errorName(err: unknown): string {
  return err instanceof Error && err.name !== '' ? err.name : 'Error'
}

function errorCode(err: unknown): string {
  const code = typeof err === 'object' && err !== null ? (err as { code?: unknown }).code : undefined
  return typeof code === 'string' && code !== '' ? code : 'TOOL_ERROR'
}

/**
 * The content of an interrupted assistant message (§1.4.6): the attempt's text and reasoning blocks, in
 * order, whose text has a non-whitespace character; tool calls and other blocks are never kept. Chunks of
 * other blocks are dropped before assembly so an unclosed foreign block cannot fail it.
 */
export function interruptedContent(chunks: readonly StreamChunk[]): { blocks: ContentBlock[]; usage?: AssembledAttempt['usage'] } {
  const typeOf = new Map<number, string>()
  for (const c of chunks) {
    if (!('index' in c) || typeOf.has(c.index)) continue
    typeOf.set(c.index, blockTypeOf(c))
  }
  const kept = chunks.filter((c) => !('index' in c) || typeOf.get(c.index) === 'text' || typeOf.get(c.index) === 'reasoning')
  const assembled = assembleAttempt(kept)
  const blocks = assembled.blocks.filter((b) => (b.type === 'text' || b.type === 'reasoning') && /\S/u.test(String(b['text'])))
  return assembled.usage !== undefined ? { blocks, usage: assembled.usage } : { blocks }
}

/** The block type the first chunk naming an index gives it (§1.4.6 assembly, first rule). */
function blockTypeOf(c: Extract<StreamChunk, { index: number }>): string {
  switch (c.type) {
    case 'block-start': return c.blockType
    case 'text-delta': return 'text'
    case 'reasoning-delta': return 'reasoning'
    case 'tool-call-delta': return 'tool-call'
    case 'block-end': return c.block.type
    default: return assertNever(c, 'indexed chunk')
  }
}

function capture(call: RuntimeCall, logRevisionAtDispatch: number, time: number, finish: FinishReason): ConversationCapture {
  const o = call.options
  const out: ConversationCapture = {
    logRevisionAtDispatch, time, purpose: 'conversation', provider: o.provider, model: o.model, messages: o.messages, outcome: 'stop',
  }
  if (o.reasoningEffort !== undefined) out.reasoningEffort = o.reasoningEffort
  if (o.temperature !== undefined) out.temperature = o.temperature
  if (o.maxTokens !== undefined) out.maxTokens = o.maxTokens
  if (o.stop !== undefined) out.stop = o.stop
  if (o.tools !== undefined) out.tools = o.tools
  switch (finish.kind) {
    case 'stop':
    case 'tool-calls':
    case 'max-tokens':
      out.outcome = finish.kind
      return out
    case 'error':
    case 'aborted':
      out.outcome = finish.kind
      out.failureCode = finish.failure.code
      return out
    default:
      return assertNever(finish, 'finish reason')
  }
}
