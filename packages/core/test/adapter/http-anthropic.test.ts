/**
 * The Anthropic Messages HTTP adapter with an injected fetch (no mount): the request it writes (URL,
 * headers, the top-level system head, merged roles, content blocks, tools, `max_tokens`), the chunks it
 * derives from hand-written event streams (text, thinking with its signature, tool use with streamed JSON,
 * cumulative usage), every stop reason, every §1.2.2 failure class (HTTP and in-band), transport, abort and
 * timeout, non-streaming replies, option validation and route metadata. Round trips against the mock
 * provider live in the sim package's tests.
 */
import { describe, expect, it } from 'vitest'
import { CallId, MessageId } from '../../src/brand.ts'
import { LlmError, type GenerateOptions } from '../../src/adapter/contract.ts'
import {
  ANTHROPIC_DEFAULT_MAX_TOKENS, anthropicErrorStatus, anthropicUsage, toAnthropicMessages, toolArguments, toolInput,
} from '../../src/adapter/anthropic-wire.ts'
import { AnthropicMessagesAdapter, type AnthropicAdapterOptions } from '../../src/adapter/http-anthropic.ts'
import { HttpAdapterConfigError } from '../../src/adapter/http-common.ts'
import { COMPACTION_INSTRUCTION } from '../../src/constants.ts'
import { assembleAttempt } from '../../src/log/assembly.ts'
import type { ContentBlock, LlmFailure, Message, StreamChunk } from '../../src/log/llm.ts'

interface Sent {
  url: string
  init: RequestInit
}

type Event = Record<string, unknown> & { type: string }

/** An SSE body the way the wire frames it: `event: <type>` plus `data: <json>` per event. */
const sse = (events: readonly (Event | string)[], status = 200): Response =>
  new Response(
    events.map((e) => (typeof e === 'string' ? `data: ${e}\n\n` : `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`)).join(''),
    { status, headers: { 'content-type': 'text/event-stream', 'request-id': 'req_01' } },
  )

const start = (usage: Record<string, unknown> = { input_tokens: 10, output_tokens: 1 }): Event => ({
  type: 'message_start',
  message: { id: 'msg_1', type: 'message', role: 'assistant', model: 'x', content: [], stop_reason: null, usage },
})
const blockStart = (index: number, block: Record<string, unknown>): Event => ({ type: 'content_block_start', index, content_block: block })
const blockDelta = (index: number, delta: Record<string, unknown>): Event => ({ type: 'content_block_delta', index, delta })
const blockStop = (index: number): Event => ({ type: 'content_block_stop', index })
const messageDelta = (stop: string | null, usage: Record<string, unknown> = { output_tokens: 5 }): Event => ({
  type: 'message_delta', delta: { stop_reason: stop, stop_sequence: null }, usage,
})
const stop: Event = { type: 'message_stop' }
const textReply = (reason: string): Event[] => [
  start(), blockStart(0, { type: 'text', text: '' }), blockDelta(0, { type: 'text_delta', text: 'x' }), blockStop(0), messageDelta(reason), stop,
]

function make(respond: (sent: Sent) => Response, extra: Partial<AnthropicAdapterOptions> = {}) {
  const sent: Sent[] = []
  const fetchStub: typeof fetch = async (input, init) => {
    const s = { url: String(input), init: init ?? {} }
    sent.push(s)
    return respond(s)
  }
  return { adapter: new AnthropicMessagesAdapter({ baseURL: 'http://stub/v1/', apiKey: 'sk-ant-1', fetch: fetchStub, ...extra }), sent }
}

async function collect(stream: AsyncIterable<StreamChunk>): Promise<StreamChunk[]> {
  const out: StreamChunk[] = []
  for await (const c of stream) out.push(c)
  return out
}

/** The failure of a call: thrown (`LlmError`) or in-band (an error finish, prefixed `in-band:`). */
async function failure(stream: AsyncIterable<StreamChunk>): Promise<{ where: 'thrown' | 'in-band'; failure: LlmFailure }> {
  try {
    const chunks = await collect(stream)
    const last = chunks.at(-1)
    if (last?.type === 'finish' && last.reason.kind === 'error') return { where: 'in-band', failure: last.reason.failure }
  } catch (err) {
    if (err instanceof LlmError) return { where: 'thrown', failure: err.failure }
    throw err
  }
  throw new Error('expected a failure')
}

