/**
 * The mock provider's handler without any mount (the handler doubles as the adapter's `fetch`): routing,
 * boundary validation, capture and redaction, SSE framing, context-window enforcement, plan failures,
 * fault parameters and scheduling, and the summary-content fault variants (FAULT-23…27).
 */
import { describe, expect, it } from 'vitest'
import { assembleAttempt, COMPACTION_INSTRUCTION, type ContentBlock, type FaultSpec } from '@compaction-sim/core'
import { FaultInjectingPlan, FaultParamsError, parseFaultParams } from '../../src/provider/faults.ts'
import { MockProvider, MockProviderConfigError } from '../../src/provider/mock-provider.ts'
import { ReplyPlanExhaustedError, TranscriptReplyPlan } from '../../src/provider/transcript-plan.ts'
import type { PlannedOutcome, ReplyPlan } from '../../src/provider/types.ts'
import { splitText } from '../../src/provider/wire-response.ts'
import { ENFORCE_ALL, NO_IMAGE_LIMITS } from '../../src/provider/enforce.ts'
import type { MockRoute } from '../../src/provider/route.ts'
import { BUILTIN_SUMMARIZER } from '../../src/provider/summarizers.ts'
import { CLOCK, ListPlan, MODELS, adapter, call, failureOf, msg, prompt, provider, run } from './support.ts'

