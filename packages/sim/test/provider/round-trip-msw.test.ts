/**
 * Core's OpenAI-compatible HTTP adapter against the mock provider mounted with msw, for both wires:
 * replies, usage, every §1.2.2 rejection and each fault delivery timing, the purpose header (§8.2), and
 * equivalence with the in-process ScriptedAdapter after assembly (§1.4.6).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import {
  assembleAttempt,
  CallId,
  COMPACTION_INSTRUCTION,
  ScriptedAdapter,
  type ContentBlock,
  type Message,
  type TokenUsage,
} from '@compaction-sim/core'
import { mountMsw, mswHandlers, type MswMount } from '../../src/provider/mount-msw.ts'
import { MockProvider } from '../../src/provider/mock-provider.ts'
import { FaultInjectingPlan } from '../../src/provider/faults.ts'
import { TranscriptReplyPlan } from '../../src/provider/transcript-plan.ts'
import type { PlannedOutcome } from '../../src/provider/types.ts'
import {
  imageOffloadRejection,
  overflowRejection,
  rateLimitRejection,
  serverRejection,
  unrecognisedRejection,
} from '../../src/provider/wire-response.ts'
import { CLOCK, MODELS, adapter, call, failureOf, finishOf, msg, prompt, run, toolResult } from './support.ts'

const WIRES = ['openai', 'deepseek'] as const
const BASES = { openai: 'http://openai.mock/v1', deepseek: 'http://deepseek.mock/v1' } as const

const outcomes: Record<(typeof WIRES)[number], PlannedOutcome[]> = { openai: [], deepseek: [] }
const providers = {
  openai: new MockProvider({ wire: 'openai', plan: { next: () => next('openai') }, clock: CLOCK, models: MODELS, deltaChars: 8 }),
  deepseek: new MockProvider({ wire: 'deepseek', plan: { next: () => next('deepseek') }, clock: CLOCK, models: MODELS, deltaChars: 8 }),
}
function next(wire: (typeof WIRES)[number]): PlannedOutcome {
  const o = outcomes[wire].shift()
  if (o === undefined) throw new Error(`no outcome queued for ${wire}`)
  return o
}

let mount: MswMount
beforeAll(() => {
  mount = mountMsw(providers.openai, BASES.openai, [{ provider: providers.deepseek, baseUrl: BASES.deepseek }])
})
afterAll(() => mount.close())

const text = (t: string): ContentBlock => ({ type: 'text', text: t })
const reply = (blocks: ContentBlock[], usage?: TokenUsage): PlannedOutcome => ({
  kind: 'reply',
  reply: usage === undefined ? { blocks } : { blocks, usage },
})
const twoCalls: ContentBlock[] = [
  { type: 'reasoning', text: 'Both files are needed; read them in parallel.' },
  { type: 'text', text: 'Reading both files.' },
  { type: 'tool-call', id: CallId('call_a'), name: 'read_file', arguments: '{"path":"src/a.ts"}' },
  { type: 'tool-call', id: CallId('call_b'), name: 'read_file', arguments: '{"path":"src/b.ts","lines":[1,200]}' },
]

describe.each(WIRES)('wire %s over msw', (wire) => {
  const llm = adapter(wire, BASES[wire])
  const p = providers[wire]
  const queue = (...o: PlannedOutcome[]): void => {
    outcomes[wire].push(...o)
  }
  afterEach(() => {
    outcomes[wire].length = 0
  })

  it('streams a text reply as block-start, text deltas, block-end, usage, finish', async () => {
    queue(reply([text('Hello there, this is a longer answer.')], { inputTokens: 30, outputTokens: 9, cacheReadTokens: 0 }))
    const chunks = await run(llm, call(prompt('hi')))
    expect(chunks[0]).toEqual({ type: 'block-start', index: 0, blockType: 'text' })
    expect(chunks.filter((c) => c.type === 'text-delta').length).toBeGreaterThan(1)
    expect(chunks.slice(-3).map((c) => c.type)).toEqual(['block-end', 'usage', 'finish'])
    const attempt = assembleAttempt(chunks)
    expect(attempt).toEqual({
      blocks: [text('Hello there, this is a longer answer.')],
      usage: { inputTokens: 30, outputTokens: 9, cacheReadTokens: 0 },
      finish: { kind: 'stop' },
    })
  })

  it('streams parallel tool calls and reasoning, finishing with tool-calls', async () => {
    queue(reply(twoCalls))
    const attempt = assembleAttempt(await run(llm, call(prompt('read a and b'))))
    expect(attempt.blocks).toEqual(twoCalls)
    expect(attempt.finish).toEqual({ kind: 'tool-calls' })
  })

  it('maps usage with cached tokens to disjoint buckets (and reports the wire field of the dialect)', async () => {
    const usage = { inputTokens: 1200, outputTokens: 40, cacheReadTokens: 800, reasoningTokens: 12 }
    queue(reply([text('ok')], usage))
    const before = p.captured.length
    const attempt = assembleAttempt(await run(llm, call(prompt('usage please'))))
    expect(attempt.usage).toEqual(usage)
    expect(p.captured[before]?.outcome).toBe('reply')
    // The raw wire usage of the same reply, read straight from the handler.
    queue(reply([text('ok')], usage))
    const response = await p.handle(
      new Request(`${BASES[wire]}/chat/completions`, {
        method: 'POST',
        body: JSON.stringify({ model: 'mock-8k', messages: [], stream: true, stream_options: { include_usage: true } }),
      }),
    )
    const events = (await response.text())
      .split('\n\n')
      .filter((e) => e.startsWith('data: '))
      .map((e) => e.slice(6))
    expect(events.at(-1)).toBe('[DONE]')
    const last = JSON.parse(events.at(-2) ?? '{}') as { choices: unknown[]; usage: Record<string, unknown> }
    expect(last.choices).toEqual([])
    expect(last.usage).toEqual(
      wire === 'openai'
        ? {
            prompt_tokens: 2000,
            completion_tokens: 40,
            total_tokens: 2040,
            prompt_tokens_details: { cached_tokens: 800 },
            completion_tokens_details: { reasoning_tokens: 12 },
          }
        : {
            prompt_tokens: 2000,
            completion_tokens: 40,
            total_tokens: 2040,
            prompt_cache_hit_tokens: 800,
            prompt_cache_miss_tokens: 1200,
            completion_tokens_details: { reasoning_tokens: 12 },
          },
    )
  })

  it('estimates usage from the prompt when the reply scripts none, with the prefix cache of §9.3', async () => {
    const first = prompt('estimate me')
    queue(reply([text('first')]), reply([text('second')]))
    const a = assembleAttempt(await run(llm, call(first)))
    const extended = [...first, msg('assistant', [text('first')]), msg('user', [text('and again')])]
    const b = assembleAttempt(await run(llm, call(extended)))
    // b extends a's request exactly, so a's whole prompt is b's cached prefix; b's new tail is uncached.
    expect(b.usage?.cacheReadTokens).toBe((a.usage?.inputTokens ?? 0) + (a.usage?.cacheReadTokens ?? 0))
    expect(b.usage?.inputTokens).toBe(4 + 4 + Math.ceil('first'.length / 4) + 4 + 4 + Math.ceil('and again'.length / 4))
    expect(b.usage?.outputTokens).toBe(4 + 4 + Math.ceil('second'.length / 4))
  })

  it('classifies the provider overflow (HTTP 400) as CONTEXT_WINDOW_EXCEEDED', async () => {
    queue({ kind: 'reject', rejection: overflowRejection(wire, 8000, 9100) })
    const failure = failureOf(await run(llm, call(prompt('too long'))))
    expect(failure).toMatchObject({ code: 'CONTEXT_WINDOW_EXCEEDED', status: 400 })
    expect(failure.message).toContain('maximum context length is 8000 tokens')
    expect(failure.requestId).toMatch(/^req_mock_\d+$/)
  })

  it('classifies the image-offload body with its offloadImages count', async () => {
    const image: ContentBlock = {
      type: 'image',
      attachment: { attachmentId: 'sha256:abc', mediaType: 'image/png', bytes: 10, width: 2, height: 2 },
    }
    queue(
      { kind: 'reject', rejection: imageOffloadRejection(2) },
      { kind: 'reject', rejection: imageOffloadRejection(0) },
      { kind: 'reject', rejection: imageOffloadRejection(3, 413) },
      { kind: 'reject', rejection: imageOffloadRejection(undefined, 413) },
    )
    const messages = [msg('user', [text('look'), image])]
    expect(failureOf(await run(llm, call(messages)))).toMatchObject({ code: 'IMAGE_OFFLOAD_REQUIRED', offloadImages: 2, status: 400 })
    expect(failureOf(await run(llm, call(messages)))).toMatchObject({ code: 'IMAGE_OFFLOAD_REQUIRED', offloadImages: 0 })
    expect(failureOf(await run(llm, call(messages)))).toMatchObject({ code: 'IMAGE_OFFLOAD_REQUIRED', offloadImages: 3, status: 413 })
    const bare = failureOf(await run(llm, call(messages)))
    expect(bare.code).toBe('UNKNOWN')
    expect(bare.offloadImages).toBeUndefined()
  })

  it('classifies 429, 5xx and an unrecognised 400', async () => {
    queue(
      { kind: 'reject', rejection: rateLimitRejection(wire, 1500) },
      { kind: 'reject', rejection: serverRejection(503) },
      { kind: 'reject', rejection: unrecognisedRejection() },
    )
    expect(failureOf(await run(llm, call(prompt('a'))))).toMatchObject({ code: 'RATE_LIMIT', status: 429, providerRetryAfterMs: 1500 })
    expect(failureOf(await run(llm, call(prompt('b'))))).toMatchObject({ code: 'SERVER', status: 503 })
    expect(failureOf(await run(llm, call(prompt('c'))))).toMatchObject({ code: 'UNKNOWN', status: 400 })
  })

  it('reports a reset before headers, a body error after headers and an end without finish as TRANSPORT', async () => {
    queue(
      { kind: 'reset' },
      { kind: 'interrupt', reply: { blocks: [text('partial answer that never ends')] }, afterChunks: 0, cut: { kind: 'error' } },
      { kind: 'interrupt', reply: { blocks: [text('partial answer that never ends')] }, afterChunks: 3, cut: { kind: 'error' } },
      { kind: 'interrupt', reply: { blocks: [text('partial answer that never ends')] }, afterChunks: 99, cut: { kind: 'close' } },
    )
    expect(failureOf(await run(llm, call(prompt('a')))).code).toBe('TRANSPORT')
    expect(failureOf(await run(llm, call(prompt('b')))).code).toBe('TRANSPORT')
    const partial = await run(llm, call(prompt('c')))
    expect(failureOf(partial).code).toBe('TRANSPORT')
    expect(
      partial
        .filter((c) => c.type === 'text-delta')
        .map((c) => (c.type === 'text-delta' ? c.text : ''))
        .join(''),
    ).toBe('partial answer t')
    const closed = await run(llm, call(prompt('d')))
    expect(failureOf(closed)).toMatchObject({ code: 'TRANSPORT', message: expect.stringContaining('without a finish') })
    expect(closed.some((c) => c.type === 'block-end')).toBe(false)
  })

  it('delivers an in-band error after N chunks as an error finish with the table code', async () => {
    const error = { ...(overflowRejection(wire, 8000, 8100).body['error'] as object), status: 400 }
    queue({ kind: 'interrupt', reply: { blocks: [text('streaming some text first')] }, afterChunks: 2, cut: { kind: 'in-band', error } })
    const chunks = await run(llm, call(prompt('in-band')))
    expect(chunks.map((c) => c.type)).toEqual(['block-start', 'text-delta', 'finish'])
    expect(failureOf(chunks)).toMatchObject({ code: 'CONTEXT_WINDOW_EXCEEDED', status: 400 })
  })

  it('reports a stream with no choice at all as EMPTY_RESPONSE, and an empty choice as an empty stop', async () => {
    queue({ kind: 'empty' }, reply([]))
    expect(failureOf(await run(llm, call(prompt('a')))).code).toBe('EMPTY_RESPONSE')
    const empty = assembleAttempt(await run(llm, call(prompt('b'))))
    expect(empty.blocks).toEqual([])
    expect(empty.finish).toEqual({ kind: 'stop' })
  })

  it("maps a hang to TIMEOUT when the injected timeout fires, and to ABORTED on the caller's abort", async () => {
    const timeouts: AbortController[] = []
    const timed = adapter(wire, BASES[wire], {
      timeout: () => {
        const c = new AbortController()
        timeouts.push(c)
        return c.signal
      },
    })
    const fire = (): void => {
      queueMicrotask(() => timeouts.at(-1)?.abort(new DOMException('virtual timeout', 'TimeoutError')))
    }
    queue({ kind: 'hang' })
    const before = run(timed, call(prompt('hang before headers')))
    await Promise.resolve()
    await new Promise((r) => setImmediate(r))
    fire()
    expect(failureOf(await before).code).toBe('TIMEOUT')
    queue({ kind: 'hang', reply: { blocks: [text('slow slow slow slow')] }, afterChunks: 2 })
    const chunks: string[] = []
    const after = (async () => {
      const out = []
      for await (const c of timed.stream(call(prompt('hang after chunks')))) {
        out.push(c)
        chunks.push(c.type)
        if (chunks.length === 2) fire()
      }
      return out
    })()
    await expect(after).rejects.toMatchObject({ failure: { code: 'TIMEOUT' } })
    queue({ kind: 'hang', reply: { blocks: [text('slow')] }, afterChunks: 1 })
    const controller = new AbortController()
    const aborted = run(llm, call(prompt('abort me'), { signal: controller.signal }))
    await new Promise((r) => setImmediate(r))
    controller.abort(new Error('user cancelled'))
    expect(finishOf(await aborted)).toMatchObject({ kind: 'aborted', failure: { code: 'ABORTED' } })
  })

  it('sends purpose only as a header: a summary body is the conversation body plus the instruction', async () => {
    const history: Message[] = [...prompt('fix the bug in src/app.ts'), msg('assistant', [text('Done: fixed src/app.ts.')])]
    queue(reply([text('conversation')]), reply([text('summary')]))
    await run(llm, call(history))
    await run(
      llm,
      call([...history, msg('user', [text(COMPACTION_INSTRUCTION)])], { purpose: 'compaction', sessionId: 's-1', maxTokens: 8192 }),
    )
    const [conv, sum] = p.captured.slice(-2)
    expect(conv?.purpose).toBe('conversation')
    expect(conv?.headers['x-compaction-purpose']).toBeUndefined()
    expect(sum?.purpose).toBe('compaction')
    expect(sum?.headers['x-compaction-purpose']).toBe('compaction')
    expect(sum?.headers['x-session-id']).toBe('s-1')
    expect(sum?.headers['authorization']).toBe('[redacted]')
    expect(JSON.stringify(sum?.body)).not.toContain('compaction-purpose')
    expect(JSON.stringify(sum?.body)).not.toContain('"purpose"')
    const convBody = conv?.body as { messages: unknown[] }
    const sumBody = sum?.body as { messages: unknown[]; max_tokens: number }
    expect(sumBody.messages.slice(0, -1)).toEqual(convBody.messages)
    expect(sumBody.messages.at(-1)).toEqual({ role: 'user', content: COMPACTION_INSTRUCTION })
    expect(sumBody.max_tokens).toBe(8192)
  })

  it('round-trips protocol messages through the wire: system, images, tool calls and tool results', async () => {
    const image: ContentBlock = {
      type: 'image',
      attachment: { attachmentId: 'sha256:0f', mediaType: 'image/png', bytes: 1234, width: 64, height: 32, name: 'shot.png' },
    }
    const messages: Message[] = [
      msg('system', [text('sys')]),
      msg('user', [text('look at this'), image]),
      msg('assistant', twoCalls),
      toolResult('call_a', [text('export const a = 1')]),
      toolResult('call_b', [text('line 1'), image]),
      msg('user', [text('thanks')]),
    ]
    queue(reply([text('ok')]))
    await run(llm, call(messages, { tools: [{ name: 'read_file', description: 'Read a file.', parameters: { type: 'object' } }] }))
    const captured = p.captured.at(-1)
    expect(captured?.messages).toEqual(messages.map((m) => ({ role: m.role, content: m.content })))
    expect(captured?.tools).toEqual([{ name: 'read_file', description: 'Read a file.', parameters: { type: 'object' } }])
  })

  it('resolves model metadata from the mock endpoint, or from a static table', async () => {
    expect(await llm.resolveModel('mock', 'mock-8k')).toEqual({
      provider: 'mock',
      id: 'mock-8k',
      name: 'mock-8k',
      context: { contextWindow: 8000 },
      imageTokens: 85,
    })
    expect(await llm.resolveModel('mock', 'mock-4k')).toEqual({
      provider: 'mock',
      id: 'mock-4k',
      name: 'mock-4k',
      context: { contextWindow: 4000 },
    })
    expect(await llm.resolveModel('mock', 'nope')).toEqual({ provider: 'mock', id: 'nope', name: 'nope' })
    const table = adapter(wire, BASES[wire], { models: [{ id: 'mock-8k', contextWindow: 123 }], modelMetadata: 'static' })
    expect(await table.resolveModel('mock', 'mock-8k')).toEqual({
      provider: 'mock',
      id: 'mock-8k',
      name: 'mock-8k',
      context: { contextWindow: 123 },
    })
    expect(await table.resolveModel('mock', 'mock-4k')).toEqual({ provider: 'mock', id: 'mock-4k', name: 'mock-4k' })
  })

  it('yields the same assembled attempt as the ScriptedAdapter for the same blocks and usage', async () => {
    const cases: Array<{ blocks: ContentBlock[]; usage: TokenUsage; finish?: 'max-tokens' }> = [
      {
        blocks: [text('A plain answer with ünïcödé and emoji 🙂 across delta borders.')],
        usage: { inputTokens: 10, outputTokens: 12, cacheReadTokens: 3 },
      },
      { blocks: twoCalls, usage: { inputTokens: 500, outputTokens: 60, cacheReadTokens: 0, reasoningTokens: 20 } },
      { blocks: [text('cut short')], usage: { inputTokens: 1, outputTokens: 2, cacheReadTokens: 1 }, finish: 'max-tokens' },
    ]
    for (const c of cases) {
      const scripted = new ScriptedAdapter({
        routes: [{ provider: 'mock', model: 'mock-8k' }],
        conversation: [
          c.finish === undefined
            ? { kind: 'reply', blocks: c.blocks, usage: c.usage }
            : { kind: 'reply', blocks: c.blocks, usage: c.usage, finish: { kind: 'max-tokens' } },
        ],
      })
      queue({
        kind: 'reply',
        reply: c.finish === undefined ? { blocks: c.blocks, usage: c.usage } : { blocks: c.blocks, usage: c.usage, finish: c.finish },
      })
      const viaHttp = assembleAttempt(await run(llm, call(prompt('same'))))
      const inProcess = assembleAttempt(await run(scripted, call(prompt('same'))))
      expect(viaHttp).toEqual(inProcess)
    }
  })
})

describe('scheduled faults over a transcript plan', () => {
  it('fails the scheduled request, then serves the same transcript reply to the retry', async () => {
    const transcript = { turns: [{ steps: [{ reply: { blocks: [text('first reply')] } }, { reply: { blocks: [text('second reply')] } }] }] }
    const plan = new FaultInjectingPlan(new TranscriptReplyPlan(transcript), [
      { id: 'f1', kind: 'FAULT-01', target: 'conversation', when: { requestIndex: 1 }, params: { code: 'CONTEXT_WINDOW_EXCEEDED' } },
      {
        id: 'f2',
        kind: 'FAULT-16',
        target: 'conversation',
        when: { requestIndex: 2 },
        params: { code: 'TRANSPORT', delivery: 'after-chunks', afterChunks: 2 },
      },
      {
        id: 'f3',
        kind: 'FAULT-20',
        target: 'compaction',
        when: { occurrence: 1 },
        params: { code: 'SERVER', delivery: 'in-band', afterChunks: 1 },
      },
    ])
    const p = new MockProvider({ wire: 'openai', plan, clock: CLOCK, models: MODELS })
    mount.server.use(...mswHandlers(p, 'http://local.mock/v1'))
    try {
      const llm = adapter('openai', 'http://local.mock/v1')
      const codes: string[] = []
      const texts: string[] = []
      for (let i = 0; i < 4; i++) {
        const chunks = await run(llm, call(prompt(`step ${i}`)))
        const reason = finishOf(chunks)
        if (reason.kind === 'error') codes.push(reason.failure.code)
        else texts.push(JSON.stringify(assembleAttempt(chunks).blocks))
      }
      expect(codes).toEqual(['CONTEXT_WINDOW_EXCEEDED', 'TRANSPORT'])
      expect(texts).toEqual([JSON.stringify([text('first reply')]), JSON.stringify([text('second reply')])])
      const summary = failureOf(
        await run(llm, call([...prompt('x'), msg('user', [text(COMPACTION_INSTRUCTION)])], { purpose: 'compaction' })),
      )
      expect(summary).toMatchObject({ code: 'SERVER', status: 500 })
      expect(plan.fired).toEqual([
        ['f1', 1],
        ['f2', 2],
        ['f3', 4],
      ])
      expect(p.captured.map((c) => c.expectedFailureCode ?? '-')).toEqual(['-', 'CONTEXT_WINDOW_EXCEEDED', 'TRANSPORT', '-', 'SERVER'])
    } finally {
      mount.server.resetHandlers()
    }
  })
})
