/**
 * The OpenAI-compatible HTTP adapter with an injected fetch (no mount): the request it writes (body,
 * headers, message mapping), the chunks it derives from hand-written SSE streams, usage and finish mapping,
 * malformed replies, option validation and model metadata. Round trips against the mock provider live in
 * the sim package's tests.
 */
import { describe, expect, it } from 'vitest'
import { CallId, MessageId } from '../../src/brand.ts'
import { LlmError, type GenerateOptions } from '../../src/adapter/contract.ts'
import { HttpAdapterConfigError, OpenAiCompatibleAdapter, usageFromWire, type OpenAiAdapterOptions } from '../../src/adapter/http-openai.ts'
import { attachmentUrl, toWireMessages } from '../../src/adapter/openai-wire.ts'
import { assembleAttempt } from '../../src/log/assembly.ts'
import type { ContentBlock, Message, StreamChunk } from '../../src/log/llm.ts'

interface Sent {
  url: string
  init: RequestInit
}

function stub(respond: (sent: Sent) => Response): { fetch: typeof fetch; sent: Sent[] } {
  const sent: Sent[] = []
  return {
    sent,
    fetch: async (input, init) => {
      const s = { url: String(input), init: init ?? {} }
      sent.push(s)
      return respond(s)
    },
  }
}

const sse = (events: readonly unknown[], tail = 'data: [DONE]\n\n'): Response =>
  new Response(events.map((e) => `data: ${typeof e === 'string' ? e : JSON.stringify(e)}\n\n`).join('') + tail, {
    status: 200,
    headers: { 'content-type': 'text/event-stream' },
  })
const delta = (d: Record<string, unknown>, finish: string | null = null) => ({ choices: [{ index: 0, delta: d, finish_reason: finish }] })

function make(respond: (sent: Sent) => Response, extra: Partial<OpenAiAdapterOptions> = {}) {
  const s = stub(respond)
  return {
    adapter: new OpenAiCompatibleAdapter({ wire: 'openai', baseURL: 'http://stub/v1/', apiKey: 'sk-1', fetch: s.fetch, ...extra }),
    sent: s.sent,
  }
}

async function collect(stream: AsyncIterable<StreamChunk>): Promise<StreamChunk[]> {
  const out: StreamChunk[] = []
  for await (const c of stream) out.push(c)
  return out
}

async function failure(stream: AsyncIterable<StreamChunk>): Promise<string> {
  try {
    const chunks = await collect(stream)
    const last = chunks.at(-1)
    return last?.type === 'finish' && last.reason.kind === 'error' ? `in-band:${last.reason.failure.code}` : 'no failure'
  } catch (err) {
    return err instanceof LlmError ? err.code : `foreign:${String(err)}`
  }
}

const m = (role: Message['role'], content: ContentBlock[], id = 'm'): Message => ({
  id: MessageId(id),
  role,
  content,
  source: role === 'assistant' ? { kind: 'model', provider: 'p', model: 'x' } : { kind: 'user' },
})
const image: ContentBlock = {
  type: 'image',
  attachment: { attachmentId: 'sha256:ab/c', mediaType: 'image/png', bytes: 5, width: 2, height: 3, name: 'a b.png' },
}
const base: GenerateOptions = { provider: 'p', model: 'x', messages: [m('user', [{ type: 'text', text: 'hi' }])] }

