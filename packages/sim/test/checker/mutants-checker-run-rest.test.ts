/**
 * Survivors of the checker's lifecycle checks (`lifecycle.ts`), `checkLog` (`run.ts`), the dispatcher's coverage
 * (`dispatch.ts`) and INV-09 (`log-surface.ts`), on small hand-built logs and edits of Appendix B (turn 3 = #40 …;
 * step 3.1 ends at #50; the pressure bracket cmp-7f3a is start #51, summary-error #52, offload #53, summary #54,
 * checkpoint #55, end #56; step 3.2 is #57 … #65). Every expectation is written out by hand. It pins:
 * - INV-46: an overflow bracket's later event outside its window names the overflow window; a bracket starting at
 *   seq 1 is reported (the "already reported" marker starts below every seq); an explicit-region bracket owned by
 *   no turn while no turn is open;
 * - INV-47: a summary-error and a compaction/end carrying an ended bracket's id, also while another bracket is open;
 * - `checkLog`: violations at one seq sorted by id whatever order the checks found them in; a model fold failure
 *   stops dispatch and the end hooks, is the one internal error, and makes `ok` false; `knownTypes` is honoured and
 *   absent means none; `pruneMarker` is used when given;
 * - `Dispatcher.coverageOf` for a check it was never given: evaluated;
 * - INV-09: a step event naming another turn with the open step's number.
 */
import type { RunManifest } from '@compaction-sim/core'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { Dispatcher } from '../../src/checker/dispatch.ts'
import { CheckerModel } from '../../src/checker/model.ts'
import { checkLog } from '../../src/checker/run.ts'
import type { CheckId, InvariantCheck, RunContext } from '../../src/checker/types.ts'
import { appendixB, checkedReport, editedAppendixB, renumber, reportOf, violationLines, type AppendixEvent } from './support.ts'

type Events = AppendixEvent[]

const T0 = 1700000000000

/** A hand-built event with seq `seq` (time grows with seq). */
function ev(seq: number, type: string, data: Record<string, unknown>): AppendixEvent {
  return { seq, time: T0 + seq, type, data }
}

const MANIFEST: RunManifest = {
  scenario: 'run-rest', compaction: {}, pruner: {},
  routes: [{ provider: 'mock', model: 'mock-4k', contextWindow: 4000, imageTokens: 85 }], faults: [],
}

/** `id@seq: message` lines of `id` for `events`, after asserting no check threw. */
async function lines(events: Events, id: string, manifest?: RunManifest): Promise<string[]> {
  const r = await checkedReport(events, manifest)
  expect(r.internalErrors).toEqual([])
  return violationLines(r, id)
}

/** A copy of the event at index `from`, with the time of the event at index `timeOf`. */
function copyOf(e: Events, from: number, timeOf: number): AppendixEvent {
  const c = structuredClone(e[from] as AppendixEvent)
  c.time = (e[timeOf] as AppendixEvent).time
  return c
}

afterEach(() => {
  vi.restoreAllMocks()
})

describe('INV-46: later events of a bracket lie in its window', () => {
  it('INV-46: an overflow bracket\'s end after the next attempt began names the overflow window', async () => {
    const events = [
      ev(0, 'turn/start', { turn: 1 }),
      ev(1, 'step/start', { turn: 1, step: 1 }),
      ev(2, 'assistant/chunk', { turn: 1, step: 1, chunk: { type: 'finish', reason: { kind: 'error', failure: { message: 'too long', code: 'CONTEXT_WINDOW_EXCEEDED' } } } }),
      ev(3, 'compaction/start', { compactionId: 'cmp-o', turn: 1 }),
      ev(4, 'assistant/chunk', { turn: 1, step: 1, chunk: { type: 'finish', reason: { kind: 'stop' } } }),
      ev(5, 'compaction/end', { compactionId: 'cmp-o', turn: 1 }),
    ]
    expect(await lines(events, 'INV-46')).toEqual([
      'INV-46@5: compaction/end of the overflow bracket cmp-o (#3) lies outside any pre-step or overflow window, ' +
      'not in the overflow window opened at #2 where the bracket started: every event of the bracket lies in its window',
    ])
  })

  it('INV-46: a pressure bracket starting at seq 1 is reported at its first event outside the window', async () => {
    // turn/start #0 opens the pre-step window; step/start #2 closes it before the end #3.
    const events = [
      ev(0, 'turn/start', { turn: 1 }),
      ev(1, 'compaction/start', { compactionId: 'cmp-a', turn: 1 }),
      ev(2, 'step/start', { turn: 1, step: 1 }),
      ev(3, 'compaction/end', { compactionId: 'cmp-a', turn: 1 }),
    ]
    expect(await lines(events, 'INV-46')).toEqual([
      'INV-46@3: compaction/end of the pressure bracket cmp-a (#1) lies outside any pre-step or overflow window, ' +
      'not in the pre-step window opened at #0 where the bracket started: every event of the bracket lies in its window',
    ])
  })
})

