/**
 * `sim conform --subject <reference|module:path> [--level must|should|may]`: runs the versioned conformance
 * pack (`packages/sim/conformance/pack.json`) against one subject and judges it at the level (a thin shell
 * over `runConformance`). Writes `report.json`, `report.md` and `junit.xml` into the output folder (default
 * `reports/conform-<level>-<subject>/`); stdout carries the reporters (`pretty` by default, `github` for
 * workflow annotations and the job summary); stderr the verdict and one `Replay:` line per failed scenario.
 * Exit 0 the subject conforms at the level (skipped scenarios allowed), 1 a scenario failed, 2 an input
 * error (bad flag, a subject module that is missing or not a `Subject`), 3 a bug of sim.
 */
import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { Argv, CommandModule } from 'yargs'
import { CONFORMANCE_LEVELS, type ConformanceLevel } from '../../conformance/pack.ts'
import { runConformance } from '../../conformance/run.ts'
import { writeGithubReport } from '../../report/github.ts'
import { renderJunit, renderMarkdown, renderPretty, validateRunReport } from '../../report/index.ts'
import type { CommandContext } from '../context.ts'
import { subjectFromFlag } from '../subject-flag.ts'
import { checkOutDir } from '../out-dir.ts'
import { runExitCode } from './run.ts'
import { UsageError } from '../exit-codes.ts'

/** The stdout formats of `sim conform`. */
export const CONFORM_REPORTERS = ['pretty', 'json', 'markdown', 'junit', 'github'] as const

/** One stdout format of `sim conform`. */
export type ConformReporter = (typeof CONFORM_REPORTERS)[number]

/** Parsed arguments of `sim conform`. */
export interface ConformArgs {
  subject: string
  level: ConformanceLevel
  reporter: ConformReporter[]
  'out-dir': string | undefined
  filter: string | undefined
}

/** The `conform` command module. */
export function conformCommand(ctx: CommandContext): CommandModule<object, ConformArgs> {
  return {
    command: 'conform',
    describe: 'Run the conformance pack against a subject',
    builder: (yargs: Argv) => yargs
      .option('subject', { type: 'string', demandOption: true, describe: 'reference, or module:<path> (a module exporting a Subject)' })
      .option('level', { choices: CONFORMANCE_LEVELS, default: 'must' as ConformanceLevel, describe: 'must: invariants and world-truth checks (WORLD-01…06); should: + expectations; may: + optional features (a declared imageOffload runs its scenarios from must)' })
      .option('reporter', { choices: CONFORM_REPORTERS, array: true, default: ['pretty'] as ConformReporter[], describe: 'stdout formats, repeatable' })
      .option('out-dir', { type: 'string', describe: 'Where logs and reports go (default reports/conform-<level>-<subject>/)' })
      .option('filter', { type: 'string', describe: 'Only pack scenarios whose path contains this text' })
      .example('$0 conform --subject module:./my-subject.ts --level must', 'Prove the invariants for your adapter')
      .example('$0 conform --subject module:./my-subject.ts --reporter junit --reporter github', 'In GitHub Actions') as Argv<ConformArgs>,
    handler: async (args) => {
      const out = ctx.out
      const cwd = process.cwd()
      const subject = await subjectFromFlag(args.subject, cwd)
      const outDir = args['out-dir'] ?? join('reports', `conform-${args.level}-${subject.name.replace(/[^\w.-]/g, '_')}`)
      checkOutDir(outDir, cwd)
      out.info(`sim conform: subject ${subject.name}, level ${args.level}, output ${outDir}`)
      const result = await runConformance({
        subject, level: args.level, outDir, cwd, subjectFlag: args.subject, ...(args.filter === undefined ? {} : { filter: args.filter }),
      })
      const report = result.report
      if (args.filter !== undefined && report.scenarios.length === 0) {
        throw new UsageError(`--filter ${JSON.stringify(args.filter)} matches no scenario of pack ${result.pack.name} v${result.pack.version} `
          + `at level ${result.level} for subject ${subject.name}: nothing was judged`)
      }
      const problems = validateRunReport(report)
      if (problems.length > 0) throw new Error(`the conformance report does not match its schema: ${problems.slice(0, 3).join('; ')}`)
      await mkdir(outDir, { recursive: true })
      await writeFile(join(outDir, 'report.json'), `${JSON.stringify(report, null, 2)}\n`)
      await writeFile(join(outDir, 'report.md'), renderMarkdown(report))
      await writeFile(join(outDir, 'junit.xml'), renderJunit(report))
      const ci = !out.io.isTTY || isSet(out.io.env['CI'])
      const title = `conformance ${result.pack.name} v${result.pack.version} (${result.level}) · ${subject.name}`
      for (const reporter of new Set(args.reporter)) {
        switch (reporter) {
          case 'pretty': out.io.stdout.write(renderPretty(report, { color: out.color.level > 0, ci })); break
          case 'json': out.json(report); break
          case 'markdown': out.io.stdout.write(renderMarkdown(report)); break
          case 'junit': out.io.stdout.write(renderJunit(report)); break
          case 'github': writeGithubReport(report, { stdout: out.io.stdout, env: out.io.env }, { title }); break
          default: break
        }
      }
      for (const s of report.scenarios) {
        if (s.status === 'error' && s.error !== undefined) out.error(s.error)
        if (s.status === 'failed' || s.status === 'error') out.info(`Replay: ${s.replay}`)
      }
      const { summary } = report
      const verdict = summary.failed + summary.error === 0 ? 'conforms' : 'does NOT conform'
      out.info(`${subject.name} ${verdict} at level ${result.level} (pack v${result.pack.version}): ${summary.passed} passed, ` +
        `${summary.failed} failed, ${summary.skipped} skipped, ${summary.error} error`)
      out.info(`reports: ${join(outDir, 'report.json')}, report.md, junit.xml`)
      ctx.exitCode = runExitCode(report)
    },
  }
}

function isSet(value: string | undefined): boolean {
  return value !== undefined && value !== '' && value !== '0' && value.toLowerCase() !== 'false'
}
