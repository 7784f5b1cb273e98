/**
 * The mock on a real loopback `node:http` server: the adapter talks to it over real sockets. A reset before
 * headers and a body error after `flushHeaders()` both reach the client as TRANSPORT, but through different
 * client-visible errors (fetch rejects vs. the body read fails) — the style §6 pitfall this mount guards.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { assembleAttempt } from '@compaction-sim/core'
import type { MockProvider } from '../../src/provider/mock-provider.ts'
import { serveHttp, type HttpServing } from '../../src/provider/serve-http.ts'
import type { PlannedOutcome } from '../../src/provider/types.ts'
import { overflowRejection, rateLimitRejection } from '../../src/provider/wire-response.ts'
import { adapter, call, failureOf, prompt, provider, run } from './support.ts'

const outcomes: PlannedOutcome[] = []
let mock: MockProvider
let server: HttpServing

beforeAll(async () => {
  mock = provider('openai', outcomes)
  server = await serveHttp(mock)
})
afterAll(() => server.close())

describe('serveHttp', () => {
  it('binds loopback and serves a streamed reply', async () => {
    expect(server.baseURL).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/)
    outcomes.push({
      kind: 'reply',
      reply: { blocks: [{ type: 'text', text: 'over a real socket' }], usage: { inputTokens: 3, outputTokens: 4, cacheReadTokens: 2 } },
    })
    const attempt = assembleAttempt(await run(adapter('openai', server.baseURL), call(prompt('hi'))))
    expect(attempt).toEqual({
      blocks: [{ type: 'text', text: 'over a real socket' }],
      usage: { inputTokens: 3, outputTokens: 4, cacheReadTokens: 2 },
      finish: { kind: 'stop' },
    })
  })

  it('distinguishes a reset before headers from a failure after flushed headers', async () => {
    outcomes.push({ kind: 'reset' })
    const before = await fetch(`${server.baseURL}/chat/completions`, {
      method: 'POST',
      body: JSON.stringify({ model: 'mock-8k', messages: [], stream: true }),
    }).then(
      () => 'response',
      (err: unknown) => `rejected: ${String(err)}`,
    )
    expect(before).toMatch(/^rejected: TypeError: fetch failed/)
    outcomes.push({
      kind: 'interrupt',
      reply: { blocks: [{ type: 'text', text: 'abcdefghijklmnop' }] },
      afterChunks: 2,
      cut: { kind: 'error' },
    })
    const response = await fetch(`${server.baseURL}/chat/completions`, {
      method: 'POST',
      body: JSON.stringify({ model: 'mock-8k', messages: [], stream: true }),
    })
    expect(response.status).toBe(200)
    await expect(response.text()).rejects.toThrow()
  })

  it('maps faults to the §1.2.2 codes through the adapter', async () => {
    outcomes.push(
      { kind: 'reset' },
      { kind: 'interrupt', reply: { blocks: [{ type: 'text', text: 'abcdefghijklmnop' }] }, afterChunks: 0, cut: { kind: 'error' } },
      {
        kind: 'interrupt',
        reply: { blocks: [{ type: 'text', text: 'abcdefghijklmnop' }] },
        afterChunks: 2,
        cut: { kind: 'in-band', error: { message: 'upstream overloaded', type: 'server_error', status: 503 } },
      },
      { kind: 'reject', rejection: overflowRejection('openai', 8000, 9000) },
      { kind: 'reject', rejection: rateLimitRejection('openai', 250) },
    )
    const llm = adapter('openai', server.baseURL)
    const failures = []
    for (let i = 0; i < 5; i++) failures.push(failureOf(await run(llm, call(prompt(`f${i}`)))))
    expect(failures.map((f) => f.code)).toEqual(['TRANSPORT', 'TRANSPORT', 'SERVER', 'CONTEXT_WINDOW_EXCEEDED', 'RATE_LIMIT'])
    expect(failures[4]?.providerRetryAfterMs).toBe(250)
  })

  it('reports TIMEOUT when the client-side timeout fires on a hung request, before or after headers', async () => {
    let timer: AbortController | undefined
    const llm = adapter('openai', server.baseURL, {
      timeout: () => {
        timer = new AbortController()
        return timer.signal
      },
    })
    for (const hang of [
      { kind: 'hang' },
      { kind: 'hang', reply: { blocks: [{ type: 'text', text: 'slow' }] }, afterChunks: 1 },
    ] satisfies PlannedOutcome[]) {
      outcomes.push(hang)
      const before = mock.captured.length
      const pending = run(llm, call(prompt('hang')))
      // Fire the (virtual) timeout once the server has the request: deterministic, no wall-clock timer.
      for (let i = 0; i < 1000 && mock.captured.length === before; i++) await new Promise((r) => setImmediate(r))
      timer?.abort(new DOMException('virtual timeout', 'TimeoutError'))
      expect(failureOf(await pending).code).toBe('TIMEOUT')
    }
  })

  it('refuses a malformed body with 400 and records why', async () => {
    const response = await fetch(`${server.baseURL}/chat/completions`, { method: 'POST', body: '{"model": 1}' })
    expect(response.status).toBe(400)
    expect(mock.refused.at(-1)).toMatchObject({ status: 400, reason: '$.model: expected a string' })
  })
})
