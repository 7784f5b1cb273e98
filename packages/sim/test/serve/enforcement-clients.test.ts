/**
 * Issue #15 "Done when": each provider enforcement turns into the official clients' own typed errors. `openai`
 * and `@anthropic-ai/sdk` are pointed at `serve()` (what `sim serve` runs) serving provider-world routes, over a
 * real loopback socket; each rule must surface as the SDK's `BadRequestError` (HTTP 400) carrying the wire's
 * own message, type and code. No msw or nock in this file.
 */
import Anthropic, { BadRequestError as AnthropicBadRequest } from '@anthropic-ai/sdk'
import OpenAI, { BadRequestError as OpenAiBadRequest } from 'openai'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ENFORCE_ALL, NO_IMAGE_LIMITS } from '../../src/provider/enforce.ts'
import type { MockRoute } from '../../src/provider/route.ts'
import { BUILTIN_SUMMARIZER } from '../../src/provider/summarizers.ts'
import type { MockWire } from '../../src/provider/types.ts'
import { serve, ServeConfigError, type Serving } from '../../src/serve/serve.ts'

function routes(wire: MockWire): MockRoute[] {
  const base: MockRoute = {
    model: 'world-1k', wire, contextWindow: 1000, maxOutputTokens: 4096, imageTokens: null, tokenizer: 'heuristic',
    enforce: ENFORCE_ALL, imageLimits: { ...NO_IMAGE_LIMITS, imagesPerRequestMax: 1 }, usage: 'reported', summarizer: BUILTIN_SUMMARIZER,
  }
  return [base, { ...base, model: 'summary-1k', enforce: { ...ENFORCE_ALL, window: 'prompt-plus-max-tokens' } }]
}

const servers: Partial<Record<MockWire, Serving>> = {}
let openai: OpenAI
let deepseek: OpenAI
let anthropic: Anthropic

beforeAll(async () => {
  for (const wire of ['openai', 'deepseek', 'anthropic'] as const) servers[wire] = await serve({ routes: routes(wire) })
  const url = (wire: MockWire): string => servers[wire]?.baseURL ?? ''
  openai = new OpenAI({ apiKey: 'sk-enforce', baseURL: url('openai'), maxRetries: 0 })
  deepseek = new OpenAI({ apiKey: 'sk-enforce', baseURL: url('deepseek'), maxRetries: 0 })
  anthropic = new Anthropic({ apiKey: 'sk-ant-enforce', baseURL: url('anthropic').replace(/\/v1$/, ''), maxRetries: 0 })
})
afterAll(async () => {
  for (const s of Object.values(servers)) await s.close()
})

async function thrown(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise
  } catch (err) {
    return err
  }
  throw new Error('expected the client to throw')
}

/** The OpenAI SDK's typed error for a rejected call: `BadRequestError`, status 400. */
async function openAiError(client: OpenAI, body: OpenAI.ChatCompletionCreateParamsNonStreaming): Promise<OpenAiBadRequest> {
  const err = await thrown(client.chat.completions.create(body))
  expect(err).toBeInstanceOf(OpenAiBadRequest)
  const e = err as OpenAiBadRequest
  expect(e.status).toBe(400)
  return e
}

/** The Anthropic SDK's typed error for a rejected call: `BadRequestError`, status 400. */
async function anthropicError(body: Anthropic.MessageCreateParamsNonStreaming): Promise<AnthropicBadRequest> {
  const err = await thrown(anthropic.messages.create(body))
  expect(err).toBeInstanceOf(AnthropicBadRequest)
  const e = err as AnthropicBadRequest
  expect(e.status).toBe(400)
  return e
}

const LONG = 'word '.repeat(2000)
const attachment = (id: string): string => `attachment://${id}?media_type=image%2Fpng&bytes=10&width=1&height=1`

