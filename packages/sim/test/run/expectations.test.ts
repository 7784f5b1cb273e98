/**
 * `expect` evaluation (design §2): event patterns are an ordered subsequence with partial, deep `data`
 * matching; counts and outcomes compare with their bounds; the fault table realises every §13.1/§13.2 kind.
 */
import { describe, expect, it } from 'vitest'
import { Seq, type JsonObject, type LogEvent } from '@compaction-sim/core'
import { matchEvents, partialMatch } from '../../src/run/expectations.ts'
import { realise } from '../../src/run/world.ts'
import type { ResolvedFault } from '../../src/scenario/resolve.ts'
import { FAULT_KINDS, type FaultKind } from '../../src/scenario/types.ts'
import { faultTargetOf } from '../../src/scenario/resolve.ts'

const ev = (seq: number, type: string, data: JsonObject): LogEvent => ({ seq: Seq(seq), time: 0, type, data } as unknown as LogEvent)
const events = [
  ev(0, 'turn/start', { turn: 1 }),
  ev(1, 'compaction/start', { compactionId: 'c', turn: 1 }),
  ev(2, 'turn/end', { turn: 1, reason: { kind: 'error', error: { code: 'SERVER', message: 'x' } } }),
]

describe('matchEvents', () => {
  it('matches an ordered subsequence with partial deep data', () => {
    const results = matchEvents([
      { type: 'turn/start', data: null, text: null, absent: false },
      { type: 'turn/end', data: { reason: { kind: 'error', error: { code: 'SERVER' } } }, text: null, absent: false },
    ], events)
    expect(results.map((r) => [r.passed, r.actual])).toEqual([[true, 'seq 0'], [true, 'seq 2']])
  })

  it('fails out of order or on a different value, and reports later patterns as not reached', () => {
    const results = matchEvents([
      { type: 'turn/end', data: null, text: null, absent: false },
      { type: 'compaction/start', data: null, text: null, absent: false },
      { type: 'turn/end', data: null, text: null, absent: false },
    ], events)
    expect(results.map((r) => r.passed)).toEqual([true, false, false])
    expect(results[2]?.actual).toBe('not reached (an earlier pattern did not match)')
    expect(partialMatch({ reason: { kind: 'completed' } }, events[2]?.data as JsonObject)).toBe(false)
    expect(partialMatch({ a: [1, { b: 2 }] }, { a: [1, { b: 2, c: 3 }], d: 4 })).toBe(true)
    expect(partialMatch({ a: [1] }, { a: [1, 2] })).toBe(false)
  })
})

describe('fault realisation', () => {
  const fault = (kind: FaultKind): ResolvedFault => ({
    id: 'f', kind, target: faultTargetOf(kind),
    when: {
      requestIndex: null, purpose: null, occurrence: 1, afterEvent: null, afterSeq: null, turn: null, step: null, route: null,
      promptTokensAtLeast: null, maxTokensAbove: null, hasImages: null, atVirtualMs: null,
    },
    params: {
      code: null, message: null, status: null, offloadImages: null, delivery: 'before-headers', chunks: 0, retryAfterMs: null,
      count: 1, contextWindow: null, switchTo: null, body: null, headers: null, codes: null,
    },
    optional: false,
  })

  it('simulates every kind of §13.1, §13.2 and §13.4, and the append and flush faults FAULT-60…65 as subject hooks', () => {
    const kinds = FAULT_KINDS.filter((k) => Number(k.slice(6)) <= 33 || (Number(k.slice(6)) >= 50 && Number(k.slice(6)) <= 57))
    const byKind = Object.fromEntries(kinds.map((k) => [k, realise(fault(k)).kind]))
    expect(Object.entries(byKind).filter(([, r]) => r === 'refused')).toEqual([])
    // FAULT-09's overflow and FAULT-11's are provider rejections; direct API use and the live lock come from hooks.
    expect([byKind['FAULT-09'], byKind['FAULT-11']]).toEqual(['request', 'request'])
    expect(realise(fault('FAULT-23'))).toEqual({ kind: 'request', params: { reply: 'max-tokens' } })
    expect(realise(fault('FAULT-50')).kind).toBe('crash')
    // FAULT-66 is attempted by a `manual: prune` action; the pruner's own pre-validation refuses it (setup-only).
    expect((['FAULT-60', 'FAULT-61', 'FAULT-62', 'FAULT-63', 'FAULT-64', 'FAULT-65', 'FAULT-66'] as const).map((k) => realise(fault(k)).kind))
      .toEqual(['hook', 'hook', 'hook', 'hook', 'hook', 'hook', 'setup'])
  })

  it('translates a request fault into the mock vocabulary with its delivery timing', () => {
    const f = fault('FAULT-16')
    const timed = { ...f, params: { ...f.params, code: 'TRANSPORT' as const, delivery: 'after-chunks' as const, chunks: 2, count: 2 } }
    expect(realise(timed)).toEqual({ kind: 'request', params: { times: 2, code: 'TRANSPORT', delivery: 'after-chunks', afterChunks: 2 } })
  })
})
