/**
 * The released DSH engine (`@deepseek-ai/dsh-*` 0.1.0-rc.8) composed headless for one scenario session
 * (official-engine.md "Composition (full loop)"): LLM runtime, session store, system prompt, tool runtime, agent
 * registry, agent loop, token meter, optional tool-result pruner and `BasicCompactionEngine` with the scenario's
 * §3.1 policy. Its one adapter (`HttpBridgeAdapter`) forwards every call to the SAME mock provider over HTTP
 * through core's `OpenAiCompatibleAdapter` (so wire, fault schedule and rejection classification, §1.2.2, are
 * shared with the reference subject) and rethrows failures as the runtime's own `LlmError` with the canonical code.
 *
 * Load this module only after `Promise.withResolvers` and the seeded UUIDs are installed (`dsh-subject.ts` imports
 * it dynamically): the packages bind `node:crypto.randomUUID` when they load.
 */
import { Context } from '@deepseek-ai/cordis'
import AgentRegistry from '@deepseek-ai/dsh-agent'
import AgentLoop from '@deepseek-ai/dsh-agent-loop'
import BasicCompactionEngine from '@deepseek-ai/dsh-compaction-basic'
import type { BasicCompactionConfig as DshCompactionConfig } from '@deepseek-ai/dsh-compaction-basic'
import ToolResultPruner from '@deepseek-ai/dsh-compaction-tool-result-pruner'
import LlmRuntime, { LlmAdapter, LlmError as DshLlmError, createUserMessage } from '@deepseek-ai/dsh-llm'
import type { GenerateOptions as DshGenerateOptions, LlmResolvedModelInfo, StreamChunk as DshStreamChunk } from '@deepseek-ai/dsh-llm'
import SessionStore, { SessionId } from '@deepseek-ai/dsh-session'
import type { SessionEvent } from '@deepseek-ai/dsh-session'
import SystemPrompt from '@deepseek-ai/dsh-system-prompt'
import TokenMeter from '@deepseek-ai/dsh-token-meter'
import ToolRuntime from '@deepseek-ai/dsh-tools'
import type { ToolDefinition } from '@deepseek-ai/dsh-tools'
import {
  LlmError as CoreLlmError, OpenAiCompatibleAdapter,
  type CapturedRequest, type ContentBlock, type GenerateOptions, type LlmFailure, type Message, type MessageId, type StreamChunk,
} from '@compaction-sim/core'
import type { Transcript } from '@compaction-sim/fixtures'
import { VIRTUAL_EPOCH_MS } from '@compaction-sim/fixtures/record-dsh/determinism'
import { idleAfterRun } from '@compaction-sim/fixtures/record-dsh/idle'
import { scaledWatchdogMs, WatchdogError, type ResolvedScenario, type SubjectHooks } from '@compaction-sim/sim'

/** Virtual milliseconds the clock advances per streamed chunk (and once per dispatch). */
export const DSH_CHUNK_MS = 20
/** Virtual milliseconds between the previous idle and the next user follow-up. */
export const DSH_USER_THINK_MS = 1000
/**
 * Liveness watchdog on one turn, in real milliseconds before `SIM_WATCHDOG_SCALE` (the engine is in-process
 * and fast; this only stops a hung engine from hanging the run). When it fires the scenario is an `error`
 * (`WatchdogError`), never a FAIL.
 */
export const DSH_TURN_WATCHDOG_MS = 300_000

/** The API key the subject sends (redacted in captures). */
const SIM_API_KEY = 'sk-compaction-sim'

/** Thrown when the official engine hangs or misbehaves in a way the subject cannot report as a turn outcome. */
export class DshSessionError extends Error {
  override readonly name = 'DshSessionError'
}

/** Inputs of one engine session. */
export interface DshEngineInput {
  scenario: ResolvedScenario
  transcript: Transcript
  baseUrl: string
  fetch?: typeof fetch
  hooks: SubjectHooks
  sessionId: string
  /** Advances the virtual clock (`Date.now`) by `ms`. */
  advance(ms: number): void
  /** The virtual time now. */
  now(): number
}

/** What one engine session produced. */
export interface DshEngineOutput {
  /** The `session/event` stream, exactly as emitted. */
  events: SessionEvent[]
  /** Runtime-side requests (before the bridge adds the wire's system message), in dispatch order. */
  requests: CapturedRequest[]
  /** The official `tokenMeter.measure(session)` totals at the end. */
  official: { totalTokens: number; surfaceTokens: number; baseline: string }
}

