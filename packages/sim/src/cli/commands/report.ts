/**
 * `sim report merge <dirs...>` (issue #10): merges the output folders of `sim run --shard i/n` or
 * `sim sweep --shard i/n` (see `report/merge.ts`) into one folder — `report.json`, `report.md` and `junit.xml`
 * for a run, `sweep.json`, `sweep.md` and `index.html` for a sweep, plus every shard's artifacts — equal to an
 * unsharded run's. Exit 0 ok, 1 the merged run has a failure (as `sim run`) or the sweep a violation or an
 * incomplete shard, 2 missing, foreign or inconsistent shards, 3 a bug of sim.
 */
import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { Argv, CommandModule } from 'yargs'
import { renderJunit, renderMarkdown, validateRunReport } from '../../report/index.ts'
import { copyArtifacts, mergeRunReports, mergeSweepReports, readShard, type ShardDocument } from '../../report/merge.ts'
import type { RunReport } from '../../report/types.ts'
import type { SweepReport } from '../../sweep/types.ts'
import { ExitCode, UsageError } from '../exit-codes.ts'
import { checkOutDir } from '../out-dir.ts'
import type { CommandContext } from '../context.ts'
import { runExitCode } from './run.ts'
import { sweepSummary, writeSweepReport } from './sweep.ts'
import { plural } from '../../plural.ts'

/** Parsed arguments of `sim report merge`. */
export interface ReportMergeArgs {
  dirs: string[]
  'out-dir': string | undefined
  json: boolean
}

/** The `report` command module (one subcommand, `merge`). */
export function reportCommand(ctx: CommandContext): CommandModule<object, object> {
  return {
    command: 'report <command>',
    describe: 'Work with report folders (merge shards)',
    builder: (yargs: Argv) => yargs.command(mergeCommand(ctx)).demandCommand(1, 'report: a subcommand is required (merge)'),
    handler: () => undefined,
  }
}

function mergeCommand(ctx: CommandContext): CommandModule<object, ReportMergeArgs> {
  return {
    command: 'merge <dirs..>',
    describe: 'Merge shard folders of sim run/sweep --shard i/n into one report',
    builder: (yargs: Argv) => yargs
      .positional('dirs', { type: 'string', array: true, demandOption: true, describe: 'Shard output folders (all n of one split)' })
      .option('out-dir', { type: 'string', describe: 'Output folder (default reports/<run-id or sweep-id>/)' })
      .option('json', { type: 'boolean', default: false, describe: 'Print exactly the merged document on stdout' })
      .example('$0 report merge reports/s1 reports/s2 reports/s3 --out-dir reports/all', 'Join three shards') as Argv<ReportMergeArgs>,
    handler: async (args) => {
      const docs: ShardDocument[] = []
      for (const dir of args.dirs) docs.push(await readShard(dir))
      const runs = docs.flatMap((d) => (d.kind === 'run' ? [{ dir: d.dir, report: d.report }] : []))
      const sweeps = docs.flatMap((d) => (d.kind === 'sweep' ? [{ dir: d.dir, report: d.report }] : []))
      if (runs.length > 0 && sweeps.length > 0) throw new UsageError('report merge: the folders mix sim run and sim sweep outputs')
      if (sweeps.length > 0) {
        const merged: SweepReport = mergeSweepReports(sweeps)
        const outDir = args['out-dir'] ?? join('reports', merged.sweepId)
        checkOutDir(outDir, process.cwd())
        await mkdir(outDir, { recursive: true })
        await copyArtifacts(args.dirs, outDir)
        await writeSweepReport(merged, outDir)
        if (args.json) ctx.out.json(merged)
        else ctx.out.io.stdout.write(sweepSummary(merged, outDir))
        ctx.exitCode = merged.summary.violations > 0 || !merged.complete ? ExitCode.Failed : ExitCode.Ok
        return
      }
      const merged: RunReport = mergeRunReports(runs)
      const problems = validateRunReport(merged)
      if (problems.length > 0) throw new Error(`the merged run report does not match its schema: ${problems.slice(0, 3).join('; ')}`)
      const outDir = args['out-dir'] ?? join('reports', merged.runId)
      checkOutDir(outDir, process.cwd())
      await mkdir(outDir, { recursive: true })
      await copyArtifacts(args.dirs, outDir)
      await writeFile(join(outDir, 'report.json'), `${JSON.stringify(merged, null, 2)}\n`)
      await writeFile(join(outDir, 'report.md'), renderMarkdown(merged))
      await writeFile(join(outDir, 'junit.xml'), renderJunit(merged))
      if (args.json) ctx.out.json(merged)
      else {
        const s = merged.summary
        ctx.out.io.stdout.write(`merged ${plural(runs.length, 'shard')} of ${merged.runId}: ${plural(s.total, 'scenario')}: ${s.passed} passed, `
          + `${s.failed} failed, ${s.skipped} skipped, ${s.error} error\nreports: ${join(outDir, 'report.json')}, report.md, junit.xml\n`)
      }
      ctx.exitCode = runExitCode(merged)
    },
  }
}
