/**
 * Issue #16 `sessions:`: two sessions of one process on one provider world, each judged on its own log; a live
 * orphan in one never blocks the other; the interleaving is decided by virtual time and the seed only, so two runs
 * are byte-identical; the harness trace's lock-scope check (INV-45) and the resolve rules of the key.
 */
import { readFile, readdir } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runScenarios } from '../../src/run/run-scenario.ts'
import { SessionScheduler, lockScopeViolations, sessionSeed } from '../../src/run/sessions.ts'
import { ScenarioError } from '../../src/scenario/errors.ts'
import { loadScenario } from '../../src/scenario/load.ts'
import { resolveSessions } from '../../src/scenario/resolve-sessions.ts'
import type { Scenario } from '../../src/scenario/types.ts'
import { REPO_ROOT, tempDir } from '../cli/run-sim.ts'
import { mergeSeedReports } from '../../src/report/merge.ts'
import { loadModuleSubject } from '../../src/subjects/module.ts'
import { referenceSubject } from '../../src/subjects/reference.ts'
import type { SubjectFeature } from '../../src/subjects/types.ts'

const FILE = join(REPO_ROOT, 'scenarios/sessions/live-orphan-two-sessions.yaml')

let tmp: { dir: string; cleanup: () => Promise<void> }
beforeAll(async () => { tmp = await tempDir() })
afterAll(async () => { await tmp.cleanup() })

