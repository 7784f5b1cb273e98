/**
 * Policy and configuration faults at engine level (§13.3, FAULT-40 … FAULT-46), the overflow path's lock check
 * before pruning (§3.6 step 2, FAULT-11's engine half), and the entry checks of §3.8 / §7.2 (nothing written).
 */
import { appendixBEvents, appendixBTime } from '@compaction-sim/fixtures'
import { describe, expect, it, vi } from 'vitest'
import { CompactionBusyError } from '../../src/policy/pressure.ts'
import { CompactionConfigError, resolveCompactionConfig, TargetPressureConfigError } from '../../src/policy/config.ts'
import { RegionError } from '../../src/range/select.ts'
import type { EventDraft, LogEvent, SessionEvent } from '../../src/log/events.ts'
import { expectBracketInvariants } from './support/invariants.ts'
import { bench, BETWEEN_TURNS_2_3, PRE_STEP_3_2, rejectionOf, ROUTE, summaryReply } from './support/bench.ts'

const SURFACE_3_2 = [2, 3, 10, 15, 23, 28, 37, 42, 47, 49]
const COMMITTED = ['compaction/start', 'compaction/summary', 'user/message', 'compaction/end']

/** The Appendix B prefix plus `drafts`, renumbered as one log. */
function prefixWith(length: number, ...drafts: EventDraft[]): LogEvent[] {
  const events: LogEvent[] = appendixBEvents().slice(0, length)
  for (const d of drafts) events.push({ ...d, seq: events.length } as SessionEvent)
  return events
}

const T = 1_700_000_000_000

describe('§13.3 policy and configuration faults', () => {
  it('FAULT-40: no capacity → the explicit check throws, the pre-step warns once per route; overflow recovery still works', async () => {
    const b = bench({ routes: [{ provider: 'mock', model: 'mock-4k' }], pruner: true })
    const err = await rejectionOf(b.engine.compactIfNeeded('pressure'))
    expect(err).toBeInstanceOf(TargetPressureConfigError)
    expect(err).toMatchObject({ message: 'no context capacity for mock/mock-4k', key: 'mock/mock-4k' })
    await b.engine.preStep()
    await b.engine.preStep()
    expect(b.warnings).toEqual(['step compaction failed: no context capacity for mock/mock-4k; continuing the turn'])
    expect(b.written()).toEqual([]) // no prune, no bracket
    const result = await b.engine.compactIfNeeded('context-overflow')
    expect(result?.shadowedSeqs).toEqual([3, 10, 15, 23, 28, 37, 42]) // R = 0 keeps the newest unit #47/#49
    expect(b.written()).toEqual(COMMITTED)
    expectBracketInvariants(b.log)
  })

  it('FAULT-41: an invalid reported capacity (INVALID_MODEL_CONTEXT) is warned on every check', async () => {
    for (const contextWindow of [0, -5, 3999.5]) {
      const b = bench({ routes: [{ ...ROUTE, contextWindow }] })
      await b.engine.preStep()
      await b.engine.preStep()
      expect(b.warnings).toHaveLength(2)
      expect(b.warnings[0]).toMatch(/^step compaction failed: mock\/mock-4k reported an invalid context window: .*; continuing the turn$/)
      expect(b.written()).toEqual([])
    }
  })

  it('FAULT-42: retainTokens not below the scaled threshold is a target-pressure config error, warned once per route', async () => {
    const b = bench({ config: { retainTokens: 3200 } })
    expect(await rejectionOf(b.engine.compactIfNeeded('pressure'))).toMatchObject({ name: 'TargetPressureConfigError', code: 'RETAIN_NOT_BELOW_THRESHOLD' })
    await b.engine.preStep()
    await b.engine.preStep()
    expect(b.warnings).toEqual(['step compaction failed: retained budget 3200 for mock/mock-4k is not below its threshold 3200 (context window 4000); continuing the turn'])
    expect(b.written()).toEqual([])
  })

  it('FAULT-43: an invalid configuration fails before an engine exists', () => {
    const build = vi.fn(() => bench({ config: { thresholdRatio: 1.5 } }))
    expect(build).toThrow(CompactionConfigError)
    expect(() => resolveCompactionConfig({ retainRatio: 0.1, retainTokens: 100 })).toThrow(/retainTokens/)
  })

  it('FAULT-44: a route switch re-resolves capacity and policy at the next check; the usage anchor is invalidated', async () => {
    const header = (model: string): EventDraft => ({ time: T, type: 'request/header', data: { header: { config: { provider: 'mock', model } }, reason: 'change' } })
    const routes = [ROUTE, { provider: 'mock', model: 'mock-8k', contextWindow: 8000 }, { provider: 'mock', model: 'mock-2k', contextWindow: 2000 }]
    const large = bench({ events: prefixWith(PRE_STEP_3_2, header('mock-8k')), routes })
    expect(large.meter.measure().baseline.kind).toBe('estimated')
    expect(await large.engine.compactIfNeeded('pressure')).toBeNull() // threshold 6,400 now
    expect(large.written()).toEqual([])
    const small = bench({ events: prefixWith(PRE_STEP_3_2, header('mock-2k')), routes,
      compaction: [summaryReply(), summaryReply('S2.')], config: { modelPolicies: [{ provider: 'mock', model: 'mock-2k', maxTokens: 512 }] } })
    // threshold 1,600, retain 320: two brackets (compactionRetries 1) and still above → convergence error
    expect(await rejectionOf(small.engine.compactIfNeeded('pressure'))).toMatchObject({ name: 'CompactionConvergenceError', thresholdTokens: 1600 })
    expect(small.adapter.requests).toHaveLength(2)
    expect(small.adapter.requests[0]).toMatchObject({ model: 'mock-2k', maxTokens: 512 })
    expectBracketInvariants(small.log)
  })

  it('FAULT-45: envelope-only pressure (tools + system head) → pruner may run, selection is null, nothing compacted', async () => {
    const events = envelopeSession('x'.repeat(12_000), 'short question')
    const b = bench({ events, pruner: true })
    expect(b.meter.measure().totalTokens).toBeGreaterThanOrEqual(3200)
    expect(await b.engine.compactIfNeeded('pressure')).toBeNull()
    expect(await b.engine.compactIfNeeded('context-overflow')).toBeNull()
    expect(b.written()).toEqual([])
    expect(b.adapter.requests).toHaveLength(0)
  })

  it('FAULT-46: the newest unit alone exceeds the window → nothing compactable', async () => {
    const events = envelopeSession('You are terse.', 'y'.repeat(20_000))
    const b = bench({ events, pruner: true })
    expect(b.meter.measure().totalTokens).toBeGreaterThan(4000)
    expect(await b.engine.compactIfNeeded('pressure')).toBeNull()
    expect(await b.engine.compactIfNeeded('context-overflow')).toBeNull()
    expect(b.written()).toEqual([])
  })
})

