/**
 * The one harness of the headless-browser tests (issues #9 and #10): finds Debian's `chromium` (a missing
 * browser FAILS the test — `.ci/run` installs it) and opens a report page offline, with JavaScript off, every
 * request other than the page itself recorded and aborted, and console errors/warnings, page errors and failed
 * requests collected, so a test asserts `requests` and `problems` are empty.
 */
import { existsSync } from 'node:fs'
import { pathToFileURL } from 'node:url'
import { chromium, type Browser, type Page } from 'playwright-core'

/** Debian's `chromium` launcher; `CHROMIUM_PATH` overrides. Throws with install instructions when absent. */
export function chromiumPath(): string {
  const candidates = [process.env['CHROMIUM_PATH'], '/usr/bin/chromium', '/usr/bin/chromium-browser']
    .filter((p): p is string => p !== undefined && p !== '')
  const found = candidates.find((p) => existsSync(p))
  if (found === undefined) {
    throw new Error(
      `no Chromium at ${candidates.join(', ')}: install Debian's package (apt-get install -y chromium; .ci/run does it when missing)` +
        ' or set CHROMIUM_PATH',
    )
  }
  return found
}

/** A page loaded offline, with what it tried to fetch and what went wrong while loading. */
export interface OfflinePage {
  browser: Browser
  page: Page
  /** Requests other than the page itself (all aborted). */
  requests: string[]
  /** Console errors and warnings, page errors, failed requests. */
  problems: string[]
}

/** Launches Chromium and loads `file` (an absolute path) offline; the caller closes `browser`. */
export async function openOffline(file: string): Promise<OfflinePage> {
  const browser = await chromium.launch({ executablePath: chromiumPath(), headless: true, args: ['--no-sandbox', '--disable-gpu'] })
  const context = await browser.newContext({ offline: true, viewport: { width: 1200, height: 900 }, javaScriptEnabled: false })
  const page = await context.newPage()
  const url = pathToFileURL(file).href
  const requests: string[] = []
  // Every request but the page itself is recorded and aborted (the route sees file: URLs too).
  await page.route('**', async (route) => {
    if (route.request().url() === url) return route.continue()
    requests.push(route.request().url())
    return route.abort()
  })
  const problems: string[] = []
  page.on('console', (message) => { if (message.type() === 'error' || message.type() === 'warning') problems.push(message.text()) })
  page.on('pageerror', (error) => { problems.push(error.message) })
  page.on('requestfailed', (request) => { if (request.url() !== url) problems.push(`request failed: ${request.url()}`) })
  const response = await page.goto(url, { waitUntil: 'load' })
  if (response !== null && !response.ok()) problems.push(`page load: HTTP ${response.status()}`)
  return { browser, page, requests, problems }
}