describe('serve({ routes })', () => {
  it('refuses an empty route list and routes given with a scenario', async () => {
    await expect(serve({ routes: [] })).rejects.toThrow(ServeConfigError)
    await expect(serve({ routes: routes('openai'), scenario: 'scenarios/smoke/no-pressure.yaml' })).rejects.toThrow(/no scenario with it/)
  })
})

describe('the openai client against served routes', () => {
  const user = (content: string): OpenAI.ChatCompletionMessageParam => ({ role: 'user', content })

  it('serves a request every rule accepts', async () => {
    const done = await openai.chat.completions.create({ model: 'world-1k', messages: [user('hello')], max_tokens: 100 })
    expect(done.choices[0]?.message.content).toBe('Mock reply 1.')
  })

  it('window → context_length_exceeded, in both wordings', async () => {
    const prompt = await openAiError(openai, { model: 'world-1k', messages: [user(LONG)] })
    expect(prompt.code).toBe('context_length_exceeded')
    expect(prompt.param).toBe('messages')
    expect(prompt.message).toMatch(/^400 This model's maximum context length is 1000 tokens\. However, your messages resulted in \d+ tokens\./)
    const plus = await openAiError(openai, { model: 'summary-1k', messages: [user('summarize')], max_tokens: 995 })
    expect(plus.code).toBe('context_length_exceeded')
    expect(plus.message).toMatch(/However, you requested \d+ tokens \(\d+ in the messages, 995 in the completion\)/)
  })

  it('maxOutput → invalid_value on the field the client sent', async () => {
    const e = await openAiError(openai, { model: 'world-1k', messages: [user('hi')], max_completion_tokens: 5000 })
    expect([e.code, e.param, e.type]).toEqual(['invalid_value', 'max_completion_tokens', 'invalid_request_error'])
    expect(e.message).toBe('400 max_completion_tokens is too large: 5000. This model supports at most 4096 completion tokens, whereas you provided 5000.')
  })

  it('pairing → the missing-result and orphan-result 400s', async () => {
    const call: OpenAI.ChatCompletionMessageParam = {
      role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'read', arguments: '{}' } }],
    }
    const missing = await openAiError(openai, { model: 'world-1k', messages: [user('go'), call, user('next')] })
    expect([missing.code, missing.param]).toEqual([null, 'messages.[2].role'])
    expect(missing.message).toMatch(/must be followed by tool messages responding to each 'tool_call_id'\. .*response messages: call_1$/)
    const orphan = await openAiError(openai, { model: 'world-1k', messages: [user('go'), { role: 'tool', tool_call_id: 'call_1', content: 'ok' }] })
    expect(orphan.param).toBe('messages.[1].role')
    expect(orphan.message).toBe("400 Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.")
  })

  it('images → IMAGE_OFFLOAD_REQUIRED with the provider-computed offloadImages', async () => {
    const parts: OpenAI.ChatCompletionContentPart[] = ['a', 'b', 'c'].map((id) => ({ type: 'image_url', image_url: { url: attachment(id) } }))
    const e = await openAiError(openai, { model: 'world-1k', messages: [{ role: 'user', content: parts }] })
    expect([e.code, e.type]).toEqual(['IMAGE_OFFLOAD_REQUIRED', 'image_offload_required'])
    expect(e.error).toMatchObject({ offloadImages: 2 })
  })
})

describe('the openai client against served DeepSeek routes', () => {
  it('maxOutput, pairing and the thinking-mode reasoning rule in DeepSeek\'s own wording', async () => {
    const max = await openAiError(deepseek, { model: 'world-1k', messages: [{ role: 'user', content: 'hi' }], max_tokens: 8192 })
    expect([max.code, max.param]).toEqual(['invalid_request_error', null])
    expect(max.message).toBe('400 Invalid max_tokens value, the valid range of max_tokens is [1, 4096]')
    const call: OpenAI.ChatCompletionMessageParam = {
      role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'read', arguments: '{}' } }],
    }
    const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'go' }, call, { role: 'tool', tool_call_id: 'call_1', content: 'ok' }]
    const reasoning = await openAiError(deepseek, { model: 'world-1k', messages, reasoning_effort: 'high' })
    expect(reasoning.message).toMatch(/^400 Missing `reasoning_content` field in the assistant message at message index 1\./)
    const window = await openAiError(deepseek, { model: 'world-1k', messages: [{ role: 'user', content: LONG }] })
    expect(window.code).toBe('invalid_request_error')
    expect(window.message).toMatch(/maximum context length is 1000 tokens\. However, you requested \d+ tokens \(\d+ in the messages, 0 in the completion\)/)
  })
})

