/**
 * `sim sweep <scenarios...> --grid <file.yaml>` (issue #10): runs every policy cell of a grid (or of inline
 * `--threshold/--retain/--pruner/--window` flags) × every scenario × every seed on a worker pool, and writes
 * `sweep.json`, `sweep.md` and `index.html` (Pareto chart and heat-maps) into the output folder (default
 * `reports/<sweep-id>/`). `--shard i/n` runs one slice of the grid; `sim report merge` joins the slices.
 * stdout: a summary, or with `--json` exactly the document. Exit 0 ok, 1 an invariant violation or an
 * interrupted (Ctrl-C) sweep (the partial report is written, marked incomplete), 2 bad input (a malformed
 * grid names `file:line:column`), 3 a bug of sim.
 */
import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import type { Argv, CommandModule } from 'yargs'
import { loadScenario } from '../../scenario/load.ts'
import { resolveScenario } from '../../scenario/resolve.ts'
import { sweepIdOf } from '../../sweep/aggregate.ts'
import { gridFromFlags, loadGridFile } from '../../sweep/grid.ts'
import { renderSweepHtml } from '../../sweep/html.ts'
import { renderSweepMarkdown } from '../../sweep/markdown.ts'
import { defaultWorkers } from '../../sweep/pool.ts'
import { createProgress, progressMode } from '../../sweep/progress.ts'
import { parseShard } from '../../sweep/shard.ts'
import { runSweep } from '../../sweep/sweep.ts'
import type { SweepReport } from '../../sweep/types.ts'
import { validateSweepReport } from '../../sweep/validate.ts'
import { ExitCode, UsageError } from '../exit-codes.ts'
import { parseIntegerFlag } from '../flags.ts'
import { checkOutDir } from '../out-dir.ts'
import type { CommandContext } from '../context.ts'
import { scenarioFiles } from './run.ts'
import { plural } from '../../plural.ts'

/** Upper bound of `--workers`. */
const WORKERS_MAX = 256

/** Parsed arguments of `sim sweep`. */
export interface SweepArgs {
  files: string[]
  grid: string | undefined
  threshold: string | undefined
  retain: string | undefined
  pruner: string | undefined
  window: string | undefined
  seeds: string | undefined
  objective: string | undefined
  profile: string | undefined
  'own-policy': boolean
  workers: number | undefined
  shard: string | undefined
  'out-dir': string | undefined
  json: boolean
}

/** Writes `sweep.json`, `sweep.md` and `index.html` of `report` into `outDir` (after checking the schema). */
export async function writeSweepReport(report: SweepReport, outDir: string): Promise<void> {
  const problems = validateSweepReport(report)
  if (problems.length > 0) throw new Error(`the sweep report does not match its schema: ${problems.slice(0, 3).join('; ')}`)
  await mkdir(outDir, { recursive: true })
  await writeFile(join(outDir, 'sweep.json'), `${JSON.stringify(report, null, 2)}\n`)
  await writeFile(join(outDir, 'sweep.md'), renderSweepMarkdown(report))
  await writeFile(join(outDir, 'index.html'), renderSweepHtml(report))
}

/** One summary line per recommendation, for stdout. */
export function sweepSummary(report: SweepReport, outDir: string): string {
  const lines = [
    `sweep ${report.sweepId}: ${report.summary.cells} cells (${report.summary.ran} ran, ${report.summary.skipped} skipped), `
      + `${plural(report.summary.runs, 'run')}, ${plural(report.summary.violations, 'violation')}, ${plural(report.summary.pareto, 'Pareto point')}`
      + `${report.complete ? '' : ' — INCOMPLETE (interrupted)'}`,
    ...report.recommendations.map((r) => `window ${r.contextWindow}: ${r.cell ?? 'no recommendation'} — ${r.reasoning}`),
    `reports: ${join(outDir, 'sweep.json')}, sweep.md, index.html`,
  ]
  return `${lines.join('\n')}\n`
}

