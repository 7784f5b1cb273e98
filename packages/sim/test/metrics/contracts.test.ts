/**
 * Edges of each provider cache contract (issue #9, `metrics/contracts.ts`): OpenAI-style minimum prompt and
 * 128-token increments with an idle TTL; Anthropic-style breakpoints, minimum length, 20-block lookback, writes
 * and TTL refresh; DeepSeek-style prefix units (a new shared prefix hits only on the third request) and 64-token
 * storage; the plain §9.3 model's granularity and TTL. Requests are built from messages of exact weights.
 */
import { describe, expect, it } from 'vitest'
import { CacheContractError, CacheEngine, deviate, resolveCacheContract, type CacheContractConfig } from '../../src/metrics/contracts.ts'
import { costOf, priceEntry, PRICE_TABLE_DATE, ratesAt } from '../../src/metrics/prices.ts'
import { segmentRequest, type SegmentMessage } from '../../src/metrics/segments.ts'

const MINUTE = 60_000

/** A user message weighing exactly `weight` tokens (one text block: ceil(len/4) + 4, plus the role overhead 4); `tag` makes it unique. */
function msg(weight: number, tag: string): SegmentMessage {
  if (weight < 9) throw new Error('weight ≥ 9')
  const body = tag.padEnd(4 * (weight - 8), '.')
  return { role: 'user', content: [{ type: 'text', text: body }] }
}

/** A fresh engine and a `send(messages, time, completed)` that predicts then records, returning the prediction. */
type Send = (messages: SegmentMessage[], time?: number, completed?: boolean) => ReturnType<CacheEngine['predict']>
function engineOf(config: CacheContractConfig): Send {
  const engine = new CacheEngine(resolveCacheContract(config))
  let index = 0
  return (messages, time = 0, completed = true) => {
    const request = { index: index++, time, segmented: segmentRequest('p\u0000m', messages, undefined, undefined) }
    const p = engine.predict(request)
    engine.record(request, completed)
    return p
  }
}

describe('segment weights used by these tests', () => {
  it('msg(w) weighs w tokens and TOOLS without tools weighs 0', () => {
    expect(segmentRequest('k', [msg(1000, 'a'), msg(9, 'b')], undefined, undefined).weights).toEqual([0, 1000, 9])
  })
})

describe('openai contract', () => {
  it('a prompt below 1,024 tokens caches nothing, even when repeated whole', () => {
    const send = engineOf({ contract: 'openai' })
    const a = [msg(1000, 'a'), msg(23, 'b')]
    expect(send(a).prompt).toBe(1023)
    expect(send(a)).toMatchObject({ prompt: 1023, cached: 0, uncached: 1023, divergence: 3 })
  })

  it('hits round down to 128-token increments (and are at least 1,024)', () => {
    const send = engineOf({ contract: 'openai' })
    const a = msg(1300, 'a')
    send([a])
    expect(send([a, msg(200, 'b')])).toMatchObject({ prompt: 1500, cached: 1280, uncached: 220, written: 0 })
    const fresh = engineOf({ contract: 'openai' })
    const small = msg(1100, 's')
    fresh([small, msg(20, 'x')])
    // reusable 1,100 → 1,024; a reusable prefix of 1,000 (< 1,024) would give 0.
    expect(fresh([small, msg(30, 'y')]).cached).toBe(1024)
    const below = engineOf({ contract: 'openai' })
    below([msg(1000, 'c'), msg(100, 'x')])
    expect(below([msg(1000, 'c'), msg(100, 'y')])).toMatchObject({ prompt: 1100, cached: 0 })
  })

  it('the TTL is idle time: a hit refreshes the prefix, a gap longer than the TTL loses it', () => {
    const send = engineOf({ contract: 'openai' })
    const a = msg(2000, 'a')
    send([a], 0)
    expect(send([a], 4 * MINUTE).cached).toBe(1920)
    expect(send([a], 8 * MINUTE).cached).toBe(1920) // 4 min idle since the refresh
    expect(send([a], 14 * MINUTE).cached).toBe(0) // 6 min idle > 5 min
    const day = engineOf({ contract: 'openai', ttlMs: 86_400_000 })
    day([a], 0)
    expect(day([a], 60 * MINUTE).cached).toBe(1920)
  })

  it('rejected requests are not sources', () => {
    const send = engineOf({ contract: 'openai' })
    const a = msg(2000, 'a')
    send([a], 0, false)
    expect(send([a]).cached).toBe(0)
  })
})

