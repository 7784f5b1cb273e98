/**
 * The official `openai` npm client (6.x) as the judge of the mock's wire format (issue "Done when"): pointed
 * at the msw mount it streams a completion, reads `usage` (incl. cached tokens), parses tool-call deltas,
 * gets a non-streaming completion, and receives the injected overflow as its own typed `APIError` (400).
 */
import OpenAI from 'openai'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CallId } from '@compaction-sim/core'
import { mountMsw, type MswMount } from '../../src/provider/mount-msw.ts'
import type { MockProvider } from '../../src/provider/mock-provider.ts'
import type { PlannedOutcome } from '../../src/provider/types.ts'
import { overflowRejection } from '../../src/provider/wire-response.ts'
import { provider } from './support.ts'

const BASE = 'http://openai.mock/v1'
const outcomes: PlannedOutcome[] = []
let mock: MockProvider
let mount: MswMount
let client: OpenAI

beforeAll(() => {
  mock = provider('openai', outcomes)
  mount = mountMsw(mock, BASE)
  client = new OpenAI({ apiKey: 'sk-official-client', baseURL: BASE, maxRetries: 0 })
})
afterAll(() => mount.close())

function queue(...o: PlannedOutcome[]): void {
  outcomes.push(...o)
}

describe('official openai client against the msw-mounted mock', () => {
  it('streams a completion and reads usage with cached tokens', async () => {
    queue({
      kind: 'reply',
      reply: {
        blocks: [{ type: 'text', text: 'Streaming through the official client works.' }],
        usage: { inputTokens: 70, outputTokens: 11, cacheReadTokens: 30 },
      },
    })
    const stream = await client.chat.completions.create({
      model: 'mock-8k',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Say something.' },
      ],
      stream: true,
      stream_options: { include_usage: true },
    })
    let text = ''
    let finish: string | null = null
    let usage: OpenAI.CompletionUsage | null | undefined
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? ''
      finish = chunk.choices[0]?.finish_reason ?? finish
      if (chunk.usage) usage = chunk.usage
    }
    expect(text).toBe('Streaming through the official client works.')
    expect(finish).toBe('stop')
    expect(usage?.prompt_tokens).toBe(100)
    expect(usage?.completion_tokens).toBe(11)
    expect(usage?.total_tokens).toBe(111)
    expect(usage?.prompt_tokens_details?.cached_tokens).toBe(30)
    const captured = mock.captured.at(-1)
    expect(captured?.headers['authorization']).toBe('[redacted]')
    expect(captured?.messages).toEqual([
      { role: 'system', content: [{ type: 'text', text: 'Be brief.' }] },
      { role: 'user', content: [{ type: 'text', text: 'Say something.' }] },
    ])
  })

  it("assembles streamed tool calls with the client's own stream helper", async () => {
    queue({
      kind: 'reply',
      reply: {
        blocks: [
          { type: 'tool-call', id: CallId('call_1'), name: 'read_file', arguments: '{"path":"src/index.ts"}' },
          { type: 'tool-call', id: CallId('call_2'), name: 'grep', arguments: '{"pattern":"TODO","dir":"src"}' },
        ],
      },
    })
    const runner = client.chat.completions.stream({
      model: 'mock-8k',
      messages: [{ role: 'user', content: 'Look around.' }],
      tools: [
        { type: 'function', function: { name: 'read_file', parameters: { type: 'object' } } },
        { type: 'function', function: { name: 'grep', parameters: { type: 'object' } } },
      ],
    })
    const completion = await runner.finalChatCompletion()
    const choice = completion.choices[0]
    expect(choice?.finish_reason).toBe('tool_calls')
    expect(choice?.message.tool_calls?.map((c) => (c.type === 'function' ? [c.id, c.function.name, c.function.arguments] : []))).toEqual([
      ['call_1', 'read_file', '{"path":"src/index.ts"}'],
      ['call_2', 'grep', '{"pattern":"TODO","dir":"src"}'],
    ])
  })

  it('reads a non-streaming completion with usage', async () => {
    queue({
      kind: 'reply',
      reply: { blocks: [{ type: 'text', text: 'plain' }], usage: { inputTokens: 5, outputTokens: 1, cacheReadTokens: 0 } },
    })
    const completion = await client.chat.completions.create({ model: 'mock-8k', messages: [{ role: 'user', content: 'hi' }] })
    expect(completion.choices[0]?.message.content).toBe('plain')
    expect(completion.usage).toMatchObject({ prompt_tokens: 5, completion_tokens: 1, prompt_tokens_details: { cached_tokens: 0 } })
  })

  it('receives the injected overflow as its own typed APIError with status 400', async () => {
    queue({ kind: 'reject', rejection: overflowRejection('openai', 8000, 9001) })
    const error = await client.chat.completions
      .create({ model: 'mock-8k', messages: [{ role: 'user', content: 'too long' }], stream: true })
      .then(
        () => undefined,
        (err: unknown) => err,
      )
    expect(error).toBeInstanceOf(OpenAI.APIError)
    expect(error).toBeInstanceOf(OpenAI.BadRequestError)
    const api = error as InstanceType<typeof OpenAI.APIError>
    expect(api.status).toBe(400)
    expect(api.code).toBe('context_length_exceeded')
    expect(api.type).toBe('invalid_request_error')
    expect(api.message).toContain('maximum context length is 8000 tokens')
    expect(api.requestID).toMatch(/^req_mock_\d+$/)
  })

  it('reads model metadata through the client', async () => {
    const model = await client.models.retrieve('mock-8k')
    expect(model).toMatchObject({ id: 'mock-8k', object: 'model', context_window: 8000, image_tokens: 85 })
  })
})
