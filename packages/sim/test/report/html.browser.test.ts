/**
 * Issues #9 and #17 "Done when": `sim run … --reporter html` writes an `index.html` that Debian's headless
 * Chromium (driven by playwright-core through `executablePath`) opens offline with no console error and no
 * network request, and whose charts rendered (per scenario one pressure timeline with one circle per request
 * and one marker per compaction/prune/offload event, one cached/uncached bar per request; the invariant
 * matrix). At a 1400 px viewport the page never scrolls sideways — not even with a matrix of 140 scenario
 * columns, which scrolls inside its own box — failed and errored scenarios come first, and every scenario's
 * log, manifest and capture link resolves to a file of the output folder; a screenshot is written.
 *
 * The input is a real catalog slice (`scenarios/smoke`, `scenarios/cache`) run under the deliberately broken
 * example subject (checkpoint provenance reversed: INV-14 fails wherever a checkpoint is written), plus one
 * schema-invalid scenario (an `error` row). One Chromium serves the whole file. A missing browser FAILS this
 * test (`.ci/run` installs `chromium`). No duration is asserted; the timeouts are for a loaded 2-core machine.
 */
import { existsSync } from 'node:fs'
import { mkdir, readFile, stat, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Browser } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { INVARIANT_IDS } from '../../src/checker/types.ts'
import { failedFirst, renderHtml } from '../../src/report/html.ts'
import { runScenario } from '../../src/run/run-scenario.ts'
import type { RunReport, ScenarioArtifacts, ScenarioReport } from '../../src/report/types.ts'
import { REPO_ROOT, runSim, tempDir, type SimRun } from '../cli/run-sim.ts'
import { launchChromium, openOffline } from '../support/offline-page.ts'

/** The viewport of the layout checks (issue #17). */
const VIEWPORT = { width: 1400, height: 900 }
const BROKEN_SUBJECT = `module:${join(REPO_ROOT, 'examples/subject-core-adapter/broken/subject.ts')}`
/** Generous: the run below starts 7 sessions on a machine shared by many processes. */
const RUN_TIMEOUT_MS = 300_000
const PAGE_TIMEOUT_MS = 120_000

/** What the page showed, gathered in one `evaluate`. */
interface Rendered {
  sections: Array<{
    id: string
    status: string
    timelines: number
    points: number
    pressurePaths: number
    pressureLength: number
    thresholds: number
    markers: number
    bars: number
    barRects: number
    svgSizes: Array<[number, number]>
  }>
  summaryStatuses: string[]
  matrixRows: number
  matrixTables: number
  svgTotal: number
}

/**
 * Gathers `Rendered` in the page. A source string, not a function: this package compiles without the DOM
 * library, and a string keeps DOM names out of the type check.
 */
const PROBE = `(() => {
  const statusOf = (root) => root.querySelector('.status').className.replace(/^.*status-/, '')
  const sections = [...document.querySelectorAll('section.scenario')].map((section) => {
    const pressure = [...section.querySelectorAll('svg.line-chart path.pressure')]
    return {
      id: section.id,
      status: statusOf(section),
      timelines: section.querySelectorAll('svg.line-chart').length,
      points: section.querySelectorAll('svg.line-chart circle.point').length,
      pressurePaths: pressure.length,
      pressureLength: pressure.reduce((sum, p) => sum + p.getTotalLength(), 0),
      thresholds: section.querySelectorAll('svg.line-chart path.threshold').length,
      markers: section.querySelectorAll('svg.line-chart line.marker').length,
      bars: section.querySelectorAll('svg.bar-chart g.bar').length,
      barRects: section.querySelectorAll('svg.bar-chart g.bar rect').length,
      svgSizes: [...section.querySelectorAll('svg')].map((svg) => {
        const box = svg.getBoundingClientRect()
        return [box.width, box.height]
      }),
    }
  })
  return {
    sections,
    summaryStatuses: [...document.querySelectorAll('table.summary tr')].slice(1).map(statusOf),
    matrixRows: document.querySelectorAll('table.matrix tr').length,
    matrixTables: document.querySelectorAll('table.matrix').length,
    svgTotal: document.querySelectorAll('svg').length,
  }
})()`

