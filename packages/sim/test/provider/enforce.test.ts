/**
 * Provider enforcement (issue #15) rule by rule and wire by wire: `enforcedOutcome` on requests parsed by the
 * wire's own parser (so `wireBody` and the decoded messages are what the mock sees), built on `MockRoute`
 * objects directly. Each rejection is checked for the wire's real status and body and for the §1.2.2 code,
 * which must equal what core's classifier (the shared §1.2.2 implementation) derives from the same body.
 */
import { classifyWireRejection } from '@compaction-sim/core'
import { describe, expect, it } from 'vitest'
import { parseAnthropicRequest } from '../../src/provider/anthropic-request.ts'
import {
  ENFORCE_ALL, ENFORCE_OFF, enforcedOutcome, enforcementOf, imageOffloadVerdict, NO_IMAGE_LIMITS, type EnforceSpec, type ImageLimitsSpec,
  type ImageOccurrence,
} from '../../src/provider/enforce.ts'
import type { MockRoute } from '../../src/provider/route.ts'
import { BUILTIN_SUMMARIZER } from '../../src/provider/summarizers.ts'
import type { MockWire, ParsedRequest, PlannedOutcome } from '../../src/provider/types.ts'
import { parseChatRequest } from '../../src/provider/wire-request.ts'

function route(wire: MockWire, extra: Partial<MockRoute> = {}): MockRoute {
  return {
    model: 'm-1', wire, contextWindow: 1000, maxOutputTokens: 4096, imageTokens: null, tokenizer: 'heuristic',
    enforce: ENFORCE_ALL, imageLimits: NO_IMAGE_LIMITS, usage: 'reported', summarizer: BUILTIN_SUMMARIZER, ...extra,
  }
}

function request(wire: MockWire, body: Record<string, unknown>): ParsedRequest {
  const text = JSON.stringify({ model: 'm-1', ...(wire === 'anthropic' ? { max_tokens: 100 } : {}), ...body })
  const parsed = wire === 'anthropic' ? parseAnthropicRequest(text, new Headers()) : parseChatRequest(wire, text, new Headers())
  const { body: raw, ...fields } = parsed
  return { ...fields, index: 0, modelInfo: undefined, wireBody: raw }
}

const only = (rule: keyof EnforceSpec, value: EnforceSpec[keyof EnforceSpec] = true): EnforceSpec => ({ ...ENFORCE_OFF, [rule]: value })

/** The rejection's status, body and code, after checking the code against core's classifier. */
function rejected(outcome: PlannedOutcome | null): { status: number; body: unknown; code: string | undefined } {
  if (outcome?.kind !== 'reject') throw new Error(`expected a rejection, got ${JSON.stringify(outcome)}`)
  const { status, body } = outcome.rejection
  const classified = classifyWireRejection({ status, body, text: JSON.stringify(body), requestHasImages: true })
  expect(classified.code).toBe(outcome.expectedCode)
  return { status, body, code: outcome.expectedCode }
}

const user = (text: string): Record<string, unknown> => ({ role: 'user', content: text })
const calls = (...ids: string[]): Record<string, unknown> => ({
  role: 'assistant', content: null, tool_calls: ids.map((id) => ({ id, type: 'function', function: { name: 'read', arguments: '{}' } })),
})
const tool = (id: string): Record<string, unknown> => ({ role: 'tool', tool_call_id: id, content: 'ok' })

