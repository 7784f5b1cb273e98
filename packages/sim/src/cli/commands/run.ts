/**
 * `sim run <files|globs...>`: runs scenarios against the reference subject and the mock provider (a thin
 * shell over `runScenarios`). Always writes `report.json`, `report.md` and `junit.xml` into the output
 * folder (default `reports/<run-id>/`), and `index.html` with `--reporter html`; stdout carries the chosen
 * reporters (pretty by default; `json` is exactly the report); stderr carries the seed, input errors and
 * one `Replay: <command>` line per failed scenario. Exit 0 when every scenario passed or was skipped, 1 when
 * one failed, 2 for an input error (bad flag, no file matched, a schema-invalid scenario named by
 * `file:line:column`), 3 for a bug of sim.
 */
import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { Argv, CommandModule } from 'yargs'
import { renderHtml, renderJunit, renderMarkdown, renderPretty, validateRunReport } from '../../report/index.ts'
import type { RunReport } from '../../report/types.ts'
import { expandGlob, isGlob } from '../../run/globs.ts'
import { displayPath, runIdOf, runScenarios } from '../../run/run-scenario.ts'
import { ExitCode, UsageError } from '../exit-codes.ts'
import type { CommandContext } from '../context.ts'
import { subjectFromFlag, subjectSpecs } from '../subject-flag.ts'
import { writeGithubReport } from '../../report/github.ts'
import { inShard, parseShard } from '../../sweep/shard.ts'

/** The formats of `sim run`: stdout formats, and `html`, which writes `index.html` into the output folder instead. */
export const REPORTERS = ['pretty', 'json', 'markdown', 'junit', 'html', 'github'] as const

/** One stdout format. */
export type Reporter = (typeof REPORTERS)[number]

/** Parsed arguments of `sim run`. */
export interface RunArgs {
  files: string[]
  seed: number | undefined
  reporter: Reporter[]
  'out-dir': string | undefined
  timings: boolean
  subject: string | string[] | undefined
  shard: string | undefined
}

/** The scenario files named by `args` (globs expanded and sorted, plain paths kept); throws `UsageError` for an unmatched glob. */
export function scenarioFiles(args: readonly string[], cwd: string): string[] {
  const files: string[] = []
  for (const arg of args) {
    if (!isGlob(arg)) {
      files.push(arg)
      continue
    }
    const matched = expandGlob(arg, cwd)
    if (matched.length === 0) throw new UsageError(`no file matches ${arg}`)
    files.push(...matched)
  }
  return [...new Set(files)]
}

/** The exit code of a finished run: 3 internal error, else 2 input error, else 1 failed, else 0. */
export function runExitCode(report: RunReport): ExitCode {
  const errors = report.scenarios.filter((s) => s.status === 'error')
  if (errors.some((s) => s.errorKind !== 'input')) return ExitCode.Internal
  if (errors.length > 0) return ExitCode.Usage
  if ((report.differential?.summary.unexplained ?? 0) > 0) return ExitCode.Failed
  return report.summary.failed > 0 ? ExitCode.Failed : ExitCode.Ok
}

