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
import { clampSummaryTokens, INSTRUCTION_TOKENS, nodeFixedPrice, summaryFitOf, summaryRouteOf } from '../../src/compaction/summary-room.ts'
import { harnessReadOnlyPath } from '../../src/offload/projection.ts'
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
  /**
   * A 3,600-token route. The faithful overflow region (everything but the newest unit: seqs 3 … 42, P_route 1,690,
   * P_fixed 1,660) with the 524 tokens of tools (46), system head (28) and instruction (450) leaves less than the
   * summary could need: 524 + 1,690 + min(8192, 1,660) = 3,874 > 3,600.
   */
  const WINDOW = 3600
  const fixedOf = (b: ReturnType<typeof bench>, seqs: readonly number[]): number =>
    seqs.reduce((sum, seq) => sum + nodeFixedPrice(b.log, seq, harnessReadOnlyPath), 0)

  it('faithful: overflow recovery summarizes everything but the newest unit', async () => {
    const b = bench({ prefix: PRE_STEP_3_2, routes: [{ ...ROUTE, contextWindow: WINDOW }], compaction: [summaryReply()] })
    const faithful = selectCompactableRange(b.log, b.meter.measure(), 0)
    await b.engine.compactIfNeeded('context-overflow')
    const summary = ofType(b.appended(), 'compaction/summary')[0] as SessionEvent<'compaction/summary'>
    expect(summary.data.shadowedSeqs).toEqual(faithful?.shadowedSeqs)
    expect(summary.data.shadowedSeqs).toEqual([3, 10, 15, 23, 28, 37, 42])
    expect(summary.data.maxTokens).toBe(8192)
  })

  it('hardened: the region shrinks from its newer end to a balanced cut until the summary has room', async () => {
    const b = bench({ prefix: PRE_STEP_3_2, config: ROOM, routes: [{ ...ROUTE, contextWindow: WINDOW }], compaction: [summaryReply()] })
    const before = b.meter.measure()
    const faithful = selectCompactableRange(b.log, before, 0)?.shadowedSeqs ?? []
    const nodes = before.nodes
    const faithfulPrompt = promptOf(b.log, before, faithful)
    expect(faithfulPrompt + fixedOf(b, faithful)).toBe(3874) // the pattern: no room for the summary
    await b.engine.compactIfNeeded('context-overflow')
    const summary = ofType(b.appended(), 'compaction/summary')[0] as SessionEvent<'compaction/summary'>
    const seqs = summary.data.shadowedSeqs
    // Head-anchored prefix of the faithful span, strictly shorter, ending on a balanced cut.
    expect(seqs[0]).toBe(faithful[0])
    expect(faithful.slice(0, seqs.length)).toEqual(seqs)
    // By hand: 3 … 37 (524 + 1,668 + 1,638 = 3,830) and 3 … 28 (3,676) do not fit; 3 … 23 (524 + 1,439 + 1,439 = 3,402) does.
    expect(seqs).toEqual([3, 10, 15, 23])
    const prompt = summary.data.summaryRoom?.promptTokens as number
    expect(prompt).toBe(promptOf(b.log, before, seqs))
    expect(prompt).toBe(524 + 1439)
    expect(summary.data.maxTokens).toBe(WINDOW - prompt)
    // Maximal: the next longer prefix that ends on a balanced cut would not fit.
    const price = (seq: number): number => nodes.find((n) => n.seq === seq)?.tokens ?? 0
    let next = seqs.length + 1
    while (next <= faithful.length && !balancedAfterIn(b, faithful[next - 1] as number)) next++
    const longer = faithful.slice(0, next)
    expect(prompt + longer.slice(seqs.length).reduce((s, q) => s + price(q), 0) + fixedOf(b, longer)).toBeGreaterThan(WINDOW)
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

  it('ignores limits that are not positive integers; no window means no fit', () => {
    const odd = summaryRouteOf({ provider: 'p', model: 'm', maxTokens: 8192 }, { provider: 'p', id: 'm', name: 'm', maxOutputTokens: 0 })
    expect(odd).toEqual({ provider: 'p', model: 'm', configuredMaxTokens: 8192 })
    const fixed = (): number => 1
    expect(summaryFitOf(odd, 500, fixed)).toBeUndefined()
    expect(summaryFitOf(route, 500, fixed)).toEqual({ tokensMax: 7500, capTokens: 4096, fixedTokens: fixed })
    expect(INSTRUCTION_TOKENS).toBe(Math.ceil(COMPACTION_INSTRUCTION.length / 4) + 8)
  })

  it('selection: summaryFit shrinks the span from its newer end; null when nothing fits', () => {
    const b = bench({ prefix: PRE_STEP_3_2 })
    const m = b.meter.measure()
    const full = selectCompactableRange(b.log, m, 0)
    expect(full?.shadowedSeqs).toEqual([3, 10, 15, 23, 28, 37, 42])
    const fixedTokens = (): number => 0
    expect(selectCompactableRange(b.log, m, 0, { summaryFit: { tokensMax: 0, capTokens: 0, fixedTokens } })).toBeNull()
    expect(selectCompactableRange(b.log, m, 0, { summaryFit: { tokensMax: 1_000_000, capTokens: 0, fixedTokens } })).toEqual(full)
    // P_route of 3 … 42 is 1,690; of 3 … 23, 1,439 (the cuts after 28 and 37 are balanced, 10 is not).
    expect(selectCompactableRange(b.log, m, 0, { summaryFit: { tokensMax: 1690, capTokens: 0, fixedTokens } })).toEqual(full)
    expect(selectCompactableRange(b.log, m, 0, { summaryFit: { tokensMax: 1689, capTokens: 0, fixedTokens } })?.shadowedSeqs).toEqual([3, 10, 15, 23, 28, 37])
    expect(selectCompactableRange(b.log, m, 0, { summaryFit: { tokensMax: 1338, capTokens: 0, fixedTokens } })?.shadowedSeqs).toEqual([3, 10, 15])
    expect(selectCompactableRange(b.log, m, 0, { summaryFit: { tokensMax: 1337, capTokens: 0, fixedTokens } })?.shadowedSeqs).toEqual([3])
    // The summary's room counts: min(capTokens, Σ fixed) is added to the span's price.
    const one = (): number => 1
    expect(selectCompactableRange(b.log, m, 0, { summaryFit: { tokensMax: 1690 + 7, capTokens: 10, fixedTokens: one } })).toEqual(full)
    expect(selectCompactableRange(b.log, m, 0, { summaryFit: { tokensMax: 1690 + 6, capTokens: 10, fixedTokens: one } })?.shadowedSeqs).toEqual([3, 10, 15, 23, 28, 37])
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
