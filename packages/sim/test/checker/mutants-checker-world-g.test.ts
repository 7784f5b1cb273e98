/**
 * Mutant-killing tests for WORLD-01 … WORLD-04 (`src/checker/world.ts`), run through each check's own hooks on
 * hand-written logs (event types and data only), request captures and world records, all built inside each test.
 * Pins:
 * - WORLD-01: the failure code read from a compaction/summary-error (compaction attempts only), an llm/retry or a
 *   turn/end error without a failure object is `undefined` (no throw); a capture or log code equal to the world's
 *   class is no violation;
 * - WORLD-02: a route with a null window is not judged; a request/context naming the true window passes;
 * - WORLD-03: a demand of 0 images is not judged; the retry is the next pair of the same purpose after the
 *   rejected one; a demand with no later pair is not judged; a conversation retry after a turn/end and a
 *   compaction retry after a compaction/end or compaction/start are not retries; the expected images are the
 *   rejected ones minus the first n, compared element by element;
 * - WORLD-04: the summary's text blocks are joined with no separator; a summary that is not a block list is the empty text;
 * - the join falls back to an empty capture when the context has none.
 */
import { describe, expect, it } from 'vitest'
import type { CapturedRequest } from '@compaction-sim/core'
import type { WorldRecord, WorldRequest } from '../../src/provider/world-record.ts'
import { captured as cap, runWorldHooks, served, worldOf as world, type Purpose } from './world-hooks.ts'

type Ev = [type: string, data?: Record<string, unknown>]

function failed(index: number, purpose: Purpose, cls: string, extra: Partial<WorldRequest> = {}): WorldRequest {
  return served(index, purpose, { answer: { kind: 'reject', status: 400 }, failureClass: cls, ...extra })
}

const offload = (index: number, purpose: Purpose, n: number, images: string[]): WorldRequest =>
  failed(index, purpose, 'IMAGE_OFFLOAD_REQUIRED', { offloadImages: n, images })

/** `id@seq: message` lines of check `id` run through its own hooks over `events`; a throw fails the test. */
const direct = (id: string, events: Ev[], requests: CapturedRequest[] | null, w: WorldRecord): string[] =>
  runWorldHooks(id, events.map(([type, data]) => (data === undefined ? { type } : { type, data })), requests, w)

const notes = (n: number): Ev[] => Array.from({ length: n }, (): Ev => ['x/note'])

describe('WORLD-01: failure codes read from the log', () => {
  const W400 = (i: number, p: Purpose): string => `world request #${i} (${p}, m) answered OVERFLOW (HTTP 400)`

  it('a compaction/summary-error in a compaction attempt\'s window is read; other events are not', () => {
    const events: Ev[] = [['x/note'], ['compaction/summary-error', { failure: { code: 'SERVER' } }], ['x/note']]
    expect(direct('WORLD-01', events, [cap(0, 'compaction', 0, 'error')], world([failed(0, 'compaction', 'OVERFLOW')]))).toEqual([
      `WORLD-01@1: ${W400(0, 'compaction')}; the log records this attempt's failure as SERVER (compaction/summary-error)`,
    ])
  })

  it('a compaction window without a summary-error is not judged', () => {
    const events: Ev[] = [['x/note'], ['llm/retry', { failure: { code: 'SERVER' } }], ['x/note']]
    expect(direct('WORLD-01', events, [cap(0, 'compaction', 0, 'error')], world([failed(0, 'compaction', 'OVERFLOW')]))).toEqual([])
  })

  it('a compaction/summary-error without a failure records the code undefined', () => {
    const events: Ev[] = [['compaction/summary-error']]
    expect(direct('WORLD-01', events, [cap(0, 'compaction', 0, 'error')], world([failed(0, 'compaction', 'OVERFLOW')]))).toEqual([
      `WORLD-01@0: ${W400(0, 'compaction')}; the log records this attempt's failure as undefined (compaction/summary-error)`,
    ])
  })

  it('an llm/retry without a failure records the code undefined', () => {
    const events: Ev[] = [['x/note'], ['llm/retry']]
    expect(direct('WORLD-01', events, [cap(0, 'conversation', 0, 'error')], world([failed(0, 'conversation', 'OVERFLOW')]))).toEqual([
      `WORLD-01@1: ${W400(0, 'conversation')}; the log records this attempt's failure as undefined (llm/retry)`,
    ])
  })

  it('a turn/end error without an error object records the code undefined', () => {
    const events: Ev[] = [['x/note'], ['turn/end', { reason: { kind: 'error' } }]]
    expect(direct('WORLD-01', events, [cap(0, 'conversation', 0, 'error')], world([failed(0, 'conversation', 'OVERFLOW')]))).toEqual([
      `WORLD-01@1: ${W400(0, 'conversation')}; the log records this attempt's failure as undefined (turn/end)`,
    ])
  })

  it('a capture failure code and a logged code equal to the world\'s class are no violation', () => {
    const events: Ev[] = [['x/note'], ['llm/retry', { failure: { code: 'OVERFLOW' } }]]
    expect(direct('WORLD-01', events, [cap(0, 'conversation', 0, 'error', { failureCode: 'OVERFLOW' })], world([failed(0, 'conversation', 'OVERFLOW')]))).toEqual([])
  })
})

