/**
 * The transport-neutral mock provider (design §4 item 4, style rule 13): one WHATWG handler
 * `(Request) => Promise<Response>` per wire dialect, mounted by msw, nock or a real loopback server.
 *
 * Routes (any base path): `POST …/chat/completions` (streaming SSE or a JSON completion; wire `anthropic`:
 * `POST …/messages` instead, with Anthropic's SSE events and error envelope, `anthropic-*.ts`);
 * `GET …/models/<id>` → `{id, object:'model', created:0, owned_by, context_window, image_tokens?,
 * default_max_tokens?, max_output_tokens?}` (404 `model_not_found` for an unknown model; a route's scripted
 * `reportedContextWindow` — FAULT-41 — replaces `context_window`, or drops it for none); `GET …/models` → the list.
 * Anything else → 404. A malformed chat body → 400 `invalid_request_error` (recorded in `refused`).
 *
 * Every valid chat request is captured (headers redacted) before it is answered; its outcome comes from
 * the `ReplyPlan`, or — with `routes` — from the route's enforcement (`enforce.ts`) when a rule rejects it
 * (the plan is then not consumed; the window rule is one of them). A route's usage mode shapes the usage the writers send. Deterministic: ids are `<idPrefix>-<index>`, `created` comes from the injected clock, and
 * nothing depends on the wall clock or on timing. Fault delivery follows `PlannedOutcome`; a planned
 * network error is `Response.error()`, which every mount turns into a failure before headers.
 */
import { assertNever, type JsonValue } from '@compaction-sim/core'
import { parseAnthropicRequest } from './anthropic-request.ts'
import {
  anthropicEmptyEvents, anthropicError, anthropicErrorEvent, anthropicMessageBody, anthropicReplyEvents, toAnthropicRejection,
  type AnthropicEvent,
} from './anthropic-response.ts'
import { resolveCacheContract, type CacheContractSpec } from '../metrics/contracts.ts'
import { PromptCacheModel, estimatedUsage } from './prompt-cache.ts'
import type {
  CapturedWireRequest,
  MockModel,
  MockWire,
  ParsedRequest,
  PlannedOutcome,
  PlannedReply,
  ProviderClock,
  RefusedWireRequest,
  ReplyPlan,
  StreamCut,
} from './types.ts'
import { parseChatRequest, redactedHeaders, WireRequestError } from './wire-request.ts'
import { enforcedOutcome } from './enforce.ts'
import type { MockRoute } from './route.ts'
import { createTokenizer, type ProviderTokenizer } from './tokenizers.ts'
import { completionBody, hasUsageChunk, replyEvents, type ChunkContext } from './wire-response.ts'
import {
  WORLD_RECORD_KIND, WORLD_RECORD_SCHEMA_VERSION, worldRequestOf, worldRoutesOf, type WorldRecord, type WorldRequest,
} from './world-record.ts'

/** Options of `MockProvider` as given; `resolveMockProviderOptions` fills the defaults. */
export interface MockProviderOptions {
  wire: MockWire
  plan: ReplyPlan
  clock: ProviderClock
  /** Models the metadata endpoint reports. Default: none (every model has unknown capacity and is accepted). */
  models?: readonly MockModel[]
  /**
   * The provider world's routes (issue #15): each is served with its own tokenizer, enforcement, limits,
   * usage mode and summarizer. Exclusive with `models` (a route list implies the models it reports).
   */
  routes?: readonly MockRoute[]
  /**
   * Serve chat requests for a model `models` does not list (its capacity is then unknown) instead of 404
   * `model_not_found`. Default false. `sim serve` without a scenario sets it: it announces one model but
   * answers for any.
   */
  acceptUnknownModels?: boolean
  /** Largest SSE delta piece in UTF-16 units. Default 64. */
  deltaChars?: number
  /** Prefix of completion ids. Default `chatcmpl-mock` (`msg_mock` on the anthropic wire). */
  idPrefix?: string
  /** Bound on captured requests; further chat requests get HTTP 500. Default 100 000. */
  requestsMax?: number
  /** The prompt-cache contract the reported usage follows (issue #9). Default: the plain §9.3 model. */
  cache?: CacheContractSpec
}

