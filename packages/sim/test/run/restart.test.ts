/**
 * Issue #16 clean stop and restart (`restart:`): the session stops through the subject's API — after a turn, or
 * right after a `compaction/start` is durable — and a new lifecycle restores the log in the same process (§11.4):
 * one end-seed, a `resume` header, a stale orphan that blocks nothing (INV-45). Byte-identical across two runs;
 * bad stop points are refused at load, naming the field; a subject without the `restart` feature is skipped.
 */
import { readFile, readdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runScenarios } from '../../src/run/run-scenario.ts'
import { ScenarioError } from '../../src/scenario/errors.ts'
import { loadScenario } from '../../src/scenario/load.ts'
import { resolveRestarts } from '../../src/scenario/resolve-sessions.ts'
import { resolveScenario } from '../../src/scenario/resolve.ts'
import type { Scenario } from '../../src/scenario/types.ts'
import { referenceSubject } from '../../src/subjects/reference.ts'
import { REPO_ROOT, tempDir } from '../cli/run-sim.ts'

const AFTER_TURN = join(REPO_ROOT, 'scenarios/restart/restart-after-turn.yaml')
const IN_BRACKET = join(REPO_ROOT, 'scenarios/restart/restart-in-bracket.yaml')

let tmp: { dir: string; cleanup: () => Promise<void> }
beforeAll(async () => { tmp = await tempDir() })
afterAll(async () => { await tmp.cleanup() })