describe('maxOutput', () => {
  it('answers each wire with its own 400 for a max_tokens above the cap, naming the field the client used', () => {
    const r = (wire: MockWire): MockRoute => route(wire, { maxOutputTokens: 4096, enforce: only('maxOutput') })
    expect(rejected(enforcedOutcome(r('openai'), request('openai', { messages: [user('hi')], max_tokens: 8192 }), 10))).toEqual({
      status: 400,
      code: 'UNKNOWN',
      body: {
        error: {
          message: 'max_tokens is too large: 8192. This model supports at most 4096 completion tokens, whereas you provided 8192.',
          type: 'invalid_request_error', param: 'max_tokens', code: 'invalid_value',
        },
      },
    })
    const completion = rejected(enforcedOutcome(r('openai'), request('openai', { messages: [user('hi')], max_completion_tokens: 5000 }), 10))
    expect(completion.body).toMatchObject({ error: { param: 'max_completion_tokens', message: expect.stringMatching(/^max_completion_tokens is too large: 5000\./) } })
    expect(rejected(enforcedOutcome(r('deepseek'), request('deepseek', { messages: [user('hi')], max_tokens: 9000 }), 10)).body).toEqual({
      error: {
        message: 'Invalid max_tokens value, the valid range of max_tokens is [1, 4096]',
        type: 'invalid_request_error', param: null, code: 'invalid_request_error',
      },
    })
    expect(rejected(enforcedOutcome(r('anthropic'), request('anthropic', { messages: [user('hi')], max_tokens: 21333 }), 10)).body).toEqual({
      type: 'error',
      error: { type: 'invalid_request_error', message: 'max_tokens: 21333 > 4096, which is the maximum allowed number of output tokens for m-1' },
    })
  })

  it('accepts the cap itself, an absent max_tokens, an unlimited route and a route that does not enforce it', () => {
    const messages = [user('hi')]
    expect(enforcedOutcome(route('openai', { enforce: only('maxOutput') }), request('openai', { messages, max_tokens: 4096 }), 10)).toBeNull()
    expect(enforcedOutcome(route('openai', { enforce: only('maxOutput') }), request('openai', { messages }), 10)).toBeNull()
    expect(enforcedOutcome(route('openai', { maxOutputTokens: null }), request('openai', { messages, max_tokens: 1e6 }), 10)).toBeNull()
    expect(enforcedOutcome(route('openai', { enforce: ENFORCE_OFF }), request('openai', { messages, max_tokens: 1e6 }), 5000)).toBeNull()
  })
})

describe('window', () => {
  const messages = [user('hi')]
  it('rule prompt: rejects a prompt above the window on every wire with its own body (the max_tokens is not counted)', () => {
    const r = (wire: MockWire): MockRoute => route(wire, { enforce: only('window', 'prompt') })
    expect(enforcedOutcome(r('openai'), request('openai', { messages, max_tokens: 900 }), 1000)).toBeNull()
    expect(rejected(enforcedOutcome(r('openai'), request('openai', { messages, max_tokens: 900 }), 1001))).toEqual({
      status: 400,
      code: 'CONTEXT_WINDOW_EXCEEDED',
      body: {
        error: {
          message: "This model's maximum context length is 1000 tokens. However, your messages resulted in 1001 tokens. " +
            'Please reduce the length of the messages.',
          type: 'invalid_request_error', param: 'messages', code: 'context_length_exceeded',
        },
      },
    })
    expect(rejected(enforcedOutcome(r('deepseek'), request('deepseek', { messages }), 1200))).toMatchObject({
      code: 'CONTEXT_WINDOW_EXCEEDED',
      body: { error: { message: expect.stringContaining('you requested 1200 tokens (1200 in the messages, 0 in the completion)'), code: 'invalid_request_error' } },
    })
    expect(rejected(enforcedOutcome(r('anthropic'), request('anthropic', { messages }), 1500))).toEqual({
      status: 400,
      code: 'CONTEXT_WINDOW_EXCEEDED',
      body: { type: 'error', error: { type: 'invalid_request_error', message: 'prompt is too long: 1500 tokens > 1000 maximum' } },
    })
  })

  it('rule prompt-plus-max-tokens: counts max_tokens, with each wire\'s "requested" wording', () => {
    const r = (wire: MockWire): MockRoute => route(wire, { enforce: only('window', 'prompt-plus-max-tokens') })
    expect(enforcedOutcome(r('openai'), request('openai', { messages, max_tokens: 400 }), 600)).toBeNull()
    expect(rejected(enforcedOutcome(r('openai'), request('openai', { messages, max_tokens: 401 }), 600)).body).toEqual({
      error: {
        message: "This model's maximum context length is 1000 tokens. However, you requested 1001 tokens (600 in the messages, 401 in the completion). " +
          'Please reduce the length of the messages or completion.',
        type: 'invalid_request_error', param: 'messages', code: 'context_length_exceeded',
      },
    })
    expect(rejected(enforcedOutcome(r('deepseek'), request('deepseek', { messages, max_tokens: 500 }), 600))).toMatchObject({
      code: 'CONTEXT_WINDOW_EXCEEDED',
      body: { error: { message: expect.stringContaining('you requested 1100 tokens (600 in the messages, 500 in the completion)') } },
    })
    // Without max_tokens only the prompt counts.
    expect(enforcedOutcome(r('openai'), request('openai', { messages }), 1000)).toBeNull()
  })

  it('Anthropic under prompt-plus-max-tokens: "input length and max_tokens exceed" (not a §1.2.2 row) unless the prompt alone overflows', () => {
    const r = route('anthropic', { enforce: only('window', 'prompt-plus-max-tokens') })
    expect(rejected(enforcedOutcome(r, request('anthropic', { messages, max_tokens: 300 }), 800))).toEqual({
      status: 400,
      code: 'UNKNOWN',
      body: {
        type: 'error',
        error: {
          type: 'invalid_request_error',
          message: 'input length and `max_tokens` exceed context limit: 800 + 300 > 1000, decrease input length or `max_tokens` and try again',
        },
      },
    })
    expect(rejected(enforcedOutcome(r, request('anthropic', { messages, max_tokens: 300 }), 1001))).toMatchObject({
      code: 'CONTEXT_WINDOW_EXCEEDED',
      body: { error: { message: 'prompt is too long: 1001 tokens > 1000 maximum' } },
    })
  })

  it('does not enforce a route without a window', () => {
    expect(enforcedOutcome(route('openai', { contextWindow: null }), request('openai', { messages }), 1e9)).toBeNull()
  })
})

