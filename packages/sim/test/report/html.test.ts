/**
 * The HTML report (issues #9 and #17): the hand-rolled SVG charts are snapshot-tested on a small fixed input;
 * the page is byte-deterministic, fetches nothing and links only to each scenario's artifacts (relative,
 * percent-encoded), shows failed and errored scenarios first, escapes every report string, embeds the report
 * as inert JSON, and renders the invariant matrix (one table per scenario folder) and the optional
 * path-coverage table from the data.
 */
import { describe, expect, it } from 'vitest'
import { INVARIANT_IDS } from '../../src/checker/types.ts'
import { artifactHref, failedFirst, htmlText, inlineJson, renderHtml } from '../../src/report/html.ts'
import { lineChartSvg, niceAxis, stackedBarChartSvg, svgNumber, tickLabel } from '../../src/report/svg.ts'
import type { RunReport, ScenarioReport, ScenarioTimeline } from '../../src/report/types.ts'
import { errored, failed, mixedReport, passed, reportOf, skipped } from './sample-report.ts'

const timeline: ScenarioTimeline = {
  events: 40,
  points: [
    { request: 0, purpose: 'conversation', seq: 4, tokens: 900, ratio: 0.09, thresholdTokens: 5000 },
    { request: 1, purpose: 'conversation', seq: 15, tokens: 5200, ratio: 0.52, thresholdTokens: 5000 },
    { request: 2, purpose: 'compaction', seq: 17, tokens: 5200, ratio: 0.52, thresholdTokens: 5000 },
    { request: 3, purpose: 'conversation', seq: 30, tokens: 2100, ratio: 0.21, thresholdTokens: 5000 },
  ],
  markers: [
    { kind: 'compaction-start', seq: 16, compactionId: 'c1' }, { kind: 'compaction-end', seq: 20, compactionId: 'c1' },
    { kind: 'prune', seq: 25 }, { kind: 'compaction-start', seq: 33, compactionId: 'c2' },
  ],
}

/** The sample report's passed scenario with a timeline. */
const charted: ScenarioReport = { ...passed, timeline }

/** Elements of `tag` with `class` containing `name` in `html`. */
const count = (html: string, tag: string, name: string): number =>
  (html.match(new RegExp(`<${tag} class="[^"]*\\b${name}\\b[^"]*"`, 'g')) ?? []).length

