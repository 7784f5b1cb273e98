/**
 * Pins the join of the world record to the request capture (`joinWorld`, `src/checker/world.ts`, module doc):
 * - requests are taken in capture-index order, from the record's `captureOffset`;
 * - session-title world requests are not joined;
 * - a world request pairs with the next capture entry of the same purpose and model; a world failure only with
 *   a failed (`error` / `aborted`) entry; failed entries may be passed over, a successful one may not;
 * - the orphan (WORLD-06) messages name the world answer exactly (`a reply (finish)`, `CLASS (HTTP n)`) and sit at
 *   the blocking entry's dispatch revision (clamped to the log) or at the last seq of the log;
 * - a pair's window ends at the next capture entry's dispatch revision, null for the last entry;
 * - `recordedFrom` is the record's `logOffset`, `lastSeq` the last seq of the log (0 when empty).
 */
import { describe, expect, it } from 'vitest'
import type { CapturedRequest, LogEvent } from '@compaction-sim/core'
import { joinWorld } from '../../src/checker/world.ts'
import type { WorldRecord, WorldRequest } from '../../src/provider/world-record.ts'

type Purpose = 'conversation' | 'compaction'

function wreq(index: number, purpose: WorldRequest['purpose'], model: string, failureClass: string | null, status: number | null, finish?: 'stop' | 'tool-calls' | 'max-tokens'): WorldRequest {
  return {
    index, purpose, model, route: model, stream: false, images: [],
    answer: failureClass === null ? (finish === undefined ? { kind: 'reply', status } : { kind: 'reply', status, finish }) : { kind: 'reject', status },
    failureClass, usage: null, usageDelivery: 'none',
  } as WorldRequest
}

function cap(index: number, purpose: Purpose, model: string, outcome: CapturedRequest['outcome'], rev: number): CapturedRequest {
  return { index, logRevisionAtDispatch: rev, time: 0, purpose, provider: 'mock', model, messages: [], outcome }
}

function record(requests: WorldRequest[], captureOffset = 0, logOffset = 0): WorldRecord {
  return { schemaVersion: 1, kind: 'world-record', wire: 'openai', captureOffset, logOffset, routes: [], requests } as unknown as WorldRecord
}

const events = (n: number): LogEvent[] => Array.from({ length: n }, (_, seq) => ({ seq, type: 'noop', data: {} }) as unknown as LogEvent)

type Joined = ReturnType<typeof joinWorld>
const pairLines = (j: Joined): string[] => j.pairs.map((p) => `w#${p.w.index}->c#${p.c.index} until ${String(p.until)}`)
const orphanLines = (j: Joined): string[] => j.orphans.map((o) => `w#${o.w.index}@${o.seq}: ${o.message}`)

const HIDDEN = 'a request the log and capture do not show (a hidden retry, or a request left out of the capture)'
const NONE_LEFT = 'but the capture has no request left for it: a request the log and capture do not show'

describe('joinWorld: pairing', () => {
  it('pairs each world request with the next capture entry of its purpose and model, windows ending at the next dispatch', () => {
    const j = joinWorld(record([wreq(0, 'conversation', 'm1', null, 200), wreq(1, 'compaction', 'm2', null, 200), wreq(2, 'conversation', 'm1', null, 200)]),
      [cap(0, 'conversation', 'm1', 'tool-calls', 1), cap(1, 'compaction', 'm2', 'stop', 4), cap(2, 'conversation', 'm1', 'stop', 6)], events(9))
    expect(pairLines(j)).toEqual(['w#0->c#0 until 4', 'w#1->c#1 until 6', 'w#2->c#2 until null'])
    expect(orphanLines(j)).toEqual([])
  })

  it('takes the capture in index order whatever order it is given in', () => {
    const j = joinWorld(record([wreq(0, 'conversation', 'm1', null, 200), wreq(1, 'compaction', 'm1', null, 200), wreq(2, 'conversation', 'm2', null, 200)]),
      [cap(2, 'conversation', 'm2', 'stop', 7), cap(1, 'compaction', 'm1', 'stop', 5), cap(0, 'conversation', 'm1', 'stop', 2)], events(9))
    expect(pairLines(j)).toEqual(['w#0->c#0 until 5', 'w#1->c#1 until 7', 'w#2->c#2 until null'])
    expect(orphanLines(j)).toEqual([])
  })

  it('starts at the record captureOffset and reports its logOffset, the events and the last seq', () => {
    const evs = events(5)
    const j = joinWorld(record([wreq(0, 'conversation', 'm1', null, 200)], 1, 3), [cap(0, 'conversation', 'm1', 'stop', 0), cap(1, 'conversation', 'm1', 'stop', 3), cap(2, 'compaction', 'm1', 'stop', 4)], evs)
    expect(pairLines(j)).toEqual(['w#0->c#1 until 4'])
    expect(j.orphans).toEqual([])
    expect(j.recordedFrom).toBe(3)
    expect(j.lastSeq).toBe(4)
    expect(j.events).toBe(evs)
  })

  it('a captureOffset past the capture leaves every world request without a pair', () => {
    const j = joinWorld(record([wreq(0, 'conversation', 'm1', null, 200)], 5), [cap(0, 'conversation', 'm1', 'stop', 0)], events(3))
    expect(pairLines(j)).toEqual([])
    expect(orphanLines(j)).toEqual([`w#0@2: world request #0 (conversation, m1) answered a reply (stop), ${NONE_LEFT}`])
  })

  it('does not join session-title world requests', () => {
    const j = joinWorld(record([wreq(0, 'session-title', 'm1', null, 200), wreq(1, 'conversation', 'm1', null, 200)]), [cap(0, 'conversation', 'm1', 'stop', 1)], events(3))
    expect(pairLines(j)).toEqual(['w#1->c#0 until null'])
    expect(orphanLines(j)).toEqual([])
  })

  it('passes over failed (error, aborted) capture entries that do not fit', () => {
    const j = joinWorld(record([wreq(0, 'conversation', 'm1', null, 200)]),
      [cap(0, 'compaction', 'm1', 'error', 1), cap(1, 'conversation', 'm2', 'aborted', 2), cap(2, 'conversation', 'm1', 'stop', 3)], events(6))
    expect(pairLines(j)).toEqual(['w#0->c#2 until null'])
    expect(orphanLines(j)).toEqual([])
  })

  it('a world failure pairs with a failed capture entry (error or aborted) of its purpose and model', () => {
    const j = joinWorld(record([wreq(0, 'conversation', 'm1', 'RATE_LIMITED', 429), wreq(1, 'conversation', 'm1', 'CONNECTION_RESET', null), wreq(2, 'conversation', 'm1', null, 200)]),
      [cap(0, 'conversation', 'm1', 'error', 1), cap(1, 'conversation', 'm1', 'aborted', 2), cap(2, 'conversation', 'm1', 'stop', 3)], events(5))
    expect(pairLines(j)).toEqual(['w#0->c#0 until 2', 'w#1->c#1 until 3', 'w#2->c#2 until null'])
    expect(orphanLines(j)).toEqual([])
  })

  it('a world reply pairs with a failed capture entry of its purpose and model', () => {
    const j = joinWorld(record([wreq(0, 'compaction', 'm1', null, 200)]), [cap(0, 'compaction', 'm1', 'error', 2)], events(4))
    expect(pairLines(j)).toEqual(['w#0->c#0 until null'])
    expect(orphanLines(j)).toEqual([])
  })
})

