/**
 * Logs recorded from the released engine (`transcripts/recorded/dsh-0.1.0-rc.8/*.jsonl`) are valid under the
 * rc.8 dialect (§14.1): zero violations, and every invariant the dialect has is evaluated — the wire-level ones
 * (INV-43, INV-44) too, against the request capture the recorder writes to `requests/<name>.jsonl`.
 */
import { existsSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { fixturePath } from '@compaction-sim/fixtures'
import { describe, expect, it } from 'vitest'
import { checkLog } from '../../src/checker/run.ts'
import { reportOf } from './support.ts'

const DIR = fixturePath('recorded/dsh-0.1.0-rc.8')

function recordedLogs(): string[] {
  try {
    return readdirSync(DIR).filter((f) => f.endsWith('.jsonl') || f.endsWith('.jsonl.zstd')).sort()
  } catch {
    return [] // not recorded yet
  }
}

describe('logs recorded from the official engine (dsh-0.1.0-rc.8)', () => {
  const logs = recordedLogs()
  it.skipIf(logs.length === 0)('exist', () => {
    expect(logs.length).toBeGreaterThan(0)
  })
  for (const name of logs) {
    it(`${name} has zero violations under --dialect dsh-0.1.0-rc.8`, async () => {
      const capture = join(DIR, 'requests', name.replace(/\.zstd$/, ''))
      const r = reportOf(await checkLog(join(DIR, name), { dialect: 'dsh-0.1.0-rc.8', ...(existsSync(capture) ? { requests: capture } : {}) }))
      expect(r.violations.map((v) => `${v.id}@${v.seq}: ${v.message}`)).toEqual([])
      expect(r.internalErrors).toEqual([])
      expect(r.meterTaint).toBeNull()
      expect(r.coverage.filter((c) => c.status === 'partial')).toEqual([])
      if (existsSync(capture)) expect(r.coverage.filter((c) => c.status === 'not-evaluated').map((c) => c.id)).toEqual([])
    })
  }
})