describe('anthropic contract', () => {
  it('writes the prefix up to the automatic breakpoint, then reads it (write 1.25× / read 0.1× in the price)', () => {
    const send = engineOf({ contract: 'anthropic' })
    const a = msg(2000, 'a')
    expect(send([a])).toMatchObject({ prompt: 2000, cached: 0, written: 2000, uncached: 0 })
    expect(send([a, msg(300, 'b')])).toMatchObject({ prompt: 2300, cached: 2000, written: 300, uncached: 0 })
    const entry = priceEntry('anthropic/claude-sonnet-4')
    if (entry === undefined) throw new Error('entry')
    expect(costOf(entry, 0, { uncached: 0, cached: 0, written: 1e6, output: 0 }, false)).toBeCloseTo(3.75)
    expect(costOf(entry, 0, { uncached: 0, cached: 0, written: 1e6, output: 0 }, true)).toBeCloseTo(6)
    expect(costOf(entry, 0, { uncached: 0, cached: 1e6, written: 0, output: 0 }, false)).toBeCloseTo(0.3)
  })

  it('respects the minimum cacheable length of the model (1,024 for Sonnet; 512 when overridden)', () => {
    const send = engineOf({ contract: 'anthropic' })
    const a = msg(900, 'a')
    expect(send([a])).toMatchObject({ cached: 0, written: 0, uncached: 900 })
    expect(send([a])).toMatchObject({ cached: 0, written: 0, uncached: 900 })
    const low = engineOf({ contract: 'anthropic', minimumCacheableTokens: 512 })
    expect(low([a])).toMatchObject({ cached: 0, written: 900 })
    expect(low([a])).toMatchObject({ cached: 900, written: 0 })
    const haiku = engineOf({ contract: 'anthropic', price: 'anthropic/claude-3.5-haiku' })
    const b = msg(2000, 'b')
    expect(haiku([b])).toMatchObject({ written: 0 })
    expect(haiku([b])).toMatchObject({ cached: 0 })
  })

  it('explicit breakpoints cache only up to the breakpoint; more than 4 are refused', () => {
    const send = engineOf({ contract: 'anthropic', breakpoints: [1] })
    const system = msg(1500, 'sys')
    expect(send([system, msg(100, 'u1')])).toMatchObject({ prompt: 1600, written: 1500, cached: 0, uncached: 100 })
    expect(send([system, msg(200, 'u2')])).toMatchObject({ prompt: 1700, written: 0, cached: 1500, uncached: 200 })
    expect(() => resolveCacheContract({ contract: 'anthropic', breakpoints: [1, 2, 3, 4, 5] })).toThrow(CacheContractError)
    expect(() => resolveCacheContract({ contract: 'openai', breakpoints: [1] })).toThrow(/provider\.cache\.breakpoints/)
  })

  it('looks back 20 segment boundaries from a breakpoint, not 21', () => {
    const base = [msg(1500, 'base')]
    const grown = (n: number): SegmentMessage[] => [...base, ...Array.from({ length: n }, (_, i) => msg(10, `g${i}`))]
    const within = engineOf({ contract: 'anthropic' })
    within(base)
    expect(within(grown(20))).toMatchObject({ cached: 1500, written: 200 })
    const beyond = engineOf({ contract: 'anthropic' })
    beyond(base)
    expect(beyond(grown(21))).toMatchObject({ cached: 0, written: 1710 })
  })

  it('the 5-minute TTL is refreshed on a hit; the 1-hour retention keeps it longer', () => {
    const send = engineOf({ contract: 'anthropic' })
    const a = msg(2000, 'a')
    send([a], 0)
    expect(send([a], 4 * MINUTE).cached).toBe(2000)
    expect(send([a], 8 * MINUTE).cached).toBe(2000)
    expect(send([a], 14 * MINUTE)).toMatchObject({ cached: 0, written: 2000 })
    const long = engineOf({ contract: 'anthropic', retention: 'long' })
    long([a], 0)
    expect(long([a], 50 * MINUTE).cached).toBe(2000)
    expect(resolveCacheContract({ contract: 'anthropic', retention: 'long' }).ttlMs).toBe(3_600_000)
  })
})