/** The events of a JSONL log. */
async function events(path: string): Promise<Array<{ seq: number; type: string; time: number; data: Record<string, unknown> }>> {
  return (await readFile(path, 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as { seq: number; type: string; time: number; data: Record<string, unknown> })
}

describe('sessions: two sessions, a live orphan in one', () => {
  it('passes both logs, with per-session artifacts, and b compacts while a\'s orphan is live', async () => {
    const out = join(tmp.dir, 'one')
    const report = await runScenarios([FILE], { outDir: out, cwd: REPO_ROOT })
    const scenario = report.scenarios[0]
    expect(scenario?.status, JSON.stringify(scenario?.expectations.filter((e) => !e.passed))).toBe('passed')
    expect(scenario?.sessions?.map((s) => [s.name, s.status])).toEqual([['a', 'passed'], ['b', 'passed']])
    expect(scenario?.violations).toEqual([])
    expect(scenario?.faults).toEqual([{ id: 'a.orphan', kind: 'FAULT-60', fired: 1 }])
    const stem = 'sessions--live-orphan-two-sessions'
    expect((await readdir(out)).filter((f) => f.startsWith(stem)).sort()).toEqual([
      `${stem}.a.jsonl`, `${stem}.a.manifest.json`, `${stem}.a.requests.jsonl`, `${stem}.a.world.json`,
      `${stem}.b.jsonl`, `${stem}.b.manifest.json`, `${stem}.b.requests.jsonl`, `${stem}.b.world.json`,
    ])
    const a = await events(join(out, `${stem}.a.jsonl`))
    const b = await events(join(out, `${stem}.b.jsonl`))
    // a: one start, no end (the refused end is the live orphan); b: a complete bracket.
    const aStart = a.find((e) => e.type === 'compaction/start')
    expect(a.filter((e) => e.type === 'compaction/end')).toEqual([])
    const bStart = b.find((e) => e.type === 'compaction/start')
    expect(b.filter((e) => e.type === 'compaction/end').map((e) => e.data['error'])).toEqual([undefined])
    // The scheduler orders by virtual time: b's bracket opens after a's orphan in the run's one timeline.
    expect(aStart !== undefined && bStart !== undefined && bStart.time > aStart.time).toBe(true)
    // Each session got its own ids (derived seeds), and its own manifest names it.
    expect(aStart?.data['compactionId']).not.toEqual(bStart?.data['compactionId'])
    const manifest = JSON.parse(await readFile(join(out, `${stem}.b.manifest.json`), 'utf8')) as { scenario: string; faults: unknown[] }
    expect(manifest.scenario).toBe('scenarios/sessions/live-orphan-two-sessions.yaml#b')
    expect(manifest.faults).toEqual([])
    expect(scenario?.sessions?.[0]?.warnings?.some((w) => w.includes('busy'))).toBe(true)
    expect(scenario?.sessions?.[1]?.warnings ?? []).toEqual([])
  }, 120_000)

  it('is byte-identical across two runs with the same seed', async () => {
    const [x, y] = [join(tmp.dir, 'x'), join(tmp.dir, 'y')]
    const first = await runScenarios([FILE], { outDir: x, cwd: REPO_ROOT })
    const second = await runScenarios([FILE], { outDir: y, cwd: REPO_ROOT })
    expect(JSON.stringify(second)).toBe(JSON.stringify(first))
    const files = (await readdir(x)).sort()
    expect(files.length).toBe(8)
    for (const f of files) expect(await readFile(join(y, f), 'utf8'), f).toBe(await readFile(join(x, f), 'utf8'))
  }, 120_000)
})

describe('sessions: two live brackets at once (slow summary calls)', () => {
  const SLOW = join(REPO_ROOT, 'scenarios/sessions/slow-summary-two-sessions.yaml')

  it('commits one bracket per session with no busy anywhere on the reference subject', async () => {
    const report = await runScenarios([SLOW], { outDir: join(tmp.dir, 'slow'), cwd: REPO_ROOT })
    const s = report.scenarios[0]
    expect(s?.status, JSON.stringify(s?.expectations.filter((e) => !e.passed))).toBe('passed')
    expect(s?.sessions?.map((x) => [x.name, x.counts?.brackets, x.counts?.checkpoints, x.warnings ?? []])).toEqual([
      ['a', 1, 1, []], ['b', 1, 1, []],
    ])
  }, 120_000)

  it('fails a process-wide lock with INV-45 in the session it blocked: the brackets really overlap', async () => {
    const subject = await loadModuleSubject(`module:${join(REPO_ROOT, 'examples/broken/lock-global.ts')}`)
    const report = await runScenarios([SLOW], { outDir: join(tmp.dir, 'slow-broken'), cwd: REPO_ROOT, subject })
    const s = report.scenarios[0]
    expect(s?.status).toBe('failed')
    const blocked = s?.sessions?.filter((x) => x.violations.some((v) => v.id === 'INV-45')) ?? []
    expect(blocked.length).toBe(1)
    expect(blocked[0]?.counts?.brackets).toBe(0)
    expect(s?.violations.every((v) => v.id === 'INV-45' && v.message.startsWith(`session ${blocked[0]?.name ?? ''}: lock scope (harness trace)`))).toBe(true)
  }, 120_000)
})

describe('sessions: subjects and seeds', () => {
  it('skips the scenario for a subject without the sessions feature, naming it', async () => {
    const subject = { ...referenceSubject, name: 'one-session', features: ['manualCompaction', 'appendFaults'] as SubjectFeature[] }
    const report = await runScenarios([FILE], { outDir: join(tmp.dir, 'skip'), cwd: REPO_ROOT, subject })
    expect(report.scenarios[0]?.status).toBe('skipped')
    expect(report.scenarios[0]?.skipReason).toContain('sessions (2 sessions in one run (sessions:))')
  })

  it('a --seeds merge points every session\'s artifacts into its seed folder', async () => {
    const out = join(tmp.dir, 'seed-3')
    const report = await runScenarios([FILE], { outDir: out, cwd: REPO_ROOT, seed: 3 })
    const merged = mergeSeedReports(['scenarios/sessions/live-orphan-two-sessions.yaml'], [{ seed: 3, report }])
    expect(merged.scenarios[0]?.sessions?.map((s) => s.artifacts.log)).toEqual([
      'seed-3/sessions--live-orphan-two-sessions.a.jsonl', 'seed-3/sessions--live-orphan-two-sessions.b.jsonl',
    ])
    expect(report.scenarios[0]?.status).toBe('passed')
  }, 120_000)
})

describe('SessionScheduler', () => {
  it('admits one request at a time, only when every running session waits, smallest virtual time first', async () => {
    const s = new SessionScheduler(['a', 'b'], 1)
    const order: string[] = []
    const a = s.admit('a', 50).then(() => { order.push('a') })
    await new Promise((r) => setImmediate(r))
    expect(order).toEqual([]) // b is still running: nothing is admitted
    const b = s.admit('b', 10).then(() => { order.push('b') })
    await b
    expect(order).toEqual(['b'])
    s.finish('b')
    await a
    expect(order).toEqual(['b', 'a'])
    expect(s.trace()).toEqual(['b@10', 'a@50'])
  })

  it('breaks a virtual-time tie by a seeded order that differs between seeds', async () => {
    const first = async (seed: number): Promise<string> => {
      const s = new SessionScheduler(['a', 'b', 'c'], seed)
      const got: string[] = []
      const all = ['a', 'b', 'c'].map((n) => s.admit(n, 0).then(() => { got.push(n); s.finish(n) }))
      await Promise.all(all)
      return got.join('')
    }
    const orders = new Set<string>()
    for (let seed = 0; seed < 12; seed++) {
      const order = await first(seed)
      expect(await first(seed)).toBe(order) // same seed, same order
      orders.add(order)
    }
    expect(orders.size).toBeGreaterThan(1)
  })

  it('derives distinct session seeds, keeping the run seed for the first', () => {
    expect(sessionSeed(7, 0)).toBe(7)
    expect(sessionSeed(7, 1)).not.toBe(7)
    expect(sessionSeed(7, 1)).toBe(sessionSeed(7, 1))
    expect(sessionSeed(7, 1)).not.toBe(sessionSeed(7, 2))
  })
})

describe('lockScopeViolations (INV-45, harness trace)', () => {
  const starts = new Map([['a', new Map([['cmp-a-6', 33]])], ['b', new Map([['cmp-b-9', 40]])]])
  it('reports a busy naming another session\'s bracket', () => {
    const v = lockScopeViolations('b', ['manual compactNow after turn 3 failed: busy: compaction cmp-a-6 (started at seq 33) is still open'], starts, 50)
    expect(v.map((x) => [x.id, x.seq])).toEqual([['INV-45', 49]])
    expect(v[0]?.message).toContain('session b reported busy because of compaction cmp-a-6, a bracket of session a (its seq 33)')
  })
  it('accepts a busy naming the session\'s own bracket, and other warnings', () => {
    expect(lockScopeViolations('a', ['busy: compaction cmp-a-6 (started at seq 33) is still open', 'summary: not smaller'], starts, 50)).toEqual([])
    expect(lockScopeViolations('b', ['busy: turn 3 is open; a manual compaction runs between turns'], starts, 50)).toEqual([])
  })
})

describe('resolveSessions', () => {
  it('resolves each session with its own keys and refuses duplicates and crash faults, naming the field', async () => {
    const raw = await loadScenario(FILE)
    const sessions = resolveSessions(raw, { file: FILE })
    expect(sessions.map((s) => [s.name, s.scenario.faults.length, s.scenario.manual.length])).toEqual([['a', 1, 2], ['b', 0, 1]])
    const bad: Scenario = structuredClone(raw)
    bad.sessions = [
      { name: 'a', faults: [{ kind: 'FAULT-50' }] },
      { name: 'a', manual: [{ action: 'compactNow', afterTurn: 9 }] },
    ]
    let error: unknown
    try {
      resolveSessions(bad, { file: FILE })
    } catch (err) {
      error = err
    }
    expect(error).toBeInstanceOf(ScenarioError)
    const paths = (error as ScenarioError).issues.map((i) => i.path)
    expect(paths).toContain('/sessions/1/name')
    expect(paths).toContain('/sessions/0/faults/0/kind')
    expect(paths).toContain('/sessions/1/manual/0/afterTurn')
  })
})