describe('request mapping', () => {
  it('writes the documented body and headers; purpose and session travel as headers only', async () => {
    const { adapter, sent } = make(() => sse([delta({ content: 'ok' }, 'stop')]))
    const options: GenerateOptions = {
      provider: 'p',
      model: 'x',
      maxTokens: 100,
      temperature: 0.5,
      stop: ['END'],
      reasoningEffort: 'high',
      purpose: 'compaction',
      sessionId: 's-9',
      tools: [{ name: 'read', description: 'Read.', parameters: { type: 'object' } }],
      messages: [
        m('system', [{ type: 'text', text: 'sys' }]),
        m('user', [{ type: 'text', text: 'look' }, image]),
        m('assistant', [
          { type: 'reasoning', text: 'r1' },
          { type: 'text', text: 'a' },
          { type: 'reasoning', text: 'r2' },
          { type: 'tool-call', id: CallId('c1'), name: 'read', arguments: '{}' },
        ]),
        {
          id: MessageId('t'),
          role: 'user',
          content: [{ type: 'tool-result', toolCallId: CallId('c1'), content: [{ type: 'text', text: 'out' }], isError: true }],
          source: { kind: 'tool', callId: CallId('c1') },
        },
      ],
    }
    await collect(adapter.stream(options))
    const s = sent[0]
    expect(s?.url).toBe('http://stub/v1/chat/completions')
    expect(s?.init.headers).toEqual({
      'authorization': 'Bearer sk-1',
      'content-type': 'application/json',
      'accept': 'text/event-stream',
      'x-compaction-purpose': 'compaction',
      'x-session-id': 's-9',
    })
    expect(s?.init.body).toBe(
      JSON.stringify({
        model: 'x',
        messages: [
          { role: 'system', content: 'sys' },
          {
            role: 'user',
            content: [
              { type: 'text', text: 'look' },
              {
                type: 'image_url',
                image_url: { url: 'attachment://sha256%3Aab%2Fc?media_type=image%2Fpng&bytes=5&width=2&height=3&name=a+b.png' },
              },
            ],
          },
          {
            role: 'assistant',
            content: 'a',
            reasoning_content: 'r1\n\nr2',
            tool_calls: [{ id: 'c1', type: 'function', function: { name: 'read', arguments: '{}' } }],
          },
          { role: 'tool', tool_call_id: 'c1', content: 'out' },
        ],
        tools: [{ type: 'function', function: { name: 'read', description: 'Read.', parameters: { type: 'object' } } }],
        max_tokens: 100,
        temperature: 0.5,
        stop: ['END'],
        reasoning_effort: 'high',
        stream: true,
        stream_options: { include_usage: true },
      }),
    )
    await collect(adapter.stream(base))
    expect(Object.keys(sent[1]?.init.headers ?? {})).not.toContain('x-compaction-purpose')
  })

  it('maps edge cases: empty content, tool-only assistants, mixed user runs, unknown blocks', () => {
    const unknown = { type: 'audio', seconds: 3 } as ContentBlock
    expect(
      toWireMessages([
        m('user', []),
        m('assistant', [{ type: 'tool-call', id: CallId('c'), name: 'n', arguments: '{}' }]),
        m('user', [{ type: 'text', text: 'before' }, { type: 'tool-result', toolCallId: CallId('c'), content: [] }, unknown]),
      ]),
    ).toEqual([
      { role: 'user', content: [] },
      { role: 'assistant', content: null, tool_calls: [{ id: 'c', type: 'function', function: { name: 'n', arguments: '{}' } }] },
      { role: 'user', content: 'before' },
      { role: 'tool', tool_call_id: 'c', content: [] },
      { role: 'user', content: [{ type: 'text', text: '{"type":"audio","seconds":3}' }] },
    ])
    expect(attachmentUrl({ attachmentId: 'id', mediaType: 'image/jpeg', bytes: 1, width: 1, height: 1 })).toBe(
      'attachment://id?media_type=image%2Fjpeg&bytes=1&width=1&height=1',
    )
  })
})