describe('entry points and the lock (§3.6, §3.8, §7.2, §11.1)', () => {
  const liveStart: EventDraft = { time: T, type: 'compaction/start', data: { compactionId: 'cmp-live' as never, turn: 3 } }

  it('FAULT-11 (engine half): overflow compaction with a live lock throws busy before pruning; nothing is written', async () => {
    const events = prefixWith(14, { time: T, type: 'compaction/start', data: { compactionId: 'cmp-live' as never, turn: 1 } })
    const b = bench({ events, pruner: true })
    const err = await rejectionOf(b.engine.compactIfNeeded('context-overflow'))
    expect(err).toBeInstanceOf(CompactionBusyError)
    expect(err).toMatchObject({ code: 'busy' })
    expect(b.written()).toEqual([]) // #12 (12,000 code points) was not pruned
  })

  it('the pressure path reports busy after its capacity lookup (§3.5 step 5)', async () => {
    const b = bench({ events: prefixWith(PRE_STEP_3_2, liveStart) })
    expect(await rejectionOf(b.engine.compactIfNeeded('pressure'))).toBeInstanceOf(CompactionBusyError)
    await b.engine.preStep()
    expect(b.warnings).toEqual(['step compaction failed: busy: compaction cmp-live (started at seq 51) is still open; continuing the turn'])
    expect(b.written()).toEqual([])
  })

  it('a stale orphan (before the newest end-seed) blocks nothing (§7.12, INV-45)', async () => {
    const events = prefixWith(PRE_STEP_3_2, liveStart, { time: T, type: 'session/end-seed', data: {} })
    const b = bench({ events })
    expect(await b.engine.compactRegion(3, 42)).not.toBeNull()
    expect(b.written()).toEqual(COMMITTED)
  })

  it('compactRegion refuses bad spans, the system head, a live lock and a missing turn without writing (§3.8)', async () => {
    const cases: Array<[number, number, string]> = [
      [3, 9001, 'not-a-node'], [12, 15, 'not-a-node'], [42, 3, 'reversed'], [3, 47, 'unbalanced-after'], [49, 49, 'unbalanced-before'],
      [2, 42, 'contains-system-head'],
    ]
    const b = bench()
    for (const [start, end, code] of cases) {
      const err = await rejectionOf(b.engine.compactRegion(start, end))
      expect(err).toBeInstanceOf(RegionError)
      expect(err).toMatchObject({ code })
    }
    expect(await rejectionOf(bench({ prefix: BETWEEN_TURNS_2_3 }).engine.compactRegion(3, 28))).toMatchObject({ code: 'no-open-turn' })
    expect(await rejectionOf(bench({ events: prefixWith(PRE_STEP_3_2, liveStart) }).engine.compactRegion(3, 42))).toBeInstanceOf(CompactionBusyError)
    expect(b.written()).toEqual([])
    expect(b.log.nodes).toEqual(SURFACE_3_2)
  })

  it('a positional span whose start seq exceeds its end seq is compacted by position (§4.3)', async () => {
    const b = bench({ compaction: [{ kind: 'reply', blocks: [{ type: 'text', text: 'first' }] }, { kind: 'reply', blocks: [{ type: 'text', text: 'm' }] }] })
    const first = await b.engine.compactRegion(3, 23)
    const checkpoint = (first?.summarySeq ?? 0) + 1
    const second = await b.engine.compactRegion(checkpoint, 42)
    expect(second.shadowedRange).toEqual({ start: checkpoint, end: 42 })
    expect(second.shadowedSeqs).toEqual([checkpoint, 28, 37, 42])
    expectBracketInvariants(b.log)
  })

  it('pressure below the threshold writes nothing, not even a prune (§3.11)', async () => {
    const b = bench({ prefix: 41, pruner: true }) // after #40: pressure 1,922
    expect(await b.engine.compactIfNeeded('pressure')).toBeNull()
    await b.engine.preStep()
    expect(b.written()).toEqual([])
    expect(b.warnings).toEqual([])
  })

  it('pruning alone can relieve pressure: prune pair, no bracket (§3.5 step 9, Appendix B #14/#15)', async () => {
    let now = appendixBTime(14)
    const b = bench({ prefix: 14, pruner: true, engine: { clock: () => (now += 5) - 5 } })
    expect(await b.engine.compactIfNeeded('pressure')).toBeNull()
    expect(b.appended()).toEqual(appendixBEvents().slice(14, 16))
  })

  it('auto: false makes the pre-step a no-op; explicit entry points still work', async () => {
    const b = bench({ config: { auto: false } })
    await b.engine.preStep()
    expect(b.written()).toEqual([])
    expect(await b.engine.compactIfNeeded('pressure')).not.toBeNull()
  })
})