/** The official runtime's error for a core failure: same message, canonical code and provider facts. */
export function toDshError(failure: LlmFailure, cause?: unknown): DshLlmError {
  const options: ConstructorParameters<typeof DshLlmError>[2] = {}
  if (failure.status !== undefined) options.status = failure.status
  if (failure.providerRetryAfterMs !== undefined && failure.providerRetryAfterMs > 0) options.providerRetryAfterMs = failure.providerRetryAfterMs
  if (cause !== undefined) options.cause = cause
  return new DshLlmError(failure.message === '' ? failure.code : failure.message, failure.code, options)
}

/**
 * The official `LlmAdapter` over core's HTTP adapter: `system` becomes a leading system message on the wire (the
 * mock sees the same request shape as from the reference subject), chunks pass through unchanged, and an error or
 * aborted finish — or a thrown core `LlmError` — is rethrown as the official `LlmError` (official-engine.md: a
 * plain error is normalised to `UNKNOWN` and nothing recovers).
 */
export class HttpBridgeAdapter extends LlmAdapter {
  /** Runtime-side requests in dispatch order (the §1.1 capture in the rc.8 dialect: `system` is not a message). */
  readonly captured: CapturedRequest[] = []

  constructor(
    private readonly inner: OpenAiCompatibleAdapter,
    private readonly clock: { advance(ms: number): void; now(): number; logRevision(): number },
  ) {
    super()
  }

  /** Route metadata from the mock (`GET /models/:id`); provider and id echo the inputs. */
  override async resolveModel(provider: string, model: string, signal?: AbortSignal): Promise<LlmResolvedModelInfo> {
    try {
      const info = await this.inner.resolveModel(provider, model, signal)
      return { provider, id: model, name: info.name, ...(info.context === undefined ? {} : { context: { ...info.context } }) }
    } catch (err) {
      if (err instanceof CoreLlmError) throw toDshError(err.failure, err)
      throw err
    }
  }

  /** Forwards one call to the mock (class doc). */
  override async *stream(options: DshGenerateOptions): AsyncGenerator<DshStreamChunk> {
    const captured = this.capture(options)
    this.clock.advance(DSH_CHUNK_MS)
    const system: Message[] = options.system === undefined || options.system === ''
      ? []
      : [{ id: 'dsh-system' as MessageId, role: 'system', content: [{ type: 'text', text: options.system }], source: { kind: 'user' } }]
    const request: GenerateOptions = {
      provider: options.provider,
      model: options.model,
      messages: [...system, ...(options.messages as unknown as Message[])],
    }
    if (options.tools !== undefined) request.tools = structuredClone(options.tools) as NonNullable<GenerateOptions['tools']>
    if (options.purpose !== undefined) request.purpose = options.purpose
    if (options.signal !== undefined) request.signal = options.signal
    if (options.maxTokens !== undefined) request.maxTokens = options.maxTokens
    if (options.temperature !== undefined) request.temperature = options.temperature
    if (options.stop !== undefined) request.stop = [...options.stop]
    if (options.sessionId !== undefined) request.sessionId = options.sessionId
    try {
      for await (const chunk of this.inner.stream(request) as AsyncIterable<StreamChunk>) {
        if (chunk.type === 'finish') {
          const reason = chunk.reason
          if (reason.kind === 'error' || reason.kind === 'aborted') throw new CoreLlmError(reason.failure)
          captured.outcome = reason.kind
        }
        this.clock.advance(DSH_CHUNK_MS)
        yield chunk as unknown as DshStreamChunk
      }
    } catch (err) {
      const failure = err instanceof CoreLlmError ? err.failure : null
      captured.outcome = failure?.code === 'ABORTED' ? 'aborted' : 'error'
      if (failure !== null) {
        captured.failureCode = failure.code
        throw toDshError(failure, err)
      }
      captured.failureCode = 'UNKNOWN'
      throw err
    }
  }

  private capture(options: DshGenerateOptions): CapturedRequest {
    const captured: CapturedRequest = {
      index: this.captured.length,
      logRevisionAtDispatch: this.clock.logRevision(),
      time: this.clock.now(),
      purpose: options.purpose === 'compaction' ? 'compaction' : 'conversation',
      provider: options.provider,
      model: options.model,
      messages: structuredClone(options.messages) as unknown as Message[],
      outcome: 'stop',
    }
    if (options.maxTokens !== undefined) captured.maxTokens = options.maxTokens
    if (options.temperature !== undefined) captured.temperature = options.temperature
    if (options.stop !== undefined) captured.stop = [...options.stop]
    if (options.tools !== undefined) captured.tools = structuredClone(options.tools) as NonNullable<CapturedRequest['tools']>
    if (options.purpose !== 'session-title') this.captured.push(captured)
    return captured
  }
}

/**
 * A transcript tool as an official `ToolDefinition`: the schema as written, and a body that answers each call with
 * the transcript's result for its call id (an `isError` result throws; `finalizeContent` restores its content).
 */