/** The resolved, frozen provider configuration. */
export interface MockProviderSpec {
  readonly wire: MockWire
  readonly plan: ReplyPlan
  readonly clock: ProviderClock
  readonly models: ReadonlyMap<string, MockModel>
  /** The routes by model id (empty without `routes`). */
  readonly routes: ReadonlyMap<string, MockRoute>
  readonly acceptUnknownModels: boolean
  readonly deltaChars: number
  readonly idPrefix: string
  readonly requestsMax: number
  readonly cache: CacheContractSpec
}

/** Refused provider options (a caller bug). */
export class MockProviderConfigError extends Error {
  override readonly name = 'MockProviderConfigError'
  readonly code = 'MOCK_PROVIDER_CONFIG'
}

const OPTION_KEYS: ReadonlySet<string> = new Set([
  'wire',
  'plan',
  'clock',
  'models',
  'routes',
  'acceptUnknownModels',
  'deltaChars',
  'idPrefix',
  'requestsMax',
  'cache',
])

/** Resolves defaults once and freezes them. Throws `MockProviderConfigError` for unknown keys or bad values. */
export function resolveMockProviderOptions(options: MockProviderOptions): MockProviderSpec {
  for (const key of Object.keys(options))
    if (!OPTION_KEYS.has(key)) throw new MockProviderConfigError(`unknown mock provider option "${key}"`)
  if (options.wire !== 'openai' && options.wire !== 'deepseek' && options.wire !== 'anthropic')
    throw new MockProviderConfigError(`wire must be "openai", "deepseek" or "anthropic", got ${String(options.wire)}`)
  const deltaChars = options.deltaChars ?? 64
  if (!Number.isSafeInteger(deltaChars) || deltaChars < 2) throw new MockProviderConfigError('deltaChars must be an integer ≥ 2')
  const requestsMax = options.requestsMax ?? 100_000
  if (!Number.isSafeInteger(requestsMax) || requestsMax <= 0) throw new MockProviderConfigError('requestsMax must be a positive integer')
  if (options.routes !== undefined && options.models !== undefined) throw new MockProviderConfigError('give routes or models, not both')
  const routes = new Map<string, MockRoute>()
  for (const r of options.routes ?? []) {
    if (routes.has(r.model)) throw new MockProviderConfigError(`route ${r.model} is declared twice`)
    routes.set(r.model, r)
  }
  const routeModels: MockModel[] = [...routes.values()].flatMap((r) => (r.contextWindow === null ? [] : [{
    id: r.model, contextWindow: r.contextWindow, ...(r.imageTokens === null ? {} : { imageTokens: r.imageTokens }),
    ...(r.maxOutputTokens === null ? {} : { maxOutputTokens: r.maxOutputTokens }),
  }]))
  const models = new Map<string, MockModel>()
  for (const m of options.models ?? routeModels) {
    if (!Number.isSafeInteger(m.contextWindow) || m.contextWindow <= 0)
      throw new MockProviderConfigError(`model ${m.id}: contextWindow must be a positive integer`)
    models.set(m.id, Object.freeze({ ...m }))
  }
  return Object.freeze({
    wire: options.wire,
    plan: options.plan,
    clock: options.clock,
    models,
    routes,
    acceptUnknownModels: options.acceptUnknownModels ?? false,
    deltaChars,
    idPrefix: options.idPrefix ?? (options.wire === 'anthropic' ? 'msg_mock' : 'chatcmpl-mock'),
    requestsMax,
    cache: options.cache ?? resolveCacheContract(),
  })
}

const encoder = new TextEncoder()

function json(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } })
}

function errorBody(message: string, type: string, code: string | null, param: string | null = null): unknown {
  return { error: { message, type, param, code } }
}

function sseFrame(data: string): Uint8Array {
  return encoder.encode(`data: ${data}\n\n`)
}

