/**
 * The one harness of the headless-browser tests (issues #9 and #10): finds Debian's `chromium` (a missing
 * browser FAILS the test — `.ci/run` installs it) and opens a report page offline, with JavaScript off, every
 * request other than the page itself recorded and aborted, and console errors/warnings, page errors and failed
 * requests collected, so a test asserts `requests` and `problems` are empty. A test file launches one browser
 * (`launchChromium`, in `beforeAll`) and opens each page in a fresh context of it.
 */
import { existsSync } from 'node:fs'
import { pathToFileURL } from 'node:url'
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core'

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
  /** The page's own context (closing it closes the page, not the browser). */
  context: BrowserContext
  page: Page
  /** Requests other than the page itself (all aborted). */
  requests: string[]
  /** Console errors and warnings, page errors, failed requests. */
  problems: string[]
}

/** Launches headless Debian Chromium (no sandbox, no GPU); the caller closes it. One per test file is enough. */
export async function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: chromiumPath(), headless: true, args: ['--no-sandbox', '--disable-gpu'] })
}

/** Options of `openOffline`. */
export interface OpenOfflineOptions {
  /** A browser to open the page in (from `launchChromium`); without one a new browser is launched. */
  browser?: Browser
  /** CSS pixels of the viewport (default 1200 × 900). */
  viewport?: { width: number; height: number }
}

/**
 * Loads `file` (an absolute path) offline in a new context of `options.browser` (or of a newly launched
 * browser); the caller closes `browser` — the result's is the one passed in, when one was.
 */
export async function openOffline(file: string, options: OpenOfflineOptions = {}): Promise<OfflinePage> {
  const browser = options.browser ?? await launchChromium()
  const viewport = options.viewport ?? { width: 1200, height: 900 }
  const context = await browser.newContext({ offline: true, viewport, javaScriptEnabled: false })
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
  return { browser, context, page, requests, problems }
}
