/**
 * Tiny hand-rolled SVG charts for the HTML report: a pressure line chart (threshold line, event markers,
 * one circle per point) and a stacked bar chart. Pure and byte-deterministic: coordinates are rounded to
 * one decimal by one formatter, elements come in input order, and no ids are generated (several charts
 * share a page). Presentation lives in the page's CSS, keyed on the class names documented here; every
 * text is escaped. The markup is inline SVG for an HTML5 document (no `xmlns`, no external reference).
 */

/** Text for HTML/SVG content and attribute values: `& < > " '` become entities. */
export function escapeXml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;')
}

/** A coordinate or length with at most one decimal, never `-0`; throws for a non-finite value (a bug of the caller). */
export function svgNumber(value: number): string {
  if (!Number.isFinite(value)) throw new RangeError(`svg coordinate must be finite, got ${value}`)
  const rounded = Math.round(value * 10) / 10
  return String(rounded === 0 ? 0 : rounded)
}

/** Outer size and plot margins shared by both charts (pixels of the viewBox). */
const WIDTH = 640
const MARGIN = { left: 60, right: 12, top: 20, bottom: 30 }

/**
 * A round axis maximum at or above `value` and its tick step (1, 2 or 5 × 10^k; at most 5 steps).
 * `value ≤ 0` gives a maximum of 1 so an empty chart still has an axis.
 */
export function niceAxis(value: number): { max: number; step: number } {
  if (!(value > 0)) return { max: 1, step: 1 }
  const rough = value / 4
  const power = 10 ** Math.floor(Math.log10(rough))
  const step = [1, 2, 5, 10].map((m) => m * power).find((s) => value / s <= 5) ?? 10 * power
  return { max: Math.ceil(value / step) * step, step }
}

/** Axis tick labels: integers in full, large values with k/M suffixes (`12k`, `1.5M`). */
export function tickLabel(value: number): string {
  if (Math.abs(value) >= 1_000_000) return `${Math.round(value / 100_000) / 10}M`
  if (Math.abs(value) >= 10_000) return `${Math.round(value / 100) / 10}k`
  return String(Math.round(value * 100) / 100)
}

/** One point of a line chart. */
export interface LinePoint {
  x: number
  y: number
  /** Extra class on its circle (e.g. the request purpose). */
  kind: string
  /** Tooltip (`<title>`). */
  label: string
}

/** A vertical event marker of a line chart. */
export interface LineMarker {
  x: number
  /** Class suffix: `marker marker-<kind>`. */
  kind: string
  label: string
}

/** A shaded x-range of a line chart (e.g. an open compaction bracket). */
export interface LineSpan {
  from: number
  to: number
  kind: string
  label: string
}

/** Input of `lineChartSvg`. */
export interface LineChartInput {
  /** The chart's accessible title. */
  title: string
  height?: number
  /** The x-axis spans 0 … `xMax` (at least 1). */
  xMax: number
  xLabel: string
  yLabel: string
  /** The line, in x order; one `circle.point` each. */
  points: readonly LinePoint[]
  /** Threshold by x as steps: each entry holds from its x until the next; null = no threshold there. */
  threshold: ReadonlyArray<{ x: number; y: number | null }>
  /** An optional last line vertex without a circle (e.g. the final reading at the log's end). */
  end?: { x: number; y: number; label: string }
  markers: readonly LineMarker[]
  spans: readonly LineSpan[]
  /**
   * A second line over the same axes (e.g. the provider's count next to the meter, issue #15): `path.line-<kind>`
   * through its points and one `circle.overlay-point.overlay-<kind>` each, drawn after the main line.
   */
  overlay?: { kind: string; points: ReadonlyArray<{ x: number; y: number; label: string }> }
}

/**
 * An SVG line chart (`svg.chart.line-chart`): y grid with tick labels, `rect.span-<kind>` per span,
 * `path.threshold` (dashed steps, absent when no point has a threshold), `line.marker` per marker,
 * `path.pressure` through the points (and `end`), one `circle.point` per point. Deterministic.
 */
