/**
 * The second half of `src/checker/log-surface.ts` (INV-07, INV-08 and INV-09's `tool/result` rules) on small
 * edits of Appendix B and of the valid `crash-mid-step` conformance log (torn after call_a's `tool/call` #12;
 * repair run #13 OUTCOME_UNKNOWN for call_a, #14 NOT_STARTED for call_b, #15 step/end, #16 turn/end, end-seed
 * #17). Every expectation is written out by hand from §1.5.1, §4.1, §11.4 and §12.1. It pins:
 * - INV-07: a duplicated surface line of a live node (also the node at position 0) is "on the surface twice",
 *   of a shadowed node "returns a shadowed node"; a duplicate seq whose first line was no surface node is
 *   not judged; an opaque duplicate line is skipped without failing the check;
 * - INV-08: a balance that goes negative at the very first surface node (position 0) is reported once, naming
 *   that node;
 * - INV-09: a prune replacement outside a turn; a non-repair NOT_STARTED result is an ordinary result; each
 *   §11.4 rule of a synthetic repair result (its turn, with and without an open turn; an unknown call; its
 *   step; OUTCOME_UNKNOWN iff dispatched, citing exactly its tool/call; NOT_STARTED without provenance); the
 *   first of two ordinary answers is the one a later synthetic answer names; a result with no open step.
 */
import type { LogEvent, RunManifest } from '@compaction-sim/core'
import { insertEvents, validConformanceLogs } from '@compaction-sim/fixtures'
import { describe, expect, it } from 'vitest'
import { checkLog, type CheckReport } from '../../src/checker/run.ts'
import { type AppendixEvent, checkedReport, editedAppendixB, reportOf, violationLines } from './support.ts'

const BASE = validConformanceLogs().find((l) => l.name === 'crash-mid-step')
if (BASE === undefined) throw new Error('the crash-mid-step conformance log is missing')
const MANIFEST: RunManifest | null = BASE.manifest ?? null

/** The fields of a tool/result message the edits below touch. */
type ResultMessage = { id: string; source: { callId: string }; content: Array<{ toolCallId: string }> }
type Loose = Record<string, unknown> & { seq: number; type: string; data: Record<string, unknown> & { message: ResultMessage } }

/** A mutable clone of crash-mid-step, after checking the repair run sits at #13 … #17. */
function crashLog(): Loose[] {
  const events = structuredClone(BASE?.events ?? []) as unknown as Loose[]
  expect(events.slice(12, 18).map((e) => e.type))
    .toEqual(['tool/call', 'tool/result', 'tool/result', 'step/end', 'turn/end', 'session/end-seed'])
  return events
}

async function crashReport(events: readonly Loose[], manifest: RunManifest | null = MANIFEST): Promise<CheckReport> {
  return reportOf(await checkLog([...events] as never, { dialect: 'seed', manifest }))
}

/** The internal failures of one check (a hook that threw). */
const failuresOf = (r: CheckReport, id: string): unknown[] => r.internalErrors.filter((f) => f.id === id)

const clone = <T>(x: T): T => structuredClone(x)

describe('INV-07: a second copy of a folded surface line', () => {
  it('a duplicate of the live node #3 would put it on the surface twice', async () => {
    const r = await checkedReport(editedAppendixB((e) => { e.splice(4, 0, clone(e[3] as AppendixEvent)) }))
    expect(violationLines(r, 'INV-07')).toEqual(['INV-07@4: a second copy of #3 would put node 3 on the surface twice'])
  })

  it('a duplicate of #2, the node at position 0, is on the surface twice too', async () => {
    const r = await checkedReport(editedAppendixB((e) => { e.splice(3, 0, clone(e[2] as AppendixEvent)) }))
    expect(violationLines(r, 'INV-07')).toEqual(['INV-07@3: a second copy of #2 would put node 2 on the surface twice'])
  })

  it('a duplicate of #3 after #55 shadowed it would return a shadowed node', async () => {
    const r = await checkedReport(editedAppendixB((e) => { e.push(clone(e[3] as AppendixEvent)) }))
    expect(violationLines(r, 'INV-07')).toEqual(['INV-07@67: a second copy of #3 would return a shadowed node to the surface'])
  })

  it('a user/message line repeating seq 4 (a request/header, no surface node) is not INV-07\'s', async () => {
    const r = await checkedReport(editedAppendixB((e) => {
      const copy = clone(e[3] as AppendixEvent)
      copy.seq = 4
      e.splice(5, 0, copy)
    }))
    expect(violationLines(r, 'INV-07')).toEqual([])
    expect(failuresOf(r, 'INV-07')).toEqual([])
  })

  it('an opaque duplicate line (data not an object) is skipped; a later shadowed copy is still reported', async () => {
    const r = await checkedReport(editedAppendixB((e) => {
      const opaque = clone(e[3] as AppendixEvent) as unknown as Record<string, unknown>
      opaque['data'] = 'not an object'
      e.splice(4, 0, opaque as AppendixEvent)
      e.push(clone(e[3] as AppendixEvent))
    }))
    expect(failuresOf(r, 'INV-07')).toEqual([])
    expect(violationLines(r, 'INV-07')).toEqual(['INV-07@68: a second copy of #3 would return a shadowed node to the surface'])
  })
})

