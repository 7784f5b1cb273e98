/**
 * HARD-6 (hardened `openTurnPrompt`, `src/checker/hardened-selection.ts`) on small edits of Appendix B, whose
 * summary #54 (turn 3, shadowedSeqs [3, 10, 15, 23, 28, 37, 42]) shadows #42, turn 3's own prompt. Turn 2 runs
 * #26 … #39 with the prompt #28. Every expectation is written out by hand. It pins:
 * - the exact HARD-6 message;
 * - the turn bookkeeping: a `turn/end` closes the turn (a summary after it judges no earlier turn's prompt), and
 *   before the first `turn/start` no turn is open;
 * - "own user prompt" is the turn's *first appended* `user/message`: a later appended one does not take its place,
 *   and a `user/message` that replaces a span is no prompt.
 */
import type { RunManifest } from '@compaction-sim/core'
import { describe, expect, it } from 'vitest'
import { at, checkedReport, editedAppendixB, foreign, violationLines, type AppendixEvent } from './support.ts'

const MANIFEST: RunManifest = {
  scenario: 'hardened-selection-mutants', compaction: { hardening: { openTurnPrompt: true } },
  routes: [{ provider: 'mock', model: 'mock-4k', contextWindow: 8000 }], faults: [],
}

const hard6 = async (events: AppendixEvent[]): Promise<string[]> => violationLines(await checkedReport(events, MANIFEST), 'HARD-6')

describe('HARD-6 — the open turn prompt, mutant boundaries', () => {
  it('names the shadowed prompt in its message', async () => {
    expect(await hard6(editedAppendixB())).toEqual([
      'HARD-6@54: the summary shadows the open turn\'s own user prompt #42 (hardening.openTurnPrompt keeps it verbatim)',
    ])
  })

  it('a turn/end closes the turn: without turn 3\'s turn/start the summary is outside any turn', async () => {
    // #40 (turn 3's turn/start) becomes a foreign record: after turn 2's turn/end #39 no turn is open, so neither
    // #42 nor turn 2's prompt #28 (also shadowed by #54) is an open turn's prompt.
    expect(await hard6(editedAppendixB((e) => foreign(at(e, 40))))).toEqual([])
  })

  it('before the first turn/start no turn is open', async () => {
    // Every turn/start and turn/end becomes a foreign record: #54 is written while no turn was ever opened.
    const events = editedAppendixB((e) => {
      for (const x of e) if (x.type === 'turn/start' || x.type === 'turn/end') foreign(x)
    })
    expect(await hard6(events)).toEqual([])
  })

  it('the prompt is the first appended user/message of the turn; a later one does not replace it', async () => {
    // #49 (turn 3's tool result) becomes a second appended user/message, not shadowed by #54: the prompt is still #42.
    const events = editedAppendixB((e) => {
      const x = at(e, 49)
      x.type = 'user/message'
      x.data = { id: 'm-u4', role: 'user', content: [{ type: 'text', text: 'Also check math.spec.ts.' }], source: { kind: 'user' } }
    })
    expect(await hard6(events)).toEqual([
      'HARD-6@54: the summary shadows the open turn\'s own user prompt #42 (hardening.openTurnPrompt keeps it verbatim)',
    ])
  })

  it('a user/message that replaces a span is no prompt', async () => {
    // #42 replaces #37 instead of being appended: turn 3 has no appended user/message before #54, so no prompt.
    const events = editedAppendixB((e) => {
      const x = at(e, 42)
      x['surfaceOp'] = { op: 'replace', start: 37, end: 37 }
      x['sourceEventSeqs'] = [37]
    })
    expect(await hard6(events)).toEqual([])
  })
})