/** The page's layout at its viewport: the page's and each matrix box's scroll and client widths, and every link. */
interface Layout {
  scrollWidth: number
  innerWidth: number
  clientWidth: number
  bodyWidth: number
  boxes: Array<{ scrollWidth: number; clientWidth: number; right: number }>
  links: Array<{ text: string; href: string; section: string | null }>
  anchors: string[]
}

const LAYOUT = `(() => ({
  scrollWidth: document.documentElement.scrollWidth,
  innerWidth: window.innerWidth,
  clientWidth: document.documentElement.clientWidth,
  bodyWidth: document.body.getBoundingClientRect().width,
  boxes: [...document.querySelectorAll('.matrix-box')].map((box) => ({
    scrollWidth: box.scrollWidth, clientWidth: box.clientWidth, right: box.getBoundingClientRect().right,
  })),
  links: [...document.querySelectorAll('a[href]')].filter((a) => !a.getAttribute('href').startsWith('#'))
    .map((a) => ({ text: a.textContent, href: a.href, section: a.closest('section.scenario')?.id ?? null })),
  anchors: [...document.querySelectorAll('a[href^="#"]')].map((a) => a.getAttribute('href').slice(1))
    .filter((id) => document.getElementById(id) === null),
}))()`

let tmp: { dir: string; cleanup: () => Promise<void> }
let browser: Browser | undefined
let out: string
let run: SimRun
let report: RunReport

beforeAll(async () => {
  tmp = await tempDir()
  browser = await launchChromium()
  // A schema-invalid scenario: an `error` row among the failures.
  const bad = join(tmp.dir, 'bad', 'bad-seed.yaml')
  await mkdir(join(tmp.dir, 'bad'))
  await writeFile(bad, 'name: bad-seed\nseed: x\n')
  out = join(tmp.dir, 'slice')
  run = await runSim([
    'run', join(REPO_ROOT, 'scenarios/smoke/*.yaml'), join(REPO_ROOT, 'scenarios/cache/*.yaml'), bad,
    '--subject', BROKEN_SUBJECT, '--out-dir', out, '--reporter', 'html',
  ])
  report = JSON.parse(await readFile(join(out, 'report.json'), 'utf8')) as RunReport
}, RUN_TIMEOUT_MS)
afterAll(async () => {
  await browser?.close()
  await tmp?.cleanup()
})

/** The browser launched in `beforeAll`. */
function theBrowser(): Browser {
  if (browser === undefined) throw new Error('Chromium did not launch (see beforeAll)')
  return browser
}

