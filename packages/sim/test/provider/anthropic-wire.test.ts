/**
 * The anthropic wire at the handler level (no mount): request validation in Anthropic's error envelope,
 * decoding into protocol blocks, the exact SSE event sequence with usage on both ends, the empty answer,
 * and the overflow shape of §1.2.2's Anthropic row as core's classifier reads it.
 */
import { classifyWireRejection } from '@compaction-sim/core'
import { describe, expect, it } from 'vitest'
import type { PlannedOutcome } from '../../src/provider/types.ts'
import { overflowRejection } from '../../src/provider/wire-response.ts'
import { provider } from './support.ts'

const URL_BASE = 'http://anthropic.mock/v1'

function post(path: string, body: unknown): Request {
  return new Request(`${URL_BASE}${path}`, {
    method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': 'sk-ant-secret' }, body: JSON.stringify(body),
  })
}

describe('anthropic wire', () => {
  it('refuses a body without max_tokens with 400 invalid_request_error in its envelope, and has no chat/completions route', async () => {
    const mock = provider('anthropic', [])
    const res = await mock.handle(post('/messages', { model: 'mock-8k', messages: [{ role: 'user', content: 'hi' }] }))
    expect(res.status).toBe(400)
    const message = '$.max_tokens: required (a positive integer)'
    expect(await res.json()).toEqual({ type: 'error', error: { type: 'invalid_request_error', message } })
    const wrong = await mock.handle(post('/chat/completions', { model: 'mock-8k', messages: [] }))
    expect(wrong.status).toBe(404)
    expect(((await wrong.json()) as { error: { type: string } }).error.type).toBe('not_found_error')
    expect(mock.captured).toEqual([])
    expect(mock.refused.map((r) => r.status)).toEqual([400, 404])
  })

  it('streams message_start, ping, blocks, message_delta (stop reason + usage), message_stop', async () => {
    const outcomes: PlannedOutcome[] = [{
      kind: 'reply',
      reply: { blocks: [{ type: 'text', text: 'Hello there' }], usage: { inputTokens: 7, outputTokens: 2, cacheReadTokens: 5 } },
    }]
    const mock = provider('anthropic', outcomes)
    const res = await mock.handle(post('/messages', {
      model: 'mock-8k', max_tokens: 50, stream: true, system: [{ type: 'text', text: 'Terse.' }],
      messages: [{ role: 'user', content: 'hi' }],
    }))
    expect(res.headers.get('request-id')).toBe('req_mock_0')
    const events = (await res.text()).split('\n\n').filter((e) => e !== '').map((e) => {
      const [event, data] = e.split('\n')
      return { event: event?.slice('event: '.length), data: JSON.parse(data?.slice('data: '.length) ?? 'null') as Record<string, unknown> }
    })
    expect(events.map((e) => e.event)).toEqual([
      'message_start', 'ping', 'content_block_start', 'content_block_delta', 'content_block_delta', 'content_block_stop',
      'message_delta', 'message_stop',
    ])
    expect(events.every((e) => e.data['type'] === e.event)).toBe(true)
    expect(events[0]?.data['message']).toMatchObject({
      id: 'msg_mock-0', role: 'assistant', content: [], stop_reason: null,
      usage: { input_tokens: 7, cache_read_input_tokens: 5, cache_creation_input_tokens: 0, output_tokens: 0 },
    })
    expect(events[6]?.data).toEqual({
      type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null },
      usage: { input_tokens: 7, cache_creation_input_tokens: 0, cache_read_input_tokens: 5, output_tokens: 2 },
    })
    expect(mock.captured[0]).toMatchObject({
      wire: 'anthropic', path: '/v1/messages', maxTokens: 50, headers: { 'x-api-key': '[redacted]' },
      messages: [
        { role: 'system', content: [{ type: 'text', text: 'Terse.' }] },
        { role: 'user', content: [{ type: 'text', text: 'hi' }] },
      ],
    })
  })

  it('answers EMPTY_RESPONSE with message_start then message_stop and no content block', async () => {
    const mock = provider('anthropic', [{ kind: 'empty' }])
    const res = await mock.handle(post('/messages', {
      model: 'mock-8k', max_tokens: 5, stream: true, messages: [{ role: 'user', content: 'x' }],
    }))
    const names = (await res.text()).split('\n\n').filter((e) => e !== '').map((e) => e.split('\n')[0])
    expect(names).toEqual(['event: message_start', 'event: message_stop'])
  })

  it("the overflow is §1.2.2's Anthropic row: core's classifier reads CONTEXT_WINDOW_EXCEEDED", () => {
    const rejection = overflowRejection('anthropic', 200000, 208310)
    expect(rejection).toEqual({
      status: 400,
      body: { type: 'error', error: { type: 'invalid_request_error', message: 'prompt is too long: 208310 tokens > 200000 maximum' } },
    })
    const failure = classifyWireRejection({ status: 400, body: rejection.body, text: '', requestHasImages: false })
    expect(failure.code).toBe('CONTEXT_WINDOW_EXCEEDED')
    const other = classifyWireRejection({
      status: 400,
      body: { type: 'error', error: { type: 'invalid_request_error', message: 'max_tokens: too large' } },
      text: '',
      requestHasImages: false,
    })
    expect(other.code).toBe('UNKNOWN')
  })
})
