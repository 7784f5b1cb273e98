/**
 * Text helpers shared by the report renderers: the one-line "why" of a scenario, pressure and count
 * formatting, and making untrusted strings (scenario names, checker messages, error text) safe to print
 * on one line. Pure and deterministic: no locale, no clock.
 */
import { assertNever } from '@compaction-sim/core'
import type {
  ExpectationResult, FinalPressure, ReportedViolation, RunReport, ScenarioDrift, ScenarioReport, ScenarioRetention, ScenarioStatus,
} from './types.ts'

/** `\u001b`-style visible text for one UTF-16 code unit (lower-case hex, 4 digits). */
export function visibleEscape(char: string): string {
  return `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`
}

/** Whether a UTF-16 code unit is a C0 control, DEL or in the C1 block. */
export function isControl(code: number): boolean {
  return code < 0x20 || (code >= 0x7f && code <= 0x9f)
}

/**
 * `text` with every code unit for which `isForbidden(code, index)` holds replaced by its visible escape.
 * Works on code units (not code points) so callers can reject lone surrogates.
 */
export function escapeCodeUnits(text: string, isForbidden: (code: number, index: number) => boolean): string {
  let out = ''
  let from = 0
  for (let index = 0; index < text.length; index += 1) {
    if (!isForbidden(text.charCodeAt(index), index)) continue
    out += text.slice(from, index) + visibleEscape(text.charAt(index))
    from = index + 1
  }
  return from === 0 ? text : out + text.slice(from)
}

/**
 * One line of plain text: runs of whitespace that include a line break become one space, other control
 * characters (ESC included, so no ANSI sequence survives) become visible `\uXXXX` escapes, and the ends
 * are trimmed.
 */
export function oneLine(text: string): string {
  const flat = text.replace(/\s*[\r\n\u0085\u2028\u2029]+\s*/g, ' ').replace(/\t/g, ' ')
  return escapeCodeUnits(flat, isControl).trim()
}

/** `text` cut to at most `charsMax` characters (an ellipsis marks the cut). */
export function truncate(text: string, charsMax: number): string {
  const chars = [...text]
  return chars.length <= charsMax ? text : `${chars.slice(0, Math.max(0, charsMax - 1)).join('')}…`
}

/** `counts.brackets: expected 1, got 0` */
export function describeExpectation(expectation: ExpectationResult): string {
  return `${expectation.name}: expected ${expectation.expected}, got ${expectation.actual}`
}

/** `INV-12 @seq 40: message` */
export function describeViolation(violation: ReportedViolation): string {
  return `${violation.id} @seq ${violation.seq}: ${violation.message}`
}

/** The expectations of a scenario that were not judged (`notEvaluated`, e.g. seed-specific under another seed), in report order. */
export function notEvaluatedExpectations(scenario: ScenarioReport): ExpectationResult[] {
  return scenario.expectations.filter((e) => e.notEvaluated !== undefined)
}

/**
 * `not evaluated (seed-specific): 3 expectations` (or `(dialect)`, or both joined by `; `), or '' when every
 * expectation of the scenario was judged.
 */
export function notEvaluatedText(scenario: ScenarioReport): string {
  const parts: string[] = []
  for (const kind of ['seed-specific', 'dialect'] as const) {
    const n = notEvaluatedExpectations(scenario).filter((e) => e.notEvaluated === kind).length
    if (n > 0) parts.push(`not evaluated (${kind}): ${n} ${n === 1 ? 'expectation' : 'expectations'}`)
  }
  return parts.join('; ')
}

/** The failed expectations of a scenario, in report order. */
export function failedExpectations(scenario: ScenarioReport): ExpectationResult[] {
  return scenario.expectations.filter((e) => !e.passed)
}

/**
 * Every problem of a scenario as one-line-able text, most specific first: the error (status `error`),
 * then failed expectations, then violations. A skipped scenario's reason is not a problem.
 */
export function problemsOf(scenario: ScenarioReport): string[] {
  const problems: string[] = []
  if (scenario.status === 'error') problems.push(scenario.error ?? 'the scenario could not run')
  for (const expectation of failedExpectations(scenario)) problems.push(describeExpectation(expectation))
  for (const violation of scenario.violations) problems.push(describeViolation(violation))
  if (problems.length === 0 && scenario.status === 'failed') problems.push('failed')
  return problems
}

