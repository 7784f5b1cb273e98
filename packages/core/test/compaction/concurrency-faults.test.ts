/**
 * Concurrency and drift (§13.6, FAULT-70 … FAULT-79): foreign writers interleaved with an in-flight summary
 * call through the scripted adapter's `before` hooks (or a custom summarizer's continuation), the log-recorded
 * lock between entry points, and revalidation in whole-surface (automatic) vs selected-span (manual) mode.
 */
import { describe, expect, it } from 'vitest'
import type { Summarizer } from '../../src/compaction/summarizer.ts'
import type { EventDraft, SessionEvent } from '../../src/log/events.ts'
import type { ToolResultMessage } from '../../src/log/llm.ts'
import { CompactionBusyError } from '../../src/policy/pressure.ts'
import { expectBracketInvariants } from './support/invariants.ts'
import {
  admission, bench, BETWEEN_TURNS_2_3, rejectionOf, SHORT_SUMMARY, summaryReply, type Bench,
} from './support/bench.ts'

const T = 1_700_000_001_000
const SURFACE_AFTER_TURN_2 = [2, 3, 10, 15, 23, 28, 37]

/** A foreign user message appended at the tail (not ours: another writer). */
function foreignUser(text: string): EventDraft<'user/message'> {
  return { time: T, type: 'user/message', data: { id: `foreign-${text}` as never, role: 'user', content: [{ type: 'text', text }], source: { kind: 'user' } }, surfaceOp: 'append' }
}

/** A foreign replacement of `start … end` by one user message (another backend's checkpoint). */
function foreignReplace(b: Bench, start: number, end: number): EventDraft<'user/message'> {
  const s = b.log.state.surface
  const cites = s.nodes.slice(s.position(start), s.position(end) + 1)
  return {
    time: T, type: 'user/message',
    data: { id: `foreign-${start}-${end}` as never, role: 'user', content: [{ type: 'text', text: 'foreign summary' }], source: { kind: 'plugin', plugin: 'foreign' } },
    surfaceOp: { op: 'replace', start: start as never, end: end as never }, sourceEventSeqs: cites,
  }
}

