/**
 * The Anthropic Messages HTTP adapter: `POST <baseURL>/messages` streaming over SSE, with the same contract
 * as `OpenAiCompatibleAdapter` (`contract.ts`) and the same shared plumbing (`http-common.ts`). Request
 * mapping: `anthropic-wire.ts`. Rejections: `wire-rejection.ts` (§1.2.2), with the Anthropic error envelope.
 *
 * Headers: `x-api-key` (when an API key is given), `anthropic-version` (default `ANTHROPIC_VERSION`),
 * `content-type`, `accept: text/event-stream`, and the model-invisible `PURPOSE_HEADER` / `SESSION_HEADER`
 * (§8.2).
 *
 * `max_tokens` is required on this wire. Its default is a property of the route: `resolveModel` reports
 * `defaultMaxTokens` for every route (the table row's, else the adapter's `defaultMaxTokens`, default
 * `ANTHROPIC_DEFAULT_MAX_TOKENS`), so the agent puts it in the effective config it logs (`request/header`
 * with `adapterDefaults.maxTokens`, §1.4.10) and the request carries a logged cap. Only a call that arrives
 * without `maxTokens` (a caller that never resolved the route) gets the adapter default in the body alone.
 * Summary calls carry the policy cap (§8.2).
 *
 * Route metadata (§2.7): this wire's metadata endpoint is not a reliable capacity source (Anthropic's
 * `GET /v1/models/<id>` long had no window field, and clients ship their own tables), so the default source
 * is `'static'`: the adapter's `models` table — the reference subject fills it from the scenario's routes.
 * With `modelMetadata: 'endpoint'`, `GET <baseURL>/models/<id>` is read: `max_input_tokens` (Anthropic) or
 * `context_window` (the project mock) → window, `display_name` or `name` → name, `image_tokens` (project)
 * → image price, `default_max_tokens` (project) → default cap, else the adapter default capped at
 * `max_tokens` (Anthropic's largest accepted cap).
 *
 * Stream mapping (wire events → `StreamChunk`; the event's `type` field decides, `event:` names are not needed):
 * - `message_start` → nothing but its `message.usage` (the input side); `ping` and unknown events → nothing;
 * - `content_block_start` opens one protocol block per wire `index` (protocol indices dense in start
 *   order): `text` → `text`, `thinking` → `reasoning`, `tool_use` → `tool-call` (a first `tool-call-delta`
 *   carries its id and name), `x_block` (project extension, image output, FAULT-25) → its inner block, any
 *   other type (`redacted_thinking`, server tool blocks, …) → the wire block itself, preserved verbatim;
 *   text already in the start block is emitted as a first delta;
 * - `content_block_delta`: `text_delta` → `text-delta`, `thinking_delta` → `reasoning-delta`,
 *   `input_json_delta` → `tool-call-delta` (`partial_json` as `argumentsDelta`), `signature_delta` → kept as
 *   the reasoning block's `signature` (replayed as the thinking block's signature); other delta types are
 *   ignored; a delta of the wrong kind for its block is malformed;
 * - `content_block_stop` → `block-end` with the whole block; a tool call's `arguments` are the joined
 *   `partial_json`, or, when none came, the JSON of the start block's `input` (`{}` → `'{}'`);
 * - `message_delta` → its `stop_reason` (`anthropicFinish`: `end_turn`/`stop_sequence` → stop, `tool_use` →
 *   tool-calls, `max_tokens` → max-tokens) and its usage, merged over `message_start`'s field by field
 *   (the wire's usage is cumulative);
 * - `message_stop`, or the end of the body after a stop reason → blocks still open are closed, then one
 *   `usage` chunk (`anthropicUsage`; omitted when the wire never gave both counts) and `finish`.
 * Failures: HTTP status ≥ 400 → thrown `LlmError` classified by §1.2.2 from the envelope
 * `{type:'error', error:{type, message}}` (`invalid_request_error` "prompt is too long…" →
 * `CONTEXT_WINDOW_EXCEEDED`, 429 → `RATE_LIMIT` with `retry-after`, 529/5xx → `SERVER`, the mock's
 * `image_offload_required` → `IMAGE_OFFLOAD_REQUIRED`); the `request-id` header is the failure's
 * `requestId`. An in-band `error` event → a `finish {kind:'error'}` chunk classified the same way, its
 * status taken from the error type (`anthropicErrorStatus`: `overloaded_error` 529, …). A network error,
 * a body error, or a body that ends without a stop reason → `TRANSPORT`; `message_stop` with no content
 * block and no stop reason → `EMPTY_RESPONSE`; the caller's abort → `ABORTED`; the timeout → `TIMEOUT`.
 * A non-streaming JSON `message` reply is accepted too and mapped to the same chunks.
 */
