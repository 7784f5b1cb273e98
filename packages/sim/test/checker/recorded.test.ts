/**
 * Logs recorded from the released engine (`transcripts/recorded/dsh-0.1.0-rc.8/*.jsonl`) are valid under the
 * rc.8 dialect (§14.1): zero violations, and every invariant the dialect has is evaluated — the wire-level ones
 * (INV-43, INV-44) too, against the request capture the recorder writes to `requests/<name>.jsonl`.
 */
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { checkLog } from '../../src/checker/run.ts'
import { RECORDED_DIR as DIR, recordedLogNames } from './recorded-logs.ts'
import { reportOf } from './support.ts'

describe('logs recorded from the official engine (dsh-0.1.0-rc.8)', () => {
  // Throws when the fixture folder is missing or empty: the whole file fails instead of passing vacuously.
  const logs = recordedLogNames(['.jsonl', '.jsonl.zstd'])
  it('exist, each with its request capture', () => {
    expect(logs.length).toBeGreaterThan(0)
    expect(logs.filter((name) => !existsSync(join(DIR, 'requests', name.replace(/\.zstd$/, ''))))).toEqual([])
  })
  for (const name of logs) {
    it(`${name} has zero violations under --dialect dsh-0.1.0-rc.8`, async () => {
      const capture = join(DIR, 'requests', name.replace(/\.zstd$/, ''))
      // The capture is required: a missing one is a checkLog input error, so INV-43/44 are always evaluated.
      const r = reportOf(await checkLog(join(DIR, name), { dialect: 'dsh-0.1.0-rc.8', requests: capture }))
      expect(r.violations.map((v) => `${v.id}@${v.seq}: ${v.message}`)).toEqual([])
      expect(r.internalErrors).toEqual([])
      expect(r.meterTaint).toBeNull()
      expect(r.coverage.filter((c) => c.status === 'partial')).toEqual([])
      // Recorded logs of the released engine come without a world record: only the WORLD checks stay unevaluated.
      expect(r.coverage.filter((c) => c.status === 'not-evaluated' && !c.id.startsWith('WORLD-')).map((c) => c.id)).toEqual([])
    })
  }
})
