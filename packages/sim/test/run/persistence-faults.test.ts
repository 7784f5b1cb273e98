/**
 * §13.5 persistence faults in `sim run`: the flush faults FAULT-64/65 (the world's `rejectFlush` hook on the
 * engine's manual durability checkpoint) and FAULT-66 (a `manual: prune` action calling the pruner with no
 * turn open), plus the catalog scenarios of FAULT-60…66 run through the real runner.
 */
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runScenario } from '../../src/run/run-scenario.ts'
import { scenarioTranscript } from '../../src/run/transcript.ts'
import { createWorld } from '../../src/run/world.ts'
import { ScenarioError } from '../../src/scenario/errors.ts'
import { resolveScenario } from '../../src/scenario/resolve.ts'
import type { FaultConfig, ManualAction, Scenario } from '../../src/scenario/types.ts'
import { requiredFeatures } from '../../src/subjects/features.ts'
import { REPO_ROOT, tempDir } from '../cli/run-sim.ts'

const FILE = '/work/scenarios/faults/x.yaml'

let tmp: { dir: string; cleanup: () => Promise<void> }
beforeAll(async () => { tmp = await tempDir() })
afterAll(async () => { await tmp.cleanup() })

function scenarioOf(faults: FaultConfig[], manual: ManualAction[] = [], pruner = true): Scenario {
  return {
    name: 'persistence', seed: 1, provider: { wire: 'openai', model: 'mock', contextWindow: 4000 },
    transcript: { inline: { turns: [{ user: 'hi', steps: [{ reply: 'hello' }] }, { user: 'again', steps: [{ reply: 'ok' }] }] } },
    faults, manual, ...(pruner ? { pruner: true } : {}),
  }
}

async function worldOf(faults: FaultConfig[]): Promise<ReturnType<typeof createWorld>> {
  const scenario = resolveScenario(scenarioOf(faults), { file: FILE })
  return createWorld({ scenario, transcript: await scenarioTranscript(scenario, 1), now: () => 0 })
}

function issuesOf(raw: Scenario): unknown[] {
  try {
    resolveScenario(raw, { file: FILE })
  } catch (err) {
    if (err instanceof ScenarioError) return err.issues.map((i) => [i.path, i.reason])
    throw err
  }
  return []
}

describe('flush faults (FAULT-64, FAULT-65)', () => {
  it('FAULT-64 fails the occurrence-th flush after a committed bracket only, and counts it', async () => {
    const world = await worldOf([{ id: 'flush', kind: 'FAULT-64', when: { occurrence: 2 } }])
    const reject = world.hooks.rejectFlush
    expect(reject).toBeDefined()
    const verdicts = [{ failed: false }, { failed: true }, { failed: false }, { failed: false }].map((b) => reject?.(b) ?? null)
    expect(verdicts).toEqual([null, null, 'FAULT-64 storage fault: the session durability checkpoint failed after a committed bracket', null])
    expect(world.fired().get('flush')).toBe(1)
  })

  it('FAULT-65 fails a flush after a failed bracket only; without flush faults there is no hook', async () => {
    const world = await worldOf([{ id: 'f', kind: 'FAULT-65' }])
    expect(world.hooks.rejectFlush?.({ failed: false })).toBeNull()
    expect(world.hooks.rejectFlush?.({ failed: true })).toBe('FAULT-65 storage fault: the session durability checkpoint failed after a failed bracket')
    expect((await worldOf([{ kind: 'FAULT-60' }])).hooks.rejectFlush).toBeUndefined()
  })

  it('a flush fault that never matched names the flushes the engine made', async () => {
    const world = await worldOf([{ id: 'f', kind: 'FAULT-64' }])
    world.hooks.rejectFlush?.({ failed: true })
    expect(world.unfired().map((u) => u.message)).toEqual([
      'fault f (FAULT-64, when occurrence=1) never fired: the engine flushed after 0 successful manual brackets; occurrence 1 needs 1',
    ])
  })

  it('needs the flushFaults feature', () => {
    const scenario = resolveScenario(scenarioOf([{ kind: 'FAULT-65' }]), { file: FILE })
    expect(requiredFeatures(scenario).map((n) => [n.feature, n.because])).toEqual([['flushFaults', 'fault FAULT-65']])
  })
})

