/**
 * An example user subject for compaction-sim: what an adapter or backend author writes so that
 * `sim run --subject module:<this file>` and `sim conform` drive *their* code through every scenario.
 *
 * "Your backend" here is a small one built from `@compaction-sim/core` pieces: a durable JSONL log store,
 * the agent loop, the compaction engine and the OpenAI-compatible HTTP adapter. Replace those pieces with
 * your own; keep the contract:
 *
 * 1. Export a `Subject` (default export, or a named export `subject`) with a `name`, the `features` you
 *    support (scenarios needing others are skipped with the reason) and `runSession(options)`.
 * 2. Talk to the mock provider at `options.baseUrl` using the scenario's route (`options.scenario.provider`).
 * 3. Before each turn call `hooks.beginTurn(turn, control)`: the provider then serves that turn's replies.
 * 4. Write every event durably to `options.logPath` (seed dialect) and call `options.onDurable` right after
 *    each fsync (the crash harness kills the process there); with `resume`, restore the log (§11.4) and go on.
 * 5. Be deterministic: ids from `options.seed`, time from a virtual clock — never `Date.now` or `Math.random`.
 * 6. Return the turn outcomes and the §1.1 request capture: the checker judges requests against the log.
 *
 * Prove it: `pnpm sim conform --subject module:examples/subject-core-adapter/subject.ts --level must`.
 */
import { rm } from 'node:fs/promises'
import {
  Agent, CompactionEngine, EventLog, type AgentCompactionEngine, JsonlLogStore, LlmRuntime, OpenAiCompatibleAdapter, restoreSession,
  type CapturedRequest, type EventDraft, type GenerateOptions, type LlmAdapter, type LogEvent, type RestoredSession, type RestoreOptions,
  type ToolExecutor,
} from '@compaction-sim/core'
import type { Subject, SubjectSessionOptions, SubjectSessionResult, SubjectTurnOutcome } from '@compaction-sim/sim'

/** Virtual epoch of this subject's clock and the virtual milliseconds between two readings. */
const ORIGIN_MS = 1_700_000_000_000
const STEP_MS = 5

/** A virtual clock: `now` advances by one step per reading, `sleep` by the requested time (never a real timer). */
interface Clock {
  now: () => number
  peek: () => number
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>
}

/**
 * Two seams of this backend that the deliberately broken subjects of `examples/broken/` wrap to plant one bug
 * each (the HTTP adapter, crash restore). Your own backend needs neither: leave them out.
 */
export interface ExampleSeams {
  /** Wraps the HTTP adapter before it is registered with the runtime. */
  adapter?: (adapter: LlmAdapter) => LlmAdapter
  /** Replaces `restoreSession` (§11.4) when a session resumes after a crash. */
  restore?: (stored: readonly LogEvent[], options: RestoreOptions) => RestoredSession
  /** Wraps the compaction engine the agent calls (the session's log, its warning sink and its log file given). */
  engine?: (engine: AgentCompactionEngine, session: { log: EventLog; warn: (message: string) => void; logPath: string }) => AgentCompactionEngine
}

/** The subject with `seams` applied. `explicitRegion` and `unroutableSummarizer` are left out: those scenarios are skipped. */
export function exampleSubject(seams: ExampleSeams = {}): Subject {
  return {
    name: 'core-adapter-example',
    features: [
      'manualCompaction', 'imageOffload', 'summaryError', 'seriesHeaders', 'abort', 'timeouts', 'routeSwitch', 'middleware', 'crash',
      'appendFaults', 'sessions',
    ],
    runSession: (options) => runSession(options, seams),
  }
}

/** The subject. */
const subject: Subject = exampleSubject()
export default subject

/** Opens (or restores) the durable log, runs the remaining turns, and closes the store. */
async function runSession(options: SubjectSessionOptions, seams: ExampleSeams): Promise<SubjectSessionResult> {
  const resume = options.resume === true
  if (!resume) await rm(options.logPath, { force: true })
  const { store, events: stored } = await JsonlLogStore.open(options.logPath, {
    dialect: 'seed', create: !resume, ...(options.onDurable === undefined ? {} : { onDurable: options.onDurable }),
  })
  let time = stored.at(-1)?.time ?? ORIGIN_MS
  const clock: Clock = {
    now: (): number => (time += STEP_MS),
    peek: (): number => time + STEP_MS,
    sleep: async (ms: number, signal?: AbortSignal): Promise<void> => {
      time += Math.ceil(ms)
      await new Promise((resolve) => setImmediate(resolve))
      signal?.throwIfAborted()
    },
  }
  let storeError: unknown = null
  const persist = (event: LogEvent): void => {
    store.append([event]).catch((err: unknown) => { storeError ??= err })
  }
  // A restored session appends restore's closers and `session/end-seed` (§11.4) before anything else.
  const restore = seams.restore ?? restoreSession
  const log = resume ? restore(stored, { dialect: 'seed', clock: clock.now }).log : new EventLog({ dialect: 'seed' })
  for (const event of log.events.slice(stored.length)) persist(event)
  const unsubscribe = log.subscribe(persist)
  try {
    const result = await runTurns(options, log, clock, seams)
    if (storeError !== null) throw storeError
    return result
  } finally {
    unsubscribe()
    await store.close()
  }
}

