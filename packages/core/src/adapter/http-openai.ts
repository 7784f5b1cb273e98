/**
 * An OpenAI-compatible HTTP adapter (chat completions over SSE) for the OpenAI and DeepSeek wires: the
 * reference subject talks to the mock provider through it, and it is the model for adapter authors. It uses
 * the global `fetch` (or an injected one) and the hand-written `SseParser`; it has no dependency beyond
 * Node built-ins (design §2). Request mapping: `openai-wire.ts`. Rejections: `wire-rejection.ts` (§1.2.2).
 *
 * Stream mapping (wire → `StreamChunk`), one choice (`index 0`):
 * - `delta.reasoning_content` → a `reasoning` block, `delta.content` → a `text` block: a block opens on the
 *   first non-empty delta of its kind and closes when the other kind (or a tool call) starts, so adjacent
 *   blocks of one kind arrive as one block, and empty text deltas open nothing;
 * - `delta.tool_calls[i]` → one `tool-call` block per wire index `i` (`tool-call-delta` per fragment,
 *   carrying the id of its first fragment, the name once);
 * - `delta.x_block` (project extension, used by the mock for image output, FAULT-25) → a complete block:
 *   `block-start` then `block-end`;
 * - `finish_reason` closes every open block (`block-end` in block order); `stop` → `stop`, `tool_calls`
 *   (or legacy `function_call`) → `tool-calls`, `length` → `max-tokens`; any other reason → `UNKNOWN`;
 * - `usage` (the trailing chunk of `stream_options.include_usage`) → one `usage` chunk emitted right before
 *   `finish`: `outputTokens = completion_tokens`, `reasoningTokens` = `completion_tokens_details.reasoning_tokens`
 *   when sent; openai: `cacheReadTokens = prompt_tokens_details.cached_tokens`, `inputTokens = prompt − cached`;
 *   deepseek: `cacheReadTokens = prompt_cache_hit_tokens`, `inputTokens = prompt_cache_miss_tokens`
 *   (or `prompt − hit`). `cacheReadTokens` is present exactly when the wire reports a cache figure.
 * - the stream ends at `data: [DONE]` or at the end of the body; a finish seen before that end is final.
 * Failures: HTTP status ≥ 400 → thrown `LlmError` classified by §1.2.2; an in-band `data: {"error":…}` →
 * a `finish {kind:'error'}` chunk with the same classification; a network error before headers, a body
 * error after them, a network-error `Response` (`Response.error()` from an injected fetch), or an end without a
 * finish → `TRANSPORT`; `[DONE]` without any choice ever → `EMPTY_RESPONSE`;
 * the caller's abort → `ABORTED`; the injected per-call timeout signal → `TIMEOUT`.
 * A non-streaming JSON `chat.completion` reply is accepted too and mapped to the same chunks.
 */
import type { CallId } from '../brand.ts'
import type { ContentBlock, FinishReason, LlmFailure, LlmModelInfo, StreamChunk, TokenUsage } from '../log/llm.ts'
import { FailureCode, LlmError, type GenerateOptions, type LlmAdapter } from './contract.ts'
import {
  attachmentUrl,
  hasImages,
  PURPOSE_HEADER,
  SESSION_HEADER,
  toWireRequest,
  type ImageUrlResolver,
  type OpenAiWire,
} from './openai-wire.ts'
import {
  callSignals, checkOptionKeys, count, fetchModelMetadata, fetchOf, HttpAdapterConfigError, httpRejection, infoOf, malformed, modelTable, networkErrorResponse,
  parseJson, positiveIntOption, readText, record, requestIdOf, resolveBaseUrl, sseBatches, transportError,
  type CallSignals, type Json, type ModelMetadataSource, type StaticModelInfo,
} from './http-common.ts'
import { classifyWireRejection } from './wire-rejection.ts'

export { HttpAdapterConfigError, type HttpAdapterConfigErrorCode, type ModelMetadataSource, type StaticModelInfo } from './http-common.ts'

/** The response headers that carry the request id on this wire. */
const REQUEST_ID_HEADERS = ['x-request-id'] as const

