/**
 * Issue #21 (checker totality) in `sim run`: a subject's log that core's reader or the reference meter cannot
 * replay gets the checker's verdict (a failed scenario whose violations name the id and seq) instead of an
 * internal error. Subjects here are the reference subject with one storage bug applied to its finished log.
 */
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { ScenarioReport } from '../../src/report/types.ts'
import { runScenario } from '../../src/run/run-scenario.ts'
import { referenceSubject } from '../../src/subjects/reference.ts'
import type { Subject } from '../../src/subjects/types.ts'
import { REPO_ROOT, tempDir } from '../cli/run-sim.ts'

let tmp: { dir: string; cleanup: () => Promise<void> }
beforeAll(async () => { tmp = await tempDir() })
afterAll(async () => { await tmp.cleanup() })

interface Line { seq: number; type: string; surfaceOp?: unknown }

/** The reference subject, then `rewrite` applied to the log lines it left. */
function storageBug(name: string, rewrite: (events: Line[]) => Line[]): Subject {
  return {
    ...referenceSubject,
    name,
    runSession: async (options) => {
      const result = await referenceSubject.runSession(options)
      const events = (await readFile(options.logPath, 'utf8')).split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as Line)
      await writeFile(options.logPath, rewrite(events).map((e) => `${JSON.stringify(e)}\n`).join(''))
      return result
    },
  }
}

/** Every checkpoint trades places (and seqs) with the `compaction/end` after it; later ranges still name its old seq. */
const endBeforeCheckpoint = storageBug('end-before-checkpoint', (events) => {
  for (let i = 0; i + 1 < events.length; i++) {
    const checkpoint = events[i] as Line
    const end = events[i + 1] as Line
    if (checkpoint.type !== 'user/message' || typeof checkpoint.surfaceOp !== 'object' || end.type !== 'compaction/end') continue
    events[i] = { ...end, seq: checkpoint.seq }
    events[i + 1] = { ...checkpoint, seq: end.seq }
  }
  return events
})

/** The first checkpoint is lost (a dropped write): every later seq is one past its line (core's reader refuses the gap). */
const droppedCheckpoint = storageBug('dropped-checkpoint', (events) => {
  const i = events.findIndex((e) => e.type === 'user/message' && typeof e.surfaceOp === 'object')
  return i < 0 ? events : [...events.slice(0, i), ...events.slice(i + 1)]
})

const TWO_BRACKETS = join(REPO_ROOT, 'packages/sim/conformance/pack-v1/faults/fault-32-summary-rerouted.yaml')

async function run(subject: Subject, dir: string): Promise<ScenarioReport> {
  return runScenario(TWO_BRACKETS, { outDir: join(tmp.dir, dir), subject, cwd: REPO_ROOT })
}

describe('a log core cannot replay gets the checker\'s verdict', () => {
  it('a replacement range that is not on the surface: failed with INV-05 at the replacement, not an error', async () => {
    const report = await run(endBeforeCheckpoint, 'end-first')
    expect(report.status, report.error).toBe('failed')
    const inv05 = report.violations.filter((v) => v.id === 'INV-05')
    expect(inv05.length).toBeGreaterThan(0)
    const replay = report.expectations.find((e) => e.name === 'replay')
    expect(replay?.passed).toBe(false)
    // The meter stops at the seq INV-05 names.
    expect(replay?.actual).toContain(`the reference meter stops at seq ${inv05[0]?.seq}`)
    expect(report.expectations.find((e) => e.name === 'invariants')?.passed).toBe(false)
    expect(report.finalPressure).toBeUndefined()
  }, 120_000)

  it('a seq gap core\'s reader refuses: failed with INV-01, not an error', async () => {
    const report = await run(droppedCheckpoint, 'dropped')
    expect(report.status, report.error).toBe('failed')
    expect(report.violations.some((v) => v.id === 'INV-01')).toBe(true)
    expect(report.expectations.find((e) => e.name === 'replay')?.actual).toContain('core\'s log reader rejects the log')
  }, 120_000)

  it('the unmodified reference subject replays (no replay expectation)', async () => {
    const report = await run(referenceSubject, 'reference')
    expect(report.status).toBe('passed')
    expect(report.expectations.some((e) => e.name === 'replay')).toBe(false)
    expect(report.finalPressure?.tokens).toBeGreaterThan(0)
  }, 120_000)
})