const BASE = 'http://direct.mock/v1'
const post = (body: unknown, headers: Record<string, string> = {}): Request =>
  new Request(`${BASE}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  })
const direct =
  (p: MockProvider): typeof fetch =>
  (input, init) =>
    p.handle(new Request(input, init))

async function events(response: Response): Promise<string[]> {
  return (await response.text())
    .split('\n\n')
    .filter((e) => e !== '')
    .map((e) => e.replace(/^data: /, ''))
}

describe('MockProvider routing and boundary', () => {
  it('answers unknown routes 404 and records the refusal', async () => {
    const p = provider('openai', [])
    const response = await p.handle(new Request(`${BASE}/embeddings`, { method: 'POST', body: '{}' }))
    expect(response.status).toBe(404)
    expect(p.refused).toEqual([
      { time: CLOCK.now(), method: 'POST', path: '/v1/embeddings', status: 404, reason: 'Unknown request URL: POST /v1/embeddings' },
    ])
  })

  it('lists models and reports unknown ones as model_not_found', async () => {
    const p = provider('openai', [])
    const list = (await (await p.handle(new Request(`${BASE}/models`))).json()) as { data: Array<{ id: string }> }
    expect(list.data.map((m) => m.id)).toEqual(['mock-8k', 'mock-4k'])
    const missing = await p.handle(new Request(`${BASE}/models/gpt-x`))
    expect(missing.status).toBe(404)
    expect(await missing.json()).toMatchObject({ error: { code: 'model_not_found' } })
  })

  it('refuses malformed bodies, unknown purposes and unknown models with the JSON path', async () => {
    const p = provider('openai', [])
    const bad = await p.handle(post('{not json'))
    expect(bad.status).toBe(400)
    expect(await p.handle(post({ model: 'mock-8k', messages: [{ role: 'robot', content: 'x' }] })).then((r) => r.json())).toMatchObject({
      error: { type: 'invalid_request_error', param: '$.messages[0].role' },
    })
    expect((await p.handle(post({ model: 'mock-8k', messages: [] }, { 'x-compaction-purpose': 'gossip' }))).status).toBe(400)
    expect((await p.handle(post({ model: 'gpt-x', messages: [] }))).status).toBe(404)
    expect(p.captured).toEqual([])
    expect(p.refused.map((r) => r.status)).toEqual([400, 400, 400, 404])
  })

  it('refuses unknown options', () => {
    expect(
      () => new MockProvider({ wire: 'openai', plan: { next: () => ({ kind: 'empty' }) }, clock: CLOCK, colour: 'red' } as never),
    ).toThrow(MockProviderConfigError)
  })
})

describe('MockProvider capture and SSE framing', () => {
  it('captures redacted, sorted headers, the body and the virtual time', async () => {
    const p = provider('openai', [{ kind: 'reply', reply: { blocks: [{ type: 'text', text: 'x' }] } }])
    await p.handle(
      post(
        { model: 'mock-8k', messages: [{ role: 'user', content: 'hi' }], temperature: 0.2, stop: 'END' },
        { 'Authorization': 'Bearer sk-secret', 'api-key': 'k', 'X-Extra': '1' },
      ),
    )
    const c = p.captured[0]
    expect(c).toMatchObject({
      index: 0,
      time: CLOCK.now(),
      purpose: 'conversation',
      model: 'mock-8k',
      temperature: 0.2,
      stop: ['END'],
      outcome: 'reply',
    })
    expect(c?.headers).toEqual({
      'api-key': '[redacted]',
      'authorization': '[redacted]',
      'content-type': 'application/json',
      'x-extra': '1',
    })
    expect(JSON.stringify(p.captured)).not.toContain('sk-secret')
  })

  it('frames SSE like OpenAI: role chunk first, usage null until the usage chunk, then [DONE]', async () => {
    const p = provider('deepseek', [
      {
        kind: 'reply',
        reply: {
          blocks: [
            { type: 'reasoning', text: 'hmm' },
            { type: 'text', text: 'ok' },
          ],
          usage: { inputTokens: 5, outputTokens: 2 },
        },
      },
      { kind: 'reply', reply: { blocks: [{ type: 'text', text: 'ok' }] } },
    ])
    const withUsage = await events(
      await p.handle(post({ model: 'mock-8k', messages: [], stream: true, stream_options: { include_usage: true } })),
    )
    const parsed = withUsage
      .slice(0, -1)
      .map(
        (e) =>
          JSON.parse(e) as {
            object: string
            created: number
            choices: Array<{ delta: Record<string, unknown>; finish_reason: string | null }>
            usage: unknown
          },
      )
    expect(withUsage.at(-1)).toBe('[DONE]')
    expect(parsed[0]?.choices[0]?.delta).toEqual({ role: 'assistant', content: '' })
    expect(parsed[1]?.choices[0]?.delta).toEqual({ reasoning_content: 'hmm' })
    expect(
      parsed
        .slice(0, -1)
        .every((c) => c.usage === null && c.object === 'chat.completion.chunk' && c.created === Math.floor(CLOCK.now() / 1000)),
    ).toBe(true)
    expect(parsed.at(-2)?.choices[0]?.finish_reason).toBe('stop')
    expect(parsed.at(-1)?.usage).toEqual({
      prompt_tokens: 5,
      completion_tokens: 2,
      total_tokens: 7,
      prompt_cache_hit_tokens: 0,
      prompt_cache_miss_tokens: 5,
    })
    const without = await events(await p.handle(post({ model: 'mock-8k', messages: [], stream: true })))
    expect(without.slice(0, -1).every((e) => !e.includes('"usage"'))).toBe(true)
  })

  it('splits deltas without breaking surrogate pairs', () => {
    const text = '🙂🙂🙂a🙂'
    for (const size of [2, 3, 4, 5]) {
      const pieces = splitText(text, size)
      expect(pieces.join('')).toBe(text)
      for (const piece of pieces) expect(/^[\uDC00-\uDFFF]|[\uD800-\uDBFF]$/.test(piece)).toBe(false)
    }
  })
})

describe('MockProvider outcomes', () => {
  it('rejects with the provider overflow when a route enforcing its window sees a prompt above it', async () => {
    const route: MockRoute = {
      model: 'mock-4k', wire: 'openai', contextWindow: 4000, maxOutputTokens: null, imageTokens: null, tokenizer: 'heuristic',
      enforce: ENFORCE_ALL, imageLimits: NO_IMAGE_LIMITS, usage: 'reported', summarizer: BUILTIN_SUMMARIZER,
    }
    const p = new MockProvider({ wire: 'openai', plan: new ListPlan([]), clock: CLOCK, routes: [route], deltaChars: 8 })
    const llm = adapter('openai', BASE, { fetch: direct(p) })
    const failure = failureOf(await run(llm, call(prompt('x'.repeat(40_000)), { model: 'mock-4k' })))
    expect(failure).toMatchObject({ code: 'CONTEXT_WINDOW_EXCEEDED', status: 400 })
    expect(failure.message).toMatch(/^This model's maximum context length is 4000 tokens\. However, your messages resulted in \d+ tokens/)
    expect(p.captured[0]?.expectedFailureCode).toBe('CONTEXT_WINDOW_EXCEEDED')
    expect(p.captured[0]?.rejectionKind).toBe('window')
  })

  it('reports a route\'s maxOutputTokens as max_output_tokens, which the adapter reads (hardened HARD-2)', async () => {
    const base: MockRoute = {
      model: 'mock-4k', wire: 'openai', contextWindow: 4000, maxOutputTokens: 1500, imageTokens: null, tokenizer: 'heuristic',
      enforce: ENFORCE_ALL, imageLimits: NO_IMAGE_LIMITS, usage: 'reported', summarizer: BUILTIN_SUMMARIZER,
    }
    const p = new MockProvider({ wire: 'openai', plan: new ListPlan([]), clock: CLOCK, routes: [base, { ...base, model: 'open', maxOutputTokens: null }], deltaChars: 8 })
    expect(await (await p.handle(new Request(`${BASE}/models/mock-4k`))).json()).toMatchObject({ context_window: 4000, max_output_tokens: 1500 })
    expect(await (await p.handle(new Request(`${BASE}/models/open`))).json()).not.toHaveProperty('max_output_tokens')
    const llm = adapter('openai', BASE, { fetch: direct(p) })
    expect(await llm.resolveModel('mock', 'mock-4k')).toMatchObject({ context: { contextWindow: 4000 }, maxOutputTokens: 1500 })
  })

  it('answers a plan error with 500 mock_internal_error and keeps the error for the report', async () => {
    const p = new MockProvider({ wire: 'openai', plan: new TranscriptReplyPlan({ turns: [] }), clock: CLOCK, models: MODELS })
    const llm = adapter('openai', BASE, { fetch: direct(p) })
    expect(failureOf(await run(llm, call(prompt('one too many'))))).toMatchObject({ code: 'SERVER', status: 500 })
    expect(p.internalErrors[0]).toBeInstanceOf(ReplyPlanExhaustedError)
  })

  it('serves the transcript in order, a summary for compaction and a title for session-title calls', async () => {
    const plan = new TranscriptReplyPlan({
      turns: [
        { steps: [{ reply: { blocks: [{ type: 'text', text: 'r1' }] } }] },
        { steps: [{ reply: { blocks: [{ type: 'text', text: 'r2' }] } }] },
      ],
    })
    const p = new MockProvider({ wire: 'openai', plan, clock: CLOCK, models: MODELS })
    const llm = adapter('openai', BASE, { fetch: direct(p) })
    const texts = async (o = call(prompt('Fix the parser, please.\nDetails follow.'))) =>
      JSON.stringify(assembleAttempt(await run(llm, o)).blocks)
    expect(await texts()).toBe('[{"type":"text","text":"r1"}]')
    expect(await texts(call(prompt('Fix the parser, please.\nDetails follow.'), { purpose: 'session-title' }))).toBe(
      '[{"type":"text","text":"Fix the parser, please."}]',
    )
    const summary = await texts(
      call([...prompt('Fix the parser, please.\nDetails follow.'), msg('user', [{ type: 'text', text: COMPACTION_INSTRUCTION }])], {
        purpose: 'compaction',
      }),
    )
    expect(summary).toContain('## Primary Request and Intent')
    expect(await texts()).toBe('[{"type":"text","text":"r2"}]')
    expect(plan.remaining).toBe(0)
  })
})

describe('provider faults', () => {
  const spec = (
    id: string,
    when: FaultSpec['when'],
    params: FaultSpec['params'],
    target: FaultSpec['target'] = 'conversation',
  ): FaultSpec => (params === undefined ? { id, kind: 'FAULT-16', target, when } : { id, kind: 'FAULT-16', target, when, params })
  const always: ReplyPlan = { next: (): PlannedOutcome => ({ kind: 'reply', reply: { blocks: [{ type: 'text', text: 'fine' }] } }) }

  it('validates fault params with the JSON path', () => {
    expect(() => parseFaultParams({ code: 'NOPE' }, 'f9')).toThrow(/f9\.params\.code: expected one of/)
    expect(() => parseFaultParams({ code: 'SERVER', colour: 1 }, 'f9')).toThrow(FaultParamsError)
    expect(() => parseFaultParams({ code: 'SERVER', afterChunks: -1 }, 'f9')).toThrow(/afterChunks/)
    expect(parseFaultParams({ code: 'TRANSPORT', delivery: 'after-chunks', afterChunks: 3 })).toEqual({
      kind: 'failure',
      code: 'TRANSPORT',
      delivery: 'after-chunks',
      afterChunks: 3,
      cut: 'error',
    })
    expect(() => new FaultInjectingPlan(always, [spec('f1', { eventType: 'compaction/start' }, { code: 'SERVER' })])).toThrow(
      /log conditions/,
    )
  })

  it('fires `times` consecutive requests, never on session-title calls, ignores harness targets', async () => {
    const plan = new FaultInjectingPlan(always, [
      spec('f1', { occurrence: 2 }, { code: 'RATE_LIMIT', times: 2, retryAfterMs: 10 }),
      spec('crash', {}, { code: 'SERVER' }, 'crash'),
    ])
    const p = new MockProvider({ wire: 'openai', plan, clock: CLOCK, models: MODELS })
    const llm = adapter('openai', BASE, { fetch: direct(p) })
    const outcomes: string[] = []
    for (let i = 0; i < 5; i++) {
      const chunks = await run(llm, call(prompt(`q${i}`), i === 2 ? { purpose: 'session-title' } : {}))
      const reason = chunks.at(-1)
      outcomes.push(reason?.type === 'finish' ? (reason.reason.kind === 'error' ? reason.reason.failure.code : reason.reason.kind) : '?')
    }
    expect(outcomes).toEqual(['stop', 'RATE_LIMIT', 'stop', 'RATE_LIMIT', 'stop'])
    expect(plan.fired).toEqual([
      ['f1', 1],
      ['f1', 3],
    ])
  })

  it('maps every code and delivery to an outcome the adapter classifies as that code', async () => {
    const cases: Array<[Record<string, string | number>, string]> = [
      [{ code: 'CONTEXT_WINDOW_EXCEEDED' }, 'CONTEXT_WINDOW_EXCEEDED'],
      [{ code: 'CONTEXT_WINDOW_EXCEEDED', delivery: 'in-band', afterChunks: 2 }, 'CONTEXT_WINDOW_EXCEEDED'],
      [{ code: 'IMAGE_OFFLOAD_REQUIRED', offloadImages: 2 }, 'IMAGE_OFFLOAD_REQUIRED'],
      [{ code: 'IMAGE_OFFLOAD_REQUIRED', offloadImages: 2, status: 413 }, 'IMAGE_OFFLOAD_REQUIRED'],
      [{ code: 'IMAGE_OFFLOAD_REQUIRED', status: 413 }, 'UNKNOWN'],
      [{ code: 'RATE_LIMIT', delivery: 'in-band' }, 'RATE_LIMIT'],
      [{ code: 'SERVER', status: 502 }, 'SERVER'],
      [{ code: 'TRANSPORT' }, 'TRANSPORT'],
      [{ code: 'TRANSPORT', delivery: 'after-headers' }, 'TRANSPORT'],
      [{ code: 'TRANSPORT', delivery: 'after-chunks', afterChunks: 2, cut: 'close' }, 'TRANSPORT'],
      [{ code: 'EMPTY_RESPONSE' }, 'EMPTY_RESPONSE'],
      [{ code: 'UNKNOWN', delivery: 'in-band', afterChunks: 1 }, 'UNKNOWN'],
    ]
    const image = {
      type: 'image' as const,
      attachment: { attachmentId: 'sha256:1', mediaType: 'image/png', bytes: 1, width: 1, height: 1 },
    }
    for (const [params, code] of cases) {
      const p = new MockProvider({
        wire: 'deepseek',
        plan: new FaultInjectingPlan(always, [spec('f', {}, params)]),
        clock: CLOCK,
        models: MODELS,
      })
      const llm = adapter('deepseek', BASE, { fetch: direct(p) })
      const failure = failureOf(await run(llm, call([msg('user', [{ type: 'text', text: 'look' }, image])])))
      expect([params, failure.code]).toEqual([params, code])
      expect(p.captured[0]?.expectedFailureCode).toBe(code)
    }
  })

  it('injects summary-content variants (FAULT-23…27) that the adapter carries through unchanged', async () => {
    const region = [
      ...prompt('Refactor packages/core/src/meter/price.ts for speed.'),
      msg('assistant', [{ type: 'text', text: 'On it.' }]),
      msg('user', [{ type: 'text', text: COMPACTION_INSTRUCTION }]),
    ]
    const variants = ['max-tokens', 'empty', 'reasoning-only', 'image', 'nested-image', 'mixed', 'not-smaller'] as const
    const seen: Record<string, string> = {}
    for (const variant of variants) {
      const plan = new FaultInjectingPlan(always, [spec('f', {}, { reply: variant }, 'compaction')])
      const p = new MockProvider({ wire: 'openai', plan, clock: CLOCK, models: MODELS })
      const attempt = assembleAttempt(await run(adapter('openai', BASE, { fetch: direct(p) }), call(region, { purpose: 'compaction' })))
      const shape = (b: ContentBlock): string =>
        b.type === 'tool-result' ? `tool-result(${(b['content'] as ContentBlock[]).map((i) => i.type).join()})` : b.type
      seen[variant] = `${attempt.finish.kind}:${attempt.blocks.map(shape).join(',')}`
    }
    expect(seen).toEqual({
      'max-tokens': 'max-tokens:text',
      'empty': 'stop:',
      'reasoning-only': 'stop:reasoning',
      'image': 'stop:text,image',
      'nested-image': 'stop:text,tool-result(image)',
      'mixed': 'stop:reasoning,text,tool-call',
      'not-smaller': 'stop:text',
    })
  })
})
