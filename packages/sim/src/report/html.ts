/**
 * `index.html`: one self-contained page per run, a pure function of the `RunReport`. Inline CSS and inline
 * SVG only — no script runs, nothing is fetched (a Content-Security-Policy of `default-src 'none'` says so
 * to the browser); the report itself is embedded as an inert `application/json` block. Sections: the
 * summary table, the invariant matrix (INV ids × scenarios, one table per scenario folder, each scrolled
 * inside its own box), path coverage (only when some scenario has `paths`), then per scenario its pressure
 * timeline (threshold line, compaction/prune/offload markers), its per-request cached/uncached bars (when the
 * report has cache data), its retention curve per probe kind (when it has probes), violations, expectations,
 * reached paths.
 *
 * Failed and errored scenarios come first everywhere (then the rest, each group in run order), and a
 * scenario's number is its place in that order. The only links leaving the page are relative ones to each
 * scenario's artifacts (log, manifest, request capture), which the runner writes next to `index.html`; the
 * page is laid out for the width it gets (no fixed page width; wide tables scroll in their own box, so
 * the page itself never scrolls sideways). Every untrusted string is escaped; byte-deterministic (equal
 * reports give equal bytes).
 */
import { assertNever } from '@compaction-sim/core'
import { INVARIANT_IDS, type InvariantId } from '../checker/types.ts'
import { lineChartSvg, seriesChartSvg, stackedBarChartSvg, escapeXml, type Bar, type LineMarker, type LineSpan, type Series } from './svg.ts'
import { driftLine, escapeCodeUnits, formatPressure, formatShare, isControl, isProblem, retentionLine, runSeed, summaryText } from './text.ts'
import type {
  RunReport, ScenarioArtifacts, ScenarioReport, ScenarioRetention, ScenarioStatus, ScenarioTimeline, SessionReport, TimelineMarkerKind,
} from './types.ts'

/** Text for HTML content or a quoted attribute: entities for `& < > " '`, control characters (but tab and line breaks) made visible. */
export function htmlText(text: string): string {
  return escapeXml(escapeCodeUnits(text, (code) => isControl(code) && code !== 0x09 && code !== 0x0a && code !== 0x0d))
}

/**
 * JSON for an inline `<script type="application/json">` block: `<`, `>`, `&` and U+2028/U+2029 become
 * `\uXXXX` escapes, so no `</script>` or comment opener can end the block early; `JSON.parse` gives `value` back.
 */
export function inlineJson(value: unknown): string {
  return JSON.stringify(value).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
}