describe('stream mapping', () => {
  it('opens and closes blocks per kind and wire tool index, usage right before finish', async () => {
    const { adapter } = make(() =>
      sse([
        delta({ role: 'assistant', content: '' }),
        delta({ reasoning_content: 'th' }),
        delta({ reasoning_content: 'ink' }),
        delta({ content: 'Hel' }),
        delta({ content: 'lo' }),
        delta({ tool_calls: [{ index: 0, id: 'c0', type: 'function', function: { name: 'a', arguments: '{"x"' } }] }),
        delta({ tool_calls: [{ index: 1, id: 'c1', type: 'function', function: { name: 'b', arguments: '' } }] }),
        delta({ tool_calls: [{ index: 0, function: { arguments: ':1}' } }] }),
        delta({}, 'tool_calls'),
        { choices: [], usage: { prompt_tokens: 10, completion_tokens: 5, prompt_tokens_details: { cached_tokens: 4 } } },
      ]),
    )
    const chunks = await collect(adapter.stream(base))
    expect(chunks.map((c) => `${c.type}${'index' in c ? `@${c.index}` : ''}`)).toEqual([
      'block-start@0',
      'reasoning-delta@0',
      'reasoning-delta@0',
      'block-end@0',
      'block-start@1',
      'text-delta@1',
      'text-delta@1',
      'block-end@1',
      'block-start@2',
      'tool-call-delta@2',
      'block-start@3',
      'tool-call-delta@3',
      'tool-call-delta@2',
      'block-end@2',
      'block-end@3',
      'usage',
      'finish',
    ])
    expect(assembleAttempt(chunks)).toEqual({
      blocks: [
        { type: 'reasoning', text: 'think' },
        { type: 'text', text: 'Hello' },
        { type: 'tool-call', id: 'c0', name: 'a', arguments: '{"x":1}' },
        { type: 'tool-call', id: 'c1', name: 'b', arguments: '' },
      ],
      usage: { inputTokens: 6, outputTokens: 5, cacheReadTokens: 4 },
      finish: { kind: 'tool-calls' },
    })
  })

  it('maps finish reasons and accepts a finished stream without [DONE]', async () => {
    const finish = async (reason: string, tail?: string) => {
      const chunks = await collect(make(() => sse([delta({ content: 'x' }, reason)], tail)).adapter.stream(base))
      const last = chunks.at(-1)
      return last?.type === 'finish' ? last.reason.kind : '?'
    }
    expect(await finish('stop')).toBe('stop')
    expect(await finish('length')).toBe('max-tokens')
    expect(await finish('function_call')).toBe('tool-calls')
    expect(await finish('stop', '')).toBe('stop')
    expect(await failure(make(() => sse([delta({ content: 'x' }, 'content_filter')])).adapter.stream(base))).toBe('UNKNOWN')
  })

  it('classifies broken streams', async () => {
    expect(await failure(make(() => sse([])).adapter.stream(base))).toBe('EMPTY_RESPONSE')
    expect(await failure(make(() => sse([delta({ content: 'x' })])).adapter.stream(base))).toBe('TRANSPORT')
    expect(await failure(make(() => sse([delta({ content: 'x' })], '')).adapter.stream(base))).toBe('TRANSPORT')
    expect(await failure(make(() => sse(['not json'])).adapter.stream(base))).toBe('UNKNOWN')
    expect(await failure(make(() => sse([{ choices: {} }])).adapter.stream(base))).toBe('UNKNOWN')
    expect(
      await failure(make(() => sse([delta({}, 'stop'), { choices: [], usage: { prompt_tokens: 'many' } }])).adapter.stream(base)),
    ).toBe('UNKNOWN')
    expect(await failure(make(() => sse([{ error: { message: 'overloaded', status: 503 } }])).adapter.stream(base))).toBe('in-band:SERVER')
    expect(
      await failure(
        make(() => {
          throw new TypeError('fetch failed')
        }).adapter.stream(base),
      ),
    ).toBe('TRANSPORT')
    expect(await failure(make(() => Response.error()).adapter.stream(base))).toBe('TRANSPORT')
    expect(
      await failure(
        make(() => new Response('{"error":{"message":"x","code":"context_length_exceeded"}}', { status: 400 })).adapter.stream(base),
      ),
    ).toBe('CONTEXT_WINDOW_EXCEEDED')
    expect(await failure(make(() => sse([`${'x'.repeat(100)}`]), { maxEventChars: 50 }).adapter.stream(base))).toBe('UNKNOWN')
  })

  it('maps a non-streaming JSON completion to the same chunks', async () => {
    const body = {
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: 'plain',
            tool_calls: [{ id: 'c', type: 'function', function: { name: 'n', arguments: '{}' } }],
          },
          finish_reason: 'tool_calls',
        },
      ],
      usage: { prompt_tokens: 3, completion_tokens: 2 },
    }
    const chunks = await collect(
      make(() => new Response(JSON.stringify(body), { headers: { 'content-type': 'application/json' } })).adapter.stream(base),
    )
    expect(assembleAttempt(chunks)).toEqual({
      blocks: [
        { type: 'text', text: 'plain' },
        { type: 'tool-call', id: 'c', name: 'n', arguments: '{}' },
      ],
      usage: { inputTokens: 3, outputTokens: 2 },
      finish: { kind: 'tool-calls' },
    })
  })

  it('maps DeepSeek usage from hit/miss tokens', () => {
    expect(
      usageFromWire('deepseek', {
        prompt_tokens: 100,
        completion_tokens: 7,
        prompt_cache_hit_tokens: 60,
        prompt_cache_miss_tokens: 40,
        completion_tokens_details: { reasoning_tokens: 3 },
      }),
    ).toEqual({ inputTokens: 40, outputTokens: 7, cacheReadTokens: 60, reasoningTokens: 3 })
    expect(usageFromWire('deepseek', { prompt_tokens: 100, completion_tokens: 7, prompt_cache_hit_tokens: 60 })).toEqual({
      inputTokens: 40,
      outputTokens: 7,
      cacheReadTokens: 60,
    })
    expect(usageFromWire('openai', { prompt_tokens: 100, completion_tokens: 7 })).toEqual({ inputTokens: 100, outputTokens: 7 })
    expect(() => usageFromWire('openai', { prompt_tokens: 1, completion_tokens: 7, prompt_tokens_details: { cached_tokens: 2 } })).toThrow(
      LlmError,
    )
  })

  it("stops at the caller's abort with ABORTED even when the body never ends", async () => {
    const controller = new AbortController()
    const hanging = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(new TextEncoder().encode(`data: ${JSON.stringify(delta({ content: 'x' }))}\n\n`))
      },
    })
    const { adapter } = make(() => new Response(hanging, { headers: { 'content-type': 'text/event-stream' } }))
    const seen: string[] = []
    const result = (async () => {
      for await (const c of adapter.stream({ ...base, signal: controller.signal })) {
        seen.push(c.type)
        if (c.type === 'text-delta') controller.abort(new Error('stop'))
      }
    })()
    await expect(result).rejects.toMatchObject({ failure: { code: 'ABORTED' } })
    expect(seen).toEqual(['block-start', 'text-delta'])
  })
})