describe('pairing on the OpenAI wire', () => {
  const r = route('openai', { enforce: only('pairing') })
  const check = (messages: unknown[]): PlannedOutcome | null => enforcedOutcome(r, request('openai', { messages }), 10)

  it('accepts complete pairs, results in any order, and parallel calls answered before the next message', () => {
    expect(check([user('go'), calls('a', 'b'), tool('b'), tool('a'), { role: 'assistant', content: 'done' }, user('next')])).toBeNull()
  })

  it('rejects a call whose result is missing before the next non-tool message, listing the ids', () => {
    expect(rejected(check([user('go'), calls('a', 'b', 'c'), tool('b'), user('next')]))).toEqual({
      status: 400,
      code: 'UNKNOWN',
      body: {
        error: {
          message: "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. " +
            'The following tool_call_ids did not have response messages: a, c',
          type: 'invalid_request_error', param: 'messages.[3].role', code: null,
        },
      },
    })
    // The request ends after the calls: the assistant message is named.
    expect(rejected(check([user('go'), calls('z')])).body).toMatchObject({ error: { param: 'messages.[1].role' } })
  })

  it('rejects a result without its call, and one naming an id the assistant did not issue', () => {
    expect(rejected(check([user('go'), tool('a')])).body).toEqual({
      error: {
        message: "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.",
        type: 'invalid_request_error', param: 'messages.[1].role', code: null,
      },
    })
    // A result after an intervening message is an orphan too (its call was answered, or not, before).
    expect(rejected(check([user('go'), calls('a'), tool('a'), user('x'), tool('a')])).body).toMatchObject({ error: { param: 'messages.[4].role' } })
    expect(rejected(check([user('go'), calls('a'), tool('q')])).body).toEqual({
      error: {
        message: "Invalid parameter: 'tool_call_id' of 'q' not found in 'tool_calls' of previous message.",
        type: 'invalid_request_error', param: 'messages.[2].tool_call_id', code: null,
      },
    })
  })

  it('has no reasoning rule: reasoning_content on or off a tool call passes', () => {
    expect(check([user('go'), { ...calls('a'), reasoning_content: 'r' }, tool('a'), calls('b'), tool('b')])).toBeNull()
  })
})

