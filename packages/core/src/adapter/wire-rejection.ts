/**
 * The recognised wire rejections of §1.2.2, as one pure classifier shared by the HTTP adapters: an HTTP
 * error response or an in-band SSE error object in, a canonical `LlmFailure` out. Matching is on status
 * plus a structured field where one exists, else on the message text (case-insensitive); anything not in
 * the table is `UNKNOWN`, which no recovery path handles.
 */
import type { LlmFailure } from '../log/llm.ts'
import { FailureCode } from './contract.ts'

/** What the classifier looks at. `status` is absent for an in-band error (an SSE error event after a 200). */
export interface WireRejection {
  /** HTTP status of the response; absent for an in-band error event. */
  status?: number
  /** The parsed response body (or in-band event payload); any JSON value, or undefined when not JSON. */
  body: unknown
  /** The raw body text, used for the message when the body has no structured message. */
  text: string
  /** True when the rejected request carried at least one image (the 413 row needs it). */
  requestHasImages: boolean
  /** `x-request-id` of the response, when any. */
  requestId?: string
  /** Retry hint from `retry-after-ms` / `retry-after` (seconds) headers, in milliseconds. */
  retryAfterMs?: number
}

const MESSAGE_CHARS_MAX = 500

function record(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined
}

function lower(value: unknown): string {
  return typeof value === 'string' ? value.toLowerCase() : ''
}

/**
 * The error object of a body: `body.error` when it is an object (OpenAI, DeepSeek, the project mock),
 * else the body itself when it is an object (bare `{message, code}` bodies), else an empty object.
 */
function errorObject(body: unknown): Record<string, unknown> {
  const top = record(body)
  return record(top?.['error']) ?? top ?? {}
}

function messageOf(body: unknown, text: string, status: number | undefined): string {
  const err = errorObject(body)
  const top = record(body)
  if (typeof err['message'] === 'string' && err['message'] !== '') return err['message']
  if (typeof top?.['error'] === 'string' && top['error'] !== '') return top['error']
  const trimmed = text.trim()
  const head = status === undefined ? 'in-band error' : `HTTP ${status}`
  return trimmed === '' ? head : `${head}: ${trimmed.slice(0, MESSAGE_CHARS_MAX)}`
}

/**
 * Classifies one rejection per the §1.2.2 table:
 * - 400 (or in-band) with `error.code` `context_length_exceeded`, or a message containing
 *   "maximum context length" → `CONTEXT_WINDOW_EXCEEDED` (OpenAI and DeepSeek rows); 400 (or in-band)
 *   `invalid_request_error` whose message starts "prompt is too long" → the same (Anthropic messages row);
 * - 400 (or in-band) with `error.type` `image_offload_required` or `error.code` `IMAGE_OFFLOAD_REQUIRED`
 *   → `IMAGE_OFFLOAD_REQUIRED`, `offloadImages` copied when it is a finite number (a zero or fractional
 *   count is passed on so that the core can refuse it, FAULT-15);
 * - 413 with a positive integer `offloadImages` on a request with images → `IMAGE_OFFLOAD_REQUIRED`, else `UNKNOWN`;
 * - 429 → `RATE_LIMIT`; 500–599 → `SERVER`;
 * - anything else → `UNKNOWN`.
 * An in-band error object may carry its own numeric `status` (or numeric `code`), used as the status.
 * The result carries `status` (HTTP or in-band), `requestId` and `providerRetryAfterMs` when known.
 */
export function classifyWireRejection(rejection: WireRejection): LlmFailure {
  const err = errorObject(rejection.body)
  const inBandStatus = typeof err['status'] === 'number' ? err['status'] : typeof err['code'] === 'number' ? err['code'] : undefined
  const status = rejection.status ?? inBandStatus
  const message = messageOf(rejection.body, rejection.text, rejection.status)
  const code = lower(err['code'])
  const type = lower(err['type'])
  const badRequest = status === undefined || status === 400
  const failure = (canonical: string): LlmFailure => {
    const out: LlmFailure = { message, code: canonical }
    if (status !== undefined) out.status = status
    if (rejection.retryAfterMs !== undefined) out.providerRetryAfterMs = rejection.retryAfterMs
    if (rejection.requestId !== undefined) out.requestId = rejection.requestId
    return out
  }
  const offload = err['offloadImages']
  if (badRequest && (type === 'image_offload_required' || code === 'image_offload_required')) {
    const out = failure(FailureCode.IMAGE_OFFLOAD_REQUIRED)
    if (typeof offload === 'number' && Number.isFinite(offload)) out.offloadImages = offload
    return out
  }
  if (status === 413) {
    if (!rejection.requestHasImages || typeof offload !== 'number' || !Number.isSafeInteger(offload) || offload <= 0)
      return failure(FailureCode.UNKNOWN)
    return { ...failure(FailureCode.IMAGE_OFFLOAD_REQUIRED), offloadImages: offload }
  }
  if (badRequest && (code === 'context_length_exceeded' || message.toLowerCase().includes('maximum context length'))) {
    return failure(FailureCode.CONTEXT_WINDOW_EXCEEDED)
  }
  if (badRequest && type === 'invalid_request_error' && message.toLowerCase().startsWith('prompt is too long')) {
    return failure(FailureCode.CONTEXT_WINDOW_EXCEEDED) // the Anthropic messages row
  }
  if (status === 429) return failure(FailureCode.RATE_LIMIT)
  if (status !== undefined && status >= 500 && status <= 599) return failure(FailureCode.SERVER)
  return failure(FailureCode.UNKNOWN)
}

/**
 * The retry hint of a response in milliseconds: `retry-after-ms` (OpenAI) first, then `retry-after` in
 * seconds. An HTTP-date `retry-after` is ignored (reading it would need the wall clock).
 */
export function retryAfterMsOf(headers: Headers): number | undefined {
  const ms = Number(headers.get('retry-after-ms') ?? Number.NaN)
  if (Number.isFinite(ms) && ms >= 0) return Math.round(ms)
  const raw = headers.get('retry-after')
  if (raw === null || !/^\d+(\.\d+)?$/.test(raw.trim())) return undefined
  return Math.round(Number(raw) * 1000)
}
