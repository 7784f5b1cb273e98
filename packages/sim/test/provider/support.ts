/**
 * Shared fixtures of the provider tests: protocol messages, a fixed clock, a provider factory and a
 * runtime-normalised call helper. The HTTP adapter is imported from core's source by path until
 * `@compaction-sim/core`'s index re-exports it (index files are owned by the integrator).
 */
import {
  CallId,
  LlmRuntime,
  MessageId,
  type ContentBlock,
  type FinishReason,
  type GenerateOptions,
  type LlmAdapter,
  type Message,
  type StreamChunk,
} from '@compaction-sim/core'
import { OpenAiCompatibleAdapter, type OpenAiAdapterOptions } from '@compaction-sim/core'
import { MockProvider, type MockProviderOptions } from '../../src/provider/mock-provider.ts'
import type { MockModel, MockWire, PlannedOutcome, ReplyPlan } from '../../src/provider/types.ts'

export { OpenAiCompatibleAdapter }

/** A clock frozen at a fixed virtual instant. */
export const CLOCK = { now: (): number => 1_700_000_000_000 }

/** The models every test provider reports. */
export const MODELS: MockModel[] = [
  { id: 'mock-8k', contextWindow: 8000, imageTokens: 85 },
  { id: 'mock-4k', contextWindow: 4000 },
]

let ids = 0

/** A protocol message with a fresh id and a matching source. */
export function msg(role: Message['role'], content: ContentBlock[]): Message {
  const source: Message['source'] = role === 'assistant' ? { kind: 'model', provider: 'mock', model: 'mock-8k' } : { kind: 'user' }
  return { id: MessageId(`m-${++ids}`), role, content, source }
}

/** A tool-result message for `callId`. */
export function toolResult(callId: string, content: ContentBlock[]): Message {
  return {
    id: MessageId(`m-${++ids}`),
    role: 'user',
    content: [{ type: 'tool-result', toolCallId: CallId(callId), content }],
    source: { kind: 'tool', callId: CallId(callId) },
  }
}

/** A reply plan answering from a list of outcomes (or one function), in order. */
export class ListPlan implements ReplyPlan {
  private readonly outcomes: PlannedOutcome[]
  constructor(outcomes: PlannedOutcome[]) {
    this.outcomes = outcomes
  }

  next(): PlannedOutcome {
    const next = this.outcomes.shift()
    if (next === undefined) throw new Error('ListPlan exhausted')
    return next
  }
}

/** A provider for `wire` with the test models, serving `outcomes` in order. */
export function provider(wire: MockWire, outcomes: PlannedOutcome[], extra: Partial<MockProviderOptions> = {}): MockProvider {
  return new MockProvider({ wire, plan: new ListPlan(outcomes), clock: CLOCK, models: MODELS, deltaChars: 8, ...extra })
}

/** An adapter for `wire` under `baseURL`. */
export function adapter(wire: Exclude<MockWire, 'anthropic'>, baseURL: string, extra: Partial<OpenAiAdapterOptions> = {}): OpenAiCompatibleAdapter {
  return new OpenAiCompatibleAdapter({ wire, baseURL, apiKey: 'sk-test-secret', ...extra })
}

/** Options of a conversation call on `mock-8k`. */
export function call(messages: Message[], extra: Partial<GenerateOptions> = {}): GenerateOptions {
  return { provider: 'mock', model: 'mock-8k', messages, ...extra }
}

/** Streams one call through the runtime (failures become a terminal finish) and collects the chunks. */
export async function run(llm: LlmAdapter, options: GenerateOptions): Promise<StreamChunk[]> {
  const runtime = new LlmRuntime()
  runtime.registerAdapter(options.provider, llm)
  const out: StreamChunk[] = []
  for await (const c of runtime.stream(options).chunks) out.push(c)
  return out
}

/** The terminal finish reason of a chunk list. */
export function finishOf(chunks: readonly StreamChunk[]): FinishReason {
  const last = chunks.at(-1)
  if (last?.type !== 'finish') throw new Error(`no terminal finish in ${JSON.stringify(chunks)}`)
  return last.reason
}

/** The failure of a terminal error/aborted finish (throws otherwise). */
export function failureOf(chunks: readonly StreamChunk[]): {
  code: string
  status?: number
  offloadImages?: number
  message: string
  providerRetryAfterMs?: number
  requestId?: string
} {
  const reason = finishOf(chunks)
  if (reason.kind !== 'error' && reason.kind !== 'aborted') throw new Error(`expected a failure, got ${JSON.stringify(reason)}`)
  return reason.failure
}

/** One user prompt. */
export function prompt(text: string): Message[] {
  return [msg('system', [{ type: 'text', text: 'You are a coding assistant.' }]), msg('user', [{ type: 'text', text }])]
}