const m = (role: Message['role'], content: ContentBlock[], id = 'm'): Message => ({
  id: MessageId(id),
  role,
  content,
  source: role === 'assistant' ? { kind: 'model', provider: 'p', model: 'x' } : { kind: 'user' },
})
const tr = (callId: string, content: ContentBlock[], isError?: true): Message => ({
  id: MessageId(`t-${callId}`),
  role: 'user',
  content: [{ type: 'tool-result', toolCallId: CallId(callId), content, ...(isError === undefined ? {} : { isError }) }],
  source: { kind: 'tool', callId: CallId(callId) },
})
const image: ContentBlock = {
  type: 'image',
  attachment: { attachmentId: 'sha256:ab/c', mediaType: 'image/png', bytes: 5, width: 2, height: 3 },
}
const imageUrl = 'attachment://sha256%3Aab%2Fc?media_type=image%2Fpng&bytes=5&width=2&height=3'
const base: GenerateOptions = { provider: 'p', model: 'x', messages: [m('user', [{ type: 'text', text: 'hi' }])] }

describe('request mapping', () => {
  const conversation: Message[] = [
    m('system', [{ type: 'text', text: 'You are terse.' }]),
    m('user', [{ type: 'text', text: 'look' }, image]),
    m('assistant', [
      { type: 'reasoning', text: 'two reads', signature: 'sig-1' },
      { type: 'text', text: '' },
      { type: 'text', text: 'Reading.' },
      { type: 'tool-call', id: CallId('c1'), name: 'read', arguments: '{"path":"a.ts"}' },
      { type: 'tool-call', id: CallId('c2'), name: 'read', arguments: '{"path":' },
    ]),
    tr('c1', [{ type: 'text', text: 'A' }, image]),
    tr('c2', [{ type: 'text', text: 'no such file' }], true),
  ]
  const tools = [{ name: 'read', description: 'Read.', parameters: { type: 'object' } }]

  it('POSTs <baseURL>/messages with x-api-key, anthropic-version and the purpose header, and the documented body', async () => {
    const { adapter, sent } = make(() => sse(textReply('end_turn')))
    await collect(adapter.stream({
      ...base, messages: conversation, tools, maxTokens: 100, temperature: 0.5, stop: ['END'], reasoningEffort: 'high',
      purpose: 'compaction', sessionId: 's-9',
    }))
    const s = sent[0]
    expect(s?.url).toBe('http://stub/v1/messages')
    expect(s?.init.method).toBe('POST')
    expect(s?.init.headers).toEqual({
      'anthropic-version': '2023-06-01',
      'x-api-key': 'sk-ant-1',
      'content-type': 'application/json',
      'accept': 'text/event-stream',
      'x-compaction-purpose': 'compaction',
      'x-session-id': 's-9',
    })
    expect(s?.init.body).toBe(JSON.stringify({
      model: 'x',
      max_tokens: 100,
      system: [{ type: 'text', text: 'You are terse.' }],
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'look' }, { type: 'image', source: { type: 'url', url: imageUrl } }] },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'two reads', signature: 'sig-1' },
            { type: 'text', text: 'Reading.' },
            { type: 'tool_use', id: 'c1', name: 'read', input: { path: 'a.ts' } },
            { type: 'tool_use', id: 'c2', name: 'read', input: { x_raw_arguments: '{"path":' } },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'c1', content: [{ type: 'text', text: 'A' }, { type: 'image', source: { type: 'url', url: imageUrl } }] },
            { type: 'tool_result', tool_use_id: 'c2', content: [{ type: 'text', text: 'no such file' }], is_error: true },
          ],
        },
      ],
      tools: [{ name: 'read', description: 'Read.', input_schema: { type: 'object' } }],
      temperature: 0.5,
      stop_sequences: ['END'],
      stream: true,
    }))
    await collect(adapter.stream(base))
    const plain = sent[1]
    expect(Object.keys(plain?.init.headers ?? {})).not.toContain('x-compaction-purpose')
    expect(JSON.parse(String(plain?.init.body))).toEqual({
      model: 'x', max_tokens: ANTHROPIC_DEFAULT_MAX_TOKENS, messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }], stream: true,
    })
  })

  it('sends a summary request as the conversation body plus the instruction block, changing only a header (§8.2)', async () => {
    const { adapter, sent } = make(() => sse(textReply('end_turn')))
    await collect(adapter.stream({ ...base, messages: conversation, tools, maxTokens: 8192 }))
    const instruction = m('user', [{ type: 'text', text: COMPACTION_INSTRUCTION }])
    await collect(adapter.stream({ ...base, messages: [...conversation, instruction], tools, maxTokens: 8192, purpose: 'compaction' }))
    const before = JSON.parse(String(sent[0]?.init.body)) as { messages: Array<{ content: unknown[] }> }
    const after = JSON.parse(String(sent[1]?.init.body)) as { messages: Array<{ content: unknown[] }> }
    before.messages.at(-1)?.content.push({ type: 'text', text: COMPACTION_INSTRUCTION })
    expect(after).toEqual(before)
  })

  it('maps edge cases: a later system message, unknown blocks, misplaced blocks, merged runs, empty messages', () => {
    const unknown = { type: 'audio', seconds: 3 } as ContentBlock
    const call: ContentBlock = { type: 'tool-call', id: CallId('c'), name: 'n', arguments: '' }
    expect(toAnthropicMessages([
      m('system', [{ type: 'text', text: 'head' }, image]),
      m('system', [{ type: 'text', text: 'second head' }]),
      m('user', []),
      m('user', [{ type: 'text', text: 'u' }, unknown, { type: 'reasoning', text: 'r' }, call]),
      m('system', [{ type: 'text', text: 'updated prompt' }]),
      m('assistant', [{ type: 'tool-result', toolCallId: CallId('c'), content: [] }, unknown]),
      m('assistant', [call]),
    ])).toEqual({
      system: [
        { type: 'text', text: 'head' },
        { type: 'text', text: JSON.stringify(image) },
        { type: 'text', text: 'second head' },
      ],
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'u' },
            { type: 'text', text: '{"type":"audio","seconds":3}' },
            { type: 'text', text: '{"type":"reasoning","text":"r"}' },
            { type: 'text', text: JSON.stringify(call) },
            { type: 'text', text: 'updated prompt' },
          ],
        },
        {
          role: 'assistant',
          content: [
            { type: 'text', text: '{"type":"tool-result","toolCallId":"c","content":[]}' },
            { type: 'text', text: '{"type":"audio","seconds":3}' },
            { type: 'tool_use', id: 'c', name: 'n', input: { x_raw_arguments: '' } },
          ],
        },
      ],
    })
    expect(toAnthropicMessages([m('user', [])])).toEqual({ system: [], messages: [{ role: 'user', content: [] }] })
    expect(toolArguments(toolInput('{"a":[1,2]}'))).toBe('{"a":[1,2]}')
    expect(toolArguments(toolInput('[1]'))).toBe('[1]')
    expect(toolArguments({})).toBe('{}')
  })
})

