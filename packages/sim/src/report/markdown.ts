/**
 * `report.md`: a GitHub-flavoured Markdown view of a `RunReport` (also fit for `$GITHUB_STEP_SUMMARY`),
 * a pure function of it. A summary table with one row per scenario, then a details section per failed or
 * errored scenario: its error, every expectation (expected vs actual), its violations and its replay
 * command. Every untrusted string is escaped for where it lands: table cells (`|`, line breaks, HTML),
 * code spans (backtick runs) and fenced blocks (fence longer than any backtick run inside).
 */
import { assertNever } from '@compaction-sim/core'
import { escapeCodeUnits, formatPressure, isControl, isProblem, runSeed, seconds, summaryText } from './text.ts'
import type { RunReport, ScenarioReport, ScenarioStatus } from './types.ts'

/** Control characters other than tab and line breaks, shown as `\uXXXX` so they cannot hide or corrupt text. */
const visibleControls = (text: string): string =>
  escapeCodeUnits(text, (code) => isControl(code) && code !== 0x09 && code !== 0x0a && code !== 0x0d)

/**
 * Text for a Markdown table cell: HTML-significant characters become entities, `|` is escaped, line
 * breaks become `<br>`, and other control characters become visible escapes. The result is one line.
 */
export function markdownCell(text: string): string {
  return visibleControls(text)
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/\\/g, '\\\\')
    .replace(/\|/g, '\\|')
    .replace(/\r\n|\r|\n/g, '<br>')
    .replace(/[*_`[\]]/g, '\\$&')
}

/**
 * An inline code span holding `text` verbatim (on one line): the delimiter is one backtick longer than
 * the longest run inside, line breaks become spaces, and in a table cell (`inTable`) `|` becomes `\|`
 * (GFM removes that backslash before parsing the cell, even inside code spans).
 */
export function markdownCode(text: string, inTable = true): string {
  const oneLine = visibleControls(text).replace(/\r\n|\r|\n/g, ' ')
  const flat = inTable ? oneLine.replace(/\|/g, '\\|') : oneLine
  const longestRun = Math.max(0, ...(flat.match(/`+/g) ?? []).map((run) => run.length))
  const fence = '`'.repeat(longestRun + 1)
  const pad = flat.startsWith('`') || flat.endsWith('`') || flat === '' ? ' ' : ''
  return `${fence}${pad}${flat}${pad}${fence}`
}

/** A fenced code block holding `text` verbatim; the fence is longer than any backtick run inside. */
export function markdownFence(text: string, language = ''): string {
  const body = visibleControls(text).replace(/\r\n|\r/g, '\n')
  const longestRun = Math.max(0, ...(body.match(/`+/g) ?? []).map((run) => run.length))
  const fence = '`'.repeat(Math.max(3, longestRun + 1))
  return `${fence}${language}\n${body}\n${fence}`
}

/** The report as Markdown, ending in a newline. Deterministic: equal reports give equal bytes. */
export function renderMarkdown(report: RunReport): string {
  const timed = report.scenarios.some((s) => s.timings !== undefined)
  const out: string[] = [
    `# compaction-sim run ${markdownCode(report.runId, false)}`,
    '',
    `${markdownCell(report.tool.name)} ${markdownCell(report.tool.version)} · seed ${runSeed(report)} · **${summaryText(report)}**` +
      (report.timings === undefined ? '' : ` · ${seconds(report.timings.ms)} s`),
    '',
    ...summaryTable(report.scenarios, timed),
  ]
  const problems = report.scenarios.filter((s) => isProblem(s.status))
  if (problems.length > 0) {
    out.push('', '## Failures')
    for (const scenario of problems) out.push('', ...detailsOf(scenario))
  }
  return `${out.join('\n')}\n`
}

function statusCell(status: ScenarioStatus): string {
  switch (status) {
    case 'passed': return '✅ passed'
    case 'failed': return '❌ **failed**'
    case 'skipped': return '⏭️ skipped'
    case 'error': return '💥 **error**'
    default: return assertNever(status, 'scenario status')
  }
}

function summaryTable(scenarios: readonly ScenarioReport[], timed: boolean): string[] {
  const headers = ['Status', 'Scenario', 'Subject', 'Seed', 'Brackets', 'Prunes', 'Offloads', 'Retries', 'Final pressure', 'Violations']
  const align = ['---', '---', '---', '---:', '---:', '---:', '---:', '---:', '---:', '---:']
  if (timed) {
    headers.push('Time (s)')
    align.push('---:')
  }
  const rows = scenarios.map((s) => {
    const counts = s.counts
    const cells = [
      statusCell(s.status),
      `${markdownCode(s.file)} ${markdownCell(s.name)}`,
      markdownCell(s.subject),
      String(s.seed),
      counts === undefined ? '–' : String(counts.brackets),
      counts === undefined ? '–' : String(counts.prunes),
      counts === undefined ? '–' : String(counts.offloads),
      counts === undefined ? '–' : String(counts.retries),
      s.finalPressure === undefined ? '–' : markdownCell(formatPressure(s.finalPressure)),
      String(s.violations.length),
    ]
    if (timed) cells.push(s.timings === undefined ? '–' : seconds(s.timings.ms))
    return cells
  })
  return [headers, align, ...rows].map((cells) => `| ${cells.join(' | ')} |`)
}

function detailsOf(scenario: ScenarioReport): string[] {
  const out = [`### ${statusCell(scenario.status)}: ${markdownCode(scenario.file, false)} ${markdownCell(scenario.name)}`, '']
  out.push(`Subject ${markdownCode(scenario.subject, false)} · seed ${scenario.seed} · dialect ${markdownCode(scenario.dialect, false)}`)
  if (scenario.status === 'error') {
    const kind = scenario.errorKind === undefined ? '' : ` (${scenario.errorKind})`
    out.push('', `**Error**${kind}`, '', markdownFence(scenario.error ?? 'the scenario could not run'))
  }
  if (scenario.expectations.length > 0) {
    const failed = scenario.expectations.filter((e) => !e.passed).length
    out.push('', `**Expectations** (${failed} of ${scenario.expectations.length} failed)`, '')
    out.push('| Result | Expectation | Expected | Actual |', '| --- | --- | --- | --- |')
    for (const e of scenario.expectations) {
      out.push(`| ${e.passed ? '✅' : '❌'} | ${markdownCode(e.name)} | ${markdownCell(e.expected)} | ${markdownCell(e.actual)} |`)
    }
  }
  if (scenario.violations.length > 0) {
    out.push('', `**Violations** (${scenario.violations.length})`, '', '| Invariant | Seq | Message |', '| --- | ---: | --- |')
    for (const v of scenario.violations) out.push(`| ${v.id} | ${v.seq} | ${markdownCell(v.message)} |`)
  }
  out.push('', '**Replay**', '', markdownFence(scenario.replay, 'sh'))
  return out
}