describe('INV-08: the first negative balance', () => {
  it('a tool/result as the first surface node (#2, position 0) is reported once, naming #2', async () => {
    const r = await checkedReport(editedAppendixB((e) => {
      const result = clone(e[12] as AppendixEvent)
      result.seq = 2
      result.time = (e[2] as AppendixEvent)['time']
      delete result['sourceEventSeqs']
      e[2] = result
    }))
    expect(violationLines(r, 'INV-08')).toEqual(['INV-08@2: tool pairing goes negative after node #2 at position 0: a tool result without an open call'])
  })
})

describe('INV-09: tool/result rules', () => {
  it('a prune replacement (of node #49) after the last turn/end is outside an open turn', async () => {
    const r = await checkedReport(editedAppendixB((e) => {
      const old = e[49] as AppendixEvent
      e.push({
        seq: 67, time: (e[66] as AppendixEvent)['time'], type: 'tool/result',
        surfaceOp: { op: 'replace', start: 49, end: 49 }, sourceEventSeqs: [49], data: clone(old.data),
      } as AppendixEvent)
    }))
    expect(violationLines(r, 'INV-09')).toEqual(['INV-09@67: a tool-result replacement (prune) outside an open turn'])
  })

  it('a NOT_STARTED result outside a repair run is an ordinary result answering its pending call', async () => {
    const r = await checkedReport(editedAppendixB((e) => {
      ;(e[12] as AppendixEvent).data['error'] = { name: 'ToolNotStartedError', code: 'TOOL_NOT_STARTED' }
      ;(e[15] as AppendixEvent).data['error'] = { name: 'ToolNotStartedError', code: 'TOOL_NOT_STARTED' }
    }))
    expect(violationLines(r, 'INV-09')).toEqual([])
  })

  it('an appended tool/result after the last turn/end has no open step', async () => {
    const r = await checkedReport(editedAppendixB((e) => {
      const result = clone(e[49] as AppendixEvent)
      result.seq = 67
      result.time = (e[66] as AppendixEvent)['time']
      e.push(result)
    }))
    expect(violationLines(r, 'INV-09')).toEqual(['INV-09@67: tool/result of step 3.1 with no open step'])
  })
})