describe('options and metadata', () => {
  it('refuses unknown options and bad values', () => {
    expect(() => new OpenAiCompatibleAdapter({ wire: 'openai', baseURL: 'http://x', color: 1 } as never)).toThrow(HttpAdapterConfigError)
    expect(() => new OpenAiCompatibleAdapter({ wire: 'anthropic' as never, baseURL: 'http://x' })).toThrow(/wire/)
    expect(() => new OpenAiCompatibleAdapter({ wire: 'openai', baseURL: 'not a url' })).toThrow(/baseURL/)
  })

  it('reads metadata fields, reports 404 as unknown capacity and classifies other failures', async () => {
    const meta = (status: number, body: unknown) =>
      make(() => new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } })).adapter
    expect(
      await meta(200, { id: 'x', name: 'X', context_window: 100, image_tokens: 7, default_max_tokens: 9 }).resolveModel('p', 'x'),
    ).toEqual({ provider: 'p', id: 'x', name: 'X', context: { contextWindow: 100 }, imageTokens: 7, defaultMaxTokens: 9 })
    expect(await meta(404, {}).resolveModel('p', 'x')).toEqual({ provider: 'p', id: 'x', name: 'x' })
    // The project's `max_output_tokens` (hardened HARD-2) becomes `maxOutputTokens`.
    expect(await meta(200, { id: 'x', context_window: 100, max_output_tokens: 40 }).resolveModel('p', 'x'))
      .toEqual({ provider: 'p', id: 'x', name: 'x', context: { contextWindow: 100 }, maxOutputTokens: 40 })
    await expect(meta(200, { context_window: 'big' }).resolveModel('p', 'x')).rejects.toMatchObject({
      failure: { code: 'INVALID_MODEL_CONTEXT' },
    })
    await expect(meta(503, {}).resolveModel('p', 'x')).rejects.toMatchObject({ failure: { code: 'SERVER', status: 503 } })
    const { adapter, sent } = make(() => new Response('{}'), { models: [{ id: 'x', contextWindow: 5 }] })
    expect(await adapter.resolveModel('p', 'x')).toEqual({ provider: 'p', id: 'x', name: 'x', context: { contextWindow: 5 } })
    expect(sent).toEqual([])
  })
})