import type { CallId } from '../brand.ts'
import type { ContentBlock, FinishReason, LlmFailure, LlmModelInfo, StreamChunk } from '../log/llm.ts'
import type { JsonObject } from '../log/json.ts'
import {
  ANTHROPIC_DEFAULT_MAX_TOKENS, ANTHROPIC_VERSION, anthropicErrorStatus, anthropicFinish, anthropicUsage, attachmentImageSource,
  mergeUsage, toAnthropicRequest, toolArguments, type AnthropicImageSourceResolver,
} from './anthropic-wire.ts'
import { FailureCode, LlmError, type GenerateOptions, type LlmAdapter } from './contract.ts'
import {
  callSignals, checkOptionKeys, fetchModelMetadata, fetchOf, httpRejection, infoOf, malformed, modelTable, networkErrorResponse,
  parseJson, positiveIntOption, readText, record, requestIdOf, resolveBaseUrl, sseBatches, transportError,
  type CallSignals, type Json, type ModelMetadataSource, type StaticModelInfo,
} from './http-common.ts'
import { hasImages, PURPOSE_HEADER, SESSION_HEADER } from './openai-wire.ts'
import { classifyWireRejection } from './wire-rejection.ts'

/** The response headers that carry the request id on this wire (Anthropic's, then the generic one). */
const REQUEST_ID_HEADERS = ['request-id', 'x-request-id'] as const

/** Options of `AnthropicMessagesAdapter` as given; see `resolveAnthropicAdapterOptions` for the defaults. */
export interface AnthropicAdapterOptions {
  /** Base URL including the version path, e.g. `http://127.0.0.1:4010/v1` (requests go to `<baseURL>/messages`). */
  baseURL: string
  /** Sent as `x-api-key` when given. */
  apiKey?: string
  /** The `anthropic-version` header. Default: `ANTHROPIC_VERSION`. */
  anthropicVersion?: string
  /** Extra static request headers. */
  headers?: Record<string, string>
  /** Static model table consulted first by `resolveModel`. Default: empty. */
  models?: readonly StaticModelInfo[]
  /** Default: `'static'` (module doc). */
  modelMetadata?: ModelMetadataSource
  /** The `max_tokens` of a route whose row sets none (module doc). Default: `ANTHROPIC_DEFAULT_MAX_TOKENS`. */
  defaultMaxTokens?: number
  /** Image source mapping. Default: `attachmentImageSource`. */
  imageSource?: AnthropicImageSourceResolver
  /** The fetch to use. Default: the global `fetch`, looked up at each call (so later msw/nock patches apply). */
  fetch?: typeof fetch
  /** A fresh signal per call that aborts when the call has timed out (inject a virtual-clock timer). Default: none. */
  timeout?: () => AbortSignal
  /** Bound on one SSE event, in UTF-16 units. Default: 16 Mi. */
  maxEventChars?: number
}

/** The resolved, frozen adapter configuration. */
export interface AnthropicAdapterSpec {
  readonly baseURL: string
  readonly headers: Readonly<Record<string, string>>
  readonly models: ReadonlyMap<string, StaticModelInfo>
  readonly modelMetadata: ModelMetadataSource
  readonly defaultMaxTokens: number
  readonly imageSource: AnthropicImageSourceResolver
  readonly fetch: typeof fetch
  readonly timeout: (() => AbortSignal) | undefined
  readonly maxEventChars: number
}

