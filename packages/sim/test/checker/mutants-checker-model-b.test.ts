/**
 * The §12.0 checker model's turn/step fold (`src/checker/model.ts`, `foldLogOnly`, `onChunk`, `citedChunks`,
 * `whyNotNode`), seen through the checks and the report that read it, on small edits of Appendix B and of the
 * `overflow-recovery` conformance log. Every expectation is written out by hand. It pins:
 * - the attempt of a fresh step is empty (INV-04's message, the meter's cited-chunk pricing);
 * - a `step/start` outside any turn is folded without failing; a `step/end` that does not match the open step
 *   (no step, another turn, another step) taints the pressure figure with its message;
 * - a `tool/call` is pending only for the open step of the same turn and step (INV-08's "not a pending call");
 * - a `request/header` counts for the lifecycle (INV-41 after an end-seed); the first start of a
 *   `compactionId` stays the one INV-47 names;
 * - a chunk of another turn or step joins no attempt; a dispatch outside an overflow window is folded;
 * - a failed finish (`error` or `aborted`, never `stop`) is the turn's last failure (INV-34), only
 *   `CONTEXT_WINDOW_EXCEEDED` errors open an overflow window, and a failure outside a turn is folded;
 * - cited chunks: the attempt itself, a valid sub-list priced on its own, a foreign or reordered list taints;
 * - the span reasons of a replacement naming a shadowed node or a non-surface seq.
 */
import type { LlmFailure, LogEvent, RunManifest } from '@compaction-sim/core'
import { LogBuilder, validConformanceLogs } from '@compaction-sim/fixtures'
import { describe, expect, it } from 'vitest'
import { checkLog, type CheckReport } from '../../src/checker/run.ts'
import { at, checkedReport, editedAppendixB, foreign, reportOf, violationLines, type AppendixEvent } from './support.ts'

/** Appendix B's step 1.2 with its five chunks #18 … #22 turned foreign: the step's attempt is never dispatched. */
const undispatched = (edit: (m: AppendixEvent) => void): AppendixEvent[] => editedAppendixB((e) => {
  for (const s of [18, 19, 20, 21, 22]) foreign(at(e, s))
  edit(at(e, 23))
})

describe('a fresh step has an empty attempt', () => {
  it('INV-04 names no chunk of the attempt when the message cites #19 of a step that streamed nothing', async () => {
    const r = await checkedReport(undispatched((m) => { m['sourceEventSeqs'] = [19] }))
    expect(violationLines(r, 'INV-04')).toEqual(['INV-04@23: cites chunks [19] but the chunks of its own attempt are []'])
  })

  it('an empty citation of an undispatched step prices nothing: the figure stays exact', async () => {
    const r = await checkedReport(undispatched((m) => {
      m['sourceEventSeqs'] = []
      ;(m.data['message'] as { content: unknown[] }).content = []
    }))
    expect(r.meterTaint).toBeNull()
    expect(r.internalErrors).toEqual([])
  })
})

describe('step/start and step/end against the open turn and step', () => {
  it('a step/start outside any turn (turn/start #26 foreign) is reported and folded without failing', async () => {
    const r = await checkedReport(editedAppendixB((e) => foreign(at(e, 26))))
    expect(r.internalErrors).toEqual([])
    expect(r.violations.filter((v) => v.seq === 27).map((v) => `${v.id}@${v.seq}: ${v.message}`)).toEqual(['INV-09@27: step 2.1 starts outside a turn'])
  })

  it('a step/start naming another turn does not advance the open turn\'s last step', async () => {
    const r = await checkedReport(editedAppendixB((e) => { at(e, 1).data['turn'] = 2 }))
    expect(violationLines(r, 'INV-09').filter((l) => l.startsWith('INV-09@1:') || l.startsWith('INV-09@16:'))).toEqual([
      'INV-09@1: step/start names turn 2, the open turn is 1',
      'INV-09@16: step 2 does not follow step 0 of turn 1: steps restart at 1 and are consecutive',
    ])
  })

  it('a step/end naming another step taints the figure at it, with the open step named', async () => {
    const r = await checkedReport(editedAppendixB((e) => { at(e, 13).data['step'] = 2 }))
    expect(r.meterTaint).toEqual({ seq: 13, reason: 'step/end 1.2 does not match the open step' })
  })

  it('a step/end naming another turn taints the figure at it', async () => {
    const r = await checkedReport(editedAppendixB((e) => { at(e, 13).data['turn'] = 2 }))
    expect(r.meterTaint).toEqual({ seq: 13, reason: 'step/end 2.1 does not match the open step' })
  })

  it('a step/end with no open step (after the last turn/end) taints the figure without failing', async () => {
    const r = await checkedReport(editedAppendixB((e) => { e.push({ seq: 67, time: 1700000000400, type: 'step/end', data: { turn: 3, step: 2 } }) }))
    expect(r.internalErrors).toEqual([])
    expect(r.meterTaint).toEqual({ seq: 67, reason: 'step/end 3.2 does not match the open step' })
  })
})

