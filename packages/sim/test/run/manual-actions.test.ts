/**
 * Manual actions in a run (issue #16, "Bugs, each with a regression scenario"): the regression scenarios of the
 * catalog, run end to end on the reference subject, with what each bug used to do spelled out.
 *
 * - FAULT-22 on a manual `compactNow` summary call (§13.2, §7.10): the world aborted the finished turn's signal,
 *   the hang never ended and Node exited 13 with the log ending at `compaction/start`.
 * - Manual actions dropped silently: `afterTurn: 0` never fired, and a `compactNow` due after the crash turn never
 *   ran after the restore (§11.4). Now both run; one whose bracket the crashed process began is not run twice.
 */
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { LogEvent } from '@compaction-sim/core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { ScenarioReport } from '../../src/report/types.ts'
import { runScenario } from '../../src/run/run-scenario.ts'
import { manualBracketsAfterLastTurn } from '../../src/subjects/reference.ts'
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

/** `type` and, for turn and bracket events, `turn` and `sourceCommandId`, of every event from `from` on. */
function shape(events: readonly LogEvent[], from: number): string[] {
  return events.filter((e) => e.seq >= from && /^(turn\/|compaction\/(start|end)|session\/)/.test(e.type)).map((e) => {
    const d = e.data as { turn?: number | null; sourceCommandId?: string }
    return [e.type, d.turn === undefined ? '' : ` turn=${String(d.turn)}`, d.sourceCommandId === undefined ? '' : ` ${d.sourceCommandId}`].join('')
  })
}

describe('manual actions are never dropped', () => {
  it('afterTurn 0 runs compactNow before the first turn: the empty session has nothing to compact, and a warning says so', async () => {
    const { report, events } = await run('scenarios/policy/compact-now-before-first-turn.yaml')
    expect(report.status).toBe('passed')
    expect(report.warnings).toEqual(['manual compactNow before the first turn: nothing to compact (§3.7: null, nothing written)'])
    expect(shape(events, 0)).toEqual([
      'turn/start turn=1', 'turn/end turn=1',
      'compaction/start turn=null cmd-after-turn-1', 'compaction/end turn=null cmd-after-turn-1',
      'turn/start turn=2', 'turn/end turn=2',
    ])
  })

  it('a compactNow due after the crash turn runs after the restore, before the next turn', async () => {
    const { report, events } = await run('scenarios/crash/fault-50-manual-compact-now-at-crash-turn.yaml')
    expect(report.status).toBe('passed')
    const endSeed = events.find((e) => e.type === 'session/end-seed')?.seq ?? -1
    expect(shape(events, endSeed)).toEqual([
      'session/end-seed',
      'compaction/start turn=null cmd-after-crash', 'compaction/end turn=null cmd-after-crash',
      'turn/start turn=3', 'turn/end turn=3',
    ])
  })

  it('a compactNow whose bracket began before the crash is not run again after the restore', async () => {
    const { report, events } = await run('scenarios/crash/fault-50-in-manual-bracket.yaml')
    expect(report.status).toBe('passed')
    expect(shape(events, 0).slice(2)).toEqual([
      'compaction/start turn=null cmd-compact-1', 'session/end-seed', 'turn/start turn=2', 'turn/end turn=2',
    ])
    expect(report.warnings).toBeUndefined()
  })

  it('counts the manual brackets after the last turn/start (the whole log before the first turn)', () => {
    const ev = (type: string, data: Record<string, unknown> = {}): LogEvent => ({ seq: 0, time: 0, type, data }) as unknown as LogEvent
    const manual = ev('compaction/start', { turn: null })
    const owned = ev('compaction/start', { turn: 1 })
    expect(manualBracketsAfterLastTurn([])).toBe(0)
    expect(manualBracketsAfterLastTurn([manual])).toBe(1)
    expect(manualBracketsAfterLastTurn([manual, ev('turn/start'), owned, ev('turn/end'), manual, manual])).toBe(2)
    expect(manualBracketsAfterLastTurn([manual, manual, ev('turn/start'), owned])).toBe(0)
  })
})
