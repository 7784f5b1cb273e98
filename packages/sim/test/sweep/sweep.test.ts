/**
 * Issue #10 "Done when", at test size: `sim sweep` over a small grid writes a schema-valid `sweep.json` (cells in
 * grid order, the §3.2-invalid cell skipped with its reason, the pruner and window overrides applied) with 2
 * workers, and the same bytes when run with 1 worker as `--shard 1/3`, `2/3`, `3/3` and joined by `sim report
 * merge` (one comparison covers the worker count and sharding: issue #18 dropped a separate 1-worker sweep);
 * `sim run --shard i/n` of a few catalog scenarios, merged, equals the unsharded `report.json`.
 */
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RunReport } from '../../src/report/types.ts'
import type { SweepReport } from '../../src/sweep/types.ts'
import { validateSweepReport } from '../../src/sweep/validate.ts'
import { runSim, tempDir, type SimRun } from '../cli/run-sim.ts'

const SCENARIO = 'scenarios/policy/generated-session-pruner.yaml'
const AXES = ['--threshold', '0.6,0.8', '--retain', '0.1,0.7', '--pruner', 'on,off', '--window', '6000']
const RUN_FILES = [
  'scenarios/smoke/basic-pressure.yaml', 'scenarios/smoke/no-pressure.yaml', 'scenarios/policy/retain-ratio.yaml',
  'scenarios/policy/threshold-at-edge.yaml', 'scenarios/policy/pressure-prune-relieves.yaml',
]

let dir = ''
let cleanup: () => Promise<void> = async () => undefined
const sweep = async (out: string, ...extra: string[]): Promise<SimRun> =>
  runSim(['sweep', SCENARIO, ...AXES, '--out-dir', join(dir, out), ...extra], { env: { CI: 'true' } })
const text = async (...parts: string[]): Promise<string> => readFile(join(dir, ...parts), 'utf8')

beforeAll(async () => {
  ({ dir, cleanup } = await tempDir())
})
afterAll(async () => cleanup())