const OPTION_KEYS: ReadonlySet<string> = new Set([
  'baseURL', 'apiKey', 'anthropicVersion', 'headers', 'models', 'modelMetadata', 'defaultMaxTokens', 'imageSource', 'fetch', 'timeout',
  'maxEventChars',
])

/** Resolves defaults once and freezes the result. Throws `HttpAdapterConfigError` for unknown keys or bad values. */
export function resolveAnthropicAdapterOptions(options: AnthropicAdapterOptions): AnthropicAdapterSpec {
  checkOptionKeys(options, OPTION_KEYS)
  const headers: Record<string, string> = { ...options.headers, 'anthropic-version': options.anthropicVersion ?? ANTHROPIC_VERSION }
  if (options.apiKey !== undefined) headers['x-api-key'] = options.apiKey
  return Object.freeze({
    baseURL: resolveBaseUrl(options.baseURL),
    headers: Object.freeze(headers),
    models: modelTable(options.models),
    modelMetadata: options.modelMetadata ?? 'static',
    defaultMaxTokens: positiveIntOption(options.defaultMaxTokens, ANTHROPIC_DEFAULT_MAX_TOKENS, 'defaultMaxTokens'),
    imageSource: options.imageSource ?? attachmentImageSource,
    fetch: fetchOf(options.fetch),
    timeout: options.timeout,
    maxEventChars: positiveIntOption(options.maxEventChars, 16 * 1024 * 1024, 'maxEventChars'),
  })
}

/** One open wire block. `verbatim` holds the final block of a type without deltas. */
interface OpenBlock {
  readonly index: number
  readonly kind: 'text' | 'reasoning' | 'tool-call' | 'verbatim'
  text: string
  signature: string
  readonly id: string
  readonly name: string
  args: string
  readonly input: JsonObject | undefined
  readonly verbatim: ContentBlock | undefined
}

function str(value: unknown): string {
  return typeof value === 'string' ? value : ''
}

/** Turns wire events into `StreamChunk`s (module table). One instance per call. */
class EventTranslator {
  private nextIndex = 0
  private readonly open = new Map<number, OpenBlock>()
  private usage: Record<string, unknown> = {}
  private finish: FinishReason | undefined
  /** True once any `content_block_start` arrived. */
  sawBlock = false
  /** True once `message_stop` arrived (nothing after it is read). */
  stopped = false

  /** Chunks for one wire event payload. Throws `LlmError(UNKNOWN)` on malformed input or an unknown stop reason. */
  event(payload: Json, out: StreamChunk[]): void {
    switch (payload['type']) {
      case 'message_start':
        this.usage = mergeUsage(this.usage, record(payload['message'])?.['usage'])
        return
      case 'content_block_start':
        this.start(payload, out)
        return
      case 'content_block_delta':
        this.delta(payload, out)
        return
      case 'content_block_stop': {
        const block = this.block(payload)
        this.open.delete(Number(payload['index']))
        this.close(block, out)
        return
      }
      case 'message_delta': {
        const reason = record(payload['delta'])?.['stop_reason']
        if (typeof reason === 'string' && this.finish === undefined) this.finish = anthropicFinish(reason)
        this.usage = mergeUsage(this.usage, payload['usage'])
        return
      }
      case 'message_stop':
        this.stopped = true
        return
      default:
        return // `ping` and event types this adapter does not know carry nothing it needs
    }
  }

  /** Appends the closing chunks (open blocks, usage, finish); false (nothing appended) when no stop reason was seen. */
  end(out: StreamChunk[]): boolean {
    if (this.finish === undefined) return false
    for (const [wire, block] of [...this.open.entries()].sort((a, b) => a[0] - b[0])) {
      this.open.delete(wire)
      this.close(block, out)
    }
    const usage = anthropicUsage(this.usage)
    if (usage !== undefined) out.push({ type: 'usage', usage })
    out.push({ type: 'finish', reason: this.finish })
    return true
  }

