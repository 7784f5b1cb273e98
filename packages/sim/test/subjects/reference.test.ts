/**
 * The reference subject: a session over msw writes a durable log `sim check` accepts, and a session can
 * start from a restored log (§11.4) — the crash harness's continuation — resuming at the turn after the
 * log's last one with the provider's replies aligned to it.
 */
import { copyFile, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { readLog, type RunManifest } from '@compaction-sim/core'
import { checkLog } from '../../src/checker/run.ts'
import { mountMsw, type MswMount } from '../../src/provider/mount-msw.ts'
import { createWorld, worldRoutes } from '../../src/run/world.ts'
import { scenarioTranscript, transcriptFromEvents } from '../../src/run/transcript.ts'
import { loadScenario } from '../../src/scenario/load.ts'
import { resolveScenario, type ResolvedScenario } from '../../src/scenario/resolve.ts'
import { runReferenceSession } from '../../src/subjects/reference.ts'
import { REPO_ROOT, tempDir } from '../cli/run-sim.ts'

const BASE_URL = 'http://subject-test.mock.sim.test/v1'
const FILE = join(REPO_ROOT, 'scenarios/smoke/basic-pressure.yaml')
let tmp: { dir: string; cleanup: () => Promise<void> }
let scenario: ResolvedScenario
let mount: MswMount | null = null

beforeAll(async () => {
  tmp = await tempDir()
  scenario = resolveScenario(await loadScenario(FILE), { file: FILE })
})
afterAll(async () => {
  mount?.close()
  await tmp.cleanup()
})

/** The run manifest of the scenario (§1.1): the checker judges the scenario's policy, not the defaults. */
function manifest(): RunManifest {
  const compaction = { ...scenario.policyConfig } as RunManifest['compaction']
  return { scenario: FILE, compaction, routes: worldRoutes(scenario), faults: [] }
}

/** Runs one session of the scenario on a fresh world mounted at BASE_URL. */
async function session(logPath: string, resume: boolean, durable: number[] = []): Promise<Awaited<ReturnType<typeof runReferenceSession>>> {
  const transcript = await scenarioTranscript(scenario, scenario.seed)
  const world = createWorld({ scenario, transcript, now: () => 0 })
  mount?.close()
  mount = mountMsw(world.provider, BASE_URL)
  return runReferenceSession({
    scenario, transcript, logPath, baseUrl: BASE_URL, seed: scenario.seed, resume, hooks: world.hooks,
    onDurable: (e) => { durable.push(e.seq) },
  })
}

describe('runReferenceSession', () => {
  it('runs every turn, acknowledges every event durable in seq order, and the log passes sim check', async () => {
    const logPath = join(tmp.dir, 'full.jsonl')
    const durable: number[] = []
    const result = await session(logPath, false, durable)
    expect(result.outcomes.map((o) => [o.turn, o.reason.kind])).toEqual([[1, 'completed'], [2, 'completed'], [3, 'completed']])
    expect(result.startedAfterTurn).toBe(0)
    expect(durable).toEqual([...Array(result.events).keys()])
    const purposes = result.requests.map((r) => r.purpose)
    expect(purposes).toEqual(['conversation', 'conversation', 'conversation', 'conversation', 'compaction', 'conversation'])
    const check = await checkLog(logPath, { dialect: 'seed', manifest: manifest(), requests: result.requests })
    expect(check.kind === 'report' && check.violations).toEqual([])
    // A recorded log replays as the transcript it was produced from (`transcript.recorded`).
    const recorded = transcriptFromEvents((await readLog(logPath, { dialect: 'seed' })).events)
    const original = await scenarioTranscript(scenario, scenario.seed)
    expect(recorded.systemPrompt).toBe(original.systemPrompt)
    expect(recorded.tools.map((t) => t.name)).toEqual(original.tools.map((t) => t.name))
    expect(recorded.turns.map((t) => t.user)).toEqual(original.turns.map((t) => t.user))
    expect(recorded.turns.map((t) => t.steps.map((st) => [st.reply.blocks, st.toolResults]))).toEqual(
      original.turns.map((t) => t.steps.map((st) => [st.reply.blocks, st.toolResults])),
    )
  })

  it('resumes from a log cut after turn 1: restore appends the end-seed, turns 2 and 3 run on the transcript replies', async () => {
    const full = join(tmp.dir, 'full.jsonl')
    const fullEvents = (await readLog(full, { dialect: 'seed' })).events
    const endOfTurn1 = fullEvents.findIndex((e) => e.type === 'turn/end')
    const cut = join(tmp.dir, 'cut.jsonl')
    const lines = (await readFile(full, 'utf8')).split('\n').slice(0, endOfTurn1 + 1)
    await writeFile(cut, `${lines.join('\n')}\n`)
    await copyFile(cut, join(tmp.dir, 'cut-before.jsonl'))
    const result = await session(cut, true)
    expect(result.startedAfterTurn).toBe(1)
    expect(result.outcomes.map((o) => [o.turn, o.reason.kind])).toEqual([[2, 'completed'], [3, 'completed']])
    const events = (await readLog(cut, { dialect: 'seed' })).events
    expect(events[endOfTurn1 + 1]?.type).toBe('session/end-seed')
    expect(events.slice(0, endOfTurn1 + 1)).toEqual(fullEvents.slice(0, endOfTurn1 + 1))
    // The same replies as the uninterrupted run: the assistant texts of turns 2 and 3 agree.
    const texts = (list: typeof events): string[] => list.flatMap((e) => {
      return e.type === 'assistant/message' ? [JSON.stringify((e.data as { message: unknown }).message)] : []
    })
    expect(texts(events).map((t) => t.replace(/"id":"[^"]*"/, ''))).toEqual(texts(fullEvents).map((t) => t.replace(/"id":"[^"]*"/, '')))
    expect(events.filter((e) => e.type === 'compaction/end')).toHaveLength(1)
    const check = await checkLog(cut, { dialect: 'seed', manifest: manifest(), requests: result.requests })
    expect(check.kind === 'report' && check.violations).toEqual([])
  })
})