/** Options of `OpenAiCompatibleAdapter` as given; see `resolveOpenAiAdapterOptions` for the defaults. */
export interface OpenAiAdapterOptions {
  wire: OpenAiWire
  /** Base URL including the version path, e.g. `http://127.0.0.1:4010/v1` (as the `openai` client's `baseURL`). */
  baseURL: string
  /** Sent as `authorization: Bearer <apiKey>` when given. */
  apiKey?: string
  /** Extra static request headers. */
  headers?: Record<string, string>
  /** Static model table consulted first by `resolveModel`. Default: empty. */
  models?: readonly StaticModelInfo[]
  /** Default: `'endpoint'` (GET `<baseURL>/models/<id>`: `context_window`, `image_tokens`, `default_max_tokens`). */
  modelMetadata?: ModelMetadataSource
  /** Image URL mapping. Default: `attachmentUrl`. */
  imageUrl?: ImageUrlResolver
  /** The fetch to use. Default: the global `fetch`, looked up at each call (so later msw/nock patches apply). */
  fetch?: typeof fetch
  /** A fresh signal per call that aborts when the call has timed out (inject a virtual-clock timer). Default: none. */
  timeout?: () => AbortSignal
  /** Bound on one SSE event, in UTF-16 units. Default: 16 Mi. */
  maxEventChars?: number
}

/** The resolved, frozen adapter configuration. */
export interface OpenAiAdapterSpec {
  readonly wire: OpenAiWire
  readonly baseURL: string
  readonly headers: Readonly<Record<string, string>>
  readonly models: ReadonlyMap<string, StaticModelInfo>
  readonly modelMetadata: ModelMetadataSource
  readonly imageUrl: ImageUrlResolver
  readonly fetch: typeof fetch
  readonly timeout: (() => AbortSignal) | undefined
  readonly maxEventChars: number
}

const OPTION_KEYS: ReadonlySet<string> = new Set([
  'wire',
  'baseURL',
  'apiKey',
  'headers',
  'models',
  'modelMetadata',
  'imageUrl',
  'fetch',
  'timeout',
  'maxEventChars',
])

/** Resolves defaults once and freezes the result. Throws `HttpAdapterConfigError` for unknown keys or bad values. */
export function resolveOpenAiAdapterOptions(options: OpenAiAdapterOptions): OpenAiAdapterSpec {
  checkOptionKeys(options, OPTION_KEYS)
  if (options.wire !== 'openai' && options.wire !== 'deepseek')
    throw new HttpAdapterConfigError('INVALID_VALUE', `wire must be "openai" or "deepseek", got ${String(options.wire)}`)
  const baseURL = resolveBaseUrl(options.baseURL)
  const maxEventChars = positiveIntOption(options.maxEventChars, 16 * 1024 * 1024, 'maxEventChars')
  const headers: Record<string, string> = { ...options.headers }
  if (options.apiKey !== undefined) headers['authorization'] = `Bearer ${options.apiKey}`
  return Object.freeze({
    wire: options.wire,
    baseURL,
    headers: Object.freeze(headers),
    models: modelTable(options.models),
    modelMetadata: options.modelMetadata ?? 'endpoint',
    imageUrl: options.imageUrl ?? attachmentUrl,
    fetch: fetchOf(options.fetch),
    timeout: options.timeout,
    maxEventChars,
  })
}

/** Maps a wire `usage` object to disjoint `TokenUsage` buckets (module table). Throws `LlmError(UNKNOWN)` when malformed. */
export function usageFromWire(wire: OpenAiWire, usage: unknown): TokenUsage {
  const u = record(usage)
  const prompt = count(u?.['prompt_tokens'])
  const completion = count(u?.['completion_tokens'])
  if (u === undefined || prompt === undefined || completion === undefined)
    throw malformed('usage needs prompt_tokens and completion_tokens')
  const openaiCached = count(record(u['prompt_tokens_details'])?.['cached_tokens'])
  let cached: number | undefined
  let input: number
  if (wire === 'deepseek') {
    cached = count(u['prompt_cache_hit_tokens']) ?? openaiCached
    input = count(u['prompt_cache_miss_tokens']) ?? prompt - (cached ?? 0)
  } else {
    cached = openaiCached
    input = prompt - (cached ?? 0)
  }
  if (input < 0) throw malformed('cached tokens exceed prompt tokens')
  const out: TokenUsage = { inputTokens: input, outputTokens: completion }
  if (cached !== undefined) out.cacheReadTokens = cached
  const reasoning = count(record(u['completion_tokens_details'])?.['reasoning_tokens'])
  if (reasoning !== undefined) out.reasoningTokens = reasoning
  return out
}