describe('svg charts', () => {
  it('draws a line chart: grid, bracket span, dashed threshold steps, markers, the line and one circle per point', () => {
    const svg = lineChartSvg({
      title: 'Pressure <of> "x"',
      height: 120,
      xMax: 20,
      xLabel: 'log seq',
      yLabel: 'tokens',
      points: [
        { x: 2, y: 100, kind: 'conversation', label: 'r0' },
        { x: 10, y: 450, kind: 'compaction', label: 'r1 & more' },
      ],
      threshold: [{ x: 0, y: 400 }, { x: 10, y: null }],
      end: { x: 20, y: 200, label: 'end' },
      markers: [{ x: 9, kind: 'compaction-start', label: 'compaction/start #9' }],
      spans: [{ from: 9, to: 12, kind: 'bracket', label: 'bracket' }],
    })
    expect(svg).toMatchInlineSnapshot(`
      "<svg class="chart line-chart" viewBox="0 0 640 120" width="640" height="120" role="img">
      <title>Pressure &lt;of&gt; &quot;x&quot;</title>
      <line class="grid" x1="60" y1="90" x2="628" y2="90"/>
      <text class="tick" x="56" y="90" text-anchor="end" dominant-baseline="middle">0</text>
      <line class="grid" x1="60" y1="76" x2="628" y2="76"/>
      <text class="tick" x="56" y="76" text-anchor="end" dominant-baseline="middle">100</text>
      <line class="grid" x1="60" y1="62" x2="628" y2="62"/>
      <text class="tick" x="56" y="62" text-anchor="end" dominant-baseline="middle">200</text>
      <line class="grid" x1="60" y1="48" x2="628" y2="48"/>
      <text class="tick" x="56" y="48" text-anchor="end" dominant-baseline="middle">300</text>
      <line class="grid" x1="60" y1="34" x2="628" y2="34"/>
      <text class="tick" x="56" y="34" text-anchor="end" dominant-baseline="middle">400</text>
      <line class="grid" x1="60" y1="20" x2="628" y2="20"/>
      <text class="tick" x="56" y="20" text-anchor="end" dominant-baseline="middle">500</text>
      <text class="tick" x="60" y="104" text-anchor="middle">0</text>
      <text class="tick" x="202" y="104" text-anchor="middle">5</text>
      <text class="tick" x="344" y="104" text-anchor="middle">10</text>
      <text class="tick" x="486" y="104" text-anchor="middle">15</text>
      <text class="tick" x="628" y="104" text-anchor="middle">20</text>
      <text class="axis-label" x="628" y="118" text-anchor="end">log seq</text>
      <text class="axis-label" x="4" y="10">tokens</text>
      <rect class="span span-bracket" x="315.6" y="20" width="85.2" height="70"><title>bracket</title></rect>
      <path class="threshold" d="M60 34 H344"><title>threshold</title></path>
      <line class="marker marker-compaction-start" x1="315.6" y1="20" x2="315.6" y2="90"><title>compaction/start #9</title></line>
      <path class="pressure" d="M116.8 76 L344 27 L628 62"/>
      <circle class="point point-conversation" cx="116.8" cy="76" r="3"><title>r0</title></circle>
      <circle class="point point-compaction" cx="344" cy="27" r="3"><title>r1 &amp; more</title></circle>
      </svg>"
    `)
  })

  it('draws a stacked bar chart: one g.bar per bar with one rect per segment (zero-height kept), and a legend', () => {
    const svg = stackedBarChartSvg({
      title: 'Cache',
      height: 100,
      yLabel: 'prompt tokens',
      bars: [
        { label: '0', kinds: ['conversation'], title: 'r0', segments: [{ value: 0, kind: 'cached' }, { value: 1200, kind: 'uncached' }] },
        { label: '1', kinds: ['compaction', 'mismatch'], title: 'r1', segments: [{ value: 1024, kind: 'cached' }, { value: 300, kind: 'uncached' }] },
      ],
      legend: [{ kind: 'cached', text: 'cached' }, { kind: 'uncached', text: 'uncached' }],
    })
    expect(svg).toMatchInlineSnapshot(`
      "<svg class="chart bar-chart" viewBox="0 0 640 100" width="640" height="100" role="img">
      <title>Cache</title>
      <line class="grid" x1="60" y1="70" x2="628" y2="70"/>
      <text class="tick" x="56" y="70" text-anchor="end" dominant-baseline="middle">0</text>
      <line class="grid" x1="60" y1="53.3" x2="628" y2="53.3"/>
      <text class="tick" x="56" y="53.3" text-anchor="end" dominant-baseline="middle">500</text>
      <line class="grid" x1="60" y1="36.7" x2="628" y2="36.7"/>
      <text class="tick" x="56" y="36.7" text-anchor="end" dominant-baseline="middle">1000</text>
      <line class="grid" x1="60" y1="20" x2="628" y2="20"/>
      <text class="tick" x="56" y="20" text-anchor="end" dominant-baseline="middle">1500</text>
      <text class="axis-label" x="4" y="10">prompt tokens</text>
      <g class="bar bar-conversation"><title>r0</title>
      <rect class="cached" x="102.6" y="70" width="198.8" height="0"/>
      <rect class="uncached" x="102.6" y="30" width="198.8" height="40"/>
      <text class="tick" x="202" y="84" text-anchor="middle">0</text>
      </g>
      <g class="bar bar-compaction bar-mismatch"><title>r1</title>
      <rect class="cached" x="386.6" y="35.9" width="198.8" height="34.1"/>
      <rect class="uncached" x="386.6" y="25.9" width="198.8" height="10"/>
      <text class="tick" x="486" y="84" text-anchor="middle">1</text>
      </g>
      <rect class="legend-swatch cached" x="180" y="3" width="10" height="8"/><text class="legend" x="194" y="10">cached</text>
      <rect class="legend-swatch uncached" x="240" y="3" width="10" height="8"/><text class="legend" x="254" y="10">uncached</text>
      </svg>"
    `)
  })

  it('rounds coordinates to one decimal without -0 and rejects non-finite ones', () => {
    expect([svgNumber(1.26), svgNumber(-0.01), svgNumber(3), svgNumber(2.449)]).toEqual(['1.3', '0', '3', '2.4'])
    expect(() => svgNumber(Number.NaN)).toThrow(/finite/)
  })

  it('picks round axes (1, 2, 5 × 10^k, at most 5 steps) and short tick labels', () => {
    expect([niceAxis(0), niceAxis(7), niceAxis(452), niceAxis(102_400)]).toEqual([
      { max: 1, step: 1 }, { max: 8, step: 2 }, { max: 500, step: 100 }, { max: 150_000, step: 50_000 },
    ])
    expect([tickLabel(800), tickLabel(12_500), tickLabel(1_500_000), tickLabel(0.25)]).toEqual(['800', '12.5k', '1.5M', '0.25'])
  })
})

