/**
 * Engine survivors of the mutation run on 66db3c6 that engine-mutants.test.ts and engine-hardened-mutants.test.ts
 * leave alive: HARD-1's rule that a transient summary failure is no back-off failure (the cause chain walk of
 * `transientSummaryFailure`, at most 16 deep), and HARD-8's calibration news when the log carries a factor for the
 * route but the meter has no evidence for it. Every expectation is written out by hand.
 */
import { describe, expect, it } from 'vitest'
import { SummarizerError } from '../../src/compaction/errors.ts'
import type { SummaryOutput } from '../../src/compaction/summarizer.ts'
import type { EventDraft } from '../../src/log/events.ts'
import { logOf, marker, user } from '../support/events.ts'
import { bench, PRE_STEP_3_2 } from './support/bench.ts'

const T = 1_700_000_000_000
const starts = (b: ReturnType<typeof bench>): number => b.log.events.filter((e) => e.type === 'compaction/start').length
const backoffInfos = (b: ReturnType<typeof bench>): string[] => b.infos.filter((m) => m.includes('hardened back-off'))
/** HARD-1 with no wait (baseSteps 0) and the default minGrowthTokens 512: after a failure the next pre-step is skipped. */
const BACKOFF = { compactionRetries: 0, hardening: { failureBackoff: { baseSteps: 0 } } }
const SKIPPED_ONCE = 'compaction (step pressure): hardened back-off after 1 failed attempt(s): pre-step 1 of 0, surface +0 tokens of 512; skipped'

/**
 * A summarizer that always throws: a `SummarizerError` with `code`, wrapped in `wrappers` plain errors (each the
 * cause of the one before). The engine's `CompactionError` is depth 0 of the chain, the thrown error depth 1, so
 * the summarizer failure sits at depth `wrappers + 1`.
 */
function throwing(code: string, wrappers = 0): { summarize: () => Promise<SummaryOutput> } {
  return {
    summarize: async (): Promise<SummaryOutput> => {
      let e: Error = new SummarizerError({ code, message: `summary route says ${code}` }, {})
      for (let k = wrappers; k > 0; k--) e = new Error(`wrapper ${k}`, { cause: e })
      throw e
    },
  }
}

describe('HARD-1: a transient summary failure is no back-off failure', () => {
  it('RATE_LIMIT thrown by the summarizer (depth 1): the next pre-step tries again, no back-off line', async () => {
    const b = bench({ prefix: PRE_STEP_3_2, config: BACKOFF, engine: { summarizer: throwing('RATE_LIMIT') } })
    await b.engine.preStep()
    expect(starts(b)).toBe(1)
    await b.engine.preStep()
    expect(starts(b)).toBe(2)
    expect(backoffInfos(b)).toEqual([])
    expect(b.warnings).toHaveLength(2)
  })

  it('a non-transient code (UNKNOWN) at depth 1 is a failure: the next pre-step is skipped', async () => {
    const b = bench({ prefix: PRE_STEP_3_2, config: BACKOFF, engine: { summarizer: throwing('UNKNOWN') } })
    await b.engine.preStep()
    await b.engine.preStep()
    expect(starts(b)).toBe(1)
    expect(backoffInfos(b)).toEqual([SKIPPED_ONCE])
  })

  it('a transient code under 14 plain wrappers (depth 15, the 16th error) is still found: no back-off', async () => {
    const b = bench({ prefix: PRE_STEP_3_2, config: BACKOFF, engine: { summarizer: throwing('SERVER', 14) } })
    await b.engine.preStep()
    await b.engine.preStep()
    expect(starts(b)).toBe(2)
    expect(backoffInfos(b)).toEqual([])
  })

  it('a transient code under 15 plain wrappers (depth 16, the 17th error) is past the walk: a failure, skipped', async () => {
    const b = bench({ prefix: PRE_STEP_3_2, config: BACKOFF, engine: { summarizer: throwing('SERVER', 15) } })
    await b.engine.preStep()
    await b.engine.preStep()
    expect(starts(b)).toBe(1)
    expect(backoffInfos(b)).toEqual([SKIPPED_ONCE])
  })

  it('a failure whose chain ends in a non-Error cause (a string) is a failure, and preStep still never throws', async () => {
    const odd = { summarize: async (): Promise<SummaryOutput> => { throw new Error('outer', { cause: new Error('inner', { cause: 'text' }) }) } }
    const b = bench({ prefix: PRE_STEP_3_2, config: BACKOFF, engine: { summarizer: odd } })
    await expect(b.engine.preStep()).resolves.toBeUndefined()
    await expect(b.engine.preStep()).resolves.toBeUndefined()
    expect(starts(b)).toBe(1)
    expect(backoffInfos(b)).toEqual([SKIPPED_ONCE])
    expect(b.warnings).toHaveLength(1)
  })
})

describe('HARD-8: a factor in the log without evidence for it', () => {
  const header: EventDraft<'request/header'> = { time: T, type: 'request/header', data: { header: { config: { provider: 'mock', model: 'mock-4k' } }, reason: 'initial' } }
  const context: EventDraft<'request/context'> = { time: T, type: 'request/context', data: { provider: 'mock', model: 'mock-4k', contextWindow: 4000, calibration: 3 } }

  it('no usage, no rejection: no note and no info line, though the route context carried calibration 3', () => {
    const events = [marker('turn/start'), marker('step/start'), user('q'.repeat(2000)), header, context]
    const b = bench({ events: logOf(...events).events, config: { hardening: { capacitySanity: true } } })
    expect(b.meter.capacityEvidence('mock', 'mock-4k').calibration).toBeUndefined()
    expect(b.engine.routeContextNotes('mock', 'mock-4k')).toEqual({})
    expect(b.infos).toEqual([])
    expect(b.warnings).toEqual([])
  })
})
