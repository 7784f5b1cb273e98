/**
 * Core's `AnthropicMessagesAdapter` against the mock provider on the anthropic wire, mounted with msw: replies
 * with thinking and parallel tool use, usage with both cache buckets, every §1.2.2 rejection in Anthropic's
 * envelope and each fault delivery timing, the purpose header (§8.2), the request mapping as the mock decodes
 * it, equivalence with the in-process ScriptedAdapter after assembly (§1.4.6), and a cross-check of the
 * adapter's parsing against the official `@anthropic-ai/sdk` reading the same mock streams. No nock here.
 */
import Anthropic from '@anthropic-ai/sdk'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import {
  AnthropicMessagesAdapter, assembleAttempt, CallId, COMPACTION_INSTRUCTION, ScriptedAdapter,
  type AnthropicAdapterOptions, type ContentBlock, type Message, type TokenUsage,
} from '@compaction-sim/core'
import { mountMsw, type MswMount } from '../../src/provider/mount-msw.ts'
import type { MockProvider } from '../../src/provider/mock-provider.ts'
import type { PlannedOutcome } from '../../src/provider/types.ts'
import {
  imageOffloadRejection, inBandError, overflowRejection, rateLimitRejection, serverRejection, unrecognisedRejection,
} from '../../src/provider/wire-response.ts'
import { call, failureOf, finishOf, msg, prompt, provider, run, toolResult } from './support.ts'

const BASE = 'http://anthropic.mock/v1'
const outcomes: PlannedOutcome[] = []
let mock: MockProvider
let mount: MswMount
beforeAll(() => {
  mock = provider('anthropic', outcomes)
  mount = mountMsw(mock, BASE)
})
afterAll(() => mount.close())
afterEach(() => {
  outcomes.length = 0
})

const adapter = (extra: Partial<AnthropicAdapterOptions> = {}): AnthropicMessagesAdapter =>
  new AnthropicMessagesAdapter({ baseURL: BASE, apiKey: 'sk-ant-test-secret', models: [{ id: 'mock-8k', contextWindow: 8000 }], ...extra })
const llm = adapter()
const queue = (...o: PlannedOutcome[]): void => {
  outcomes.push(...o)
}
const text = (t: string): ContentBlock => ({ type: 'text', text: t })
const reply = (blocks: ContentBlock[], usage?: TokenUsage): PlannedOutcome => ({
  kind: 'reply',
  reply: usage === undefined ? { blocks } : { blocks, usage },
})
const twoCalls: ContentBlock[] = [
  { type: 'reasoning', text: 'Both files are needed; read them in parallel.' },
  { type: 'text', text: 'Reading both files.' },
  { type: 'tool-call', id: CallId('toolu_a'), name: 'read_file', arguments: '{"path":"src/a.ts"}' },
  { type: 'tool-call', id: CallId('toolu_b'), name: 'read_file', arguments: '{"path":"src/b.ts","lines":[1,200]}' },
]
const image: ContentBlock = {
  type: 'image',
  attachment: { attachmentId: 'sha256:0f', mediaType: 'image/png', bytes: 1234, width: 64, height: 32, name: 'shot.png' },
}