describe('deepseek contract', () => {
  it('a new shared prefix hits only on the third request', () => {
    const send = engineOf({ contract: 'deepseek' })
    const shared = [msg(500, 'shared-a'), msg(300, 'shared-b')]
    expect(send([...shared, msg(50, 'x')]).cached).toBe(0)
    expect(send([...shared, msg(50, 'y')])).toMatchObject({ cached: 0, divergence: 3 })
    expect(send([...shared, msg(50, 'z')]).cached).toBe(768) // 800 in 64-token units
  })

  it('a pure extension of a completed request hits at once (its whole prompt is a unit)', () => {
    const send = engineOf({ contract: 'deepseek' })
    const a = msg(1000, 'a')
    send([a])
    expect(send([a, msg(40, 'b')])).toMatchObject({ prompt: 1040, cached: 960, written: 0, uncached: 80 })
  })

  it('prices by peak and off-peak windows on the virtual clock (UTC)', () => {
    const entry = priceEntry('deepseek/deepseek-chat')
    if (entry === undefined) throw new Error('entry')
    const day = Date.UTC(2025, 0, 2)
    expect(ratesAt(entry, day + 10 * 60 * MINUTE)).toEqual({ input: 0.27, cacheRead: 0.07, output: 1.1 })
    expect(ratesAt(entry, day + (16 * 60 + 30) * MINUTE).input).toBe(0.135)
    expect(ratesAt(entry, day + 15 * MINUTE).input).toBe(0.135) // 00:15, the window wraps midnight
    expect(ratesAt(entry, day + 30 * MINUTE).input).toBe(0.27) // 00:30 ends it
  })
})

describe('protocol contract (§9.3)', () => {
  it('rounds down to G and measures the TTL from the source dispatch (no refresh)', () => {
    const send = engineOf({ contract: 'protocol', granularityTokens: 64, ttlMs: 5 * MINUTE })
    const a = msg(1000, 'a')
    send([a], 0)
    expect(send([a, msg(20, 'b')], 4 * MINUTE)).toMatchObject({ cached: 960, source: 0, divergence: 2 })
    expect(send([a], 6 * MINUTE)).toMatchObject({ cached: 960, source: 1 }) // request 0 expired, request 1 is 2 min old
    expect(send([a], 12 * MINUTE)).toMatchObject({ cached: 0, source: null, divergence: null })
  })

  it('deviations change only what a mock reports', () => {
    const p = engineOf({ contract: 'protocol' })
    p([msg(100, 'a')])
    const prediction = p([msg(100, 'a')])
    expect(deviate(prediction, 'none')).toEqual({ cached: 100, written: 0, uncached: 0 })
    expect(deviate(prediction, 'none-cached')).toEqual({ cached: 0, written: 0, uncached: 100 })
    expect(deviate(prediction, 'half-cached')).toEqual({ cached: 50, written: 0, uncached: 50 })
  })

  it('refuses unknown keys, unknown price entries and granularity on other contracts; the table is dated', () => {
    expect(() => resolveCacheContract({ nope: 1 } as CacheContractConfig)).toThrow(/provider\.cache\.nope: unknown key/)
    expect(() => resolveCacheContract({ price: 'acme/x' })).toThrow(/no entry "acme\/x"/)
    expect(() => resolveCacheContract({ contract: 'deepseek', granularityTokens: 8 })).toThrow(CacheContractError)
    expect(PRICE_TABLE_DATE).toMatch(/^\d{4}-\d{2}-\d{2}$/)
  })
})
