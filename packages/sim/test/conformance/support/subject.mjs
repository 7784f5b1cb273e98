/**
 * The example subject of `examples/subject-core-adapter/subject.ts`, ported to plain JavaScript (types
 * stripped, code unchanged) for the pack-install test: a consumer project with no TypeScript and no tsx
 * runs it with `npx sim conform --subject module:./subject.mjs` and in vitest, crash children included.
 * Keep it in step with the TypeScript original (see that file for the subject contract, points 1–6).
 */
import { rm } from 'node:fs/promises'
import { Agent, CompactionEngine, EventLog, JsonlLogStore, LlmRuntime, OpenAiCompatibleAdapter, restoreSession } from '@compaction-sim/core'
/** Virtual epoch of this subject's clock and the virtual milliseconds between two readings. */
const ORIGIN_MS = 1_700_000_000_000
const STEP_MS = 5
/** The subject. `explicitRegion` and `unroutableSummarizer` are left out: those scenarios are skipped. */
const subject = {
  name: 'core-adapter-example',
  features: [
    'manualCompaction', 'imageOffload', 'summaryError', 'seriesHeaders', 'abort', 'timeouts', 'routeSwitch', 'middleware', 'crash',
  ],
  runSession,
}
export default subject
/** Opens (or restores) the durable log, runs the remaining turns, and closes the store. */
async function runSession(options) {
  const resume = options.resume === true
  if (!resume)
    await rm(options.logPath, { force: true })
  const { store, events: stored } = await JsonlLogStore.open(options.logPath, {
    dialect: 'seed', create: !resume, ...(options.onDurable === undefined ? {} : { onDurable: options.onDurable }),
  })
  let time = stored.at(-1)?.time ?? ORIGIN_MS
  const clock = {
    now: () => (time += STEP_MS),
    peek: () => time + STEP_MS,
    sleep: async (ms, signal) => {
      time += Math.ceil(ms)
      await new Promise((resolve) => setImmediate(resolve))
      signal?.throwIfAborted()
    },
  }
  let storeError = null
  const persist = (event) => {
    store.append([event]).catch((err) => { storeError ??= err })
  }
  // A restored session appends restore's closers and `session/end-seed` (§11.4) before anything else.
  const log = resume ? restoreSession(stored, { dialect: 'seed', clock: clock.now }).log : new EventLog({ dialect: 'seed' })
  for (const event of log.events.slice(stored.length))
    persist(event)
  const unsubscribe = log.subscribe(persist)
  try {
    const result = await runTurns(options, log, clock)
    if (storeError !== null)
      throw storeError
    return result
  }
  finally {
    unsubscribe()
    await store.close()
  }
}
/** Wires runtime, adapter, engine and agent, then feeds the transcript's turns after the log's last one. */
async function runTurns(options, log, clock) {
  const { scenario, transcript, hooks = {} } = options
  const route = { provider: scenario.provider.name, model: scenario.provider.model }
  const sessionId = `example-${options.seed.toString(16)}`
  let nextId = log.length
  const id = (prefix) => `${prefix}-${options.seed.toString(16)}-${++nextId}`
  const warnings = []
  const warn = (message) => { warnings.push(message) }
  const { runtime, captured } = recordingRuntime(log, clock.peek)
  if (scenario.provider.wire === 'anthropic')
    throw new Error('this example speaks the OpenAI-compatible wires only')
  runtime.registerAdapter(route.provider, new OpenAiCompatibleAdapter({
    wire: scenario.provider.wire,
    baseURL: options.baseUrl,
    apiKey: 'sk-example',
    ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
    ...(hooks.adapterTimeout === undefined ? {} : { timeout: hooks.adapterTimeout }),
  }))
  for (const middleware of hooks.middleware ?? [])
    runtime.use(middleware)
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
  const outcomes = []
  for (let turn = startedAfterTurn + 1; turn <= transcript.turns.length; turn++) {
    const input = transcript.turns[turn - 1]
    if (input === undefined)
      break
    const signal = hooks.beginTurn?.(turn, { setModel: (model) => { agent.setRoute({ ...route, model }) } })
    const outcome = await agent.runTurn({ content: structuredClone(input.user) }, signal)
    outcomes.push({ turn: outcome.turn, reason: outcome.reason })
    for (const action of scenario.manual) {
      if (action.kind !== 'compactNow' || action.afterTurn !== turn)
        continue
      await agent.compactNow(action.sourceCommandId === null ? {} : { sourceCommandId: action.sourceCommandId })
        .catch((err) => warn(`compactNow after turn ${turn} failed: ${String(err)}`))
    }
  }
  return { outcomes, warnings, requests: captured, explicitRegionStarts: [], events: log.length, startedAfterTurn }
}
/** An LLM runtime that records the §1.1 request capture: every provider call (conversation and compaction) and its outcome. */
function recordingRuntime(log, peek) {
  const captured = []
  const open = new Map()
  const runtime = new LlmRuntime({
    onDispatch: (call) => {
      if (call.purpose === 'session-title')
        return
      const request = {
        index: captured.length, logRevisionAtDispatch: log.length, time: peek(),
        purpose: call.purpose === 'compaction' ? 'compaction' : 'conversation',
        provider: call.provider, model: call.model, messages: structuredClone(call.messages), outcome: 'stop',
      }
      if (call.reasoningEffort !== undefined)
        request.reasoningEffort = call.reasoningEffort
      if (call.temperature !== undefined)
        request.temperature = call.temperature
      if (call.maxTokens !== undefined)
        request.maxTokens = call.maxTokens
      if (call.stop !== undefined)
        request.stop = [...call.stop]
      if (call.tools !== undefined)
        request.tools = structuredClone(call.tools)
      captured.push(request)
      open.set(call, request)
    },
    onFinish: (call, reason) => {
      const request = open.get(call)
      if (request === undefined)
        return
      open.delete(call)
      request.outcome = reason.kind
      if (reason.kind === 'error' || reason.kind === 'aborted')
        request.failureCode = reason.failure.code
    },
  })
  return { runtime, captured }
}
/** Answers each tool call with the transcript's recorded result for its call id. */
function toolResults(options) {
  const steps = options.transcript.turns.flatMap((t) => t.steps)
  const results = new Map(steps.flatMap((s) => s.toolResults.map((r) => [r.callId, r])))
  return async (call) => {
    const result = results.get(call.callId)
    if (result === undefined)
      throw new Error(`no recorded result for tool call ${call.callId}`)
    return result.isError === true ? { content: structuredClone(result.content), isError: true } : { content: structuredClone(result.content) }
  }
}