const CSS = `
:root { color-scheme: light; --pass: #1a7f37; --fail: #cf222e; --skip: #9a6700; --muted: #656d76; --line: #d0d7de;
  --cached: #2da44e; --uncached: #fb8f44; --pressure: #0969da; --threshold: #cf222e;
  --provider: #bf3989; }
* { box-sizing: border-box; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 0; padding: 16px 24px; color: #1f2328; }
h1 { font-size: 22px; margin: 8px 0; } h2 { font-size: 18px; margin: 28px 0 8px; border-bottom: 1px solid var(--line); }
h3 { font-size: 16px; margin: 0 0 6px; }
code { font: 12px/1.4 ui-monospace, SFMono-Regular, Menlo, monospace; background: #f6f8fa; padding: 1px 4px; border-radius: 4px;
  overflow-wrap: break-word; }
a { color: #0969da; }
table { border-collapse: collapse; margin: 6px 0 12px; }
.table-box { max-width: 100%; overflow-x: auto; }
th, td { border: 1px solid var(--line); padding: 3px 8px; text-align: left; vertical-align: top; }
th { background: #f6f8fa; } td.num { text-align: right; font-variant-numeric: tabular-nums; } .nowrap { white-space: nowrap; }
.status { font-weight: 600; white-space: nowrap; } .status-passed { color: var(--pass); }
.status-failed, .status-error { color: var(--fail); }
.status-skipped { color: var(--skip); } .muted { color: var(--muted); }
section.scenario { border: 1px solid var(--line); border-radius: 6px; padding: 12px 16px; margin: 14px 0; }
.matrix-groups { display: flex; flex-wrap: wrap; gap: 4px 20px; align-items: flex-start; }
.matrix-box { flex: 0 1 auto; min-width: 0; max-width: 100%; overflow-x: auto; }
.matrix { font-size: 11px; margin: 0 0 8px; } .matrix-title { font-size: 12px; font-weight: 600; padding: 2px 0; white-space: nowrap; }
.matrix th, .matrix td { padding: 1px 3px; text-align: center; min-width: 18px; }
.matrix td.pass { background: #dafbe1; color: var(--pass); } .matrix td.fail { background: #ffebe9; color: var(--fail); font-weight: 700; }
.matrix td.none { color: #afb8c1; } .matrix th.inv { text-align: left; position: sticky; left: 0; z-index: 1; }
.matrix th.problem a { color: var(--fail); font-weight: 700; }
.artifacts { white-space: nowrap; }
.figures { display: flex; flex-wrap: wrap; gap: 8px 24px; }
.figures figure { flex: 1 1 520px; min-width: 0; max-width: 960px; margin: 0; }
.chart { display: block; width: 100%; max-width: 100%; height: auto; margin: 4px 0; }
.chart .grid { stroke: #eaeef2; } .chart .tick, .chart .axis-label, .chart .legend { font-size: 10px; fill: var(--muted); }
.chart .pressure { fill: none; stroke: var(--pressure); stroke-width: 2; }
.chart .threshold { fill: none; stroke: var(--threshold); stroke-width: 1.5; stroke-dasharray: 6 4; }
.chart .point { fill: var(--pressure); } .chart .point-compaction { fill: #8250df; }
.chart .span-bracket { fill: #8250df; fill-opacity: 0.1; } .chart .span-stale { fill: #6e7781; fill-opacity: 0.08; }
.chart .marker { stroke-width: 1.5; } .chart .marker-compaction-start, .chart .marker-compaction-end { stroke: #8250df; }
.chart .marker-compaction-failed { stroke: var(--fail); } .chart .marker-prune { stroke: #bf8700; stroke-dasharray: 3 2; }
.chart .marker-offload { stroke: #1b7c83; stroke-dasharray: 1 2; }
.chart .cached { fill: var(--cached); } .chart .uncached { fill: var(--uncached); }
.chart .bar-compaction rect.uncached { fill: #d1242f; } .chart .bar-mismatch rect { stroke: #1f2328; stroke-width: 1; }
.chart .bar-rejected rect { fill-opacity: 0.4; }
.legend-line { display: inline-block; width: 18px; height: 0; border-top: 2px solid; vertical-align: middle; margin: 0 4px 0 10px; }
.legend-threshold { border-top: 2px dashed var(--threshold); } .legend-bracket { border-color: #8250df; }
.legend-prune { border-top: 2px dashed #bf8700; } .legend-offload { border-top: 2px dotted #1b7c83; }
.chart .line-provider { fill: none; stroke: var(--provider); stroke-width: 2; stroke-dasharray: 5 3; }
.chart .overlay-provider { fill: var(--provider); } .legend-provider { border-top: 2px dashed var(--provider); }
.chart .series { fill: none; stroke-width: 2; } .chart .series-dashed { stroke-width: 1.5; stroke-dasharray: 5 3; }
.chart path.series-recall { stroke: #0969da; } .chart circle.series-recall { fill: #0969da; } .legend-retention-recall { border-color: #0969da; }
.chart path.series-artifact { stroke: #cf222e; } .chart circle.series-artifact { fill: #cf222e; } .legend-retention-artifact { border-color: #cf222e; }
.chart path.series-continuation { stroke: #1a7f37; } .chart circle.series-continuation { fill: #1a7f37; }
.legend-retention-continuation { border-color: #1a7f37; }
.chart path.series-decision { stroke: #8250df; } .chart circle.series-decision { fill: #8250df; } .legend-retention-decision { border-color: #8250df; }
`