function finishOf(reason: string): FinishReason {
  switch (reason) {
    case 'stop':
      return { kind: 'stop' }
    case 'tool_calls':
    case 'function_call':
      return { kind: 'tool-calls' }
    case 'length':
      return { kind: 'max-tokens' }
    default:
      throw new LlmError({ message: `provider finished with "${reason}"`, code: FailureCode.UNKNOWN })
  }
}

interface OpenText {
  kind: 'text' | 'reasoning'
  index: number
  text: string
}
interface OpenTool {
  index: number
  id: string
  name: string
  args: string
}

/** Turns wire chunks into `StreamChunk`s (module table). One instance per call. */
class ChunkTranslator {
  private readonly wire: OpenAiWire
  private nextIndex = 0
  private current: OpenText | undefined
  private readonly tools = new Map<number, OpenTool>()
  private finish: FinishReason | undefined
  private usage: TokenUsage | undefined
  /** True once any chunk carried a non-empty `choices` array. */
  sawChoice = false

  constructor(wire: OpenAiWire) {
    this.wire = wire
  }

  get finished(): boolean {
    return this.finish !== undefined
  }

  /** Chunks for one parsed wire chunk. Throws `LlmError(UNKNOWN)` on malformed input. */
  chunk(payload: Json, out: StreamChunk[]): void {
    const choices = payload['choices']
    if (choices !== undefined && choices !== null && !Array.isArray(choices)) throw malformed('choices is not an array')
    if (Array.isArray(choices) && choices.length > 0) {
      this.sawChoice = true
      for (const c of choices) {
        const choice = record(c)
        if (choice === undefined) throw malformed('a choice is not an object')
        if ((choice['index'] ?? 0) !== 0) continue
        const delta = record(choice['delta']) ?? record(choice['message'])
        if (delta !== undefined) this.delta(delta, out)
        const reason = choice['finish_reason']
        if (typeof reason === 'string' && this.finish === undefined) {
          this.closeAll(out)
          this.finish = finishOf(reason)
        }
      }
    }
    if (payload['usage'] !== undefined && payload['usage'] !== null) this.usage = usageFromWire(this.wire, payload['usage'])
  }

  /** Appends the closing chunks (usage, finish); false (nothing appended) when no finish was seen. */
  end(out: StreamChunk[]): boolean {
    if (this.finish === undefined) return false
    if (this.usage !== undefined) out.push({ type: 'usage', usage: this.usage })
    out.push({ type: 'finish', reason: this.finish })
    return true
  }

  private delta(delta: Json, out: StreamChunk[]): void {
    const reasoning = delta['reasoning_content']
    if (typeof reasoning === 'string' && reasoning !== '') this.textDelta('reasoning', reasoning, out)
    const text = delta['content']
    if (typeof text === 'string' && text !== '') this.textDelta('text', text, out)
    const block = record(delta['x_block'])
    if (block !== undefined) {
      if (typeof block['type'] !== 'string') throw malformed('x_block without a type')
      this.closeCurrent(out)
      const index = this.nextIndex++
      out.push({ type: 'block-start', index, blockType: block['type'] })
      out.push({ type: 'block-end', index, block: block as ContentBlock })
    }
    const calls = delta['tool_calls']
    if (calls === undefined || calls === null) return
    if (!Array.isArray(calls)) throw malformed('tool_calls is not an array')
    for (const c of calls) this.toolDelta(c, out)
  }

  private textDelta(kind: 'text' | 'reasoning', text: string, out: StreamChunk[]): void {
    if (this.current?.kind !== kind) {
      this.closeCurrent(out)
      this.current = { kind, index: this.nextIndex++, text: '' }
      out.push({ type: 'block-start', index: this.current.index, blockType: kind })
    }
    this.current.text += text
    out.push(
      kind === 'text'
        ? { type: 'text-delta', index: this.current.index, text }
        : { type: 'reasoning-delta', index: this.current.index, text },
    )
  }

