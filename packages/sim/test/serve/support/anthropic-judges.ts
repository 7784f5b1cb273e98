/**
 * The official `@anthropic-ai/sdk` as the judge of the mock's Anthropic messages wire: one suite of tests,
 * registered once per mount (msw in-process, a real loopback server) by the test files — msw and a socket
 * server never share a file. Each test queues the mock's outcomes, drives the client, and checks what the
 * client itself parsed: streamed text, thinking and tool-use blocks, usage with the cache fields, and the
 * injected failures as the client's own typed errors.
 */
import Anthropic from '@anthropic-ai/sdk'
import { describe, expect, it } from 'vitest'
import { CallId } from '@compaction-sim/core'
import type { MockProvider } from '../../../src/provider/mock-provider.ts'
import type { PlannedOutcome } from '../../../src/provider/types.ts'
import { overflowRejection, rateLimitRejection, serverRejection } from '../../../src/provider/wire-response.ts'

/** What a mount gives the suite. */
export interface AnthropicMount {
  client(): Anthropic
  mock(): MockProvider
  queue(...outcomes: PlannedOutcome[]): void
  /** True on a real socket: a cut after headers is a connection error there, a body error under msw. */
  socket: boolean
}

const REQUEST = { model: 'mock-8k', max_tokens: 256, messages: [{ role: 'user' as const, content: 'Say something.' }] }

async function failure(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise
  } catch (err) {
    return err
  }
  throw new Error('expected the client to throw')
}

