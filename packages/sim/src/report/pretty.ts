/**
 * Human output of a run for stdout (design §5), a pure function of the `RunReport`. Two layouts:
 * - `ci` (also what the caller picks when stdout is not a TTY): a header with the seed, then exactly one
 *   line per scenario (status, file, name, subject and seed, key counts, first problem) and one summary
 *   line — greppable, no indentation;
 * - terminal: the same scenario lines, each failed/errored one followed by its failed expectations and
 *   violations (indented), then a blank line and the summary.
 * No `Replay:` lines: the commands (`sim run`, `sim conform`) print exactly one per failure on stderr, so a
 * terminal showing both streams shows it once; every other renderer (markdown, junit, github, html) has its own.
 * Untrusted text is flattened to one line with control characters made visible, so colour off means no
 * escape sequence at all.
 */
import { Chalk, type ChalkInstance } from 'chalk'
import { assertNever } from '@compaction-sim/core'
import {
  describeExpectation, describeViolation, failedExpectations, formatDriftPct, formatPressure, formatShare, headline, isProblem, notEvaluatedText, oneLine, runSeed, summaryText, truncate,
} from './text.ts'
import type { RunReport, ScenarioReport, ScenarioStatus } from './types.ts'

/** How `renderPretty` lays out and colours its output; the caller decides both (see `resolveColorLevel`). */
export interface PrettyOptions {
  /** ANSI colours (chalk level 1) or none (level 0). */
  color: boolean
  /** One line per scenario (CI, or stdout is not a TTY). */
  ci: boolean
}

/** Longest "why" text on a CI scenario line, in characters (the full text is in report.json and report.md). */
export const PRETTY_HEADLINE_CHARS_MAX = 240

/**
 * The run as text for stdout, ending in a newline. Deterministic: equal reports and options give equal bytes.
 * Equal to `renderPrettyHeader` + each scenario's `renderPrettyScenario` + `renderPrettyFooter`, the pieces
 * `sim run` writes as the run goes.
 */
export function renderPretty(report: RunReport, options: PrettyOptions): string {
  return renderPrettyHeader(report, options) + report.scenarios.map((s) => renderPrettyScenario(s, options)).join('')
    + renderPrettyFooter(report, options)
}

/** The first line (tool, run id, seed) with its newline; it needs only what is known before the run starts. */
export function renderPrettyHeader(run: Pick<RunReport, 'tool' | 'runId' | 'seed' | 'seeds'>, options: PrettyOptions): string {
  return `${header(run, chalkOf(options))}\n`
}

/** One scenario's line (and, in a terminal, the details of a failure), each line ending in a newline. */
export function renderPrettyScenario(scenario: ScenarioReport, options: PrettyOptions): string {
  const chalk = chalkOf(options)
  const lines = [scenarioLine(scenario, chalk, options.ci)]
  if (!options.ci && isProblem(scenario.status)) lines.push(...details(scenario, chalk))
  return `${lines.join('\n')}\n`
}

/** The lines after the scenarios: a blank line (terminal only), the summary and the differential line. */
export function renderPrettyFooter(report: RunReport, options: PrettyOptions): string {
  const chalk = chalkOf(options)
  const lines: string[] = options.ci ? [] : ['']
  lines.push(renderSummaryLine(report, options))
  if (report.differential !== undefined) lines.push(differentialLine(report.differential, chalk))
  return `${lines.join('\n')}\n`
}

/** `Summary: 3 scenarios: …`, green when nothing failed, else red (no newline). */
export function renderSummaryLine(report: RunReport, options: Pick<PrettyOptions, 'color'>): string {
  return summaryLine(report, chalkOf(options))
}

function chalkOf(options: Pick<PrettyOptions, 'color'>): ChalkInstance {
  return new Chalk({ level: options.color ? 1 : 0 })
}

/** One line summing up the subject-vs-subject differential (issue #7); red when a difference is unexplained. */
function differentialLine(d: NonNullable<RunReport['differential']>, chalk: ChalkInstance): string {
  const s = d.summary
  const text = `Differential (${d.subjects.map(oneLine).join(' vs ')}): ${s.compared} compared, ${s.skipped} skipped, `
    + `${s.identical} identical, ${s.explained} explained (§14), ${s.unexplained} unexplained`
  return s.unexplained > 0 ? chalk.red.bold(text) : chalk.green.bold(text)
}