  private block(payload: Json): OpenBlock {
    const block = this.open.get(Number(payload['index']))
    if (block === undefined) throw malformed(`${String(payload['type'])} for a block that is not open (index ${String(payload['index'])})`)
    return block
  }

  private start(payload: Json, out: StreamChunk[]): void {
    const wire = payload['index']
    const cb = record(payload['content_block'])
    if (typeof wire !== 'number' || cb === undefined) throw malformed('content_block_start without an index and a content_block')
    if (this.open.has(wire)) throw malformed(`content block ${wire} started twice`)
    this.sawBlock = true
    const index = this.nextIndex++
    const base = { index, text: '', signature: '', id: '', name: '', args: '', input: undefined, verbatim: undefined }
    let block: OpenBlock
    switch (cb['type']) {
      case 'text':
        block = { ...base, kind: 'text' }
        out.push({ type: 'block-start', index, blockType: 'text' })
        this.text(block, str(cb['text']), out)
        break
      case 'thinking':
        block = { ...base, kind: 'reasoning', signature: str(cb['signature']) }
        out.push({ type: 'block-start', index, blockType: 'reasoning' })
        this.text(block, str(cb['thinking']), out)
        break
      case 'tool_use': {
        const id = cb['id']
        const name = cb['name']
        if (typeof id !== 'string' || id === '' || typeof name !== 'string') throw malformed('a tool_use block without an id and a name')
        block = { ...base, kind: 'tool-call', id, name, input: record(cb['input']) as JsonObject | undefined }
        out.push({ type: 'block-start', index, blockType: 'tool-call' })
        out.push({ type: 'tool-call-delta', index, id: id as CallId, name, argumentsDelta: '' })
        break
      }
      case 'x_block': {
        const inner = record(cb['block'])
        if (inner === undefined || typeof inner['type'] !== 'string') throw malformed('x_block without a typed block')
        block = { ...base, kind: 'verbatim', verbatim: inner as ContentBlock }
        out.push({ type: 'block-start', index, blockType: inner['type'] })
        break
      }
      default: {
        if (typeof cb['type'] !== 'string') throw malformed('a content block without a type')
        block = { ...base, kind: 'verbatim', verbatim: cb as ContentBlock }
        out.push({ type: 'block-start', index, blockType: cb['type'] })
        break
      }
    }
    this.open.set(wire, block)
  }

  private delta(payload: Json, out: StreamChunk[]): void {
    const block = this.block(payload)
    const d = record(payload['delta'])
    if (d === undefined) throw malformed('content_block_delta without a delta')
    const wrong = (): LlmError => malformed(`a ${String(d['type'])} for a ${block.kind} block`)
    switch (d['type']) {
      case 'text_delta':
        if (block.kind !== 'text') throw wrong()
        this.text(block, str(d['text']), out)
        return
      case 'thinking_delta':
        if (block.kind !== 'reasoning') throw wrong()
        this.text(block, str(d['thinking']), out)
        return
      case 'signature_delta':
        if (block.kind !== 'reasoning') throw wrong()
        block.signature += str(d['signature'])
        return
      case 'input_json_delta': {
        if (block.kind !== 'tool-call') throw wrong()
        const piece = str(d['partial_json'])
        if (piece === '') return
        block.args += piece
        out.push({ type: 'tool-call-delta', index: block.index, id: block.id as CallId, argumentsDelta: piece })
        return
      }
      default:
        return // citations and other annotations: not part of a protocol block
    }
  }

  private text(block: OpenBlock, piece: string, out: StreamChunk[]): void {
    if (piece === '') return
    block.text += piece
    out.push(
      block.kind === 'text'
        ? { type: 'text-delta', index: block.index, text: piece }
        : { type: 'reasoning-delta', index: block.index, text: piece },
    )
  }