describe('a tool/call is pending only in the open step of its own turn and step', () => {
  for (const [field, value] of [['turn', 2], ['step', 2]] as const) {
    it(`tool/call #11 naming ${field} ${value}: the result #12 answers no pending call`, async () => {
      const r = await checkedReport(editedAppendixB((e) => { at(e, 11).data[field] = value }))
      expect(r.violations.filter((v) => v.seq === 12).map((v) => `${v.id}@${v.seq}: ${v.message}`))
        .toEqual(['INV-09@12: tool/result answers call call_1, which is not a pending tool/call of step 1.1'])
    })
  }
})

/** Appendix B, then an end-seed #67, turn 4 (#68, step/start #69) and two headers: `resume` #70, then #71. */
function secondLifecycle(second: (h: AppendixEvent) => void): AppendixEvent[] {
  return editedAppendixB((e) => {
    const header = (seq: number): AppendixEvent => ({ ...structuredClone(at(e, 58)), seq, time: 1700000000400 + seq })
    const resume = header(70)
    resume.data['reason'] = 'resume'
    const next = header(71)
    second(next)
    e.push(
      { seq: 67, time: 1700000000467, type: 'session/end-seed', data: {} },
      { seq: 68, time: 1700000000468, type: 'turn/start', data: { turn: 4 } },
      { seq: 69, time: 1700000000469, type: 'step/start', data: { turn: 4, step: 1 } },
      resume, next,
    )
  })
}

describe('request/header counts for its lifecycle', () => {
  it('after the resume header #70 of the second lifecycle, a changed header #71 is a change, not a resume', async () => {
    const r = await checkedReport(secondLifecycle((h) => {
      h.data['reason'] = 'change'
      ;(h.data['header'] as { config: Record<string, unknown> }).config['model'] = 'mock-8k'
    }))
    expect(violationLines(r, 'INV-41')).toEqual([])
    const resumed = await checkedReport(secondLifecycle((h) => {
      h.data['reason'] = 'resume'
      ;(h.data['header'] as { config: Record<string, unknown> }).config['model'] = 'mock-8k'
    }))
    expect(violationLines(resumed, 'INV-41')).toEqual(['INV-41@71: reason resume, expected change'])
  })
})

describe('compactionId uses', () => {
  it('a third start of cmp-7f3a names the first start #51, not the second', async () => {
    const r = await checkedReport(editedAppendixB((e) => {
      e.push(
        { seq: 67, time: 1700000000467, type: 'compaction/start', data: { compactionId: 'cmp-7f3a', turn: null } },
        { seq: 68, time: 1700000000468, type: 'compaction/end', data: { compactionId: 'cmp-7f3a', turn: null } },
        { seq: 69, time: 1700000000469, type: 'compaction/start', data: { compactionId: 'cmp-7f3a', turn: null } },
      )
    }))
    expect(violationLines(r, 'INV-47')).toEqual([
      'INV-47@67: compactionId cmp-7f3a was already used by compaction/start #51',
      'INV-47@69: compactionId cmp-7f3a was already used by compaction/start #51',
    ])
  })
})

describe('chunks join only the attempt of the open step', () => {
  for (const [field, value] of [['turn', 2], ['step', 3]] as const) {
    it(`chunk #18 naming ${field} ${value} is not part of step 1.2's attempt`, async () => {
      const r = await checkedReport(editedAppendixB((e) => { at(e, 18).data[field] = value }))
      expect(violationLines(r, 'INV-04')).toEqual(['INV-04@23: cites chunks [18, 19, 20, 21, 22] but the chunks of its own attempt are [19, 20, 21, 22]'])
    })
  }

  it('Appendix B folds every dispatch (no overflow window open) without an internal failure; its figure is exact', async () => {
    const r = await checkedReport(editedAppendixB())
    expect(r.internalErrors).toEqual([])
    expect(r.meterTaint).toBeNull()
  })
})

describe('the chunks a message cites', () => {
  it('a list of the attempt\'s length naming #17 (no chunk) is not priced: the figure is tainted at the message', async () => {
    const r = await checkedReport(editedAppendixB((e) => { at(e, 23)['sourceEventSeqs'] = [17, 18, 19, 20, 21] }))
    expect(r.meterTaint).toEqual({ seq: 23, reason: 'assistant/message cites chunks that are not earlier chunks of its step' })
  })
})

