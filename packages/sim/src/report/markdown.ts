/**
 * `report.md`: a GitHub-flavoured Markdown view of a `RunReport` (also fit for `$GITHUB_STEP_SUMMARY`),
 * a pure function of it. A summary table with one row per scenario, then a details section per failed or
 * errored scenario: its error, every expectation (expected vs actual), its violations and its replay
 * command. Every untrusted string is escaped for where it lands: table cells (`|`, line breaks, HTML),
 * code spans (backtick runs) and fenced blocks (fence longer than any backtick run inside).
 */
import { assertNever } from '@compaction-sim/core'
import {
  driftLine, escapeCodeUnits, formatShare, retentionLine, formatPressure, isControl, isProblem, notEvaluatedExpectations, runSeed, seconds, summaryText,
} from './text.ts'
import type { RunReport, ScenarioReport, ScenarioStatus } from './types.ts'
import {
  CACHE_REQUEST_HEADER, CACHE_SUMMARY_HEADER, cacheRequestCells, cacheSummaryCells, percent, scenariosWithCache, usd,
} from '../metrics/cache-table.ts'

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
  const pinned = report.scenarios.filter((s) => notEvaluatedExpectations(s).some((e) => e.notEvaluated === 'seed-specific'))
  if (pinned.length > 0) {
    out.push('', `➖ ${pinned.length === 1 ? '1 run' : `${pinned.length} runs`} under a seed other than the scenario's own: `
      + 'its seed-specific expectations (`expect.seedSpecific`) were not evaluated; invariants were.')
  }
  const problems = report.scenarios.filter((s) => isProblem(s.status))
  if (problems.length > 0) {
    out.push('', '## Failures')
    for (const scenario of problems) out.push('', ...detailsOf(scenario))
  }
  if (report.differential !== undefined) out.push('', ...differentialSection(report.differential))
  if (report.scenarios.some((s) => s.paths !== undefined)) out.push('', ...pathsSection(report.scenarios))
  if (report.cache !== undefined) out.push('', ...cacheSection(report))
  const drifting = report.scenarios.filter((s) => s.drift !== undefined)
  if (drifting.length > 0) out.push('', ...driftSection(drifting))
  const retaining = report.scenarios.filter((s) => s.retention !== undefined)
  if (retaining.length > 0) out.push('', ...retentionSection(retaining))
  return `${out.join('\n')}\n`
}

/**
 * The `## Meter vs provider drift` section (issue #15): one line per scenario that reports drift (signed %,
 * `(provider − meter) / meter` over its conversation requests).
 */
function driftSection(scenarios: readonly ScenarioReport[]): string[] {
  return ['## Meter vs provider drift', '', ...scenarios.flatMap((s) => (s.drift === undefined ? [] : [
    `- ${markdownCode(s.file, false)} ${markdownCell(s.name)}: ${driftLine(s.drift)}`,
  ]))]
}

/**
 * The `## Retention` section (issue #20): per scenario with probes, its one-line summary, then a table of the
 * curve — per cycle and kind the share of planted probes still visible and, in brackets, the share of the
 * compacted ones the summaries kept — and the probes lost for good.
 */
function retentionSection(scenarios: readonly ScenarioReport[]): string[] {
  const out = ['## Retention']
  for (const s of scenarios) {
    const r = s.retention
    if (r === undefined) continue
    const kinds = r.kinds.filter((k) => k.probes > 0)
    out.push('', `${markdownCode(s.file, false)} ${markdownCell(s.name)}: ${retentionLine(r)}`)
    if (r.points.length > 0) {
      out.push('', `| cycle | turn | ${kinds.map((k) => `${k.kind} (kept)`).join(' | ')} |`, `|---:|---:|${kinds.map(() => '---:|').join('')}`)
      for (const p of r.points) {
        out.push(`| ${p.cycle} | ${p.turn} | ${kinds.map((k) => `${formatShare(p[k.kind].share)} (${formatShare(p[k.kind].keptShare)})`).join(' | ')} |`)
      }
    }
    if (r.lost.length > 0) {
      out.push('', `Lost for good: ${r.lost.map((l) => `${markdownCode(l.id, false)} at cycle ${l.cycle}`).join(', ')}`)
    }
  }
  return out
}

/**
 * The `## Prompt cache` section (issue #9): run totals and the price table's date, one summary row per
 * scenario, then per scenario a collapsible per-request table (§9.4 columns and what the provider reported).
 */
function cacheSection(report: RunReport): string[] {
  const run = report.cache
  if (run === undefined) return []
  const cell = (cells: readonly string[]): string => `| ${cells.map((c) => markdownCell(c)).join(' | ')} |`
  const out = [
    '## Prompt cache',
    '',
    `Reuse ${percent(run.overall)} of ${run.overall.prompt} prompt tokens over ${run.scenarios} scenarios · predicted cost `
      + `${usd(run.cost)} USD · net saving of compaction ${usd(run.netSaving)} USD · prices of ${markdownCell(run.price.tableDate)} `
      + `(table v${run.price.tableVersion}) · **${run.mismatches} mismatch(es)** between reported and predicted usage.`,
    '',
    cell(CACHE_SUMMARY_HEADER),
    `|${CACHE_SUMMARY_HEADER.map((_, i) => (i < 2 ? '---' : '---:')).join('|')}|`,
  ]
  const withCache = scenariosWithCache(report.scenarios)
  for (const { scenario, cache } of withCache) out.push(cell(cacheSummaryCells(scenario.name, cache)))
  for (const { scenario, cache } of withCache) {
    out.push('', `<details><summary>${markdownCell(scenario.name)}: ${markdownCell(cache.price.entry)}, `
      + `${cache.mismatches} mismatch(es)</summary>`, '')
    const align = CACHE_REQUEST_HEADER.map((_, i) => (i === 1 || i === 7 || i === 11 ? '---' : '---:'))
    out.push(cell(CACHE_REQUEST_HEADER), `|${align.join('|')}|`)
    for (const row of cache.requests) out.push(cell(cacheRequestCells(row)))
    out.push('', '</details>')
  }
  return out
}

