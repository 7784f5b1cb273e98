/**
 * Mutant-killing tests for WORLD-01 … WORLD-04 (`src/checker/world.ts`), run through each check's own hooks on
 * small hand-built logs, captures and world records (everything built inside each test; a check that throws
 * fails the test, as it would land in `internalErrors` through checkLog).
 * Pins:
 * - WORLD-01: only attempts the world failed are judged; a capture without a failure code, or with the world's
 *   class, passes; the attempt's window starts at its dispatch revision; for a conversation attempt only llm/retry
 *   and a turn/end with an error reason carry a code (a turn/end with another reason, or none, does not; another
 *   event carrying an error reason does not); for a summary attempt only compaction/summary-error does;
 * - WORLD-02: only request/context events are judged; a route with no window, or a model the world does not
 *   serve, is not;
 * - WORLD-03: only an IMAGE_OFFLOAD_REQUIRED answer with a positive safe-integer count is judged; with no
 *   image/offload event the violation sits at the retry's dispatch revision;
 * - WORLD-04: the summary text is the concatenation of its text blocks only.
 */
import { describe, expect, it } from 'vitest'
import type { CapturedRequest } from '@compaction-sim/core'
import { WORLD_CHECKS } from '../../src/checker/world.ts'
import type { WorldRecord, WorldRequest } from '../../src/provider/world-record.ts'
import { captured, runWorldHooks, served, worldContext, worldOf as world, type HookEvent as Ev, type Purpose } from './world-hooks.ts'

const cap = (index: number, purpose: Purpose, at: number, outcome: CapturedRequest['outcome'] = 'stop', failureCode?: string): CapturedRequest =>
  captured(index, purpose, at, outcome, failureCode === undefined ? {} : { failureCode })

function failed(index: number, purpose: Purpose, failureClass: string, status: number, extra: Partial<WorldRequest> = {}): WorldRequest {
  return served(index, purpose, { answer: { kind: 'reject', status }, failureClass, ...extra } as Partial<WorldRequest>)
}

/** `id@seq: message` lines of check `id` over `evs` (seq = index), run through the check's own hooks; the check applies. */
function run(id: string, evs: Ev[], requests: CapturedRequest[], w: WorldRecord): string[] {
  expect(WORLD_CHECKS.find((c) => c.id === id)?.applicability?.(worldContext(requests, w))).toEqual({ kind: 'applies' })
  return runWorldHooks(id, evs, requests, w)
}

const retry = (code: string): Ev => ({ type: 'llm/retry', data: { failure: { code } } })
const SERVER0 = 'world request #0 (conversation, m) answered SERVER (HTTP 503)'

describe('WORLD-01: which events carry a failure code', () => {
  it('a turn/end with an error reason is the attempt\'s logged failure', () => {
    const evs: Ev[] = [{ type: 'turn/start' }, { type: 'step/start' }, { type: 'x/note' }, { type: 'turn/end', data: { reason: { kind: 'error', error: { code: 'OVERFLOW' } } } }]
    expect(run('WORLD-01', evs, [cap(0, 'conversation', 1, 'error')], world([failed(0, 'conversation', 'SERVER', 503)]))).toEqual([
      `WORLD-01@3: ${SERVER0}; the log records this attempt's failure as OVERFLOW (turn/end)`,
    ])
  })

  it('a turn/end with another reason or none, and another event with an error reason, carry no code; the llm/retry decides', () => {
    const evs: Ev[] = [
      { type: 'turn/start' },
      { type: 'x/note', data: { reason: { kind: 'error', error: { code: 'OVERFLOW' } } } },
      { type: 'turn/end', data: { reason: { kind: 'stop' } } },
      { type: 'turn/end' },
      retry('SERVER'),
      retry('OVERFLOW'),
    ]
    expect(run('WORLD-01', evs, [cap(0, 'conversation', 0, 'error')], world([failed(0, 'conversation', 'SERVER', 503)]))).toEqual([])
  })

  it('the window starts at the dispatch revision: an llm/retry before it is not this attempt\'s', () => {
    const evs: Ev[] = [retry('OVERFLOW'), { type: 'x/note' }, retry('SERVER')]
    expect(run('WORLD-01', evs, [cap(0, 'conversation', 1, 'error')], world([failed(0, 'conversation', 'SERVER', 503)]))).toEqual([])
  })

  it('a summary attempt reads only compaction/summary-error, not llm/retry', () => {
    const evs: Ev[] = [{ type: 'compaction/start' }, retry('OVERFLOW'), { type: 'compaction/summary-error', data: { failure: { code: 'RATE_LIMIT' } } }]
    expect(run('WORLD-01', evs, [cap(0, 'compaction', 1, 'error')], world([failed(0, 'compaction', 'SERVER', 503)]))).toEqual([
      'WORLD-01@2: world request #0 (compaction, m) answered SERVER (HTTP 503); the log records this attempt\'s failure as RATE_LIMIT (compaction/summary-error)',
    ])
  })
})

