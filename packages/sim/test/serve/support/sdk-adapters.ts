/**
 * Core `LlmAdapter`s built on the official SDKs (`openai` 6.x, `@anthropic-ai/sdk` 1.x), so the official
 * clients do the wire work in the judges: they send the requests, parse the SSE streams and raise their
 * own typed errors, which these adapters map to canonical failures with core's `classifyWireRejection`
 * (§1.2.2). Transport failures (`APIConnectionError`) are `TRANSPORT`, aborts `ABORTED`. Blocks: text,
 * reasoning and tool calls both ways; tool results go back as the wire's tool messages.
 */
import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import {
  CallId, classifyWireRejection, LlmError, type ContentBlock, type GenerateOptions, type LlmAdapter, type LlmFailure, type LlmModelInfo,
  type Message, type StreamChunk, type TokenUsage,
} from '@compaction-sim/core'

/** The header the core adapter uses for the call purpose (model-invisible, §8.2). */
const PURPOSE_HEADER = 'x-compaction-purpose'

/** A route the adapter reports. */
export interface SdkRoute {
  provider: string
  model: string
  contextWindow?: number
}

function modelInfo(routes: readonly SdkRoute[], provider: string, model: string): LlmModelInfo {
  const r = routes.find((x) => x.provider === provider && x.model === model)
  return { provider, id: model, name: model, ...(r?.contextWindow === undefined ? {} : { context: { contextWindow: r.contextWindow } }) }
}

function failureOf(err: unknown, signal: AbortSignal | undefined): LlmFailure {
  if (signal?.aborted === true) return { code: 'ABORTED', message: 'aborted' }
  const apiError = err instanceof OpenAI.APIError || err instanceof Anthropic.APIError ? err : undefined
  if (apiError instanceof OpenAI.APIConnectionError || apiError instanceof Anthropic.APIConnectionError) {
    return { code: 'TRANSPORT', message: apiError.message }
  }
  if (apiError !== undefined) {
    return classifyWireRejection({
      ...(apiError.status === undefined ? {} : { status: apiError.status }),
      body: apiError.error, text: apiError.message, requestHasImages: false,
    })
  }
  return { code: 'TRANSPORT', message: err instanceof Error ? err.message : String(err) }
}

/** Per-request options of both SDKs: the abort signal and the model-invisible purpose header. */
function requestOptions(options: GenerateOptions): { signal?: AbortSignal; headers: Record<string, string> } {
  return {
    ...(options.signal === undefined ? {} : { signal: options.signal }),
    headers: options.purpose === undefined ? {} : { [PURPOSE_HEADER]: options.purpose },
  }
}

/** Accumulates deltas into blocks, emitting protocol chunks (one block open at a time, in order). */
class BlockBuilder {
  readonly chunks: StreamChunk[] = []
  private readonly blocks: ContentBlock[] = []
  private open = -1

  delta(kind: 'text' | 'reasoning', text: string | null | undefined): void {
    if (text === undefined || text === null || text === '') return
    const current = this.blocks[this.open]
    if (current === undefined || current.type !== kind) this.start({ type: kind, text: '' })
    const block = this.blocks[this.open] as ContentBlock & { text: string }
    block.text += text
    this.chunks.push({ type: kind === 'text' ? 'text-delta' : 'reasoning-delta', index: this.open, text })
  }

  toolCall(id: string, name: string): void {
    this.start({ type: 'tool-call', id: CallId(id), name, arguments: '' })
    this.chunks.push({ type: 'tool-call-delta', index: this.open, id: CallId(id), name, argumentsDelta: '' })
  }

  toolArguments(piece: string): void {
    const block = this.blocks[this.open] as ContentBlock & { id: CallId; arguments: string }
    block.arguments += piece
    this.chunks.push({ type: 'tool-call-delta', index: this.open, id: block.id, argumentsDelta: piece })
  }

  end(): void {
    const block = this.blocks[this.open]
    if (block !== undefined) this.chunks.push({ type: 'block-end', index: this.open, block: structuredClone(block) })
    this.open = -1
  }

  private start(block: ContentBlock): void {
    this.end()
    this.blocks.push(block)
    this.open = this.blocks.length - 1
    this.chunks.push({ type: 'block-start', index: this.open, blockType: block.type })
  }

  take(): StreamChunk[] {
    return this.chunks.splice(0)
  }
}

/** A block's field by name (blocks are a union; unknown blocks carry any field). */
function field(block: ContentBlock, key: string): unknown {
  return (block as unknown as Record<string, unknown>)[key]
}