describe('AnthropicMessagesAdapter against the msw-mounted mock (anthropic wire)', () => {
  it('streams a text reply as block-start, text deltas, block-end, usage (both cache buckets), finish', async () => {
    queue(reply([text('Hello there, this is a longer answer.')], { inputTokens: 30, outputTokens: 9, cacheReadTokens: 200, cacheWriteTokens: 12 }))
    const chunks = await run(llm, call(prompt('hi')))
    expect(chunks[0]).toEqual({ type: 'block-start', index: 0, blockType: 'text' })
    expect(chunks.filter((c) => c.type === 'text-delta').length).toBeGreaterThan(1)
    expect(chunks.slice(-3).map((c) => c.type)).toEqual(['block-end', 'usage', 'finish'])
    expect(assembleAttempt(chunks)).toEqual({
      blocks: [text('Hello there, this is a longer answer.')],
      usage: { inputTokens: 30, outputTokens: 9, cacheReadTokens: 200, cacheWriteTokens: 12 },
      finish: { kind: 'stop' },
    })
    expect(mock.captured.at(-1)?.path).toBe('/v1/messages')
  })

  it('streams thinking and parallel tool use (input_json_delta), finishing with tool-calls', async () => {
    queue(reply(twoCalls))
    const attempt = assembleAttempt(await run(llm, call(prompt('read a and b'))))
    expect(attempt.blocks).toEqual(twoCalls)
    expect(attempt.finish).toEqual({ kind: 'tool-calls' })
  })

  it("classifies the overflow ('prompt is too long', HTTP 400) as CONTEXT_WINDOW_EXCEEDED with the request-id", async () => {
    queue({ kind: 'reject', rejection: overflowRejection('anthropic', 8000, 9100) })
    const failure = failureOf(await run(llm, call(prompt('too long'))))
    expect(failure).toEqual({
      code: 'CONTEXT_WINDOW_EXCEEDED', status: 400, message: 'prompt is too long: 9100 tokens > 8000 maximum', requestId: expect.stringMatching(/^req_mock_\d+$/),
    })
  })

  it('classifies the image-offload body and a 413 with offloadImages', async () => {
    queue(
      { kind: 'reject', rejection: imageOffloadRejection(2) },
      { kind: 'reject', rejection: imageOffloadRejection(3, 413) },
      { kind: 'reject', rejection: imageOffloadRejection(undefined, 413) },
    )
    const messages = [msg('user', [text('look'), image])]
    expect(failureOf(await run(llm, call(messages)))).toMatchObject({ code: 'IMAGE_OFFLOAD_REQUIRED', offloadImages: 2, status: 400 })
    expect(failureOf(await run(llm, call(messages)))).toMatchObject({ code: 'IMAGE_OFFLOAD_REQUIRED', offloadImages: 3, status: 413 })
    expect(failureOf(await run(llm, call(messages)))).toMatchObject({ code: 'UNKNOWN', status: 413 })
  })

  it('classifies 429 (with the retry hint), 500, 529 overloaded and an unrecognised 400', async () => {
    queue(
      { kind: 'reject', rejection: rateLimitRejection('anthropic', 1500) },
      { kind: 'reject', rejection: serverRejection(500) },
      { kind: 'reject', rejection: serverRejection(529) },
      { kind: 'reject', rejection: unrecognisedRejection() },
    )
    expect(failureOf(await run(llm, call(prompt('a'))))).toMatchObject({ code: 'RATE_LIMIT', status: 429, providerRetryAfterMs: 1500 })
    expect(failureOf(await run(llm, call(prompt('b'))))).toMatchObject({ code: 'SERVER', status: 500 })
    expect(failureOf(await run(llm, call(prompt('c'))))).toMatchObject({ code: 'SERVER', status: 529 })
    expect(failureOf(await run(llm, call(prompt('d'))))).toMatchObject({ code: 'UNKNOWN', status: 400 })
  })

  it('reports a reset before headers, a body error after headers and an end without a stop reason as TRANSPORT', async () => {
    const partial = { blocks: [text('partial answer that never ends')] }
    queue(
      { kind: 'reset' },
      { kind: 'interrupt', reply: partial, afterChunks: 4, cut: { kind: 'error' } },
      { kind: 'interrupt', reply: partial, afterChunks: 99, cut: { kind: 'close' } },
    )
    expect(failureOf(await run(llm, call(prompt('a')))).code).toBe('TRANSPORT')
    const cut = await run(llm, call(prompt('b')))
    expect(failureOf(cut).code).toBe('TRANSPORT')
    expect(cut.filter((c) => c.type === 'text-delta').map((c) => (c.type === 'text-delta' ? c.text : '')).join('')).toBe('partial ')
    const closed = await run(llm, call(prompt('c')))
    expect(failureOf(closed)).toMatchObject({ code: 'TRANSPORT', message: expect.stringContaining('without a stop reason') })
  })

  it('delivers in-band error events after N events as an error finish classified by the error type', async () => {
    const overflow = inBandError(overflowRejection('openai', 8000, 8100))
    queue(
      { kind: 'interrupt', reply: { blocks: [text('streaming some text first')] }, afterChunks: 4, cut: { kind: 'in-band', error: overflow } },
      { kind: 'interrupt', reply: { blocks: [text('more text')] }, afterChunks: 3, cut: { kind: 'in-band', error: inBandError(serverRejection(529)) } },
    )
    const chunks = await run(llm, call(prompt('in-band')))
    expect(chunks.map((c) => c.type)).toEqual(['block-start', 'text-delta', 'finish'])
    expect(failureOf(chunks)).toMatchObject({ code: 'CONTEXT_WINDOW_EXCEEDED', status: 400 })
    expect(failureOf(await run(llm, call(prompt('overloaded'))))).toMatchObject({ code: 'SERVER', status: 529 })
  })

  it('reports a message with no block and no stop reason as EMPTY_RESPONSE, and an empty end_turn as an empty stop', async () => {
    queue({ kind: 'empty' }, reply([]))
    expect(failureOf(await run(llm, call(prompt('a')))).code).toBe('EMPTY_RESPONSE')
    const empty = assembleAttempt(await run(llm, call(prompt('b'))))
    expect(empty.blocks).toEqual([])
    expect(empty.finish).toEqual({ kind: 'stop' })
  })

  it("maps a hang to TIMEOUT when the injected timeout fires, and to ABORTED on the caller's abort", async () => {
    const timeouts: AbortController[] = []
    const timed = adapter({
      timeout: () => {
        const c = new AbortController()
        timeouts.push(c)
        return c.signal
      },
    })
    queue({ kind: 'hang', reply: { blocks: [text('slow slow slow slow')] }, afterChunks: 4 })
    const seen: string[] = []
    const after = (async () => {
      for await (const c of timed.stream(call(prompt('hang after events')))) {
        seen.push(c.type)
        if (c.type === 'text-delta') queueMicrotask(() => timeouts.at(-1)?.abort(new DOMException('virtual timeout', 'TimeoutError')))
      }
    })()
    await expect(after).rejects.toMatchObject({ failure: { code: 'TIMEOUT' } })
    expect(seen).toEqual(['block-start', 'text-delta'])
    queue({ kind: 'hang' })
    const controller = new AbortController()
    const aborted = run(llm, call(prompt('abort me'), { signal: controller.signal }))
    await new Promise((r) => setImmediate(r))
    controller.abort(new Error('user cancelled'))
    expect(finishOf(await aborted)).toMatchObject({ kind: 'aborted', failure: { code: 'ABORTED' } })
  })

  it('sends purpose only as a header: the summary body is the conversation body with the instruction appended', async () => {
    const history: Message[] = [...prompt('fix the bug in src/app.ts'), msg('assistant', [text('Done: fixed src/app.ts.')])]
    queue(reply([text('conversation')]), reply([text('summary')]))
    await run(llm, call(history, { maxTokens: 1000 }))
    await run(llm, call([...history, msg('user', [text(COMPACTION_INSTRUCTION)])], { purpose: 'compaction', sessionId: 's-1', maxTokens: 8192 }))
    const [conv, sum] = mock.captured.slice(-2)
    expect(conv?.purpose).toBe('conversation')
    expect(conv?.headers['x-compaction-purpose']).toBeUndefined()
    expect(conv?.headers['anthropic-version']).toBe('2023-06-01')
    expect(conv?.headers['x-api-key']).toBe('[redacted]')
    expect(sum?.purpose).toBe('compaction')
    expect(sum?.headers['x-compaction-purpose']).toBe('compaction')
    expect(sum?.headers['x-session-id']).toBe('s-1')
    expect(JSON.stringify(sum?.body)).not.toContain('compaction-purpose')
    const convBody = conv?.body as { system: unknown; messages: unknown[]; max_tokens: number }
    const sumBody = sum?.body as { system: unknown; messages: unknown[]; max_tokens: number }
    expect(sumBody.system).toEqual([{ type: 'text', text: 'You are a coding assistant.' }])
    expect(sumBody.system).toEqual(convBody.system)
    expect(sumBody.messages.slice(0, -1)).toEqual(convBody.messages)
    expect(sumBody.messages.at(-1)).toEqual({ role: 'user', content: [{ type: 'text', text: COMPACTION_INSTRUCTION }] })
    expect([convBody.max_tokens, sumBody.max_tokens]).toEqual([1000, 8192])
  })

  it('round-trips protocol messages through the wire: system head, images, thinking, tool use and merged tool results', async () => {
    const messages: Message[] = [
      msg('system', [text('sys')]),
      msg('user', [text('look at this'), image]),
      msg('assistant', twoCalls),
      toolResult('toolu_a', [text('export const a = 1')]),
      toolResult('toolu_b', [text('line 1'), image]),
      msg('user', [text('thanks')]),
    ]
    queue(reply([text('ok')]))
    await run(llm, call(messages, { tools: [{ name: 'read_file', description: 'Read a file.', parameters: { type: 'object' } }] }))
    const captured = mock.captured.at(-1)
    // One wire user turn holds both results and the text; the mock splits results out as the protocol does.
    const wireMessages = (captured?.body as { messages?: Array<{ role: string }> } | undefined)?.messages ?? []
    expect(wireMessages.map((m) => m.role)).toEqual(['user', 'assistant', 'user'])
    expect(captured?.messages).toEqual(messages.map((m) => ({ role: m.role, content: m.content })))
    expect(captured?.tools).toEqual([{ name: 'read_file', description: 'Read a file.', parameters: { type: 'object' } }])
  })

  it('yields the same assembled attempt as the ScriptedAdapter for the same blocks and usage', async () => {
    const cases: Array<{ blocks: ContentBlock[]; usage: TokenUsage; finish?: 'max-tokens' }> = [
      {
        blocks: [text('A plain answer with ünïcödé and emoji 🙂 across delta borders.')],
        usage: { inputTokens: 10, outputTokens: 12, cacheReadTokens: 3, cacheWriteTokens: 0 },
      },
      { blocks: twoCalls, usage: { inputTokens: 500, outputTokens: 60, cacheReadTokens: 0, cacheWriteTokens: 44 } },
      { blocks: [text('cut short')], usage: { inputTokens: 1, outputTokens: 2, cacheReadTokens: 1, cacheWriteTokens: 0 }, finish: 'max-tokens' },
    ]
    for (const c of cases) {
      const finish = c.finish === undefined ? {} : { finish: { kind: 'max-tokens' as const } }
      const scripted = new ScriptedAdapter({
        routes: [{ provider: 'mock', model: 'mock-8k' }],
        conversation: [{ kind: 'reply', blocks: c.blocks, usage: c.usage, ...finish }],
      })
      queue({ kind: 'reply', reply: { blocks: c.blocks, usage: c.usage, ...(c.finish === undefined ? {} : { finish: c.finish }) } })
      expect(assembleAttempt(await run(llm, call(prompt('same'))))).toEqual(assembleAttempt(await run(scripted, call(prompt('same')))))
    }
  })

  it('reports the static route table with the default max_tokens cap, without asking the mock', async () => {
    const before = mock.captured.length
    expect(await llm.resolveModel('mock', 'mock-8k')).toEqual({
      provider: 'mock', id: 'mock-8k', name: 'mock-8k', context: { contextWindow: 8000 }, defaultMaxTokens: 4096,
    })
    expect(await llm.resolveModel('mock', 'mock-4k')).toEqual({ provider: 'mock', id: 'mock-4k', name: 'mock-4k', defaultMaxTokens: 4096 })
    const viaEndpoint = adapter({ models: [], modelMetadata: 'endpoint' })
    expect(await viaEndpoint.resolveModel('mock', 'mock-4k')).toMatchObject({ context: { contextWindow: 4000 } })
    expect(mock.captured.length).toBe(before)
  })
})