describe('stream mapping', () => {
  it('streams thinking (with its signature), text and tool use with streamed JSON; usage merged from start and delta', async () => {
    const { adapter } = make(() => sse([
      start({ input_tokens: 40, cache_read_input_tokens: 300, cache_creation_input_tokens: 25, output_tokens: 1 }),
      { type: 'ping' },
      blockStart(0, { type: 'thinking', thinking: '', signature: '' }),
      blockDelta(0, { type: 'thinking_delta', thinking: 'need ' }),
      blockDelta(0, { type: 'thinking_delta', thinking: 'a file' }),
      blockDelta(0, { type: 'signature_delta', signature: 'EqQB' }),
      blockStop(0),
      blockStart(1, { type: 'text', text: '' }),
      blockDelta(1, { type: 'text_delta', text: 'Read' }),
      blockDelta(1, { type: 'text_delta', text: 'ing.' }),
      blockStop(1),
      blockStart(2, { type: 'tool_use', id: 'toolu_1', name: 'read', input: {} }),
      blockDelta(2, { type: 'input_json_delta', partial_json: '' }),
      blockDelta(2, { type: 'input_json_delta', partial_json: '{"path":' }),
      blockDelta(2, { type: 'input_json_delta', partial_json: '"a.ts"}' }),
      blockStop(2),
      blockStart(3, { type: 'tool_use', id: 'toolu_2', name: 'list', input: {} }),
      blockStop(3),
      messageDelta('tool_use', { output_tokens: 12 }),
      stop,
    ]))
    const chunks = await collect(adapter.stream(base))
    expect(chunks.map((c) => `${c.type}${'index' in c ? `@${c.index}` : ''}`)).toEqual([
      'block-start@0', 'reasoning-delta@0', 'reasoning-delta@0', 'block-end@0',
      'block-start@1', 'text-delta@1', 'text-delta@1', 'block-end@1',
      'block-start@2', 'tool-call-delta@2', 'tool-call-delta@2', 'tool-call-delta@2', 'block-end@2',
      'block-start@3', 'tool-call-delta@3', 'block-end@3',
      'usage', 'finish',
    ])
    expect(chunks[9]).toEqual({ type: 'tool-call-delta', index: 2, id: 'toolu_1', name: 'read', argumentsDelta: '' })
    expect(assembleAttempt(chunks)).toEqual({
      blocks: [
        { type: 'reasoning', text: 'need a file', signature: 'EqQB' },
        { type: 'text', text: 'Reading.' },
        { type: 'tool-call', id: 'toolu_1', name: 'read', arguments: '{"path":"a.ts"}' },
        { type: 'tool-call', id: 'toolu_2', name: 'list', arguments: '{}' },
      ],
      usage: { inputTokens: 40, outputTokens: 12, cacheReadTokens: 300, cacheWriteTokens: 25 },
      finish: { kind: 'tool-calls' },
    })
  })

  it('keeps x_block and unknown block types verbatim, and takes the last cumulative usage', async () => {
    const picture = { type: 'image', attachment: { attachmentId: 'out', mediaType: 'image/png', bytes: 1, width: 1, height: 1 } }
    const { adapter } = make(() => sse([
      start({ input_tokens: 7, output_tokens: 0 }),
      blockStart(0, { type: 'x_block', block: picture }),
      blockStop(0),
      blockStart(1, { type: 'redacted_thinking', data: 'opaque' }),
      blockStop(1),
      blockStart(2, { type: 'text', text: 'pre' }),
      blockDelta(2, { type: 'citations_delta', citation: {} }),
      blockStop(2),
      messageDelta(null, { output_tokens: 3 }),
      messageDelta('end_turn', { input_tokens: 9, output_tokens: 4, cache_read_input_tokens: null }),
      stop,
      { type: 'message_start', message: {} }, // nothing after message_stop is read
    ]))
    expect(assembleAttempt(await collect(adapter.stream(base)))).toEqual({
      blocks: [picture, { type: 'redacted_thinking', data: 'opaque' }, { type: 'text', text: 'pre' }],
      usage: { inputTokens: 9, outputTokens: 4 },
      finish: { kind: 'stop' },
    })
  })

  it('maps every stop reason; an unknown one is UNKNOWN', async () => {
    const finish = async (reason: string): Promise<string> => {
      const last = (await collect(make(() => sse(textReply(reason))).adapter.stream(base))).at(-1)
      return last?.type === 'finish' ? last.reason.kind : '?'
    }
    expect(await finish('end_turn')).toBe('stop')
    expect(await finish('stop_sequence')).toBe('stop')
    expect(await finish('tool_use')).toBe('tool-calls')
    expect(await finish('max_tokens')).toBe('max-tokens')
    expect(await finish('model_context_window_exceeded')).toBe('max-tokens')
    expect((await failure(make(() => sse(textReply('refusal'))).adapter.stream(base))).failure).toMatchObject({
      code: 'UNKNOWN', message: 'provider finished with "refusal"',
    })
  })

  it('closes blocks left open at the end of a body that carried a stop reason, and omits usage the wire never gave', async () => {
    const chunks = await collect(make(() => sse([
      { type: 'message_start', message: { usage: {} } },
      blockStart(0, { type: 'tool_use', id: 't', name: 'n', input: {} }),
      blockDelta(0, { type: 'input_json_delta', partial_json: '{"a":' }),
      messageDelta('max_tokens', { output_tokens: 8 }),
    ])).adapter.stream(base))
    expect(chunks.slice(-2)).toEqual([
      { type: 'block-end', index: 0, block: { type: 'tool-call', id: 't', name: 'n', arguments: '{"a":' } },
      { type: 'finish', reason: { kind: 'max-tokens' } },
    ])
  })

  it('maps a non-streaming JSON message to the same chunks', async () => {
    const body = {
      id: 'msg', type: 'message', role: 'assistant', model: 'x', stop_reason: 'tool_use', stop_sequence: null,
      content: [
        { type: 'thinking', thinking: 'hm', signature: '' },
        { type: 'text', text: 'plain' },
        { type: 'tool_use', id: 'c', name: 'n', input: { q: 1 } },
        { type: 'tool_use', id: 'd', name: 'n', input: { x_raw_arguments: '{bad' } },
      ],
      usage: { input_tokens: 3, output_tokens: 2, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 },
    }
    const chunks = await collect(make(() => new Response(JSON.stringify(body), { headers: { 'content-type': 'application/json' } })).adapter.stream(base))
    expect(assembleAttempt(chunks)).toEqual({
      blocks: [
        { type: 'reasoning', text: 'hm' },
        { type: 'text', text: 'plain' },
        { type: 'tool-call', id: 'c', name: 'n', arguments: '{"q":1}' },
        { type: 'tool-call', id: 'd', name: 'n', arguments: '{bad' },
      ],
      usage: { inputTokens: 3, outputTokens: 2, cacheReadTokens: 0, cacheWriteTokens: 0 },
      finish: { kind: 'tool-calls' },
    })
    const empty = { ...body, content: [], stop_reason: null }
    expect((await failure(make(() => new Response(JSON.stringify(empty))).adapter.stream(base))).failure.code).toBe('EMPTY_RESPONSE')
    const error = { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }
    expect(await failure(make(() => new Response(JSON.stringify(error))).adapter.stream(base))).toEqual({
      where: 'in-band', failure: { code: 'SERVER', message: 'Overloaded', status: 529, requestId: undefined },
    })
  })

  it('maps usage fields to the disjoint buckets and refuses counts that are not token counts', () => {
    expect(anthropicUsage({ input_tokens: 5, output_tokens: 2, cache_read_input_tokens: 0 })).toEqual({
      inputTokens: 5, outputTokens: 2, cacheReadTokens: 0,
    })
    expect(anthropicUsage({ output_tokens: 2 })).toBeUndefined()
    expect(() => anthropicUsage({ input_tokens: -1, output_tokens: 2 })).toThrow(LlmError)
  })
})

