/**
 * The §1.2.2 table as the HTTP adapters apply it: status plus a structured field, else the message text;
 * in-band error objects by the same rules; everything else UNKNOWN.
 */
import { describe, expect, it } from 'vitest'
import { classifyWireRejection, retryAfterMsOf, type WireRejection } from '../../src/adapter/wire-rejection.ts'

const r = (status: number | undefined, body: unknown, extra: Partial<WireRejection> = {}): WireRejection => {
  const out: WireRejection = { body, text: JSON.stringify(body), requestHasImages: false, ...extra }
  if (status !== undefined) out.status = status
  return out
}

describe('classifyWireRejection', () => {
  it('recognises the OpenAI overflow by its code and the DeepSeek overflow by its message', () => {
    expect(
      classifyWireRejection(r(400, { error: { message: 'too big', type: 'invalid_request_error', code: 'context_length_exceeded' } })),
    ).toEqual({ message: 'too big', code: 'CONTEXT_WINDOW_EXCEEDED', status: 400 })
    expect(
      classifyWireRejection(
        r(400, {
          error: {
            message: "This model's Maximum Context Length is 65536 tokens. However, you requested 70000 tokens",
            type: 'invalid_request_error',
            code: 'invalid_request_error',
          },
        }),
      ).code,
    ).toBe('CONTEXT_WINDOW_EXCEEDED')
    expect(classifyWireRejection(r(413, { error: { message: 'maximum context length exceeded' } })).code).toBe('UNKNOWN')
  })

  it('recognises the project mock image-offload body and passes its count verbatim', () => {
    const body = (k: unknown) => ({
      error: { type: 'image_offload_required', code: 'IMAGE_OFFLOAD_REQUIRED', message: 'remove images', offloadImages: k },
    })
    expect(classifyWireRejection(r(400, body(2)))).toEqual({
      message: 'remove images',
      code: 'IMAGE_OFFLOAD_REQUIRED',
      status: 400,
      offloadImages: 2,
    })
    expect(classifyWireRejection(r(400, body(1.5))).offloadImages).toBe(1.5)
    expect(classifyWireRejection(r(400, body('2'))).offloadImages).toBeUndefined()
  })

  it('accepts a 413 as IMAGE_OFFLOAD_REQUIRED only with images and a positive integer count', () => {
    expect(classifyWireRejection(r(413, { offloadImages: 3, message: 'too many bytes' }, { requestHasImages: true }))).toMatchObject({
      code: 'IMAGE_OFFLOAD_REQUIRED',
      offloadImages: 3,
    })
    expect(classifyWireRejection(r(413, { offloadImages: 3 }, { requestHasImages: false })).code).toBe('UNKNOWN')
    expect(classifyWireRejection(r(413, { offloadImages: 0 }, { requestHasImages: true })).code).toBe('UNKNOWN')
    expect(classifyWireRejection(r(413, 'Request Entity Too Large', { requestHasImages: true, text: 'Request Entity Too Large' }))).toEqual(
      { message: 'HTTP 413: Request Entity Too Large', code: 'UNKNOWN', status: 413 },
    )
  })

  it('maps 429 and 5xx, keeping the retry hint and request id', () => {
    expect(classifyWireRejection(r(429, { error: { message: 'slow down' } }, { retryAfterMs: 2000, requestId: 'req_1' }))).toEqual({
      message: 'slow down',
      code: 'RATE_LIMIT',
      status: 429,
      providerRetryAfterMs: 2000,
      requestId: 'req_1',
    })
    expect(classifyWireRejection(r(500, undefined, { text: '' }))).toEqual({ message: 'HTTP 500', code: 'SERVER', status: 500 })
    expect(classifyWireRejection(r(599, {})).code).toBe('SERVER')
    expect(classifyWireRejection(r(404, { error: { message: 'no such model', code: 'model_not_found' } })).code).toBe('UNKNOWN')
    expect(classifyWireRejection(r(401, { error: 'bad key' })).message).toBe('bad key')
  })

  it('classifies in-band error objects by the same table, using their own status when present', () => {
    expect(classifyWireRejection(r(undefined, { error: { message: 'x', code: 'context_length_exceeded' } })).code).toBe(
      'CONTEXT_WINDOW_EXCEEDED',
    )
    expect(classifyWireRejection(r(undefined, { error: { message: 'busy', status: 503 } }))).toEqual({
      message: 'busy',
      code: 'SERVER',
      status: 503,
    })
    expect(classifyWireRejection(r(undefined, { error: { message: 'slow', code: 429 } })).code).toBe('RATE_LIMIT')
    expect(classifyWireRejection(r(undefined, { error: { message: 'odd' } }))).toEqual({ message: 'odd', code: 'UNKNOWN' })
  })
})

describe('retryAfterMsOf', () => {
  it('prefers retry-after-ms, reads retry-after seconds, ignores HTTP dates', () => {
    expect(retryAfterMsOf(new Headers({ 'retry-after-ms': '250', 'retry-after': '9' }))).toBe(250)
    expect(retryAfterMsOf(new Headers({ 'retry-after': '1.5' }))).toBe(1500)
    expect(retryAfterMsOf(new Headers({ 'retry-after': 'Wed, 21 Oct 2015 07:28:00 GMT' }))).toBeUndefined()
    expect(retryAfterMsOf(new Headers())).toBeUndefined()
  })
})