describe('pruning with no open turn (FAULT-66)', () => {
  it('resolves a manual prune action and needs the manualPrune feature', () => {
    const scenario = resolveScenario(scenarioOf([{ kind: 'FAULT-66' }], [{ action: 'prune', afterTurn: 1 }]), { file: FILE })
    expect(scenario.manual).toEqual([{ kind: 'prune', afterTurn: 1 }])
    expect(requiredFeatures(scenario).map((n) => n.feature)).toEqual(['manualPrune'])
  })

  it('refuses FAULT-66 without a prune action, a prune action without a pruner, and one after the last turn', () => {
    expect(issuesOf(scenarioOf([{ kind: 'FAULT-66' }]))).toEqual([
      ['/faults/0/kind', 'FAULT-66 needs a `manual: [{action: prune, afterTurn: n}]` action that calls the pruner with no turn open'],
    ])
    expect(issuesOf(scenarioOf([], [{ action: 'prune', afterTurn: 3 }], false))).toEqual([
      ['/manual/0/afterTurn', 'is after the last turn (the transcript has 2)'],
      ['/manual/0/action', 'calls the pruner, but the scenario loads none (set `pruner`)'],
    ])
  })
})

describe('the §13.5 catalog scenarios on the reference subject', () => {
  const cases = [
    ['fault-60-end-append-rejected', 'commit: FAULT-60 storage fault: compaction/end not persisted'],
    ['fault-61-end-error-append-rejected', 'commit: failed to close compaction'],
    ['fault-62-summary-append-rejected', 'commit: '],
    ['fault-63-checkpoint-append-rejected', 'commit: '],
    ['fault-64-flush-fails-after-success', 'persistence: compaction committed but the flush failed: FAULT-64 storage fault'],
    ['fault-65-flush-fails-after-failure', 'manual compactNow after turn 1 failed: summary: '],
    ['fault-66-prune-without-open-turn', 'manual prune after turn 1 failed: pruneSession needs an open turn'],
  ] as const
  it.each(cases)('%s passes with its warning', async (name, warning) => {
    const report = await runScenario(join(REPO_ROOT, 'scenarios/faults', `${name}.yaml`), { outDir: join(tmp.dir, name), cwd: REPO_ROOT })
    expect([report.status, report.violations, report.expectations.filter((e) => !e.passed)]).toEqual(['passed', [], []])
    expect(report.warnings?.some((w) => w.includes(warning))).toBe(true)
  })

  it('FAULT-66 logs no compaction/prune although the pruner had a candidate', async () => {
    const out = join(tmp.dir, 'f66')
    const report = await runScenario(join(REPO_ROOT, 'scenarios/faults/fault-66-prune-without-open-turn.yaml'), { outDir: out, cwd: REPO_ROOT })
    const log = await readFile(join(out, report.artifacts?.log ?? 'missing'), 'utf8')
    const types = log.trim().split('\n').map((l) => (JSON.parse(l) as { type: string }).type)
    expect(types).not.toContain('compaction/prune')
    expect(log).toContain('export async function loadConfig') // the > 1000-character result the pass would prune
  })

  it('a FAULT-64 in place of FAULT-65 never fires: the flush after a failed bracket is not a committed one', async () => {
    const text = await readFile(join(REPO_ROOT, 'scenarios/faults/fault-65-flush-fails-after-failure.yaml'), 'utf8')
    const file = join(tmp.dir, 'f65-as-64.yaml')
    await writeFile(file, text.replace('- kind: FAULT-65', '- id: wrong\n  kind: FAULT-64'))
    const report = await runScenario(file, { outDir: join(tmp.dir, 'f65-as-64'), cwd: tmp.dir })
    expect(report.status).toBe('failed')
    expect(report.expectations.filter((e) => !e.passed).map((e) => [e.name, e.actual])).toEqual([
      ['faults.wrong', 'fault wrong (FAULT-64, when occurrence=1) never fired: the engine flushed after 0 successful manual brackets; occurrence 1 needs 1'],
    ])
  })
})