describe('failures (§1.2.2)', () => {
  const envelope = (type: string, message: string, extra: Record<string, unknown> = {}): string =>
    JSON.stringify({ type: 'error', error: { type, message, ...extra } })
  const http = (status: number, body: string, headers: Record<string, string> = {}): Response =>
    new Response(body, { status, headers: { 'content-type': 'application/json', 'request-id': 'req_9', ...headers } })
  const imageCall: GenerateOptions = { ...base, messages: [m('user', [image])] }

  it('classifies HTTP rejections from the Anthropic envelope', async () => {
    const thrown = async (res: () => Response, options: GenerateOptions = base): Promise<LlmFailure> => {
      const f = await failure(make(res).adapter.stream(options))
      expect(f.where).toBe('thrown')
      return f.failure
    }
    expect(await thrown(() => http(400, envelope('invalid_request_error', 'prompt is too long: 9120 tokens > 8000 maximum')))).toEqual({
      code: 'CONTEXT_WINDOW_EXCEEDED', message: 'prompt is too long: 9120 tokens > 8000 maximum', status: 400, requestId: 'req_9',
    })
    expect(await thrown(() => http(429, envelope('rate_limit_error', 'slow down'), { 'retry-after': '3' }))).toMatchObject({
      code: 'RATE_LIMIT', status: 429, providerRetryAfterMs: 3000,
    })
    expect(await thrown(() => http(529, envelope('overloaded_error', 'Overloaded')))).toMatchObject({ code: 'SERVER', status: 529 })
    expect(await thrown(() => http(500, envelope('api_error', 'boom')))).toMatchObject({ code: 'SERVER', status: 500 })
    const offload = envelope('image_offload_required', 'too many images', { code: 'IMAGE_OFFLOAD_REQUIRED', offloadImages: 2 })
    expect(await thrown(() => http(400, offload), imageCall)).toMatchObject({ code: 'IMAGE_OFFLOAD_REQUIRED', offloadImages: 2 })
    const tooLarge = envelope('request_too_large', 'too large', { offloadImages: 1 })
    expect(await thrown(() => http(413, tooLarge), imageCall)).toMatchObject({ code: 'IMAGE_OFFLOAD_REQUIRED', offloadImages: 1 })
    expect(await thrown(() => http(413, tooLarge))).toMatchObject({ code: 'UNKNOWN', status: 413 })
    const unpaired = 'messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_1'
    expect(await thrown(() => http(400, envelope('invalid_request_error', unpaired)))).toMatchObject({ code: 'UNKNOWN', message: unpaired })
    expect(await thrown(() => http(401, envelope('authentication_error', 'invalid x-api-key')))).toMatchObject({ code: 'UNKNOWN' })
    expect(await thrown(() => http(502, 'bad gateway'))).toMatchObject({ code: 'SERVER', message: 'HTTP 502: bad gateway' })
  })

  it('classifies in-band error events by their error type, after the chunks that came before them', async () => {
    const inBand = async (type: string, message: string): Promise<{ chunks: StreamChunk[]; failure: LlmFailure }> => {
      const chunks = await collect(make(() => sse([
        start(), blockStart(0, { type: 'text', text: '' }), blockDelta(0, { type: 'text_delta', text: 'par' }),
        { type: 'error', error: { type, message } },
        blockDelta(0, { type: 'text_delta', text: 'never' }),
      ])).adapter.stream(base))
      const last = chunks.at(-1)
      if (last?.type !== 'finish' || last.reason.kind !== 'error') throw new Error('expected an error finish')
      return { chunks, failure: last.reason.failure }
    }
    const overloaded = await inBand('overloaded_error', 'Overloaded')
    expect(overloaded.chunks.map((c) => c.type)).toEqual(['block-start', 'text-delta', 'finish'])
    expect(overloaded.failure).toEqual({ code: 'SERVER', message: 'Overloaded', status: 529, requestId: 'req_01' })
    expect((await inBand('api_error', 'Internal')).failure).toMatchObject({ code: 'SERVER', status: 500 })
    expect((await inBand('rate_limit_error', 'slow')).failure).toMatchObject({ code: 'RATE_LIMIT', status: 429 })
    expect((await inBand('invalid_request_error', 'prompt is too long: 9 tokens > 8 maximum')).failure.code).toBe('CONTEXT_WINDOW_EXCEEDED')
    expect((await inBand('mock_internal_error', 'bug')).failure).toMatchObject({ code: 'UNKNOWN' })
    expect(anthropicErrorStatus('timeout_error')).toBe(504)
  })

  it('classifies transport failures, broken streams and malformed events', async () => {
    const code = async (res: () => Response, extra: Partial<AnthropicAdapterOptions> = {}): Promise<string> =>
      (await failure(make(res, extra).adapter.stream(base))).failure.code
    expect(await code(() => {
      throw new TypeError('fetch failed')
    })).toBe('TRANSPORT')
    expect(await code(() => Response.error())).toBe('TRANSPORT')
    expect(await code(() => sse(textReply('end_turn').slice(0, 4)))).toBe('TRANSPORT')
    expect(await code(() => sse([start(), stop]))).toBe('EMPTY_RESPONSE')
    expect(await code(() => sse([start(), blockStart(0, { type: 'text', text: 'x' }), blockStop(0), stop]))).toBe('TRANSPORT')
    expect(await code(() => sse([start(), blockDelta(0, { type: 'text_delta', text: 'x' })]))).toBe('UNKNOWN')
    expect(await code(() => sse([start(), blockStart(0, { type: 'text', text: '' }), blockDelta(0, { type: 'input_json_delta', partial_json: '{' })])))
      .toBe('UNKNOWN')
    expect(await code(() => sse([start(), blockStart(0, { type: 'tool_use', name: 'n' })]))).toBe('UNKNOWN')
    expect(await code(() => sse(['not json']))).toBe('UNKNOWN')
    expect(await code(() => sse([start({ input_tokens: 'many', output_tokens: 1 }), ...textReply('end_turn').slice(1)]))).toBe('UNKNOWN')
    const unbounded = (): Response => new Response(`event: ping\ndata: {"type":"ping","pad":"${'x'.repeat(100)}`, {
      headers: { 'content-type': 'text/event-stream' },
    })
    expect(await code(unbounded, { maxEventChars: 50 })).toBe('UNKNOWN')
    expect(await code(unbounded)).toBe('TRANSPORT')
  })

  it("stops at the caller's abort with ABORTED and at the timeout with TIMEOUT, even when the body never ends", async () => {
    const hanging = (): Response => new Response(new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(new TextEncoder().encode(`event: x\ndata: ${JSON.stringify(start())}\n\n`))
        c.enqueue(new TextEncoder().encode(`data: ${JSON.stringify(blockStart(0, { type: 'text', text: 'x' }))}\n\n`))
      },
    }), { headers: { 'content-type': 'text/event-stream' } })
    const stopAt = async (stopper: 'caller' | 'timeout'): Promise<{ seen: string[]; code: string }> => {
      const caller = new AbortController()
      const timer = new AbortController()
      const { adapter } = make(hanging, { timeout: () => timer.signal })
      const seen: string[] = []
      try {
        for await (const c of adapter.stream({ ...base, signal: caller.signal })) {
          seen.push(c.type)
          if (c.type === 'text-delta') (stopper === 'caller' ? caller : timer).abort(new Error('stop'))
        }
      } catch (err) {
        return { seen, code: err instanceof LlmError ? err.code : String(err) }
      }
      return { seen, code: 'none' }
    }
    expect(await stopAt('caller')).toEqual({ seen: ['block-start', 'text-delta'], code: 'ABORTED' })
    expect(await stopAt('timeout')).toEqual({ seen: ['block-start', 'text-delta'], code: 'TIMEOUT' })
  })
})

