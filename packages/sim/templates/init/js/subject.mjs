// @ts-check
/**
 * Your compaction-sim subject, written by `sim init`: the adapter between the conformance pack and YOUR code.
 * `npx sim conform --subject module:./subject.mjs` (or `npx vitest run`, see conformance.test.mjs) runs
 * every scenario of the pack through `runSession` below and checks the session log it leaves against the
 * protocol's invariants (INV-01…47) under injected faults.
 *
 * As written, "your backend" is assembled from `@compaction-sim/core` pieces — a durable JSONL log store,
 * the agent loop, the compaction engine and the OpenAI-compatible HTTP adapter — so this file conforms at
 * level `must` out of the box. Replace those pieces with your own, one at a time, and keep the contract:
 *
 * 1. Export a `Subject` (the default export, or a named export `subject`): a `name`, the `features` you
 *    support (scenarios that need others are skipped, with the reason) and `runSession(options)`.
 * 2. Talk to the mock provider at `options.baseUrl` with the scenario's route (`options.scenario.provider`).
 * 3. Before each turn call `hooks.beginTurn(turn, control)`: the provider then serves that turn's replies.
 * 4. Write every event durably to `options.logPath` (seed dialect) and call `options.onDurable` right after
 *    each fsync (crash scenarios kill the process there); with `options.resume`, restore the log (§11.4)
 *    and go on with the next turn.
 * 5. Be deterministic: ids from `options.seed`, time from a virtual clock — never `Date.now` or `Math.random`.
 * 6. Return the turn outcomes and the request capture (every provider call): the checker judges requests
 *    against the log.
 *
 * Every member of the contract is documented in `@compaction-sim/sim`'s `Subject` type (subjects/types.ts).
 */
import { rm } from 'node:fs/promises'
import { Agent, CompactionEngine, EventLog, JsonlLogStore, LlmRuntime, OpenAiCompatibleAdapter, restoreSession } from '@compaction-sim/core'

/**
 * @typedef {import('@compaction-sim/sim').Subject} Subject
 * @typedef {import('@compaction-sim/sim').SubjectSessionOptions} SubjectSessionOptions
 * @typedef {import('@compaction-sim/sim').SubjectSessionResult} SubjectSessionResult
 * @typedef {import('@compaction-sim/sim').SubjectTurnOutcome} SubjectTurnOutcome
 * @typedef {import('@compaction-sim/core').CapturedRequest} CapturedRequest
 * @typedef {import('@compaction-sim/core').GenerateOptions} GenerateOptions
 * @typedef {import('@compaction-sim/core').LogEvent} LogEvent
 * @typedef {import('@compaction-sim/core').ToolExecutor} ToolExecutor
 */

/**
 * A virtual clock: `now` advances by one step per reading, `sleep` by the requested time (never a real timer).
 * @typedef {{ now: () => number, peek: () => number, sleep: (ms: number, signal?: AbortSignal) => Promise<void> }} Clock
 */

/** Virtual epoch of the clock, and the virtual milliseconds between two readings. */
const ORIGIN_MS = 1_700_000_000_000
const STEP_MS = 5

/**
 * The subject. Declare only the features your backend really has: a scenario needing another one is
 * skipped (with the reason) instead of failing. The full list is `SUBJECT_FEATURES` of
 * `@compaction-sim/sim/conformance`; `explicitRegion` and `unroutableSummarizer` are left out here.
 * @type {Subject}
 */
const subject = {
  name: 'my-adapter', // shown in reports and replay lines: name your adapter
  features: [
    'manualCompaction', 'imageOffload', 'summaryError', 'seriesHeaders', 'abort', 'timeouts', 'routeSwitch', 'middleware', 'crash',
  ],
  runSession,
}
export default subject

/**
 * Opens (or, on `resume`, restores) the durable log, runs the remaining turns and closes the store.
 * @param {SubjectSessionOptions} options
 * @returns {Promise<SubjectSessionResult>}
 */
async function runSession(options) {
  const resume = options.resume === true
  if (!resume) await rm(options.logPath, { force: true })
  // Durability (§1.1): the store fsyncs every append and calls `onDurable` after each event is on disk.
  const { store, events: stored } = await JsonlLogStore.open(options.logPath, {
    dialect: 'seed', create: !resume, ...(options.onDurable === undefined ? {} : { onDurable: options.onDurable }),
  })
  let time = stored.at(-1)?.time ?? ORIGIN_MS
  /** @type {Clock} */
  const clock = {
    now: () => (time += STEP_MS),
    peek: () => time + STEP_MS,
    sleep: async (ms, signal) => {
      time += Math.ceil(ms)
      await new Promise((resolve) => setImmediate(resolve))
      signal?.throwIfAborted()
    },
  }
  /** @type {unknown} */
  let storeError = null
  /** @param {LogEvent} event */
  const persist = (event) => {
    store.append([event]).catch((/** @type {unknown} */ err) => { storeError ??= err })
  }
  // A restored session appends restore's closers and `session/end-seed` (§11.4) before anything else.
  const log = resume ? restoreSession(stored, { dialect: 'seed', clock: clock.now }).log : new EventLog({ dialect: 'seed' })
  for (const event of log.events.slice(stored.length)) persist(event)
  const unsubscribe = log.subscribe(persist)
  try {
    const result = await runTurns(options, log, clock)
    if (storeError !== null) throw storeError
    return result
  } finally {
    unsubscribe()
    await store.close()
  }
}

