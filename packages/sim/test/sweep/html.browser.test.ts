/**
 * Issue #10 "Done when": the HTML sweep report opens in Debian's headless Chromium (playwright-core through
 * `executablePath`) offline with no console error and no request, and renders per window one Pareto chart (one
 * circle per ran cell, the front as a path when it has two or more points) and one heat-map per pruner setting
 * (one rect per grid cell, skipped cells hatched); a full-page screenshot is taken. A missing browser FAILS this
 * test (`.ci/run` installs `chromium`).
 */
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { Browser } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { SweepReport } from '../../src/sweep/types.ts'
import { runSim, tempDir } from '../cli/run-sim.ts'
import { openOffline } from '../support/offline-page.ts'

/** What the page showed, per window section (a source string: this package compiles without the DOM library). */
const PROBE = `(() => [...document.querySelectorAll('section.window')].map((s) => ({
  id: s.id,
  paretoCharts: s.querySelectorAll('svg.pareto').length,
  circles: s.querySelectorAll('svg.pareto circle.cell').length,
  paretoCircles: s.querySelectorAll('svg.pareto circle.cell.pareto').length,
  fronts: s.querySelectorAll('svg.pareto path.front').length,
  heatmaps: s.querySelectorAll('svg.heatmap').length,
  heatRects: s.querySelectorAll('svg.heatmap rect.heat').length,
  skippedRects: s.querySelectorAll('svg.heatmap rect.heat.skipped').length,
  sizes: [...s.querySelectorAll('svg')].map((svg) => { const b = svg.getBoundingClientRect(); return [b.width, b.height] }),
})))()`

interface Section {
  id: string
  paretoCharts: number
  circles: number
  paretoCircles: number
  fronts: number
  heatmaps: number
  heatRects: number
  skippedRects: number
  sizes: Array<[number, number]>
}

let tmp: { dir: string; cleanup: () => Promise<void> }
let browser: Browser | undefined

beforeAll(async () => {
  tmp = await tempDir()
})
afterAll(async () => {
  await browser?.close()
  await tmp.cleanup()
})

describe('sim sweep index.html in headless Chromium', () => {
  it('renders a Pareto chart and a heat-map per pruner setting for each window, offline, without errors', async () => {
    const out = join(tmp.dir, 'sweep')
    const run = await runSim([
      'sweep', 'scenarios/smoke/basic-pressure.yaml', '--threshold', '0.5,0.7', '--retain', '0.1,0.6', '--pruner', 'on,off',
      '--window', '1000,2000', '--workers', '1', '--out-dir', out,
    ])
    expect(run.exitCode, run.stderr).toBe(0)
    const report = JSON.parse(await readFile(join(out, 'sweep.json'), 'utf8')) as SweepReport
    const html = await readFile(join(out, 'index.html'), 'utf8')
    expect(html).not.toMatch(/https?:|\b(?:src|srcset|action)\s*=|href\s*=\s*"(?!#)|url\(|@import|<script/i)

    const opened = await openOffline(join(out, 'index.html'))
    browser = opened.browser
    const { page, requests, problems } = opened
    const screenshot = await page.screenshot({ fullPage: true, path: join(out, 'screenshot.png') })
    expect(screenshot.subarray(0, 8).toString('hex')).toBe('89504e470d0a1a0a')
    expect(screenshot.length).toBeGreaterThan(20_000)
    const sections = await page.evaluate(PROBE) as Section[]
    expect(requests).toEqual([])
    expect(problems).toEqual([])

    expect(sections.map((s) => s.id)).toEqual(['window-1000', 'window-2000'])
    for (const section of sections) {
      const window = Number(section.id.slice('window-'.length))
      const cells = report.cells.filter((c) => c.policy.contextWindow === window)
      const ran = cells.filter((c) => c.status === 'ran')
      const pareto = ran.filter((c) => c.pareto === true)
      expect(section).toMatchObject({
        paretoCharts: 1, circles: ran.length, paretoCircles: pareto.length, fronts: pareto.length > 1 ? 1 : 0,
        heatmaps: 2, heatRects: cells.length, skippedRects: cells.filter((c) => c.status === 'skipped').length,
      })
      expect(section.skippedRects).toBe(2) // retain 0.6 ≥ threshold 0.5, pruner on and off (§3.2 rule 7)
      for (const [width, height] of section.sizes) {
        expect(width).toBeGreaterThan(100)
        expect(height).toBeGreaterThan(50)
      }
    }
  }, 60_000)

  it('shows the profiles side by side and a per-rule table, offline, without errors (issue #19)', async () => {
    const out = join(tmp.dir, 'profiles')
    const run = await runSim([
      'sweep', 'scenarios/hardened-pairs/hard-1-faithful.yaml', 'scenarios/hardened-pairs/hard-3-faithful.yaml',
      '--own-policy', '--profile', 'faithful,hardened,failureBackoff,checkpointBudget', '--workers', '1', '--out-dir', out,
    ])
    expect(run.exitCode, run.stderr).toBe(0)
    const opened = await openOffline(join(out, 'index.html'), browser === undefined ? {} : { browser })
    browser = opened.browser
    const { page, requests, problems } = opened
    const seen = await page.evaluate(`(() => ({
      profileHeads: [...document.querySelectorAll('table.profiles th.profile')].map((th) => th.textContent),
      scenarioRows: document.querySelectorAll('table.profiles tr').length,
      ruleRows: [...document.querySelectorAll('table.rules tr')].slice(1).map((tr) => [...tr.cells].slice(0, 2).map((td) => td.textContent).join(' ')),
      own: document.querySelectorAll('p.own-policy').length,
      windows: document.querySelectorAll('section.window').length,
      tableWidth: document.querySelector('table.rules')?.getBoundingClientRect().width ?? 0,
    }))()`) as { profileHeads: string[]; scenarioRows: number; ruleRows: string[]; own: number; windows: number; tableWidth: number }
    expect(requests).toEqual([])
    expect(problems).toEqual([])
    // 8 metrics × the two profiles of the side-by-side table (four profiles: the rules get the per-rule table)
    expect(seen.profileHeads).toEqual(Array.from({ length: 8 }, () => ['faithful', 'hardened']).flat())
    expect(seen.scenarioRows).toBe(2 + 2 + 1) // two head rows, two scenarios, the total
    expect(seen.ruleRows).toEqual(['faithful none', 'hardened all', 'failureBackoff HARD-1', 'checkpointBudget HARD-3'])
    expect(seen).toMatchObject({ own: 1, windows: 0 })
    expect(seen.tableWidth).toBeGreaterThan(300)
    await opened.context.close()
  }, 60_000)
})