  private toolDelta(raw: unknown, out: StreamChunk[]): void {
    const call = record(raw)
    const wireIndex = call?.['index'] ?? 0
    if (call === undefined || typeof wireIndex !== 'number') throw malformed('a tool call delta has no index')
    const fn = record(call['function']) ?? {}
    const name = typeof fn['name'] === 'string' ? fn['name'] : undefined
    const args = typeof fn['arguments'] === 'string' ? fn['arguments'] : ''
    let tool = this.tools.get(wireIndex)
    if (tool === undefined) {
      this.closeCurrent(out)
      const id = typeof call['id'] === 'string' && call['id'] !== '' ? call['id'] : `call_${wireIndex}`
      tool = { index: this.nextIndex++, id, name: '', args: '' }
      this.tools.set(wireIndex, tool)
      out.push({ type: 'block-start', index: tool.index, blockType: 'tool-call' })
    }
    tool.args += args
    const chunk: StreamChunk = { type: 'tool-call-delta', index: tool.index, id: tool.id as CallId, argumentsDelta: args }
    if (name !== undefined && tool.name === '') {
      tool.name = name
      chunk.name = name
    }
    out.push(chunk)
  }

  private closeCurrent(out: StreamChunk[]): void {
    const c = this.current
    if (c === undefined) return
    out.push({ type: 'block-end', index: c.index, block: { type: c.kind, text: c.text } })
    this.current = undefined
  }

  private closeAll(out: StreamChunk[]): void {
    this.closeCurrent(out)
    const tools = [...this.tools.values()].sort((a, b) => a.index - b.index)
    for (const t of tools)
      out.push({ type: 'block-end', index: t.index, block: { type: 'tool-call', id: t.id as CallId, name: t.name, arguments: t.args } })
    this.tools.clear()
  }
}

/** The OpenAI-compatible HTTP adapter (module table). One instance serves every route of one provider name. */
export class OpenAiCompatibleAdapter implements LlmAdapter {
  /** The resolved configuration. */
  readonly spec: OpenAiAdapterSpec

  constructor(options: OpenAiAdapterOptions) {
    this.spec = resolveOpenAiAdapterOptions(options)
  }

  /**
   * Route metadata: the static table first; else (`modelMetadata: 'endpoint'`) `GET <baseURL>/models/<id>`
   * reading `context_window`, `image_tokens`, `default_max_tokens`, `max_output_tokens` (and `name`); a 404 or a table miss with
   * `'static'` reports unknown capacity. Other HTTP failures throw `LlmError` classified by §1.2.2.
   */
  async resolveModel(provider: string, model: string, signal?: AbortSignal): Promise<LlmModelInfo> {
    const row = this.spec.models.get(model)
    if (row !== undefined || this.spec.modelMetadata === 'static') return infoOf(provider, model, row)
    const body = await fetchModelMetadata(
      {
        fetch: this.spec.fetch, url: `${this.spec.baseURL}/models/${encodeURIComponent(model)}`,
        headers: this.spec.headers, requestIdHeaders: REQUEST_ID_HEADERS,
      },
      signal,
      (rejection) => new LlmError(classifyWireRejection(rejection)),
    )
    if (body === undefined) return infoOf(provider, model, undefined)
    const meta: StaticModelInfo = { id: model }
    if (typeof body['name'] === 'string') meta.name = body['name']
    const window = body['context_window']
    if (window !== undefined && window !== null) {
      if (typeof window !== 'number')
        throw new LlmError({
          message: `${provider}/${model} reported a non-numeric context window`,
          code: FailureCode.INVALID_MODEL_CONTEXT,
        })
      meta.contextWindow = window
    }
    if (typeof body['image_tokens'] === 'number') meta.imageTokens = body['image_tokens']
    if (typeof body['default_max_tokens'] === 'number') meta.defaultMaxTokens = body['default_max_tokens']
    if (typeof body['max_output_tokens'] === 'number') meta.maxOutputTokens = body['max_output_tokens']
    return infoOf(provider, model, meta)
  }

