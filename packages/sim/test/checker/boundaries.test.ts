/**
 * Off-by-one boundaries of the checker's numeric rules on the Appendix B log, each pinned from both sides
 * with figures written out by hand from the spec's running example (Appendix B, §3.3, §7.5):
 * - INV-17: the checkpoint at seq 55 prices 205 (P_fixed); a shadowedTokenCount of exactly 205 is not "below".
 * - INV-25: pressure is 3,230 at the prune (seq 14) and 3,762 at the bracket (seq 51); a threshold equal to
 *   the figure qualifies, one token above it does not.
 * - INV-29: the retained tail after the span 3…42 is seqs 47 + 49 at 14 + 1,925 = 1,939 tokens (P_route); a
 *   budget of exactly 1,939 is kept, one of 1,940 is not.
 */
import type { RunManifest } from '@compaction-sim/core'
import { describe, expect, it } from 'vitest'
import { checkLog } from '../../src/checker/run.ts'
import { appendixB, found, reportOf } from './support.ts'

type Events = ReturnType<typeof appendixB>

/**
 * `id@seq` strings of one invariant for Appendix B after `edit`, checked with `manifest` when given; the
 * invariant must have been judged on every instance (a skip is no pass).
 */
async function violationsOf(id: string, edit: (events: Events) => void, manifest?: RunManifest): Promise<string[]> {
  const events = appendixB()
  edit(events)
  const result = await checkLog(events, manifest === undefined ? { dialect: 'seed' } : { dialect: 'seed', manifest })
  expect(reportOf(result).coverage.find((c) => c.id === id)).toMatchObject({ status: 'evaluated', skipped: 0 })
  return found(result).filter((v) => v.startsWith(`${id}@`))
}

/** A manifest for route mock/mock-4k with `compaction` config and a context window. */
function manifest(compaction: RunManifest['compaction'], contextWindow = 4000): RunManifest {
  return { scenario: 'boundaries', compaction, routes: [{ provider: 'mock', model: 'mock-4k', contextWindow }], faults: [] }
}

/** Sets the shadowedTokenCount of the summary at seq 54. */
const shadowPrice = (n: number) => (e: Events) => { (e[54] as Events[number]).data['shadowedTokenCount'] = n }
const untouched = () => undefined

describe('INV-17 shrink check at its boundary (checkpoint 205 tokens, P_fixed)', () => {
  it('a source priced exactly 205 is not larger than its checkpoint: reported at the checkpoint', async () => {
    expect(await violationsOf('INV-17', shadowPrice(205))).toEqual(['INV-17@55'])
  })

  it('a source priced 206 is: nothing reported', async () => {
    expect(await violationsOf('INV-17', shadowPrice(206))).toEqual([])
  })

  it('the unchanged log (1,652) passes', async () => {
    expect(await violationsOf('INV-17', untouched)).toEqual([])
  })
})

describe('INV-25 pressure check at its boundary (threshold = floor(window × 0.5))', () => {
  it('threshold 3,230 = the prune\'s pressure: the prune qualifies', async () => {
    expect(await violationsOf('INV-25', untouched, manifest({ thresholdRatio: 0.5 }, 6460))).toEqual([])
  })

  it('threshold 3,231, one token above the prune\'s pressure 3,230: the prune is below pressure', async () => {
    expect(await violationsOf('INV-25', untouched, manifest({ thresholdRatio: 0.5 }, 6462))).toEqual(['INV-25@14'])
  })

  it('threshold 3,762 = the bracket\'s pressure: only the prune (3,230) is below it', async () => {
    expect(await violationsOf('INV-25', untouched, manifest({ thresholdRatio: 0.5 }, 7524))).toEqual(['INV-25@14'])
  })

  it('threshold 3,763, one token above the bracket\'s pressure 3,762: the bracket is below pressure too', async () => {
    expect(await violationsOf('INV-25', untouched, manifest({ thresholdRatio: 0.5 }, 7526))).toEqual(['INV-25@14', 'INV-25@51'])
  })
})

describe('INV-29 retained tail at its boundary (tail 1,939 tokens, P_route)', () => {
  it('retainTokens 1,939 = the tail: kept', async () => {
    expect(await violationsOf('INV-29', untouched, manifest({ retainTokens: 1939 }))).toEqual([])
  })

  it('retainTokens 1,940, one token above the tail: reported at the checkpoint', async () => {
    expect(await violationsOf('INV-29', untouched, manifest({ retainTokens: 1940 }))).toEqual(['INV-29@55'])
  })

  it('a ratio budget floor(4,000 × 0.48475) = 1,939: kept', async () => {
    expect(await violationsOf('INV-29', untouched, manifest({ retainRatio: 0.48475 }))).toEqual([])
  })

  it('a ratio budget floor(4,000 × 0.48500) = 1,940: reported at the checkpoint', async () => {
    expect(await violationsOf('INV-29', untouched, manifest({ retainRatio: 0.485 }))).toEqual(['INV-29@55'])
  })
})

describe('the messages of these violations, in full (they say which promise broke and why)', () => {
  /** `id@seq: message` of one invariant. */
  async function messagesOf(id: string, edit: (events: Events) => void, m?: RunManifest): Promise<string[]> {
    const events = appendixB()
    edit(events)
    const r = reportOf(await checkLog(events, m === undefined ? { dialect: 'seed' } : { dialect: 'seed', manifest: m }))
    return r.violations.filter((v) => v.id === id).map((v) => `${v.id}@${v.seq}: ${v.message}`)
  }

  it('INV-17', async () => {
    expect(await messagesOf('INV-17', shadowPrice(205))).toEqual([
      'INV-17@55: the checkpoint prices 205 (P_fixed), not below the shadowedTokenCount 205 of #54 (§7.5)',
    ])
  })

  it('INV-25, for the prune run and for the pressure bracket', async () => {
    expect(await messagesOf('INV-25', untouched, manifest({ thresholdRatio: 0.5 }, 7526))).toEqual([
      'INV-25@14: a prune run below pressure: totalTokens 3230 < threshold 3763 of mock/mock-4k',
      'INV-25@51: an automatic pressure bracket below pressure: totalTokens 3762 < threshold 3763 of mock/mock-4k',
    ])
  })

  it('INV-29', async () => {
    expect(await messagesOf('INV-29', untouched, manifest({ retainTokens: 1940 }))).toEqual([
      'INV-29@55: the retained tail [47, 49] prices 1939 (P_route) < retainTokens 1940',
    ])
  })
})