  private close(b: OpenBlock, out: StreamChunk[]): void {
    let block: ContentBlock
    switch (b.kind) {
      case 'text':
        block = { type: 'text', text: b.text }
        break
      case 'reasoning':
        block = b.signature === '' ? { type: 'reasoning', text: b.text } : { type: 'reasoning', text: b.text, signature: b.signature }
        break
      case 'tool-call': {
        const args = b.args !== '' ? b.args : toolArguments(b.input ?? {})
        block = { type: 'tool-call', id: b.id as CallId, name: b.name, arguments: args }
        break
      }
      case 'verbatim':
        block = b.verbatim as ContentBlock
        break
    }
    out.push({ type: 'block-end', index: b.index, block })
  }
}

/** The Anthropic Messages HTTP adapter (module doc). One instance serves every route of one provider name. */
export class AnthropicMessagesAdapter implements LlmAdapter {
  /** The resolved configuration. */
  readonly spec: AnthropicAdapterSpec

  constructor(options: AnthropicAdapterOptions) {
    this.spec = resolveAnthropicAdapterOptions(options)
  }

  /**
   * Route metadata (module doc): the static table first; else, with `modelMetadata: 'endpoint'`, the model
   * endpoint; a table miss with `'static'` or a 404 reports unknown capacity. Every answer carries
   * `defaultMaxTokens`. HTTP failures throw `LlmError` classified by §1.2.2.
   */
  async resolveModel(provider: string, model: string, signal?: AbortSignal): Promise<LlmModelInfo> {
    const row = this.spec.models.get(model)
    if (row !== undefined || this.spec.modelMetadata === 'static') return this.withCap(infoOf(provider, model, row), undefined)
    const body = await fetchModelMetadata(
      {
        fetch: this.spec.fetch, url: `${this.spec.baseURL}/models/${encodeURIComponent(model)}`,
        headers: this.spec.headers, requestIdHeaders: REQUEST_ID_HEADERS,
      },
      signal,
      (rejection) => new LlmError(classifyWireRejection(rejection)),
    )
    if (body === undefined) return this.withCap(infoOf(provider, model, undefined), undefined)
    const meta: StaticModelInfo = { id: model }
    const name = body['display_name'] ?? body['name']
    if (typeof name === 'string') meta.name = name
    const window = body['max_input_tokens'] ?? body['context_window']
    if (window !== undefined && window !== null) {
      if (typeof window !== 'number')
        throw new LlmError({ message: `${provider}/${model} reported a non-numeric context window`, code: FailureCode.INVALID_MODEL_CONTEXT })
      meta.contextWindow = window
    }
    if (typeof body['image_tokens'] === 'number') meta.imageTokens = body['image_tokens']
    if (typeof body['default_max_tokens'] === 'number') meta.defaultMaxTokens = body['default_max_tokens']
    const limit = body['max_tokens']
    if (typeof body['max_output_tokens'] === 'number') meta.maxOutputTokens = body['max_output_tokens'] // the project's field (HARD-2)
    return this.withCap(infoOf(provider, model, meta), typeof limit === 'number' && limit > 0 ? limit : undefined)
  }

  /** `info` with `defaultMaxTokens` filled from the adapter default (capped at the route's `limit`) when it has none. */
  private withCap(info: LlmModelInfo, limit: number | undefined): LlmModelInfo {
    if (info.defaultMaxTokens !== undefined) return info
    return { ...info, defaultMaxTokens: limit === undefined ? this.spec.defaultMaxTokens : Math.min(limit, this.spec.defaultMaxTokens) }
  }

