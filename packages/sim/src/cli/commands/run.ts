/**
 * `sim run <files|globs...>`: runs scenarios against the reference subject and the mock provider (a thin
 * shell over `runScenarios`). Always writes `report.json`, `report.md` and `junit.xml` into the output
 * folder (default `reports/<run-id>/`); stdout carries the chosen reporters (pretty by default; `json` is
 * exactly the report); stderr carries the seed, input errors and one `Replay: <command>` line per failed
 * scenario. Exit 0 when every scenario passed or was skipped, 1 when one failed, 2 for an input error
 * (bad flag, no file matched, a schema-invalid scenario named by `file:line:column`), 3 for a bug of sim.
 */
import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { Argv, CommandModule } from 'yargs'
import { renderJunit, renderMarkdown, renderPretty, validateRunReport } from '../../report/index.ts'
import type { RunReport } from '../../report/types.ts'
import { expandGlob, isGlob } from '../../run/globs.ts'
import { runIdOf, runScenarios } from '../../run/run-scenario.ts'
import { ExitCode, UsageError } from '../exit-codes.ts'
import type { CommandContext } from '../main.ts'

/** The stdout formats of `sim run`. */
export const REPORTERS = ['pretty', 'json', 'markdown', 'junit'] as const

/** One stdout format. */
export type Reporter = (typeof REPORTERS)[number]

/** Parsed arguments of `sim run`. */
export interface RunArgs {
  files: string[]
  seed: number | undefined
  reporter: Reporter[]
  'out-dir': string | undefined
  timings: boolean
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
      .option('reporter', { choices: REPORTERS, array: true, default: ['pretty'] as Reporter[], describe: 'stdout format(s), repeatable' })
      .option('out-dir', { type: 'string', describe: 'Where logs, manifests, captures and reports go (default reports/<run-id>/)' })
      .option('timings', { type: 'boolean', default: false, describe: 'Add wall-clock durations to the report (no longer byte-stable)' })
      .example('$0 run "scenarios/**/*.yaml"', 'Run the whole catalog (quote the glob; sim expands ** itself)')
      .example('$0 run scenarios/smoke/basic-pressure.yaml --seed 42 --reporter json', 'One scenario, one seed, the report on stdout') as
        Argv<RunArgs>,
    handler: async (args) => {
      const out = ctx.out
      const cwd = process.cwd()
      const files = scenarioFiles(args.files, cwd)
      const seed = args.seed
      const outDir = args['out-dir'] ?? join('reports', runIdOf(files, seed ?? null))
      out.info(`sim run: ${files.length} scenario(s), seed ${seed ?? 'of each scenario'}, output ${outDir}`)
      const report = await runScenarios(files, { outDir, cwd, ...(seed === undefined ? {} : { seed }), timings: args.timings })
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
          default: break
        }
      }
      for (const s of report.scenarios) {
        if (s.status === 'error' && s.error !== undefined) out.error(s.error)
        if (s.status === 'failed' || s.status === 'error') out.info(`Replay: ${s.replay}`)
      }
      out.info(`reports: ${join(outDir, 'report.json')}, report.md, junit.xml`)
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
