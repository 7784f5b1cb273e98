/**
 * `sim report merge` (issue #10): joins the shard outputs of `sim run --shard i/n` (each `report.json` carries
 * `shard` with the whole run's file list) or of `sim sweep --shard i/n` (`sweep.json`) into one document equal,
 * byte for byte, to the unsharded run's: rows in the unsharded order, summary, run id, differential and cache
 * totals recomputed by the same functions the runner uses. Shards must be complete and consistent: every slice
 * 1…n exactly once, the same run (files, seed; grid, scenarios) — anything else is an input error naming the folder.
 */
import { cp, readFile, readdir } from 'node:fs/promises'
import { join } from 'node:path'
import { UsageError } from '../cli/exit-codes.ts'
import { runCacheOf } from '../metrics/cache.ts'
import { seedsRunIdOf, runIdOf } from '../run/run-scenario.ts'
import { finishSweep } from '../sweep/aggregate.ts'
import type { SweepReport } from '../sweep/types.ts'
import { validateSweepReport } from '../sweep/validate.ts'
import type { DifferentialReport, RunReport, RunSummary, ScenarioReport, ScenarioStatus } from './types.ts'
import { validateRunReport } from './validate.ts'

/** A shard folder's document, by kind. */
export type ShardDocument = { kind: 'run'; dir: string; report: RunReport } | { kind: 'sweep'; dir: string; report: SweepReport }

/** Files of a shard folder that are reports, not artifacts (the merged folder gets fresh ones). */
const REPORT_FILES = new Set(['report.json', 'report.md', 'junit.xml', 'index.html', 'sweep.json', 'sweep.md'])

/** Reads `dir`'s `sweep.json` or `report.json` and checks it against its schema; throws `UsageError` naming the file. */
export async function readShard(dir: string): Promise<ShardDocument> {
  for (const [name, kind] of [['sweep.json', 'sweep'], ['report.json', 'run']] as const) {
    const path = join(dir, name)
    let text: string
    try {
      text = await readFile(path, 'utf8')
    } catch {
      continue // not this kind of folder: try the other file name
    }
    let doc: unknown
    try {
      doc = JSON.parse(text)
    } catch (err) {
      throw new UsageError(`${path}: not JSON (${(err as Error).message})`)
    }
    const problems = kind === 'sweep' ? validateSweepReport(doc) : validateRunReport(doc)
    if (problems.length > 0) throw new UsageError(`${path}: not a valid ${name}: ${problems.slice(0, 3).join('; ')}`)
    return kind === 'sweep' ? { kind, dir, report: doc as SweepReport } : { kind, dir, report: doc as RunReport }
  }
  throw new UsageError(`${dir}: holds neither sweep.json nor report.json`)
}

/** Checks that `shards` are slices 1…n of one split, each exactly once. */
function checkSlices(shards: ReadonlyArray<{ dir: string; shard: { index: number; count: number } | undefined }>): void {
  const first = shards[0]
  if (first === undefined) throw new UsageError('report merge: no shard folders given')
  const count = first.shard?.count ?? 0
  const seen = new Map<number, string>()
  for (const s of shards) {
    if (s.shard === undefined) throw new UsageError(`${s.dir}: not a shard (written without --shard)`)
    if (s.shard.count !== count) {
      throw new UsageError(`${s.dir}: shard ${s.shard.index}/${s.shard.count} does not belong to a split into ${count}`)
    }
    const dup = seen.get(s.shard.index)
    if (dup !== undefined) throw new UsageError(`${s.dir}: shard ${s.shard.index}/${count} is also in ${dup}`)
    seen.set(s.shard.index, s.dir)
  }
  const missing = Array.from({ length: count }, (_, i) => i + 1).filter((i) => !seen.has(i))
  if (missing.length > 0) throw new UsageError(`report merge: missing ${missing.length === 1 ? 'shard' : 'shards'} ${missing.map((i) => `${i}/${count}`).join(', ')}`)
}

/** Merges `sim run` shard reports into the unsharded report. */
export function mergeRunReports(shards: ReadonlyArray<{ dir: string; report: RunReport }>): RunReport {
  checkSlices(shards.map((s) => ({ dir: s.dir, shard: s.report.shard })))
  const [first] = shards as [{ dir: string; report: RunReport }]
  const files = first.report.shard?.files ?? []
  for (const s of shards) {
    if (JSON.stringify(s.report.shard?.files) !== JSON.stringify(files) || s.report.seed !== first.report.seed) {
      throw new UsageError(`${s.dir}: a shard of another run (its file list or seed differs from ${first.dir})`)
    }
  }
  const order = new Map(files.map((f, i) => [f, i]))
  const position = (file: string): number => order.get(file) ?? Number.MAX_SAFE_INTEGER
  const bySlice = [...shards].sort((a, b) => (a.report.shard?.index ?? 0) - (b.report.shard?.index ?? 0))
  // A stable sort: the rows of one file (one per subject) keep their shard's order.
  const scenarios = bySlice.flatMap((s) => s.report.scenarios).sort((a, b) => position(a.file) - position(b.file))
  const count = (st: ScenarioStatus): number => scenarios.filter((r) => r.status === st).length
  const merged: RunReport = {
    schemaVersion: first.report.schemaVersion,
    tool: first.report.tool,
    runId: runIdOf(files, first.report.seed),
    seed: first.report.seed,
    summary: {
      total: scenarios.length, passed: count('passed'), failed: count('failed'), skipped: count('skipped'), error: count('error'),
    },
    scenarios,
  }
  const differentials = bySlice.flatMap((s) => (s.report.differential === undefined ? [] : [s.report.differential]))
  const base = differentials[0]
  if (base !== undefined) merged.differential = mergeDifferential(base, differentials, position)
  const cache = runCacheOf(scenarios)
  if (cache !== undefined) merged.cache = cache
  if (shards.every((s) => s.report.timings !== undefined)) {
    merged.timings = { ms: shards.reduce((n, s) => n + (s.report.timings?.ms ?? 0), 0) }
  }
  return merged
}