export function lineChartSvg(input: LineChartInput): string {
  const height = input.height ?? 220
  const plotW = WIDTH - MARGIN.left - MARGIN.right
  const plotH = height - MARGIN.top - MARGIN.bottom
  const xMax = Math.max(1, input.xMax)
  const ys = [
    ...input.points.map((p) => p.y), ...input.threshold.map((t) => t.y ?? 0), input.end?.y ?? 0, ...(input.overlay?.points ?? []).map((p) => p.y),
  ]
  const axis = niceAxis(Math.max(0, ...ys) * 1.05)
  const sx = (x: number): number => MARGIN.left + (Math.min(Math.max(x, 0), xMax) / xMax) * plotW
  const sy = (y: number): number => MARGIN.top + plotH - (Math.max(0, y) / axis.max) * plotH
  const out: string[] = [
    `<svg class="chart line-chart" viewBox="0 0 ${WIDTH} ${height}" width="${WIDTH}" height="${height}" role="img">`,
    `<title>${escapeXml(input.title)}</title>`,
    ...yAxis(axis, sy, plotW),
    ...xAxis(xMax, sx, height, input.xLabel),
    `<text class="axis-label" x="4" y="10">${escapeXml(input.yLabel)}</text>`,
  ]
  for (const span of input.spans) {
    const x = sx(span.from)
    out.push(
      `<rect class="span span-${escapeXml(span.kind)}" x="${svgNumber(x)}" y="${MARGIN.top}"` +
        ` width="${svgNumber(Math.max(1, sx(span.to) - x))}"` +
        ` height="${svgNumber(plotH)}"><title>${escapeXml(span.label)}</title></rect>`,
    )
  }
  const thresholdPath = stepPath(input.threshold, sx, sy, xMax)
  if (thresholdPath !== '') out.push(`<path class="threshold" d="${thresholdPath}"><title>threshold</title></path>`)
  for (const m of input.markers) {
    const x = svgNumber(sx(m.x))
    out.push(
      `<line class="marker marker-${escapeXml(m.kind)}" x1="${x}" y1="${MARGIN.top}" x2="${x}" y2="${svgNumber(MARGIN.top + plotH)}">` +
        `<title>${escapeXml(m.label)}</title></line>`,
    )
  }
  const vertices = [...input.points, ...(input.end === undefined ? [] : [input.end])]
  if (vertices.length > 0) {
    const d = vertices.map((p, i) => `${i === 0 ? 'M' : 'L'}${svgNumber(sx(p.x))} ${svgNumber(sy(p.y))}`).join(' ')
    out.push(`<path class="pressure" d="${d}"/>`)
  }
  for (const p of input.points) {
    out.push(
      `<circle class="point point-${escapeXml(p.kind)}" cx="${svgNumber(sx(p.x))}" cy="${svgNumber(sy(p.y))}" r="3">` +
        `<title>${escapeXml(p.label)}</title></circle>`,
    )
  }
  if (input.overlay !== undefined && input.overlay.points.length > 0) {
    const kind = escapeXml(input.overlay.kind)
    const d = input.overlay.points.map((p, i) => `${i === 0 ? 'M' : 'L'}${svgNumber(sx(p.x))} ${svgNumber(sy(p.y))}`).join(' ')
    out.push(`<path class="line-${kind}" d="${d}"/>`)
    for (const p of input.overlay.points) {
      out.push(
        `<circle class="overlay-point overlay-${kind}" cx="${svgNumber(sx(p.x))}" cy="${svgNumber(sy(p.y))}" r="2.5">` +
          `<title>${escapeXml(p.label)}</title></circle>`,
      )
    }
  }
  out.push('</svg>')
  return out.join('\n')
}

/** One line of a series chart: `kind` keys its CSS class, `dashed` draws it dashed; a null value breaks the line. */
export interface Series {
  kind: string
  dashed?: boolean
  /** The value at x = 1, 2, … (one per x). */
  values: ReadonlyArray<number | null>
  /** Tooltip of each non-null value. */
  labels: readonly string[]
}

/** Input of `seriesChartSvg`. */
export interface SeriesChartInput {
  title: string
  height?: number
  xLabel: string
  yLabel: string
  /** The y-axis spans 0 … yMax. */
  yMax: number
  series: readonly Series[]
}

/**
 * An SVG chart of several lines over x = 1 … n (`svg.chart.series-chart`, e.g. the retention curve per kind):
 * y grid with tick labels, then per series `path.series.series-<kind>` (with `.series-dashed` when dashed; a null
 * value starts a new subpath) and one `circle.series-point.series-<kind>` per non-null value. Deterministic.
 */
