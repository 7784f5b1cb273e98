/**
 * Issue #18: a fired liveness watchdog is an `error` verdict, never a FAIL and never a continuation from the
 * half-written log. `SIM_WATCHDOG_SCALE` shrinks the crash harness's default bounds (5 min) far below a tsx
 * start-up, so the startup watchdog fires for real on a real crash scenario; a bad scale is an input error.
 */
import { readdir } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { runScenario } from '../../src/run/run-scenario.ts'
import { scaledWatchdogMs, watchdogMessage, watchdogScale, WatchdogScaleError, WATCHDOG_SCALE_ENV } from '../../src/world/watchdog.ts'
import { REPO_ROOT, tempDir } from '../cli/run-sim.ts'

const CRASH_SCENARIO = join(REPO_ROOT, 'scenarios/crash/fault-50-after-compaction-start.yaml')
let tmp: { dir: string; cleanup: () => Promise<void> }
const before = process.env[WATCHDOG_SCALE_ENV]

beforeAll(async () => { tmp = await tempDir() })
afterAll(async () => { await tmp.cleanup() })
afterEach(() => {
  if (before === undefined) delete process.env[WATCHDOG_SCALE_ENV]
  else process.env[WATCHDOG_SCALE_ENV] = before
})

describe('the crash harness watchdog decides no verdict', () => {
  it('a startup watchdog that fires makes the scenario error: watchdog, with no log judged', async () => {
    // 300 000 ms × 0.0001 = 30 ms: no child loads sim through tsx that fast.
    process.env[WATCHDOG_SCALE_ENV] = '0.0001'
    const outDir = join(tmp.dir, 'fired')
    const report = await runScenario(CRASH_SCENARIO, { outDir, cwd: REPO_ROOT })
    expect({ status: report.status, errorKind: report.errorKind, error: report.error, violations: report.violations }).toEqual({
      status: 'error', errorKind: 'watchdog', violations: [],
      error: 'watchdog: waited 0.03 s for the crash child to become ready (its ready line on fd 3)',
    })
    expect(report.expectations).toEqual([])
    // Nothing was judged or written from the child's partial log: no manifest, no capture.
    expect((await readdir(outDir)).filter((n) => n.endsWith('.manifest.json') || n.endsWith('.requests.jsonl'))).toEqual([])
  }, 120_000)

  it('a bad SIM_WATCHDOG_SCALE is an input error naming the variable', async () => {
    process.env[WATCHDOG_SCALE_ENV] = 'fast'
    const report = await runScenario(CRASH_SCENARIO, { outDir: join(tmp.dir, 'bad'), cwd: REPO_ROOT })
    expect([report.status, report.errorKind, report.error]).toEqual([
      'error', 'input', 'SIM_WATCHDOG_SCALE="fast": expected a number > 0 and ≤ 1000',
    ])
  }, 120_000)
})

describe('watchdogScale', () => {
  it('defaults to 1, multiplies bounds, and refuses what is not a positive number', () => {
    expect(watchdogScale({})).toBe(1)
    expect(watchdogScale({ [WATCHDOG_SCALE_ENV]: ' ' })).toBe(1)
    expect(scaledWatchdogMs(300_000, { [WATCHDOG_SCALE_ENV]: '2.5' })).toBe(750_000)
    expect(scaledWatchdogMs(3_000_000, { [WATCHDOG_SCALE_ENV]: '1000' })).toBe(2 ** 31 - 1)
    for (const bad of ['0', '-1', 'NaN', 'Infinity', '1001', '2x']) {
      expect(() => watchdogScale({ [WATCHDOG_SCALE_ENV]: bad }), bad).toThrow(WatchdogScaleError)
    }
    expect(watchdogMessage('the child', 300_000)).toBe('watchdog: waited 300 s for the child')
  })
})