/** The short "why" shown next to a scenario: its first problem (or skip reason), `(+n more)` when there are more; '' when passed. */
export function headline(scenario: ScenarioReport): string {
  if (scenario.status === 'skipped') return scenario.skipReason ?? 'skipped'
  const problems = problemsOf(scenario)
  const first = problems[0]
  if (first === undefined) return ''
  return problems.length > 1 ? `${first} (+${problems.length - 1} more)` : first
}

/** `41.2% (4120/10000 tokens)`, or `4120 tokens` when the route reports no window. */
export function formatPressure(pressure: FinalPressure): string {
  if (pressure.ratio === null || pressure.contextWindow === null) return `${pressure.tokens} tokens`
  return `${(pressure.ratio * 100).toFixed(1)}% (${pressure.tokens}/${pressure.contextWindow} tokens)`
}

/** Milliseconds as seconds with 3 decimals (`1.234`), the unit JUnit's `time` uses. */
export function seconds(ms: number): string {
  return (ms / 1000).toFixed(3)
}

/** The run's seed for humans: the override, the `--seeds` list (`1..20`), or `per scenario`. */
export function runSeed(report: Pick<RunReport, 'seed'> & { seeds?: readonly number[] | undefined }): string {
  if (report.seeds !== undefined) return seedsText(report.seeds)
  return report.seed === null ? 'per scenario' : String(report.seed)
}

/** Seeds for humans, in the given order: runs of consecutive seeds as `a..b`, the rest comma-separated (`1..5,9`). */
export function seedsText(seeds: readonly number[]): string {
  const parts: string[] = []
  for (let i = 0; i < seeds.length;) {
    let j = i
    while (j + 1 < seeds.length && seeds[j + 1] === (seeds[j] ?? 0) + 1) j++
    parts.push(j - i >= 2 ? `${seeds[i]}..${seeds[j]}` : seeds.slice(i, j + 1).join(','))
    i = j + 1
  }
  return parts.join(',')
}

/** Whether the scenario needs attention (its replay command is shown). */
export function isProblem(status: ScenarioStatus): boolean {
  switch (status) {
    case 'failed': case 'error': return true
    case 'passed': case 'skipped': return false
    default: return assertNever(status, 'scenario status')
  }
}

/** `4 scenarios: 1 passed, 1 failed, 1 skipped, 1 error` (`4 runs: …` for a `--seeds` report) */
export function summaryText(report: RunReport): string {
  const { total, passed, failed, skipped, error } = report.summary
  // A `--seeds` report holds one entry per scenario and seed: its entries are runs.
  const [one, many] = report.seeds === undefined ? ['scenario', 'scenarios'] : ['run', 'runs']
  return `${total} ${total === 1 ? one : many}: ${passed} passed, ${failed} failed, ${skipped} skipped, ${error} error`
}

/** `+12.34%` / `-0.50%`: a signed percentage for humans. */
export function formatDriftPct(pct: number): string {
  return `${pct >= 0 ? '+' : ''}${pct.toFixed(2)}%`
}

/** One line for text and markdown reports: `meter vs provider drift: max +12.34% (request 7), mean +8.10%, min -0.50% over 9 requests`. */
export function driftLine(drift: ScenarioDrift): string {
  return `meter vs provider drift: max ${formatDriftPct(drift.maxPct)} (request ${drift.maxRequest}), mean ${formatDriftPct(drift.meanPct)}, `
    + `min ${formatDriftPct(drift.minPct)} over ${drift.requests} conversation request${drift.requests === 1 ? '' : 's'}`
}

/** A share as a whole percentage (`67%`), or `–` for null. */
export function formatShare(share: number | null): string {
  return share === null ? '–' : `${Math.round(share * 100)}%`
}

/**
 * One line for text and markdown reports (issue #20): `retention over 11 cycles, final (kept by summaries):
 * recall 67% (50%), artifact 45% (0%), … · 18 of 49 probes lost for good`.
 */
export function retentionLine(retention: ScenarioRetention): string {
  const last = retention.points.at(-1)
  const kinds = retention.kinds.filter((k) => k.probes > 0)
    .map((k) => `${k.kind} ${formatShare(k.final)} (${formatShare(last === undefined ? null : last[k.kind].keptShare)})`)
  const unplanted = retention.unplanted.length === 0 ? '' : ` · ${retention.unplanted.length} never stated in the log`
  return `retention over ${retention.cycles} cycle${retention.cycles === 1 ? '' : 's'}, final (kept by summaries): ${kinds.join(', ')}`
    + ` · ${retention.lost.length} of ${retention.probes} probes lost for good${unplanted}`
}
