/**
 * WORLD-04 (checkpoints are the world's, `src/checker/world.ts`) on the Appendix B log with a hand-written
 * request capture and world record. Pins: which summary call of a bracket is judged (the last compaction
 * call dispatched after the bracket's compaction/start and no later than its compaction/summary); that only
 * a compaction/summary with llmStreamCall, in a bracket the record served (`logOffset`), is judged; the
 * exact messages for a bracket the world served no summary call, a failed or capped summary call, a summary
 * text and a checkpoint text that differ from the world's; a missing or non-message checkpoint left to INV-12.
 */
import { describe, expect, it } from 'vitest'
import type { CapturedRequest } from '@compaction-sim/core'
import { APPENDIX_B_SUMMARY_TEXT } from '@compaction-sim/fixtures'
import { checkLog, type CheckReport } from '../../src/checker/run.ts'
import type { WorldRecord, WorldRequest } from '../../src/provider/world-record.ts'
import { appendixB, reportOf, violationLines, type AppendixEvent } from './support.ts'

/** A captured request of `purpose` dispatched at log revision `at`. */
function cap(index: number, purpose: 'conversation' | 'compaction', at: number, outcome: CapturedRequest['outcome'] = 'stop'): CapturedRequest {
  return { index, logRevisionAtDispatch: at, time: 0, purpose, provider: 'p', model: 'm', messages: [], outcome }
}

/** A world request answered with a complete reply (summary calls carry `summaryText`). */
function served(index: number, purpose: 'conversation' | 'compaction', extra: Partial<WorldRequest> = {}): WorldRequest {
  return {
    index, purpose, model: 'm', route: 'm', stream: true, images: [],
    answer: { kind: 'reply', status: 200, finish: 'stop' }, failureClass: null, usage: null, usageDelivery: 'omitted',
    ...(purpose === 'compaction' ? { summaryText: APPENDIX_B_SUMMARY_TEXT } : {}),
    ...extra,
  }
}

const failed = (index: number): WorldRequest => {
  const w = served(index, 'compaction', { answer: { kind: 'reject', status: 503 }, failureClass: 'SERVER' })
  delete w.summaryText
  return w
}

function world(requests: WorldRequest[], logOffset = 0): WorldRecord {
  return { schemaVersion: 1, kind: 'compaction-sim/world-record', wire: 'openai' as WorldRecord['wire'], captureOffset: 0, logOffset, routes: [], requests }
}

async function judged(events: AppendixEvent[], requests: CapturedRequest[], w: WorldRecord): Promise<CheckReport> {
  return reportOf(await checkLog(events as never, { dialect: 'seed', requests, world: w }))
}

/** WORLD-04 lines, failing when a check threw. */
async function four(events: AppendixEvent[], requests: CapturedRequest[], w: WorldRecord): Promise<string[]> {
  const r = await judged(events, requests, w)
  expect(r.internalErrors).toEqual([])
  return violationLines(r, 'WORLD-04')
}

// Appendix B: compaction/start #51, compaction/summary #54 (llmStreamCall), checkpoint #55.
const NO_CALL = 'WORLD-04@54: the bracket commits a summary from a stream call, but the world served no summary call inside it'

describe('WORLD-04: the judged summary call', () => {
  it('a bracket whose last summary call (dispatched at the summary\'s revision) returned the logged text passes', async () => {
    expect(await four(appendixB(), [cap(0, 'compaction', 54)], world([served(0, 'compaction')]))).toEqual([])
  })

  it('a bracket with no compaction call dispatched inside it is reported at its summary', async () => {
    expect(await four(appendixB(), [], world([]))).toEqual([NO_CALL])
  })

  it('a conversation call inside the bracket is not its summary call', async () => {
    expect(await four(appendixB(), [cap(0, 'conversation', 53)], world([served(0, 'conversation')]))).toEqual([NO_CALL])
  })

  it('a compaction call dispatched at the compaction/start revision is outside the bracket', async () => {
    expect(await four(appendixB(), [cap(0, 'compaction', 51)], world([served(0, 'compaction')]))).toEqual([NO_CALL])
  })

  it('a failed compaction call dispatched after the summary is not the bracket\'s call', async () => {
    const requests = [cap(0, 'compaction', 54), cap(1, 'compaction', 60, 'error')]
    expect(await four(appendixB(), requests, world([served(0, 'compaction'), failed(1)]))).toEqual([])
  })

  it('the last of the bracket\'s calls is judged: a failed one is reported with the world\'s answer', async () => {
    const requests = [cap(0, 'compaction', 52), cap(1, 'compaction', 54, 'error')]
    expect(await four(appendixB(), requests, world([served(0, 'compaction'), failed(1)]))).toEqual([
      'WORLD-04@54: the bracket commits a checkpoint, but its summary call failed in the world: world request #1 (compaction, m) answered SERVER (HTTP 503)',
    ])
  })

  it('an earlier successful call does not cover a failed last one; an earlier failed one does not matter', async () => {
    const ok = [cap(0, 'compaction', 52, 'error'), cap(1, 'compaction', 54)]
    expect(await four(appendixB(), ok, world([failed(0), served(1, 'compaction')]))).toEqual([])
  })

  it('a summary call the world capped at max-tokens is a failed call', async () => {
    const capped = served(0, 'compaction', { answer: { kind: 'reply', status: 200, finish: 'max-tokens' } })
    expect(await four(appendixB(), [cap(0, 'compaction', 54, 'max-tokens')], world([capped]))).toEqual([
      'WORLD-04@54: the bracket commits a checkpoint, but its summary call failed in the world: world request #0 (compaction, m) answered a reply (max-tokens)',
    ])
  })
})

