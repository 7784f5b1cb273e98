/**
 * HARD-6 (hardened `openTurnPrompt`, issue #19) on hand-edited Appendix B logs. Appendix B itself shows the
 * pattern: the bracket of turn 3 (summary at seq 54) shadows seq 42, turn 3's own user prompt.
 */
import { readFileSync } from 'node:fs'
import type { RunManifest } from '@compaction-sim/core'
import { describe, expect, it } from 'vitest'
import { checkLog } from '../../src/checker/run.ts'
import { appendixB, found, reportOf } from './support.ts'

function manifest(compaction: RunManifest['compaction']): RunManifest {
  return { scenario: 'hardened-selection', compaction, routes: [{ provider: 'mock', model: 'mock-4k', contextWindow: 8000 }], faults: [] }
}

const hard6 = (ids: string[]): string[] => ids.filter((v) => v.startsWith('HARD-6@'))

describe('HARD-6 — the open turn prompt stays', () => {
  it('is not registered for a faithful run (no coverage row, no violation)', async () => {
    const result = await checkLog(appendixB(), { dialect: 'seed', manifest: manifest({}) })
    expect(reportOf(result).coverage.some((c) => c.id === 'HARD-6')).toBe(false)
    expect(hard6(found(result))).toEqual([])
  })

  it('is not listed when only another rule is on', async () => {
    const result = await checkLog(appendixB(), { dialect: 'seed', manifest: manifest({ hardening: { summaryRoom: true } } as never) })
    expect(reportOf(result).coverage.find((c) => c.id === 'HARD-6')).toBeUndefined()
    expect(hard6(found(result))).toEqual([])
  })

  it('flags a summary that shadows the open turn prompt (Appendix B seq 54 shadows 42)', async () => {
    const result = await checkLog(appendixB(), { dialect: 'seed', manifest: manifest({ hardening: { openTurnPrompt: true } } as never) })
    expect(reportOf(result).coverage.find((c) => c.id === 'HARD-6')).toMatchObject({ status: 'evaluated' })
    expect(hard6(found(result))).toEqual(['HARD-6@54'])
    const profile = await checkLog(appendixB(), { dialect: 'seed', manifest: manifest({ profile: 'hardened' } as never) })
    expect(hard6(found(profile))).toEqual(['HARD-6@54'])
  })

  it('passes a summary that leaves the prompt out', async () => {
    const events = appendixB()
    const summary = events.find((e) => e.seq === 54) as unknown as { data: { shadowedSeqs: number[] } }
    summary.data.shadowedSeqs = summary.data.shadowedSeqs.filter((s) => s !== 42)
    const result = await checkLog(events, { dialect: 'seed', manifest: manifest({ hardening: { openTurnPrompt: true } } as never) })
    expect(hard6(found(result))).toEqual([])
  })
})

describe('the run report can carry HARD ids', () => {
  it('lists HARD-1 … HARD-8 in the report schema CheckId enum', () => {
    const schema = JSON.parse(readFileSync(new URL('../../schema/run-report.schema.json', import.meta.url), 'utf8')) as {
      definitions: { CheckId: { enum: string[] } }
    }
    for (let n = 1; n <= 8; n++) expect(schema.definitions.CheckId.enum).toContain(`HARD-${n}`)
  })
})
