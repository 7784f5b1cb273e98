/** Lock state (§11.1), end-seed (§11.3), restore closers (§11.4) and repair runs (§12.0). */
import { describe, expect, it } from 'vitest'
import type { EventDraft, SessionEvent } from '../../src/log/events.ts'
import { isRepairCloser, repairClosers, repairRunBefore, TOOL_NOT_STARTED, TOOL_OUTCOME_UNKNOWN } from '../../src/log/lifecycle.ts'
import { assistant, logOf, marker, result, user } from '../support/events.ts'

const start = (id: string, turn: number | null = 1): EventDraft => ({ time: 0, type: 'compaction/start', data: { compactionId: id as never, turn } })
const end = (id: string, turn: number | null = 1): EventDraft => ({ time: 0, type: 'compaction/end', data: { compactionId: id as never, turn } })
const toolCall = (callId: string): EventDraft => ({ time: 0, type: 'tool/call', data: { turn: 1, step: 1, callId: callId as never, name: 'read', arguments: '{}' } })


describe('lockState (§11.1)', () => {
  it('is free with no bracket, live with an unmatched start, free after its end', () => {
    expect(logOf(marker('turn/start')).state.lock.state).toBe('free')
    const open = logOf(marker('turn/start'), start('a'))
    expect(open.state.lock).toEqual({ state: 'live', bracket: { startSeq: 1, compactionId: 'a', turn: 1 } })
    expect(logOf(marker('turn/start'), start('a'), end('a')).state.lock.state).toBe('free')
  })

  it('turns an unmatched start into a stale orphan at the next end-seed (§11.3)', () => {
    const log = logOf(marker('turn/start'), start('a'), marker('session/end-seed'))
    expect(log.state.lock.state).toBe('stale')
    expect(log.state.openBrackets).toEqual([{ startSeq: 1, compactionId: 'a', turn: 1, live: false }])
    log.append(start('b', null))
    expect(log.state.lock.state).toBe('live')
    expect(log.state.openBrackets.map((b) => [b.compactionId, b.live])).toEqual([['a', false], ['b', true]])
    expect(log.state.lastEndSeed).toBe(2)
  })
})

describe('restore closers (§11.4)', () => {
  it('answers unanswered calls (outcome unknown when logged, not started otherwise), closes step and turn', () => {
    const log = logOf(marker('turn/start', 3), marker('step/start', 3, 2), user('go'), assistant(['c1', 'c2', 'c3'], 3, 2), toolCall('c1'), result('c1', 'ok', 3, 2, [4]), toolCall('c2'))
    const closers = repairClosers(log.events)
    expect(closers.map((e) => e.type)).toEqual(['tool/result', 'tool/result', 'step/end', 'turn/end'])
    const [r2, r3] = closers as [SessionEvent<'tool/result'>, SessionEvent<'tool/result'>]
    expect(r2.seq).toBe(7)
    expect(r2.data.error).toEqual({ name: 'ToolOutcomeUnknownError', code: TOOL_OUTCOME_UNKNOWN })
    expect(r2.sourceEventSeqs).toEqual([6])
    expect(r2.data.message.id).toBe('interrupted-c2-7')
    expect(r2.data.step).toBe(2)
    expect(r3.data.error).toEqual({ name: 'ToolNotStartedError', code: TOOL_NOT_STARTED })
    expect(r3.sourceEventSeqs).toBeUndefined()
    expect(closers.at(-1)?.data).toEqual({ turn: 3, reason: { kind: 'interrupted' } })
    expect(new Set(closers.map((e) => e.time))).toEqual(new Set([log.events.at(-1)?.time]))
    for (const c of closers) log.accept(c)
    const seeded = log.append(marker('session/end-seed'))
    expect(repairRunBefore(log.events, seeded.seq)).toEqual({ first: 7, last: 10 })
    expect(log.state.openTurn).toBeNull()
  })

  it('writes nothing when no turn is open, and no repair run precedes a clean end-seed', () => {
    const log = logOf(marker('turn/start'), marker('turn/end'))
    expect(repairClosers(log.events)).toEqual([])
    const seeded = log.append(marker('session/end-seed'))
    expect(repairRunBefore(log.events, seeded.seq)).toBeNull()
    expect(isRepairCloser(log.events[1] as SessionEvent)).toBe(false)
  })
})