describe('options and metadata', () => {
  it('refuses unknown options and bad values', () => {
    expect(() => new AnthropicMessagesAdapter({ baseURL: 'http://x', wire: 'anthropic' } as never)).toThrow(HttpAdapterConfigError)
    expect(() => new AnthropicMessagesAdapter({ baseURL: 'not a url' })).toThrow(/baseURL/)
    expect(() => new AnthropicMessagesAdapter({ baseURL: 'http://x', defaultMaxTokens: 0 })).toThrow(/defaultMaxTokens/)
  })

  it('reports static routes with the default cap and never asks the network by default', async () => {
    const { adapter, sent } = make(() => new Response('{}'), {
      models: [{ id: 'x', contextWindow: 200_000, imageTokens: 1600 }, { id: 'small', contextWindow: 8000, defaultMaxTokens: 512 }],
      defaultMaxTokens: 2048,
    })
    expect(await adapter.resolveModel('p', 'x')).toEqual({
      provider: 'p', id: 'x', name: 'x', context: { contextWindow: 200_000 }, imageTokens: 1600, defaultMaxTokens: 2048,
    })
    expect((await adapter.resolveModel('p', 'small')).defaultMaxTokens).toBe(512)
    expect(await adapter.resolveModel('p', 'unlisted')).toEqual({ provider: 'p', id: 'unlisted', name: 'unlisted', defaultMaxTokens: 2048 })
    expect(sent).toEqual([])
  })

  it("reads the models endpoint on request: Anthropic's max_input_tokens or the mock's context_window", async () => {
    const meta = (status: number, body: unknown) => make(() => http(status, JSON.stringify(body)), { modelMetadata: 'endpoint' })
    const http = (status: number, text: string): Response => new Response(text, { status, headers: { 'content-type': 'application/json' } })
    const anthropic = meta(200, { id: 'x', type: 'model', display_name: 'Claude X', max_input_tokens: 200_000, max_tokens: 1024 })
    expect(await anthropic.adapter.resolveModel('p', 'x')).toEqual({
      provider: 'p', id: 'x', name: 'Claude X', context: { contextWindow: 200_000 }, defaultMaxTokens: 1024,
    })
    expect(anthropic.sent[0]?.url).toBe('http://stub/v1/models/x')
    expect(anthropic.sent[0]?.init.headers).toMatchObject({ 'x-api-key': 'sk-ant-1', 'anthropic-version': '2023-06-01' })
    expect(await meta(200, { id: 'x', context_window: 8000, image_tokens: 85 }).adapter.resolveModel('p', 'x')).toEqual({
      provider: 'p', id: 'x', name: 'x', context: { contextWindow: 8000 }, imageTokens: 85, defaultMaxTokens: ANTHROPIC_DEFAULT_MAX_TOKENS,
    })
    expect(await meta(404, {}).adapter.resolveModel('p', 'x')).toEqual({ provider: 'p', id: 'x', name: 'x', defaultMaxTokens: ANTHROPIC_DEFAULT_MAX_TOKENS })
    await expect(meta(200, { max_input_tokens: 'big' }).adapter.resolveModel('p', 'x')).rejects.toMatchObject({
      failure: { code: 'INVALID_MODEL_CONTEXT' },
    })
    await expect(meta(529, { type: 'error', error: { type: 'overloaded_error', message: 'o' } }).adapter.resolveModel('p', 'x'))
      .rejects.toMatchObject({ failure: { code: 'SERVER', status: 529 } })
  })
})
