/**
 * Issue #10 progress and interruption: the live TTY line is throttled and cleared, CI gets one line per cell,
 * a pipe gets nothing; Ctrl-C (a real SIGINT to a `sim sweep` process) stops the sweep, writes the partial
 * `sweep.json` marked incomplete with only finished cells, and exits 1.
 */
import { spawn } from 'node:child_process'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createProgress, progressMode } from '../../src/sweep/progress.ts'
import type { SweepCell, SweepReport } from '../../src/sweep/types.ts'
import { validateSweepReport } from '../../src/sweep/validate.ts'
import { REPO_ROOT, tempDir } from '../cli/run-sim.ts'

const cell = (id: string, violations = 0): SweepCell => ({
  index: 0, id, status: 'ran', policy: { thresholdRatio: 0.8, retainRatio: 0.1, pruner: true, contextWindow: 8000 },
  metrics: {
    runs: 1, runsNotPassed: 0, turns: 4, compactions: 2, prunes: 1, failedBrackets: 0, overflowIncidents: 0, pressureMax: 0.8,
    pressureMean: 0.5, summaryPromptTokens: 10, promptTokens: 100, cachedTokens: 50, uncachedTokens: 50, cost: null, violations,
    retention: null,
  },
})

describe('sweep progress', () => {
  it('chooses live on a TTY, lines under CI, nothing otherwise', () => {
    expect([progressMode(true, false), progressMode(true, true), progressMode(false, true), progressMode(false, false)])
      .toEqual(['live', 'lines', 'lines', 'off'])
  })

  it('throttles the live line, counts failures, shows the ETA and clears the line at the end', () => {
    let text = ''
    let now = 0
    const progress = createProgress({ mode: 'live', stderr: { write: (t: string) => { text += t } }, now: () => now, intervalMs: 100 })
    now = 1000
    progress.cell(cell('a'), 1, 4)
    now = 1050
    progress.cell(cell('b', 2), 2, 4) // within 100 ms of the last draw: not drawn
    now = 1500
    progress.cell(cell('c'), 3, 4)
    progress.finish()
    expect(text.split('\r\x1b[2K')).toEqual([
      '', 'sweep: 1/4 cells, 0 with failures, ETA 3s', 'sweep: 3/4 cells, 1 with failures, ETA 1s', '',
    ])
  })

  it('writes one plain line per cell under CI and nothing when off', () => {
    let text = ''
    const lines = createProgress({ mode: 'lines', stderr: { write: (t: string) => { text += t } }, now: () => 0 })
    lines.cell(cell('w8000-t0.8-r0.1-p1'), 1, 2)
    lines.finish()
    expect(text).toBe('[1/2] w8000-t0.8-r0.1-p1 compactions=2 overflow=0 violations=0\n')
    let silent = ''
    const off = createProgress({ mode: 'off', stderr: { write: (t: string) => { silent += t } }, now: () => 0 })
    off.cell(cell('x'), 1, 1)
    off.finish()
    expect(silent).toBe('')
  })
})

describe('sim sweep interrupted by SIGINT', () => {
  let tmp: { dir: string; cleanup: () => Promise<void> }
  beforeAll(async () => {
    tmp = await tempDir()
  })
  afterAll(async () => tmp.cleanup())

  it('writes the partial report marked incomplete and exits 1', async () => {
    const out = join(tmp.dir, 'partial')
    const child = spawn(process.execPath, [
      '--conditions=source', '--import', 'tsx', 'packages/sim/src/cli/bin.ts', 'sweep', 'scenarios/policy/generated-session-pruner.yaml',
      '--threshold', '0.5:0.9:0.05', '--retain', '0.1', '--pruner', 'on', '--window', '6000', '--workers', '1', '--out-dir', out,
    ], { cwd: REPO_ROOT, env: { ...process.env, CI: 'true', NO_COLOR: '1' }, stdio: ['ignore', 'pipe', 'pipe'] })
    let stderr = ''
    let interrupted = false
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString()
      if (!interrupted && /^\[1\/9\] /m.test(stderr)) {
        interrupted = true
        child.kill('SIGINT')
      }
    })
    const code = await new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)))
    expect(interrupted, stderr).toBe(true)
    expect(code, stderr).toBe(1)
    expect(stderr).toContain('interrupted: stopping the sweep and writing the partial report')
    const report = JSON.parse(await readFile(join(out, 'sweep.json'), 'utf8')) as SweepReport
    expect(validateSweepReport(report)).toEqual([])
    expect(report.complete).toBe(false)
    expect(report.cells.length).toBeGreaterThanOrEqual(1)
    expect(report.cells.length).toBeLessThan(9)
    expect(await readFile(join(out, 'sweep.md'), 'utf8')).toContain('**Incomplete:**')
  }, 300_000)
})