/** Registers the suite (module doc) under `title`. */
export function describeAnthropicJudges(title: string, m: AnthropicMount): void {
  describe(title, () => {
    it('streams text, thinking and tool use, and reads usage with cache creation/read tokens', async () => {
      m.queue({
        kind: 'reply',
        reply: {
          blocks: [
            { type: 'reasoning', text: 'The user wants a file read.' },
            { type: 'text', text: 'Reading the configuration loader now.' },
            { type: 'tool-call', id: CallId('toolu_1'), name: 'read_file', arguments: '{"path":"src/config/load.ts"}' },
          ],
          usage: { inputTokens: 40, outputTokens: 12, cacheReadTokens: 300, cacheWriteTokens: 25 },
        },
      })
      const stream = m.client().messages.stream({ ...REQUEST, system: 'Be brief.' })
      const types: string[] = []
      stream.on('streamEvent', (event) => { types.push(event.type) })
      const message = await stream.finalMessage()
      expect(message.content).toEqual([
        { type: 'thinking', thinking: 'The user wants a file read.', signature: '' },
        { type: 'text', text: 'Reading the configuration loader now.' },
        { type: 'tool_use', id: 'toolu_1', name: 'read_file', input: { path: 'src/config/load.ts' } },
      ])
      expect(message.stop_reason).toBe('tool_use')
      expect(message.usage).toMatchObject({
        input_tokens: 40, output_tokens: 12, cache_read_input_tokens: 300, cache_creation_input_tokens: 25,
      })
      expect(types[0]).toBe('message_start') // the client drops the `ping` the mock sends after it
      expect(types).not.toContain('ping')
      expect(types.slice(-2)).toEqual(['message_delta', 'message_stop'])
      const captured = m.mock().captured.at(-1)
      expect(captured?.headers['authorization']).toBe('[redacted]') // this SDK sends its API key as a bearer token
      expect(captured?.messages).toEqual([
        { role: 'system', content: [{ type: 'text', text: 'Be brief.' }] },
        { role: 'user', content: [{ type: 'text', text: 'Say something.' }] },
      ])
    })

    it('sends tool results back and reads a non-streaming message', async () => {
      m.queue({ kind: 'reply', reply: { blocks: [{ type: 'text', text: 'It throws a ConfigError.' }] } })
      const message = await m.client().messages.create({
        model: 'mock-8k', max_tokens: 64,
        messages: [
          { role: 'user', content: 'Read it.' },
          { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_9', name: 'read_file', input: { path: 'a.ts' } }] },
          {
            role: 'user',
            content: [{ type: 'tool_result', tool_use_id: 'toolu_9', content: 'export {}' }, { type: 'text', text: 'Explain.' }],
          },
        ],
      })
      expect(message.content).toEqual([{ type: 'text', text: 'It throws a ConfigError.' }])
      expect(message.stop_reason).toBe('end_turn')
      expect(message.usage.cache_read_input_tokens).toBeTypeOf('number')
      expect(m.mock().captured.at(-1)?.messages).toEqual([
        { role: 'user', content: [{ type: 'text', text: 'Read it.' }] },
        { role: 'assistant', content: [{ type: 'tool-call', id: 'toolu_9', name: 'read_file', arguments: '{"path":"a.ts"}' }] },
        { role: 'user', content: [{ type: 'tool-result', toolCallId: 'toolu_9', content: [{ type: 'text', text: 'export {}' }] }] },
        { role: 'user', content: [{ type: 'text', text: 'Explain.' }] },
      ])
    })

    it('receives the overflow as Anthropic.BadRequestError "prompt is too long"', async () => {
      m.queue({ kind: 'reject', rejection: overflowRejection('anthropic', 8000, 9120) })
      const err = await failure(m.client().messages.create(REQUEST))
      expect(err).toBeInstanceOf(Anthropic.BadRequestError)
      const api = err as InstanceType<typeof Anthropic.BadRequestError>
      expect(api.status).toBe(400)
      const message = 'prompt is too long: 9120 tokens > 8000 maximum'
      expect(api.error).toEqual({ type: 'error', error: { type: 'invalid_request_error', message } })
      expect(api.requestID).toMatch(/^req_mock_\d+$/)
    })

    it('receives 429, 529 and 500 as RateLimitError, OverloadedError and InternalServerError', async () => {
      m.queue(
        { kind: 'reject', rejection: rateLimitRejection('anthropic', 1500) },
        { kind: 'reject', rejection: serverRejection(529) },
        { kind: 'reject', rejection: serverRejection(500) },
      )
      const limited = await failure(m.client().messages.create(REQUEST))
      expect(limited).toBeInstanceOf(Anthropic.RateLimitError)
      expect((limited as InstanceType<typeof Anthropic.RateLimitError>).headers.get('retry-after-ms')).toBe('1500')
      const overloaded = await failure(m.client().messages.create(REQUEST))
      expect(overloaded).toBeInstanceOf(Anthropic.OverloadedError)
      expect((overloaded as InstanceType<typeof Anthropic.APIError>).status).toBe(529)
      expect((overloaded as InstanceType<typeof Anthropic.APIError>).error).toMatchObject({ error: { type: 'overloaded_error' } })
      const server = await failure(m.client().messages.create(REQUEST))
      expect(server).toBeInstanceOf(Anthropic.InternalServerError)
      expect((server as InstanceType<typeof Anthropic.APIError>).error).toMatchObject({ error: { type: 'api_error' } })
    })

    it('gets exactly the promised events before an in-band error event, then an APIError of its type', async () => {
      const reply = { blocks: [{ type: 'text', text: 'one two three four five six seven eight nine ten' }] }
      m.queue({
        kind: 'interrupt', reply, afterChunks: 4,
        cut: { kind: 'in-band', error: { message: 'Overloaded', type: 'server_error', status: 529 } },
      })
      const events: string[] = []
      const stream = await m.client().messages.create({ ...REQUEST, stream: true })
      const err = await failure((async () => { for await (const e of stream) events.push(e.type) })())
      // four events were sent (message_start, ping, content_block_start, content_block_delta); the client drops ping
      expect(events).toEqual(['message_start', 'content_block_start', 'content_block_delta'])
      expect(err).toBeInstanceOf(Anthropic.APIError)
      const body = (err as InstanceType<typeof Anthropic.APIError>).error
      expect(body).toEqual({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } })
    })

    it('sees a reset before headers as APIConnectionError, and a cut after 3 events as a failure after exactly 3', async () => {
      m.queue({ kind: 'reset' })
      expect(await failure(m.client().messages.create(REQUEST))).toBeInstanceOf(Anthropic.APIConnectionError)
      const reply = { blocks: [{ type: 'text', text: 'partial answer that never ends' }] }
      m.queue({ kind: 'interrupt', reply, afterChunks: 3, cut: { kind: 'error' } })
      const events: string[] = []
      const stream = await m.client().messages.create({ ...REQUEST, stream: true })
      const err = await failure((async () => { for await (const e of stream) events.push(e.type) })())
      expect(events).toEqual(['message_start', 'content_block_start']) // + the dropped ping = 3 events
      expect(err).toBeInstanceOf(Error)
    })
  })
}
