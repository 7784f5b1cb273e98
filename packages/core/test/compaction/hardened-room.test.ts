/**
 * HARD-2 (`hardening.summaryRoom`, `docs/hardened.md`): room for the summary call, on the Appendix B bench
 * (route mock/mock-4k: window 4,000, image price 85; the policy keeps the default `maxTokens: 8192`, the running
 * example's cap above its own window). Each expectation is computed here from the meter's node prices, not read
 * back from the engine.
 */
import { describe, expect, it } from 'vitest'
import { COMPACTION_INSTRUCTION } from '../../src/constants.ts'
import type { EventLog } from '../../src/log/event-log.ts'
import type { SessionEvent } from '../../src/log/events.ts'
import type { Measurement } from '../../src/meter/measurement.ts'
import { toolsPrice } from '../../src/meter/price.ts'
import { selectCompactableRange } from '../../src/range/select.ts'
import { toolPairingBalancedAfter } from '../../src/surface/tool-pairing.ts'
import { clampSummaryTokens, INSTRUCTION_TOKENS, regionTokensMax, summaryRouteOf } from '../../src/compaction/summary-room.ts'
import { validateEvent } from '../../src/log/validate.ts'
import { bench, PRE_STEP_3_2, ROUTE, summaryReply } from './support/bench.ts'

const ROOM = { hardening: { summaryRoom: true } }

/** The priced summary prompt of `seqs` (tools + system head + the nodes + instruction), from a measurement's node prices. */
function promptOf(log: EventLog, m: Measurement, seqs: readonly number[]): number {
  const nodes = m.nodes
  const price = (seq: number): number => nodes.find((n) => n.seq === seq)?.tokens ?? Number.NaN
  const head = nodes[0] as { seq: number; tokens: number }
  expect(log.event(head.seq)?.type).toBe('system/message')
  let sum = toolsPrice(log.state.header?.header.tools) + head.tokens + Math.ceil(COMPACTION_INSTRUCTION.length / 4) + 4 + 4
  for (const seq of seqs) sum += price(seq)
  return sum
}

function ofType<T extends SessionEvent['type']>(events: readonly { type: string }[], type: T): SessionEvent<T>[] {
  return events.filter((e) => e.type === type) as SessionEvent<T>[]
}

