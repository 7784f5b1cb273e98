/**
 * Pins of the §12.7 request-reconstruction checks (INV-41 header canonical form) found by mutation testing:
 * - INV-41 reports a header carrying an empty tools list, adapterDefaults without a true marker, and (rc.8
 *   only) an empty system, each with its exact message; a header with one true marker is canonical.
 */
import { describe, expect, it } from 'vitest'
import { checkedReport, editedAppendixB, type AppendixEvent } from './support.ts'

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
