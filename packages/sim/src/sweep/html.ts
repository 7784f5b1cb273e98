/**
 * The HTML sweep report (issue #10): one self-contained page (inline CSS and SVG, no script, nothing fetched —
 * a `default-src 'none'` CSP says so) with, per window, a Pareto chart (cost against compactions; each ran cell
 * a circle sized by its overflow incidents, the front joined by a line) and a heat-map of cost per threshold ×
 * retain ratio for each pruner setting (skipped cells hatched, with their §3.2 reason as the tooltip), then the
 * recommendations. Uses the report's own SVG helpers (`report/svg.ts`) for escaping, numbers and axes.
 */
import { escapeXml, niceAxis, svgNumber, tickLabel } from '../report/svg.ts'
import type { SweepCell, SweepCellMetrics, SweepReport } from './types.ts'
import { plural } from '../plural.ts'
import { figureTexts, profileGroups, PROFILE_COLUMNS, RULE_COLUMNS, ruleRows, ruleTexts, sideBySideProfiles } from './profile-compare.ts'

const CSS = [
  'body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222;max-width:1100px}',
  'h1{font-size:20px}h2{font-size:17px;margin-top:28px}h3{font-size:15px}',
  'svg.chart{background:#fafafa;border:1px solid #ddd;margin:6px 12px 6px 0}',
  '.axis line,.grid{stroke:#ccc}.axis text,.tick{font-size:10px;fill:#555}.axis-label{font-size:11px;fill:#333}',
  'circle.cell{fill:#9db4d6;stroke:#345}circle.cell.pareto{fill:#e0702d;stroke:#7a2f00}',
  'path.front{fill:none;stroke:#e0702d;stroke-width:1.5}',
  'circle.cell.overflow{stroke:#c00;stroke-width:2}',
  'rect.heat{stroke:#fff}rect.heat.skipped{fill:#eee}text.heat-label{font-size:10px;fill:#111;text-anchor:middle}',
  'table{border-collapse:collapse}td,th{border:1px solid #ddd;padding:2px 6px;font-size:12px}',
  '.incomplete{color:#a00;font-weight:bold}',
  'table.profiles th.profile{background:#f3f3f3}table.profiles tr.total td{font-weight:bold}td.failed{color:#a00}table.rules tr.worse td{color:#a00}',
].join('\n')

const WIDTH = 520
const HEIGHT = 300
const M = { left: 64, right: 16, top: 20, bottom: 40 }

/** Renders `report` as the HTML page. Deterministic. */
export function renderSweepHtml(report: SweepReport): string {
  const unit = report.costBasis === 'cost' ? 'cost (USD)' : 'uncached prompt tokens'
  const body: string[] = [
    `<h1>Sweep ${escapeXml(report.sweepId)}</h1>`,
    `<p>${report.summary.cells} cells (${report.summary.ran} ran, ${report.summary.skipped} skipped), `
      + `${plural(report.scenarios.length, 'scenario')}, `
      + `${plural(report.summary.runs, 'run')}, ${plural(report.summary.violations, 'invariant violation')}. Cost: ${escapeXml(unit)}.</p>`,
  ]
  if (!report.complete) body.push('<p class="incomplete">Incomplete: the sweep was interrupted; only finished cells are shown.</p>')
  if (report.grid.ownPolicy === true) {
    body.push('<p class="own-policy">Own policy: every scenario ran with its own threshold, retention, pruner and windows '
      + '(<code>--own-policy</code>), so there are no per-window charts and no recommendations; compare the profiles below.</p>')
  }
  body.push('<h2>Recommendations</h2>', '<ul class="recommendations">')
  for (const r of report.recommendations) body.push(`<li><b>window ${r.contextWindow}</b>: ${escapeXml(r.reasoning)}</li>`)
  body.push('</ul>')
  body.push(...profileHtml(report))
  for (const contextWindow of report.grid.contextWindow) {
    const cells = report.cells.filter((c) => c.policy.contextWindow === contextWindow)
    body.push(`<section class="window" id="window-${contextWindow}">`, `<h2>Window ${contextWindow}</h2>`)
    body.push(paretoSvg(cells, report, contextWindow, unit))
    for (const pruner of report.grid.pruner) body.push(heatMapSvg(cells.filter((c) => c.policy.pruner === pruner), report, pruner, unit))
    body.push('</section>')
  }
  return [
    '<!doctype html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; style-src \'unsafe-inline\'">',
    `<title>Sweep ${escapeXml(report.sweepId)}</title>`,
    `<style>${CSS}</style>`,
    '</head>',
    '<body>',
    ...body,
    '</body>',
    '</html>',
    '',
  ].join('\n')
}

function costOf(m: SweepCellMetrics, basis: SweepReport['costBasis']): number {
  return basis === 'cost' ? m.cost ?? 0 : m.uncachedTokens
}

