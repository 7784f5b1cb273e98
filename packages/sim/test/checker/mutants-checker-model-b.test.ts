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