function mergeDifferential(
  base: DifferentialReport, parts: readonly DifferentialReport[], position: (file: string) => number,
): DifferentialReport {
  const scenarios = parts.flatMap((d) => d.scenarios).sort((a, b) => position(a.file) - position(b.file))
  const compared = scenarios.filter((s) => s.status === 'compared')
  const all = compared.flatMap((s) => s.differences)
  return {
    base: base.base,
    subjects: base.subjects,
    summary: {
      scenarios: scenarios.length,
      compared: compared.length,
      skipped: scenarios.length - compared.length,
      identical: compared.filter((s) => s.differences.length === 0).length,
      explained: all.filter((d) => d.verdict === 'explained').length,
      unexplained: all.filter((d) => d.verdict === 'unexplained').length,
    },
    scenarios,
  }
}

/** Merges `sim sweep` shard documents into the unsharded sweep. */
export function mergeSweepReports(shards: ReadonlyArray<{ dir: string; report: SweepReport }>): SweepReport {
  checkSlices(shards.map((s) => ({ dir: s.dir, shard: s.report.shard })))
  const [first] = shards as [{ dir: string; report: SweepReport }]
  for (const s of shards) {
    if (JSON.stringify([s.report.grid, s.report.scenarios]) !== JSON.stringify([first.report.grid, first.report.scenarios])) {
      throw new UsageError(`${s.dir}: a shard of another sweep (its grid or scenarios differ from ${first.dir})`)
    }
  }
  return finishSweep({
    grid: first.report.grid,
    scenarios: first.report.scenarios,
    cells: shards.flatMap((s) => s.report.cells),
    complete: shards.every((s) => s.report.complete),
  })
}

/** Copies each shard folder's artifacts (logs, manifests, captures, sweep `runs/`) into `outDir`, reports excluded. */
export async function copyArtifacts(dirs: readonly string[], outDir: string): Promise<void> {
  for (const dir of dirs) {
    for (const entry of await readdir(dir)) {
      if (REPORT_FILES.has(entry)) continue
      await cp(join(dir, entry), join(outDir, entry), { recursive: true, force: true })
    }
  }
}

/** Totals of `scenarios` by status. */
export function summaryOf(scenarios: readonly ScenarioReport[]): RunSummary {
  const count = (st: ScenarioStatus): number => scenarios.filter((r) => r.status === st).length
  return { total: scenarios.length, passed: count('passed'), failed: count('failed'), skipped: count('skipped'), error: count('error') }
}

/**
 * Merges the per-seed reports of `sim run --seeds` (issue #21; each one the `report.json` a `sim run --seed <k>`
 * of the same files writes into its folder `seed-<k>/`) into the run's report: one row per scenario and seed,
 * scenario by scenario, seeds in the given order; artifact paths gain the `seed-<k>/` prefix (they stay relative
 * to the merged report's folder); `seed` is null and `seeds` lists them; summary and cache totals are recomputed.
 * @throws Error when a report lists other files than the first (a bug of the caller, not an input error).
 */
export function mergeSeedReports(files: readonly string[], perSeed: ReadonlyArray<{ seed: number; report: RunReport }>): RunReport {
  const [first] = perSeed
  if (first === undefined) throw new Error('mergeSeedReports: no seed reports')
  for (const { seed, report } of perSeed) {
    if (report.scenarios.length !== files.length) throw new Error(`mergeSeedReports: seed ${seed} has ${report.scenarios.length} rows for ${files.length} files`)
  }
  const scenarios: ScenarioReport[] = []
  files.forEach((_file, i) => {
    for (const { seed, report } of perSeed) {
      const row = report.scenarios[i]
      if (row === undefined) continue
      const dir = seedFolder(seed)
      const copy = structuredClone(row)
      if (copy.artifacts !== undefined) {
        copy.artifacts = { log: `${dir}/${copy.artifacts.log}`, manifest: `${dir}/${copy.artifacts.manifest}`, requests: `${dir}/${copy.artifacts.requests}` }
      }
      for (const session of copy.sessions ?? []) {
        // Issue #16: each session's files live in the seed's folder too.
        const a = session.artifacts
        session.artifacts = { log: `${dir}/${a.log}`, manifest: `${dir}/${a.manifest}`, requests: `${dir}/${a.requests}` }
      }
      scenarios.push(copy)
    }
  })
  const merged: RunReport = {
    schemaVersion: first.report.schemaVersion,
    tool: first.report.tool,
    runId: seedsRunIdOf(files, perSeed.map((s) => s.seed)),
    seed: null,
    summary: summaryOf(scenarios),
    scenarios,
  }
  const cache = runCacheOf(scenarios)
  if (cache !== undefined) merged.cache = cache
  merged.seeds = perSeed.map((s) => s.seed)
  return merged
}

/** The folder of one seed's artifacts and report inside a `sim run --seeds` output folder. */
export function seedFolder(seed: number): string {
  return `seed-${seed}`
}
