/**
 * INV-09's turn/step state machine (`src/checker/log-surface.ts`, the appended-result and `before` switch
 * parts) on small edits of Appendix B: turn 1 = #0 … #25 (step 1.1 #1 … #13 with call_1's tool/call #11 and
 * result #12, prune pair #14/#15, step 1.2 #16 … #24), turn 2 = #26 … #39, turn 3 = #40 … #66 (step 3.1
 * #41 … #50, the compaction #51 … #56 between steps with image/offload #53, step 3.2 #57 … #65). Every
 * expectation is written out by hand from §12.1 INV-09. It pins:
 * - an appended tool/result naming another turn or another step of the open step, one answering a call that
 *   has no pending tool/call, and that an ordinary (non-repair) TOOL_NOT_STARTED result needs no tool/call;
 * - turn/start inside an open turn and out of order; turn/end with no open turn, naming another turn, or with a
 *   step still open; a repair `turn/end {interrupted}` with no open turn is judged without failing;
 * - step/start outside a turn, naming another turn, out of order, or inside an open step;
 * - step/end with no open step and naming another turn or another step;
 * - request/context outside a turn; assistant/chunk, tool/call and llm/retry-started with no open step, and a
 *   step-scoped event naming another step.
 */
import { describe, expect, it } from 'vitest'
import { at, checkedReport, editedAppendixB, foreign, type AppendixEvent, violationLines } from './support.ts'

/** Sets `data[field]` of every event with seq in [from, to] that carries that field. */
function setAll(e: AppendixEvent[], from: number, to: number, field: 'turn' | 'step', value: number): void {
  for (const x of e) if (x.seq >= from && x.seq <= to && field in x.data) x.data[field] = value
}

/** A fresh event appended after the last one. */
function append(e: AppendixEvent[], type: string, data: Record<string, unknown>, extra: Record<string, unknown> = {}): void {
  const seq = e.length
  e.push({ seq, time: 1700000000000 + seq * 5, type, data, ...extra } as AppendixEvent)
}

async function inv09(edit: (e: AppendixEvent[]) => void): Promise<string[]> {
  return violationLines(await checkedReport(editedAppendixB(edit)), 'INV-09')
}

describe('INV-09: an appended tool/result names the open step and answers a pending call', () => {
  it('a result naming turn 2 in step 1.1 is reported, naming both steps', async () => {
    expect(await inv09((e) => { at(e, 12).data['turn'] = 2 }))
      .toEqual(['INV-09@12: tool/result names step 2.1, the open step is 1.1'])
  })

  it('a result naming step 1.2 in step 1.1 is reported, naming both steps', async () => {
    expect(await inv09((e) => { at(e, 12).data['step'] = 2 }))
      .toEqual(['INV-09@12: tool/result names step 1.2, the open step is 1.1'])
  })

  it('a result for call_1 without its tool/call #11 answers no pending call', async () => {
    expect(await inv09((e) => { foreign(at(e, 11)) }))
      .toEqual(['INV-09@12: tool/result answers call call_1, which is not a pending tool/call of step 1.1'])
  })

  it('an ordinary TOOL_NOT_STARTED result (no repair run) needs no tool/call', async () => {
    expect(await inv09((e) => {
      foreign(at(e, 11))
      const r = at(e, 12)
      r.data['error'] = { name: 'ToolNotStartedError', code: 'TOOL_NOT_STARTED' }
      delete r['sourceEventSeqs']
    })).toEqual([])
  })
})