/** The run as one self-contained HTML page (ends in a newline). Pure; equal reports give equal bytes. */
export function renderHtml(report: RunReport): string {
  const title = `compaction-sim run ${report.runId}`
  const shown = failedFirst(report.scenarios)
  const out: string[] = [
    '<!doctype html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; style-src \'unsafe-inline\'; img-src data:">',
    `<title>${htmlText(title)}</title>`,
    `<style>${CSS}</style>`,
    '</head>',
    '<body>',
    `<h1>compaction-sim run <code>${htmlText(report.runId)}</code></h1>`,
    `<p>${htmlText(`${report.tool.name} ${report.tool.version} · seed ${runSeed(report)} · ${summaryText(report)}`)}</p>`,
    ...runCacheLine(report),
    '<h2 id="scenarios">Scenarios</h2>',
    ...summaryTable(shown),
    '<h2 id="invariants">Invariants</h2>',
    ...invariantMatrix(shown),
    ...pathCoverage(shown),
    '<h2 id="details">Scenario details</h2>',
    ...shown.flatMap((s, i) => scenarioSection(s, i + 1)),
    `<script type="application/json" id="report-data">${inlineJson(report)}</script>`,
    '</body>',
    '</html>',
  ]
  return `${out.join('\n')}\n`
}

/** The run's cache totals (issue #9), when some scenario has a `cache` section. */
function runCacheLine(report: RunReport): string[] {
  const cache = report.cache
  if (cache === undefined) return []
  const reuse = cache.overall.reuseRatio === null ? '–' : `${(cache.overall.reuseRatio * 100).toFixed(1)}%`
  const mismatched = cache.mismatchedScenarios.length === 0 ? '' : ` (${cache.mismatchedScenarios.join(', ')})`
  return [
    `<p>${htmlText(`Prompt cache over ${cache.scenarios} scenario(s): reuse ${reuse} of ${cache.overall.prompt} prompt tokens;` +
      ` predicted cost ${cache.cost.toFixed(4)}, net saving of compaction ${cache.netSaving.toFixed(4)} (prices of` +
      ` ${cache.price.tableDate}); ${cache.mismatches} request(s) where reported usage differs from the prediction${mismatched}.`)}</p>`,
  ]
}

function statusText(status: ScenarioStatus): string {
  switch (status) {
    case 'passed': return '✓ passed'
    case 'failed': return '✗ failed'
    case 'skipped': return '⏭ skipped'
    case 'error': return '✗ error'
    default: return assertNever(status, 'scenario status')
  }
}

/**
 * The order the page shows scenarios in: failed and errored ones first, then passed and skipped ones, each
 * group in run order (a stable partition). Scenario numbers on the page are positions in this order.
 */
export function failedFirst(scenarios: readonly ScenarioReport[]): ScenarioReport[] {
  return [...scenarios.filter((s) => isProblem(s.status)), ...scenarios.filter((s) => !isProblem(s.status))]
}

/**
 * An artifact path of the report (POSIX, relative to the report folder, where `index.html` is written) as a
 * relative `href`: each segment percent-encoded, so no path can become a scheme or a query. Null for a path
 * that is not relative (empty, rooted or with a drive letter): the page links nothing outside its folder tree.
 */
export function artifactHref(path: string): string | null {
  if (path === '' || path.startsWith('/') || /^[A-Za-z]:/.test(path)) return null
  return path.split('/').map((segment) => encodeURIComponent(segment)).join('/')
}