describe('HARD-2 summary room: the cap', () => {
  it('faithful: the summary request carries the policy cap 8192 on the 4,000-token route, and no summaryRoom', async () => {
    const b = bench({ prefix: PRE_STEP_3_2, compaction: [summaryReply()] })
    await b.engine.compactIfNeeded('pressure')
    expect(b.adapter.requests.map((r) => r.maxTokens)).toEqual([8192])
    const summary = ofType(b.appended(), 'compaction/summary')[0]
    expect(summary?.data.maxTokens).toBe(8192)
    expect(summary !== undefined && 'summaryRoom' in summary.data).toBe(false)
  })

  it('hardened: the cap is the window less the priced prompt, recorded with the configured 8192', async () => {
    const b = bench({ prefix: PRE_STEP_3_2, config: ROOM, compaction: [summaryReply()] })
    const before = b.meter.measure()
    await b.engine.compactIfNeeded('pressure')
    const summary = ofType(b.appended(), 'compaction/summary')[0] as SessionEvent<'compaction/summary'>
    expect(summary).toBeDefined()
    const prompt = promptOf(b.log, before, summary.data.shadowedSeqs)
    expect(prompt + 2000).toBeLessThanOrEqual(4000) // the fitted span leaves min(8192, 4000 / 2) for the summary
    expect(b.adapter.requests.map((r) => r.maxTokens)).toEqual([4000 - prompt])
    expect(summary.data.maxTokens).toBe(4000 - prompt)
    expect(summary.data.summaryRoom).toEqual({ configuredMaxTokens: 8192, promptTokens: prompt, contextWindow: 4000 })
    expect(Object.keys(summary.data).indexOf('summaryRoom')).toBe(Object.keys(summary.data).indexOf('maxTokens') + 1)
  })

  it('hardened: a reported output limit below the window room is the cap', async () => {
    const b = bench({ prefix: PRE_STEP_3_2, config: ROOM, routes: [{ ...ROUTE, maxOutputTokens: 600 }], compaction: [summaryReply()] })
    await b.engine.compactIfNeeded('pressure')
    const summary = ofType(b.appended(), 'compaction/summary')[0] as SessionEvent<'compaction/summary'>
    expect(b.adapter.requests.map((r) => r.maxTokens)).toEqual([600])
    expect(summary.data.summaryRoom).toMatchObject({ configuredMaxTokens: 8192, contextWindow: 4000, maxOutputTokens: 600 })
  })

  it('hardened: no configuredMaxTokens when the policy cap already fits', async () => {
    const b = bench({ prefix: PRE_STEP_3_2, config: { ...ROOM, maxTokens: 500 }, compaction: [summaryReply()] })
    const before = b.meter.measure()
    await b.engine.compactIfNeeded('pressure')
    const summary = ofType(b.appended(), 'compaction/summary')[0] as SessionEvent<'compaction/summary'>
    expect(b.adapter.requests.map((r) => r.maxTokens)).toEqual([500])
    expect(summary.data.maxTokens).toBe(500)
    expect(summary.data.summaryRoom).toEqual({ promptTokens: promptOf(b.log, before, summary.data.shadowedSeqs), contextWindow: 4000 })
  })

  it('hardened: a failed attempt records the clamped cap and the room on compaction/summary-error', async () => {
    const b = bench({
      prefix: PRE_STEP_3_2, config: { ...ROOM, compactionRetries: 0 }, routes: [{ ...ROUTE, maxOutputTokens: 700 }],
      compaction: [{ kind: 'fail', failure: { message: 'route down', code: 'UNKNOWN' }, delivery: 'in-band' }],
    })
    await expect(b.engine.compactIfNeeded('pressure')).rejects.toThrow(/route down/)
    const error = ofType(b.appended(), 'compaction/summary-error')[0] as SessionEvent<'compaction/summary-error'>
    expect(error.data.maxTokens).toBe(700)
    expect(error.data.summaryRoom).toMatchObject({ configuredMaxTokens: 8192, contextWindow: 4000, maxOutputTokens: 700 })
    expect(() => validateEvent(JSON.parse(JSON.stringify(error)), { dialect: 'seed' })).not.toThrow()
  })

  it('hardened: an explicit region whose prompt fills the summary route is refused before any call', async () => {
    const routes = [ROUTE, { provider: 'mock', model: 'tiny', contextWindow: 300 }]
    const config = { ...ROOM, summarizationProvider: 'mock', summarizationModel: 'tiny' }
    const b = bench({ prefix: PRE_STEP_3_2, config, routes, compaction: [summaryReply()] })
    const nodes = b.log.state.surface.nodes
    await expect(b.engine.compactRegion(nodes[1] as number, nodes[4] as number)).rejects.toThrow(/does not fit its route \(hardened HARD-2\)/)
    expect(b.adapter.requests).toEqual([])
    const error = ofType(b.appended(), 'compaction/summary-error')[0] as SessionEvent<'compaction/summary-error'>
    expect(error.data).toMatchObject({ provider: 'mock', model: 'tiny', failure: { code: 'CONTEXT_WINDOW_EXCEEDED' } })
    expect('maxTokens' in error.data).toBe(false)
    expect(error.data.summaryRoom?.promptTokens).toBeGreaterThanOrEqual(300)
  })

  it('hardened: metadata that cannot be read leaves the protocol cap (noted on info)', async () => {
    const b = bench({ prefix: PRE_STEP_3_2, config: ROOM, compaction: [summaryReply()] })
    let lookups = 0
    b.runtime.resolveModelInfo = async (provider, model) => { // the pressure check's lookup answers, HARD-2's does not
      if (++lookups === 1) return { provider, id: model, name: model, context: { contextWindow: 4000 }, imageTokens: 85 }
      throw new Error('metadata down')
    }
    await b.engine.compactIfNeeded('pressure')
    expect(b.adapter.requests.map((r) => r.maxTokens)).toEqual([8192])
    expect(b.infos.some((m) => m.includes('metadata unavailable (metadata down)'))).toBe(true)
  })
})

describe('HARD-2 summary room: the overflow region', () => {
  /** The 4,000-token route: the faithful overflow region (everything but the newest unit, seqs 3 … 42) leaves it < 2,000 tokens. */
  const WINDOW = 4000
  const ROOM_TOKENS = 2000 // min(routeCap 8192, 4000 × SUMMARY_ROOM_WINDOW_SHARE)

  it('faithful: overflow recovery summarizes everything but the newest unit, a prompt with no room on the route', async () => {
    const b = bench({ prefix: PRE_STEP_3_2, compaction: [summaryReply()] })
    const faithful = selectCompactableRange(b.log, b.meter.measure(), 0)
    await b.engine.compactIfNeeded('context-overflow')
    const summary = ofType(b.appended(), 'compaction/summary')[0] as SessionEvent<'compaction/summary'>
    expect(summary.data.shadowedSeqs).toEqual(faithful?.shadowedSeqs)
  })

  it('hardened: the region shrinks from its newer end to a balanced cut until the prompt leaves half the window', async () => {
    const b = bench({ prefix: PRE_STEP_3_2, config: ROOM, routes: [{ ...ROUTE, contextWindow: WINDOW }], compaction: [summaryReply()] })
    const before = b.meter.measure()
    const faithful = selectCompactableRange(b.log, before, 0)?.shadowedSeqs ?? []
    const nodes = before.nodes
    const faithfulPrompt = promptOf(b.log, before, faithful)
    expect(faithfulPrompt + ROOM_TOKENS).toBeGreaterThan(WINDOW) // the pattern: no room for the summary
    await b.engine.compactIfNeeded('context-overflow')
    const summary = ofType(b.appended(), 'compaction/summary')[0] as SessionEvent<'compaction/summary'>
    const seqs = summary.data.shadowedSeqs
    // Head-anchored prefix of the faithful span, strictly shorter, ending on a balanced cut.
    expect(seqs[0]).toBe(faithful[0])
    expect(seqs.length).toBeLessThan(faithful.length)
    expect(faithful.slice(0, seqs.length)).toEqual(seqs)
    expect(seqs).toEqual([3, 10, 15, 23]) // by hand: 3 … 23 price 1,439 ≤ 4,000 − 2,000 − (46 tools + 28 head + 450 instruction)
    const prompt = summary.data.summaryRoom?.promptTokens as number
    expect(prompt).toBe(promptOf(b.log, before, seqs))
    expect(prompt + ROOM_TOKENS).toBeLessThanOrEqual(WINDOW)
    expect(summary.data.maxTokens).toBe(WINDOW - prompt)
    // Maximal: the next longer prefix that ends on a balanced cut would not fit.
    const price = (seq: number): number => nodes.find((n) => n.seq === seq)?.tokens ?? 0
    let next = seqs.length + 1
    while (next <= faithful.length && !balancedAfterIn(b, faithful[next - 1] as number)) next++
    if (next <= faithful.length) {
      const longer = faithful.slice(0, next)
      expect(prompt + longer.slice(seqs.length).reduce((s, q) => s + price(q), 0) + ROOM_TOKENS).toBeGreaterThan(WINDOW)
    }
  })
})

