/**
 * The §12.0 checker model (`src/checker/model.ts`, lines 1–299) as the checks that read it show it, on small
 * edits of Appendix B (surface before #15: #2 system head at position 0, #3, #10, #12; the prune pair #14/#15;
 * headers #4 initial, #17/#31/#58 series; the only request/context #5; turn 3 = #40 … #66 with call_2 requested by
 * #47, dispatched by #48 and answered by #49). Every expectation is written out by hand from the spec. It pins:
 * - `span`: the three reasons a replacement span does not resolve (start / end not a node, reversed), as INV-05
 *   reports them, and the meter taint an unresolvable replacement leaves;
 * - `routedTarget`: an empty provider or model is no routed target (INV-25's "without a routed target");
 * - `lastSeq`: the end-of-log rule of the capture cursor (INV-43 coverage) from -1 and as the highest folded seq;
 * - the fold's `SessionState` gets the manifest's explicit series headers (INV-41's epoch figures);
 * - `headCount`: 0 when position 0 is no system/message (INV-27's anchor);
 * - surface events are folded as surface events (the clean log has no internal failure);
 * - `unsealedRestore`: cleared by an end-seed, and the first unsealed restore is the one INV-41 names;
 * - capacity evidence: only appended assistant messages carry usage (HARD-8), a log with no request/context;
 * - tool results: only appended ones answer calls (INV-09's repair rule);
 * - `onAssistantMessage`: the "outside its open step" taint for a wrong turn or step, and only tool-call blocks
 *   open calls (INV-09's repair rule).
 */
import type { CapturedRequest, LogEvent, RunManifest } from '@compaction-sim/core'
import { describe, expect, it } from 'vitest'
import { checkLog } from '../../src/checker/run.ts'
import { appendixBCapture } from './captures.ts'
import { appendixB, at, checkedReport, editedAppendixB, foreign, reportOf, violationLines, type AppendixEvent } from './support.ts'

type Events = AppendixEvent[]

const MANIFEST: RunManifest = {
  scenario: 'model-a', compaction: {}, pruner: {},
  routes: [{ provider: 'mock', model: 'mock-4k', contextWindow: 4000, imageTokens: 85 }], faults: [],
}

/** The header object of the request/header at `seq`. */
const headerOf = (e: Events, seq: number): { config: Record<string, unknown> } => at(e, seq).data['header'] as { config: Record<string, unknown> }
/** The message of a surface event. */
const messageOf = (e: Events, seq: number): { content: Array<Record<string, unknown>>; source: Record<string, unknown> } =>
  at(e, seq).data['message'] as { content: Array<Record<string, unknown>>; source: Record<string, unknown> }

const REPAIR_RULE = 'repair answers every call of the interrupted turn that had no result exactly once before its turn/end (§11.4)'

/** #15 folded as nothing leaves #12 on the surface, inside the checkpoint's span 3…42 (which cites #15, not #12). */
const INV05_AT_55 = 'INV-05@55: sourceEventSeqs must cite every node of the span [3, 10, 12, 23, 28, 37, 42]; missing [12]'

describe('span(): why a replacement span does not resolve (INV-05), and the taint it leaves', () => {
  it('start 11 is the tool/call, no surface node', async () => {
    const r = await checkedReport(editedAppendixB((e) => { at(e, 15)['surfaceOp'] = { op: 'replace', start: 11, end: 12 } }))
    expect(violationLines(r, 'INV-05')).toEqual(['INV-05@15: replacement 11…12: start 11 is not a current node (seq 11 is not a surface node)', INV05_AT_55])
    expect(r.meterTaint).toEqual({ seq: 15, reason: 'replacement 11…12 is not on the surface' })
    expect(r.internalErrors).toEqual([])
  })

  it('end 13 is the step/end, no surface node', async () => {
    const r = await checkedReport(editedAppendixB((e) => { at(e, 15)['surfaceOp'] = { op: 'replace', start: 12, end: 13 } }))
    expect(violationLines(r, 'INV-05')).toEqual(['INV-05@15: replacement 12…13: end 13 is not a current node (seq 13 is not a surface node)', INV05_AT_55])
    expect(r.meterTaint).toEqual({ seq: 15, reason: 'replacement 12…13 is not on the surface' })
    expect(r.internalErrors).toEqual([])
  })

  it('12…10 is reversed: #12 at position 3, #10 at position 2', async () => {
    const r = await checkedReport(editedAppendixB((e) => { at(e, 15)['surfaceOp'] = { op: 'replace', start: 12, end: 10 } }))
    expect(violationLines(r, 'INV-05')).toEqual(['INV-05@15: replacement 12…10: the span is reversed: node 12 is at position 3, after node 10 at position 2', INV05_AT_55])
    expect(r.meterTaint).toEqual({ seq: 15, reason: 'replacement 12…10 is not on the surface' })
  })
})