/** The `sweep` command module. */
export function sweepCommand(ctx: CommandContext): CommandModule<object, SweepArgs> {
  return {
    command: 'sweep <files..>',
    describe: 'Run scenarios over a grid of policies (Pareto report)',
    builder: (yargs: Argv) => yargs
      .positional('files', { type: 'string', array: true, demandOption: true, describe: 'Scenario YAML files or quoted globs' })
      .option('grid', { type: 'string', describe: 'Grid file (YAML): thresholdRatio, retainRatio, pruner, contextWindow, seeds, summarizer, objective, profile, ownPolicy' })
      .option('threshold', { type: 'string', describe: 'thresholdRatio values: a comma list or from:to:step (default 0.8)' })
      .option('retain', { type: 'string', describe: 'retainRatio values: a comma list or from:to:step (default 0.16)' })
      .option('pruner', { type: 'string', describe: 'on, off or on,off (default on,off)' })
      .option('window', { type: 'string', describe: 'Context windows: a comma list (default 8000)' })
      .option('seeds', { type: 'string', describe: 'Seeds per scenario: a comma list (default each scenario\'s own)' })
      .option('objective', { type: 'string', describe: 'cost (default) or retention: the Pareto front also maximises probe retention and cache reuse' })
      .option('profile', { type: 'string', describe: 'Policy profiles to compare (issue #19): faithful, hardened, a rule alone by its config key (failureBackoff, …, capacitySanity), or all; default the scenarios\' own' })
      .option('own-policy', { type: 'boolean', default: false, describe: 'Each scenario keeps its own policy and windows; only --profile (and a grid file\'s summarizer) vary (not with --threshold/--retain/--pruner/--window)' })
      .option('workers', { type: 'string', describe: 'Worker threads (default: the available cores; 1 runs inline)' })
      .coerce('workers', (value: unknown) => (value === undefined ? undefined : parseIntegerFlag('--workers', value, 1, WORKERS_MAX)))
      .option('shard', { type: 'string', describe: 'Run slice i of n of the grid (i/n); merge with sim report merge' })
      .option('out-dir', { type: 'string', describe: 'Output folder (default reports/<sweep-id>/)' })
      .option('json', { type: 'boolean', default: false, describe: 'Print exactly the sweep.json document on stdout' })
      .example('$0 sweep "scenarios/sweep/*.yaml" --grid scenarios/sweep/tune-thresholds.grid', 'The README\'s tuning sweep')
      .example('$0 sweep "scenarios/sweep/*.yaml" --threshold 0.6:0.9:0.1 --retain 0.1,0.2 --window 8000,16000', 'Inline grid') as
        Argv<SweepArgs>,
    handler: async (args) => {
      const out = ctx.out
      const cwd = process.cwd()
      const inline = [args.threshold, args.retain, args.pruner, args.window, args.seeds, args.objective, args.profile].some((v) => v !== undefined)
        || args['own-policy']
      if (args.grid !== undefined && inline) {
        throw new UsageError('--grid cannot be combined with --threshold/--retain/--pruner/--window/--seeds/--objective/--profile/--own-policy (set objective, profile and ownPolicy in the grid file)')
      }
      const grid = args.grid !== undefined ? await loadGridFile(args.grid) : gridFromFlags({
        ...(args.threshold === undefined ? {} : { threshold: args.threshold }),
        ...(args.retain === undefined ? {} : { retain: args.retain }),
        ...(args.pruner === undefined ? {} : { pruner: args.pruner }),
        ...(args.window === undefined ? {} : { window: args.window }),
        ...(args.seeds === undefined ? {} : { seeds: args.seeds }),
        ...(args.objective === undefined ? {} : { objective: args.objective }),
        ...(args.profile === undefined ? {} : { profile: args.profile }),
        ...(args['own-policy'] ? { ownPolicy: true } : {}),
      })
      const files = scenarioFiles(args.files, cwd)
      // Every scenario must load and resolve before any job runs (a bad one is exit 2 with file:line:column).
      for (const file of files) resolveScenario(await loadScenario(file), { file })
      const shard = args.shard === undefined ? undefined : parseShard(args.shard)
      const workers = args.workers ?? defaultWorkers()
      if (!Number.isSafeInteger(workers) || workers < 1 || workers > WORKERS_MAX) {
        throw new UsageError(`--workers: expected an integer 1 … ${WORKERS_MAX}, got ${workers}`)
      }
      const id = sweepIdOf(grid, files)
      const outDir = args['out-dir'] ?? join('reports', shard === undefined ? id : `${id}-shard-${shard.index}-of-${shard.count}`)
      checkOutDir(outDir, cwd)
      const slice = shard === undefined ? '' : `, shard ${shard.index}/${shard.count}`
      out.info(`sim sweep: ${plural(files.length, 'scenario')}, ${plural(workers, 'worker')}${slice}, output ${outDir}`)
      const ci = isSet(out.io.env['CI'])
      const progress = createProgress({ mode: progressMode(out.io.isTTY, ci), stderr: out.io.stderr, now: () => performance.now() })
      const controller = new AbortController()
      const onSigint = (): void => {
        if (controller.signal.aborted) return
        controller.abort()
        progress.finish()
        out.warn('interrupted: stopping the sweep and writing the partial report (marked incomplete)')
      }
      process.on('SIGINT', onSigint)
      let report: SweepReport
      try {
        report = await runSweep({
          grid, scenarios: files, outDir, cwd, workers, signal: controller.signal,
          ...(shard === undefined ? {} : { shard }),
          onCell: (cell, done, total) => progress.cell(cell, done, total),
        })
      } finally {
        process.off('SIGINT', onSigint)
        progress.finish()
      }
      await writeSweepReport(report, outDir)
      if (args.json) out.json(report)
      else out.io.stdout.write(sweepSummary(report, outDir))
      const errored = report.cells.flatMap((c) => c.runs ?? []).filter((r) => r.status === 'error')
      for (const r of errored.slice(0, 5)) out.error(`${r.file} (seed ${r.seed}): ${r.reason ?? 'error'}`)
      if (errored.length > 0) ctx.exitCode = ExitCode.Internal
      else ctx.exitCode = report.summary.violations > 0 || !report.complete ? ExitCode.Failed : ExitCode.Ok
    },
  }
}

function isSet(value: string | undefined): boolean {
  return value !== undefined && value !== '' && value !== '0' && value.toLowerCase() !== 'false'
}