/** The `run` command module. */
export function runCommand(ctx: CommandContext): CommandModule<object, RunArgs> {
  return {
    command: 'run <files..>',
    describe: 'Run scenarios against a mocked provider and check them',
    builder: (yargs: Argv) => yargs
      .positional('files', {
        type: 'string', array: true, demandOption: true, describe: 'Scenario YAML files or quoted globs (e.g. "scenarios/**/*.yaml")',
      })
      .option('seed', { type: 'string', describe: 'Seed (uint32) for every scenario instead of each file\'s own' })
      .coerce('seed', (value: unknown) => (value === undefined ? undefined : parseSeed(value)))
      .option('reporter', {
        choices: REPORTERS, array: true, default: ['pretty'] as Reporter[],
        describe: 'stdout format(s), repeatable; html writes index.html',
      })
      .option('out-dir', { type: 'string', describe: 'Where logs, manifests, captures and reports go (default reports/<run-id>/)' })
      .option('timings', { type: 'boolean', default: false, describe: 'Add wall-clock durations to the report (no longer byte-stable)' })
      .option('subject', {
        type: 'string',
        describe: 'Who runs the sessions: reference (default), dsh (the official engine 0.1.0-rc.8) or module:<path>; '
          + 'a comma list or repeated flag runs each scenario under each and adds a differential',
      })
      .option('shard', {
        type: 'string', describe: 'Run slice i of n of the scenario list (i/n, a stable hash of each path); merge with sim report merge',
      })
      .example('$0 run "scenarios/**/*.yaml"', 'Run the whole catalog (quote the glob; sim expands ** itself)')
      .example('$0 run scenarios/smoke/basic-pressure.yaml --seed 42 --reporter json', 'One scenario, one seed, the report on stdout') as
        Argv<RunArgs>,
    handler: async (args) => {
      const out = ctx.out
      const cwd = process.cwd()
      const allFiles = scenarioFiles(args.files, cwd)
      const seed = args.seed
      // --shard i/n (issue #10): a stable slice of the list; the report records the whole list for `sim report merge`.
      const shard = args.shard === undefined ? undefined : parseShard(args.shard)
      const files = shard === undefined ? allFiles : inShard(allFiles, (f) => f, shard)
      const runId = runIdOf(allFiles, seed ?? null)
      const outDir = args['out-dir'] ?? join('reports', shard === undefined ? runId : `${runId}-shard-${shard.index}-of-${shard.count}`)
      out.info(`sim run: ${files.length} scenario(s), seed ${seed ?? 'of each scenario'}, output ${outDir}`)
      const specs = subjectSpecs(args.subject)
      const subjects = []
      for (const spec of specs) subjects.push(await subjectFromFlag(spec, cwd))
      const subject = subjects.length === 1 ? subjects[0] : undefined
      const report = await runScenarios(files, {
        outDir, cwd, ...(seed === undefined ? {} : { seed }), timings: args.timings, ...(subject === undefined ? {} : { subject }),
        ...(subjects.length > 1 ? { subjects } : {}),
      })
      if (shard !== undefined) report.shard = { index: shard.index, count: shard.count, files: allFiles.map((f) => displayPath(f, cwd)) }
      const specOf = new Map(subjects.map((s, i) => [s.name, specs[i]]))
      for (const s of report.scenarios) {
        const spec = specOf.get(s.subject)
        if (spec !== undefined && spec !== 'reference') s.replay += ` --subject ${spec}`
      }
      const problems = validateRunReport(report)
      if (problems.length > 0) throw new Error(`the run report does not match its schema: ${problems.slice(0, 3).join('; ')}`)
      await mkdir(outDir, { recursive: true })
      await writeFile(join(outDir, 'report.json'), `${JSON.stringify(report, null, 2)}\n`)
      await writeFile(join(outDir, 'report.md'), renderMarkdown(report))
      await writeFile(join(outDir, 'junit.xml'), renderJunit(report))
      const ci = !out.io.isTTY || isSet(out.io.env['CI'])
      for (const reporter of new Set(args.reporter)) {
        switch (reporter) {
          case 'pretty': out.io.stdout.write(renderPretty(report, { color: out.color.level > 0, ci })); break
          case 'json': out.json(report); break
          case 'markdown': out.io.stdout.write(renderMarkdown(report)); break
          case 'junit': out.io.stdout.write(renderJunit(report)); break
          case 'html': await writeFile(join(outDir, 'index.html'), renderHtml(report)); break
          case 'github': writeGithubReport(report, { stdout: out.io.stdout, env: out.io.env }); break
          default: break
        }
      }
      for (const s of report.scenarios) {
        if (s.status === 'error' && s.error !== undefined) out.error(s.error)
        if (s.status === 'failed' || s.status === 'error') out.info(`Replay: ${s.replay}`)
      }
      out.info(`reports: ${join(outDir, 'report.json')}, report.md, junit.xml${args.reporter.includes('html') ? ', index.html' : ''}`)
      ctx.exitCode = runExitCode(report)
    },
  }
}

function parseSeed(value: unknown): number {
  const text = String(value)
  const n = Number(text)
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(n) || n > 0xffffffff) {
    throw new UsageError(`--seed: expected an unsigned 32-bit integer (0 … 4294967295), got ${JSON.stringify(text)}`)
  }
  return n
}

function isSet(value: string | undefined): boolean {
  return value !== undefined && value !== '' && value !== '0' && value.toLowerCase() !== 'false'
}
