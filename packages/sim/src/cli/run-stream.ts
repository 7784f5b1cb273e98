/**
 * What `sim run` prints while it runs, scenario by scenario (issue #17), instead of everything at the end:
 * - `pretty` under CI or off a TTY: exactly `renderPretty(report, { ci: true })`, written in pieces — the
 *   header before the first scenario, each scenario's line as it finishes, the summary at the end;
 * - `pretty` on a terminal: each line prefixed with `[n/N elapsed]`, a failure's details under it, and the
 *   summary followed by the elapsed time;
 * - without `pretty` (stdout is then data only): on a terminal the same `[n/N elapsed]` lines go to stderr as
 *   progress; under CI nothing is streamed; in both, the summary line goes to stderr at the end.
 * At the end, stderr repeats every failed or errored scenario with its `Replay:` line, so the failures are
 * the last thing on screen. Elapsed time is wall clock for display only: it never reaches a report.
 */
import type { RunReport, ScenarioReport } from '../report/types.ts'
import { isProblem } from '../report/text.ts'
import { renderPrettyFooter, renderPrettyHeader, renderPrettyScenario, renderSummaryLine } from '../report/pretty.ts'
import { plural } from '../plural.ts'
import type { CliOutput } from './output.ts'

/** How one `sim run` streams. */
export interface RunStreamOptions {
  out: CliOutput
  /** `pretty` is among the reporters (stdout then carries the human output). */
  pretty: boolean
  /** CI is set or stdout is not a TTY: one plain line per scenario, no counter, no clock. */
  ci: boolean
  /** Milliseconds from an arbitrary origin (wall clock, display only). */
  now: () => number
}

/** The three moments of a run the stream writes at. */
export interface RunStream {
  /** Before the first scenario: the header (needs only the tool, run id and seed). */
  start(run: Pick<RunReport, 'tool' | 'runId' | 'seed'>): void
  /** A scenario's report is final (`done` of `total`). */
  scenario(scenario: ScenarioReport, done: number, total: number): void
  /** The run is over: the summary, then `notes` (stderr), then the failures again with their `Replay:` lines (stderr). */
  finish(report: RunReport, notes: readonly string[]): void
}

/** A stream writing to `options.out` as described in the module doc. */
export function createRunStream(options: RunStreamOptions): RunStream {
  const { out, pretty, ci } = options
  const started = options.now()
  const style = { color: out.color.level > 0, ci }
  const elapsed = (): string => `${((options.now() - started) / 1000).toFixed(1)}s`
  const counter = (done: number, total: number): string => {
    const width = String(total).length
    return out.color.dim(`[${String(done).padStart(width)}/${total} ${elapsed()}]`)
  }
  return {
    start(run) {
      if (pretty) out.io.stdout.write(renderPrettyHeader(run, style))
    },
    scenario(scenario, done, total) {
      if (pretty && ci) out.io.stdout.write(renderPrettyScenario(scenario, style))
      else if (pretty) out.io.stdout.write(`${counter(done, total)} ${renderPrettyScenario(scenario, style)}`)
      else if (!ci) {
        const line = renderPrettyScenario(scenario, { color: style.color, ci: true })
        out.io.stderr.write(`${counter(done, total)} ${line}`)
      }
    },
    finish(report, notes) {
      if (pretty) {
        out.io.stdout.write(renderPrettyFooter(report, style))
        if (!ci) out.io.stdout.write(`${out.color.dim(`Finished in ${elapsed()}`)}\n`)
      } else out.info(renderSummaryLine(report, style))
      for (const note of notes) out.info(note)
      const problems = report.scenarios.filter((s) => isProblem(s.status))
      if (problems.length === 0) return
      out.info(out.color.red.bold(`${plural(problems.length, 'failure')}:`))
      for (const s of problems) {
        out.io.stderr.write(renderPrettyScenario(s, { color: style.color, ci: true }))
        if (s.status === 'error' && s.error !== undefined) out.error(s.error)
        out.info(`Replay: ${s.replay}`)
      }
    },
  }
}
