/**
 * The official clients against the mock over a real loopback socket (`serveHttp`, what `sim serve` runs):
 * the Anthropic judge suite, the `openai` client's typed errors, and the raw bytes of fault delivery — a
 * reset before headers, and headers flushed then exactly N events then a cut. No msw or nock in this file.
 */
import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { MockProvider } from '../../src/provider/mock-provider.ts'
import { serveHttp, type HttpServing } from '../../src/provider/serve-http.ts'
import type { PlannedOutcome } from '../../src/provider/types.ts'
import { overflowRejection, rateLimitRejection, serverRejection } from '../../src/provider/wire-response.ts'
import { provider } from '../provider/support.ts'
import { describeAnthropicJudges } from './support/anthropic-judges.ts'

const anthropicOutcomes: PlannedOutcome[] = []
const openaiOutcomes: PlannedOutcome[] = []
let anthropicMock: MockProvider
let openaiMock: MockProvider
let anthropicServer: HttpServing
let openaiServer: HttpServing
let anthropic: Anthropic
let openai: OpenAI

beforeAll(async () => {
  anthropicMock = provider('anthropic', anthropicOutcomes)
  openaiMock = provider('openai', openaiOutcomes)
  anthropicServer = await serveHttp(anthropicMock)
  openaiServer = await serveHttp(openaiMock)
  anthropic = new Anthropic({ apiKey: 'sk-ant-planted-loopback', baseURL: anthropicServer.baseURL.replace(/\/v1$/, ''), maxRetries: 0 })
  openai = new OpenAI({ apiKey: 'sk-planted-loopback', baseURL: openaiServer.baseURL, maxRetries: 0 })
})
afterAll(async () => {
  await anthropicServer.close()
  await openaiServer.close()
})

describeAnthropicJudges('official @anthropic-ai/sdk against a real loopback server', {
  client: () => anthropic,
  mock: () => anthropicMock,
  queue: (...o) => { anthropicOutcomes.push(...o) },
  socket: true,
})

async function failure(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise
  } catch (err) {
    return err
  }
  throw new Error('expected the client to throw')
}

const CHAT = { model: 'mock-8k', messages: [{ role: 'user' as const, content: 'Say something.' }] }

describe('official openai client against a real loopback server', () => {
  it('streams a completion with usage', async () => {
    const planned = { inputTokens: 9, outputTokens: 4 }
    openaiOutcomes.push({ kind: 'reply', reply: { blocks: [{ type: 'text', text: 'Over a real socket.' }], usage: planned } })
    const stream = await openai.chat.completions.create({ ...CHAT, stream: true, stream_options: { include_usage: true } })
    let text = ''
    let usage: OpenAI.CompletionUsage | undefined
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? ''
      if (chunk.usage) usage = chunk.usage
    }
    expect(text).toBe('Over a real socket.')
    expect(usage).toMatchObject({ prompt_tokens: 9, completion_tokens: 4, total_tokens: 13 })
  })

  it('receives overflow, rate limit and server errors as BadRequestError, RateLimitError and InternalServerError', async () => {
    openaiOutcomes.push(
      { kind: 'reject', rejection: overflowRejection('openai', 8000, 9001) },
      { kind: 'reject', rejection: rateLimitRejection('openai', 2000) },
      { kind: 'reject', rejection: serverRejection(503) },
    )
    const overflow = await failure(openai.chat.completions.create(CHAT))
    expect(overflow).toBeInstanceOf(OpenAI.BadRequestError)
    expect((overflow as InstanceType<typeof OpenAI.APIError>).code).toBe('context_length_exceeded')
    const limited = await failure(openai.chat.completions.create(CHAT))
    expect(limited).toBeInstanceOf(OpenAI.RateLimitError)
    expect((limited as InstanceType<typeof OpenAI.APIError>).headers?.get('retry-after-ms')).toBe('2000')
    const server = await failure(openai.chat.completions.create(CHAT))
    expect(server).toBeInstanceOf(OpenAI.InternalServerError)
    expect((server as InstanceType<typeof OpenAI.APIError>).status).toBe(503)
  })

  it('sees a reset before headers as APIConnectionError', async () => {
    openaiOutcomes.push({ kind: 'reset' })
    expect(await failure(openai.chat.completions.create(CHAT))).toBeInstanceOf(OpenAI.APIConnectionError)
  })
})

/** Reads a raw SSE response to its end or its failure; returns the event blocks received and the failure. */
async function rawEvents(response: Response): Promise<{ events: string[]; failed: boolean }> {
  const reader = (response.body as ReadableStream<Uint8Array>).getReader()
  const decoder = new TextDecoder()
  let text = ''
  let failed = false
  try {
    for (;;) {
      const { done, value } = await reader.read()
      if (done) break
      text += decoder.decode(value, { stream: true })
    }
  } catch {
    failed = true // the socket was destroyed after the promised events
  }
  return { events: text.split('\n\n').filter((e) => e !== ''), failed }
}

describe('fault delivery timing on a real socket', () => {
  it('anthropic: status 200 and flushed headers, then exactly 3 events (incl. ping), then the connection dies', async () => {
    const reply = { blocks: [{ type: 'text', text: 'never finished' }] }
    anthropicOutcomes.push({ kind: 'interrupt', reply, afterChunks: 3, cut: { kind: 'error' } })
    const response = await fetch(`${anthropicServer.baseURL}/messages`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ ...CHAT, max_tokens: 10, stream: true }),
    })
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toContain('text/event-stream')
    const { events, failed } = await rawEvents(response)
    expect(events.map((e) => e.split('\n')[0])).toEqual(['event: message_start', 'event: ping', 'event: content_block_start'])
    expect(failed).toBe(true)
  })

  it('openai: after-headers cut (0 chunks) reaches the client after the 200, not as a reset', async () => {
    openaiOutcomes.push({ kind: 'interrupt', reply: { blocks: [{ type: 'text', text: 'x' }] }, afterChunks: 0, cut: { kind: 'error' } })
    const response = await fetch(`${openaiServer.baseURL}/chat/completions`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ ...CHAT, stream: true }),
    })
    expect(response.status).toBe(200)
    const { events, failed } = await rawEvents(response)
    expect(events).toEqual([])
    expect(failed).toBe(true)
  })
})
