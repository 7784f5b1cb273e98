/**
 * Issue #9 "Done when": `sim run … --reporter html` writes an `index.html` that Debian's headless
 * Chromium (driven by playwright-core through `executablePath`) opens offline with no console error and no
 * network request, and whose charts rendered: per scenario one pressure timeline with one circle per
 * request and one marker per compaction/prune/offload event, and one cached/uncached bar per request;
 * the invariant matrix. A missing browser FAILS this test (`.ci/run` installs `chromium`).
 */
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { Browser } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { INVARIANT_IDS } from '../../src/checker/types.ts'
import type { RunReport } from '../../src/report/types.ts'
import { REPO_ROOT, runSim, tempDir } from '../cli/run-sim.ts'
import { openOffline } from '../support/offline-page.ts'

/** What the page showed, gathered in one `evaluate`. */
interface Rendered {
  sections: Array<{
    id: string
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
  matrixRows: number
  svgTotal: number
}

/**
 * Gathers `Rendered` in the page. A source string, not a function: this package compiles without the DOM
 * library, and a string keeps DOM names out of the type check.
 */
const PROBE = `(() => {
  const sections = [...document.querySelectorAll('section.scenario')].map((section) => {
    const pressure = [...section.querySelectorAll('svg.line-chart path.pressure')]
    return {
      id: section.id,
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
  return { sections, matrixRows: document.querySelectorAll('table.matrix tr').length, svgTotal: document.querySelectorAll('svg').length }
})()`

let tmp: { dir: string; cleanup: () => Promise<void> }
let browser: Browser | undefined

beforeAll(async () => {
  tmp = await tempDir()
})
afterAll(async () => {
  await browser?.close()
  await tmp.cleanup()
})

describe('sim run --reporter html in headless Chromium', () => {
  it('writes index.html that renders offline with no console error, one timeline per scenario and counts matching the report', async () => {
    const out = join(tmp.dir, 'smoke')
    const run = await runSim(['run', join(REPO_ROOT, 'scenarios/smoke/*.yaml'), '--out-dir', out, '--reporter', 'html'])
    expect(run.exitCode).toBe(0)
    expect(run.stderr).toContain('index.html')
    const report = JSON.parse(await readFile(join(out, 'report.json'), 'utf8')) as RunReport
    const html = await readFile(join(out, 'index.html'), 'utf8')
    expect(html).not.toMatch(/https?:|\b(?:src|srcset|action)\s*=|href\s*=\s*"(?!#)|url\(|@import/i)

    const opened = await openOffline(join(out, 'index.html'))
    browser = opened.browser
    const { page, requests, problems } = opened
    const screenshot = await page.screenshot({ fullPage: true })
    expect(screenshot.subarray(0, 8).toString('hex')).toBe('89504e470d0a1a0a')
    expect(screenshot.length).toBeGreaterThan(30_000)

    // Scripts are off in this context: the page needs none; `evaluate` still runs the test's probe.
    const rendered = await page.evaluate(PROBE) as Rendered
    expect(requests).toEqual([])
    expect(problems).toEqual([])
    expect(report.scenarios.length).toBe(3)
    expect(rendered.svgTotal).toBe(2 * report.scenarios.length)
    expect(rendered.matrixRows).toBe(INVARIANT_IDS.length + 1)
    expect(rendered.sections.map((s) => s.id)).toEqual(report.scenarios.map((_, i) => `s-${i + 1}`))
    report.scenarios.forEach((scenario, i) => {
      const section = rendered.sections[i]
      const timeline = scenario.timeline
      expect(timeline).toBeDefined()
      expect(section).toBeDefined()
      if (section === undefined || timeline === undefined) return
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
    // basic-pressure compacts once: its timeline has a bracket's start and end markers and a threshold line.
    expect(rendered.sections[0]).toMatchObject({ markers: 2, thresholds: 1 })
  }, 60_000)
})