/** Links to a scenario's log, manifest and request capture (`–` when it wrote none). */
function artifactLinks(artifacts: ScenarioArtifacts | undefined): string {
  if (artifacts === undefined) return '<span class="muted">–</span>'
  const links: Array<[string, string]> = [['log', artifacts.log], ['manifest', artifacts.manifest], ['capture', artifacts.requests]]
  return `<span class="artifacts">${links.map(([text, path]) => {
    const href = artifactHref(path)
    const title = htmlText(path)
    return href === null ? `<span title="${title}">${text}</span>` : `<a href="${htmlText(href)}" title="${title}">${text}</a>`
  }).join(' · ')}</span>`
}

/** Issue #16: one line per session of a several-session scenario, with its verdict, figures and files. */
function sessionsList(sessions: readonly SessionReport[]): string[] {
  const items = sessions.map((x) => `<li>${statusCell(x.status)} session <code>${htmlText(x.name)}</code>` +
    ` · ${x.counts === undefined ? '–' : `${x.counts.brackets} bracket(s)`} · ${x.violations.length} violation(s) · ${artifactLinks(x.artifacts)}</li>`)
  return ['<ul class="sessions">', ...items, '</ul>']
}

const statusCell = (status: ScenarioStatus): string => `<span class="status status-${status}">${statusText(status)}</span>`
const num = (value: number | string): string => `<td class="num">${htmlText(String(value))}</td>`

function summaryTable(scenarios: readonly ScenarioReport[]): string[] {
  if (scenarios.length === 0) return ['<p class="muted">No scenarios.</p>']
  const problems = scenarios.filter((s) => isProblem(s.status)).length
  const out = [
    `<p class="muted">${problems === 0 ? 'In run order (none failed or errored)' : `Failed and errored scenarios first` +
      ` (${problems}), then the rest in run order`};` +
      ' files: each scenario\'s log, manifest and request capture, next to this page.</p>',
    '<div class="table-box">',
    '<table class="summary">',
    '<tr><th>#</th><th>status</th><th>scenario</th><th>file</th><th>seed</th><th>requests</th><th>brackets</th>' +
      '<th>prunes</th><th>offloads</th><th>violations</th><th>final pressure</th><th>files</th></tr>',
  ]
  scenarios.forEach((s, i) => {
    const c = s.counts
    out.push(
      `<tr><td class="num"><a href="#s-${i + 1}">${i + 1}</a></td><td>${statusCell(s.status)}</td>` +
        `<td>${htmlText(s.subject === 'reference' ? s.name : `${s.name} [${s.subject}]`)}</td>` +
        `<td><code>${htmlText(s.file)}</code></td>${num(s.seed)}${num(c?.requests ?? '–')}${num(c?.brackets ?? '–')}` +
        `${num(c?.prunes ?? '–')}${num(c?.offloads ?? '–')}${num(s.violations.length)}` +
        `<td class="nowrap">${s.finalPressure === undefined ? '–' : htmlText(formatPressure(s.finalPressure))}</td>` +
        `<td>${artifactLinks(s.artifacts)}</td></tr>`,
    )
  })
  out.push('</table>', '</div>')
  return out
}

/** Whether the scenario's checker evaluated `id`: it ran (passed or failed) and selected the invariant. */
function checked(s: ScenarioReport, id: InvariantId): boolean {
  if (s.status !== 'passed' && s.status !== 'failed') return false
  return s.invariants === undefined || s.invariants === 'all' || s.invariants.includes(id)
}

/** `1 scenario`, `3 scenarios`. */
const plural = (count: number, noun: string): string => `${count} ${noun}${count === 1 ? '' : 's'}`

/** The scenario's folder (POSIX dirname of its file; `.` for a file in the working directory). */
function folderOf(file: string): string {
  const cut = file.lastIndexOf('/')
  return cut < 0 ? '.' : file.slice(0, cut)
}

/**
 * The invariant matrix, one table per scenario folder (in order of first appearance, so folders with failures
 * come first), columns numbered as on the rest of the page. Each table sits in its own horizontally scrolled
 * box, so a folder with many scenarios never widens the page.
 */
