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

describe('classifyWireRejection on the provider-world enforcement bodies (issue #15)', () => {
  const openai = (message: string, param: string | null, code: string | null): unknown => ({ error: { message, type: 'invalid_request_error', param, code } })
  const anthropic = (message: string): unknown => ({ type: 'error', error: { type: 'invalid_request_error', message } })
  const code = (body: unknown): string => classifyWireRejection(r(400, body)).code

  it('reads every wording of the window rule that §1.2.2 lists as CONTEXT_WINDOW_EXCEEDED', () => {
    expect(code(openai(
      "This model's maximum context length is 1000 tokens. However, you requested 1001 tokens (600 in the messages, 401 in the completion). " +
        'Please reduce the length of the messages or completion.',
      'messages', 'context_length_exceeded',
    ))).toBe('CONTEXT_WINDOW_EXCEEDED')
    expect(code(openai(
      "This model's maximum context length is 1000 tokens. However, you requested 1100 tokens (600 in the messages, 500 in the completion). " +
        'Please reduce the length of the messages or completion.',
      null, 'invalid_request_error',
    ))).toBe('CONTEXT_WINDOW_EXCEEDED')
    expect(code(anthropic('prompt is too long: 1500 tokens > 1000 maximum'))).toBe('CONTEXT_WINDOW_EXCEEDED')
  })

  it("leaves Anthropic's prompt + max_tokens overflow UNKNOWN: §1.2.2 lists only messages starting \"prompt is too long\"", () => {
    expect(code(anthropic(
      'input length and `max_tokens` exceed context limit: 800 + 300 > 1000, decrease input length or `max_tokens` and try again',
    ))).toBe('UNKNOWN')
  })

  it('leaves the max-output and strict-validation 400s UNKNOWN (no row of §1.2.2)', () => {
    const bodies = [
      openai('max_tokens is too large: 8192. This model supports at most 4096 completion tokens, whereas you provided 8192.', 'max_tokens', 'invalid_value'),
      openai('Invalid max_tokens value, the valid range of max_tokens is [1, 4096]', null, 'invalid_request_error'),
      anthropic('max_tokens: 21333 > 4096, which is the maximum allowed number of output tokens for claude-x'),
      openai(
        "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. " +
          'The following tool_call_ids did not have response messages: call_1',
        'messages.[3].role', null,
      ),
      openai("Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.", 'messages.[1].role', null),
      openai("Messages with role 'tool' must be a response to a preceding message with 'tool_calls'", null, 'invalid_request_error'),
      openai('Missing `reasoning_content` field in the assistant message at message index 4.', null, 'invalid_request_error'),
      anthropic('messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_1.'),
      anthropic('messages: roles must alternate between "user" and "assistant", but found multiple "user" roles in a row'),
      anthropic('messages.1: The final block in an assistant message cannot be `thinking`.'),
    ]
    expect(bodies.map(code)).toEqual(bodies.map(() => 'UNKNOWN'))
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
