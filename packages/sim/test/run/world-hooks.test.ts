/**
 * The world's subject hooks for faults that are not on the wire: FAULT-09's direct API use and the §13.5
 * append faults (FAULT-60…63) on the engine's bracket appends, and FAULT-11's need for a live lock.
 */
import { describe, expect, it } from 'vitest'
import type { EventDraft } from '@compaction-sim/core'
import { scenarioTranscript } from '../../src/run/transcript.ts'
import { createWorld } from '../../src/run/world.ts'
import { ScenarioError } from '../../src/scenario/errors.ts'
import { resolveScenario } from '../../src/scenario/resolve.ts'
import type { FaultConfig, Scenario } from '../../src/scenario/types.ts'

const FILE = '/work/scenarios/faults/x.yaml'

async function worldOf(faults: FaultConfig[]): Promise<ReturnType<typeof createWorld>> {
  const raw: Scenario = {
    name: 'hooks', seed: 1, provider: { wire: 'openai', model: 'mock', contextWindow: 4000 },
    transcript: { inline: { turns: [{ user: 'hi', steps: [{ reply: 'hello' }] }] } }, faults,
  }
  const scenario = resolveScenario(raw, { file: FILE })
  return createWorld({ scenario, transcript: await scenarioTranscript(scenario, 1), now: () => 0 })
}

const end = (error?: string): EventDraft => ({
  time: 0, type: 'compaction/end', data: error === undefined ? { compactionId: 'c', turn: 1 } : { compactionId: 'c', turn: 1, error },
} as EventDraft)

describe('world hooks', () => {
  it('FAULT-09 sets directApi; no other fault does', async () => {
    expect((await worldOf([{ kind: 'FAULT-09' }])).hooks.directApi).toBe(true)
    expect((await worldOf([{ kind: 'FAULT-01' }])).hooks.directApi).toBe(false)
  })

  it('FAULT-60 refuses the occurrence-th success-path compaction/end only, and counts the firing', async () => {
    const world = await worldOf([{ id: 'orphan', kind: 'FAULT-60', when: { occurrence: 2 } }])
    const reject = world.hooks.rejectAppend
    expect(reject).toBeDefined()
    const verdicts = [end(), end('failed'), end(), end()].map((d) => reject?.(d) ?? null)
    expect(verdicts).toEqual([null, null, 'FAULT-60 storage fault: compaction/end not persisted', null])
    expect(world.fired().get('orphan')).toBe(1)
  })

  it('FAULT-61 refuses an end{error}; FAULT-62 a summary; without append faults there is no hook', async () => {
    const refused = (await worldOf([{ kind: 'FAULT-61' }])).hooks.rejectAppend?.(end('x'))
    expect(refused).toBe('FAULT-61 storage fault: compaction/end not persisted')
    const summary = { time: 0, type: 'compaction/summary', data: {} } as unknown as EventDraft
    const refusedSummary = (await worldOf([{ kind: 'FAULT-62' }])).hooks.rejectAppend?.(summary)
    expect(refusedSummary).toBe('FAULT-62 storage fault: compaction/summary not persisted')
    expect((await worldOf([{ kind: 'FAULT-01' }])).hooks.rejectAppend).toBeUndefined()
  })

  it('FAULT-11 without a FAULT-60/61 orphan to hold the lock is refused naming the fault', async () => {
    await expect(worldOf([{ kind: 'FAULT-11' }])).rejects.toThrow(ScenarioError)
    await expect(worldOf([{ kind: 'FAULT-11' }])).rejects.toThrow(/\/faults\/0\/kind.*declare a FAULT-60 or FAULT-61/)
    expect((await worldOf([{ kind: 'FAULT-60' }, { kind: 'FAULT-11' }])).hooks.rejectAppend).toBeDefined()
  })
})