function balancedAfterIn(b: ReturnType<typeof bench>, seq: number): boolean {
  return toolPairingBalancedAfter(b.log.state.surface, seq as never)
}

describe('HARD-2 helpers', () => {
  const route = summaryRouteOf({ provider: 'p', model: 'm', maxTokens: 8192 }, { provider: 'p', id: 'm', name: 'm', context: { contextWindow: 8000 }, maxOutputTokens: 4096 })

  it('clamps to min(configured, output limit, window − prompt) and records the configured cap only when clamped', () => {
    expect(clampSummaryTokens(route, 1000)).toEqual({ maxTokens: 4096, record: { configuredMaxTokens: 8192, promptTokens: 1000, contextWindow: 8000, maxOutputTokens: 4096 } })
    expect(clampSummaryTokens(route, 5000).maxTokens).toBe(3000)
    expect(clampSummaryTokens(route, 8000).maxTokens).toBe(0)
    const roomy = summaryRouteOf({ provider: 'p', model: 'm', maxTokens: 100 }, { provider: 'p', id: 'm', name: 'm', context: { contextWindow: 8000 } })
    expect(clampSummaryTokens(roomy, 1000)).toEqual({ maxTokens: 100, record: { promptTokens: 1000, contextWindow: 8000 } })
  })

  it('ignores limits that are not positive integers; no window means no region bound', () => {
    const odd = summaryRouteOf({ provider: 'p', model: 'm', maxTokens: 8192 }, { provider: 'p', id: 'm', name: 'm', maxOutputTokens: 0 })
    expect(odd).toEqual({ provider: 'p', model: 'm', configuredMaxTokens: 8192 })
    expect(regionTokensMax(odd, 500)).toBeUndefined()
    expect(regionTokensMax(route, 500)).toBe(8000 - 4000 - 500) // min(cap 4096, half the window)
    const small = summaryRouteOf({ provider: 'p', model: 'm', maxTokens: 300 }, { provider: 'p', id: 'm', name: 'm', context: { contextWindow: 2000 } })
    expect(regionTokensMax(small, 500)).toBe(2000 - 300 - 500)
    expect(INSTRUCTION_TOKENS).toBe(Math.ceil(COMPACTION_INSTRUCTION.length / 4) + 8)
  })

  it('selection: regionTokensMax shrinks the span from its newer end; null when nothing fits', () => {
    const b = bench({ prefix: PRE_STEP_3_2 })
    const m = b.meter.measure()
    const full = selectCompactableRange(b.log, m, 0)
    expect(full).not.toBeNull()
    const none = selectCompactableRange(b.log, m, 0, { regionTokensMax: 0 })
    expect(none).toBeNull()
    const unbounded = selectCompactableRange(b.log, m, 0, { regionTokensMax: 1_000_000 })
    expect(unbounded).toEqual(full)
  })
})

describe('HARD-2 log record', () => {
  it('the validator accepts summaryRoom and names a bad field', () => {
    const base = {
      seq: 60, time: 1, type: 'compaction/summary-error',
      data: { compactionId: 'c', shadowedRange: { start: 1, end: 2 }, shadowedSeqs: [1, 2], failure: { message: 'x', code: 'UNKNOWN' }, maxTokens: 10 },
    }
    expect(() => validateEvent({ ...base, data: { ...base.data, summaryRoom: { promptTokens: 5, contextWindow: 20 } } }, { dialect: 'seed' })).not.toThrow()
    expect(() => validateEvent({ ...base, data: { ...base.data, summaryRoom: { promptTokens: 5, window: 20 } } }, { dialect: 'seed' }))
      .toThrow(/data\.summaryRoom\.window/)
    expect(() => validateEvent({ ...base, data: { ...base.data, summaryRoom: { contextWindow: 20 } } }, { dialect: 'seed' }))
      .toThrow(/data\.summaryRoom\.promptTokens/)
  })
})