/** One named SSE event of the Anthropic wire. */
function anthropicFrame(e: AnthropicEvent): Uint8Array {
  return encoder.encode(`event: ${e.event}\ndata: ${JSON.stringify(e.data)}\n\n`)
}

/** Index of the finish chunk in `replyEvents` output: the last event before the optional usage chunk and `[DONE]`. */
function finishEventIndex(events: readonly string[], usageChunk: boolean): number {
  return events.length - (usageChunk ? 3 : 2)
}

/**
 * A body that sends `frames` one per read (highWaterMark 0, so a cut never drops a frame already
 * promised), then ends per `end`: close, error, or stay open until the client cancels.
 */
function frameStream(frames: readonly Uint8Array[], end: 'close' | 'error' | 'hang'): ReadableStream<Uint8Array> {
  let next = 0
  let release: (() => void) | undefined
  return new ReadableStream<Uint8Array>(
    {
      pull(controller): Promise<void> | undefined {
        const frame = frames[next]
        if (frame !== undefined) {
          next++
          controller.enqueue(frame)
          return undefined
        }
        switch (end) {
          case 'close':
            controller.close()
            return undefined
          case 'error':
            controller.error(new Error('mock provider: stream interrupted'))
            return undefined
          case 'hang':
            return new Promise<void>((resolve) => {
              release = resolve
            })
          default:
            return assertNever(end, 'stream end')
        }
      },
      cancel(): void {
        release?.()
      },
    },
    { highWaterMark: 0 },
  )
}

/** The mock provider (module doc). `handle` is bound and may be passed around as a plain function. */
export class MockProvider {
  readonly spec: MockProviderSpec
  /** Every valid chat request, in arrival order. */
  readonly captured: CapturedWireRequest[] = []
  /** What the world answered to each valid chat request, in arrival order (the world record, `world-record.ts`). */
  readonly served: WorldRequest[] = []
  /** Requests refused before planning. */
  readonly refused: RefusedWireRequest[] = []
  /** Errors thrown by the plan or the mock itself (answered with HTTP 500 `mock_internal_error`): a bug to report. */
  readonly internalErrors: Error[] = []
  private readonly cache: PromptCacheModel
  private readonly tokenizers = new Map<string, ProviderTokenizer>()

  constructor(options: MockProviderOptions) {
    this.spec = resolveMockProviderOptions(options)
    this.cache = new PromptCacheModel(this.spec.cache)
    this.handle = this.handle.bind(this)
  }

  /** The world record of everything served so far (`world-record.ts`); `captureOffset` and `logOffset` as that module says. */
  worldRecord(captureOffset = 0, logOffset = 0): WorldRecord {
    return {
      schemaVersion: WORLD_RECORD_SCHEMA_VERSION, kind: WORLD_RECORD_KIND, wire: this.spec.wire, captureOffset, logOffset,
      routes: worldRoutesOf(this.spec.routes.values(), this.spec.cache), requests: structuredClone(this.served),
    }
  }

  /** The WHATWG handler: routes one request and answers it (module doc). Never throws. */
  async handle(request: Request): Promise<Response> {
    try {
      return await this.route(request)
    } catch (err) {
      // A bug of the mock or an unreadable request body: answer 500 and keep the error for the report.
      const error = err instanceof Error ? err : new Error(String(err))
      this.internalErrors.push(error)
      return json(500, errorBody(`mock provider: ${error.message}`, 'mock_internal_error', null))
    }
  }

  private async route(request: Request): Promise<Response> {
    const url = new URL(request.url)
    const path = url.pathname.replace(/\/+$/, '')
    const chatPath = this.spec.wire === 'anthropic' ? '/messages' : '/chat/completions'
    if (request.method === 'POST' && path.endsWith(chatPath)) return this.chat(request, path)
    if (request.method === 'GET') {
      const model = /\/models\/(.+)$/.exec(path)
      if (model?.[1] !== undefined) return this.model(decodeURIComponent(model[1]))
      if (path.endsWith('/models')) return this.modelList()
    }
    return this.refuse(
      request.method,
      path,
      404,
      errorBody(`Unknown request URL: ${request.method} ${path}`, 'invalid_request_error', 'unknown_url'),
    )
  }