/** The `## Path coverage` section (issue #8): each protocol path, how many scenarios reached it and how often in all. */
function pathsSection(scenarios: readonly ScenarioReport[]): string[] {
  const rows = new Map<string, { scenarios: number; reached: number }>()
  for (const s of scenarios) {
    for (const p of s.paths ?? []) {
      const row = rows.get(p.path) ?? { scenarios: 0, reached: 0 }
      if (p.reached > 0) row.scenarios++
      row.reached += p.reached
      rows.set(p.path, row)
    }
  }
  const reached = [...rows.values()].filter((r) => r.reached > 0).length
  return [
    '## Path coverage',
    '',
    `${reached} of ${rows.size} paths reached.`,
    '',
    '| path | scenarios | reached |',
    '|---|---:|---:|',
    ...[...rows].map(([path, r]) => `| ${markdownCode(path)} | ${r.scenarios} | ${r.reached} |`),
  ]
}

/**
 * The `## Differential` section (issue #7): the totals, then one row per difference (scenario, aspect, verdict and
 * §14 rule, both values, note); compared pairs without differences and skipped pairs are listed after it.
 */
function differentialSection(d: NonNullable<RunReport['differential']>): string[] {
  const s = d.summary
  const out = [
    '## Differential',
    '',
    `Base ${markdownCode(d.base)} vs ${d.subjects.filter((x) => x !== d.base).map((x) => markdownCode(x)).join(', ')}: `
      + `${s.compared} compared, ${s.skipped} skipped, ${s.identical} identical; **${s.explained} explained** by §14 rules, `
      + `**${s.unexplained} unexplained**.`,
  ]
  const rows = d.scenarios.flatMap((sc) => sc.differences.map((x) => [
    markdownCell(sc.name), markdownCell(sc.other), x.aspect,
    x.verdict === 'explained' ? `explained (${markdownCell(x.rule ?? '')})` : '❌ **unexplained**',
    markdownCode(truncateCell(x.base)), markdownCode(truncateCell(x.other)), markdownCell(x.note),
  ]))
  if (rows.length > 0) {
    out.push('', '| Scenario | Subject | Aspect | Verdict | Base | Other | Note |', '|---|---|---|---|---|---|---|')
    for (const row of rows) out.push(`| ${row.join(' | ')} |`)
  }
  const skipped = d.scenarios.filter((sc) => sc.status === 'skipped')
  if (skipped.length > 0) {
    out.push('', 'Not compared:', '')
    for (const sc of skipped) out.push(`- ${markdownCell(sc.name)} (${markdownCell(sc.other)}): ${markdownCell(sc.skipReason ?? '')}`)
  }
  return out
}

/** A differential value cut to a table-friendly length (the full text is in report.json). */
function truncateCell(text: string): string {
  return text.length > 120 ? `${text.slice(0, 117)}...` : text
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
      statusCell(s.status) + (notEvaluatedExpectations(s).length > 0 ? ' ➖' : ''),
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
    const kinds = [...new Set(notEvaluatedExpectations(scenario).map((e) => e.notEvaluated))].join(', ')
    const skipped = notEvaluatedExpectations(scenario).length
    const notJudged = skipped === 0 ? '' : `, ${skipped} not evaluated: ${kinds}`
    out.push('', `**Expectations** (${failed} of ${scenario.expectations.length} failed${notJudged})`, '')
    out.push('| Result | Expectation | Expected | Actual |', '| --- | --- | --- | --- |')
    for (const e of scenario.expectations) {
      out.push(`| ${e.notEvaluated !== undefined ? '➖' : e.passed ? '✅' : '❌'} | ${markdownCode(e.name)} | ${markdownCell(e.expected)} | ${markdownCell(e.actual)} |`)
    }
  }
  if (scenario.sessions !== undefined) {
    // Issue #16: one row per session; its expectations and violations are listed below under `<name>.` / `session <name>:`.
    out.push('', `**Sessions** (${scenario.sessions.length})`, '', '| Result | Session | Brackets | Violations | Log |', '| --- | --- | ---: | ---: | --- |')
    for (const s of scenario.sessions) {
      const brackets = s.counts === undefined ? '–' : String(s.counts.brackets)
      out.push(`| ${s.status === 'passed' ? '✅' : '❌'} | ${markdownCode(s.name)} | ${brackets} | ${s.violations.length} | ${markdownCode(s.artifacts.log)} |`)
    }
  }
  if (scenario.violations.length > 0) {
    out.push('', `**Violations** (${scenario.violations.length})`, '', '| Invariant | Seq | Message |', '| --- | ---: | --- |')
    for (const v of scenario.violations) out.push(`| ${v.id} | ${v.seq} | ${markdownCell(v.message)} |`)
  }
  out.push('', '**Replay**', '', markdownFence(scenario.replay, 'sh'))
  return out
}