function invariantMatrix(scenarios: readonly ScenarioReport[]): string[] {
  if (scenarios.length === 0) return []
  const groups = new Map<string, Array<{ s: ScenarioReport; number: number }>>()
  scenarios.forEach((s, i) => {
    const folder = folderOf(s.file)
    const group = groups.get(folder) ?? []
    group.push({ s, number: i + 1 })
    groups.set(folder, group)
  })
  const out = [
    '<p class="muted">Rows: §12 invariants; columns: scenarios by number, one table per scenario folder. ✓ checked, no violation ·' +
      ' ✗n n violations · · not checked (not selected, skipped or errored).</p>',
    '<div class="matrix-groups">',
  ]
  for (const [folder, members] of groups) {
    const heads = members.map(({ s, number }) =>
      `<th${isProblem(s.status) ? ' class="problem"' : ''} title="${htmlText(s.name)}"><a href="#s-${number}">${number}</a></th>`)
    out.push(
      '<div class="matrix-box">',
      `<div class="matrix-title">${htmlText(folder)} <span class="muted">(${plural(members.length, 'scenario')})</span></div>`,
      '<table class="matrix">',
      `<tr><th class="inv">invariant</th><th>fails</th>${heads.join('')}</tr>`,
    )
    for (const id of INVARIANT_IDS) {
      const cells: string[] = []
      let fails = 0
      for (const { s } of members) {
        const violations = s.violations.filter((v) => v.id === id).length
        if (violations > 0) fails++
        const title = htmlText(`${id} · ${s.name}`)
        if (violations > 0) cells.push(`<td class="fail" title="${title}">✗${violations}</td>`)
        else if (checked(s, id)) cells.push(`<td class="pass" title="${title}">✓</td>`)
        else cells.push(`<td class="none" title="${title}">·</td>`)
      }
      out.push(`<tr><th class="inv">${id}</th>${num(fails)}${cells.join('')}</tr>`)
    }
    out.push('</table>', '</div>')
  }
  out.push('</div>')
  return out
}

