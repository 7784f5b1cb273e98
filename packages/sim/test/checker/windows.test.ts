/**
 * `windowsAfter`: the §12.0 windows the checker's fold keeps, exposed per event for the `perPreStep` expectation:
 * a pre-step window from `turn/start` / `step/end` to the next `step/start` / `turn/end`, an overflow window from
 * a failed `CONTEXT_WINDOW_EXCEEDED` finish to the next chunk of that step, nothing between turns.
 */
import { describe, expect, it } from 'vitest'
import { Seq, type JsonObject, type LogEvent } from '@compaction-sim/core'
import { windowsAfter } from '../../src/checker/windows.ts'

const ev = (seq: number, type: string, data: JsonObject): LogEvent => ({ seq: Seq(seq), time: 0, type, data } as unknown as LogEvent)
const overflow = { type: 'finish', reason: { kind: 'error', failure: { code: 'CONTEXT_WINDOW_EXCEEDED', message: 'too long' } } }

describe('windowsAfter', () => {
  it('opens pre-step windows at turn/start and step/end, overflow windows at an overflow finish, none between turns', () => {
    const events = [
      ev(0, 'turn/start', { turn: 1 }),
      ev(1, 'step/start', { turn: 1, step: 1 }),
      ev(2, 'assistant/chunk', { turn: 1, step: 1, chunk: overflow }),
      ev(3, 'compaction/start', { compactionId: 'o', turn: 1 }),
      ev(4, 'compaction/end', { compactionId: 'o', turn: 1, error: 'x' }),
      ev(5, 'step/end', { turn: 1, step: 1 }),
      ev(6, 'compaction/start', { compactionId: 'p', turn: 1 }),
      ev(7, 'compaction/end', { compactionId: 'p', turn: 1, error: 'x' }),
      ev(8, 'step/start', { turn: 1, step: 2 }),
      ev(9, 'step/end', { turn: 1, step: 2 }),
      ev(10, 'turn/end', { turn: 1, reason: { kind: 'completed' } }),
      ev(11, 'compaction/start', { compactionId: 'm', turn: null }),
    ]
    const windows = windowsAfter(events, 'seed')
    expect(windows.map((w) => (w === null ? null : `${w.kind}@${w.openSeq}`))).toEqual([
      'pre-step@0', null, 'overflow@2', 'overflow@2', 'overflow@2', 'pre-step@5', 'pre-step@5', 'pre-step@5', null, 'pre-step@9', null, null,
    ])
    // One window object spans its events, so callers can group by identity.
    expect(windows[5]).toBe(windows[7])
  })
})