export function seriesChartSvg(input: SeriesChartInput): string {
  const height = input.height ?? 220
  const plotW = WIDTH - MARGIN.left - MARGIN.right
  const plotH = height - MARGIN.top - MARGIN.bottom
  const n = Math.max(1, ...input.series.map((l) => l.values.length))
  const axis = niceAxis(input.yMax)
  const sx = (x: number): number => MARGIN.left + (n === 1 ? plotW / 2 : ((x - 1) / (n - 1)) * plotW)
  const sy = (y: number): number => MARGIN.top + plotH - (Math.min(Math.max(0, y), axis.max) / axis.max) * plotH
  const out: string[] = [
    `<svg class="chart series-chart" viewBox="0 0 ${WIDTH} ${height}" width="${WIDTH}" height="${height}" role="img">`,
    `<title>${escapeXml(input.title)}</title>`,
    ...yAxis(axis, sy, plotW),
  ]
  const step = Math.max(1, niceAxis(n).step)
  for (let x = 1; x <= n; x += x === 1 && step > 1 ? step - 1 : step) {
    out.push(`<text class="tick" x="${svgNumber(sx(x))}" y="${svgNumber(height - 16)}" text-anchor="middle">${x}</text>`)
  }
  out.push(
    `<text class="axis-label" x="${svgNumber(sx(n))}" y="${svgNumber(height - 2)}" text-anchor="end">${escapeXml(input.xLabel)}</text>`,
    `<text class="axis-label" x="4" y="10">${escapeXml(input.yLabel)}</text>`,
  )
  for (const line of input.series) {
    const kind = escapeXml(line.kind)
    let d = ''
    let drawing = false
    line.values.forEach((v, i) => {
      if (v === null) {
        drawing = false
        return
      }
      d += `${d === '' ? '' : ' '}${drawing ? 'L' : 'M'}${svgNumber(sx(i + 1))} ${svgNumber(sy(v))}`
      drawing = true
    })
    if (d !== '') out.push(`<path class="series series-${kind}${line.dashed === true ? ' series-dashed' : ''}" d="${d}"/>`)
    let k = 0
    line.values.forEach((v, i) => {
      if (v === null) return
      out.push(
        `<circle class="series-point series-${kind}" cx="${svgNumber(sx(i + 1))}" cy="${svgNumber(sy(v))}" r="${line.dashed === true ? 2 : 3}">` +
          `<title>${escapeXml(line.labels[k] ?? '')}</title></circle>`,
      )
      k++
    })
  }
  out.push('</svg>')
  return out.join('\n')
}

/** One segment of a stacked bar. */
export interface BarSegment {
  value: number
  /** Class of its rect (e.g. `cached`, `uncached`). */
  kind: string
}

/** One stacked bar. */
export interface Bar {
  /** Short axis label (shown when there is room). */
  label: string
  /** Extra classes `bar-<kind>` on the bar's group (e.g. the request purpose, `mismatch`). */
  kinds: readonly string[]
  /** Tooltip (`<title>`). */
  title: string
  /** Bottom to top. */
  segments: readonly BarSegment[]
}

/** Input of `stackedBarChartSvg`. */
export interface BarChartInput {
  title: string
  height?: number
  yLabel: string
  bars: readonly Bar[]
  /** Legend entries, in order: the segment kind and its text. */
  legend: ReadonlyArray<{ kind: string; text: string }>
}

/**
 * An SVG stacked bar chart (`svg.chart.bar-chart`): y grid with tick labels, then one `g.bar` per bar
 * holding one `rect` per segment (zero-height segments are kept, so counts match the data), then a legend
 * (`rect.legend-swatch`, in the top margin). Deterministic.
 */
