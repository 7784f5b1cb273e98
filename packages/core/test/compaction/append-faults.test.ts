/**
 * Append and persistence faults (§13.5, FAULT-60 … FAULT-66): storage faults injected on the engine's append
 * path after pre-validation, flush failures of manual compaction, and pruning outside a turn. Each test
 * asserts the events written, the surface, the error class, the lock state afterwards and the flush.
 */
import { appendixBEvents } from '@compaction-sim/fixtures'
import { describe, expect, it } from 'vitest'
import { CompactionBusyError } from '../../src/policy/pressure.ts'
import { PruneError } from '../../src/prune/session.ts'
import type { EventDraft, SessionEvent } from '../../src/log/events.ts'
import type { EventLog } from '../../src/log/event-log.ts'
import { expectBracketInvariants } from './support/invariants.ts'
import {
  admission, bench, BETWEEN_TURNS_2_3, failReply, faultyAppend, rejectionOf, type Bench, type BenchOptions,
} from './support/bench.ts'

const SURFACE_3_2 = [2, 3, 10, 15, 23, 28, 37, 42, 47, 49]
const SURFACE_AFTER_TURN_2 = [2, 3, 10, 15, 23, 28, 37]

/** A bench whose append path refuses the drafts `refuse` matches; counts flushes (optionally failing them). */
function faulty(refuse: (d: EventDraft) => boolean, options: BenchOptions & { flushFails?: boolean } = {}): Bench & { flushes: () => number } {
  let flushes = 0
  const logRef: { log?: EventLog } = {}
  const b = bench({
    ...options,
    engine: {
      append: (d) => faultyAppend(logRef.log as EventLog, refuse)(d),
      flush: async () => {
        flushes++
        if (options.flushFails === true) throw new Error('disk full')
      },
      ...options.engine,
    },
  })
  logRef.log = b.log
  return { ...b, flushes: () => flushes }
}

const isEnd = (error: boolean) => (d: EventDraft): boolean => d.type === 'compaction/end' && ('error' in d.data) === error

