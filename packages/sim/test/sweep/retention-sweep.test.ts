/**
 * `sim sweep` with the `retention` objective over `summarizer:` definitions (issue #20): the grid file's
 * `summarizer` axis and `objective` key (bad values are `file:line:column`), the Pareto front that maximises
 * retention beside cost, and a real sweep of `scenarios/retention/sweep-session.yaml` over
 * `scenarios/retention/summarizers.grid` that writes a schema-valid `sweep.json` with its Pareto front, the probe
 * retention of each summarizer and a recommendation that says which keeps more, at what cost.
 */
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { UsageError } from '../../src/cli/exit-codes.ts'
import { paretoFront } from '../../src/sweep/aggregate.ts'
import { gridCells, parseGrid } from '../../src/sweep/grid.ts'
import type { SweepCell, SweepCellMetrics, SweepReport } from '../../src/sweep/types.ts'
import { validateSweepReport } from '../../src/sweep/validate.ts'
import { REPO_ROOT, runSim, tempDir } from '../cli/run-sim.ts'

describe('grid: summarizer axis and objective', () => {
  it('crosses every policy with every summarizer, numbering the cells -s1, -s2, …', () => {
    const grid = parseGrid('thresholdRatio: [0.7, 0.8]\nsummarizer: [builtin, {ratio: 0.3}]\nobjective: retention\n', 'g.grid')
    expect(grid.objective).toBe('retention')
    expect(grid.summarizer).toEqual(['builtin', { ratio: 0.3 }])
    const cells = gridCells(grid).filter((c) => c.policy.pruner)
    expect(cells.map((c) => c.id)).toEqual(['w8000-t0.7-r0.16-p1-s1', 'w8000-t0.7-r0.16-p1-s2', 'w8000-t0.8-r0.16-p1-s1', 'w8000-t0.8-r0.16-p1-s2'])
    expect(cells[1]?.policy.summarizer).toEqual({ ratio: 0.3 })
    // Without the axis nothing changes: the ids and policies of issue #10.
    const plain = gridCells(parseGrid('thresholdRatio: 0.8\npruner: [on]\n', 'p.grid'))
    expect(plain.map((c) => [c.id, 'summarizer' in c.policy])).toEqual([['w8000-t0.8-r0.16-p1', false]])
  })

  it('refuses an unknown summarizer and an unknown objective at file:line:column', () => {
    const bad = (text: string): string => {
      try {
        parseGrid(text, 'g.grid')
      } catch (err) {
        expect(err).toBeInstanceOf(UsageError)
        return (err as Error).message
      }
      return 'accepted'
    }
    expect(bad('summarizer: [builtin, forgetful]\n')).toMatch(/^g\.grid:1:23: summarizer: names no summarizer preset \(got "forgetful"/)
    expect(bad('summarizer: [{ratio: 0}]\n')).toMatch(/^g\.grid:1:14: summarizer: ratio must be above 0/)
    expect(bad('objective: speed\n')).toMatch(/^g\.grid:1:12: objective: expected one of cost, retention, got "speed"/)
  })
})

describe('paretoFront under the retention objective', () => {
  const cell = (index: number, cost: number, probeRetention: number): SweepCell => ({
    index, id: `c${index}`, policy: { thresholdRatio: 0.8, retainRatio: 0.2, pruner: true, contextWindow: 6000 }, status: 'ran',
    metrics: {
      runs: 1, runsNotPassed: 0, turns: 10, compactions: 2, prunes: 0, failedBrackets: 0, overflowIncidents: 0, pressureMax: 0.8,
      pressureMean: 0.5, summaryPromptTokens: 1, promptTokens: 10, cachedTokens: 5, uncachedTokens: 5, cost, violations: 0,
      retention: null, probeRetention, cacheReuse: 0.5,
    } satisfies SweepCellMetrics,
  })
  it('keeps a dearer cell that keeps more; by cost alone it is dominated', () => {
    const cheap = cell(0, 0.1, 0.6)
    const dear = cell(1, 0.2, 0.9)
    const worse = cell(2, 0.2, 0.5)
    expect(paretoFront([cheap, dear, worse], 'cost', 'retention').map((c) => c.id)).toEqual(['c0', 'c1'])
    expect(paretoFront([cheap, dear, worse], 'cost').map((c) => c.id)).toEqual(['c0'])
  })
})

describe('sim sweep --grid scenarios/retention/summarizers.grid', () => {
  let dir = ''
  let cleanup: () => Promise<void> = async () => undefined
  let report: SweepReport
  let exitCode = -1
  let stderr = ''
  beforeAll(async () => {
    ({ dir, cleanup } = await tempDir())
    const run = await runSim([
      'sweep', join(REPO_ROOT, 'scenarios/retention/sweep-session.yaml'), '--grid', join(REPO_ROOT, 'scenarios/retention/summarizers.grid'),
      '--workers', '1', '--out-dir', join(dir, 'out'),
    ], { env: { CI: 'true' } })
    exitCode = run.exitCode
    stderr = run.stderr
    report = JSON.parse(await readFile(join(dir, 'out', 'sweep.json'), 'utf8')) as SweepReport
  }, 600_000)
  afterAll(async () => cleanup())

  it('writes a schema-valid sweep.json with a Pareto front of retention against cost', async () => {
    expect(exitCode, stderr).toBe(0)
    expect(validateSweepReport(report)).toEqual([])
    expect(report.grid.objective).toBe('retention')
    expect(report.cells.map((c) => [c.id, c.policy.summarizer])).toEqual([
      ['w6000-t0.8-r0.2-p1-s1', 'builtin'], ['w6000-t0.8-r0.2-p1-s2', 'forgets-paths'], ['w6000-t0.8-r0.2-p1-s3', { ratio: 0.3 }],
    ])
    const retention = report.cells.map((c) => c.metrics?.probeRetention ?? -1)
    for (const r of retention) expect(r).toBeGreaterThan(0)
    // Forgetting every path keeps fewer probes than the builtin checkpoint.
    expect(retention[1]).toBeLessThan(retention[0] ?? 0)
    for (const c of report.cells) expect(c.metrics?.cacheReuse).toBeGreaterThan(0)
    expect(report.summary.pareto).toBeGreaterThanOrEqual(1)
    const front = report.cells.filter((c) => c.pareto === true)
    const best = Math.max(...retention)
    // The cell that keeps the most is never dominated under this objective.
    expect(front.some((c) => c.metrics?.probeRetention === best)).toBe(true)
    const [rec] = report.recommendations
    expect(rec?.cell).toBe(report.cells.find((c) => c.pareto === true && c.metrics?.probeRetention === best)?.id)
    expect(rec?.reasoning).toMatch(/keeps the most retention probes \(\d+(\.\d)?%\) at cost \d/)
    const md = await readFile(join(dir, 'out', 'sweep.md'), 'utf8')
    expect(md).toContain('Objective: **retention**')
    expect(md).toMatch(/\| summarizer \|.*\| probe retention \|/)
    expect(md).toContain('| forgets-paths |')
  })
})
