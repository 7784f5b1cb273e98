/**
 * `restoreSession` input checks and lifecycle rules (§11.3, §11.4, §11.5): refusal of unknown required
 * types and negative pairing naming the first offending seq, the explicitly empty seed, and the `resume`
 * header of the new loop instance. The crash points of §13.4 are in crash-restore.test.ts.
 */
import { describe, expect, it } from 'vitest'
import { RestoreError, restoreSession } from '../../src/agent/restore.ts'
import type { LogEvent } from '../../src/log/events.ts'
import { EventLog } from '../../src/log/event-log.ts'
import { callRead, prompt, say, world } from './harness.ts'

const clock = (): number => 1_700_000_100_000

async function producedLog(): Promise<readonly LogEvent[]> {
  const w = world({ conversation: [callRead(['c1']), say('done')] })
  await w.agent.runTurn(prompt('read it'))
  return w.log.events
}

describe('restoreSession (§11.4)', () => {
  it('refuses an unknown required type with an input error naming its seq', async () => {
    const events = [...await producedLog()]
    const foreign = { seq: events.length, time: 0, type: 'agent/inbox/spliced', data: {} } as LogEvent
    expect(() => restoreSession([...events, foreign], { dialect: 'seed', clock })).toThrow(RestoreError)
    try {
      restoreSession([...events, foreign], { dialect: 'seed', clock })
    } catch (err) {
      expect(err).toMatchObject({ code: 'UNKNOWN_TYPE', seq: events.length })
      expect((err as Error).message).toMatch(new RegExp(`^seq ${events.length}: `))
    }
    const ignorable = { ...foreign, ignorable: true } as LogEvent
    expect(restoreSession([...events, ignorable], { dialect: 'seed', clock }).endSeed?.seq).toBe(events.length + 1)
    const known = restoreSession([...events, foreign], { dialect: 'seed', clock, knownTypes: new Set(['agent/inbox/spliced']) })
    expect(known.log.length).toBe(events.length + 2)
  })

  it('refuses a surface whose tool pairing goes negative (an orphan tool result), naming the first offending seq', () => {
    const log = new EventLog({ dialect: 'seed' })
    log.append({ time: 0, type: 'turn/start', data: { turn: 1 } })
    log.append({ time: 0, type: 'step/start', data: { turn: 1, step: 1 } })
    log.append({
      time: 0, type: 'tool/result', surfaceOp: 'append',
      data: { turn: 1, step: 1, message: { id: 'm-t' as never, role: 'user', content: [{ type: 'tool-result', toolCallId: 'ghost' as never, content: [] }], source: { kind: 'tool', callId: 'ghost' as never } } },
    })
    expect(() => restoreSession(log.events, { dialect: 'seed', clock })).toThrow(expect.objectContaining({ code: 'NEGATIVE_PAIRING', seq: 2 }))
  })

  it('refuses an invalid event with the seq the log names', async () => {
    const events = [...await producedLog()]
    const broken = { ...events[3], seq: 3, data: { nonsense: true } } as unknown as LogEvent
    expect(() => restoreSession([...events.slice(0, 3), broken], { dialect: 'seed', clock })).toThrow(expect.objectContaining({ code: 'INVALID_EVENT', seq: 3 }))
  })

  it('writes the end-seed at seq 0 for an explicitly empty seed (§1.4.12)', () => {
    const restored = restoreSession([], { dialect: 'seed', clock })
    expect(restored.log.events).toEqual([{ seq: 0, time: 1_700_000_100_000, type: 'session/end-seed', data: {} }])
    expect(restored.closers).toEqual([])
  })

  it('a clean stop restores without closers; the new loop instance logs resume on its first header (§11.5)', async () => {
    const events = await producedLog()
    const restored = restoreSession(events, { dialect: 'seed', clock })
    expect(restored.closers).toEqual([])
    expect(restored.endSeed?.seq).toBe(events.length)
    const w = world({ conversation: [say('again')], log: restored.log })
    await w.agent.runTurn(prompt('more'))
    expect(w.ofType('request/header').map((h) => [h.data.reason, h.data.startsSeries])).toEqual([['initial', undefined], ['resume', undefined]])
    expect(w.ofType('turn/start').map((t) => t.data.turn)).toEqual([1, 2])
  })
})
