/**
 * `runSweep`: the programmatic API behind `sim sweep` (issue #10). Expands the grid into cells, skips the
 * invalid ones with their §3.2 reason, keeps the cells of `--shard i/n`, runs every valid cell × scenario ×
 * seed as an independent deterministic job on the worker pool, and assembles `sweep.json` in grid order.
 * An abort (Ctrl-C) stops dispatching; the cells whose jobs all finished are reported and `complete` is false.
 */
import { join } from 'node:path'
import { finishSweep, cellMetricsOf } from './aggregate.ts'
import { gridCells } from './grid.ts'
import type { SweepJob, SweepJobResult } from './job.ts'
import { runJobs } from './pool.ts'
import { inShard, type Shard } from './shard.ts'
import type { SweepCell, SweepGrid, SweepReport, SweepRunMetrics } from './types.ts'

/** Options of `runSweep`. */
export interface SweepOptions {
  grid: SweepGrid
  /** Scenario files (relative to `cwd`), in report order. */
  scenarios: readonly string[]
  /** Where each job's artifacts go: `<outDir>/runs/<cell-id>/`. */
  outDir: string
  cwd: string
  /** Worker threads (1 = inline). */
  workers: number
  shard?: Shard
  signal?: AbortSignal
  /** Called once per finished cell (in completion order), with the cells done so far and the total. */
  onCell?: (cell: SweepCell, done: number, total: number) => void
}

/** Runs the sweep and returns its report (see the module doc). Rejects only on an internal failure. */
export async function runSweep(options: SweepOptions): Promise<SweepReport> {
  const all = gridCells(options.grid)
  const cells = options.shard === undefined ? all : inShard(all, (c) => c.id, options.shard)
  const seeds: Array<number | null> = options.grid.seeds.length === 0 ? [null] : options.grid.seeds
  const jobs: SweepJob[] = []
  for (const cell of cells) {
    if (cell.invalidReason !== null) continue
    for (const file of options.scenarios) {
      for (const seed of seeds) {
        const outDir = join(options.outDir, 'runs', cell.id, seed === null ? '' : `seed-${seed}`)
        jobs.push({ index: jobs.length, cellId: cell.id, policy: cell.policy, file, seed, outDir, cwd: options.cwd })
      }
    }
  }
  const perCell = new Map<string, number>()
  for (const job of jobs) perCell.set(job.cellId, (perCell.get(job.cellId) ?? 0) + 1)
  const results = new Map<string, SweepJobResult[]>()
  const finished: SweepCell[] = cells.filter((c) => c.invalidReason !== null).map((c) => ({
    index: c.index, id: c.id, policy: c.policy, status: 'skipped', skipReason: c.invalidReason ?? '',
  }))
  const validCount = cells.length - finished.length
  let doneCells = 0
  await runJobs(jobs, {
    workers: options.workers,
    ...(options.signal === undefined ? {} : { signal: options.signal }),
    onResult: (result) => {
      const list = results.get(result.cellId) ?? []
      list.push(result)
      results.set(result.cellId, list)
      if (list.length !== perCell.get(result.cellId)) return
      const cell = cells.find((c) => c.id === result.cellId)
      if (cell === undefined) return
      const runs: SweepRunMetrics[] = [...list].sort((a, b) => a.index - b.index).map((r) => r.metrics)
      const done: SweepCell = { index: cell.index, id: cell.id, policy: cell.policy, status: 'ran', metrics: cellMetricsOf(runs, options.grid.objective, options.grid.profile !== undefined), runs }
      finished.push(done)
      options.onCell?.(done, ++doneCells, validCount)
    },
  })
  const complete = doneCells === validCount
  return finishSweep({
    grid: options.grid, scenarios: [...options.scenarios], cells: finished, complete,
    ...(options.shard === undefined ? {} : { shard: options.shard }),
  })
}