describe('pairing on the DeepSeek wire', () => {
  const r = route('deepseek', { enforce: only('pairing') })
  const check = (body: Record<string, unknown>): PlannedOutcome | null => enforcedOutcome(r, request('deepseek', body), 10)

  it('answers missing and orphan results with its own wording', () => {
    expect(rejected(check({ messages: [user('go'), calls('a'), user('next')] })).body).toEqual({
      error: {
        message: "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. " +
          '(insufficient tool messages following tool_calls message)',
        type: 'invalid_request_error', param: null, code: 'invalid_request_error',
      },
    })
    const orphan = {
      error: {
        message: "Messages with role 'tool' must be a response to a preceding message with 'tool_calls'",
        type: 'invalid_request_error', param: null, code: 'invalid_request_error',
      },
    }
    expect(rejected(check({ messages: [user('go'), tool('a')] })).body).toEqual(orphan)
    expect(rejected(check({ messages: [user('go'), calls('a'), tool('q')] })).body).toEqual(orphan)
  })

  it('in thinking mode, rejects a tool-using turn whose assistant message lost its reasoning_content (at its wire index)', () => {
    const messages = [
      { role: 'system', content: 's' }, user('go'), { ...calls('a'), reasoning_content: 'think' }, tool('a'),
      { role: 'assistant', content: 'answer' }, user('next'),
    ]
    expect(check({ messages })).toBeNull() // thinking not requested: no reasoning rule
    expect(rejected(check({ messages, thinking: { type: 'enabled' } })).body).toEqual({
      error: {
        message: 'Missing `reasoning_content` field in the assistant message at message index 4. ' +
          'For more information, please refer to https://api-docs.deepseek.com/guides/thinking_mode#tool-calls',
        type: 'invalid_request_error', param: null, code: 'invalid_request_error',
      },
    })
    expect(rejected(check({ messages: [user('go'), calls('a'), tool('a')], reasoning_effort: 'high' })).body)
      .toMatchObject({ error: { message: expect.stringMatching(/^Missing `reasoning_content` field in the assistant message at message index 1\./) } })
    // A turn without tool calls needs no reasoning; an empty reasoning_content counts as present.
    const plain = [user('a'), { role: 'assistant', content: 'b' }, user('c'), { ...calls('x'), reasoning_content: '' }, tool('x')]
    expect(check({ messages: plain, thinking: { type: 'enabled' } })).toBeNull()
  })
})

describe('pairing on the Anthropic wire', () => {
  const r = route('anthropic', { enforce: only('pairing') })
  const check = (messages: unknown[]): PlannedOutcome | null => enforcedOutcome(r, request('anthropic', { messages }), 10)
  const use = (...ids: string[]): Record<string, unknown> => ({
    role: 'assistant', content: ids.map((id) => ({ type: 'tool_use', id, name: 'read', input: {} })),
  })
  const result = (id: string): Record<string, unknown> => ({ type: 'tool_result', tool_use_id: id, content: 'ok' })
  const results = (...blocks: unknown[]): Record<string, unknown> => ({ role: 'user', content: blocks })
  const errorOf = (messages: unknown[]): unknown => {
    const out = rejected(check(messages))
    expect(out.status).toBe(400)
    expect(out.code).toBe('UNKNOWN')
    return (out.body as { error: { message: string } }).error.message
  }

  it('accepts complete pairs in any order, results first, text after them', () => {
    expect(check([user('go'), use('a', 'b'), results(result('b'), result('a'), { type: 'text', text: 'more' })])).toBeNull()
  })

  it('rejects a first message that is not a user message, and two messages of one role in a row', () => {
    expect(errorOf([{ role: 'assistant', content: 'hi' }, user('x')])).toBe('messages: first message must use the "user" role')
    expect(errorOf([user('a'), user('b')])).toBe('messages: roles must alternate between "user" and "assistant", but found multiple "user" roles in a row')
    expect(errorOf([user('a'), { role: 'assistant', content: 'b' }, { role: 'assistant', content: 'c' }]))
      .toBe('messages: roles must alternate between "user" and "assistant", but found multiple "assistant" roles in a row')
  })

  it('rejects a tool_use without its result in the next message (naming the assistant message)', () => {
    expect(errorOf([user('go'), use('toolu_1', 'toolu_2'), results(result('toolu_2'))])).toBe(
      'messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_1. ' +
        'Each `tool_use` block must have a corresponding `tool_result` block in the next message.',
    )
    expect(errorOf([user('go'), use('toolu_9'), user('summarize')])).toMatch(/^messages\.1: `tool_use` ids were found without .* toolu_9\./)
    expect(errorOf([user('go'), use('toolu_9')])).toMatch(/^messages\.1: `tool_use` ids were found without/)
  })

  it('rejects results that do not open the user message, and a result whose tool_use is not in the previous message', () => {
    expect(errorOf([user('go'), use('a'), results({ type: 'text', text: 'first' }, result('a'))])).toBe(
      'messages.2: Did not find 1 `tool_result` block(s) at the beginning of this message. ' +
        'Messages following `tool_use` blocks must begin with a matching number of `tool_result` blocks.',
    )
    expect(errorOf([results(result('toolu_x'))])).toBe(
      'messages.0.content.0: unexpected `tool_use_id` found in `tool_result` blocks: toolu_x. ' +
        'Each `tool_result` block must have a corresponding `tool_use` block in the previous message.',
    )
    expect(errorOf([user('go'), use('a'), results(result('a'), result('b'))])).toMatch(/^messages\.2\.content\.1: unexpected `tool_use_id`.*: b\./)
  })

  it('rejects thinking that does not open its assistant message, and a message ending in thinking (an orphan reasoning item)', () => {
    const thinking = { type: 'thinking', thinking: 'hmm', signature: 's' }
    expect(errorOf([user('go'), { role: 'assistant', content: [{ type: 'text', text: 'a' }, thinking, { type: 'text', text: 'b' }] }])).toBe(
      'messages.1.content.0: If an assistant message contains any thinking blocks, the first block must be `thinking` or ' +
        '`redacted_thinking`. Found `text`.',
    )
    expect(errorOf([user('go'), { role: 'assistant', content: [thinking] }, user('x')]))
      .toBe('messages.1: The final block in an assistant message cannot be `thinking`.')
    expect(check([user('go'), { role: 'assistant', content: [thinking, { type: 'text', text: 'ok' }] }, user('x')])).toBeNull()
  })
})