describe('joinWorld: orphans (WORLD-06)', () => {
  it('a successful capture entry of another purpose blocks: the orphan names both requests at its dispatch revision', () => {
    const j = joinWorld(record([wreq(0, 'conversation', 'm1', null, 200, 'tool-calls')]), [cap(0, 'compaction', 'm1', 'stop', 3)], events(6))
    expect(pairLines(j)).toEqual([])
    expect(orphanLines(j)).toEqual([`w#0@3: world request #0 (conversation, m1) answered a reply (tool-calls), but the capture's next request #0 is a compaction request to m1 that ended stop: ${HIDDEN}`])
  })

  it('a successful capture entry of another model blocks', () => {
    const j = joinWorld(record([wreq(0, 'conversation', 'm1', null, 200, 'max-tokens')]), [cap(0, 'conversation', 'm2', 'max-tokens', 1)], events(4))
    expect(pairLines(j)).toEqual([])
    expect(orphanLines(j)).toEqual([`w#0@1: world request #0 (conversation, m1) answered a reply (max-tokens), but the capture's next request #0 is a conversation request to m2 that ended max-tokens: ${HIDDEN}`])
  })

  it('a world failure cannot pair with a successful capture entry; the answer is named with its HTTP status', () => {
    const j = joinWorld(record([wreq(4, 'conversation', 'm1', 'RATE_LIMITED', 429)]), [cap(7, 'conversation', 'm1', 'stop', 2)], events(4))
    expect(pairLines(j)).toEqual([])
    expect(orphanLines(j)).toEqual([`w#4@2: world request #4 (conversation, m1) answered RATE_LIMITED (HTTP 429), but the capture's next request #7 is a conversation request to m1 that ended stop: ${HIDDEN}`])
  })

  it('a world failure with no HTTP status is named by its class alone', () => {
    const j = joinWorld(record([wreq(0, 'compaction', 'm1', 'CONNECTION_RESET', null)]), [cap(0, 'compaction', 'm1', 'tool-calls', 9)], events(4))
    expect(orphanLines(j)).toEqual([`w#0@3: world request #0 (compaction, m1) answered CONNECTION_RESET, but the capture's next request #0 is a compaction request to m1 that ended tool-calls: ${HIDDEN}`])
  })

  it('a world request with no capture entry left is an orphan at the last seq of the log; a reply without finish is a stop', () => {
    const j = joinWorld(record([wreq(0, 'conversation', 'm1', null, 200), wreq(1, 'compaction', 'm1', null, 200)]), [cap(0, 'conversation', 'm1', 'stop', 0)], events(4))
    expect(pairLines(j)).toEqual(['w#0->c#0 until null'])
    expect(orphanLines(j)).toEqual([`w#1@3: world request #1 (compaction, m1) answered a reply (stop), ${NONE_LEFT}`])
  })

  it('failed entries passed over leave no entry: the orphan is at the last seq; an empty log puts it at 0', () => {
    const j = joinWorld(record([wreq(0, 'conversation', 'm1', null, 200)]), [cap(0, 'compaction', 'm1', 'error', 1), cap(1, 'compaction', 'm1', 'aborted', 2)], events(5))
    expect(orphanLines(j)).toEqual([`w#0@4: world request #0 (conversation, m1) answered a reply (stop), ${NONE_LEFT}`])
    const empty = joinWorld(record([wreq(0, 'conversation', 'm1', null, 200)]), [], [])
    expect(orphanLines(empty)).toEqual([`w#0@0: world request #0 (conversation, m1) answered a reply (stop), ${NONE_LEFT}`])
    expect(empty.lastSeq).toBe(0)
  })
})
