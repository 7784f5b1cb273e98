/**
 * What `sim run --seeds` prints (issue #21). One line per scenario, in file order, once all its seeds are done:
 * its status over the seeds (error if one errored, else FAIL if one failed, else PASS if one passed, else SKIP),
 * the counts per status, the failing seeds with their first problem, and how many seeds left its seed-specific
 * expectations not evaluated. Then a summary line over every (scenario, seed) run, and on stderr every failed or
 * errored run again with its `Replay:` line (`pnpm sim run <file> --seed <k>`). On a terminal the scenario lines
 * get an `[n/N elapsed]` prefix (wall clock, display only: it never reaches a report); without `pretty` the
 * scenario lines go to stderr on a terminal and nowhere under CI, and the summary line goes to stderr.
 */
import { Chalk, type ChalkInstance } from 'chalk'
import type { RunReport, ScenarioReport, ScenarioStatus } from '../report/types.ts'
import { renderPrettyHeader, renderPrettyScenario } from '../report/pretty.ts'
import { headline, isProblem, notEvaluatedExpectations, oneLine, seedsText, truncate } from '../report/text.ts'
import { plural } from '../plural.ts'
import type { CliOutput } from './output.ts'

/** How one `sim run --seeds` streams. */
export interface SeedsStreamOptions {
  out: CliOutput
  pretty: boolean
  ci: boolean
  now: () => number
}

/** The moments of a `--seeds` run the stream writes at. */
export interface SeedsStream {
  start(run: Pick<RunReport, 'tool' | 'runId' | 'seed' | 'seeds'>): void
  /** A file's entries, one per seed in seed order (`done` files of `total`). */
  file(rows: readonly ScenarioReport[], done: number, total: number): void
  /** The summary, `notes`, then every failed or errored run with its `Replay:` line. */
  finish(report: RunReport, notes: readonly string[]): void
}

/** Longest "why" text on a scenario line, in characters (report.json and report.md hold everything). */
const WHY_CHARS_MAX = 240

/** The status a scenario line shows for its runs. */
export function seedsStatus(rows: readonly ScenarioReport[]): ScenarioStatus {
  if (rows.some((r) => r.status === 'error')) return 'error'
  if (rows.some((r) => r.status === 'failed')) return 'failed'
  return rows.some((r) => r.status === 'passed') ? 'passed' : 'skipped'
}

/** One scenario's line over its seeds (no newline). */
export function seedsScenarioLine(rows: readonly ScenarioReport[], chalk: ChalkInstance): string {
  const first = rows[0]
  if (first === undefined) return ''
  const status = seedsStatus(rows)
  const label = { passed: chalk.green('PASS '), failed: chalk.red.bold('FAIL '), skipped: chalk.yellow('SKIP '), error: chalk.magenta.bold('ERROR') }[status]
  const by = (s: ScenarioStatus): ScenarioReport[] => rows.filter((r) => r.status === s)
  const tally = (['passed', 'failed', 'skipped', 'error'] as const).filter((s) => by(s).length > 0).map((s) => `${by(s).length} ${s}`)
  const parts = [
    label, oneLine(first.file), chalk.bold(oneLine(first.name)),
    chalk.dim(`[${oneLine(first.subject)} seeds=${seedsText(rows.map((r) => r.seed))}]`), tally.join(', '),
  ]
  const pinned = rows.filter((r) => notEvaluatedExpectations(r).length > 0).length
  if (pinned > 0) parts.push(chalk.dim(`seed-specific: not evaluated under ${plural(pinned, 'seed')}`))
  const problems = rows.filter((r) => isProblem(r.status))
  if (problems.length > 0) {
    const why = problems.map((r) => `seed ${r.seed}: ${oneLine(headline(r))}`).join('; ')
    parts.push(`— ${chalk.red(truncate(why, WHY_CHARS_MAX))}`)
  } else if (status === 'skipped') parts.push(`— ${chalk.yellow(truncate(oneLine(headline(first)), WHY_CHARS_MAX))}`)
  return parts.join(' ')
}

/** `Summary: 40 runs (2 scenarios × 20 seeds): 39 passed, 1 failed, 0 skipped, 0 error`, plus the seed-specific count (no newline). */
export function seedsSummaryLine(report: RunReport, chalk: ChalkInstance): string {
  const { total, passed, failed, skipped, error } = report.summary
  const seeds = report.seeds?.length ?? 1
  const scenarios = seeds === 0 ? 0 : total / seeds
  const pinned = report.scenarios.filter((r) => notEvaluatedExpectations(r).length > 0).length
  const text = `Summary: ${plural(total, 'run')} (${plural(scenarios, 'scenario')} × ${plural(seeds, 'seed')}): `
    + `${passed} passed, ${failed} failed, ${skipped} skipped, ${error} error`
    + (pinned > 0 ? `; seed-specific expectations not evaluated in ${plural(pinned, 'run')}` : '')
  return failed + error > 0 ? chalk.red.bold(text) : chalk.green.bold(text)
}

/** A stream writing to `options.out` as described in the module doc. */
export function createSeedsStream(options: SeedsStreamOptions): SeedsStream {
  const { out, pretty, ci } = options
  const started = options.now()
  const chalk = new Chalk({ level: out.color.level > 0 ? 1 : 0 })
  const elapsed = (): string => `${((options.now() - started) / 1000).toFixed(1)}s`
  const counter = (done: number, total: number): string => out.color.dim(`[${String(done).padStart(String(total).length)}/${total} ${elapsed()}]`)
  return {
    start(run) {
      if (pretty) out.io.stdout.write(renderPrettyHeader(run, { color: chalk.level > 0, ci }))
    },
    file(rows, done, total) {
      const line = seedsScenarioLine(rows, chalk)
      if (pretty && ci) out.io.stdout.write(`${line}\n`)
      else if (pretty) out.io.stdout.write(`${counter(done, total)} ${line}\n`)
      else if (!ci) out.io.stderr.write(`${counter(done, total)} ${line}\n`)
    },
    finish(report, notes) {
      const summary = seedsSummaryLine(report, chalk)
      if (pretty) {
        out.io.stdout.write(`${ci ? '' : '\n'}${summary}\n`)
        if (!ci) out.io.stdout.write(`${out.color.dim(`Finished in ${elapsed()}`)}\n`)
      } else out.info(summary)
      for (const note of notes) out.info(note)
      const problems = report.scenarios.filter((s) => isProblem(s.status))
      if (problems.length === 0) return
      out.info(out.color.red.bold(`${plural(problems.length, 'failure')}:`))
      for (const s of problems) {
        out.io.stderr.write(renderPrettyScenario(s, { color: chalk.level > 0, ci: true }))
        if (s.status === 'error' && s.error !== undefined) out.error(s.error)
        out.info(`Replay: ${s.replay}`)
      }
    },
  }
}
