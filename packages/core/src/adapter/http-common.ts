/**
 * The plumbing the HTTP adapters share (`http-openai.ts` for the OpenAI-compatible wires, `http-anthropic.ts`
 * for the Anthropic messages wire), so each adapter file holds only its wire's mapping: option checks, the
 * per-call abort/timeout signals and their failure codes (`ABORTED`, `TIMEOUT`, `TRANSPORT`, §1.2.1), body
 * reads, the SSE read loop over core's `SseParser`, the §1.2.2 rejection record of an HTTP error response,
 * and the static model table behind `resolveModel` (§2.7). Nothing here knows a wire's JSON.
 */
import type { LlmModelInfo } from '../log/llm.ts'
import { FailureCode, LlmError } from './contract.ts'
import { SseParseError, SseParser, type SseEvent } from './sse-parser.ts'
import { retryAfterMsOf, type WireRejection } from './wire-rejection.ts'

/** Static metadata of one model (a row of the adapter's table; overrides the metadata endpoint). */
export interface StaticModelInfo {
  id: string
  name?: string
  contextWindow?: number
  imageTokens?: number
  defaultMaxTokens?: number
  /** Largest `max_tokens` the route accepts (`LlmModelInfo.maxOutputTokens`, hardened HARD-2). */
  maxOutputTokens?: number
}

/** Where `resolveModel` looks for a model that is not in the static table. */
export type ModelMetadataSource =
  | 'endpoint' // GET `<baseURL>/models/<id>` (each adapter documents the fields it reads)
  | 'static' // the table only; an unlisted model has unknown capacity

/** Why adapter options were refused. */
export type HttpAdapterConfigErrorCode =
  | 'UNKNOWN_KEY' // a key the options do not define
  | 'INVALID_VALUE' // a value of the wrong type or range

/** Refused adapter options (a caller bug; thrown by the adapters' `resolve…AdapterOptions`). */
export class HttpAdapterConfigError extends Error {
  override readonly name = 'HttpAdapterConfigError'
  readonly code: HttpAdapterConfigErrorCode

  constructor(code: HttpAdapterConfigErrorCode, message: string, options?: ErrorOptions) {
    super(message, options)
    this.code = code
  }
}

/** Throws `HttpAdapterConfigError('UNKNOWN_KEY')` for the first key of `options` not in `known`. */
export function checkOptionKeys(options: object, known: ReadonlySet<string>): void {
  for (const key of Object.keys(options)) {
    if (!known.has(key)) throw new HttpAdapterConfigError('UNKNOWN_KEY', `unknown adapter option "${key}"`)
  }
}

/** `baseURL` parsed and without trailing slashes. Throws `HttpAdapterConfigError('INVALID_VALUE')`. */
export function resolveBaseUrl(baseURL: string): string {
  let base: URL
  try {
    base = new URL(baseURL)
  } catch (err) {
    throw new HttpAdapterConfigError('INVALID_VALUE', `baseURL is not a URL: ${baseURL}`, { cause: err })
  }
  return base.href.replace(/\/+$/, '')
}

/** A positive safe integer option, or `fallback` when absent. Throws `HttpAdapterConfigError('INVALID_VALUE')` naming `name`. */
export function positiveIntOption(value: number | undefined, fallback: number, name: string): number {
  const out = value ?? fallback
  if (!Number.isSafeInteger(out) || out <= 0) throw new HttpAdapterConfigError('INVALID_VALUE', `${name} must be a positive integer`)
  return out
}

/**
 * The fetch an adapter calls: the given one, else a wrapper that looks the global up at each call (msw and
 * nock patch `globalThis.fetch` after adapters may exist, so capturing it at construction would bypass them).
 */
export function fetchOf(given: typeof fetch | undefined): typeof fetch {
  return given ?? ((input, init) => globalThis.fetch(input, init))
}

/** The static model table of the options, rows frozen. */
export function modelTable(models: readonly StaticModelInfo[] | undefined): ReadonlyMap<string, StaticModelInfo> {
  return new Map((models ?? []).map((m) => [m.id, Object.freeze({ ...m })]))
}