export function stackedBarChartSvg(input: BarChartInput): string {
  const height = input.height ?? 200
  const plotW = WIDTH - MARGIN.left - MARGIN.right
  const plotH = height - MARGIN.top - MARGIN.bottom
  const totals = input.bars.map((b) => b.segments.reduce((sum, s) => sum + Math.max(0, s.value), 0))
  const axis = niceAxis(Math.max(0, ...totals) * 1.05)
  const sy = (y: number): number => MARGIN.top + plotH - (y / axis.max) * plotH
  const slot = plotW / Math.max(1, input.bars.length)
  const barW = Math.max(1, slot * 0.7)
  const labelEvery = Math.max(1, Math.ceil(24 / slot))
  const out: string[] = [
    `<svg class="chart bar-chart" viewBox="0 0 ${WIDTH} ${height}" width="${WIDTH}" height="${height}" role="img">`,
    `<title>${escapeXml(input.title)}</title>`,
    ...yAxis(axis, sy, plotW),
    `<text class="axis-label" x="4" y="10">${escapeXml(input.yLabel)}</text>`,
  ]
  input.bars.forEach((bar, i) => {
    const x = MARGIN.left + i * slot + (slot - barW) / 2
    out.push(`<g class="${['bar', ...bar.kinds.map((k) => `bar-${k}`)].map(escapeXml).join(' ')}"><title>${escapeXml(bar.title)}</title>`)
    let base = 0
    for (const segment of bar.segments) {
      const value = Math.max(0, segment.value)
      const top = sy(base + value)
      out.push(
        `<rect class="${escapeXml(segment.kind)}" x="${svgNumber(x)}" y="${svgNumber(top)}" width="${svgNumber(barW)}"` +
          ` height="${svgNumber(sy(base) - top)}"/>`,
      )
      base += value
    }
    if (i % labelEvery === 0) {
      out.push(`<text class="tick" x="${svgNumber(x + barW / 2)}" y="${svgNumber(height - 16)}" text-anchor="middle">` +
        `${escapeXml(bar.label)}</text>`)
    }
    out.push('</g>')
  })
  let legendX = MARGIN.left + 120
  for (const entry of input.legend) {
    out.push(
      `<rect class="legend-swatch ${escapeXml(entry.kind)}" x="${svgNumber(legendX)}" y="3"` +
        ' width="10" height="8"/>' +
        `<text class="legend" x="${svgNumber(legendX + 14)}" y="10">${escapeXml(entry.text)}</text>`,
    )
    legendX += 24 + entry.text.length * 6
  }
  out.push('</svg>')
  return out.join('\n')
}

function yAxis(axis: { max: number; step: number }, sy: (y: number) => number, plotW: number): string[] {
  const out: string[] = []
  const steps = Math.round(axis.max / axis.step)
  for (let i = 0; i <= steps; i++) {
    const value = i * axis.step
    const y = svgNumber(sy(value))
    out.push(
      `<line class="grid" x1="${MARGIN.left}" y1="${y}" x2="${svgNumber(MARGIN.left + plotW)}" y2="${y}"/>`,
      `<text class="tick" x="${MARGIN.left - 4}" y="${y}" text-anchor="end" dominant-baseline="middle">` +
        `${escapeXml(tickLabel(value))}</text>`,
    )
  }
  return out
}

function xAxis(xMax: number, sx: (x: number) => number, height: number, label: string): string[] {
  const step = Math.max(1, niceAxis(xMax).step)
  const out: string[] = []
  for (let i = 0; i * step <= xMax; i++) {
    const value = i * step
    out.push(`<text class="tick" x="${svgNumber(sx(value))}" y="${svgNumber(height - 16)}" text-anchor="middle">` +
      `${escapeXml(tickLabel(value))}</text>`)
  }
  out.push(`<text class="axis-label" x="${svgNumber(sx(xMax))}" y="${svgNumber(height - 2)}" text-anchor="end">${escapeXml(label)}</text>`)
  return out
}

/** The threshold's dashed steps: `M`/`H`/`V` commands, breaking the path where the threshold is null. */
function stepPath(
  steps: ReadonlyArray<{ x: number; y: number | null }>, sx: (x: number) => number, sy: (y: number) => number, xMax: number,
): string {
  const parts: string[] = []
  let open = false
  steps.forEach((step, i) => {
    const nextX = steps[i + 1]?.x ?? xMax
    if (step.y === null) {
      open = false
      return
    }
    const y = svgNumber(sy(step.y))
    parts.push(open ? `V${y}` : `M${svgNumber(sx(step.x))} ${y}`)
    parts.push(`H${svgNumber(sx(nextX))}`)
    open = true
  })
  return parts.join(' ')
}
