/**
 * Issue #21 (checker totality) in `sim run`: a subject's log that core's reader or the reference meter cannot
 * replay gets the checker's verdict (a failed scenario whose violations name the id and seq) instead of an
 * internal error. Subjects here are the reference subject with one storage bug applied to its finished log.
 */
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { fcParams } from '../../../core/test/support/seed.ts'
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
    // Checking went on past the replacement the meter cannot place: later events are judged too.
    expect(report.violations.some((v) => v.seq > (inv05[0]?.seq ?? Infinity))).toBe(true)
  }, 120_000)

  it('a seq gap core\'s reader refuses: failed with INV-01, not an error', async () => {
    const report = await run(droppedCheckpoint, 'dropped')
    expect(report.status, report.error).toBe('failed')
    expect(report.violations.some((v) => v.id === 'INV-01')).toBe(true)
    const replay = report.expectations.find((e) => e.name === 'replay')?.actual ?? ''
    expect(replay).toMatch(/^core's log reader rejects line \d+ of the log \(field seq\): /)
    expect(replay).not.toContain(tmp.dir) // no artifact path: the report does not depend on where it was written
  }, 120_000)

  it('the unmodified reference subject replays (no replay expectation)', async () => {
    const report = await run(referenceSubject, 'reference')
    expect(report.status).toBe('passed')
    expect(report.expectations.some((e) => e.name === 'replay')).toBe(false)
    expect(report.finalPressure?.tokens).toBeGreaterThan(0)
  }, 120_000)
})

/** Event types a storage bug is made to hit: the bracket and what lands around it. */
const AIMED: ReadonlySet<string> = new Set([
  'compaction/start', 'compaction/summary', 'compaction/summary-error', 'compaction/end', 'compaction/prune', 'image/offload',
  'request/header', 'request/context', 'step/start', 'turn/end',
])

const PACK = ['smoke/basic-pressure.yaml', 'faults/fault-32-summary-rerouted.yaml', 'faults/fault-29-summary-image-offload.yaml', 'policy/pressure-prune-relieves.yaml']

describe('sim run never stops with an error on a subject\'s broken log', () => {
  const edit = fc.tuple(fc.nat(), fc.integer({ min: -3, max: 3 }), fc.constantFrom('move' as const, 'drop' as const, 'dup' as const))
  it('events moved, dropped or duplicated around brackets (seqs kept or renumbered): always a verdict, never status error', async () => {
    let n = 0
    let unreplayable = 0
    await fc.assert(fc.asyncProperty(fc.nat(), fc.array(edit, { minLength: 1, maxLength: 3 }), fc.boolean(), async (pick, edits, renumber) => {
      const subject = storageBug('fuzzed-storage', (events) => {
        let out = events
        for (const [a, by, kind] of edits) {
          const aimed = out.flatMap((e, i) => (AIMED.has(e.type) || typeof e.surfaceOp === 'object' ? [i] : []))
          if (aimed.length === 0) break
          const i = aimed[a % aimed.length] as number
          if (kind === 'move') {
            const [moved] = out.splice(i, 1) as [Line]
            out.splice(Math.max(0, Math.min(out.length, i + by)), 0, moved)
          } else if (kind === 'drop') out.splice(i, 1)
          else out.splice(i, 0, structuredClone(out[i] as Line))
        }
        if (renumber) out = out.map((e, i) => ({ ...e, seq: i }))
        return out
      })
      const file = join(REPO_ROOT, 'packages/sim/conformance/pack-v1', PACK[pick % PACK.length] as string)
      const report = await runScenario(file, { outDir: join(tmp.dir, `fuzz-${n++}`), subject, cwd: REPO_ROOT })
      expect(report.status, report.error).not.toBe('error')
      if (report.expectations.some((e) => e.name === 'replay')) unreplayable++
    }), fcParams({ numRuns: Number(process.env['TOTALITY_RUNS_SIM'] ?? 24) }))
    expect(unreplayable).toBeGreaterThan(0) // the edits reach what core cannot replay (the case), not only harmless ones
  }, 300_000) // ~0.2 s a run here; a liveness bound for a 10× slower machine, never a speed check
})
