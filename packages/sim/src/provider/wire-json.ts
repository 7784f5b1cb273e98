/**
 * The JSON-reading helpers shared by the mock's request decoders (`wire-request.ts` for the OpenAI-compatible
 * wires, `anthropic-request.ts` for the Anthropic messages wire): the body parse, typed field readers and the
 * purpose header. Each reader returns the value with its type narrowed or throws `WireRequestError` naming the
 * JSON path, which the mock answers with HTTP 400 `invalid_request_error`.
 */
import type { JsonValue } from '@compaction-sim/core'
import type { RequestPurpose } from './types.ts'

/** The header that carries the call purpose (the core adapter's `PURPOSE_HEADER`; model-invisible, §8.2). */
export const PURPOSE_HEADER = 'x-compaction-purpose'

/** A request body the mock refuses (HTTP 400 `invalid_request_error`); `path` is a JSON path. */
export class WireRequestError extends Error {
  override readonly name = 'WireRequestError'
  readonly code = 'INVALID_REQUEST'
  readonly path: string

  constructor(path: string, message: string) {
    super(`${path}: ${message}`)
    this.path = path
  }
}

/** A JSON object of a request body. */
export type Obj = { [key: string]: JsonValue }

/** The request body text as JSON. Throws `WireRequestError` at `$` when it does not parse. */
export function parseJsonBody(text: string): JsonValue {
  try {
    return JSON.parse(text) as JsonValue
  } catch (err) {
    throw new WireRequestError('$', `body is not JSON (${err instanceof Error ? err.message : String(err)})`)
  }
}

/** `value` as an object (not null, not an array). Throws `WireRequestError` at `path`. */
export function obj(value: JsonValue | undefined, path: string): Obj {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new WireRequestError(path, 'expected an object')
  return value
}

/** `value` as a string. Throws `WireRequestError` at `path`. */
export function str(value: JsonValue | undefined, path: string): string {
  if (typeof value !== 'string') throw new WireRequestError(path, 'expected a string')
  return value
}

/** `value` as a finite number, or undefined when absent or null. Throws `WireRequestError` at `path`. */
export function optNumber(value: JsonValue | undefined, path: string): number | undefined {
  if (value === undefined || value === null) return undefined
  if (typeof value !== 'number' || !Number.isFinite(value)) throw new WireRequestError(path, 'expected a number')
  return value
}

/** The call purpose named by the `PURPOSE_HEADER` value (absent: a conversation call). Throws `WireRequestError`. */
export function purposeOf(value: string | null): RequestPurpose {
  if (value === null) return 'conversation'
  if (value === 'compaction' || value === 'session-title') return value
  throw new WireRequestError(`header ${PURPOSE_HEADER}`, `unknown purpose "${value}"`)
}

/**
 * The decoded size in bytes of base64 `data` (standard or URL-safe alphabet, padding optional, whitespace
 * ignored), without decoding it: how the mock recovers an inline image's byte size for the image limits.
 */
export function base64Bytes(data: string): number {
  const compact = data.replace(/\s+/g, '').replace(/=+$/, '')
  return Math.floor((compact.length * 3) / 4)
}

/**
 * The byte size of the payload of a `data:` URL (base64 or percent-encoded), or undefined for any other URL.
 * A percent-encoded payload that does not decode counts its raw length.
 */
export function dataUrlBytes(url: string): number | undefined {
  const m = /^data:([^,]*),/.exec(url)
  if (m === null) return undefined
  const payload = url.slice(m[0].length)
  if (/;base64$/i.test(m[1] ?? '')) return base64Bytes(payload)
  try {
    return new TextEncoder().encode(decodeURIComponent(payload)).length
  } catch {
    // a malformed percent escape: the raw payload length is the best estimate of its size
    return payload.length
  }
}