describe('WORLD-04: what is judged', () => {
  it('only compaction/summary events are judged, even when another event carries llmStreamCall', async () => {
    const events = appendixB()
    ;(events[52] as AppendixEvent).data['llmStreamCall'] = true
    expect(await four(events, [cap(0, 'compaction', 54)], world([served(0, 'compaction')]))).toEqual([])
  })

  it('a compaction/summary without llmStreamCall is not judged', async () => {
    const events = appendixB()
    delete (events[54] as AppendixEvent).data['llmStreamCall']
    expect(await four(events, [cap(0, 'compaction', 54, 'error')], world([failed(0)]))).toEqual([])
  })

  it('a bracket opened before the record\'s logOffset is not judged; one opened at it is', async () => {
    const requests = [cap(0, 'compaction', 54, 'error')]
    expect(await four(appendixB(), requests, world([failed(0)], 52))).toEqual([])
    expect(await four(appendixB(), requests, world([failed(0)], 51))).toEqual([
      'WORLD-04@54: the bracket commits a checkpoint, but its summary call failed in the world: world request #0 (compaction, m) answered SERVER (HTTP 503)',
    ])
  })

  it('a compaction/summary with no compaction/start before it is not judged', async () => {
    const events = appendixB()
    const start = events[51] as AppendixEvent
    start.type = 'x/note'
    start.data = {}
    start['ignorable'] = true
    expect(await four(events, [cap(0, 'compaction', 54, 'error')], world([failed(0)]))).toEqual([])
  })
})

describe('WORLD-04: the texts', () => {
  it('a summary that is not the world\'s text is reported with both texts cut to 60 characters', async () => {
    const w = served(0, 'compaction', { summaryText: 'The world returned this summary, which is longer than sixty characters in all.' })
    expect(await four(appendixB(), [cap(0, 'compaction', 54)], world([w]))).toEqual([
      'WORLD-04@54: compaction/summary.summary is not the text the world returned (world request #0: "The world returned this summary, which is longer than sixty "…, logged "## Primary Request and Intent\\n- Find why the float test in m"…)',
    ])
  })

  it('a successful summary call with no text returned the empty text', async () => {
    const w = served(0, 'compaction')
    delete w.summaryText
    expect(await four(appendixB(), [cap(0, 'compaction', 54)], world([w]))).toEqual([
      'WORLD-04@54: compaction/summary.summary is not the text the world returned (world request #0: ""…, logged "## Primary Request and Intent\\n- Find why the float test in m"…)',
    ])
  })

  it('a checkpoint whose framed text is not the world\'s is reported at the checkpoint', async () => {
    const events = appendixB()
    const content = (events[55] as AppendixEvent).data['content'] as Array<{ text: string }>
    ;(content[1] as { text: string }).text = 'a canned summary'
    expect(await four(events, [cap(0, 'compaction', 54)], world([served(0, 'compaction')]))).toEqual([
      'WORLD-04@55: the checkpoint\'s summary text (framing aside) is not the text the world returned for world request #0',
    ])
  })

  it('a checkpoint that is not a user/message, or is missing, is left to INV-12', async () => {
    const events = appendixB()
    const ck = events[55] as AppendixEvent
    ck.type = 'x/note'
    ck.data = {}
    ck['ignorable'] = true
    delete ck['surfaceOp']
    delete ck['sourceEventSeqs']
    expect(await four(events, [cap(0, 'compaction', 54)], world([served(0, 'compaction')]))).toEqual([])
    expect(await four(appendixB().slice(0, 55), [cap(0, 'compaction', 54)], world([served(0, 'compaction')]))).toEqual([])
  })
})