  private refuse(method: string, path: string, status: number, body: unknown): Response {
    const error = (body as { error: { message: string } }).error
    this.refused.push({ time: this.spec.clock.now(), method, path, status, reason: error.message })
    return json(status, this.spec.wire === 'anthropic' ? { type: 'error', error: anthropicError(status, error as JsonValue) } : body)
  }

  private model(id: string): Response {
    const scripted = this.scriptedReport(id)
    if (scripted !== undefined) return json(200, scripted)
    const m = this.spec.models.get(id)
    if (m === undefined)
      return json(404, errorBody(`The model '${id}' does not exist`, 'invalid_request_error', 'model_not_found', 'model'))
    return json(200, this.modelObject(m))
  }

  private modelList(): Response {
    const listed = [...this.spec.models.values()].map((m) => this.scriptedReport(m.id) ?? this.modelObject(m))
    const scriptedOnly = [...this.spec.routes.keys()].filter((id) => !this.spec.models.has(id)).flatMap((id) => this.scriptedReport(id) ?? [])
    return json(200, { object: 'list', data: [...listed, ...scriptedOnly] })
  }

  /**
   * The model object of a route whose capacity report is scripted (FAULT-41, `MockRoute.reportedContextWindow`):
   * `context_window` is the scripted number (valid or not), or absent for `null`. Undefined for other models.
   */
  private scriptedReport(id: string): Record<string, unknown> | undefined {
    const route = this.spec.routes.get(id)
    if (route?.reportedContextWindow === undefined) return undefined
    const out = this.modelObject({
      id, contextWindow: 0, ...(route.imageTokens === null ? {} : { imageTokens: route.imageTokens }),
      ...(route.maxOutputTokens === null ? {} : { maxOutputTokens: route.maxOutputTokens }),
    })
    if (route.reportedContextWindow === null) delete out['context_window']
    else out['context_window'] = route.reportedContextWindow
    return out
  }

  private modelObject(m: MockModel): Record<string, unknown> {
    const out: Record<string, unknown> = {
      id: m.id,
      object: 'model',
      created: 0,
      owned_by: 'compaction-sim',
      context_window: m.contextWindow,
    }
    if (m.imageTokens !== undefined) out['image_tokens'] = m.imageTokens
    if (m.defaultMaxTokens !== undefined) out['default_max_tokens'] = m.defaultMaxTokens
    if (m.maxOutputTokens !== undefined) out['max_output_tokens'] = m.maxOutputTokens
    return out
  }

