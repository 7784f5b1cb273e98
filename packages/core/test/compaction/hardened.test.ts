/**
 * The hardened profile's engine rules HARD-1 (failure back-off), HARD-3 (checkpoint budget) and HARD-4
 * (metered relief), `docs/hardened.md`: each off (faithful, the protocol) and on, on the Appendix B bench at
 * pre-step 3.2 (4,000-token window, threshold 3,200). Every expectation is written out by hand.
 */
import { describe, expect, it } from 'vitest'
import { SummarizerError } from '../../src/compaction/errors.ts'
import type { SummaryOutput } from '../../src/compaction/summarizer.ts'
import { frameCheckpoint } from '../../src/compaction/checkpoint.ts'
import type { SummaryInput } from '../../src/compaction/summarizer.ts'
import { blocksPrice, fixedPrice, ROLE_OVERHEAD, routePrice } from '../../src/meter/price.ts'
import { appendixBEvents } from '@compaction-sim/fixtures'
import type { SessionEvent } from '../../src/log/events.ts'
import { bench, PRE_STEP_3_2, rejectionOf, SHORT_SUMMARY } from './support/bench.ts'

const CHEAP_IMAGE = 1
const ok: SummaryOutput = { summary: [{ type: 'text', text: SHORT_SUMMARY }], provider: 'template', model: 'v1' }
const failing = { summarize: async (): Promise<SummaryOutput> => { throw new SummarizerError({ code: 'UNKNOWN', message: 'route down' }, {}) } }

/** Calls the pre-step listener `n` times and returns the 1-based calls that opened a bracket. */
async function attemptsOver(b: ReturnType<typeof bench>, n: number): Promise<number[]> {
  const attempts: number[] = []
  for (let call = 1; call <= n; call++) {
    const before = b.log.events.filter((e) => e.type === 'compaction/start').length
    await b.engine.preStep()
    if (b.log.events.filter((e) => e.type === 'compaction/start').length > before) attempts.push(call)
  }
  return attempts
}

describe('HARD-1 failure back-off (hardening.failureBackoff)', () => {
  it('faithful: a failing summary route is retried at every qualifying pre-step', async () => {
    const b = bench({ prefix: PRE_STEP_3_2, config: { compactionRetries: 0 }, engine: { summarizer: failing } })
    expect(await attemptsOver(b, 6)).toEqual([1, 2, 3, 4, 5, 6])
  })

  it('hardened: without surface growth no pre-step tries again', async () => {
    const config = { compactionRetries: 0, hardening: { failureBackoff: { baseSteps: 0 } } }
    const b = bench({ prefix: PRE_STEP_3_2, config, engine: { summarizer: failing } })
    expect(await attemptsOver(b, 6)).toEqual([1])
    expect(b.infos.filter((m) => m.includes('hardened back-off'))).toHaveLength(5)
    expect(b.warnings).toHaveLength(1)
  })

  it('hardened: the back-off doubles per consecutive failure, bounded by maxSteps', async () => {
    const config = { compactionRetries: 0, hardening: { failureBackoff: { minGrowthTokens: 0, baseSteps: 1, maxSteps: 3 } } }
    const b = bench({ prefix: PRE_STEP_3_2, config, engine: { summarizer: failing } })
    // fail@1, skip 1 → fail@3, skip 2 → fail@6, skip min(4, 3) = 3 → fail@10, skip 3 → fail@14
    expect(await attemptsOver(b, 14)).toEqual([1, 3, 6, 10, 14])
  })

  it('hardened: a replaceGeneration move (an overflow compaction, never gated) lets the next pre-step try', async () => {
    let fail = true
    const switchable = { summarize: async (): Promise<SummaryOutput> => { if (fail) throw new SummarizerError({ code: 'UNKNOWN', message: 'down' }, {}); return ok } }
    const config = { compactionRetries: 0, hardening: { failureBackoff: { minGrowthTokens: 1_000_000, baseSteps: 0 } } }
    const b = bench({ prefix: PRE_STEP_3_2, config, engine: { summarizer: switchable } })
    expect(await attemptsOver(b, 2)).toEqual([1])
    const skips = (): number => b.infos.filter((m) => m.includes('hardened back-off')).length
    expect(skips()).toBe(1)
    fail = false
    expect(await b.engine.compactIfNeeded('context-overflow')).not.toBeNull()
    await b.engine.preStep()
    expect(skips()).toBe(1) // the gate opened: the pass ran (and found the pressure relieved or compacted)
  })

  it('hardened: a success resets the back-off', async () => {
    let calls = 0
    const flaky = { summarize: async (): Promise<SummaryOutput> => { if (++calls === 1) throw new SummarizerError({ code: 'UNKNOWN', message: 'once' }, {}); return ok } }
    const config = { compactionRetries: 0, hardening: { failureBackoff: { minGrowthTokens: 0, baseSteps: 1 } } }
    const b = bench({ prefix: PRE_STEP_3_2, config, engine: { summarizer: flaky } })
    expect(await attemptsOver(b, 3)).toEqual([1, 3])
    expect(b.written().filter((t) => t === 'compaction/summary')).toHaveLength(1)
  })
})