describe('INV-46: explicit-region brackets', () => {
  it('INV-46: an explicit-region bracket owned by no turn while no turn is open is reported', async () => {
    const events = [
      ev(0, 'compaction/start', { compactionId: 'cmp-x', turn: null }),
      ev(1, 'compaction/end', { compactionId: 'cmp-x', turn: null }),
    ]
    const explicit0 = [0] as unknown as NonNullable<RunManifest['explicitRegionStarts']>
    expect(await lines(events, 'INV-46', { ...MANIFEST, explicitRegionStarts: explicit0 })).toEqual([
      'INV-46@0: an explicit-region bracket owned by no turn while no turn is open',
    ])
  })
})

describe('INV-47: events of an ended bracket', () => {
  it('INV-47: a summary-error carrying an ended bracket\'s id inside another open bracket is reported', async () => {
    // After end #56: start cmp-b #57, a copy of summary-error #52 (cmp-7f3a) #58, end cmp-b #59.
    const events = editedAppendixB((e) => {
      const start = copyOf(e, 51, 56)
      start.data['compactionId'] = 'cmp-b'
      const end = copyOf(e, 56, 56)
      end.data['compactionId'] = 'cmp-b'
      e.splice(57, 0, start, copyOf(e, 52, 56), end)
      renumber(e)
    })
    expect(await lines(events, 'INV-47')).toEqual([
      'INV-47@58: compaction/summary-error carries compactionId cmp-7f3a, whose bracket (#51) has already ended',
    ])
  })

  it('INV-47: a second compaction/end of an ended bracket is reported', async () => {
    const events = editedAppendixB((e) => {
      e.splice(57, 0, copyOf(e, 56, 56))
      renumber(e)
    })
    expect(await lines(events, 'INV-47')).toEqual([
      'INV-47@57: compaction/end carries compactionId cmp-7f3a, whose bracket (#51) has already ended',
    ])
  })
})

describe('checkLog: report order', () => {
  it('violations at one seq are sorted by id, not by the order the checks found them', async () => {
    // A tool/result answering an unknown call inserted at #65 (step 3.2): INV-09 judges it before the fold,
    // INV-08 after it, so INV-09 is found first.
    const events = editedAppendixB((e) => {
      const r = copyOf(e, 49, 64)
      r.data['step'] = 2
      const message = r.data['message'] as { id: string; source: { callId: string }; content: Array<{ toolCallId: string }> }
      message.id = 'm-tx'
      message.source.callId = 'call_x'
      ;(message.content[0] as { toolCallId: string }).toolCallId = 'call_x'
      delete r['sourceEventSeqs']
      e.splice(65, 0, r)
      renumber(e)
    })
    const r = await checkedReport(events)
    expect(r.internalErrors).toEqual([])
    expect(r.violations.map((v) => `${v.id}@${v.seq}: ${v.message}`)).toEqual([
      'INV-08@65: tool pairing goes negative after node #65 at position 5: a tool result without an open call',
      'INV-09@65: tool/result answers call call_x, which is not a pending tool/call of step 3.2',
    ])
  })
})