  private async chat(request: Request, path: string): Promise<Response> {
    const time = this.spec.clock.now()
    const text = await request.text()
    let body
    try {
      body = this.spec.wire === 'anthropic'
        ? parseAnthropicRequest(text, request.headers)
        : parseChatRequest(this.spec.wire, text, request.headers)
    } catch (err) {
      if (err instanceof WireRequestError)
        return this.refuse('POST', path, 400, errorBody(err.message, 'invalid_request_error', 'invalid_request', err.path))
      throw err
    }
    const modelInfo = this.spec.models.get(body.model)
    const route = this.spec.routes.get(body.model)
    const known = this.spec.routes.size > 0 ? route !== undefined : this.spec.models.size === 0 || modelInfo !== undefined
    if (!known && !this.spec.acceptUnknownModels) {
      return this.refuse(
        'POST',
        path,
        404,
        errorBody(`The model '${body.model}' does not exist`, 'invalid_request_error', 'model_not_found', 'model'),
      )
    }
    if (this.captured.length >= this.spec.requestsMax) {
      return this.refuse(
        'POST',
        path,
        500,
        errorBody(`mock provider: more than ${this.spec.requestsMax} requests`, 'mock_internal_error', null),
      )
    }
    const { body: raw, ...fields } = body
    const parsed: ParsedRequest = { ...fields, index: this.captured.length, modelInfo, route, wireBody: raw }
    const imageTokens = modelInfo?.imageTokens
    const estimate = this.cache.estimate(parsed.model, parsed.messages, parsed.tools, imageTokens, time)
    const providerPromptTokens = route === undefined
      ? estimate.promptTokens
      // The §9.2 segment digests (0 = TOOLS) key the tokenizer's per-message cache.
      : this.tokenizer(route).promptTokens(
        parsed.messages, parsed.tools, route.imageTokens ?? undefined, estimate.handle.segmented.digests.slice(1),
      )
    parsed.providerPromptTokens = providerPromptTokens
    const enforced = route === undefined ? null : enforcedOutcome(route, parsed, providerPromptTokens)
    let outcome: PlannedOutcome
    if (enforced !== null) {
      this.spec.plan.observe?.(parsed)
      outcome = enforced
    } else {
      try {
        if (this.spec.plan.prepare !== undefined) await this.spec.plan.prepare(parsed)
        outcome = this.spec.plan.next(parsed)
      } catch (err) {
        const error = err instanceof Error ? err : new Error(String(err))
        this.internalErrors.push(error)
        outcome = {
          kind: 'reject',
          rejection: {
            status: 500,
            body: { error: { message: `mock provider: ${error.message}`, type: 'mock_internal_error', param: null, code: null } },
          },
          expectedCode: 'SERVER',
        }
      }
    }
    this.capture(parsed, raw, request, path, time, outcome, providerPromptTokens)
    this.cache.complete(estimate, outcome.kind === 'reply')
    const ctx = (reply: PlannedReply): ChunkContext => ({
      id: `${this.spec.idPrefix}-${parsed.index}`,
      created: Math.floor(time / 1000),
      model: parsed.model,
      includeUsage: parsed.includeUsage,
      usage: reply.usage
        ?? estimatedUsage(estimate, reply.blocks, providerPromptTokens, route === undefined ? undefined : this.tokenizer(route)),
      deltaChars: reply.deltaChars ?? this.spec.deltaChars,
      ...(route === undefined ? {} : { usageMode: route.usage }),
    })
    this.served.push(worldRequestOf(parsed, outcome, (reply) => ctx(reply).usage, route?.usage))
    return this.render(outcome, parsed, request, ctx)
  }

  private capture(
    parsed: ParsedRequest,
    raw: CapturedWireRequest['body'],
    request: Request,
    path: string,
    time: number,
    outcome: PlannedOutcome,
    providerPromptTokens: number,
  ): void {
    const c: CapturedWireRequest = {
      index: parsed.index,
      time,
      wire: parsed.wire,
      method: request.method,
      path,
      headers: redactedHeaders(request.headers),
      purpose: parsed.purpose,
      model: parsed.model,
      messages: parsed.messages,
      body: raw,
      outcome: outcome.kind,
      providerPromptTokens,
    }
    if (parsed.reasoningEffort !== undefined) c.reasoningEffort = parsed.reasoningEffort
    if (parsed.temperature !== undefined) c.temperature = parsed.temperature
    if (parsed.maxTokens !== undefined) c.maxTokens = parsed.maxTokens
    if (parsed.stop !== undefined) c.stop = parsed.stop
    if (parsed.tools !== undefined) c.tools = parsed.tools
    if (outcome.expectedCode !== undefined) c.expectedFailureCode = outcome.expectedCode
    if (outcome.kind === 'reject' && outcome.rejectionKind !== undefined) c.rejectionKind = outcome.rejectionKind
    this.captured.push(c)
  }

  /** The route's tokenizer, one instance per route (its per-message cache lives as long as the provider). */
  private tokenizer(route: MockRoute): ProviderTokenizer {
    let t = this.tokenizers.get(route.model)
    if (t === undefined) {
      t = createTokenizer(route.tokenizer)
      this.tokenizers.set(route.model, t)
    }
    return t
  }

