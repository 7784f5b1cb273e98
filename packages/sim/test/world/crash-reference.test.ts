/**
 * End to end (§13.4, issue 6 "crashes are real"): the reference subject runs a scenario in a real child
 * (`crash-child.ts`) and is SIGKILLed right after a named event is fsync'ed; the test then resumes the
 * session in-process over msw (`resume: true`: restore + continue with the next turn) and checks that every
 * acknowledged event survived byte for byte and that the final log passes `checkLog` under the run's
 * manifest. msw only in this file (never nock).
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Seq, type RunManifest } from '@compaction-sim/core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { checkLog } from '../../src/checker/run.ts'
import { mountMsw } from '../../src/provider/mount-msw.ts'
import { scenarioTranscript } from '../../src/run/transcript.ts'
import { createWorld, worldRoutes } from '../../src/run/world.ts'
import { loadScenario } from '../../src/scenario/load.ts'
import { resolveScenario, type ResolvedScenario } from '../../src/scenario/resolve.ts'
import { runReferenceSession } from '../../src/subjects/reference.ts'
import type { SubjectSessionResult } from '../../src/subjects/types.ts'
import { CLOCK_ORIGIN_MS } from '../../src/world/clock.ts'
import { runCrashingSession, type CrashingSessionResult, type CrashPoint } from '../../src/world/crash.ts'

const SCENARIO = fileURLToPath(new URL('./support/crash-four-turns.yaml', import.meta.url))
const SEED = 7

interface Line { seq: number; type: string; data: { turn?: number; reason?: { kind: string } } }

let dir: string
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'crash-reference-'))
})
afterAll(async () => {
  await rm(dir, { recursive: true, force: true })
})

function lines(text: string): string[] {
  return text.split('\n').filter((l) => l !== '')
}

/** Kills a child at `point`; asserts the kill and that the log holds exactly the acknowledged events. Returns the log lines. */
async function crashAt(logPath: string, point: CrashPoint, resume = false): Promise<{ crash: CrashingSessionResult; crashed: string[] }> {
  const before = resume ? lines(await readFile(logPath, 'utf8')) : []
  const crash = await runCrashingSession({ scenarioFile: SCENARIO, seed: SEED, logPath, crashPoint: point, resume })
  expect(crash.error, crash.stderr).toBeNull()
  expect(crash).toMatchObject({ killed: true, signal: 'SIGKILL', exitCode: null })
  expect(crash.durableAcked.map((a) => a.seq)).toEqual(crash.durableAcked.map((_, i) => before.length + i))
  const crashed = lines(await readFile(logPath, 'utf8'))
  // The child appended nothing after the crash point, and left earlier lines untouched.
  expect(crashed.slice(0, before.length)).toEqual(before)
  expect(crashed.slice(before.length).map((l) => JSON.parse(l) as Line).map(({ seq, type }) => ({ seq, type }))).toEqual(crash.durableAcked)
  return { crash, crashed }
}

/** Restores and continues the session in-process, as the runner does after a crash. */
async function resumeInProcess(scenario: ResolvedScenario, logPath: string): Promise<SubjectSessionResult> {
  const transcript = await scenarioTranscript(scenario, SEED)
  const world = createWorld({ scenario, transcript, now: () => CLOCK_ORIGIN_MS })
  const mount = mountMsw(world.provider, 'http://crash-e2e.mock.sim.test/v1')
  try {
    return await runReferenceSession({ scenario, transcript, logPath, baseUrl: mount.baseURL, seed: SEED, resume: true, hooks: world.hooks })
  } finally {
    mount.close()
  }
}

/** `checkLog` under the run manifest (§1.1) of this scenario, with the crash points recorded. */
async function violations(scenario: ResolvedScenario, logPath: string, crashSeqs: number[]): Promise<unknown[]> {
  const manifest: RunManifest = {
    scenario: scenario.name,
    compaction: structuredClone(scenario.policyConfig) as RunManifest['compaction'],
    routes: worldRoutes(scenario),
    faults: [],
    crashes: crashSeqs.map((s) => ({ afterSeq: Seq(s) })),
  }
  const report = await checkLog(logPath, { dialect: 'seed', manifest })
  if (report.kind !== 'report') throw report.error
  expect(report.internalErrors).toEqual([])
  return report.violations
}

describe('a reference session killed in a child, then resumed in-process', () => {
  it('FAULT-50: killed after compaction/start — no acknowledged event lost, turn closed, next turn runs, checkLog clean', async () => {
    const logPath = join(dir, 'fault-50.jsonl')
    const { crash, crashed } = await crashAt(logPath, { afterEvent: 'compaction/start', occurrence: 1 })
    expect(crash.durableAcked.at(-1)?.type).toBe('compaction/start')
    const crashedTurn = crashed.map((l) => JSON.parse(l) as Line).findLast((e) => e.type === 'turn/start')?.data.turn ?? 0
    expect(crashedTurn).toBe(3)

    const scenario = resolveScenario(await loadScenario(SCENARIO), { file: SCENARIO })
    const resumed = await resumeInProcess(scenario, logPath)
    expect(resumed.startedAfterTurn).toBe(3)
    expect(resumed.outcomes.map((o) => [o.turn, o.reason.kind])).toEqual([[4, 'completed']])

    const final = lines(await readFile(logPath, 'utf8'))
    expect(final.slice(0, crashed.length)).toEqual(crashed)
    const after = final.slice(crashed.length).map((l) => JSON.parse(l) as Line)
    // §11.4: the open turn is closed as interrupted (no compaction/* repair), then the end-seed, then turn 4.
    expect(after.slice(0, 3).map((e) => [e.type, e.data.reason?.kind ?? e.data.turn ?? null])).toEqual([
      ['turn/end', 'interrupted'], ['session/end-seed', null], ['turn/start', 4],
    ])
    expect(final.filter((l) => l.includes('"type":"session/end-seed"'))).toHaveLength(1)
    // The orphan is stale: the next pressure check opens a new bracket in turn 4 (§11.1).
    expect(after.filter((e) => e.type === 'compaction/start').map((e) => e.data.turn)).toEqual([4])
    expect(await violations(scenario, logPath, [crashed.length - 1])).toEqual([])
  }, 300_000)

  it('FAULT-57: a resumed child killed right after its end-seed — the next restore writes no second one', async () => {
    const logPath = join(dir, 'fault-57.jsonl')
    const first = await crashAt(logPath, { afterEvent: 'compaction/start', occurrence: 1 })
    const second = await crashAt(logPath, { afterEvent: 'session/end-seed', occurrence: 1 }, true)
    expect(second.crash.durableAcked.map((a) => a.type)).toEqual(['turn/end', 'session/end-seed'])

    const scenario = resolveScenario(await loadScenario(SCENARIO), { file: SCENARIO })
    const resumed = await resumeInProcess(scenario, logPath)
    expect(resumed.outcomes.map((o) => o.turn)).toEqual([4])
    const final = lines(await readFile(logPath, 'utf8'))
    expect(final.slice(0, second.crashed.length)).toEqual(second.crashed)
    expect(final.filter((l) => l.includes('"type":"session/end-seed"'))).toHaveLength(1)
    expect((JSON.parse(final[second.crashed.length] as string) as Line).type).toBe('turn/start')
    expect(await violations(scenario, logPath, [first.crashed.length - 1, second.crashed.length - 1])).toEqual([])
  }, 300_000)
})