type Event = { seq: number; type: string; data: Record<string, unknown> }
const eventsOf = async (path: string): Promise<Event[]> =>
  (await readFile(path, 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as Event)

describe('restart: a clean stop after a turn', () => {
  it('stops after turn 1, restores with one end-seed and no repair, and the new loop logs resume', async () => {
    const out = join(tmp.dir, 'after')
    const report = await runScenarios([AFTER_TURN], { outDir: out, cwd: REPO_ROOT })
    const s = report.scenarios[0]
    expect(s?.status, JSON.stringify(s?.expectations.filter((e) => !e.passed))).toBe('passed')
    expect(s?.expectations.find((e) => e.name === 'restart[0]')).toMatchObject({ passed: true })
    const events = await eventsOf(join(out, 'restart--restart-after-turn.jsonl'))
    const endSeeds = events.filter((e) => e.type === 'session/end-seed')
    expect(endSeeds.length).toBe(1)
    const at = endSeeds[0]?.seq ?? -1
    // A clean stop between turns leaves nothing to repair: the end-seed directly follows turn 1's turn/end.
    expect(events[at - 1]).toMatchObject({ type: 'turn/end', data: { turn: 1, reason: { kind: 'completed' } } })
    const headers = events.filter((e) => e.type === 'request/header').map((e) => [e.seq > at, e.data['reason']])
    expect(headers.filter(([after]) => after === true)[0]).toEqual([true, 'resume'])
    expect(headers[0]).toEqual([false, 'initial'])
  }, 120_000)
})

describe('restart: a clean stop inside a bracket', () => {
  it('leaves the start open, repairs the turn without compaction events, and the stale orphan blocks nothing', async () => {
    const out = join(tmp.dir, 'bracket')
    const report = await runScenarios([IN_BRACKET], { outDir: out, cwd: REPO_ROOT })
    const s = report.scenarios[0]
    expect(s?.status, JSON.stringify(s?.expectations.filter((e) => !e.passed))).toBe('passed')
    expect(s?.violations).toEqual([])
    const events = await eventsOf(join(out, 'restart--restart-in-bracket.jsonl'))
    const starts = events.filter((e) => e.type === 'compaction/start')
    expect(starts.length).toBe(2)
    const seed = events.find((e) => e.type === 'session/end-seed')?.seq ?? -1
    // Nothing after the stop point's start reached the file: the repair (turn/end interrupted) and the end-seed follow it.
    expect(events.slice((starts[0]?.seq ?? 0) + 1, seed + 1).map((e) => e.type)).toEqual(['turn/end', 'session/end-seed'])
    expect(events.slice(seed).filter((e) => e.type.startsWith('compaction/')).map((e) => e.type))
      .toEqual(['compaction/start', 'compaction/summary', 'compaction/end'])
    // The capture holds no request the stopped lifecycle dispatched after its stop point.
    const capture = (await readFile(join(out, 'restart--restart-in-bracket.requests.jsonl'), 'utf8')).trim().split('\n')
      .map((l) => JSON.parse(l) as { logRevisionAtDispatch: number; purpose: string })
    expect(capture.filter((r) => r.logRevisionAtDispatch > (starts[0]?.seq ?? 0) && r.logRevisionAtDispatch <= seed)).toEqual([])
  }, 120_000)

  it('is byte-identical across two runs with the same seed', async () => {
    const [x, y] = [join(tmp.dir, 'x'), join(tmp.dir, 'y')]
    const first = await runScenarios([IN_BRACKET, AFTER_TURN], { outDir: x, cwd: REPO_ROOT })
    const second = await runScenarios([IN_BRACKET, AFTER_TURN], { outDir: y, cwd: REPO_ROOT })
    expect(JSON.stringify(second)).toBe(JSON.stringify(first))
    for (const f of (await readdir(x)).sort()) expect(await readFile(join(y, f), 'utf8'), f).toBe(await readFile(join(x, f), 'utf8'))
  }, 120_000)
})

describe('restart: stop points and subjects', () => {
  it('fails the scenario when a stop point is never reached, and restores no further', async () => {
    const raw = await loadScenario(IN_BRACKET)
    const file = join(tmp.dir, 'unreached.yaml')
    await writeFile(file, JSON.stringify({ ...raw, name: 'unreached', restart: [{ inBracket: 1 }, { inBracket: 5 }] }))
    const out = join(tmp.dir, 'unreached')
    const report = await runScenarios([file], { outDir: out, cwd: tmp.dir })
    const s = report.scenarios[0]
    expect(s?.status).toBe('failed')
    expect(s?.expectations.filter((e) => e.name.startsWith('restart')).map((e) => [e.name, e.passed, e.actual])).toEqual([
      ['restart[0]', true, 'stopped with 56 events in the log'],
      ['restart[1]', false, 'never reached: the session ended before it'],
    ])
    const events = await eventsOf(join(out, 'unreached.jsonl'))
    expect(events.filter((e) => e.type === 'session/end-seed').length).toBe(1) // no restore after the run that ended
  })

  it('refuses descending, doubled and too-late stop points and crash faults beside them, naming the field', async () => {
    const raw = await loadScenario(AFTER_TURN)
    const scenario = resolveScenario(raw, { file: AFTER_TURN })
    const refused = (doc: Scenario): string[] => {
      try {
        resolveRestarts(doc, resolveScenario(doc, { file: AFTER_TURN }))
      } catch (err) {
        if (err instanceof ScenarioError) return err.issues.map((i) => `${i.path}: ${i.reason}`)
        throw err
      }
      return []
    }
    expect(resolveRestarts(raw, scenario)).toEqual([{ kind: 'afterTurn', turn: 1 }])
    expect(refused({ ...raw, restart: [{ afterTurn: 2 }, { afterTurn: 1 }] })).toEqual(['/restart/1/afterTurn: afterTurn 1 does not follow the previous afterTurn 2'])
    expect(refused({ ...raw, restart: [{ afterTurn: 3 }] })).toEqual(['/restart/0/afterTurn: afterTurn 3 leaves no turn to resume: the transcript has 3 turn(s)'])
    expect(refused({ ...raw, restart: [{ afterTurn: 1, inBracket: 1 }] })).toEqual(['/restart/0: a restart point gives exactly one of afterTurn and inBracket'])
    expect(refused({ ...raw, faults: [{ kind: 'FAULT-50' }] })[0]).toContain('/faults/0/kind: FAULT-50 is a crash fault')
  })

  it('skips the scenario for a subject without the restart feature, naming it', async () => {
    const subject = { ...referenceSubject, name: 'no-restart', features: ['manualCompaction'] as const }
    const report = await runScenarios([AFTER_TURN], { outDir: join(tmp.dir, 'skip'), cwd: REPO_ROOT, subject: { ...subject, features: [...subject.features] } })
    expect(report.scenarios[0]?.status).toBe('skipped')
    expect(report.scenarios[0]?.skipReason).toContain('restart (a clean stop and restore (restart:))')
  })
})