describe('pairing needs the body as received', () => {
  it('throws for a request without wireBody (a caller bug, answered 500 by the mock)', () => {
    const { wireBody: _omit, ...bare } = request('openai', { messages: [user('hi')] })
    expect(() => enforcedOutcome(route('openai'), bare, 1)).toThrow(/wireBody/)
  })
})

describe('images', () => {
  const url = (bytes: number, id = 'sha256:aa'): Record<string, unknown> => ({
    type: 'image_url', image_url: { url: `attachment://${encodeURIComponent(id)}?media_type=image%2Fpng&bytes=${bytes}&width=1&height=1` },
  })
  const limits = (l: Partial<ImageLimitsSpec>): ImageLimitsSpec => ({ ...NO_IMAGE_LIMITS, ...l })
  const r = (l: Partial<ImageLimitsSpec>): MockRoute => route('openai', { enforce: only('images'), imageLimits: limits(l) })
  const images = (...parts: unknown[]): Record<string, unknown> => ({ role: 'user', content: parts })

  it('offloads the least number of oldest images that brings the request within the per-request count', () => {
    const req = request('openai', { messages: [images(url(1), url(1)), calls('a'), { role: 'tool', tool_call_id: 'a', content: [url(1), url(1), url(1)] }] })
    expect(enforcedOutcome(r({ imagesPerRequestMax: 5 }), req, 10)).toBeNull()
    expect(rejected(enforcedOutcome(r({ imagesPerRequestMax: 3 }), req, 10))).toEqual({
      status: 400,
      code: 'IMAGE_OFFLOAD_REQUIRED',
      body: {
        error: {
          message: 'The request carries 5 images (limit 3 per request); remove 2 image(s) and retry.',
          type: 'image_offload_required', code: 'IMAGE_OFFLOAD_REQUIRED', offloadImages: 2,
        },
      },
    })
  })

  it('counts request bytes oldest first, and an oversized image forces the count to reach it', () => {
    const req = request('openai', { messages: [images(url(100), url(100), url(900)), images(url(100))] })
    // 1200 bytes > 1000: removing the first image leaves 1100, the first two 1000.
    expect(rejected(enforcedOutcome(r({ requestImageBytesMax: 1000 }), req, 10)).body).toMatchObject({
      error: { offloadImages: 2, message: 'The request carries 1200 image bytes (limit 1000 per request); remove 2 image(s) and retry.' },
    })
    // The 900-byte image is above 500 bytes per image: only a count that reaches it (the third) relieves it.
    expect(rejected(enforcedOutcome(r({ imageBytesMax: 500 }), req, 10)).body).toMatchObject({
      error: { offloadImages: 3, message: 'An image has 900 bytes (limit 500 per image); remove 3 image(s) and retry.' },
    })
  })

  it('reads data-URL and base64 image sizes from the wire', () => {
    const png = Buffer.alloc(300, 7).toString('base64')
    const openai = request('openai', { messages: [images({ type: 'image_url', image_url: { url: `data:image/png;base64,${png}` } })] })
    expect(rejected(enforcedOutcome(r({ imageBytesMax: 299 }), openai, 10)).body).toMatchObject({ error: { offloadImages: 1 } })
    expect(enforcedOutcome(r({ imageBytesMax: 300 }), openai, 10)).toBeNull()
    const anthropic = request('anthropic', {
      messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: png } }] }],
    })
    const ar = route('anthropic', { enforce: only('images'), imageLimits: limits({ imageBytesMax: 200 }) })
    expect(rejected(enforcedOutcome(ar, anthropic, 10)).body).toMatchObject({ error: { code: 'IMAGE_OFFLOAD_REQUIRED', offloadImages: 1 } })
  })
})