/** Scatter of cost (y) against compactions (x) for the ran cells of one window; the Pareto front is joined. */
function paretoSvg(cells: readonly SweepCell[], report: SweepReport, contextWindow: number, unit: string): string {
  const ran = cells.filter((c): c is SweepCell & { metrics: SweepCellMetrics } => c.status === 'ran' && c.metrics !== undefined)
  const xs = ran.map((c) => c.metrics.compactions)
  const ys = ran.map((c) => costOf(c.metrics, report.costBasis))
  const xAxis = niceAxis(Math.max(1, ...xs) * 1.05)
  const yAxis = niceAxis(Math.max(0, ...ys) * 1.05)
  const plotW = WIDTH - M.left - M.right
  const plotH = HEIGHT - M.top - M.bottom
  const sx = (x: number): number => M.left + (x / xAxis.max) * plotW
  const sy = (y: number): number => M.top + plotH - (y / yAxis.max) * plotH
  const out = [
    `<svg class="chart pareto" viewBox="0 0 ${WIDTH} ${HEIGHT}" width="${WIDTH}" height="${HEIGHT}" role="img">`,
    `<title>Pareto chart, window ${contextWindow}: ${escapeXml(unit)} against compactions</title>`,
  ]
  for (let v = 0; v <= yAxis.max + 1e-9; v += yAxis.step) {
    out.push(`<line class="grid" x1="${M.left}" x2="${WIDTH - M.right}" y1="${svgNumber(sy(v))}" y2="${svgNumber(sy(v))}"/>`,
      `<text class="tick" x="${M.left - 4}" y="${svgNumber(sy(v) + 3)}" text-anchor="end">${escapeXml(tickLabel(v))}</text>`)
  }
  for (let v = 0; v <= xAxis.max + 1e-9; v += xAxis.step) {
    const y = HEIGHT - M.bottom + 14
    out.push(`<text class="tick" x="${svgNumber(sx(v))}" y="${y}" text-anchor="middle">${escapeXml(tickLabel(v))}</text>`)
  }
  out.push(`<text class="axis-label" x="${svgNumber(M.left + plotW / 2)}" y="${HEIGHT - 6}" text-anchor="middle">compactions</text>`,
    `<text class="axis-label" x="4" y="12">${escapeXml(unit)}</text>`)
  const cost = (c: { metrics: SweepCellMetrics }): number => costOf(c.metrics, report.costBasis)
  const front = ran.filter((c) => c.pareto === true).sort((a, b) => a.metrics.compactions - b.metrics.compactions || cost(a) - cost(b))
  if (front.length > 1) {
    const d = front.map((c, i) => `${i === 0 ? 'M' : 'L'}${svgNumber(sx(c.metrics.compactions))} ${svgNumber(sy(cost(c)))}`)
    out.push(`<path class="front" d="${d.join(' ')}"/>`)
  }
  for (const c of ran) {
    const m = c.metrics
    const classes = ['cell', ...(c.pareto === true ? ['pareto'] : []), ...(m.overflowIncidents > 0 ? ['overflow'] : [])].join(' ')
    const label = `${c.id}: ${unit} ${costOf(m, report.costBasis)}, ${m.compactions} compactions, ${m.overflowIncidents} overflow incidents`
      + `${c.pareto === true ? ' (Pareto)' : ''}`
    out.push(`<circle class="${classes}" cx="${svgNumber(sx(m.compactions))}" cy="${svgNumber(sy(costOf(m, report.costBasis)))}"`
      + ` r="${svgNumber(4 + Math.min(6, m.overflowIncidents))}"><title>${escapeXml(label)}</title></circle>`)
  }
  out.push('</svg>')
  return out.join('\n')
}