describe('HARD-3 checkpoint budget (hardening.checkpointBudget)', () => {
  it('faithful commits the short checkpoint; hardened with a margin it cannot meet fails the bracket', async () => {
    const plain = bench({ prefix: PRE_STEP_3_2, config: { compactionRetries: 0 }, engine: { summarizer: { summarize: async () => ok } } })
    await plain.engine.compactIfNeeded('pressure')
    expect(plain.written()).toContain('compaction/summary')
    const config = { compactionRetries: 0, hardening: { checkpointBudget: { marginTokens: 3200, reliefRatio: 0 } } }
    const b = bench({ prefix: PRE_STEP_3_2, config, engine: { summarizer: { summarize: async () => ok } } })
    const err = await rejectionOf(b.engine.compactIfNeeded('pressure'))
    expect(err).toMatchObject({ name: 'CompactionError', code: 'summary', message: /checkpoint over its budget \(hardened HARD-3\)/ })
    expect(b.written()).toEqual(['compaction/start', 'compaction/end'])
  })

  it('an over-budget checkpoint at most reliefRatio of its source is kept: relief, not a treadmill step', async () => {
    // The same unmeetable margin: with reliefRatio 1 (any shrinking checkpoint) it commits, with 0 it fails.
    const keep = bench({ prefix: PRE_STEP_3_2, config: { compactionRetries: 0, hardening: { checkpointBudget: { marginTokens: 3200, reliefRatio: 1 } } }, engine: { summarizer: { summarize: async () => ok } } })
    await keep.engine.compactIfNeeded('pressure')
    expect(keep.written()).toContain('compaction/summary')
    expect(keep.written()).not.toContain('compaction/summary-error')
  })

  it('hardened with a small margin commits the same checkpoint', async () => {
    const config = { compactionRetries: 0, hardening: { checkpointBudget: { marginTokens: 0 } } }
    const b = bench({ prefix: PRE_STEP_3_2, config, engine: { summarizer: { summarize: async () => ok } } })
    await b.engine.compactIfNeeded('pressure')
    expect(b.written()).toContain('compaction/summary')
  })

  it('a budget failure is a HARD-1 failure: the next pre-step is skipped', async () => {
    const config = { compactionRetries: 0, hardening: { checkpointBudget: { marginTokens: 3200, reliefRatio: 0 }, failureBackoff: { baseSteps: 0 } } }
    const b = bench({ prefix: PRE_STEP_3_2, config, engine: { summarizer: { summarize: async () => ok } } })
    expect(await attemptsOver(b, 3)).toEqual([1])
  })
})

describe('HARD-4 metered relief (hardening.meteredRelief)', () => {
  /**
   * A summarizer whose checkpoint lands between the region's route price (its image at the route's 85 tokens) and
   * its `P_fixed` price (the image at the fixed rule): smaller by §7.5, dearer at the prices the meter uses.
   */
  function between(seen: { fixed: number; route: number; framed: number }) {
    return {
      summarize: async (input: SummaryInput): Promise<SummaryOutput> => {
        seen.fixed = input.messages.reduce((sum, m) => sum + fixedPrice(m), 0)
        seen.route = input.messages.reduce((sum, m) => sum + routePrice(m, CHEAP_IMAGE), 0)
        for (let k = 1; ; k++) {
          const summary = [{ type: 'text' as const, text: 'w'.repeat(4 * k) }]
          seen.framed = blocksPrice(frameCheckpoint(summary)) + ROLE_OVERHEAD
          if (seen.framed >= seen.route) return { summary, provider: 'template', model: 'v1' }
        }
      },
    }
  }

  /** Appendix B up to pre-step 3.2 on a route that declares images at 1 token (the fixed rule prices them higher). */
  function cheapImages(): SessionEvent[] {
    return appendixBEvents().slice(0, PRE_STEP_3_2).map((e) => (e.type === 'request/context' ? { ...e, data: { ...e.data, imageTokens: CHEAP_IMAGE } } : e))
  }

  it('faithful: the §7.5 P_fixed rule alone commits a checkpoint that is dearer at the route prices', async () => {
    const seen = { fixed: 0, route: 0, framed: 0 }
    const b = bench({ events: cheapImages(), config: { compactionRetries: 0 }, engine: { summarizer: between(seen) } })
    await rejectionOf(b.engine.compactIfNeeded('pressure')).catch(() => undefined)
    expect(seen.route).toBeLessThan(seen.fixed) // the region holds an image priced below the fixed rule
    expect(seen.framed).toBeGreaterThanOrEqual(seen.route)
    expect(seen.framed).toBeLessThan(seen.fixed)
    expect(b.written()).toContain('compaction/summary')
  })

  it('hardened: the checkpoint must be cheaper than what it shadows at the route prices', async () => {
    const seen = { fixed: 0, route: 0, framed: 0 }
    const b = bench({ events: cheapImages(), config: { compactionRetries: 0, hardening: { meteredRelief: true } }, engine: { summarizer: between(seen) } })
    const err = await rejectionOf(b.engine.compactIfNeeded('pressure'))
    expect(seen.framed).toBeLessThan(seen.fixed)
    expect(err).toMatchObject({ name: 'CompactionError', code: 'summary', message: /no metered relief \(hardened HARD-4\)/ })
    expect(b.written()).toEqual(['compaction/start', 'compaction/end'])
  })

  it('hardened: a checkpoint cheaper at the route prices still commits', async () => {
    const b = bench({ prefix: PRE_STEP_3_2, config: { compactionRetries: 0, hardening: { meteredRelief: true } }, engine: { summarizer: { summarize: async () => ok } } })
    await b.engine.compactIfNeeded('pressure')
    expect(b.written()).toContain('compaction/summary')
  })
})
