/**
 * `MockProvider` with provider-world routes (issue #15): enforcement answers before the reply plan (the plan
 * is not consumed, the capture records the outcome and the §1.2.2 code), and each usage mode (`reported`,
 * `omitted`, `late`) shapes the usage the OpenAI-compatible and Anthropic writers send, streamed and not.
 * Requests go straight to the WHATWG handler (no mount).
 */
import { describe, expect, it } from 'vitest'
import { ENFORCE_ALL, NO_IMAGE_LIMITS, type UsageMode } from '../../src/provider/enforce.ts'
import { MockProvider } from '../../src/provider/mock-provider.ts'
import type { MockRoute } from '../../src/provider/route.ts'
import { BUILTIN_SUMMARIZER } from '../../src/provider/summarizers.ts'
import type { MockWire, PlannedOutcome } from '../../src/provider/types.ts'
import { CLOCK, ListPlan } from './support.ts'

function world(wire: MockWire, usage: UsageMode, outcomes: PlannedOutcome[]): MockProvider {
  const route: MockRoute = {
    model: 'w-1', wire, contextWindow: 1000, maxOutputTokens: 500, imageTokens: null, tokenizer: 'heuristic',
    enforce: ENFORCE_ALL, imageLimits: NO_IMAGE_LIMITS, usage, summarizer: BUILTIN_SUMMARIZER,
  }
  return new MockProvider({ wire, plan: new ListPlan(outcomes), clock: CLOCK, routes: [route], deltaChars: 64 })
}

const reply = (): PlannedOutcome => ({ kind: 'reply', reply: { blocks: [{ type: 'text', text: 'ok' }], usage: { inputTokens: 7, outputTokens: 2 } } })

async function post(p: MockProvider, body: Record<string, unknown>): Promise<Response> {
  const path = p.spec.wire === 'anthropic' ? 'messages' : 'chat/completions'
  const full = { model: 'w-1', ...(p.spec.wire === 'anthropic' ? { max_tokens: 50 } : {}), ...body }
  return p.handle(new Request(`http://mock/v1/${path}`, { method: 'POST', body: JSON.stringify(full), headers: { 'content-type': 'application/json' } }))
}

/** The JSON payloads of an SSE body (`[DONE]` dropped). */
async function events(res: Response): Promise<Array<Record<string, unknown>>> {
  const text = await res.text()
  return text.split('\n').filter((l) => l.startsWith('data: ') && l !== 'data: [DONE]').map((l) => JSON.parse(l.slice(6)) as Record<string, unknown>)
}

const messages = [{ role: 'user', content: 'hi' }]

describe('enforcement inside MockProvider', () => {
  it('rejects before the plan (nothing consumed), captures the outcome and code, then serves the next valid request', async () => {
    const outcomes = [reply()]
    const p = world('openai', 'reported', outcomes)
    const res = await post(p, { messages, max_tokens: 501 })
    expect(res.status).toBe(400)
    expect(await res.json()).toMatchObject({ error: { param: 'max_tokens', code: 'invalid_value' } })
    expect(outcomes).toHaveLength(1)
    const ok = await post(p, { messages, max_tokens: 500 })
    expect(ok.status).toBe(200)
    expect(outcomes).toHaveLength(0)
    expect(p.captured.map((c) => [c.outcome, c.expectedFailureCode])).toEqual([['reject', 'UNKNOWN'], ['reply', undefined]])
    expect(p.internalErrors).toEqual([])
  })

  it('answers Anthropic pairing rejections in its envelope', async () => {
    const p = world('anthropic', 'reported', [])
    const res = await post(p, { messages: [{ role: 'user', content: 'a' }, { role: 'user', content: 'b' }] })
    expect(res.status).toBe(400)
    expect(res.headers.get('request-id')).toBe('req_mock_0')
    expect(await res.json()).toEqual({
      type: 'error',
      error: { type: 'invalid_request_error', message: 'messages: roles must alternate between "user" and "assistant", but found multiple "user" roles in a row' },
    })
  })
})

describe('usage modes on the OpenAI-compatible wires', () => {
  const streamed = { messages, stream: true, stream_options: { include_usage: true } }

  it('reported: a trailing choices-less usage chunk, usage:null on every other chunk', async () => {
    const ev = await events(await post(world('openai', 'reported', [reply()]), streamed))
    expect(ev.slice(0, -1).every((e) => e['usage'] === null)).toBe(true)
    expect(ev.at(-1)).toMatchObject({ choices: [], usage: { prompt_tokens: 7, completion_tokens: 2 } })
  })

  it('omitted: no usage anywhere, even when asked, nor in the JSON body', async () => {
    const ev = await events(await post(world('deepseek', 'omitted', [reply()]), streamed))
    expect(ev.some((e) => 'usage' in e)).toBe(false)
    expect(ev.at(-1)).toMatchObject({ choices: [{ finish_reason: 'stop' }] })
    const body = (await (await post(world('openai', 'omitted', [reply()]), { messages })).json()) as Record<string, unknown>
    expect('usage' in body).toBe(false)
  })

  it('late: usage only on the final (finish) chunk, asked or not; the JSON body keeps it', async () => {
    for (const body of [streamed, { messages, stream: true }]) {
      const ev = await events(await post(world('openai', 'late', [reply()]), body))
      expect(ev.slice(0, -1).some((e) => 'usage' in e)).toBe(false)
      expect(ev.at(-1)).toMatchObject({ choices: [{ finish_reason: 'stop' }], usage: { prompt_tokens: 7, completion_tokens: 2, total_tokens: 9 } })
    }
    const json = (await (await post(world('deepseek', 'late', [reply()]), { messages })).json()) as Record<string, unknown>
    expect(json['usage']).toMatchObject({ prompt_tokens: 7, prompt_cache_miss_tokens: 7 })
  })

  it('late: an interrupted stream cut before the finish carries no usage at all', async () => {
    const cut: PlannedOutcome = { kind: 'interrupt', reply: { blocks: [{ type: 'text', text: 'ok' }] }, afterChunks: 99, cut: { kind: 'close' } }
    const ev = await events(await post(world('openai', 'late', [cut]), streamed))
    expect(ev.some((e) => 'usage' in e)).toBe(false)
    expect(ev.some((e) => (e['choices'] as Array<{ finish_reason: unknown }>)[0]?.finish_reason === 'stop')).toBe(false)
  })
})

