/**
 * Pins of the §12.7 request-reconstruction checks (INV-41 header canonical form) found by mutation testing:
 * - INV-41 reports a header carrying an empty tools list, adapterDefaults without a true marker, and (rc.8
 *   only) an empty system, each with its exact message; a header with one true marker is canonical.
 * - coverage: INV-42 is not-applicable with its reason in rc.8; INV-43/INV-44 are not-evaluated with their
 *   reason without a capture.
 * - INV-42: a dispatch after a series boundary with no header recording it, with its exact message.
 */
import { describe, expect, it } from 'vitest'
import { at, checkedReport, editedAppendixB, foreign, violationLines, type AppendixEvent } from './support.ts'

/** Appendix B with `set` applied to the header of every request/header (seq 4, 17, 31, 58). */
function everyHeader(set: (h: Record<string, unknown>) => void): AppendixEvent[] {
  return editedAppendixB((e) => { for (const x of e) if (x.type === 'request/header') set(x.data['header'] as Record<string, unknown>) })
}

const lines = (r: Awaited<ReturnType<typeof checkedReport>>): string[] => r.violations.map((v) => `${v.id}@${v.seq}: ${v.message}`)

describe('INV-41 header canonical form', () => {
  it('an empty tools list on a header is reported as non-canonical', async () => {
    const r = await checkedReport(everyHeader((h) => { h['tools'] = [] }))
    expect(lines(r)).toEqual([4, 17, 31, 58].map((s) => `INV-41@${s}: the header carries an empty tools list (canonical form drops it)`))
    expect(r.internalErrors).toEqual([])
  })
  it('adapterDefaults with no true marker is reported as non-canonical', async () => {
    const r = await checkedReport(everyHeader((h) => { h['adapterDefaults'] = {} }))
    expect(lines(r)).toEqual([4, 17, 31, 58].map((s) => `INV-41@${s}: the header carries adapterDefaults without a true marker (canonical form drops it)`))
    expect(r.internalErrors).toEqual([])
  })
  it('adapterDefaults with only reasoningEffort true is canonical', async () => {
    const r = await checkedReport(everyHeader((h) => { h['adapterDefaults'] = { reasoningEffort: true } }))
    expect(lines(r)).toEqual([])
    expect(r.internalErrors).toEqual([])
  })
  it('adapterDefaults with only maxTokens true is canonical', async () => {
    const r = await checkedReport(everyHeader((h) => { h['adapterDefaults'] = { maxTokens: true } }))
    expect(lines(r)).toEqual([])
    expect(r.internalErrors).toEqual([])
  })
  it('an empty system is non-canonical in rc.8, where series reasons do not exist', async () => {
    const r = await checkedReport(everyHeader((h) => { h['system'] = '' }), undefined, 'dsh-0.1.0-rc.8')
    expect(lines(r).filter((l) => l.startsWith('INV-41@')).sort()).toEqual([
      ...[4, 17, 31, 58].map((s) => `INV-41@${s}: the header carries an empty system (canonical form drops it, §14.1)`),
      ...[17, 31, 58].map((s) => `INV-41@${s}: expected one of 'initial', 'resume', 'change', got the string "series" (field data.reason)`),
    ].sort())
    expect(r.internalErrors).toEqual([])
  })
  it('in seed an empty system is the input stage\'s (no header.system), not the rc.8 canonical-form line', async () => {
    const r = await checkedReport(everyHeader((h) => { h['system'] = '' }))
    expect(lines(r).filter((l) => l.startsWith('INV-41@'))).toEqual([4, 17, 31, 58].map((s) => `INV-41@${s}: the seed dialect has no header.system (system text lives in system/message, §1.4.5, D-02) (field data.header.system)`))
    expect(r.internalErrors).toEqual([])
  })
})

describe('reconstruction applicability', () => {
  it('INV-42 is not-applicable in rc.8 (no series records) and INV-43/INV-44 not-evaluated without a capture', async () => {
    const rc8 = await checkedReport(editedAppendixB(), undefined, 'dsh-0.1.0-rc.8')
    expect(rc8.coverage.find((c) => c.id === 'INV-42')).toEqual({ id: 'INV-42', status: 'not-applicable', reason: 'the rc.8 dialect has no series records (§14.1)', skipped: 0 })
    const seed = await checkedReport(editedAppendixB())
    for (const id of ['INV-43', 'INV-44']) {
      expect(seed.coverage.find((c) => c.id === id)).toEqual({ id, status: 'not-evaluated', reason: 'no request capture given (--requests)', skipped: 0 })
    }
  })
})

describe('INV-42 series boundary before dispatch', () => {
  it('a dispatch after the epoch advanced, with the recording header removed, is reported with both epochs', async () => {
    const r = await checkedReport(editedAppendixB((e) => { foreign(at(e, 17)) }))
    expect(violationLines(r, 'INV-42')).toEqual(['INV-42@18: dispatch after a series boundary (epoch 0 at dispatch #6, 1 now) without a request/header recording it'])
    expect(r.internalErrors).toEqual([])
  })
})