describe('routedTarget(): provider and model must both be non-empty (INV-25 at the prune #14)', () => {
  const noTarget = 'INV-25@14: a prune run without a routed target (no request/header): automatic policy does nothing (§3.5 step 1)'

  it('header #4 with an empty provider routes nothing', async () => {
    const r = await checkedReport(editedAppendixB((e) => { headerOf(e, 4).config['provider'] = '' }))
    expect(violationLines(r, 'INV-25')).toEqual([noTarget])
  })

  it('header #4 with an empty model routes nothing', async () => {
    const r = await checkedReport(editedAppendixB((e) => { headerOf(e, 4).config['model'] = '' }))
    expect(violationLines(r, 'INV-25')).toEqual([noTarget])
  })
})

describe('lastSeq: the capture requests left at the end of the log (INV-43 coverage)', () => {
  const inv43 = (r: ReturnType<typeof reportOf>): unknown => r.coverage.find((c) => c.id === 'INV-43')

  it('a one-event log (#0) has 1 event: a request at revision 2 is beyond it', async () => {
    const events = appendixB().filter((e) => e.seq === 0)
    const first = appendixBCapture(appendixB() as unknown as LogEvent[])[0] as CapturedRequest
    const requests = [{ ...first, index: 0, logRevisionAtDispatch: 2 }]
    const r = reportOf(await checkLog(events, { dialect: 'seed', requests }))
    expect(inv43(r)).toEqual({ id: 'INV-43', status: 'partial', reason: 'request 0 was dispatched at revision 2, beyond the 1 events of the log', skipped: 1 })
  })

  it('the log cut after #58 has 59 events: the request at revision 59 is judged at the end, and matches', async () => {
    const events = appendixB().filter((e) => e.seq <= 58)
    const requests = appendixBCapture(appendixB() as unknown as LogEvent[]).filter((q) => q.logRevisionAtDispatch <= 59)
    expect(requests.map((q) => q.logRevisionAtDispatch)).toEqual([6, 18, 29, 32, 43, 52, 54, 59])
    const r = reportOf(await checkLog(events, { dialect: 'seed', requests }))
    expect(inv43(r)).toEqual({ id: 'INV-43', status: 'evaluated', reason: '', skipped: 0 })
    expect(violationLines(r, 'INV-43')).toEqual([])
  })
})

describe('the fold counts the manifest\'s explicit series headers (INV-41)', () => {
  it('#17 listed as explicit: epoch 2 at #17, 3 after the offload #30; the change header #31 lacks startsSeries', async () => {
    // #31 and #58 carry temperature 0.5: #31 is a change (written as one), #58 an equal series header.
    const events = editedAppendixB((e) => {
      headerOf(e, 31).config['temperature'] = 0.5
      at(e, 31).data['reason'] = 'change'
      headerOf(e, 58).config['temperature'] = 0.5
    })
    const r = await checkedReport(events, { ...MANIFEST, explicitSeriesHeaders: [17] } as never)
    expect(violationLines(r, 'INV-41')).toEqual(['INV-41@31: the series epoch advanced since #17 (2 → 3) but the change header lacks startsSeries'])
  })
})

describe('headCount(): 1 only when position 0 holds a system/message (INV-27 at the checkpoint #55)', () => {
  it('#2 as a user/message: the span must start at position 0, #3 is at position 1', async () => {
    const events = editedAppendixB((e) => {
      const x = at(e, 2)
      x.type = 'user/message'
      x.data = { id: 'm-u0', role: 'user', content: [{ type: 'text', text: 'Be careful.' }], source: { kind: 'user' } }
    })
    const r = await checkedReport(events)
    expect(violationLines(r, 'INV-27')).toEqual(['INV-27@55: the span starts at #3 (position 1), not at position 0, the first node after the surface start'])
  })
})

describe('fold(): log-only events are folded as log-only events', () => {
  it('the clean Appendix B: no violation, no internal failure', async () => {
    const r = await checkedReport(appendixB())
    expect(r.violations).toEqual([])
    expect(r.internalErrors).toEqual([])
  })
})

