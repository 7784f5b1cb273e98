/**
 * §9.5: the worked example (Appendix B, no TTL, G = 1) through the `protocol` contract and the report
 * builder — every row of the table (prompt, best source, divergence, cached), the §9.4 causes, and the
 * recomputed tokens. The capture is built independently of the model (test/checker/captures.ts).
 */
import { appendixBEvents } from '@compaction-sim/fixtures'
import { blocksPrice, COMPACTION_INSTRUCTION, ROLE_OVERHEAD } from '@compaction-sim/core'
import { describe, expect, it } from 'vitest'
import { scenarioCacheOf } from '../../src/metrics/cache.ts'
import { resolveCacheContract } from '../../src/metrics/contracts.ts'
import { appendixBCapture } from '../checker/captures.ts'

const events = appendixBEvents()
const requests = appendixBCapture(events)
const cache = scenarioCacheOf({
  requests, events, dialect: 'seed', spec: resolveCacheContract({ contract: 'protocol' }),
  imageTokens: () => 85, scriptedUsage: () => true,
})
/** `I`: the instruction's weight (§9.5: 450 with the recommended text). */
const I = blocksPrice([{ type: 'text', text: COMPACTION_INSTRUCTION }]) + ROLE_OVERHEAD

describe('§9.5 worked example (Appendix B; no TTL, G = 1)', () => {
  it('the instruction weighs 450 tokens (Appendix A text)', () => {
    expect(I).toBe(450)
  })

  // R, purpose, prompt, best source, divergence, cached, cause, recomputed — the §9.5 table and the paragraph below it.
  type Row = [number, 'conversation' | 'compaction', number, number | null, number | null, number, string, number]
  const table: Row[] = [
    [0, 'conversation', 94, null, null, 0, 'none', 0],
    [1, 'conversation', 1412, 0, 3, 94, 'none', 0],
    [2, 'conversation', 1703, 1, 5, 1412, 'none', 0],
    [3, 'conversation', 1665, 1, 5, 1412, 'none', 0],
    [4, 'conversation', 1764, 3, 7, 1665, 'none', 0],
    [5, 'compaction', 1764 + I, 4, 9, 1764, 'none', 0],
    [6, 'compaction', 1726 + I, 4, 6, 1513, 'offload@5', 99],
    [7, 'conversation', 2218, 6, 2, 74, 'replacement@1', 0],
  ]
  it.each(table)('R%i (%s): prompt %i, source %s, divergence %s, cached %i, cause %s, recomputed %i',
    (index, purpose, prompt, source, divergence, cached, cause, recomputed) => {
      const row = cache.requests[index]
      const uncached = prompt - cached
      expect(row).toMatchObject({ index, purpose, prompt, source, divergence, cached, uncached, cause, recomputed, written: 0 })
    })

  it('R2 and R5 (rejected) are not cache sources', () => {
    expect(cache.requests.filter((r) => r.rejected).map((r) => r.index)).toEqual([2, 5])
    expect(cache.requests.map((r) => r.source)).not.toContain(2)
    expect(cache.requests.map((r) => r.source)).not.toContain(5)
  })

  it('aggregates: reuse ratios, recomputed by compaction, series boundaries', () => {
    const conv = [94, 1412, 1703, 1665, 1764, 2218]
    const convCached = [0, 94, 1412, 1412, 1665, 74]
    const sum = (xs: number[]): number => xs.reduce((a, b) => a + b, 0)
    expect(cache.conversation).toEqual({
      requests: 6, prompt: sum(conv), cached: sum(convCached), uncached: sum(conv) - sum(convCached), reuseRatio: sum(convCached) / sum(conv),
    })
    expect(cache.compaction).toMatchObject({ requests: 2, prompt: 1764 + 1726 + 2 * I, cached: 1764 + 1513 })
    expect(cache.overall.prompt).toBe(cache.conversation.prompt + cache.compaction.prompt)
    expect(cache.recomputedByCompaction).toBe(99)
    expect(cache.seriesBoundaries).toBe(3)
  })

  it('Appendix B scripts its usage (not the model): conversation replies count as scripted, the summary usage shows as a mismatch', () => {
    expect(cache.requests.filter((r) => r.scripted).map((r) => r.index)).toEqual([0, 1, 3, 4, 7])
    // #54 scripts {inputTokens: 400, cacheReadTokens: 1600}; the model predicts 1,513 cached for R6.
    expect(cache.requests.filter((r) => r.mismatch).map((r) => [r.index, r.reported, r.cached])).toEqual([
      [6, { cached: 1600, uncached: 400, written: 0 }, 1513],
    ])
    expect(cache.mismatches).toBe(1)
    expect(cache.scriptedUsage).toBe(5)
  })
})