function pathCoverage(scenarios: readonly ScenarioReport[]): string[] {
  if (!scenarios.some((s) => s.paths !== undefined)) return []
  const byPath = new Map<string, { reached: number; scenarios: number[] }>()
  scenarios.forEach((s, i) => {
    for (const p of s.paths ?? []) {
      const entry = byPath.get(p.path) ?? { reached: 0, scenarios: [] }
      entry.reached += p.reached
      if (p.reached > 0) entry.scenarios.push(i + 1)
      byPath.set(p.path, entry)
    }
  })
  const rows = [...byPath.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
  const out = [
    '<h2 id="paths">Path coverage</h2>',
    `<p class="muted">${rows.filter(([, e]) => e.reached > 0).length} of ${rows.length} paths reached.</p>`,
    '<div class="table-box">',
    '<table class="paths">',
    '<tr><th>path</th><th>reached</th><th>scenarios</th></tr>',
  ]
  for (const [path, entry] of rows) {
    out.push(`<tr><td><code>${htmlText(path)}</code></td>${num(entry.reached)}<td>${entry.scenarios.join(', ') || '–'}</td></tr>`)
  }
  out.push('</table>', '</div>')
  return out
}

function scenarioSection(s: ScenarioReport, number: number): string[] {
  const out = [
    `<section class="scenario" id="s-${number}">`,
    `<h3>${number}. ${statusCell(s.status)} ${htmlText(s.name)}</h3>`,
    `<p class="muted"><code>${htmlText(s.file)}</code> · subject ${htmlText(s.subject)} · seed ${s.seed}` +
      ` · dialect ${htmlText(s.dialect)} · ${artifactLinks(s.artifacts)}</p>`,
  ]
  if (s.skipReason !== undefined) out.push(`<p>Skipped: ${htmlText(s.skipReason)}</p>`)
  if (s.sessions !== undefined) out.push(...sessionsList(s.sessions))
  if (s.error !== undefined) out.push(`<p class="status-error">Error (${htmlText(s.errorKind ?? 'internal')}): ${htmlText(s.error)}</p>`)
  const figures = s.timeline === undefined ? [] : timelineFigure(s, s.timeline)
  const bars = cacheBars(s)
  if (bars !== null) figures.push(...cacheFigure(s, bars))
  if (s.retention !== undefined) figures.push(...retentionFigure(s, s.retention))
  if (figures.length > 0) out.push('<div class="figures">', ...figures, '</div>')
  out.push(...violationsTable(s), ...expectationsTable(s))
  if (s.paths !== undefined) {
    const reached = s.paths.filter((p) => p.reached > 0).map((p) => `<code>${htmlText(p.path)}</code> ×${p.reached}`)
    out.push(`<p class="scenario-paths">Paths reached (${reached.length} of ${s.paths.length}): ${reached.join(', ') || 'none'}</p>`)
  }
  out.push(`<p>Replay: <code>${htmlText(s.replay)}</code></p>`, '</section>')
  return out
}

function markerLabel(kind: TimelineMarkerKind, failed: boolean): string {
  switch (kind) {
    case 'compaction-start': return 'compaction/start'
    case 'compaction-end': return failed ? 'compaction/end (failed)' : 'compaction/end'
    case 'prune': return 'compaction/prune'
    case 'offload': return 'image/offload'
    default: return assertNever(kind, 'timeline marker kind')
  }
}

const percent = (ratio: number | null): string => (ratio === null ? '' : ` (${(ratio * 100).toFixed(1)}%)`)

/** The timeline chart of one scenario: the meter at each request, the final reading, thresholds, markers, bracket spans. */
function timelineFigure(s: ScenarioReport, timeline: ScenarioTimeline): string[] {
  const markers: LineMarker[] = timeline.markers.map((m) => ({
    x: m.seq,
    kind: m.kind === 'compaction-end' && m.failed === true ? 'compaction-failed' : m.kind,
    label: `${markerLabel(m.kind, m.failed === true)} #${m.seq}`,
  }))
  const spans: LineSpan[] = []
  const open = new Map<string, number>()
  for (const m of timeline.markers) {
    if (m.compactionId === undefined) continue
    if (m.kind === 'compaction-start') open.set(m.compactionId, m.seq)
    const from = open.get(m.compactionId)
    if (m.kind === 'compaction-end' && from !== undefined) {
      spans.push({ from, to: m.seq, kind: 'bracket', label: `compaction bracket ${m.compactionId} #${from}–#${m.seq}` })
      open.delete(m.compactionId)
    }
  }
  for (const [id, from] of open) {
    const label = `compaction bracket ${id} #${from}, never closed (stale after a restart, §11.4)`
    spans.push({ from, to: timeline.events, kind: 'stale', label })
  }
  const final = s.finalPressure
  // Issue #15: the provider's count of each conversation request, next to the meter's reading at its dispatch.
  const provider = timeline.points.flatMap((p) => (p.purpose !== 'conversation' || p.providerTokens === undefined ? [] : [{
    x: p.seq, y: p.providerTokens,
    label: `request ${p.request} at seq ${p.seq}: provider counts ${p.providerTokens} tokens, the meter ${p.tokens}` +
      (p.tokens > 0 ? ` (${p.providerTokens >= p.tokens ? '+' : ''}${(((p.providerTokens - p.tokens) / p.tokens) * 100).toFixed(2)}%)` : ''),
  }]))
  const svg = lineChartSvg({
    title: `Pressure timeline of ${s.name}`,
    xMax: timeline.events,
    xLabel: 'log seq',
    yLabel: 'tokens',
    points: timeline.points.map((p) => ({
      x: p.seq,
      y: p.tokens,
      kind: p.purpose,
      label: `request ${p.request} (${p.purpose}) at seq ${p.seq}: ${p.tokens} tokens${percent(p.ratio)}` +
        (p.thresholdTokens === null ? '' : `, threshold ${p.thresholdTokens}`),
    })),
    threshold: timeline.points.map((p, i) => ({ x: i === 0 ? 0 : p.seq, y: p.thresholdTokens })),
    ...(final === undefined ? {} : { end: { x: timeline.events, y: final.tokens, label: `end of log: ${final.tokens} tokens` } }),
    markers,
    spans,
    ...(provider.length === 0 ? {} : { overlay: { kind: 'provider', points: provider } }),
  })
  const thresholds = [...new Set(timeline.points.map((p) => p.thresholdTokens).filter((t) => t !== null))]
  return [
    '<figure class="timeline">',
    svg,
    '<figcaption class="muted">Pressure (reference meter, §2.5) when each request was dispatched' +
      `${final === undefined ? '' : `, then at the end of the log (${htmlText(formatPressure(final))})`}` +
      `<span class="legend-line legend-threshold"></span>threshold` +
      `${thresholds.length === 0 ? ' (none)' : ` ${thresholds.join(' → ')} tokens`} (§3.3)` +
      '<span class="legend-line legend-bracket"></span>compaction bracket' +
      '<span class="legend-line legend-prune"></span>prune' +
      '<span class="legend-line legend-offload"></span>offload' +
      (provider.length === 0 ? '' : '<span class="legend-line legend-provider"></span>provider count (route tokenizer)' +
        (s.drift === undefined ? '' : `, ${htmlText(driftLine(s.drift))}`)) +
      '</figcaption>',
    '</figure>',
  ]
}

/**
 * The retention curve of one scenario (issue #20): per probe kind, the share of its planted probes visible after
 * each committed bracket (solid) and the share of the compacted ones the summaries kept (dashed).
 */
function retentionFigure(s: ScenarioReport, retention: ScenarioRetention): string[] {
  const kinds = retention.kinds.filter((k) => k.probes > 0)
  const pct = (v: number | null): number | null => (v === null ? null : Math.round(v * 1000) / 10)
  const series: Series[] = kinds.flatMap((k) => {
    const points = retention.points
    const label = (i: number, field: 'share' | 'keptShare'): string => {
      const c = points[i]?.[k.kind]
      if (c === undefined) return ''
      return field === 'share'
        ? `${k.kind}, cycle ${i + 1}: ${c.visible} of ${c.planted} planted probes visible (${formatShare(c.share)})`
        : `${k.kind}, cycle ${i + 1}: summaries kept ${c.kept} of ${c.compacted} compacted probes (${formatShare(c.keptShare)})`
    }
    const labels = (field: 'share' | 'keptShare'): string[] =>
      points.flatMap((p, i) => (p[k.kind][field] === null ? [] : [label(i, field)]))
    return [
      { kind: k.kind, values: k.curve.map(pct), labels: labels('share') },
      { kind: k.kind, dashed: true, values: k.keptCurve.map(pct), labels: labels('keptShare') },
    ]
  })
  const legend = kinds.map((k) => `<span class="legend-line legend-retention-${k.kind}"></span>${k.kind} ${formatShare(k.final)}`).join('')
  return [
    '<figure class="retention">',
    seriesChartSvg({ title: `Retention curve of ${s.name}`, xLabel: 'compaction cycle', yLabel: '% of probes', yMax: 100, series }),
    `<figcaption class="muted">Retention probes (issue #20) still visible after each committed compaction: solid, of all planted` +
      ` probes (checkpoint text plus retained tail); dashed, of those already compacted (what the summaries kept).${legend}` +
      ` · ${htmlText(retentionLine(retention))}</figcaption>`,
    '</figure>',
  ]
}

/** One bar per request of the scenario's `cache` section (predicted cached below, uncached on top); null without one. */
function cacheBars(s: ScenarioReport): Bar[] | null {
  if (s.cache === undefined) return null
  return s.cache.requests.map((r) => {
    const reported = r.reported === undefined
      ? 'no usage reported'
      : `reported ${r.reported.cached} cached / ${r.reported.uncached} uncached${r.mismatch === true ? ' (differs from the prediction)' : ''}`
    return {
      label: String(r.index),
      kinds: [r.purpose, ...(r.mismatch === true ? ['mismatch'] : []), ...(r.rejected ? ['rejected'] : [])],
      title: `request ${r.index} (${r.purpose}${r.rejected ? ', rejected' : ''}): prompt ${r.prompt}, predicted ${r.cached} cached /` +
        ` ${r.uncached} uncached, cause ${r.cause}; ${reported}`,
      segments: [{ value: r.cached, kind: 'cached' }, { value: r.uncached, kind: 'uncached' }],
    }
  })
}

function cacheFigure(s: ScenarioReport, bars: readonly Bar[]): string[] {
  const cache = s.cache
  const ratio = (value: number | null): string => (value === null ? '–' : `${(value * 100).toFixed(1)}%`)
  const summary = cache === undefined
    ? ''
    : ` Contract ${cache.contract}${cache.deviation === 'none' ? '' : ` (deviating: ${cache.deviation})`}; reuse` +
      ` ${ratio(cache.overall.reuseRatio)} overall, ${ratio(cache.conversation.reuseRatio)} conversation,` +
      ` ${ratio(cache.compaction.reuseRatio)} compaction; ${cache.recomputedByCompaction} tokens recomputed because of compaction;` +
      ` ${cache.mismatches} request(s) where the reported usage differs from the prediction.`
  return [
    '<figure class="cache">',
    stackedBarChartSvg({
      title: `Cached and uncached prompt tokens per request of ${s.name}`,
      yLabel: 'prompt tokens',
      bars,
      legend: [{ kind: 'cached', text: 'cached' }, { kind: 'uncached', text: 'uncached' }],
    }),
    '<figcaption class="muted">Predicted prompt tokens per request, in dispatch order: cached (read from the provider\'s prefix' +
      ' cache, §9) below, uncached on top; compaction requests have a darker top, requests whose reported usage differs are' +
      ` outlined.${htmlText(summary)}</figcaption>`,
    '</figure>',
  ]
}

function violationsTable(s: ScenarioReport): string[] {
  if (s.status !== 'passed' && s.status !== 'failed') return []
  if (s.violations.length === 0) return ['<p class="status-passed">No invariant violations.</p>']
  return [
    '<div class="table-box">',
    '<table class="violations">',
    '<tr><th>invariant</th><th>seq</th><th>message</th></tr>',
    ...s.violations.map((v) => `<tr><td>${v.id}</td>${num(v.seq)}<td>${htmlText(v.message)}</td></tr>`),
    '</table>',
    '</div>',
  ]
}

const PASS_MARK = '<span class="status-passed">✓</span>'
const FAIL_MARK = '<span class="status-failed">✗</span>'
/** An expectation not judged (seed-specific under another seed, or a §14 dialect gap): neither passed nor failed. */
const NOT_EVALUATED_MARK = '<span title="not evaluated (seed-specific, or not held by the subject\'s log dialect)">–</span>'

function expectationsTable(s: ScenarioReport): string[] {
  if (s.expectations.length === 0) return []
  return [
    '<div class="table-box">',
    '<table class="expectations">',
    '<tr><th></th><th>expectation</th><th>expected</th><th>actual</th></tr>',
    ...s.expectations.map((e) => `<tr><td>${e.notEvaluated !== undefined ? NOT_EVALUATED_MARK : e.passed ? PASS_MARK : FAIL_MARK}</td>` +
      `<td><code>${htmlText(e.name)}</code></td><td>${htmlText(e.expected)}</td><td>${htmlText(e.actual)}</td></tr>`),
    '</table>',
    '</div>',
  ]
}