describe('WORLD-02: the true window', () => {
  const ctxEvent = (model: string, contextWindow: number): Ev => ['request/context', { provider: 'p', model, contextWindow }]

  it('a request/context naming the true window passes; a route with no known window is not judged', () => {
    const w = world([], [{ model: 'm', contextWindow: 1000 }, { model: 'n', contextWindow: null }])
    expect(direct('WORLD-02', [ctxEvent('m', 1000), ctxEvent('n', 5)], [], w)).toEqual([])
  })

  it('a request/context naming another window is reported (the control)', () => {
    const w = world([], [{ model: 'm', contextWindow: 1000 }])
    expect(direct('WORLD-02', [ctxEvent('m', 999)], [], w)).toEqual([
      'WORLD-02@0: request/context gives route p/m capacity 999; the world\'s true window is 1000',
    ])
  })
})

describe('WORLD-03: which demand is judged and against which retry', () => {
  const demand = (n: number, of: number): string =>
    `world request #0 (conversation, m) answered IMAGE_OFFLOAD_REQUIRED (HTTP 400) demanding offloadImages ${n} of ${of} images`

  it('a correct retry (the first n images removed, the rest in order) passes', () => {
    const w = world([offload(0, 'conversation', 1, ['a', 'b', 'c']), served(1, 'conversation', { images: ['b', 'c'] })])
    expect(direct('WORLD-03', notes(4), [cap(0, 'conversation', 1, 'error'), cap(1, 'conversation', 3)], w)).toEqual([])
  })

  it('a retry with the right count but one wrong image is reported as not the oldest ones', () => {
    const w = world([offload(0, 'conversation', 1, ['a', 'b', 'c']), served(1, 'conversation', { images: ['b', 'x'] })])
    expect(direct('WORLD-03', notes(4), [cap(0, 'conversation', 1, 'error'), cap(1, 'conversation', 3)], w)).toEqual([
      `WORLD-03@3: ${demand(1, 3)}; its retry, world request #1, carries 2 images (2 removed), not the oldest ones`,
    ])
  })

  it('a demand for 0 images is not judged', () => {
    const w = world([offload(0, 'conversation', 0, ['a', 'b']), served(1, 'conversation', { images: ['b'] })])
    expect(direct('WORLD-03', notes(4), [cap(0, 'conversation', 1, 'error'), cap(1, 'conversation', 3)], w)).toEqual([])
  })

  it('a demand with no later request is not judged', () => {
    const w = world([offload(0, 'conversation', 1, ['a', 'b'])])
    expect(direct('WORLD-03', notes(4), [cap(0, 'conversation', 1, 'error')], w)).toEqual([])
  })

  it('the retry is the next request of the same purpose after the demand, not an earlier one nor one of another purpose', () => {
    const w = world([
      served(0, 'conversation', { images: ['z'] }),
      offload(1, 'conversation', 1, ['a', 'b']),
      served(2, 'compaction', { images: ['q'] }),
      served(3, 'conversation', { images: ['b'] }),
    ])
    const caps = [cap(0, 'conversation', 1), cap(1, 'conversation', 2, 'error'), cap(2, 'compaction', 3), cap(3, 'conversation', 4)]
    expect(direct('WORLD-03', notes(6), caps, w)).toEqual([])
  })

  it('a conversation request after a turn/end is not a retry', () => {
    const w = world([offload(0, 'conversation', 1, ['a', 'b']), served(1, 'conversation', { images: ['a', 'b'] })])
    const events: Ev[] = [['x/note'], ['x/note'], ['turn/end'], ['x/note'], ['x/note']]
    expect(direct('WORLD-03', events, [cap(0, 'conversation', 1, 'error'), cap(1, 'conversation', 4)], w)).toEqual([])
  })

  it('a compaction request after a compaction/end, or after a compaction/start, is not a retry', () => {
    const w = world([offload(0, 'compaction', 1, ['a', 'b']), served(1, 'compaction', { images: ['a', 'b'] })])
    const caps = [cap(0, 'compaction', 1, 'error'), cap(1, 'compaction', 4)]
    expect(direct('WORLD-03', [['x/note'], ['x/note'], ['compaction/end'], ['x/note'], ['x/note']], caps, w)).toEqual([])
    expect(direct('WORLD-03', [['x/note'], ['x/note'], ['compaction/start'], ['x/note'], ['x/note']], caps, w)).toEqual([])
  })

  it('a compaction request after a turn/end (no bracket event) is a retry and judged', () => {
    const w = world([offload(0, 'compaction', 1, ['a', 'b']), served(1, 'compaction', { images: ['a', 'b'] })])
    const events: Ev[] = [['x/note'], ['x/note'], ['turn/end'], ['x/note'], ['x/note']]
    expect(direct('WORLD-03', events, [cap(0, 'compaction', 1, 'error'), cap(1, 'compaction', 4)], w)).toEqual([
      'WORLD-03@4: world request #0 (compaction, m) answered IMAGE_OFFLOAD_REQUIRED (HTTP 400) demanding offloadImages 1 of 2 images; its retry, world request #1, carries 2 images (0 removed), expected 1',
    ])
  })

  it('a conversation request after a compaction/end (no turn/end) is a retry and judged', () => {
    const w = world([offload(0, 'conversation', 1, ['a', 'b']), served(1, 'conversation', { images: ['a', 'b'] })])
    const events: Ev[] = [['x/note'], ['x/note'], ['compaction/end'], ['x/note'], ['x/note']]
    expect(direct('WORLD-03', events, [cap(0, 'conversation', 1, 'error'), cap(1, 'conversation', 4)], w)).toEqual([
      `WORLD-03@4: ${demand(1, 2)}; its retry, world request #1, carries 2 images (0 removed), expected 1`,
    ])
  })
})