  private headers(parsed: ParsedRequest, sse: boolean): Record<string, string> {
    if (this.spec.wire === 'anthropic') {
      const id = { 'request-id': `req_mock_${parsed.index}`, 'x-request-id': `req_mock_${parsed.index}` }
      return sse
        ? { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', ...id }
        : { 'content-type': 'application/json', ...id }
    }
    return sse
      ? { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', 'x-request-id': `req_mock_${parsed.index}` }
      : { 'content-type': 'application/json', 'x-request-id': `req_mock_${parsed.index}` }
  }

  private async render(
    outcome: PlannedOutcome,
    parsed: ParsedRequest,
    request: Request,
    ctx: (reply: PlannedReply) => ChunkContext,
  ): Promise<Response> {
    const wire = this.spec.wire
    if (outcome.kind === 'reject' && outcome.rejection.raw !== undefined) {
      return new Response(outcome.rejection.raw, { status: outcome.rejection.status, headers: outcome.rejection.headers ?? {} })
    }
    if (outcome.kind === 'hang' && outcome.late !== undefined && (outcome.afterChunks === undefined || !parsed.stream)) {
      // After the caller's timeout: the late answer is rendered once the request is aborted, for nobody to read.
      const late: PlannedOutcome = outcome.late
      return new Promise<Response>((resolve) => {
        const answer = (): void => { resolve(this.render(late, parsed, request, ctx)) }
        if (request.signal.aborted) answer()
        else request.signal.addEventListener('abort', answer, { once: true })
      })
    }
    if (wire === 'anthropic') return this.renderAnthropic(outcome, parsed, request, ctx)
    switch (outcome.kind) {
      case 'reply': {
        const c = ctx(outcome.reply)
        if (!parsed.stream) return json(200, completionBody(wire, outcome.reply, c), this.headers(parsed, false))
        const frames = replyEvents(wire, outcome.reply, c).map(sseFrame)
        return new Response(frameStream(frames, 'close'), { status: 200, headers: this.headers(parsed, true) })
      }
      case 'reject':
        return json(outcome.rejection.status, outcome.rejection.body, {
          'x-request-id': `req_mock_${parsed.index}`,
          ...outcome.rejection.headers,
        })
      case 'reset':
        return Response.error()
      case 'empty':
        return parsed.stream
          ? new Response(frameStream([sseFrame('[DONE]')], 'close'), { status: 200, headers: this.headers(parsed, true) })
          : json(
              200,
              {
                id: `${this.spec.idPrefix}-${parsed.index}`,
                object: 'chat.completion',
                created: ctx({ blocks: [] }).created,
                model: parsed.model,
                choices: [],
              },
              this.headers(parsed, false),
            )
      case 'interrupt':
        return this.interrupted(outcome.reply, outcome.afterChunks, outcome.cut, parsed, ctx)
      case 'hang': {
        if (outcome.afterChunks === undefined || !parsed.stream) {
          // Before headers: answer only once the client gives up (its abort reaches the handler's request signal).
          return new Promise<Response>((resolve) => {
            if (request.signal.aborted) resolve(Response.error())
            request.signal.addEventListener('abort', () => resolve(Response.error()), { once: true })
          })
        }
        const frames = this.partialFrames(outcome.reply ?? { blocks: [] }, outcome.afterChunks, ctx)
        return new Response(frameStream(frames, 'hang'), { status: 200, headers: this.headers(parsed, true) })
      }
      default:
        return assertNever(outcome, 'planned outcome')
    }
  }

  /** `render` on the anthropic wire: the same outcomes and delivery timing, in Anthropic's events and envelope. */
  private async renderAnthropic(
    outcome: PlannedOutcome,
    parsed: ParsedRequest,
    request: Request,
    ctx: (reply: PlannedReply) => ChunkContext,
  ): Promise<Response> {
    const sse = (frames: readonly Uint8Array[], end: 'close' | 'error' | 'hang'): Response =>
      new Response(frameStream(frames, end), { status: 200, headers: this.headers(parsed, true) })
    const partial = (reply: PlannedReply, afterChunks: number): Uint8Array[] => {
      const { events, finishIndex } = anthropicReplyEvents(reply, ctx(reply))
      return events.slice(0, Math.min(afterChunks, finishIndex)).map(anthropicFrame)
    }
    switch (outcome.kind) {
      case 'reply': {
        const c = ctx(outcome.reply)
        if (!parsed.stream) return json(200, anthropicMessageBody(outcome.reply, c), this.headers(parsed, false))
        return sse(anthropicReplyEvents(outcome.reply, c).events.map(anthropicFrame), 'close')
      }
      case 'reject': {
        const r = toAnthropicRejection(outcome.rejection)
        return json(r.status, r.body, { 'request-id': `req_mock_${parsed.index}`, ...r.headers })
      }
      case 'reset':
        return Response.error()
      case 'empty': {
        const c = ctx({ blocks: [] })
        if (parsed.stream) return sse(anthropicEmptyEvents(c).map(anthropicFrame), 'close')
        const body = { ...anthropicMessageBody({ blocks: [] }, c), stop_reason: null }
        return json(200, body, this.headers(parsed, false))
      }
      case 'interrupt': {
        const { reply, afterChunks, cut } = outcome
        if (!parsed.stream) {
          if (cut.kind === 'in-band') return json(200, anthropicErrorEvent(cut.error).data, this.headers(parsed, false))
          const text = JSON.stringify(anthropicMessageBody(reply, ctx(reply)))
          return new Response(frameStream([encoder.encode(text.slice(0, Math.floor(text.length / 2)))], cut.kind), {
            status: 200,
            headers: this.headers(parsed, false),
          })
        }
        const frames = partial(reply, afterChunks)
        switch (cut.kind) {
          case 'error':
          case 'close':
            return sse(frames, cut.kind)
          case 'in-band':
            return sse([...frames, anthropicFrame(anthropicErrorEvent(cut.error))], 'close')
          default:
            return assertNever(cut, 'stream cut')
        }
      }
      case 'hang':
        if (outcome.afterChunks === undefined || !parsed.stream) {
          return new Promise<Response>((resolve) => {
            if (request.signal.aborted) resolve(Response.error())
            request.signal.addEventListener('abort', () => resolve(Response.error()), { once: true })
          })
        }
        return sse(partial(outcome.reply ?? { blocks: [] }, outcome.afterChunks), 'hang')
      default:
        return assertNever(outcome, 'planned outcome')
    }
  }

  private partialFrames(reply: PlannedReply, afterChunks: number, ctx: (reply: PlannedReply) => ChunkContext): Uint8Array[] {
    const c = ctx(reply)
    const events = replyEvents(this.spec.wire, reply, c)
    return events.slice(0, Math.min(afterChunks, finishEventIndex(events, hasUsageChunk(c)))).map(sseFrame)
  }

  private interrupted(
    reply: PlannedReply,
    afterChunks: number,
    cut: StreamCut,
    parsed: ParsedRequest,
    ctx: (reply: PlannedReply) => ChunkContext,
  ): Response {
    if (!parsed.stream) {
      if (cut.kind === 'in-band') return json(200, { error: cut.error }, this.headers(parsed, false))
      const text = JSON.stringify(completionBody(this.spec.wire, reply, ctx(reply)))
      const frames = [encoder.encode(text.slice(0, Math.floor(text.length / 2)))]
      return new Response(frameStream(frames, cut.kind), { status: 200, headers: this.headers(parsed, false) })
    }
    const frames = this.partialFrames(reply, afterChunks, ctx)
    switch (cut.kind) {
      case 'error':
      case 'close':
        return new Response(frameStream(frames, cut.kind), { status: 200, headers: this.headers(parsed, true) })
      case 'in-band':
        return new Response(frameStream([...frames, sseFrame(JSON.stringify({ error: cut.error }))], 'close'), {
          status: 200,
          headers: this.headers(parsed, true),
        })
      default:
        return assertNever(cut, 'stream cut')
    }
  }
}