function header(report: Pick<RunReport, 'tool' | 'runId' | 'seed' | 'seeds'>, chalk: ChalkInstance): string {
  return chalk.dim(`${report.tool.name} ${oneLine(report.tool.version)} · run ${oneLine(report.runId)} · seed ${runSeed(report)}`)
}

function statusLabel(status: ScenarioStatus, chalk: ChalkInstance): string {
  switch (status) {
    case 'passed': return chalk.green('PASS ')
    case 'failed': return chalk.red.bold('FAIL ')
    case 'skipped': return chalk.yellow('SKIP ')
    case 'error': return chalk.magenta.bold('ERROR')
    default: return assertNever(status, 'scenario status')
  }
}

function scenarioLine(scenario: ScenarioReport, chalk: ChalkInstance, ci: boolean): string {
  const parts = [
    statusLabel(scenario.status, chalk),
    oneLine(scenario.file),
    chalk.bold(oneLine(scenario.name)),
    chalk.dim(`[${oneLine(scenario.subject)} seed=${scenario.seed}]`),
  ]
  const counts = scenario.counts
  if (counts !== undefined) {
    parts.push(chalk.dim(`brackets=${counts.brackets} prunes=${counts.prunes} offloads=${counts.offloads} retries=${counts.retries}`))
  }
  if (scenario.sessions !== undefined) {
    // Issue #16: each session's verdict and brackets (`a:passed/1 b:passed/1`).
    const each = scenario.sessions.map((s) => `${oneLine(s.name)}:${s.status}/${s.counts?.brackets ?? '–'}`).join(' ')
    parts.push(chalk.dim(`sessions=${scenario.sessions.length} (session:status/brackets ${each})`))
  }
  if (scenario.finalPressure !== undefined) parts.push(chalk.dim(`pressure=${formatPressure(scenario.finalPressure)}`))
  if (scenario.drift !== undefined) {
    parts.push(chalk.dim(`drift=max ${formatDriftPct(scenario.drift.maxPct)} mean ${formatDriftPct(scenario.drift.meanPct)}`))
  }
  if (scenario.retention !== undefined) {
    const kinds = scenario.retention.kinds.filter((k) => k.probes > 0).map((k) => `${k.kind}:${formatShare(k.final)}`).join(',')
    parts.push(chalk.dim(`retention=${kinds} over ${scenario.retention.cycles} cycles`))
  }
  if (scenario.violations.length > 0) parts.push(chalk.red(`violations=${scenario.violations.length}`))
  const pinned = notEvaluatedText(scenario)
  if (pinned !== '') parts.push(chalk.dim(pinned))
  const why = oneLine(headline(scenario))
  // In a terminal the details follow on their own lines; a skip reason has no other place to go.
  if (why !== '' && (ci || scenario.status === 'skipped')) {
    const text = truncate(why, PRETTY_HEADLINE_CHARS_MAX)
    parts.push(`— ${scenario.status === 'skipped' ? chalk.yellow(text) : chalk.red(text)}`)
  }
  return parts.join(' ')
}

function details(scenario: ScenarioReport, chalk: ChalkInstance): string[] {
  const lines: string[] = []
  if (scenario.status === 'error') {
    const label = scenario.errorKind === undefined ? 'error' : `${scenario.errorKind} error`
    lines.push(`  ${chalk.magenta(label)} ${oneLine(scenario.error ?? 'the scenario could not run')}`)
  }
  for (const expectation of failedExpectations(scenario)) lines.push(`  ${chalk.red('✗')} ${oneLine(describeExpectation(expectation))}`)
  for (const violation of scenario.violations) lines.push(`  ${chalk.red('✗')} ${oneLine(describeViolation(violation))}`)
  return lines
}

function summaryLine(report: RunReport, chalk: ChalkInstance): string {
  const { failed, error } = report.summary
  const text = `Summary: ${summaryText(report)}`
  return failed + error > 0 ? chalk.red.bold(text) : chalk.green.bold(text)
}