function text(blocks: readonly ContentBlock[], type: 'text' | 'reasoning'): string {
  return blocks.filter((b) => b.type === type).map((b) => String(field(b, 'text'))).join('')
}

function openAiMessages(messages: readonly Message[]): OpenAI.ChatCompletionMessageParam[] {
  return messages.map((m): OpenAI.ChatCompletionMessageParam => {
    const result = m.content.find((b) => b.type === 'tool-result')
    if (result !== undefined) {
      const content = text(field(result, 'content') as ContentBlock[], 'text')
      return { role: 'tool', tool_call_id: String(field(result, 'toolCallId')), content }
    }
    if (m.role === 'system') return { role: 'system', content: text(m.content, 'text') }
    if (m.role === 'user') return { role: 'user', content: text(m.content, 'text') }
    const calls = m.content.filter((b) => b.type === 'tool-call').map((b) => ({
      id: String(field(b, 'id')),
      type: 'function' as const,
      function: { name: String(field(b, 'name')), arguments: String(field(b, 'arguments')) },
    }))
    const reasoning = text(m.content, 'reasoning')
    return {
      role: 'assistant', content: text(m.content, 'text'), ...(calls.length === 0 ? {} : { tool_calls: calls }),
      ...(reasoning === '' ? {} : { reasoning_content: reasoning }),
    } as OpenAI.ChatCompletionAssistantMessageParam
  })
}

/** The official `openai` client as a core adapter (chat completions, streaming with usage). */
export class OpenAiSdkAdapter implements LlmAdapter {
  constructor(private readonly client: OpenAI, private readonly routes: readonly SdkRoute[]) {}

  async resolveModel(provider: string, model: string): Promise<LlmModelInfo> {
    return modelInfo(this.routes, provider, model)
  }

  async *stream(options: GenerateOptions): AsyncIterable<StreamChunk> {
    const b = new BlockBuilder()
    let finish: StreamChunk | undefined
    try {
      const stream = await this.client.chat.completions.create(
        {
          model: options.model, messages: openAiMessages(options.messages), stream: true, stream_options: { include_usage: true },
          ...(options.maxTokens === undefined ? {} : { max_completion_tokens: options.maxTokens }),
          ...(options.temperature === undefined ? {} : { temperature: options.temperature }),
          ...(options.stop === undefined ? {} : { stop: [...options.stop] }),
          ...(options.tools === undefined ? {} : {
            tools: options.tools.map((t) => ({
              type: 'function' as const, function: { name: t.name, description: t.description, parameters: t.parameters },
            })),
          }),
        },
        requestOptions(options),
      )
      for await (const chunk of stream) {
        for (const choice of chunk.choices) {
          const d = choice.delta as OpenAI.ChatCompletionChunk.Choice.Delta & { reasoning_content?: string }
          b.delta('reasoning', d.reasoning_content)
          b.delta('text', d.content)
          for (const call of d.tool_calls ?? []) {
            if (call.id !== undefined) b.toolCall(call.id, call.function?.name ?? '')
            if (call.function?.arguments !== undefined && call.function.arguments !== '') b.toolArguments(call.function.arguments)
          }
          if (choice.finish_reason !== null) {
            b.end()
            const kind = choice.finish_reason === 'tool_calls' ? 'tool-calls' : choice.finish_reason === 'length' ? 'max-tokens' : 'stop'
            finish = { type: 'finish', reason: { kind } }
          }
        }
        if (chunk.usage !== undefined && chunk.usage !== null) {
          // OpenAI reports cache hits in prompt_tokens_details.cached_tokens, DeepSeek in prompt_cache_hit_tokens.
          const u = chunk.usage as OpenAI.CompletionUsage & { prompt_cache_hit_tokens?: number }
          const cached = u.prompt_tokens_details?.cached_tokens ?? u.prompt_cache_hit_tokens ?? 0
          const usage: TokenUsage = { inputTokens: u.prompt_tokens - cached, outputTokens: u.completion_tokens, cacheReadTokens: cached }
          b.chunks.push({ type: 'usage', usage })
        }
        yield* b.take()
      }
    } catch (err) {
      throw new LlmError(failureOf(err, options.signal), { cause: err })
    }
    if (finish === undefined) throw new LlmError({ code: 'EMPTY_RESPONSE', message: 'the stream ended without a finish reason' })
    yield finish
  }
}