describe('usage modes on the Anthropic wire', () => {
  const usageOf = (ev: Array<Record<string, unknown>>, type: string): unknown => {
    const e = ev.find((x) => x['type'] === type)
    return type === 'message_start' ? (e?.['message'] as Record<string, unknown> | undefined)?.['usage'] : e?.['usage']
  }

  it('reported: input usage in message_start, the full usage in message_delta', async () => {
    const ev = await events(await post(world('anthropic', 'reported', [reply()]), { messages, stream: true }))
    expect(usageOf(ev, 'message_start')).toMatchObject({ input_tokens: 7, output_tokens: 0 })
    expect(usageOf(ev, 'message_delta')).toMatchObject({ input_tokens: 7, output_tokens: 2 })
  })

  it('late: message_start reports zeros, only message_delta the figures', async () => {
    const ev = await events(await post(world('anthropic', 'late', [reply()]), { messages, stream: true }))
    expect(usageOf(ev, 'message_start')).toEqual({ input_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 0 })
    expect(usageOf(ev, 'message_delta')).toMatchObject({ input_tokens: 7, output_tokens: 2 })
  })

  it('omitted: no usage object in any event nor in the JSON body', async () => {
    const ev = await events(await post(world('anthropic', 'omitted', [reply()]), { messages, stream: true }))
    expect(usageOf(ev, 'message_start')).toBeUndefined()
    expect(usageOf(ev, 'message_delta')).toBeUndefined()
    expect(ev.find((x) => x['type'] === 'message_delta')).toMatchObject({ delta: { stop_reason: 'end_turn' } })
    const body = (await (await post(world('anthropic', 'omitted', [reply()]), { messages })).json()) as Record<string, unknown>
    expect(body['type']).toBe('message')
    expect('usage' in body).toBe(false)
  })
})

describe('usage in the route\'s own units', () => {
  const reply0 = (text: string): PlannedOutcome => ({ kind: 'reply', reply: { blocks: [{ type: 'text', text }] } })
  function routed(tokenizer: MockRoute['tokenizer'], outcomes: PlannedOutcome[]): MockProvider {
    const route: MockRoute = {
      model: 'w-1', wire: 'openai', contextWindow: 100000, maxOutputTokens: null, imageTokens: null, tokenizer,
      enforce: ENFORCE_ALL, imageLimits: NO_IMAGE_LIMITS, usage: 'reported', summarizer: BUILTIN_SUMMARIZER,
    }
    return new MockProvider({ wire: 'openai', plan: new ListPlan(outcomes), clock: CLOCK, routes: [route], deltaChars: 64 })
  }
  // 40 CJK code points: `dense` counts one token each, the §2.2 heuristic ceil(40 / 4) = 10.
  const cjk = '上下文压缩协议'.repeat(6).slice(0, 40)

  it('a dense route reports the prompt its tokenizer counted (its capture figure), not the §9.2 heuristic price', async () => {
    const p = routed('dense', [reply0(cjk)])
    const body = (await (await post(p, { messages: [{ role: 'user', content: cjk }] })).json()) as { usage: { prompt_tokens: number; completion_tokens: number } }
    const counted = p.captured[0]?.providerPromptTokens
    expect(counted).toBeGreaterThan(40)
    expect(body.usage.prompt_tokens).toBe(counted)
    // the reply, 40 CJK code points, as dense counts it (+4 framing), not the heuristic's 10 + 4
    expect(body.usage.completion_tokens).toBe(44)
  })

  it('a heuristic route reports exactly the §9.2 price (the cache contract figures, unscaled)', async () => {
    const p = routed('heuristic', [reply0(cjk)])
    const body = (await (await post(p, { messages: [{ role: 'user', content: cjk }] })).json()) as { usage: { prompt_tokens: number; completion_tokens: number } }
    expect(body.usage.prompt_tokens).toBe(p.captured[0]?.providerPromptTokens)
    expect(body.usage.prompt_tokens).toBeLessThan(40)
    expect(body.usage.completion_tokens).toBeLessThan(44)
  })
})