/** Wires runtime, adapter, engine and agent, then feeds the transcript's turns after the log's last one. */
async function runTurns(options: SubjectSessionOptions, log: EventLog, clock: Clock, seams: ExampleSeams): Promise<SubjectSessionResult> {
  const { scenario, transcript, hooks = {} } = options
  const route = { provider: scenario.provider.name, model: scenario.provider.model }
  const sessionId = `example-${options.seed.toString(16)}`
  let nextId = log.length
  const id = (prefix: string): string => `${prefix}-${options.seed.toString(16)}-${++nextId}`
  const warnings: string[] = []
  const warn = (message: string): void => { warnings.push(message) }
  const { runtime, captured } = recordingRuntime(log, clock.peek)
  if (scenario.provider.wire === 'anthropic') throw new Error('this example speaks the OpenAI-compatible wires only')
  const adapter = new OpenAiCompatibleAdapter({
    wire: scenario.provider.wire,
    baseURL: options.baseUrl,
    apiKey: 'sk-example',
    ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
    ...(hooks.adapterTimeout === undefined ? {} : { timeout: hooks.adapterTimeout }),
  })
  runtime.registerAdapter(route.provider, seams.adapter?.(adapter) ?? adapter)
  for (const middleware of hooks.middleware ?? []) runtime.use(middleware)
  const reject = hooks.rejectAppend
  const engine = new CompactionEngine({
    log, runtime, policy: scenario.policy, clock: clock.now, warn, agentRoute: route, sessionId,
    // The world's storage faults on bracket appends (FAULT-60…63): a refused draft is not written.
    ...(reject === undefined ? {} : { append: (draft: EventDraft) => {
      const refusal = reject(draft)
      if (refusal !== null) throw new Error(refusal)
      return log.append(draft)
    } }),
    ...(scenario.pruner === null ? {} : { pruner: scenario.pruner }),
    newCompactionId: () => id('cmp'),
    newMessageId: () => id('m-checkpoint'),
  })
  const port = seams.engine?.(engine, { log, warn, logPath: options.logPath }) ?? engine
  const agent = new Agent({
    log, runtime, engine: port, policy: scenario.policy, route, sessionId, clock: clock.now, sleep: clock.sleep, warn,
    systemPrompt: () => transcript.systemPrompt,
    tools: transcript.tools,
    executeTool: toolResults(options),
    newMessageId: (kind) => id(`m-${kind}`),
    newRetryId: () => id('r'),
  })
  const startedAfterTurn = log.state.lastTurn
  const outcomes: SubjectTurnOutcome[] = []
  for (let turn = startedAfterTurn + 1; turn <= transcript.turns.length; turn++) {
    const input = transcript.turns[turn - 1]
    if (input === undefined) break
    const signal = hooks.beginTurn?.(turn, { setModel: (model) => { agent.setRoute({ ...route, model }) } })
    const outcome = await agent.runTurn({ content: structuredClone(input.user) }, signal)
    outcomes.push({ turn: outcome.turn, reason: outcome.reason })
    for (const action of scenario.manual) {
      if (action.kind !== 'compactNow' || action.afterTurn !== turn) continue
      // The caller signal the world aborts for FAULT-22 on the summary call (§7.10); without it that call hangs.
      const manualSignal = hooks.beginManual?.({ kind: 'compactNow', afterTurn: turn })
      await agent.compactNow({
        ...(manualSignal === undefined ? {} : { signal: manualSignal }),
        ...(action.sourceCommandId === null ? {} : { sourceCommandId: action.sourceCommandId }),
      })
        .catch((err: unknown) => warn(`compactNow after turn ${turn} failed: ${String(err)}`))
    }
  }
  return { outcomes, warnings, requests: captured, explicitRegionStarts: [], events: log.length, startedAfterTurn }
}

/** An LLM runtime that records the §1.1 request capture: every provider call (conversation and compaction) and its outcome. */
function recordingRuntime(log: EventLog, peek: () => number): { runtime: LlmRuntime; captured: CapturedRequest[] } {
  const captured: CapturedRequest[] = []
  const open = new Map<GenerateOptions, CapturedRequest>()
  const runtime = new LlmRuntime({
    onDispatch: (call) => {
      if (call.purpose === 'session-title') return
      const request: CapturedRequest = {
        index: captured.length, logRevisionAtDispatch: log.length, time: peek(),
        purpose: call.purpose === 'compaction' ? 'compaction' : 'conversation',
        provider: call.provider, model: call.model, messages: structuredClone(call.messages), outcome: 'stop',
      }
      if (call.reasoningEffort !== undefined) request.reasoningEffort = call.reasoningEffort
      if (call.temperature !== undefined) request.temperature = call.temperature
      if (call.maxTokens !== undefined) request.maxTokens = call.maxTokens
      if (call.stop !== undefined) request.stop = [...call.stop]
      if (call.tools !== undefined) request.tools = structuredClone(call.tools)
      captured.push(request)
      open.set(call, request)
    },
    onFinish: (call, reason) => {
      const request = open.get(call)
      if (request === undefined) return
      open.delete(call)
      request.outcome = reason.kind
      if (reason.kind === 'error' || reason.kind === 'aborted') request.failureCode = reason.failure.code
    },
  })
  return { runtime, captured }
}

/** Answers each tool call with the transcript's recorded result for its call id. */
function toolResults(options: SubjectSessionOptions): ToolExecutor {
  const steps = options.transcript.turns.flatMap((t) => t.steps)
  const results = new Map(steps.flatMap((s) => s.toolResults.map((r) => [r.callId, r] as const)))
  return async (call) => {
    const result = results.get(call.callId)
    if (result === undefined) throw new Error(`no recorded result for tool call ${call.callId}`)
    return result.isError === true ? { content: structuredClone(result.content), isError: true } : { content: structuredClone(result.content) }
  }
}