function anthropicContent(blocks: readonly ContentBlock[]): Anthropic.ContentBlockParam[] {
  const out: Anthropic.ContentBlockParam[] = []
  for (const b of blocks) {
    if (b.type === 'text') out.push({ type: 'text', text: String(field(b, 'text')) })
    else if (b.type === 'reasoning') out.push({ type: 'thinking', thinking: String(field(b, 'text')), signature: '' })
    else if (b.type === 'tool-call') {
      const input = JSON.parse(String(field(b, 'arguments'))) as object
      out.push({ type: 'tool_use', id: String(field(b, 'id')), name: String(field(b, 'name')), input })
    }
    else if (b.type === 'tool-result') {
      const content = [{ type: 'text' as const, text: text(field(b, 'content') as ContentBlock[], 'text') }]
      out.push({ type: 'tool_result', tool_use_id: String(field(b, 'toolCallId')), content })
    }
  }
  return out
}

/** The official `@anthropic-ai/sdk` client as a core adapter (messages API, streaming events). */
export class AnthropicSdkAdapter implements LlmAdapter {
  constructor(private readonly client: Anthropic, private readonly routes: readonly SdkRoute[], private readonly maxTokens = 4096) {}

  async resolveModel(provider: string, model: string): Promise<LlmModelInfo> {
    return modelInfo(this.routes, provider, model)
  }

  async *stream(options: GenerateOptions): AsyncIterable<StreamChunk> {
    const system = options.messages.filter((m) => m.role === 'system').map((m) => text(m.content, 'text')).join('\n')
    // Consecutive messages of one role (parallel tool results, the compaction instruction) share one turn:
    // the mock enforces Anthropic's strict role alternation (issue #15), as gateways in front of it do.
    const messages: Anthropic.MessageParam[] = []
    for (const m of options.messages) {
      if (m.role === 'system') continue
      const role = m.role === 'assistant' ? 'assistant' : 'user'
      const content = anthropicContent(m.content)
      const last = messages.at(-1)
      if (last !== undefined && last.role === role && Array.isArray(last.content) && Array.isArray(content)) last.content.push(...content)
      else messages.push({ role, content })
    }
    const b = new BlockBuilder()
    let finish: StreamChunk | undefined
    let usage: TokenUsage | undefined
    try {
      const stream = await this.client.messages.create(
        {
          model: options.model, max_tokens: options.maxTokens ?? this.maxTokens, messages, stream: true,
          ...(system === '' ? {} : { system }),
          ...(options.temperature === undefined ? {} : { temperature: options.temperature }),
          ...(options.stop === undefined ? {} : { stop_sequences: [...options.stop] }),
          ...(options.tools === undefined ? {} : {
            tools: options.tools.map((t) => ({
              name: t.name, description: t.description, input_schema: t.parameters as Anthropic.Tool.InputSchema,
            })),
          }),
        },
        requestOptions(options),
      )
      for await (const event of stream) {
        switch (event.type) {
          case 'message_start': {
            const u = event.message.usage
            usage = { inputTokens: u.input_tokens, outputTokens: u.output_tokens, cacheReadTokens: u.cache_read_input_tokens ?? 0 }
            break
          }
          case 'content_block_start':
            if (event.content_block.type === 'tool_use') b.toolCall(event.content_block.id, event.content_block.name)
            break
          case 'content_block_delta':
            if (event.delta.type === 'text_delta') b.delta('text', event.delta.text)
            else if (event.delta.type === 'thinking_delta') b.delta('reasoning', event.delta.thinking)
            else if (event.delta.type === 'input_json_delta') b.toolArguments(event.delta.partial_json)
            break
          case 'content_block_stop':
            b.end()
            break
          case 'message_delta': {
            const u = event.usage
            usage = {
              inputTokens: u.input_tokens ?? usage?.inputTokens ?? 0, outputTokens: u.output_tokens,
              cacheReadTokens: u.cache_read_input_tokens ?? usage?.cacheReadTokens ?? 0,
              ...((u.cache_creation_input_tokens ?? 0) > 0 ? { cacheWriteTokens: u.cache_creation_input_tokens ?? 0 } : {}),
            }
            const r = event.delta.stop_reason
            finish = { type: 'finish', reason: { kind: r === 'tool_use' ? 'tool-calls' : r === 'max_tokens' ? 'max-tokens' : 'stop' } }
            break
          }
          default:
            break
        }
        yield* b.take()
      }
    } catch (err) {
      throw new LlmError(failureOf(err, options.signal), { cause: err })
    }
    if (finish === undefined) throw new LlmError({ code: 'EMPTY_RESPONSE', message: 'the stream ended without a stop reason' })
    if (usage !== undefined) yield { type: 'usage', usage }
    yield finish
  }
}