  /** Streams one call (module doc). Failures are thrown as `LlmError` or delivered as an error finish. */
  async *stream(options: GenerateOptions): AsyncGenerator<StreamChunk> {
    const signals = callSignals(options.signal, this.spec.timeout)
    const headers: Record<string, string> = { ...this.spec.headers, 'content-type': 'application/json', 'accept': 'text/event-stream' }
    if (options.purpose !== undefined) headers[PURPOSE_HEADER] = options.purpose
    if (options.sessionId !== undefined) headers[SESSION_HEADER] = options.sessionId
    const body = toAnthropicRequest(options, this.spec.defaultMaxTokens, this.spec.imageSource)
    const init: RequestInit = { method: 'POST', headers, body: JSON.stringify(body) }
    if (signals.combined !== undefined) init.signal = signals.combined
    let response: Response
    try {
      response = await this.spec.fetch(`${this.spec.baseURL}/messages`, init)
    } catch (err) {
      throw transportError(err, signals, 'request failed before a response')
    }
    if (response.type === 'error') throw networkErrorResponse()
    const images = hasImages(options.messages)
    if (!response.ok) {
      const text = await readText(response, signals)
      throw new LlmError(classifyWireRejection(httpRejection(response, text, images, REQUEST_ID_HEADERS)))
    }
    const translator = new EventTranslator()
    const contentType = response.headers.get('content-type') ?? ''
    if (!contentType.includes('text/event-stream')) {
      yield* this.jsonReply(response, translator, images, signals)
      return
    }
    for await (const events of sseBatches(response, this.spec.maxEventChars, signals)) {
      const out: StreamChunk[] = []
      for (const event of events) {
        const payload = record(parseJson(event.data))
        if (payload === undefined) throw malformed(`an SSE event is not a JSON object: ${event.data.slice(0, 200)}`)
        if (payload['type'] === 'error' || event.event === 'error') {
          yield* out
          yield { type: 'finish', reason: { kind: 'error', failure: inBand(payload, event.data, response, images) } }
          return
        }
        translator.event(payload, out)
        if (translator.stopped) break
      }
      yield* out
      if (translator.stopped) break
    }
    yield* this.ending(translator)
  }

  private async *jsonReply(response: Response, translator: EventTranslator, images: boolean, signals: CallSignals): AsyncGenerator<StreamChunk> {
    const text = await readText(response, signals)
    const payload = record(parseJson(text))
    if (payload === undefined) throw malformed(`a ${response.status} reply that is neither SSE nor a JSON object`)
    if (payload['type'] === 'error') {
      yield { type: 'finish', reason: { kind: 'error', failure: inBand(payload, text, response, images) } }
      return
    }
    const content = payload['content']
    if (!Array.isArray(content)) throw malformed('a message without a content array')
    // The whole message as the events that would have streamed it: each block starts complete and stops.
    const out: StreamChunk[] = []
    translator.event({ type: 'message_start', message: { usage: payload['usage'] ?? null } }, out)
    content.forEach((block, index) => {
      translator.event({ type: 'content_block_start', index, content_block: block }, out)
      translator.event({ type: 'content_block_stop', index }, out)
    })
    translator.event({ type: 'message_delta', delta: { stop_reason: payload['stop_reason'] ?? null } }, out)
    translator.event({ type: 'message_stop' }, out)
    yield* out
    yield* this.ending(translator)
  }

  private *ending(translator: EventTranslator): Generator<StreamChunk> {
    const out: StreamChunk[] = []
    if (translator.end(out)) {
      yield* out
      return
    }
    if (translator.stopped && !translator.sawBlock)
      throw new LlmError({ message: 'the provider returned no content blocks and no stop reason', code: FailureCode.EMPTY_RESPONSE })
    throw new LlmError({ message: 'the response stream ended without a stop reason', code: FailureCode.TRANSPORT })
  }
}

/** The failure of an in-band `{type:'error', error:{type, message}}` payload (module doc). */
function inBand(payload: Json, text: string, response: Response, images: boolean): LlmFailure {
  const rejection: Parameters<typeof classifyWireRejection>[0] = { body: payload, text, requestHasImages: images }
  const status = anthropicErrorStatus(record(payload['error'])?.['type'])
  if (status !== undefined) rejection.status = status
  const requestId = requestIdOf(response.headers, REQUEST_ID_HEADERS)
  if (requestId !== undefined) rejection.requestId = requestId
  return classifyWireRejection(rejection)
}