/** Heat-map of cost per threshold (rows) × retain ratio (columns) for one window and pruner setting. */
function heatMapSvg(cells: readonly SweepCell[], report: SweepReport, pruner: boolean, unit: string): string {
  const rows = report.grid.thresholdRatio
  const cols = report.grid.retainRatio
  const cw = Math.max(40, Math.floor((WIDTH - M.left - M.right) / Math.max(1, cols.length)))
  const ch = 28
  const width = M.left + cw * cols.length + M.right
  const height = M.top + ch * rows.length + M.bottom
  const values = cells.flatMap((c) => (c.metrics === undefined ? [] : [costOf(c.metrics, report.costBasis)]))
  const lo = Math.min(...values, Number.POSITIVE_INFINITY)
  const hi = Math.max(...values, Number.NEGATIVE_INFINITY)
  const window = cells[0]?.policy.contextWindow ?? 0
  const out = [
    `<svg class="chart heatmap" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}" role="img">`,
    `<title>Heat-map of ${escapeXml(unit)}, window ${window}, pruner ${pruner ? 'on' : 'off'}</title>`,
    `<text class="axis-label" x="4" y="12">pruner ${pruner ? 'on' : 'off'}: threshold ↓ × retain →</text>`,
  ]
  rows.forEach((threshold, r) => {
    out.push(`<text class="tick" x="${M.left - 4}" y="${M.top + r * ch + ch / 2 + 3}" text-anchor="end">${threshold}</text>`)
    cols.forEach((retain, k) => {
      const cell = cells.find((c) => c.policy.thresholdRatio === threshold && c.policy.retainRatio === retain)
      const x = M.left + k * cw
      const y = M.top + r * ch
      if (cell === undefined || cell.metrics === undefined) {
        const why = cell?.skipReason ?? 'not run'
        const title = escapeXml(`${cell?.id ?? ''} skipped: ${why}`)
        out.push(`<rect class="heat skipped" x="${x}" y="${y}" width="${cw}" height="${ch}"><title>${title}</title></rect>`)
        return
      }
      const v = costOf(cell.metrics, report.costBasis)
      const t = hi > lo ? (v - lo) / (hi - lo) : 0
      // Cheap = green, dear = red (HSL hue 120 → 0).
      const fill = `hsl(${svgNumber(120 * (1 - t))},65%,70%)`
      const m = cell.metrics
      const title = escapeXml(`${cell.id}: ${unit} ${v}, ${m.compactions} compactions, ${m.overflowIncidents} overflow`)
      const label = `${escapeXml(report.costBasis === 'cost' ? v.toFixed(3) : tickLabel(v))}${cell.pareto === true ? '★' : ''}`
      out.push(
        `<rect class="heat${cell.pareto === true ? ' pareto' : ''}" x="${x}" y="${y}" width="${cw}" height="${ch}" style="fill:${fill}">`
          + `<title>${title}</title></rect>`,
        `<text class="heat-label" x="${x + cw / 2}" y="${y + ch / 2 + 3}">${label}</text>`,
      )
    })
  })
  cols.forEach((retain, k) => {
    const y = M.top + rows.length * ch + 14
    out.push(`<text class="tick" x="${M.left + k * cw + cw / 2}" y="${y}" text-anchor="middle">${retain}</text>`)
  })
  out.push('</svg>')
  return out.join('\n')
}

/**
 * The `profile` axis comparison (issue #19): per policy, a table with the profiles side by side for each metric,
 * one row per scenario and the overall total; a run that errored (e.g. does not load under a profile) shows why.
 * Nothing when the grid has no `profile` axis (so such a page is unchanged).
 */
function profileHtml(report: SweepReport): string[] {
  const all = report.grid.profile
  if (all === undefined) return []
  const profiles = sideBySideProfiles(all)
  const out = [`<section class="profiles"><h2>Profiles: ${escapeXml(profiles.join(' vs '))}</h2>`]
  for (const group of profileGroups(report)) {
    out.push(`<h3>${escapeXml(group.base)}</h3>`, '<table class="profiles">',
      `<tr><th rowspan="2">scenario</th>${PROFILE_COLUMNS.map((c) => `<th colspan="${profiles.length}">${escapeXml(c)}</th>`).join('')}</tr>`,
      `<tr>${PROFILE_COLUMNS.map(() => profiles.map((p) => `<th class="profile">${escapeXml(p)}</th>`).join('')).join('')}</tr>`)
    for (const row of group.rows) {
      const texts = profiles.map((p) => figureTexts(row.figures[p]))
      const failed = profiles.map((p) => {
        const f = row.figures[p]
        return f === null || f === undefined || f.status === 'error' || f.status === 'skipped'
      })
      const cells = PROFILE_COLUMNS.flatMap((_c, i) => texts.map((t, k) => `<td${failed[k] === true ? ' class="failed"' : ''}>${escapeXml(t[i] ?? '')}</td>`))
      out.push(`<tr${row.file === null ? ' class="total"' : ''}><td>${escapeXml(row.file ?? 'total')}</td>${cells.join('')}</tr>`)
    }
    out.push('</table>')
    const rules = ruleRows(report, group)
    if (rules.length > 0) {
      out.push(`<h4>Per rule: each rule alone on top of faithful, in total</h4>`, '<table class="rules">',
        `<tr>${RULE_COLUMNS.map((c) => `<th>${escapeXml(c)}</th>`).join('')}</tr>`)
      for (const row of rules) {
        const worse = row.worse !== null && row.worse > 0
        out.push(`<tr${worse ? ' class="worse"' : ''}>${ruleTexts(row).map((t) => `<td>${escapeXml(t)}</td>`).join('')}</tr>`)
      }
      out.push('</table>')
    }
  }
  out.push('</section>')
  return out
}
