/**
 * The conformance fixtures of `@compaction-sim/fixtures` (issue 5): every hand-built violating log is reported
 * under its id at its expected seq, and nothing outside the ids it declares; every valid fixture log is clean.
 */
import { conformanceCases, validConformanceLogs } from '@compaction-sim/fixtures'
import { describe, expect, it } from 'vitest'
import { checkLog, type CheckOptions } from '../../src/checker/run.ts'
import { INVARIANT_IDS } from '../../src/checker/types.ts'
import { reportOf } from './support.ts'

type Fixture = ReturnType<typeof conformanceCases>[number] | ReturnType<typeof validConformanceLogs>[number]

function optionsOf(f: Fixture): CheckOptions {
  const options: CheckOptions = { dialect: f.dialect, manifest: ('manifest' in f ? f.manifest : undefined) ?? null }
  if (f.requests !== undefined) options.requests = f.requests
  return options
}

describe('conformance fixtures', () => {
  it('cover every invariant id with at least one violating log', () => {
    const covered = new Set(conformanceCases().map((c) => c.expect.id))
    expect(INVARIANT_IDS.filter((id) => !covered.has(id))).toEqual([])
  })

  describe('violating logs: the id is reported at its seq, and nothing undeclared', () => {
    for (const c of conformanceCases()) {
      it(`${c.expect.id} ${c.name}`, async () => {
        const r = reportOf(await checkLog(c.events, optionsOf(c)))
        expect(r.internalErrors).toEqual([])
        expect(r.violations.map((v) => `${v.id}@${v.seq}`)).toContain(`${c.expect.id}@${c.expect.seq}`)
        const allowed = new Set<string>([c.expect.id, ...(c.alsoViolates ?? [])])
        expect(r.violations.filter((v) => !allowed.has(v.id)).map((v) => `${v.id}@${v.seq}: ${v.message}`)).toEqual([])
      })
    }
  })

  describe('valid logs have zero violations', () => {
    for (const v of validConformanceLogs()) {
      it(`${v.name} (${v.dialect}${v.requests === undefined ? '' : ', with its request capture'})`, async () => {
        const r = reportOf(await checkLog(v.events, optionsOf(v)))
        expect(r.violations.map((x) => `${x.id}@${x.seq}: ${x.message}`)).toEqual([])
        expect(r.internalErrors).toEqual([])
      })
    }
  })
})