describe('sim run --reporter html in headless Chromium', () => {
  it('ran a slice with failed, passed and errored scenarios (the input of the page tests)', () => {
    // 2 (input error: the invalid scenario) outranks 1 (failed scenarios).
    expect(run.exitCode, run.stderr).toBe(2)
    expect(run.stderr).toContain('index.html')
    expect(report.summary).toMatchObject({ total: 9, error: 1 })
    expect(report.summary.failed).toBeGreaterThan(0)
    expect(report.summary.passed).toBeGreaterThan(0)
    // Run order interleaves them, so failed-first is a real reordering.
    const statuses = report.scenarios.map((s) => s.status)
    expect(statuses.indexOf('passed')).toBeLessThan(statuses.lastIndexOf('failed'))
  })

  it('renders offline with no console error, one timeline per scenario that ran and counts matching the report', async () => {
    const html = await readFile(join(out, 'index.html'), 'utf8')
    expect(html).not.toMatch(/https?:|\b(?:src|srcset|action)\s*=|url\(|@import/i)
    const { context, page, requests, problems } = await openOffline(join(out, 'index.html'), { browser: theBrowser() })
    try {
      // Scripts are off in this context: the page needs none; `evaluate` still runs the test's probe.
      const rendered = await page.evaluate(PROBE) as Rendered
      expect(requests).toEqual([])
      expect(problems).toEqual([])
      const shown = failedFirst(report.scenarios)
      const ran = shown.filter((s) => s.timeline !== undefined)
      // The invalid scenario and the skipped ones (the example subject lacks anthropicWire) have no timeline.
      expect(report.summary.skipped).toBe(1)
      expect(ran.length).toBe(report.scenarios.length - 1 - report.summary.skipped)
      expect(rendered.svgTotal).toBe(2 * ran.length)
      // One matrix per scenario folder: smoke, cache and the invalid scenario's.
      expect(rendered.matrixTables).toBe(3)
      expect(rendered.matrixRows).toBe(3 * (INVARIANT_IDS.length + 1))
      expect(rendered.sections.map((s) => s.id)).toEqual(shown.map((_, i) => `s-${i + 1}`))
      shown.forEach((scenario, i) => {
        const section = rendered.sections[i]
        expect(section).toBeDefined()
        if (section === undefined) return
        expect(section.status).toBe(scenario.status)
        const timeline = scenario.timeline
        if (timeline === undefined) {
          expect(['error', 'skipped']).toContain(scenario.status)
          expect(section.svgSizes).toEqual([])
          return
        }
        const requestCount = scenario.counts?.requests ?? -1
        expect(section.timelines).toBe(1)
        expect(section.points).toBe(requestCount)
        expect(section.pressurePaths).toBe(1)
        expect(section.pressureLength).toBeGreaterThan(0)
        expect(section.thresholds).toBe(timeline.points.some((p) => p.thresholdTokens !== null) ? 1 : 0)
        expect(section.markers).toBe(timeline.markers.length)
        expect(timeline.markers.filter((m) => m.kind === 'compaction-start').length).toBe(scenario.counts?.brackets)
        // One bar (a cached and an uncached rect) per captured request.
        expect(scenario.cache?.requests.length).toBe(requestCount)
        expect(section.bars).toBe(requestCount)
        expect(section.barRects).toBe(2 * requestCount)
        for (const [width, height] of section.svgSizes) {
          expect(width).toBeGreaterThan(100)
          expect(height).toBeGreaterThan(50)
        }
      })
      // basic-pressure fails (its checkpoint) and is the first failure in run order: section 1, one bracket, a threshold line.
      expect(shown[0]?.name).toBe('basic-pressure')
      expect(rendered.sections[0]).toMatchObject({ status: 'failed', markers: 2, thresholds: 1 })
    } finally {
      await context.close()
    }
  }, PAGE_TIMEOUT_MS)

  it('at 1400 px: no sideways scroll, failed and errored first, links to existing artifacts, and a screenshot', async () => {
    const { context, page, problems } = await openOffline(join(out, 'index.html'), { browser: theBrowser(), viewport: VIEWPORT })
    try {
      const layout = await page.evaluate(LAYOUT) as Layout
      const rendered = await page.evaluate(PROBE) as Rendered
      expect(problems).toEqual([])
      expect(layout.innerWidth).toBe(VIEWPORT.width)
      expect(layout.scrollWidth).toBeLessThanOrEqual(layout.innerWidth)
      // The page uses the width it has: the body spans the viewport but a vertical scroll bar (no fixed page width).
      expect(layout.bodyWidth).toBe(layout.clientWidth)
      expect(layout.clientWidth).toBeGreaterThan(VIEWPORT.width - 30)
      for (const box of layout.boxes) expect(box.right).toBeLessThanOrEqual(VIEWPORT.width)

      const rank = (status: string): number => (status === 'failed' || status === 'error' ? 0 : 1)
      for (const statuses of [rendered.summaryStatuses, rendered.sections.map((s) => s.status)]) {
        expect(statuses.length).toBe(report.scenarios.length)
        expect(statuses.map(rank)).toEqual(statuses.map(rank).toSorted((a, b) => a - b))
        expect(statuses.filter((s) => rank(s) === 0).length).toBe(report.summary.failed + report.summary.error)
      }

      // Every `#` link has its target; every other link is a scenario artifact that exists in the output folder.
      expect(layout.anchors).toEqual([])
      const withArtifacts = report.scenarios.filter((s): s is ScenarioReport & { artifacts: ScenarioArtifacts } => s.artifacts !== undefined)
      expect(withArtifacts.length).toBe(report.scenarios.length - 1 - report.summary.skipped)
      // Three links (log, manifest, capture) in the summary table and three in the scenario's section.
      expect(layout.links.length).toBe(6 * withArtifacts.length)
      for (const link of layout.links) {
        expect(link.href.startsWith('file://'), link.href).toBe(true)
        const path = fileURLToPath(link.href)
        expect(path.startsWith(`${out}/`), path).toBe(true)
        expect((await stat(path)).isFile(), path).toBe(true)
      }
      const expected = withArtifacts.flatMap((s) => [s.artifacts.log, s.artifacts.manifest, s.artifacts.requests]).map((p) => join(out, p))
      expect(new Set(layout.links.map((l) => fileURLToPath(l.href)))).toEqual(new Set(expected))
      expect(layout.links.filter((l) => l.section !== null).map((l) => l.text).slice(0, 3)).toEqual(['log', 'manifest', 'capture'])

      const screenshot = await page.screenshot({ fullPage: true, path: join(tmp.dir, 'report-1400.png') })
      expect(screenshot.subarray(0, 8).toString('hex')).toBe('89504e470d0a1a0a')
      expect(screenshot.length).toBeGreaterThan(30_000)
      expect((await stat(join(tmp.dir, 'report-1400.png'))).size).toBe(screenshot.length)
    } finally {
      await context.close()
    }
  }, PAGE_TIMEOUT_MS)

  it('a matrix of 140 scenarios in one folder scrolls inside its own box, and the page still does not scroll sideways', async () => {
    // The slice's scenarios, 20 times over, in one folder: ~140 matrix columns, far wider than 1400 px.
    const many = Array.from({ length: 20 }, (_, copy) => report.scenarios.map((s) => ({
      ...s, name: `${s.name}-${copy}`, file: `scenarios/wide/${copy}-${s.file.split('/').at(-1) ?? ''}`,
    }))).flat()
    const wide: RunReport = { ...report, scenarios: many }
    const file = join(out, 'wide.html')
    await writeFile(file, renderHtml(wide))
    const { context, page, problems } = await openOffline(file, { browser: theBrowser(), viewport: VIEWPORT })
    try {
      const layout = await page.evaluate(LAYOUT) as Layout
      expect(problems).toEqual([])
      expect(layout.scrollWidth).toBeLessThanOrEqual(layout.innerWidth)
      expect(layout.boxes.length).toBe(1)
      const box = layout.boxes[0]
      expect(box).toBeDefined()
      if (box === undefined) return
      // The overflow is the box's own: its content is wider than the box, and the box ends inside the viewport.
      expect(box.scrollWidth).toBeGreaterThan(box.clientWidth)
      expect(box.right).toBeLessThanOrEqual(VIEWPORT.width)
      // The links still point at the (shared) artifacts, which exist.
      for (const link of layout.links.slice(0, 6)) expect(existsSync(fileURLToPath(link.href)), link.href).toBe(true)
    } finally {
      await context.close()
    }
  }, PAGE_TIMEOUT_MS)

  it('issue #15: a scenario with drift draws the provider line next to the meter line, one provider circle per conversation request', async () => {
    // The slice's first scenario with a timeline, given a provider count per request (as a route's tokenizer would give) and its drift.
    const base = report.scenarios.find((s) => s.timeline !== undefined)
    expect(base).toBeDefined()
    if (base?.timeline === undefined) return
    const points = base.timeline.points.map((p, i) => ({ ...p, providerTokens: Math.round(p.tokens * (1.1 + 0.01 * i)) }))
    const conversation = points.filter((p) => p.purpose === 'conversation').length
    const drifting: ScenarioReport = {
      ...base, timeline: { ...base.timeline, points }, drift: { requests: conversation, meanPct: 11, maxPct: 12, maxRequest: 0, minPct: 10 },
    }
    const file = join(out, 'drift.html')
    await writeFile(file, renderHtml({ ...report, scenarios: [drifting] }))
    const { context, page, problems } = await openOffline(file, { browser: theBrowser(), viewport: VIEWPORT })
    try {
      const drawn = await page.evaluate(`(() => {
        const chart = document.querySelector('section.scenario svg.line-chart')
        const length = (selector) => [...chart.querySelectorAll(selector)].reduce((sum, p) => sum + p.getTotalLength(), 0)
        const stroke = (selector) => getComputedStyle(chart.querySelector(selector)).stroke
        return {
          meter: length('path.pressure'), provider: length('path.line-provider'),
          providerCircles: chart.querySelectorAll('circle.overlay-provider').length, meterCircles: chart.querySelectorAll('circle.point').length,
          meterStroke: stroke('path.pressure'), providerStroke: stroke('path.line-provider'),
          caption: document.querySelector('section.scenario figcaption').textContent,
        }
      })()`) as { meter: number; provider: number; providerCircles: number; meterCircles: number; meterStroke: string; providerStroke: string; caption: string }
      expect(problems).toEqual([])
      expect(drawn.meter).toBeGreaterThan(0)
      expect(drawn.provider).toBeGreaterThan(0)
      expect(drawn.meterCircles).toBe(points.length)
      expect(drawn.providerCircles).toBe(conversation)
      // Two distinguishable lines: different strokes.
      expect(drawn.providerStroke).not.toBe(drawn.meterStroke)
      expect(drawn.caption).toContain('provider count (route tokenizer), meter vs provider drift: max +12.00%')
    } finally {
      await context.close()
    }
  }, PAGE_TIMEOUT_MS)

  it('issue #20: a scenario with probes draws its retention curve, a solid and a dashed line per kind, one circle per cycle', async () => {
    // A short generated session with planted probes and a small window: several compaction cycles in seconds.
    const file = join(tmp.dir, 'retention.yaml')
    await writeFile(file, [
      'name: retention-html', 'seed: 7', 'provider: { wire: openai, model: m, contextWindow: 6000 }',
      'transcript:', '  generate:', '    generator: coding-session', '    turns: 40',
      '    params: { stepsPerTurn: [2, 3], toolCallsPerStep: 1, hugeOutputChance: 0, probes: 12 }', '',
    ].join('\n'))
    const scenario = await runScenario(file, { outDir: join(tmp.dir, 'retention') })
    const retention = scenario.retention
    expect(scenario.status, scenario.error).toBe('passed')
    expect(retention?.cycles).toBeGreaterThanOrEqual(3)
    if (retention === undefined) return
    const page = join(out, 'retention.html')
    await writeFile(page, renderHtml({ ...report, scenarios: [scenario] }))
    const opened = await openOffline(page, { browser: theBrowser(), viewport: VIEWPORT })
    try {
      const drawn = await opened.page.evaluate(`(() => {
        const chart = document.querySelector('section.scenario svg.series-chart')
        const kinds = ['recall', 'artifact', 'continuation', 'decision']
        const length = (selector) => [...chart.querySelectorAll(selector)].reduce((sum, p) => sum + p.getTotalLength(), 0)
        return {
          solid: kinds.map((k) => length('path.series-' + k + ':not(.series-dashed)')),
          dashed: kinds.map((k) => chart.querySelectorAll('path.series-' + k + '.series-dashed').length),
          circles: kinds.map((k) => chart.querySelectorAll('circle.series-' + k).length),
          strokes: kinds.map((k) => getComputedStyle(chart.querySelector('path.series-' + k)).stroke),
          box: [chart.getBoundingClientRect().width, chart.getBoundingClientRect().height],
          caption: chart.closest('figure').querySelector('figcaption').textContent,
        }
      })()`) as { solid: number[]; dashed: number[]; circles: number[]; strokes: string[]; box: [number, number]; caption: string }
      expect(opened.problems).toEqual([])
      expect(opened.requests).toEqual([])
      retention.kinds.forEach((kind, i) => {
        expect(kind.probes).toBe(3)
        expect(drawn.solid[i], kind.kind).toBeGreaterThan(0)
        expect(drawn.dashed[i], kind.kind).toBe(1)
        const values = [...kind.curve, ...kind.keptCurve].filter((v) => v !== null).length
        expect(drawn.circles[i], kind.kind).toBe(values)
      })
      expect(new Set(drawn.strokes).size).toBe(4)
      expect(drawn.box[0]).toBeGreaterThan(100)
      expect(drawn.box[1]).toBeGreaterThan(50)
      expect(drawn.caption).toContain(`retention over ${retention.cycles} cycles`)
    } finally {
      await opened.context.close()
    }
  }, RUN_TIMEOUT_MS)
})