describe('INV-09: turn/start and turn/end', () => {
  it('turn/start #26 while turn 1 is still open (turn/end #25 removed)', async () => {
    expect(await inv09((e) => { foreign(at(e, 25)) }))
      .toEqual(['INV-09@26: turn 2 starts while turn 1 (#0) is open: turns never nest'])
  })

  it('turn 3 renumbered 4 does not follow turn 2', async () => {
    expect(await inv09((e) => { setAll(e, 40, 66, 'turn', 4) }))
      .toEqual(['INV-09@40: turn 4 does not follow turn 2: turns start at the next number'])
  })

  it('a second turn/end after #66 has no open turn', async () => {
    expect(await inv09((e) => { append(e, 'turn/end', { turn: 3, reason: { kind: 'completed' } }) }))
      .toEqual(['INV-09@67: turn/end 3 with no open turn'])
  })

  it('turn/end #66 naming turn 2 while turn 3 is open', async () => {
    expect(await inv09((e) => { at(e, 66).data['turn'] = 2 }))
      .toEqual(['INV-09@66: turn/end names turn 2, the open turn is 3'])
  })

  it('turn/end #66 while step 3.2 is open (step/end #65 removed)', async () => {
    expect(await inv09((e) => { foreign(at(e, 65)) }))
      .toEqual(['INV-09@66: turn/end while step 3.2 (#57) is open'])
  })

  it('a repair turn/end {interrupted} with no open turn but an open call is judged without an internal failure', async () => {
    const events = editedAppendixB((e) => {
      // an assistant message requesting call_1 after turn 3 closed, then a repair run (turn/end, end-seed)
      const message = structuredClone(at(e, 10))
      message.seq = 67
      message.time = 1700000000340
      delete message['sourceEventSeqs']
      e.push(message)
      append(e, 'turn/end', { turn: 3, reason: { kind: 'interrupted' } })
      append(e, 'session/end-seed', {})
    })
    const r = await checkedReport(events)
    expect(violationLines(r, 'INV-09')).toEqual([
      'INV-09@67: assistant/message of step 1.1 with no open step',
      'INV-09@68: turn/end 3 with no open turn',
    ])
    expect(r.internalErrors.filter((f) => f.id === 'INV-09')).toEqual([])
  })
})

describe('INV-09: step/start and step/end', () => {
  it('a step/start after turn/end #66 is outside a turn', async () => {
    expect(await inv09((e) => { append(e, 'step/start', { turn: 3, step: 3 }) }))
      .toEqual(['INV-09@67: step 3.3 starts outside a turn'])
  })

  it('step 3.2 renamed 2.2 (#57 … #65) names another turn than the open turn 3', async () => {
    expect(await inv09((e) => { setAll(e, 57, 65, 'turn', 2) }))
      .toEqual(['INV-09@57: step/start names turn 2, the open turn is 3'])
  })

  it('step 3.2 renumbered 3.3 (#57 … #65) does not follow step 1', async () => {
    expect(await inv09((e) => { setAll(e, 57, 65, 'step', 3) }))
      .toEqual(['INV-09@57: step 3 does not follow step 1 of turn 3: steps restart at 1 and are consecutive'])
  })

  it('step/start #16 while step 1.1 is open (step/end #13 removed)', async () => {
    expect(await inv09((e) => { foreign(at(e, 13)) }))
      .toEqual(['INV-09@16: step/start while step 1.1 (#1) is open'])
  })

  it('a step/end between steps (image/offload #53 turned into step/end 3.1) has no open step', async () => {
    expect(await inv09((e) => {
      const x = at(e, 53)
      x.type = 'step/end'
      x.data = { turn: 3, step: 1 }
    })).toEqual(['INV-09@53: step/end 3.1 with no open step'])
  })

  it('step/end #65 naming turn 2 while step 3.2 is open', async () => {
    expect(await inv09((e) => { at(e, 65).data['turn'] = 2 }))
      .toEqual(['INV-09@65: step/end names step 2.2, the open step is 3.2'])
  })

  it('step/end #65 naming step 1 while step 3.2 is open', async () => {
    expect(await inv09((e) => { at(e, 65).data['step'] = 1 }))
      .toEqual(['INV-09@65: step/end names step 3.1, the open step is 3.2'])
  })
})

describe('INV-09: turn-only and step-scoped events', () => {
  it('a request/context after turn/end #66 is outside an open turn', async () => {
    expect(await inv09((e) => { append(e, 'request/context', { provider: 'mock', model: 'mock-4k', contextWindow: 4000, imageTokens: 85 }) }))
      .toEqual(['INV-09@67: request/context outside an open turn'])
  })

  it('assistant/chunk, tool/call and llm/retry-started after turn/end #66 have no open step', async () => {
    expect(await inv09((e) => {
      append(e, 'assistant/chunk', { turn: 3, step: 2, chunk: { type: 'finish', reason: { kind: 'stop' } } })
      append(e, 'tool/call', { turn: 3, step: 2, callId: 'call_9', name: 'read', arguments: '{}' })
      append(e, 'llm/retry-started', { retryId: 'r-1', turn: 3, step: 2, retry: 1 })
    })).toEqual([
      'INV-09@67: assistant/chunk of step 3.2 with no open step',
      'INV-09@68: tool/call of step 3.2 with no open step',
      'INV-09@69: llm/retry-started of step 3.2 with no open step',
    ])
  })

  it('assistant/chunk #63 naming step 3.1 inside step 3.2', async () => {
    expect(await inv09((e) => { at(e, 63).data['step'] = 1 }))
      .toEqual(['INV-09@63: assistant/chunk names step 3.1, the open step is 3.2'])
  })
})