describe('the adapter and the official @anthropic-ai/sdk read the same mock streams alike', () => {
  // Built after msw is mounted: the SDK captures the global fetch when it is constructed.
  let sdk: Anthropic
  beforeAll(() => {
    sdk = new Anthropic({ apiKey: 'sk-ant-planted-msw', baseURL: 'http://anthropic.mock', maxRetries: 0 })
  })

  /** The SDK's final message as protocol blocks (thinking → reasoning, tool_use → tool-call with its input as JSON). */
  const fromSdk = (content: Anthropic.ContentBlock[]): ContentBlock[] => content.map((b): ContentBlock => {
    switch (b.type) {
      case 'text': return { type: 'text', text: b.text }
      case 'thinking': return { type: 'reasoning', text: b.thinking }
      case 'tool_use': return { type: 'tool-call', id: CallId(b.id), name: b.name, arguments: JSON.stringify(b.input) }
      default: throw new Error(`unexpected block ${b.type}`)
    }
  })

  it.each([
    ['text', [text('Plain text over several deltas, with ünïcödé.')], { inputTokens: 12, outputTokens: 7, cacheReadTokens: 100, cacheWriteTokens: 5 }],
    ['thinking and parallel tool use', twoCalls, { inputTokens: 300, outputTokens: 80, cacheReadTokens: 0, cacheWriteTokens: 0 }],
  ] as const)('%s: blocks, stop reason and usage', async (_name, blocks, usage) => {
    queue(reply([...blocks], usage), reply([...blocks], usage))
    const message = await sdk.messages.stream({ model: 'mock-8k', max_tokens: 256, system: 'sys', messages: [{ role: 'user', content: 'go' }] }).finalMessage()
    const attempt = assembleAttempt(await run(llm, call(prompt('go'))))
    expect(attempt.blocks).toEqual(fromSdk(message.content))
    expect(attempt.finish.kind).toBe(message.stop_reason === 'tool_use' ? 'tool-calls' : 'stop')
    expect(attempt.usage).toEqual({
      inputTokens: message.usage.input_tokens,
      outputTokens: message.usage.output_tokens,
      cacheReadTokens: message.usage.cache_read_input_tokens,
      cacheWriteTokens: message.usage.cache_creation_input_tokens,
    })
  })
})