/** `LlmModelInfo` of one route from its table row (undefined: unknown capacity, the model id as its name). */
export function infoOf(provider: string, model: string, row: StaticModelInfo | undefined): LlmModelInfo {
  const info: LlmModelInfo = { provider, id: model, name: row?.name ?? model }
  if (row?.contextWindow !== undefined) info.context = { contextWindow: row.contextWindow }
  if (row?.imageTokens !== undefined) info.imageTokens = row.imageTokens
  if (row?.defaultMaxTokens !== undefined) info.defaultMaxTokens = row.defaultMaxTokens
  if (row?.maxOutputTokens !== undefined) info.maxOutputTokens = row.maxOutputTokens
  return info
}

/** A JSON object as the wire readers see it. */
export type Json = Record<string, unknown>

/** `value` when it is a plain JSON object, else undefined. */
export function record(value: unknown): Json | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Json) : undefined
}

/** `value` when it is a non-negative safe integer (a token count), else undefined. */
export function count(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : undefined
}

/** The failure of a reply that breaks its wire's grammar (`UNKNOWN`: no recovery path handles it). */
export function malformed(what: string): LlmError {
  return new LlmError({ message: `malformed provider reply: ${what}`, code: FailureCode.UNKNOWN })
}

/** `text` parsed as JSON, or undefined when it is not JSON (callers fall back to the raw text). */
export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown
  } catch {
    // not JSON: the caller falls back to the raw text
    return undefined
  }
}

/** A network-error `Response` (`Response.error()`, e.g. from an injected fetch that is a mock handler) is a reset. */
export function networkErrorResponse(): LlmError {
  return new LlmError({ message: 'request failed before a response: network error', code: FailureCode.TRANSPORT })
}

/** The two signals of one call: the caller's (→ `ABORTED`) and the injected timeout's (→ `TIMEOUT`). */
export interface CallSignals {
  readonly caller: AbortSignal | undefined
  readonly timeout: AbortSignal | undefined
  /** Both combined (what `fetch` gets); undefined when there is neither. */
  readonly combined: AbortSignal | undefined
}

/** The signals of one call; `timeout` is the adapter's per-call timeout factory, called once here. */
export function callSignals(caller: AbortSignal | undefined, timeout: (() => AbortSignal) | undefined): CallSignals {
  const timeoutSignal = timeout?.()
  const all = [caller, timeoutSignal].filter((s): s is AbortSignal => s !== undefined)
  return { caller, timeout: timeoutSignal, combined: all.length <= 1 ? all[0] : AbortSignal.any(all) }
}

/** Throws `LlmError(ABORTED)` when the caller aborted, else `LlmError(TIMEOUT)` when the timeout fired. */
export function throwIfAborted(signals: CallSignals): void {
  if (signals.caller?.aborted === true) throw new LlmError({ message: 'request aborted', code: FailureCode.ABORTED }, { cause: signals.caller.reason })
  if (signals.timeout?.aborted === true)
    throw new LlmError({ message: 'request timed out', code: FailureCode.TIMEOUT }, { cause: signals.timeout.reason })
}

/**
 * The failure of a thrown fetch or body error: an `LlmError` as it is; `ABORTED` when the caller aborted,
 * `TIMEOUT` when the timeout fired, else `TRANSPORT` with `what` and the error (and its cause) as the message.
 */
export function transportError(err: unknown, signals: CallSignals, what: string): LlmError {
  if (err instanceof LlmError) return err
  if (signals.caller?.aborted === true) return new LlmError({ message: 'request aborted', code: FailureCode.ABORTED }, { cause: err })
  if (signals.timeout?.aborted === true) return new LlmError({ message: 'request timed out', code: FailureCode.TIMEOUT }, { cause: err })
  const detail = err instanceof Error ? `${err.message}${err.cause instanceof Error ? `: ${err.cause.message}` : ''}` : String(err)
  return new LlmError({ message: `${what}: ${detail}`, code: FailureCode.TRANSPORT }, { cause: err })
}

/** The whole body as text; a read failure is classified by `transportError`. */
export async function readText(response: Response, signals: CallSignals): Promise<string> {
  try {
    return await response.text()
  } catch (err) {
    throw transportError(err, signals, 'reading the response failed')
  }
}

/**
 * The §1.2.2 rejection record of an HTTP error response: status, parsed body, raw text, the request-id
 * header (the first of `requestIdHeaders` present) and the retry hint (`retryAfterMsOf`).
 */