describe('checkLog: a failing model fold', () => {
  /** Makes the model's fold of `seq` throw `Error: boom`; every other fold runs as usual. */
  function failFoldAt(seq: number): void {
    const original = CheckerModel.prototype.fold
    vi.spyOn(CheckerModel.prototype, 'fold').mockImplementation(function (this: CheckerModel, item, e) {
      if (e.seq === seq) throw new Error('boom')
      original.call(this, item, e)
    })
  }

  it('stops dispatch at the failing item: the rest of the log is not judged, ok is false', async () => {
    // The fold of step/end #50 fails; without the stop, bracket #51 would be judged inside step 3.1.
    failFoldAt(50)
    const r = reportOf(await checkLog(appendixB(), { dialect: 'seed' }))
    expect(r.violations).toEqual([])
    expect(r.suppressed).toBe(0)
    expect(r.internalErrors).toEqual([{ id: 'model', message: 'fold of seq 50 failed: Error: boom' }])
    expect(r.ok).toBe(false)
    expect(r.events).toBe(67)
  })

  it('runs no end hook after the failure (a bracket left open is not reported)', async () => {
    // Appendix B cut after checkpoint #55 (bracket cmp-7f3a still open); the fold of #55 fails.
    failFoldAt(55)
    const r = reportOf(await checkLog(appendixB().slice(0, 56), { dialect: 'seed' }))
    expect(r.violations).toEqual([])
    expect(r.internalErrors).toEqual([{ id: 'model', message: 'fold of seq 55 failed: Error: boom' }])
    expect(r.ok).toBe(false)
  })
})

describe('checkLog: options', () => {
  it('a type listed in knownTypes is known', async () => {
    const events = appendixB()
    events.push(ev(67, 'x/custom', {}))
    const r = reportOf(await checkLog(events, { dialect: 'seed', knownTypes: ['x/custom'] }))
    expect(r.violations).toEqual([])
    expect(r.internalErrors).toEqual([])
    expect(r.ok).toBe(true)
  })

  it('without knownTypes no extra type is known, whatever its name', async () => {
    const events = appendixB()
    events.push(ev(67, 'Stryker was here', {}))
    const r = reportOf(await checkLog(events, { dialect: 'seed' }))
    expect(r.internalErrors).toEqual([])
    expect(r.violations.map((v) => `${v.id}@${v.seq}: ${v.message}`)).toEqual([
      'INV-02@67: unknown event type "Stryker was here" in the seed dialect without ignorable: true; ' +
      'the reader must refuse the session (§1.1 rule 4, INV-02) (field type)',
    ])
  })

  it('a given pruneMarker is the marker INV-22 looks for', async () => {
    const r = reportOf(await checkLog(appendixB(), { dialect: 'seed', pruneMarker: '[other marker]' }))
    expect(r.internalErrors).toEqual([])
    expect(violationLines(r, 'INV-22')).toEqual([
      'INV-22@15: the rewrite of #12 is not pruneContent of its projected content: the marker appears 0 times (exactly once is required)',
    ])
  })
})

describe('Dispatcher.coverageOf', () => {
  it('a check the dispatcher was never given is evaluated with nothing skipped', () => {
    const d = new Dispatcher([], {} as RunContext)
    const stranger: InvariantCheck<CheckerModel> = { id: 'INV-05' as CheckId, family: 'log-surface', statement: 'x', create: () => ({}) }
    expect(d.coverageOf([stranger])).toEqual([{ id: 'INV-05', status: 'evaluated', reason: '', skipped: 0 }])
  })
})

describe('INV-09: step events name the open step', () => {
  it('INV-09: a chunk naming another turn with the open step\'s number is reported', async () => {
    const events = editedAppendixB((e) => { (e[59] as AppendixEvent).data['turn'] = 2 })
    expect(await lines(events, 'INV-09')).toEqual(['INV-09@59: assistant/chunk names step 2.2, the open step is 3.2'])
  })
})
