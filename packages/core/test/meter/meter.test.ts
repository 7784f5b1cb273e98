/**
 * The token meter against the spec's numbers: the §2.2 examples, the §2.8 worked example, and the
 * Appendix B running example's pressure at every step boundary (baseline kinds included, §2.5).
 */
import { appendixBEvents } from '@compaction-sim/fixtures'
import { describe, expect, it } from 'vitest'
import type { LogEvent, SessionEvent } from '../../src/log/events.ts'
import { EventLog } from '../../src/log/event-log.ts'
import { deriveMessages } from '../../src/surface/derive.ts'
import { TokenMeter, MeterReplayError } from '../../src/meter/meter.ts'
import { fixedPrice, routePrice, toolsPrice } from '../../src/meter/price.ts'
import { assistant, marker, user } from '../support/events.ts'

const events = appendixBEvents() as LogEvent[]

/** Meters the running example up to and including `seq`. */
function measureAfter(seq: number) {
  const prefix: LogEvent[] = events.slice(0, seq + 1)
  return new TokenMeter({ events: prefix }, { dialect: 'seed' }).measure()
}

describe('fixed heuristic (§2.2)', () => {
  it('prices the spec examples', () => {
    expect(fixedPrice({ id: 'x' as never, role: 'user', content: [{ type: 'text', text: 'abcd' }], source: { kind: 'user' } })).toBe(9)
    const sys = (events[2] as SessionEvent<'system/message'>).data
    expect(fixedPrice(sys)).toBe(28)
    const t1 = (events[12] as SessionEvent<'tool/result'>).data.message
    expect(fixedPrice(t1)).toBe(3012)
    expect(toolsPrice((events[4] as SessionEvent<'request/header'>).data.header.tools)).toBe(46)
  })

  it('prices #28 under the route and fixed rules, before and after the offload (§2.8)', () => {
    const m28 = (events[28] as SessionEvent<'user/message'>).data
    expect(routePrice(m28, 85)).toBe(190)
    expect(fixedPrice(m28)).toBe(130)
    const log = EventLog.fromEvents(events.slice(0, 31), { dialect: 'seed' })
    const projected = deriveMessages(log).find((m) => m.id === 'm-u2')
    expect(projected && routePrice(projected, 85)).toBe(152)
  })
})

describe('§2.8 worked example', () => {
  it('pre-step of turn 1 step 2: baseline usage 170, delta 3060, total 3230; after the prune 1521', () => {
    const m = measureAfter(13)
    expect(m.baseline).toEqual({ kind: 'usage', tokens: 170, usage: { inputTokens: 150, outputTokens: 20 } })
    expect(m.surfaceTokens).toBe(3075)
    expect(m.surfaceDeltaTokens).toBe(3060)
    expect(m.totalTokens).toBe(3230)
    expect(m.nodes).toEqual([{ seq: 2, tokens: 28 }, { seq: 3, tokens: 20 }, { seq: 10, tokens: 15 }, { seq: 12, tokens: 3012 }])
    const after = measureAfter(15)
    expect(after.surfaceTokens).toBe(1366)
    expect(after.surfaceDeltaTokens).toBe(1351)
    expect(after.totalTokens).toBe(1521)
  })
})

describe('Appendix B pressure at every step boundary', () => {
  const table: Array<[number, number, string]> = [
    [13, 3230, 'usage'], [15, 1521, 'usage'], [26, 1513, 'estimated'], [40, 1922, 'usage'],
    [50, 3762, 'usage'], [56, 2277, 'usage'], [66, 2286, 'estimated'],
  ]
  it.each(table)('after #%i pressure is %i (baseline %s)', (seq, total, kind) => {
    const m = measureAfter(seq)
    expect(m.totalTokens).toBe(total)
    expect(m.baseline.kind).toBe(kind)
  })

  it('prices the turn-3 surface as §4.4 Example 4 lists it', () => {
    expect(measureAfter(50).nodes.map((n) => n.tokens)).toEqual([28, 20, 15, 1303, 101, 152, 77, 22, 14, 1925])
    expect(measureAfter(53).nodes.find((n) => n.seq === 28)?.tokens).toBe(114)
    expect(measureAfter(56).nodes).toEqual([{ seq: 2, tokens: 28 }, { seq: 55, tokens: 205 }, { seq: 47, tokens: 14 }, { seq: 49, tokens: 1925 }])
    expect(measureAfter(66).nodes.at(-1)).toEqual({ seq: 64, tokens: 68 })
  })

  it('one incremental meter gives the same figures as fresh meters at each prefix', () => {
    const growing: LogEvent[] = []
    const meter = new TokenMeter({ events: growing }, { dialect: 'seed' })
    for (const e of events) {
      growing.push(e)
      const incremental = meter.measure()
      const fresh = new TokenMeter({ events: growing.slice() }, { dialect: 'seed' }).measure()
      expect({ ...incremental, nodes: incremental.nodes }).toEqual({ ...fresh, nodes: fresh.nodes })
    }
  })

  it('a measurement is a detached snapshot: later appends and replacements do not change it', () => {
    const growing: LogEvent[] = events.slice(0, 14)
    const meter = new TokenMeter({ events: growing }, { dialect: 'seed' })
    const before = meter.measure()
    growing.push(events[14] as LogEvent, events[15] as LogEvent)
    const after = meter.measure()
    expect(before.nodes.map((n) => n.seq)).toEqual([2, 3, 10, 12])
    expect(after.nodes.map((n) => n.seq)).toEqual([2, 3, 10, 15])
    expect(before.totalTokens).toBe(3230)
  })
})

describe('replay errors (§2.5)', () => {
  it('throws for step/start inside an open step, and keeps throwing', () => {
    const log = new EventLog({ dialect: 'seed' })
    for (const d of [marker('turn/start'), marker('step/start'), marker('step/start', 1, 2)]) log.append(d)
    const meter = new TokenMeter(log, { dialect: 'seed' })
    expect(() => meter.measure()).toThrow(MeterReplayError)
    expect(() => meter.measure()).toThrow(/step\/start while step 1.1 is open/)
  })

  it('throws for an assistant message outside its open step', () => {
    const log = new EventLog({ dialect: 'seed' })
    for (const d of [marker('turn/start'), user('q'), assistant([])]) log.append(d)
    expect(() => new TokenMeter(log, { dialect: 'seed' }).measure()).toThrow(/outside its open step/)
  })

  it('baseline none on an empty log without header', () => {
    expect(new TokenMeter({ events: [] }, { dialect: 'seed' }).measure()).toMatchObject({ baseline: { kind: 'none', tokens: 0 }, totalTokens: 0 })
  })
})
