/**
 * The mock provider reports usage by its configured cache contract (issue #9), in each wire's own fields:
 * OpenAI `prompt_tokens_details.cached_tokens`, DeepSeek `prompt_cache_hit_tokens` / `prompt_cache_miss_tokens`,
 * Anthropic `cache_creation_input_tokens` / `cache_read_input_tokens`; a deviating mock reports something else.
 * The expected figures come from an independent `CacheEngine` over the same messages.
 */
import { describe, expect, it } from 'vitest'
import { CacheEngine, resolveCacheContract, type CacheContractConfig } from '../../src/metrics/contracts.ts'
import { cacheKeyOf, segmentRequest } from '../../src/metrics/segments.ts'
import { MockProvider } from '../../src/provider/mock-provider.ts'
import type { MockWire, ReplyPlan } from '../../src/provider/types.ts'

const BASE = 'http://direct.mock/v1'
const plan: ReplyPlan = { next: () => ({ kind: 'reply', reply: { blocks: [{ type: 'text', text: 'ok' }] } }) }
const LONG = 'L'.repeat(6000)

function providerOf(wire: MockWire, cache: CacheContractConfig): MockProvider {
  return new MockProvider({ wire, plan, clock: { now: () => 0 }, cache: resolveCacheContract(cache) })
}

/** Sends one non-streaming request whose user turns are `texts`; returns the wire usage object. */
async function send(p: MockProvider, texts: string[]): Promise<Record<string, unknown>> {
  const anthropic = p.spec.wire === 'anthropic'
  const messages = texts.map((text) => ({ role: 'user', content: text }))
  const body = anthropic ? { model: 'm', max_tokens: 64, messages } : { model: 'm', messages, stream: false }
  const response = await p.handle(new Request(`${BASE}/${anthropic ? 'messages' : 'chat/completions'}`, {
    method: 'POST', headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01' }, body: JSON.stringify(body),
  }))
  expect(response.status).toBe(200)
  return ((await response.json()) as { usage: Record<string, unknown> }).usage
}

/** The prediction of an independent engine for the same sequence of user turns (all completed). */
function predicted(config: CacheContractConfig, turns: string[][]): Array<{ cached: number; written: number; prompt: number }> {
  const engine = new CacheEngine(resolveCacheContract(config))
  return turns.map((texts, index) => {
    const content = (text: string): Array<{ type: 'text'; text: string }> => [{ type: 'text', text }]
    const seg = segmentRequest(cacheKeyOf('x', 'm'), texts.map((t) => ({ role: 'user', content: content(t) })), undefined, undefined)
    const request = { index, time: 0, segmented: seg }
    const p = engine.predict(request)
    engine.record(request, true)
    return { cached: p.cached, written: p.written, prompt: p.prompt }
  })
}

const TURNS = [[LONG], [LONG, 'and one more question'], [LONG, 'and one more question', 'last']]

describe('mock usage follows the configured contract', () => {
  it('openai: prompt_tokens_details.cached_tokens in 128-token increments', async () => {
    const p = providerOf('openai', { contract: 'openai' })
    const expected = predicted({ contract: 'openai' }, TURNS)
    for (const [i, turn] of TURNS.entries()) {
      const usage = await send(p, turn)
      expect(usage).toMatchObject({ prompt_tokens: expected[i]?.prompt, prompt_tokens_details: { cached_tokens: expected[i]?.cached } })
    }
    expect(expected.map((e) => e.cached)).toEqual([0, 1408, 1408])
  })

  it('deepseek: prompt_cache_hit_tokens / prompt_cache_miss_tokens in 64-token units', async () => {
    const p = providerOf('deepseek', { contract: 'deepseek' })
    const expected = predicted({ contract: 'deepseek' }, TURNS)
    for (const [i, turn] of TURNS.entries()) {
      const e = expected[i]
      const usage = await send(p, turn)
      expect(usage).toMatchObject({ prompt_cache_hit_tokens: e?.cached, prompt_cache_miss_tokens: (e?.prompt ?? 0) - (e?.cached ?? 0) })
    }
    expect(expected.map((e) => e.cached % 64)).toEqual([0, 0, 0])
    expect(expected[1]?.cached).toBeGreaterThan(0)
  })

  it('anthropic: cache_creation_input_tokens and cache_read_input_tokens, no field folded into another', async () => {
    const config: CacheContractConfig = { contract: 'anthropic', minimumCacheableTokens: 1024 }
    const p = providerOf('anthropic', config)
    const expected = predicted(config, TURNS)
    for (const [i, turn] of TURNS.entries()) {
      const e = expected[i]
      const usage = await send(p, turn)
      expect(usage).toMatchObject({
        cache_read_input_tokens: e?.cached, cache_creation_input_tokens: e?.written,
        input_tokens: (e?.prompt ?? 0) - (e?.cached ?? 0) - (e?.written ?? 0),
      })
    }
    expect(expected[0]?.written).toBe(expected[0]?.prompt)
    expect(expected[1]?.cached).toBe(expected[0]?.prompt)
  })

  it('a deviating mock (none-cached) reports no cache reads although the contract predicts them', async () => {
    const p = providerOf('openai', { contract: 'openai', deviation: 'none-cached' })
    const usages = []
    for (const turn of TURNS) usages.push(await send(p, turn))
    expect(usages.map((u) => (u['prompt_tokens_details'] as { cached_tokens: number }).cached_tokens)).toEqual([0, 0, 0])
    expect(predicted({ contract: 'openai' }, TURNS)[1]?.cached).toBeGreaterThan(0)
  })
})