export function httpRejection(response: Response, text: string, requestHasImages: boolean, requestIdHeaders: readonly string[]): WireRejection {
  const out: WireRejection = { status: response.status, body: parseJson(text), text, requestHasImages }
  const requestId = requestIdOf(response.headers, requestIdHeaders)
  if (requestId !== undefined) out.requestId = requestId
  const retry = retryAfterMsOf(response.headers)
  if (retry !== undefined) out.retryAfterMs = retry
  return out
}

/** The first of `names` present in `headers`. */
export function requestIdOf(headers: Headers, names: readonly string[]): string | undefined {
  for (const name of names) {
    const value = headers.get(name)
    if (value !== null) return value
  }
  return undefined
}

/**
 * The SSE events of a streaming body, one batch per body read (in order; the last batch holds what the end
 * of the body completed). Bounded by `maxEventChars` (a breach is `LlmError(UNKNOWN)`); a read error is
 * classified by `transportError`; an abort or timeout is thrown after the read it interrupts. The reader
 * is cancelled when either signal fires (a mocked fetch may not reject a pending read on abort) and when
 * the consumer stops early, so an abandoned stream never holds the connection.
 */
export async function* sseBatches(response: Response, maxEventChars: number, signals: CallSignals): AsyncGenerator<SseEvent[]> {
  const body = response.body
  if (body === null) throw new LlmError({ message: 'the response has no body', code: FailureCode.TRANSPORT })
  const reader = body.getReader()
  const decoder = new TextDecoder()
  const parser = new SseParser(maxEventChars)
  const onAbort = (): void => {
    reader.cancel().catch(() => undefined /* the body is already errored or closed: nothing to release */)
  }
  const watched = [signals.caller, signals.timeout].filter((s): s is AbortSignal => s !== undefined)
  for (const s of watched) s.addEventListener('abort', onAbort, { once: true })
  try {
    throwIfAborted(signals)
    for (;;) {
      let read: Awaited<ReturnType<typeof reader.read>>
      try {
        read = await reader.read()
      } catch (err) {
        throw transportError(err, signals, 'the response stream failed')
      }
      throwIfAborted(signals)
      let events: SseEvent[]
      try {
        events = parser.feed(read.done ? decoder.decode() : decoder.decode(read.value, { stream: true }))
      } catch (err) {
        if (err instanceof SseParseError) throw new LlmError({ message: err.message, code: FailureCode.UNKNOWN }, { cause: err })
        throw err
      }
      yield events
      if (read.done) return
    }
  } finally {
    for (const s of watched) s.removeEventListener('abort', onAbort)
    onAbort()
  }
}

/** What `fetchModelMetadata` needs of an adapter's resolved options. */
export interface MetadataRequest {
  readonly fetch: typeof fetch
  /** The full URL, e.g. `<baseURL>/models/<encoded id>`. */
  readonly url: string
  readonly headers: Readonly<Record<string, string>>
  readonly requestIdHeaders: readonly string[]
}

/**
 * GET one model's metadata object: the parsed JSON object, or undefined for a 404 (an unknown model has
 * unknown capacity). Throws `LlmError`: transport failures as `transportError` classifies them, other HTTP
 * failures classified by `classify` (§1.2.2), a 2xx body that is not a JSON object `UNKNOWN`.
 */
export async function fetchModelMetadata(
  request: MetadataRequest, signal: AbortSignal | undefined, classify: (rejection: WireRejection) => LlmError,
): Promise<Json | undefined> {
  const signals = callSignals(signal, undefined)
  const init: RequestInit = { method: 'GET', headers: { ...request.headers, accept: 'application/json' } }
  if (signal !== undefined) init.signal = signal
  let response: Response
  try {
    response = await request.fetch(request.url, init)
  } catch (err) {
    throw transportError(err, signals, 'model metadata request failed')
  }
  if (response.type === 'error') throw networkErrorResponse()
  const text = await readText(response, signals)
  if (response.status === 404) return undefined
  if (!response.ok) throw classify(httpRejection(response, text, false, request.requestIdHeaders))
  const body = record(parseJson(text))
  if (body === undefined) throw malformed('model metadata is not a JSON object')
  return body
}