describe('span reasons', () => {
  it('a replacement starting at a non-surface seq, and one starting at a shadowed node', async () => {
    const notSurface = await checkedReport(editedAppendixB((e) => { at(e, 15)['surfaceOp'] = { op: 'replace', start: 11, end: 12 } }))
    expect(violationLines(notSurface, 'INV-05')).toEqual([
      'INV-05@15: replacement 11…12: start 11 is not a current node (seq 11 is not a surface node)',
      // #15 was folded as nothing, so node 12 is still on the surface when #55 replaces 3…42
      'INV-05@55: sourceEventSeqs must cite every node of the span [3, 10, 12, 23, 28, 37, 42]; missing [12]',
    ])
    const shadowed = await checkedReport(editedAppendixB((e) => { at(e, 64)['surfaceOp'] = { op: 'replace', start: 10, end: 55 } }))
    expect(violationLines(shadowed, 'INV-05')).toEqual(['INV-05@64: replacement 10…55: start 10 is not a current node (node 10 was shadowed)'])
  })
})

const BASE = validConformanceLogs().find((l) => l.name === 'overflow-recovery')
if (BASE === undefined) throw new Error('the overflow-recovery conformance log is missing')
const MANIFEST: RunManifest | null = BASE.manifest ?? null
/** The route of the overflow logs (mock-400, the manifest's only route). */
const ROUTE = { provider: 'mock', model: 'mock-400', contextWindow: 400 }
const OVERFLOW: LlmFailure = { code: 'CONTEXT_WINDOW_EXCEEDED', message: 'request exceeds the context window' }
const SERVER: LlmFailure = { code: 'SERVER', message: 'temporary provider outage' }
const say = (t: string): { type: 'text'; text: string } => ({ type: 'text', text: t })

/** A builder holding the base log's #0 … #15 (turn 2, step 2.1 open after the prompt m-u2), or #0 … #12 (turn 1 only). */
function prefix(length: 16 | 13): LogBuilder {
  return new LogBuilder({ route: ROUTE }).load(structuredClone(BASE?.events ?? []).slice(0, length))
}
async function check(events: readonly LogEvent[]): Promise<CheckReport> {
  return reportOf(await checkLog([...events], { dialect: 'seed', manifest: MANIFEST }))
}
const aborted = (b: LogBuilder, turn: number, step: number, failure: LlmFailure): number =>
  b.add('assistant/chunk', { turn, step, chunk: { type: 'finish', reason: { kind: 'aborted', failure } } })

describe('failed finishes: the turn\'s last failure and the overflow window', () => {
  it('a later step\'s SERVER error stays the last failure across a clean stop of a third step', async () => {
    const b = prefix(16)
    expect(b.fail(OVERFLOW)).toBe(16) // the window is not recovered
    b.stepEnd()
    expect(b.stepStart()).toBe(18)
    expect(b.fail(SERVER)).toBe(19)
    b.stepEnd()
    expect(b.stepStart()).toBe(21)
    b.reply([say('Step three moves the data in batches.')], 'm-a2')
    b.stepEnd()
    const end = b.turnEnd({ kind: 'error', error: SERVER })
    const r = await check(b.events)
    expect(violationLines(r, 'INV-34')).toEqual([])
    // the same turn ending with the overflow failure instead is reported against the SERVER one
    const other = structuredClone(b.events)
    ;(other[end] as unknown as { data: { reason: unknown } }).data.reason = { kind: 'error', error: OVERFLOW }
    expect(violationLines(await check(other), 'INV-34')).toEqual([
      'INV-34@28: the turn ends with error CONTEXT_WINDOW_EXCEEDED "request exceeds the context window", not the last failed finish\'s SERVER "temporary provider outage"',
    ])
  })

  it('an aborted finish is the turn\'s last failure too', async () => {
    const b = prefix(16)
    b.fail(OVERFLOW) // #16
    b.stepEnd()
    expect(b.stepStart()).toBe(18)
    expect(aborted(b, 2, 2, SERVER)).toBe(19)
    b.stepEnd()
    b.turnEnd({ kind: 'error', error: SERVER })
    const r = await check(b.events)
    expect(violationLines(r, 'INV-34')).toEqual([])
    expect(r.internalErrors).toEqual([])
  })

  it('an aborted finish with code CONTEXT_WINDOW_EXCEEDED opens no overflow window', async () => {
    const b = prefix(16)
    expect(aborted(b, 2, 1, OVERFLOW)).toBe(16)
    b.stepEnd()
    b.turnEnd()
    const r = await check(b.events)
    expect(violationLines(r, 'INV-34')).toEqual([])
    expect(r.internalErrors).toEqual([])
  })

  it('a failure in a step opened outside any turn is folded without failing', async () => {
    const b = prefix(13)
    expect(b.add('step/start', { turn: 2, step: 1 })).toBe(13)
    b.user('Continue with the next part of the plan.', 'm-u2')
    expect(b.add('assistant/chunk', { turn: 2, step: 1, chunk: { type: 'finish', reason: { kind: 'error', failure: SERVER } } })).toBe(15)
    const r = await check(b.events)
    expect(r.internalErrors).toEqual([])
  })
})