describe('sim sweep', () => {
  let report: SweepReport
  let first: SimRun

  beforeAll(async () => {
    // A 2-worker pool loads the job runner through tsx in each thread: ~20 s on a loaded 2-core machine.
    first = await sweep('two', '--workers', '2')
    report = JSON.parse(await text('two', 'sweep.json')) as SweepReport
  }, 300_000)

  it('writes a schema-valid sweep.json with every cell in grid order and one progress line per cell under CI', async () => {
    expect(first.exitCode, first.stderr).toBe(0)
    expect(validateSweepReport(report)).toEqual([])
    expect(report.cells.map((c) => `${c.id} ${c.status}`)).toEqual([
      'w6000-t0.6-r0.1-p1 ran', 'w6000-t0.6-r0.7-p1 skipped', 'w6000-t0.8-r0.1-p1 ran', 'w6000-t0.8-r0.7-p1 ran',
      'w6000-t0.6-r0.1-p0 ran', 'w6000-t0.6-r0.7-p0 skipped', 'w6000-t0.8-r0.1-p0 ran', 'w6000-t0.8-r0.7-p0 ran',
    ])
    expect(first.stderr.split('\n').filter((l) => /^\[\d+\/6\] w6000-/.test(l))).toHaveLength(6)
    expect(await text('two', 'sweep.md')).toContain('| ★ |')
  })

  it('skips the invalid cell with the §3.2 reason and applies the pruner and window overrides', () => {
    const skipped = report.cells.filter((c) => c.status === 'skipped')
    for (const c of skipped) expect(c.skipReason).toMatch(/retainRatio 0\.7 must be strictly below thresholdRatio 0\.6 \(§3\.2 rule 7\)/)
    const ran = report.cells.filter((c) => c.status === 'ran')
    expect(ran.every((c) => c.metrics?.violations === 0 && c.metrics.runs === 1)).toBe(true)
    expect(ran.filter((c) => !c.policy.pruner).map((c) => c.metrics?.prunes)).toEqual([0, 0, 0])
    expect(ran.filter((c) => c.policy.pruner).every((c) => (c.metrics?.prunes ?? 0) > 0)).toBe(true)
    // retain 0.7 of the window is kept verbatim: more compactions than with 0.1 at the same threshold.
    const compactions = (id: string): number => report.cells.find((c) => c.id === id)?.metrics?.compactions ?? -1
    expect(compactions('w6000-t0.8-r0.7-p0')).toBeGreaterThan(compactions('w6000-t0.8-r0.1-p0'))
    expect(ran.every((c) => c.metrics?.retention !== null && c.runs?.[0]?.factsTotal !== 0)).toBe(true)
  })

  it('marks a non-empty Pareto set and recommends a Pareto cell for the window', () => {
    const pareto = report.cells.filter((c) => c.pareto === true).map((c) => c.id)
    expect(pareto.length).toBeGreaterThan(0)
    expect(report.summary.pareto).toBe(pareto.length)
    const [rec] = report.recommendations
    expect(rec?.contextWindow).toBe(6000)
    expect(pareto).toContain(rec?.cell)
    expect(rec?.reasoning).toContain(String(rec?.cell))
  })

  it('merges 1-worker --shard 1/3, 2/3, 3/3 into the unsharded 2-worker sweep.json byte for byte', async () => {
    const sizes: number[] = []
    for (const i of [1, 2, 3]) {
      const shard = await sweep(`s${i}`, '--workers', '1', '--shard', `${i}/3`)
      expect(shard.exitCode, shard.stderr).toBe(0)
      sizes.push((JSON.parse(await text(`s${i}`, 'sweep.json')) as SweepReport).cells.length)
    }
    expect(sizes.every((n) => n > 0)).toBe(true)
    expect(sizes.reduce((a, b) => a + b, 0)).toBe(8)
    const merged = await runSim(['report', 'merge', ...[3, 1, 2].map((i) => join(dir, `s${i}`)), '--out-dir', join(dir, 'merged')])
    expect(merged.exitCode, merged.stderr).toBe(0)
    expect(await text('merged', 'sweep.json')).toBe(await text('two', 'sweep.json'))
    expect(await text('merged', 'sweep.md')).toBe(await text('two', 'sweep.md'))
  }, 300_000)

  it('refuses to merge an incomplete set of shards (exit 2)', async () => {
    const merged = await runSim(['report', 'merge', join(dir, 's1'), join(dir, 's3'), '--out-dir', join(dir, 'bad')])
    expect(merged.exitCode).toBe(2)
    expect(merged.stderr).toContain('missing shard 2/3')
  })
})

describe('sim run --shard', () => {
  it('merges 3 shards of a scenario list into the unsharded report.json byte for byte', async () => {
    const whole = await runSim(['run', ...RUN_FILES, '--reporter', 'json', '--out-dir', join(dir, 'run-all')], { env: { CI: 'true' } })
    expect(whole.exitCode, whole.stderr).toBe(0)
    const counts: number[] = []
    for (const i of [1, 2, 3]) {
      const part = await runSim(['run', ...RUN_FILES, '--shard', `${i}/3`, '--out-dir', join(dir, `run-s${i}`)], { env: { CI: 'true' } })
      expect(part.exitCode, part.stderr).toBe(0)
      const shard = JSON.parse(await text(`run-s${i}`, 'report.json')) as RunReport
      expect(shard.shard).toEqual({ index: i, count: 3, files: RUN_FILES })
      counts.push(shard.scenarios.length)
    }
    expect(counts.reduce((a, b) => a + b, 0)).toBe(RUN_FILES.length)
    const merged = await runSim(['report', 'merge', ...[1, 2, 3].map((i) => join(dir, `run-s${i}`)), '--out-dir', join(dir, 'run-merged')])
    expect(merged.exitCode, merged.stderr).toBe(0)
    expect(await text('run-merged', 'report.json')).toBe(await text('run-all', 'report.json'))
    expect(await text('run-merged', 'junit.xml')).toBe(await text('run-all', 'junit.xml'))
    // The artifacts come along: `sim check` finds each log's manifest in the merged folder.
    expect(await text('run-merged', 'smoke--basic-pressure.jsonl')).toBe(await text('run-all', 'smoke--basic-pressure.jsonl'))
  }, 300_000)
})