describe('INV-09: a synthetic repair result (§11.4)', () => {
  it('the unedited crash-mid-step log has no INV-09', async () => {
    expect(violationLines(await crashReport(crashLog()), 'INV-09')).toEqual([])
  })

  it('naming turn 2 while turn 1 is open', async () => {
    const events = crashLog()
    ;(events[13] as Loose).data['turn'] = 2
    expect(violationLines(await crashReport(events), 'INV-09')).toEqual(['INV-09@13: synthetic repair result names turn 2, the open turn is 1'])
  })

  it('after the interrupted turn/end: no turn is open', async () => {
    const e = crashLog()
    // #13 step/end, #14 turn/end {interrupted}, #15 call_b's NOT_STARTED result, #16 end-seed.
    const events = [...e.slice(0, 13), e[15], e[16], e[14], e[17]].map((x, i) => ({ ...(x as Loose), seq: i }))
    const r = await crashReport(events)
    expect(failuresOf(r, 'INV-09')).toEqual([])
    expect(violationLines(r, 'INV-09')).toEqual([
      'INV-09@14: the crash-repair run closes turn 1 leaving 2 tool call(s) unanswered: call_a (step 1, tool/call #12), call_b (step 1); ' +
        'repair answers every call of the interrupted turn that had no result exactly once before its turn/end (§11.4)',
      'INV-09@15: synthetic repair result names turn 1, but no turn is open',
    ])
  })

  it('answering call_c, which no assistant message requested', async () => {
    const events = crashLog()
    const c = clone(events[14] as Loose)
    const message = c.data.message
    message.id = 'interrupted-call_c-15'
    message.source.callId = 'call_c'
    const block = message.content[0] as { toolCallId: string }
    block.toolCallId = 'call_c'
    const r = await crashReport(insertEvents(events as unknown as LogEvent[], 15, [c as unknown as LogEvent]) as unknown as Loose[], null)
    expect(violationLines(r, 'INV-09')).toEqual(['INV-09@15: synthetic repair result answers call call_c, which no assistant message of turn 1 left unanswered'])
  })

  it('naming step 2 for a call requested in step 1', async () => {
    const events = crashLog()
    ;(events[13] as Loose).data['step'] = 2
    expect(violationLines(await crashReport(events), 'INV-09'))
      .toEqual(['INV-09@13: synthetic repair result names step 2, the call call_a was requested in step 1'])
  })

  it('NOT_STARTED for the dispatched call_a', async () => {
    const events = crashLog()
    ;(events[13] as Loose).data['error'] = { name: 'ToolNotStartedError', code: 'TOOL_NOT_STARTED' }
    expect(violationLines(await crashReport(events), 'INV-09'))
      .toEqual(['INV-09@13: call call_a was dispatched (tool/call #12): its repair result must be TOOL_OUTCOME_UNKNOWN, not TOOL_NOT_STARTED'])
  })

  it.each([
    ['no sourceEventSeqs', undefined],
    ['two seqs, the first its tool/call', [12, 11]],
    ['one seq, not its tool/call', [11]],
  ] as const)('OUTCOME_UNKNOWN for call_a citing %s', async (_what, cited) => {
    const events = crashLog()
    const a = events[13] as Loose
    if (cited === undefined) delete a['sourceEventSeqs']
    else a['sourceEventSeqs'] = [...cited]
    const r = await crashReport(events)
    expect(failuresOf(r, 'INV-09')).toEqual([])
    expect(violationLines(r, 'INV-09')).toEqual(['INV-09@13: the TOOL_OUTCOME_UNKNOWN result must cite exactly its tool/call [12]'])
  })

  it('OUTCOME_UNKNOWN for the never dispatched call_b', async () => {
    const events = crashLog()
    ;(events[14] as Loose).data['error'] = { name: 'ToolOutcomeUnknownError', code: 'TOOL_OUTCOME_UNKNOWN' }
    expect(violationLines(await crashReport(events), 'INV-09'))
      .toEqual(['INV-09@14: call call_b was never dispatched (no tool/call): its repair result must be TOOL_NOT_STARTED, not TOOL_OUTCOME_UNKNOWN'])
  })

  it('NOT_STARTED for call_b with provenance', async () => {
    const events = crashLog()
    ;(events[14] as Loose)['sourceEventSeqs'] = [11]
    expect(violationLines(await crashReport(events), 'INV-09'))
      .toEqual(['INV-09@14: a TOOL_NOT_STARTED repair result carries no provenance (no tool/call was logged)'])
  })

  it('after two ordinary answers of call_a, a synthetic answer names the first', async () => {
    const real = (): LogEvent => ({
      seq: 0, time: 0, type: 'tool/result', surfaceOp: 'append', sourceEventSeqs: [12],
      data: {
        turn: 1, step: 1,
        message: {
          id: 'm-t-a', role: 'user', source: { kind: 'tool', callId: 'call_a' },
          content: [{ type: 'tool-result', toolCallId: 'call_a', content: [{ type: 'text', text: 'contents of a.txt' }] }],
        },
      },
    } as unknown as LogEvent)
    const second = real() as unknown as Loose
    second.data.message.id = 'm-t-a2'
    const events = insertEvents(crashLog() as unknown as LogEvent[], 13, [real(), second as unknown as LogEvent]) as unknown as Loose[]
    const r = await crashReport(events, null)
    expect(violationLines(r, 'INV-09')).toEqual([
      'INV-09@14: tool/result answers call call_a, which is not a pending tool/call of step 1.1',
      'INV-09@15: synthetic repair result answers call call_a a second time (#13 already answered it): a repair run ' +
        'answers each unanswered call exactly once (§11.4)',
    ])
  })
})