describe('imageOffloadVerdict', () => {
  const im = (bytes: number, offloadable = true, messageIndex = 0): ImageOccurrence => ({ messageIndex, bytes, offloadable })
  const l = (x: Partial<ImageLimitsSpec>): ImageLimitsSpec => ({ ...NO_IMAGE_LIMITS, ...x })

  it('is null within every limit', () => {
    expect(imageOffloadVerdict([im(10), im(10)], l({ imagesPerRequestMax: 2, imageBytesMax: 10, requestImageBytesMax: 20 }))).toBeNull()
    expect(imageOffloadVerdict([], l({ imagesPerRequestMax: 0 }))).toBeNull()
  })

  it('takes the least prefix meeting every limit at once', () => {
    // bytes: 100 100 900 100 = 1200 > 1000; removing 1 leaves 1100, 2 leaves 1000.
    expect(imageOffloadVerdict([im(100), im(100), im(900), im(100)], l({ requestImageBytesMax: 1000 }))).toEqual({
      offloadImages: 2, reason: 'The request carries 1200 image bytes (limit 1000 per request)',
    })
    // An image of 900 bytes above a per-image limit of 500: the count must reach it (index 2 → 3).
    expect(imageOffloadVerdict([im(100), im(100), im(900), im(100)], l({ imageBytesMax: 500 }))?.offloadImages).toBe(3)
    // Several limits broken: every one is named, and the count satisfies all of them.
    expect(imageOffloadVerdict([im(600), im(600), im(10)], l({ imagesPerRequestMax: 2, imageBytesMax: 500 }))).toEqual({
      offloadImages: 2,
      reason: 'The request carries 3 images (limit 2 per request); an image has 600 bytes (limit 500 per image)',
    })
  })

  it('removes offloadable images first, then the rest in request order; a limit of 0 images removes all', () => {
    // An assistant image (not offloadable) comes first in the request but last in the removal order.
    const mixed = [im(50, false), im(50, true, 1), im(50, true, 2)]
    expect(imageOffloadVerdict(mixed, l({ imagesPerRequestMax: 1 }))?.offloadImages).toBe(2)
    // The non-offloadable image is itself too large: the count covers every offloadable image and it.
    expect(imageOffloadVerdict([im(900, false), im(10, true, 1)], l({ imageBytesMax: 500 }))?.offloadImages).toBe(2)
    expect(imageOffloadVerdict([im(1), im(1), im(1)], l({ imagesPerRequestMax: 0 }))?.offloadImages).toBe(3)
  })
})

describe('rule order', () => {
  it('checks maxOutput, then pairing, then images, then the window, and names the rule', () => {
    const body = { messages: [user('go'), calls('a'), { role: 'user', content: [{ type: 'image_url', image_url: { url: 'attachment://x?bytes=9' } }] }], max_tokens: 9999 }
    const all = route('openai', { imageLimits: { ...NO_IMAGE_LIMITS, imagesPerRequestMax: 0 } })
    expect(enforcementOf(all, request('openai', body), 5000)?.rule).toBe('maxOutput')
    expect(enforcementOf(all, request('openai', { ...body, max_tokens: 10 }), 5000)?.rule).toBe('pairing')
    const paired = { messages: [user('go'), calls('a'), tool('a'), body.messages[2]], max_tokens: 10 }
    expect(enforcementOf(all, request('openai', paired), 5000)?.rule).toBe('images')
    expect(enforcementOf(route('openai'), request('openai', paired), 5000)?.rule).toBe('window')
    expect(enforcementOf(route('openai'), request('openai', paired), 10)).toBeNull()
  })
})