describe('unsealedRestore (§11.4): set at the first restore without an end-seed, cleared by one (INV-41 notes)', () => {
  /** Turn 1 (#0 … #25) with #25 interrupted, then `tail` from seq 26 on. */
  type Tail = Pick<AppendixEvent, 'type' | 'data'>
  const turn1Then = (tail: Tail[]): Events => {
    const e = appendixB().filter((x) => x.seq <= 25)
    at(e, 25).data['reason'] = { kind: 'interrupted' }
    tail.forEach((x, i) => e.push({ ...x, seq: 26 + i, time: 1700000000500 + i }))
    return e
  }
  const header = (reason: string): Tail =>
    ({ type: 'request/header', data: { header: structuredClone(headerOf(appendixB(), 4)), reason } }) as never
  const turnStart = (turn: number): Tail => ({ type: 'turn/start', data: { turn } }) as never
  const turnEnd = (turn: number, kind: string): Tail => ({ type: 'turn/end', data: { turn, reason: { kind } } }) as never

  it('an end-seed after the unsealed restore #25 starts a lifecycle: no note on the wrong initial header', async () => {
    const events = turn1Then([turnStart(2), turnEnd(2, 'completed'), { type: 'session/end-seed', data: {} }, turnStart(3), header('initial')])
    const r = await checkedReport(events)
    expect(violationLines(r, 'INV-41')).toEqual(['INV-41@30: reason initial, expected resume'])
  })

  it('two unsealed restores (#25, #27): the note names the first', async () => {
    const events = turn1Then([turnStart(2), turnEnd(2, 'interrupted'), turnStart(3), header('resume')])
    const r = await checkedReport(events)
    expect(violationLines(r, 'INV-41')).toEqual([
      'INV-41@29: reason resume, but the header equals the one in force (#17) and no series boundary happened since: nothing is logged (§10.3)' +
      '; a restore resumed the log at #25 without appending session/end-seed (§11.4), so no new lifecycle began',
    ])
  })
})

describe('capacity evidence (HARD-8): usage is read off appended assistant messages only', () => {
  it('a tool/result #12 (and its copy #15) carrying a usage above the window is no evidence', async () => {
    const events = editedAppendixB((e) => {
      for (const s of [12, 15]) at(e, s).data['usage'] = { inputTokens: 5000, outputTokens: 0 }
    })
    const r = await checkedReport(events, { ...MANIFEST, compaction: { hardening: { capacitySanity: { calibrate: false } } } as never })
    expect(r.coverage.find((c) => c.id === 'HARD-8')).toEqual({ id: 'HARD-8', status: 'evaluated', reason: '', skipped: 0 })
    expect(violationLines(r, 'HARD-8')).toEqual([])
  })

  it('a log without request/context (#5 made foreign) folds the assistant messages without failing', async () => {
    const r = await checkedReport(editedAppendixB((e) => { foreign(at(e, 5)) }))
    expect(r.internalErrors).toEqual([])
  })
})

describe('tool results: only an appended one answers a call (INV-09 repair rule)', () => {
  it('#49 answers call_x; a replacement of #49 naming call_2 does not answer call_2', async () => {
    const e = appendixB().filter((x) => x.seq <= 65)
    const replacement = structuredClone(at(e, 49))
    messageOf(e, 49).source['callId'] = 'call_x'
    ;(messageOf(e, 49).content[0] as Record<string, unknown>)['toolCallId'] = 'call_x'
    replacement.seq = 66
    replacement['surfaceOp'] = { op: 'replace', start: 49, end: 49 }
    replacement['sourceEventSeqs'] = [49]
    e.push(replacement)
    e.push({ seq: 67, time: 1700000000600, type: 'turn/end', data: { turn: 3, reason: { kind: 'interrupted' } } } as AppendixEvent)
    e.push({ seq: 68, time: 1700000000601, type: 'session/end-seed', data: {} } as AppendixEvent)
    const r = await checkedReport(e)
    expect(violationLines(r, 'INV-09')).toEqual([
      'INV-09@49: tool/result answers call call_x, which is not a pending tool/call of step 3.1',
      `INV-09@67: the crash-repair run closes turn 3 leaving 1 tool call(s) unanswered: call_2 (step 1, tool/call #48); ${REPAIR_RULE}`,
    ])
  })
})

describe('onAssistantMessage(): the open step, and the calls a message opens', () => {
  it('#64 naming step 3.3 while 3.2 is open taints the meter at 64', async () => {
    const r = await checkedReport(editedAppendixB((e) => { at(e, 64).data['step'] = 3 }))
    expect(r.meterTaint).toEqual({ seq: 64, reason: 'assistant/message of step 3.3 outside its open step' })
  })

  it('#64 naming turn 2 (step 2.2) taints the meter at 64', async () => {
    const r = await checkedReport(editedAppendixB((e) => { at(e, 64).data['turn'] = 2 }))
    expect(r.meterTaint).toEqual({ seq: 64, reason: 'assistant/message of step 2.2 outside its open step' })
  })

  it('a text block with an id opens no call: the repair run closing turn 3 leaves nothing unanswered', async () => {
    const e = appendixB()
    messageOf(e, 64).content[0] = { ...messageOf(e, 64).content[0], id: 'blk' }
    at(e, 66).data['reason'] = { kind: 'interrupted' }
    e.push({ seq: 67, time: 1700000000600, type: 'session/end-seed', data: {} } as AppendixEvent)
    const r = await checkedReport(e)
    expect(violationLines(r, 'INV-09')).toEqual([])
    expect(r.internalErrors).toEqual([])
  })
})