describe('WORLD-04: the summary text', () => {
  it('the summary\'s text blocks are joined with no separator', () => {
    const w = world([served(0, 'compaction', { summaryText: 'abcd' })])
    const events: Ev[] = [
      ['compaction/start'], ['x/note'],
      ['compaction/summary', { llmStreamCall: true, summary: [{ type: 'text', text: 'ab' }, { type: 'text', text: 'cd' }] }],
    ]
    expect(direct('WORLD-04', events, [cap(0, 'compaction', 1)], w)).toEqual([])
  })
  it('a summary that is not a block list is the empty text: it matches a call that returned no text', () => {
    const w = world([served(0, 'compaction')])
    const events: Ev[] = [['compaction/start'], ['x/note'], ['compaction/summary', { llmStreamCall: true }]]
    expect(direct('WORLD-04', events, [cap(0, 'compaction', 1)], w)).toEqual([])
    const other = world([served(0, 'compaction', { summaryText: 'x' })])
    expect(direct('WORLD-04', events, [cap(0, 'compaction', 1)], other)).toEqual([
      'WORLD-04@2: compaction/summary.summary is not the text the world returned (world request #0: "x"…, logged ""…)',
    ])
  })
})

describe('the join without a capture in the context', () => {
  it('treats a missing capture as empty: the world request has no capture entry left', () => {
    expect(direct('WORLD-06', notes(3), null, world([served(0, 'conversation')]))).toEqual([
      'WORLD-06@2: world request #0 (conversation, m) answered a reply (stop), but the capture has no request left for it: a request the log and capture do not show',
    ])
  })
})