describe('WORLD-01: the capture\'s failure code', () => {
  it('an attempt the world answered is not judged, whatever the capture records', () => {
    const evs: Ev[] = [{ type: 'x/note' }, retry('OVERFLOW')]
    expect(run('WORLD-01', evs, [cap(0, 'conversation', 0, 'error', 'SERVER')], world([served(0, 'conversation')]))).toEqual([])
  })

  it('a capture without a failure code, or with the world\'s class, passes', () => {
    const evs: Ev[] = [{ type: 'x/note' }]
    expect(run('WORLD-01', evs, [cap(0, 'conversation', 1, 'error')], world([failed(0, 'conversation', 'SERVER', 503)]))).toEqual([])
    expect(run('WORLD-01', evs, [cap(0, 'conversation', 1, 'error', 'SERVER')], world([failed(0, 'conversation', 'SERVER', 503)]))).toEqual([])
  })
})

describe('WORLD-02: which events and routes are judged', () => {
  const routes = [{ model: 'm', contextWindow: 1000 }, { model: 'n', contextWindow: null }]
  const ctxEv = (model: string, contextWindow: number, type = 'request/context'): Ev => ({ type, data: { provider: 'p', model, contextWindow } })

  it('a request/context with another capacity is reported', () => {
    expect(run('WORLD-02', [ctxEv('m', 900)], [], world([], routes))).toEqual([
      'WORLD-02@0: request/context gives route p/m capacity 900; the world\'s true window is 1000',
    ])
  })

  it('another event carrying a model and capacity is not judged', () => {
    expect(run('WORLD-02', [ctxEv('m', 1000), ctxEv('m', 900, 'x/note')], [], world([], routes))).toEqual([])
  })

  it('a route with no window, and a model the world does not serve, are not judged', () => {
    expect(run('WORLD-02', [ctxEv('n', 500)], [], world([], routes))).toEqual([])
    expect(run('WORLD-02', [ctxEv('zz', 500)], [], world([], routes))).toEqual([])
  })
})

describe('WORLD-03: which answers are judged, and where', () => {
  const evs: Ev[] = [{ type: 'turn/start' }, { type: 'step/start' }, { type: 'x/note' }, { type: 'x/note' }, { type: 'x/note' }, { type: 'x/note' }]
  const judge = (demand: WorldRequest, retried: string[]): string[] =>
    run('WORLD-03', evs, [cap(0, 'conversation', 2, 'error'), cap(1, 'conversation', 3)], world([demand, served(1, 'conversation', { images: retried })]))

  it('a retry removing nothing, with no image/offload event, is reported at the retry\'s dispatch revision', () => {
    expect(judge(failed(0, 'conversation', 'IMAGE_OFFLOAD_REQUIRED', 400, { images: ['a', 'b'], offloadImages: 1 }), ['a', 'b'])).toEqual([
      'WORLD-03@3: world request #0 (conversation, m) answered IMAGE_OFFLOAD_REQUIRED (HTTP 400) demanding offloadImages 1 of 2 images; its retry, world request #1, carries 2 images (0 removed), expected 1',
    ])
  })

  it('another failure class with an offload count is not judged', () => {
    expect(judge(failed(0, 'conversation', 'SERVER', 503, { images: ['a', 'b'], offloadImages: 1 }), ['a', 'b'])).toEqual([])
  })

  it('a count that is not a safe integer, or not positive, is not judged', () => {
    expect(judge(failed(0, 'conversation', 'IMAGE_OFFLOAD_REQUIRED', 400, { images: ['a', 'b'], offloadImages: 1.5 }), ['a', 'b'])).toEqual([])
    expect(judge(failed(0, 'conversation', 'IMAGE_OFFLOAD_REQUIRED', 400, { images: ['a', 'b'], offloadImages: 0 }), ['b'])).toEqual([])
  })
})

describe('WORLD-04: the summary text', () => {
  const judge = (summary: unknown[]): string[] => run('WORLD-04', [
    { type: 'compaction/start' }, { type: 'x/note' },
    { type: 'compaction/summary', data: { llmStreamCall: true, summary } }, { type: 'compaction/end' },
  ], [cap(0, 'compaction', 1)], world([served(0, 'compaction', { summaryText: 'ab' })]))

  it('is the text blocks joined with nothing between, other blocks left out', () => {
    expect(judge([{ type: 'text', text: 'a' }, { type: 'image', attachmentId: 'i' }, { type: 'text', text: 'b' }])).toEqual([])
  })

  it('a different text is reported', () => {
    expect(judge([{ type: 'text', text: 'a' }])).toEqual([
      'WORLD-04@2: compaction/summary.summary is not the text the world returned (world request #0: "ab"…, logged "a"…)',
    ])
  })
})