describe('renderHtml', () => {
  const report = reportOf([charted, failed, mixedReport.scenarios[2] as ScenarioReport, mixedReport.scenarios[3] as ScenarioReport])

  it('is byte-deterministic, fetches nothing and links only to #anchors and the artifacts of the report', () => {
    const html = renderHtml(report)
    expect(renderHtml(structuredClone(report))).toBe(html)
    expect(html.startsWith('<!doctype html>\n')).toBe(true)
    expect(html.endsWith('</html>\n')).toBe(true)
    expect(html).not.toMatch(/https?:|\/\/[a-z]|\b(?:src|srcset|action)\s*=|url\(|@import/i)
    expect(html).toContain(`content="default-src 'none'; style-src 'unsafe-inline'; img-src data:"`)
    const hrefs = [...html.matchAll(/href="([^"]*)"/g)].map((m) => m[1] ?? '')
    const artifacts = Object.values(passed.artifacts ?? {})
    expect(new Set(hrefs.filter((h) => !h.startsWith('#')))).toEqual(new Set(artifacts))
    // Twice each: the summary table's files column and the scenario's own section.
    for (const path of artifacts) expect(hrefs.filter((h) => h === path).length).toBe(2)
  })

  it('shows failed and errored scenarios first, then the rest, each group in run order, numbered in that order', () => {
    const order = failedFirst([passed, failed, skipped, errored, { ...passed, name: 'second-pass' }, { ...failed, name: 'second-fail' }])
    expect(order.map((s) => `${s.status}:${s.name}`)).toEqual([
      'failed:threshold-edge', 'error:bad', 'failed:second-fail', 'passed:basic', 'skipped:threshold-edge', 'passed:second-pass',
    ])
    const html = renderHtml(reportOf([passed, skipped, failed, errored]))
    const summaryRows = html.split('\n').filter((line) => line.startsWith('<tr><td class="num"><a href="#s-'))
    const numberAndStatus = /^<tr><td class="num"><a href="#s-(\d+)">\d+<\/a><\/td><td><span class="status status-(\w+)">/
    expect(summaryRows.map((r) => numberAndStatus.exec(r)?.slice(1))).toEqual([
      ['1', 'failed'], ['2', 'error'], ['3', 'passed'], ['4', 'skipped'],
    ])
    const sections = /<section class="scenario" id="(s-\d+)">\n<h3>\d+\. <span class="status status-(\w+)"/g
    expect([...html.matchAll(sections)].map((m) => m.slice(1)))
      .toEqual([['s-1', 'failed'], ['s-2', 'error'], ['s-3', 'passed'], ['s-4', 'skipped']])
    expect(html).toContain('<p class="muted">Failed and errored scenarios first (2), then the rest in run order; files:')
    expect(renderHtml(reportOf([passed, skipped]))).toContain('<p class="muted">In run order (none failed or errored); files:')
    // The embedded report keeps the run order.
    const json = /<script type="application\/json" id="report-data">(.*)<\/script>/.exec(html)?.[1] ?? ''
    expect((JSON.parse(json) as RunReport).scenarios.map((s) => s.status)).toEqual(['passed', 'skipped', 'failed', 'error'])
  })

  it('links each scenario\'s log, manifest and capture relatively, percent-encoded; a rooted path gets no link', () => {
    expect(artifactHref('smoke--basic.jsonl')).toBe('smoke--basic.jsonl')
    expect(artifactHref('a b/c#d?.jsonl')).toBe('a%20b/c%23d%3F.jsonl')
    expect(artifactHref('../up/x.jsonl')).toBe('../up/x.jsonl')
    expect(artifactHref('javascript:alert(1)')).toBe('javascript%3Aalert(1)')
    expect([artifactHref('/etc/passwd'), artifactHref('C:/x.jsonl'), artifactHref('')]).toEqual([null, null, null])
    const odd: ScenarioReport = { ...failed, artifacts: { log: 'x y.jsonl', manifest: '/abs/x.manifest.json', requests: 'q"<.jsonl' } }
    const html = renderHtml(reportOf([odd]))
    expect(html.split('\n').find((line) => line.startsWith('<tr><td class="num">'))?.replace(/^.*<td>(<span class="artifacts">)/, '$1'))
      .toMatchInlineSnapshot(`
        "<span class="artifacts"><a href="x%20y.jsonl" title="x y.jsonl">log</a> · <span title="/abs/x.manifest.json">manifest</span> · <a href="q%22%3C.jsonl" title="q&quot;&lt;.jsonl">capture</a></span></td></tr>"
      `)
    expect(renderHtml(reportOf([errored]))).toContain('<td><span class="muted">–</span></td></tr>')
  })

  it('draws one timeline for each scenario with a timeline: a circle per request, a marker per event, bracket spans by id', () => {
    const html = renderHtml(report)
    expect(count(html, 'svg', 'line-chart')).toBe(1)
    expect(count(html, 'circle', 'point')).toBe(timeline.points.length)
    expect(count(html, 'circle', 'point-compaction')).toBe(1)
    expect(count(html, 'line', 'marker')).toBe(timeline.markers.length)
    expect(count(html, 'rect', 'span-bracket')).toBe(1)
    expect(count(html, 'rect', 'span-stale')).toBe(1)
    expect(html).toContain('<title>compaction bracket c1 #16–#20</title>')
    expect(count(html, 'path', 'threshold')).toBe(1)
    expect(html).toContain('threshold 5000 tokens (§3.3)')
    expect(renderHtml(reportOf([passed]))).not.toContain('<svg')
  })

  it('renders the invariant matrix per scenario folder: a row per §12 id, ✗n where a scenario violated it, · where not checked', () => {
    const html = renderHtml(report)
    // Shown order: failed (policy), errored (.), passed (smoke), skipped (policy): folders in order of first appearance.
    const title = /<div class="matrix-title">([^<]*) <span class="muted">\(([^)]*)\)<\/span><\/div>/g
    const titles = [...html.matchAll(title)].map((m) => m.slice(1))
    expect(titles).toEqual([['scenarios/policy', '2 scenarios'], ['.', '1 scenario'], ['scenarios/smoke', '1 scenario']])
    expect(html.match(/<div class="matrix-box">\n<div class="matrix-title">[^\n]*\n<table class="matrix">/g)?.length).toBe(3)
    const heads = html.split('\n').filter((line) => line.startsWith('<tr><th class="inv">invariant</th>'))
    expect(heads).toEqual([
      '<tr><th class="inv">invariant</th><th>fails</th><th class="problem" title="threshold-edge"><a href="#s-1">1</a></th>' +
        '<th title="threshold-edge"><a href="#s-4">4</a></th></tr>',
      '<tr><th class="inv">invariant</th><th>fails</th><th class="problem" title="bad"><a href="#s-2">2</a></th></tr>',
      '<tr><th class="inv">invariant</th><th>fails</th><th title="basic"><a href="#s-3">3</a></th></tr>',
    ])
    const rows = html.split('\n').filter((line) => line.startsWith('<tr><th class="inv">INV-'))
    expect(rows.length).toBe(3 * INVARIANT_IDS.length)
    const cellsOf = (id: string): string[][] => rows.filter((r) => r.startsWith(`<tr><th class="inv">${id}<`))
      .map((r) => [...r.matchAll(/<td class="(pass|fail|none)"[^>]*>([^<]*)</g)].map((m) => m[2] ?? ''))
    // INV-12: failed ✗1 and skipped · (policy), errored · (.), passed ✓ (smoke).
    expect(cellsOf('INV-12')).toEqual([['✗1', '·'], ['·'], ['✓']])
    expect(rows.filter((r) => r.startsWith('<tr><th class="inv">INV-12<')).map((r) => /<td class="num">(\d+)<\/td>/.exec(r)?.[1]))
      .toEqual(['1', '0', '0'])
    // INV-01 is not among the failed scenario's selected invariants (INV-12, INV-30).
    expect(cellsOf('INV-01')).toEqual([['·', '·'], ['·'], ['✓']])
  })

  it('draws one cached/uncached bar per request of a cache section, outlining mismatches, with the aggregates', () => {
    const row = {
      index: 0, purpose: 'conversation', cacheKey: 'mock/m', rejected: false, prompt: 1300, cached: 1024, uncached: 276, written: 0,
      divergence: null, source: null, cause: 'none', causeKind: 'none', recomputed: 0, output: 20, cost: 0.001,
    } as const
    const totals = { requests: 3, prompt: 3900, cached: 2048, uncached: 1852, reuseRatio: 2048 / 3900 }
    const cache: NonNullable<ScenarioReport['cache']> = {
      contract: 'openai', deviation: 'none', granularityTokens: 128, ttlMs: null,
      price: { tableVersion: 1, tableDate: '2025-06-01', entry: 'openai/gpt-4.1', currency: 'USD' },
      requests: [
        row, { ...row, index: 1, cached: 0, uncached: 1300, cause: 'replacement@1', causeKind: 'replacement' },
        { ...row, index: 2, purpose: 'compaction', reported: { cached: 0, uncached: 1300, written: 0 }, mismatch: true },
      ],
      overall: totals, conversation: totals, compaction: { ...totals, requests: 1, reuseRatio: null }, seriesBoundaries: 0,
      recomputedByCompaction: 1024, summaryCost: 0.002, tokensSaved: 900, savedCost: 0.0001, recomputeCost: 0.0005, netSaving: -0.0024,
      mismatches: 1, scriptedUsage: 0,
    }
    const html = renderHtml(reportOf([{ ...charted, cache }]))
    expect(count(html, 'svg', 'bar-chart')).toBe(1)
    expect(count(html, 'g', 'bar')).toBe(3)
    expect(count(html, 'g', 'bar-mismatch')).toBe(1)
    expect(count(html, 'g', 'bar-compaction')).toBe(1)
    expect(count(html, 'rect', 'cached')).toBe(3 + 1)
    expect(html).toContain('reuse 52.5% overall, 52.5% conversation, – compaction; 1024 tokens recomputed because of compaction')
    expect(html).toContain('<title>request 1 (conversation): prompt 1300, predicted 0 cached / 1300 uncached, cause replacement@1;')
  })

  it('shows path coverage only when some scenario has paths', () => {
    expect(renderHtml(report)).not.toContain('Path coverage')
    const paths = [{ path: 'pressure/compact', reached: 2 }, { path: 'overflow/retry', reached: 0 }]
    const withPaths = reportOf([{ ...charted, paths }, failed])
    const html = renderHtml(withPaths)
    expect(html).toContain('<h2 id="paths">Path coverage</h2>')
    expect(html).toContain('1 of 2 paths reached.')
    // The failed scenario is #1, so the charted one is #2.
    expect(html).toContain('<tr><td><code>pressure/compact</code></td><td class="num">2</td><td>2</td></tr>')
    expect(html).toContain('<tr><td><code>overflow/retry</code></td><td class="num">0</td><td>–</td></tr>')
    expect(html).toContain('<p class="scenario-paths">Paths reached (1 of 2): <code>pressure/compact</code> ×2</p>')
  })

  it('escapes every report string and embeds the report as inert JSON that parses back', () => {
    const hostile: ScenarioReport = {
      ...failed,
      name: '</section><script src="x"></script><img onerror=alert(1)>',
      violations: [{ id: 'INV-12', seq: 1, message: "it's <b>bold</b> & \u001b[31m</script><!--" }],
    }
    const hostileReport: RunReport = reportOf([hostile])
    const html = renderHtml(hostileReport)
    expect(html).not.toContain('<img')
    expect(html).not.toContain('<b>')
    expect(html.match(/<script/g)).toEqual(['<script'])
    expect(html.match(/<\/script>/g)).toEqual(['</script>'])
    expect(html).toContain('&lt;/section&gt;&lt;script src=&quot;x&quot;&gt;')
    expect(html).toContain('it&#39;s &lt;b&gt;bold&lt;/b&gt; &amp; \\u001b[31m')
    const json = /<script type="application\/json" id="report-data">(.*)<\/script>/.exec(html)?.[1] ?? ''
    expect(JSON.parse(json)).toEqual(hostileReport)
  })

  it('inlineJson and htmlText escape what could end a block or hide text', () => {
    const value = { a: '</script><!-- & \u2028' }
    expect(inlineJson(value)).toBe('{"a":"\\u003c/script\\u003e\\u003c!-- \\u0026 \\u2028"}')
    expect(JSON.parse(inlineJson(value))).toEqual(value)
    expect(htmlText('a\tb\n<\u0000>')).toBe('a\tb\n&lt;\\u0000&gt;')
  })
})
