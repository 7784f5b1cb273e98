/**
 * `runSeeds`: the programmatic API behind `sim run --seeds` (issue #21). Runs every scenario under every seed,
 * each (scenario, seed) an independent deterministic job on the sweep's worker pool (`sweep/pool.ts`; inline with
 * one worker), exactly as `sim run <files> --seed <k>` would run it: the same artifacts in the seed's folder
 * `seed-<k>/`, the same report entry. Results arrive in completion order and are put back in job order, so the
 * reports never depend on scheduling: each seed's `RunReport` equals the `report.json` of `sim run <files> --seed
 * <k>`, and the merged report (`report/merge.ts` `mergeSeedReports`) holds every entry, scenario by scenario.
 */
import { join } from 'node:path'
import { runCacheOf } from '../metrics/cache.ts'
import { mergeSeedReports, seedFolder, summaryOf } from '../report/merge.ts'
import { RUN_REPORT_SCHEMA_VERSION, type RunReport, type ScenarioReport } from '../report/types.ts'
import { runSeedJobs } from '../sweep/pool.ts'
import type { SeedJob } from '../sweep/seed-job.ts'
import { displayPath, runIdOf, slugsOf, TOOL_VERSION } from './run-scenario.ts'

/** Options of `runSeeds`. */
export interface SeedsOptions {
  /** The seeds, in report order (each once). */
  seeds: readonly number[]
  /** Worker threads (1 = inline, in this thread). */
  workers: number
  /** The run's folder; seed k's artifacts go to `<outDir>/seed-<k>/`. */
  outDir: string
  cwd: string
  /** The `--subject` value, or null for each scenario's own subject. */
  subject: string | null
  /** Adds wall-clock durations to the entries (`--timings`). */
  timings?: boolean
  signal?: AbortSignal
  /** Called with each entry as it finishes (completion order), with the entries done so far and the total. */
  onResult?: (scenario: ScenarioReport, done: number, total: number) => void
  /**
   * Called once per file, in file order, as soon as that file and every file before it has all its seeds: the
   * file's entries in seed order (so what is printed from here does not depend on scheduling).
   */
  onFile?: (rows: readonly ScenarioReport[], fileIndex: number) => void
}

/** What `runSeeds` returns: each seed's report (seed order) and the merged report. */
export interface SeedsRun {
  perSeed: Array<{ seed: number; report: RunReport }>
  merged: RunReport
}

/** Runs every file under every seed (see the module doc). Rejects only on an internal failure of sim. */
export async function runSeeds(files: readonly string[], options: SeedsOptions): Promise<SeedsRun> {
  const { seeds, cwd } = options
  const slugs = slugsOf(files, cwd)
  const jobs: SeedJob[] = []
  for (const [i, file] of files.entries()) {
    for (const seed of seeds) {
      jobs.push({
        index: jobs.length, file, slug: slugs[i] ?? '', seed, outDir: join(options.outDir, seedFolder(seed)), cwd,
        subject: options.subject, timings: options.timings === true,
      })
    }
  }
  const rows: Array<ScenarioReport | undefined> = Array.from({ length: jobs.length }, () => undefined)
  let done = 0
  let nextFile = 0
  await runSeedJobs(jobs, {
    workers: options.workers,
    ...(options.signal === undefined ? {} : { signal: options.signal }),
    onResult: (result) => {
      rows[result.index] = result.report
      options.onResult?.(result.report, ++done, jobs.length)
      while (nextFile < files.length) {
        const of = rows.slice(nextFile * seeds.length, (nextFile + 1) * seeds.length)
        if (of.some((r) => r === undefined)) break
        options.onFile?.(of as ScenarioReport[], nextFile)
        nextFile++
      }
    },
  })
  const shown = files.map((f) => displayPath(f, cwd))
  const perSeed = seeds.map((seed, k) => {
    const scenarios = files.map((_f, i) => rows[i * seeds.length + k]).filter((r): r is ScenarioReport => r !== undefined)
    const report: RunReport = {
      schemaVersion: RUN_REPORT_SCHEMA_VERSION,
      tool: { name: 'compaction-sim', version: TOOL_VERSION },
      runId: runIdOf(shown, seed),
      seed,
      summary: summaryOf(scenarios),
      scenarios,
    }
    const cache = runCacheOf(scenarios)
    if (cache !== undefined) report.cache = cache
    return { seed, report }
  })
  return { perSeed, merged: mergeSeedReports(shown, perSeed) }
}