describe('§13.6 concurrency and drift', () => {
  it('FAULT-70: compactNow while an automatic bracket is live → busy, no summary call; a live manual orphan → busy too', async () => {
    let nested: Promise<unknown> = Promise.resolve()
    const a = admission()
    const b = bench({ compaction: [summaryReply(SHORT_SUMMARY, { before: () => { nested = rejectionOf(b.engine.compactNow({ admission: a })) } })] })
    const result = await b.engine.compactIfNeeded('pressure')
    expect(await nested).toMatchObject({ name: 'ManualCompactionError', code: 'busy' })
    expect(b.adapter.requests).toHaveLength(1)
    expect(result).not.toBeNull()
    expect([a.reserved, a.released]).toEqual([1, 1])
    expectBracketInvariants(b.log)

    const events = [...bench({ prefix: BETWEEN_TURNS_2_3 }).log.events]
    events.push({ seq: events.length, time: T, type: 'compaction/start', data: { compactionId: 'cmp-orphan', turn: null } } as SessionEvent)
    const m = bench({ events })
    const err = await rejectionOf(m.engine.compactNow({ admission: admission() }))
    expect(err).toMatchObject({ code: 'busy', message: 'busy: compaction cmp-orphan (started at seq 40) is still open' })
    expect(m.written()).toEqual([])
  })

  it('FAULT-71: compactRegion while a manual bracket is live → busy', async () => {
    let nested: Promise<unknown> = Promise.resolve()
    const m = bench({
      prefix: BETWEEN_TURNS_2_3,
      compaction: [summaryReply(SHORT_SUMMARY, { before: () => { nested = rejectionOf(m.engine.compactRegion(3, 28)) } })],
    })
    await m.engine.compactNow({ admission: admission() })
    expect(await nested).toBeInstanceOf(CompactionBusyError)
    expect(m.written()).toEqual(['compaction/start', 'compaction/summary', 'user/message', 'compaction/end'])
    expectBracketInvariants(m.log)
  })

  it('FAULT-72: compactNow with an open turn, or while the agent runs / has queued work → busy, nothing written', async () => {
    const b = bench()
    expect(await rejectionOf(b.engine.compactNow({ admission: admission() }))).toMatchObject({ code: 'busy', message: 'busy: turn 3 is open; a manual compaction runs between turns' })
    const m = bench({ prefix: BETWEEN_TURNS_2_3 })
    const running = admission(true)
    expect(await rejectionOf(m.engine.compactNow({ admission: running }))).toMatchObject({ code: 'busy' })
    expect([b.written(), m.written(), b.adapter.requests.length, m.adapter.requests.length]).toEqual([[], [], 0, 0])
  })

  it('FAULT-73: a foreign replacement of a selected node during summarization → changed; the foreign replacement stays, no checkpoint', async () => {
    const m = bench({ prefix: BETWEEN_TURNS_2_3, compaction: [summaryReply(SHORT_SUMMARY, { before: () => { m.log.append(foreignReplace(m, 3, 3)) } })] })
    const err = await rejectionOf(m.engine.compactNow({ admission: admission() }))
    expect(err).toMatchObject({ name: 'ManualCompactionError', code: 'changed' })
    expect(m.written()).toEqual(['compaction/start', 'user/message', 'compaction/end'])
    expect(m.log.nodes).toEqual([2, 41, 10, 15, 23, 28, 37])
    expectBracketInvariants(m.log)

    const b = bench({ compaction: [summaryReply(SHORT_SUMMARY, { before: () => { b.log.append(foreignReplace(b, 3, 3)) } })] })
    expect(await rejectionOf(b.engine.compactIfNeeded('pressure'))).toMatchObject({ name: 'CompactionError', code: 'changed' })
  })

  it('FAULT-74: a foreign replacement of a middle selected node (a foreign prune of #15) → changed', async () => {
    const prune = (b: Bench): EventDraft<'tool/result'> => {
      const original = b.log.event(15) as SessionEvent<'tool/result'>
      const message = original.data.message
      const content = [{ ...message.content[0], content: [{ type: 'text', text: 'trimmed' }] }] as ToolResultMessage['content']
      return { time: T, type: 'tool/result', data: { ...original.data, message: { ...message, content } }, surfaceOp: { op: 'replace', start: 15 as never, end: 15 as never }, sourceEventSeqs: [15 as never] }
    }
    const b = bench({ compaction: [summaryReply(SHORT_SUMMARY, { before: () => { b.log.append(prune(b)) } })] })
    const err = await rejectionOf(b.engine.compactIfNeeded('pressure'))
    expect(err).toMatchObject({ name: 'CompactionError', code: 'changed', closed: true })
    expect((err as Error).message).toMatch(/^the surface changed while the summary was prepared: at position 3 expected node 15/)
    expect(b.written()).toEqual(['compaction/start', 'tool/result', 'compaction/end'])
    expectBracketInvariants(b.log)
  })

  it('FAULT-75: a selected node\'s price changes during summarization (foreign offload) → changed', async () => {
    const offload: EventDraft = { time: T, type: 'image/offload', data: { targets: [{ seq: 28 as never, imageIndexes: [1] }] } }
    const m = bench({ prefix: BETWEEN_TURNS_2_3, compaction: [summaryReply(SHORT_SUMMARY, { before: () => { m.log.append(offload) } })] })
    const err = await rejectionOf(m.engine.compactNow({ admission: admission() }))
    expect(err).toMatchObject({ code: 'changed' })
    expect((err as Error).message).toMatch(/node 28 \(152 tokens\), found node 28 \(114 tokens\)/)
    expect(m.written()).toEqual(['compaction/start', 'image/offload', 'compaction/end'])
    expect(m.log.nodes).toEqual(SURFACE_AFTER_TURN_2)
  })

  it('FAULT-76: a surface append outside the span during automatic summarization → changed (whole-surface)', async () => {
    const b = bench({ compaction: [summaryReply(SHORT_SUMMARY, { before: () => { b.log.append(foreignUser('steer')) } })] })
    expect(await rejectionOf(b.engine.compactIfNeeded('pressure'))).toMatchObject({ name: 'CompactionError', code: 'changed' })
    expect(b.written()).toEqual(['compaction/start', 'user/message', 'compaction/end'])
    expectBracketInvariants(b.log)
  })

  it('FAULT-77: a surface append outside the span during manual summarization is tolerated; it stays after the checkpoint', async () => {
    const m = bench({ prefix: BETWEEN_TURNS_2_3, compaction: [summaryReply(SHORT_SUMMARY, { before: () => { m.log.append(foreignUser('queued context')) } })] })
    const result = await m.engine.compactNow({ admission: admission() })
    expect(result?.shadowedSeqs).toEqual([3, 10, 15, 23, 28])
    expect(m.written()).toEqual(['compaction/start', 'user/message', 'compaction/summary', 'user/message', 'compaction/end'])
    expect(m.log.nodes).toEqual([2, 43, 37, 41])
    expectBracketInvariants(m.log)
  })

  it('FAULT-78: a log-only append during summarization is tolerated in both modes', async () => {
    const sameHeader = (b: Bench): EventDraft => ({ time: T, type: 'request/header', data: { header: structuredClone(b.log.state.header?.header ?? { config: { provider: 'mock', model: 'mock-4k' } }), reason: 'series' } })
    const b = bench({ compaction: [summaryReply(SHORT_SUMMARY, { before: () => { b.log.append(sameHeader(b)) } })] })
    expect(await b.engine.compactIfNeeded('pressure')).not.toBeNull()
    expect(b.written()).toEqual(['compaction/start', 'request/header', 'compaction/summary', 'user/message', 'compaction/end'])
    expectBracketInvariants(b.log)

    const note = (m: Bench): void => { m.log.accept({ seq: m.log.length as never, time: T, type: 'inbox/note', data: { text: 'hi' }, ignorable: true }) }
    const m = bench({ prefix: BETWEEN_TURNS_2_3, compaction: [summaryReply(SHORT_SUMMARY, { before: () => { note(m) } })] })
    expect(await m.engine.compactNow({ admission: admission() })).not.toBeNull()
    expect(m.written()).toEqual(['compaction/start', 'inbox/note', 'compaction/summary', 'user/message', 'compaction/end'])
    expectBracketInvariants(m.log)
  })

  it('FAULT-79: a foreign replacement landing after the summarizer resolved but before revalidation → changed', async () => {
    const order: string[] = []
    const summarizer: Summarizer = {
      summarize: async () => {
        queueMicrotask(() => { order.push('foreign'); b.log.append(foreignReplace(b, 42, 42)) })
        order.push('resolved')
        return { summary: [{ type: 'text', text: SHORT_SUMMARY }], provider: 'template', model: 'v1' }
      },
    }
    const b = bench({ engine: { summarizer } })
    const err = await rejectionOf(b.engine.compactRegion(3, 42))
    expect(order).toEqual(['resolved', 'foreign'])
    expect(err).toMatchObject({ name: 'CompactionError', code: 'changed' })
    expect(b.written()).toEqual(['compaction/start', 'user/message', 'compaction/end'])
    expectBracketInvariants(b.log)
  })
})