/**
 * Wires runtime, HTTP adapter, compaction engine and agent, then feeds the transcript's turns after the
 * log's last one. This is the part to replace with your own backend.
 * @param {SubjectSessionOptions} options
 * @param {EventLog} log
 * @param {Clock} clock
 * @returns {Promise<SubjectSessionResult>}
 */
async function runTurns(options, log, clock) {
  const { scenario, transcript, hooks = {} } = options
  const route = { provider: scenario.provider.name, model: scenario.provider.model }
  const sessionId = `my-adapter-${options.seed.toString(16)}`
  // Deterministic ids: derived from the seed and a counter, never random.
  let nextId = log.length
  /** @param {string} prefix */
  const id = (prefix) => `${prefix}-${options.seed.toString(16)}-${++nextId}`
  /** @type {string[]} */
  const warnings = []
  /** @param {string} message */
  const warn = (message) => { warnings.push(message) }
  const { runtime, captured } = recordingRuntime(log, clock.peek)
  if (scenario.provider.wire === 'anthropic') throw new Error('this subject speaks the OpenAI-compatible wires only')
  runtime.registerAdapter(route.provider, new OpenAiCompatibleAdapter({
    wire: scenario.provider.wire,
    baseURL: options.baseUrl,
    apiKey: 'sk-conformance',
    ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
    ...(hooks.adapterTimeout === undefined ? {} : { timeout: hooks.adapterTimeout }),
  }))
  for (const middleware of hooks.middleware ?? []) runtime.use(middleware)
  const engine = new CompactionEngine({
    log, runtime, policy: scenario.policy, clock: clock.now, warn, agentRoute: route, sessionId,
    ...(scenario.pruner === null ? {} : { pruner: scenario.pruner }),
    newCompactionId: () => id('cmp'),
    newMessageId: () => id('m-checkpoint'),
  })
  const agent = new Agent({
    log, runtime, engine, policy: scenario.policy, route, sessionId, clock: clock.now, sleep: clock.sleep, warn,
    systemPrompt: () => transcript.systemPrompt,
    tools: transcript.tools,
    executeTool: toolResults(options),
    newMessageId: (kind) => id(`m-${kind}`),
    newRetryId: () => id('r'),
  })
  const startedAfterTurn = log.state.lastTurn
  /** @type {SubjectTurnOutcome[]} */
  const outcomes = []
  for (let turn = startedAfterTurn + 1; turn <= transcript.turns.length; turn++) {
    const input = transcript.turns[turn - 1]
    if (input === undefined) break
    // The provider serves this turn's scripted replies (and faults) only after beginTurn.
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
        .catch((/** @type {unknown} */ err) => warn(`compactNow after turn ${turn} failed: ${String(err)}`))
    }
  }
  return { outcomes, warnings, requests: captured, explicitRegionStarts: [], events: log.length, startedAfterTurn }
}

/**
 * An LLM runtime that records the request capture (§1.1): every provider call — conversation and
 * compaction — with the log length at dispatch and its outcome.
 * @param {EventLog} log
 * @param {() => number} peek
 * @returns {{ runtime: LlmRuntime, captured: CapturedRequest[] }}
 */
function recordingRuntime(log, peek) {
  /** @type {CapturedRequest[]} */
  const captured = []
  /** @type {Map<GenerateOptions, CapturedRequest>} */
  const open = new Map()
  const runtime = new LlmRuntime({
    onDispatch: (call) => {
      if (call.purpose === 'session-title') return
      /** @type {CapturedRequest} */
      const request = {
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

/**
 * Answers each tool call with the transcript's recorded result for its call id (the scenarios script them).
 * @param {SubjectSessionOptions} options
 * @returns {ToolExecutor}
 */
function toolResults(options) {
  const steps = options.transcript.turns.flatMap((t) => t.steps)
  const results = new Map(steps.flatMap((s) => s.toolResults.map((r) => /** @type {const} */ ([r.callId, r]))))
  return async (call) => {
    const result = results.get(call.callId)
    if (result === undefined) throw new Error(`no recorded result for tool call ${call.callId}`)
    return result.isError === true ? { content: structuredClone(result.content), isError: true } : { content: structuredClone(result.content) }
  }
}