describe('§13.5 append and persistence faults', () => {
  it('FAULT-60: the success-path end is refused → checkpoint committed, live orphan, every later entry point busy; automatic warns; manual → commit, no flush', async () => {
    const b = faulty(isEnd(false))
    await b.engine.preStep()
    expect(b.written()).toEqual(['compaction/start', 'compaction/summary', 'user/message'])
    expect(b.log.nodes).toEqual([2, 53, 47, 49]) // replaced
    expect(b.log.state.lock.state).toBe('live')
    expect(b.warnings).toEqual(['step compaction failed: storage fault: compaction/end not persisted; continuing the turn'])
    expect(await rejectionOf(b.engine.compactIfNeeded('pressure'))).toBeInstanceOf(CompactionBusyError)
    expect(await rejectionOf(b.engine.compactIfNeeded('context-overflow'))).toBeInstanceOf(CompactionBusyError)
    expect(await rejectionOf(b.engine.compactRegion(53, 53))).toBeInstanceOf(CompactionBusyError)
    expect(b.written()).toHaveLength(3)
    expectBracketInvariants(b.log, { orphan: true })

    const m = faulty(isEnd(false), { prefix: BETWEEN_TURNS_2_3 })
    const a = admission()
    const err = await rejectionOf(m.engine.compactNow({ admission: a }))
    expect(err).toMatchObject({ name: 'ManualCompactionError', code: 'commit' })
    expect(m.written()).toEqual(['compaction/start', 'compaction/summary', 'user/message'])
    expect([m.flushes(), a.released]).toEqual([0, 1])
    expect(await rejectionOf(m.engine.compactNow({ admission: admission() }))).toMatchObject({ code: 'busy' })
    expectBracketInvariants(m.log, { orphan: true })
  })

  it('FAULT-61: the end{error} append is refused → unmatched start (live orphan), commit, no flush', async () => {
    const m = faulty(isEnd(true), { prefix: BETWEEN_TURNS_2_3, compaction: [failReply('SERVER')] })
    const err = await rejectionOf(m.engine.compactNow({ admission: admission() }))
    expect(err).toMatchObject({ name: 'ManualCompactionError', code: 'commit' })
    expect((err as Error).message).toMatch(/failed to close compaction cmp-1: storage fault: compaction\/end not persisted \(after: summary call failed: SERVER\)/)
    expect(m.written()).toEqual(['compaction/start', 'compaction/summary-error'])
    expect(m.log.nodes).toEqual(SURFACE_AFTER_TURN_2)
    expect(m.flushes()).toBe(0)
    expect(m.log.state.lock.state).toBe('live')
    expectBracketInvariants(m.log, { orphan: true })

    const b = faulty(isEnd(true), { compaction: [failReply('SERVER')] })
    expect(await rejectionOf(b.engine.compactIfNeeded('pressure'))).toMatchObject({ name: 'CompactionError', code: 'commit', closed: false })
  })

  it('FAULT-62: the compaction/summary append is refused → end{error}, surface unchanged, commit', async () => {
    const b = faulty((d) => d.type === 'compaction/summary')
    const err = await rejectionOf(b.engine.compactIfNeeded('pressure'))
    expect(err).toMatchObject({ name: 'CompactionError', code: 'commit', closed: true })
    expect(b.written()).toEqual(['compaction/start', 'compaction/end'])
    expect((b.appended()[1] as SessionEvent<'compaction/end'>).data.error).toBe('storage fault: compaction/summary not persisted')
    expect(b.log.nodes).toEqual(SURFACE_3_2)
    expectBracketInvariants(b.log)

    const m = faulty((d) => d.type === 'compaction/summary', { prefix: BETWEEN_TURNS_2_3 })
    expect(await rejectionOf(m.engine.compactNow({ admission: admission() }))).toMatchObject({ code: 'commit' })
    expect(m.flushes()).toBe(1) // the bracket closed, so the attempt is flushed
  })

  it('FAULT-63: the checkpoint append is refused after pre-validation → summary then end{error} (INV-13 exemption), commit', async () => {
    const m = faulty((d) => d.type === 'user/message', { prefix: BETWEEN_TURNS_2_3 })
    const err = await rejectionOf(m.engine.compactNow({ admission: admission() }))
    expect(err).toMatchObject({ name: 'ManualCompactionError', code: 'commit' })
    expect(m.written()).toEqual(['compaction/start', 'compaction/summary', 'compaction/end'])
    expect(m.log.nodes).toEqual(SURFACE_AFTER_TURN_2)
    expect(m.log.state.lock.state).toBe('free')
    expectBracketInvariants(m.log, { replacementFault: true })
  })

  it('FAULT-64: the flush fails after a successful manual bracket → persistence; the bracket is complete', async () => {
    const m = faulty(() => false, { prefix: BETWEEN_TURNS_2_3, flushFails: true })
    const err = await rejectionOf(m.engine.compactNow({ admission: admission() }))
    expect(err).toMatchObject({ name: 'ManualCompactionError', code: 'persistence', message: 'persistence: compaction committed but the flush failed: disk full' })
    expect(m.written()).toEqual(['compaction/start', 'compaction/summary', 'user/message', 'compaction/end'])
    expect(m.log.nodes).toEqual([2, 42, 37])
    expect(m.flushes()).toBe(1)
    expectBracketInvariants(m.log)
  })

  it('FAULT-65: the flush fails after a failed manual bracket → the original class (summary)', async () => {
    const m = faulty(() => false, { prefix: BETWEEN_TURNS_2_3, flushFails: true, compaction: [failReply('SERVER')] })
    expect(await rejectionOf(m.engine.compactNow({ admission: admission() }))).toMatchObject({ code: 'summary' })
    expect(m.flushes()).toBe(1)
    expect(m.written()).toEqual(['compaction/start', 'compaction/summary-error', 'compaction/end'])
  })

  it('FAULT-66: pruning while no turn is open fails its pre-validation before writing; no dangling compaction/prune', async () => {
    const events = appendixBEvents().slice(0, 14)
    events.push({ seq: 14, time: 1700000000075, type: 'turn/end', data: { turn: 1, reason: { kind: 'completed' } } } as SessionEvent)
    for (const trigger of ['pressure', 'context-overflow'] as const) {
      const b = bench({ events, pruner: true })
      const err = await rejectionOf(b.engine.compactIfNeeded(trigger))
      expect(err).toBeInstanceOf(PruneError)
      expect(err).toMatchObject({ code: 'NO_OPEN_TURN' })
      expect(b.written()).toEqual([])
    }
  })
})