  /** Streams one call (module table). Failures are thrown as `LlmError` or delivered as an error finish. */
  async *stream(options: GenerateOptions): AsyncGenerator<StreamChunk> {
    const signals = callSignals(options.signal, this.spec.timeout)
    const headers: Record<string, string> = { ...this.spec.headers, 'content-type': 'application/json', 'accept': 'text/event-stream' }
    if (options.purpose !== undefined) headers[PURPOSE_HEADER] = options.purpose
    if (options.sessionId !== undefined) headers[SESSION_HEADER] = options.sessionId
    const init: RequestInit = { method: 'POST', headers, body: JSON.stringify(toWireRequest(options, this.spec.imageUrl)) }
    if (signals.combined !== undefined) init.signal = signals.combined
    let response: Response
    try {
      response = await this.spec.fetch(`${this.spec.baseURL}/chat/completions`, init)
    } catch (err) {
      throw transportError(err, signals, 'request failed before a response')
    }
    if (response.type === 'error') throw networkErrorResponse()
    if (!response.ok) {
      const text = await readText(response, signals)
      throw new LlmError(classifyWireRejection(httpRejection(response, text, hasImages(options.messages), REQUEST_ID_HEADERS)))
    }
    const translator = new ChunkTranslator(this.spec.wire)
    const contentType = response.headers.get('content-type') ?? ''
    if (!contentType.includes('text/event-stream')) {
      yield* this.jsonReply(response, translator, options, signals)
      return
    }
    yield* this.sseReply(response, translator, options, signals)
  }

  private async *sseReply(
    response: Response,
    translator: ChunkTranslator,
    options: GenerateOptions,
    signals: CallSignals,
  ): AsyncGenerator<StreamChunk> {
    let done = false
    for await (const events of sseBatches(response, this.spec.maxEventChars, signals)) {
      const out: StreamChunk[] = []
      for (const event of events) {
        if (event.data === '[DONE]') {
          done = true
          break
        }
        const payload = record(parseJson(event.data))
        if (payload === undefined) throw malformed(`an SSE event is not a JSON object: ${event.data.slice(0, 200)}`)
        if (payload['error'] !== undefined && payload['error'] !== null) {
          yield* out
          yield { type: 'finish', reason: { kind: 'error', failure: this.inBand(payload, event.data, response, options) } }
          return
        }
        translator.chunk(payload, out)
      }
      yield* out
      if (done) break
    }
    const out: StreamChunk[] = []
    if (translator.end(out)) {
      yield* out
      return
    }
    if (done && !translator.sawChoice)
      throw new LlmError({ message: 'the provider returned no choices', code: FailureCode.EMPTY_RESPONSE })
    throw new LlmError({ message: 'the response stream ended without a finish', code: FailureCode.TRANSPORT })
  }

  private async *jsonReply(
    response: Response,
    translator: ChunkTranslator,
    options: GenerateOptions,
    signals: CallSignals,
  ): AsyncGenerator<StreamChunk> {
    const text = await readText(response, signals)
    const payload = record(parseJson(text))
    if (payload === undefined) throw malformed(`a ${response.status} reply that is neither SSE nor a JSON object`)
    if (payload['error'] !== undefined && payload['error'] !== null) {
      yield { type: 'finish', reason: { kind: 'error', failure: this.inBand(payload, text, response, options) } }
      return
    }
    const out: StreamChunk[] = []
    translator.chunk(payload, out)
    yield* out
    const end: StreamChunk[] = []
    if (translator.end(end)) {
      yield* end
      return
    }
    if (!translator.sawChoice) throw new LlmError({ message: 'the provider returned no choices', code: FailureCode.EMPTY_RESPONSE })
    throw new LlmError({ message: 'the reply has no finish_reason', code: FailureCode.TRANSPORT })
  }

  private inBand(payload: Json, text: string, response: Response, options: GenerateOptions): LlmFailure {
    const rejection: Parameters<typeof classifyWireRejection>[0] = { body: payload, text, requestHasImages: hasImages(options.messages) }
    const requestId = requestIdOf(response.headers, REQUEST_ID_HEADERS)
    if (requestId !== undefined) rejection.requestId = requestId
    return classifyWireRejection(rejection)
  }
}
