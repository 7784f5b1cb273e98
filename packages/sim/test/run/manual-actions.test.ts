/**
 * Manual actions in a run (issue #16, "Bugs, each with a regression scenario"): the regression scenarios of the
 * catalog, run end to end on the reference subject, with what each bug used to do spelled out.
 *
 * - FAULT-22 on a manual `compactNow` summary call (§13.2, §7.10): the world aborted the finished turn's signal,
 *   the hang never ended and Node exited 13 with the log ending at `compaction/start`.
 */
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { LogEvent } from '@compaction-sim/core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { ScenarioReport } from '../../src/report/types.ts'
import { runScenario } from '../../src/run/run-scenario.ts'
import { REPO_ROOT, tempDir } from '../cli/run-sim.ts'

let tmp: { dir: string; cleanup: () => Promise<void> }
beforeAll(async () => { tmp = await tempDir() })
afterAll(async () => { await tmp.cleanup() })

/** Runs a catalog scenario into its own folder; returns its report and its session log. */
async function run(file: string): Promise<{ report: ScenarioReport; events: LogEvent[] }> {
  const outDir = join(tmp.dir, file.replace(/\W+/g, '-'))
  const report = await runScenario(join(REPO_ROOT, file), { outDir })
  const log = report.artifacts === undefined ? '' : await readFile(join(outDir, report.artifacts.log), 'utf8')
  return { report, events: log.trim().split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as LogEvent) }
}

/** The events of the log from the first `compaction/start` on, by type, up to the next `turn/start`. */
function bracketOf(events: readonly LogEvent[]): string[] {
  const start = events.findIndex((e) => e.type === 'compaction/start')
  const next = events.findIndex((e, i) => i > start && e.type === 'turn/start')
  return events.slice(start, next + 1).map((e) => e.type)
}

describe('FAULT-22 on a manual compactNow summary call', () => {
  it('closes the manual bracket ABORTED, rethrows the caller reason as a warning and runs the next turn', async () => {
    const { report, events } = await run('scenarios/faults/fault-22-manual-compact-now-aborted.yaml')
    expect(report.status).toBe('passed')
    expect(report.faults).toEqual([{ id: 'fault-1', kind: 'FAULT-22', fired: 1 }])
    expect(bracketOf(events)).toEqual(['compaction/start', 'compaction/summary-error', 'compaction/end', 'turn/start'])
    const [start, error, end] = events.filter((e) => e.type.startsWith('compaction/'))
    expect([start?.data, error?.data, end?.data]).toMatchObject([
      { turn: null, sourceCommandId: 'cmd-compact-1' },
      { failure: { code: 'ABORTED' } },
      { turn: null, error: 'request aborted' },
    ])
    expect(report.warnings).toEqual(['manual compactNow after turn 1 failed: ABORTED: the mock provider never answered'])
    expect(report.outcomes?.map((o) => o.kind)).toEqual(['completed', 'completed'])
  })
})