/** An open turn whose surface is [system head, user message] under the running example's header and tools. */
function envelopeSession(systemText: string, userText: string): SessionEvent[] {
  const b = appendixBEvents()
  const header = b[4] as SessionEvent<'request/header'>
  const tools = header.data.header.tools ?? []
  const bigTools = Array.from({ length: 20 }, (_, i) => ({ ...tools[0], name: `tool_${i}`, description: `${tools[0]?.description ?? ''} ${'d'.repeat(200)}` }))
  const drafts: EventDraft[] = [
    { time: T, type: 'turn/start', data: { turn: 1 } },
    { time: T, type: 'step/start', data: { turn: 1, step: 1 } },
    { time: T, type: 'system/message', data: { id: 'sys' as never, role: 'system', content: [{ type: 'text', text: systemText }], source: { kind: 'plugin', plugin: 'system-prompt' } }, surfaceOp: 'append' },
    { time: T, type: 'user/message', data: { id: 'u' as never, role: 'user', content: [{ type: 'text', text: userText }], source: { kind: 'user' } }, surfaceOp: 'append' },
    { time: T, type: 'request/header', data: { header: { config: { provider: 'mock', model: 'mock-4k' }, tools: bigTools as never }, reason: 'initial' } },
    { time: T, type: 'request/context', data: { provider: 'mock', model: 'mock-4k', contextWindow: 4000, imageTokens: 85 } },
  ]
  return drafts.map((d, seq) => ({ ...d, seq }) as SessionEvent)
}