function transcriptTool(schema: Transcript['tools'][number], results: ReadonlyMap<string, { content: ContentBlock[]; isError?: boolean }>): ToolDefinition {
  return {
    name: schema.name,
    description: schema.description,
    parameters: structuredClone(schema.parameters) as Record<string, unknown>,
    output: {
      schema: { type: 'array' },
      render: (_args, value) => structuredClone(value) as unknown as ReturnType<ToolDefinition['output']['render']>,
    },
    async execute(_args, exec) {
      const result = results.get(exec.callId)
      if (result === undefined) throw new Error(`the transcript has no result for tool call ${exec.callId}`)
      if (result.isError === true) throw new Error(`tool ${schema.name} failed (transcript error result)`)
      return structuredClone(result.content)
    },
    finalizeContent(exec, outcome) {
      const result = results.get(exec.callId)
      if (result === undefined || outcome.isError !== true || result.isError !== true) return undefined
      return structuredClone(result.content) as unknown as ReturnType<NonNullable<ToolDefinition['finalizeContent']>>
    },
  }
}

/**
 * Runs the scenario's transcript through the official engine (module doc) and returns its live log.
 * @throws DshSessionError when a turn hangs; the engine's own errors otherwise propagate.
 */
export async function runDshEngine(input: DshEngineInput): Promise<DshEngineOutput> {
  const { scenario, transcript, hooks } = input
  const ctx = new Context()
  try {
    await ctx.plugin(LlmRuntime)
    await ctx.plugin(SessionStore)
    await ctx.plugin(SystemPrompt, { persona: transcript.systemPrompt })
    await ctx.plugin(ToolRuntime)
    await ctx.plugin(AgentRegistry)
    await ctx.plugin(AgentLoop, { agents: [] })
    await ctx.plugin(TokenMeter)
    if (scenario.prunerConfig !== null) await ctx.plugin(ToolResultPruner, structuredClone(scenario.prunerConfig))
    await ctx.plugin(BasicCompactionEngine, structuredClone(scenario.policyConfig) as DshCompactionConfig)
    // The transcript's prompt is the whole system prompt (no harness identity section), as the reference sends it.
    ctx.systemPrompt.section({ name: 'compaction-sim-transcript', order: 0, text: transcript.systemPrompt, complete: true })

    const events: SessionEvent[] = []
    const sessionId = SessionId(input.sessionId)
    const wire = scenario.provider.wire
    if (wire === 'anthropic') throw new DshSessionError('the dsh subject speaks the openai and deepseek wires only, not anthropic')
    const inner = new OpenAiCompatibleAdapter({
      wire,
      baseURL: input.baseUrl,
      apiKey: SIM_API_KEY,
      ...(input.fetch === undefined ? {} : { fetch: input.fetch }),
      ...(hooks.adapterTimeout === undefined ? {} : { timeout: hooks.adapterTimeout }),
    })
    const adapter = new HttpBridgeAdapter(inner, { advance: input.advance, now: input.now, logRevision: () => events.length })
    ctx.llm.registerAdapter([scenario.provider.name], adapter)
    const results = new Map(transcript.turns.flatMap((t) => t.steps.flatMap((s) => s.toolResults.map((r) => [r.callId as string, r] as const))))
    for (const tool of transcript.tools) ctx.tools.register(transcriptTool(tool, results))

    ctx.on('session/event', (subject, event) => {
      if (subject.id === sessionId) events.push(event)
    })
    const agent = ctx.agentLoop.create(sessionId, { provider: scenario.provider.name, model: scenario.provider.model })
    const turnWatchdogMs = scaledWatchdogMs(DSH_TURN_WATCHDOG_MS)
    // Fault targeting times `atVirtualMs` by the engine's virtual clock (`Date.now` under the bridge).
    hooks.observeSession?.({ now: () => input.now(), originMs: VIRTUAL_EPOCH_MS, logLength: () => events.length })
    for (const [index, turn] of transcript.turns.entries()) {
      hooks.beginTurn?.(index + 1, { setModel: () => { throw new DshSessionError('route switches are not wired for the dsh subject') } })
      input.advance(DSH_USER_THINK_MS)
      const idle = idleAfterRun(ctx, agent, {
        timeoutMs: turnWatchdogMs,
        onTimeout: () => new WatchdogError(`turn ${index + 1} of the official engine to become idle`, turnWatchdogMs),
      })
      agent.followup(createUserMessage({ content: structuredClone(turn.user) as never, source: { kind: 'user' } }))
      await idle
      await agent.whenIdle()
    }
    const measured = ctx.tokenMeter.measure(agent.session)
    return {
      events: [...events],
      requests: adapter.captured,
      official: { totalTokens: measured.totalTokens, surfaceTokens: measured.surfaceTokens, baseline: measured.baseline.kind },
    }
  } finally {
    await ctx.fiber.dispose()
  }
}