describe('the anthropic client against served routes', () => {
  const user = (content: string): Anthropic.MessageParam => ({ role: 'user', content })

  it('serves a request every rule accepts', async () => {
    const done = await anthropic.messages.create({ model: 'world-1k', max_tokens: 100, messages: [user('hello')] })
    expect(done.content).toEqual([{ type: 'text', text: 'Mock reply 1.' }])
  })

  it('window → "prompt is too long", and the prompt + max_tokens variant', async () => {
    const prompt = await anthropicError({ model: 'world-1k', max_tokens: 100, messages: [user(LONG)] })
    expect(prompt.type).toBe('invalid_request_error')
    expect(prompt.apiMessage).toMatch(/^prompt is too long: \d+ tokens > 1000 maximum$/)
    const plus = await anthropicError({ model: 'summary-1k', max_tokens: 995, messages: [user('summarize')] })
    expect(plus.apiMessage).toMatch(/^input length and `max_tokens` exceed context limit: \d+ \+ 995 > 1000, decrease input length or `max_tokens` and try again$/)
  })

  it('maxOutput → "max_tokens: N > M, which is the maximum allowed number of output tokens for <model>"', async () => {
    const e = await anthropicError({ model: 'world-1k', max_tokens: 21333, messages: [user('hi')] })
    expect(e.type).toBe('invalid_request_error')
    expect(e.apiMessage).toBe('max_tokens: 21333 > 4096, which is the maximum allowed number of output tokens for world-1k')
  })

  it('pairing → tool_use without tool_result, role alternation, and a thinking block left last', async () => {
    const use: Anthropic.MessageParam = { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'read', input: {} }] }
    const missing = await anthropicError({ model: 'world-1k', max_tokens: 100, messages: [user('go'), use, user('summarize the session')] })
    expect(missing.apiMessage).toBe(
      'messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_1. ' +
        'Each `tool_use` block must have a corresponding `tool_result` block in the next message.',
    )
    const twice = await anthropicError({ model: 'world-1k', max_tokens: 100, messages: [user('a'), user('b')] })
    expect(twice.apiMessage).toBe('messages: roles must alternate between "user" and "assistant", but found multiple "user" roles in a row')
    const thinking: Anthropic.MessageParam = { role: 'assistant', content: [{ type: 'thinking', thinking: 'hmm', signature: 's' }] }
    const orphan = await anthropicError({ model: 'world-1k', max_tokens: 100, messages: [user('go'), thinking, user('x')] })
    expect(orphan.apiMessage).toBe('messages.1: The final block in an assistant message cannot be `thinking`.')
  })

  it('images → IMAGE_OFFLOAD_REQUIRED in the Anthropic envelope with offloadImages', async () => {
    const image = (n: number): Anthropic.ImageBlockParam => ({
      type: 'image', source: { type: 'base64', media_type: 'image/png', data: Buffer.alloc(n, 1).toString('base64') },
    })
    const e = await anthropicError({ model: 'world-1k', max_tokens: 100, messages: [{ role: 'user', content: [image(10), image(10)] }] })
    expect(e.type).toBe('image_offload_required')
    expect(e.error).toMatchObject({ type: 'error', error: { code: 'IMAGE_OFFLOAD_REQUIRED', offloadImages: 1 } })
  })
})
