/**
 * The §12.2 bracket checks (`src/checker/bracket.ts`, INV-10 … INV-14, lines 1–229) on small hand edits of
 * Appendix B, whose one bracket is `compaction/start` #51 (cmp-7f3a, turn 3), `compaction/summary-error` #52,
 * `image/offload` #53, `compaction/summary` #54 (shadowedRange 3…42, shadowedSeqs [3,10,15,23,28,37,42]), the
 * checkpoint `user/message` #55 (replace 3…42, sourceEventSeqs [51,54,3,10,15,23,28,37,42]) and
 * `compaction/end` #56, inside turn 3 (#40 … #66). Every expectation (id@seq and message) is written out by
 * hand from §7 and §12.2. It pins:
 * - INV-10: each message (outside a bracket, foreign compactionId / sourceCommandId, end.turn differing);
 * - INV-11: the null-owner and numeric-owner messages (turn open / no turn), the checkpoint's enclosure, and
 *   that a matching owner is not reported;
 * - INV-12: second summary / summary-error after the summary (naming the first), end with 0 summaries, and
 *   that events of another compactionId are not judged against the open bracket;
 * - INV-13: the next-event rule (append op, non-user/message replacement), the injected-append-fault reading
 *   (FAULT-63 by kind, or any append fault on user/message) and its end{error} rule, the end-of-log rule;
 * - INV-14: the replacement stored under another type, the first-line / duplicate / bracketless guards, source
 *   shape, ids, span and sourceEventSeqs messages.
 */
import type { RunManifest } from '@compaction-sim/core'
import { describe, expect, it } from 'vitest'
import { checkLog, type CheckReport } from '../../src/checker/run.ts'
import { appendixB, at, foreign, reportOf } from './support.ts'

type Events = ReturnType<typeof appendixB>
type Ev = Events[number]


async function report(events: readonly unknown[], manifest?: RunManifest): Promise<CheckReport> {
  return reportOf(await checkLog(events, manifest === undefined ? { dialect: 'seed' } : { dialect: 'seed', manifest }))
}

/** `id@seq` of the violations of one id. */
const of = (r: CheckReport, id: string): string[] => r.violations.filter((v) => v.id === id).map((v) => `${v.id}@${v.seq}`)
/** The messages of the violations of one id. */
const messagesOf = (r: CheckReport, id: string): string[] => r.violations.filter((v) => v.id === id).map((v) => v.message)
/** The internal failures of one check (a hook that threw). */
const failuresOf = (r: CheckReport, id: string): unknown[] => r.internalErrors.filter((f) => f.id === id)

/** Replaces the event at `seq` by a copy of the event at `from` (seq and time of the target kept). */
function copyInto(events: Events, seq: number, from: number): void {
  const i = events.findIndex((x) => x.seq === seq)
  const target = events[i] as Ev
  events[i] = { ...structuredClone(at(events, from)), seq, time: target.time }
}

const source55 = (e: Events): Record<string, unknown> => at(e, 55).data['source'] as Record<string, unknown>

const manifestWith = (faults: RunManifest['faults'], crashes: NonNullable<RunManifest['crashes']> = []): RunManifest => ({
  scenario: 'bracket', compaction: {}, pruner: {},
  routes: [{ provider: 'mock', model: 'mock-4k', contextWindow: 4000 }], faults, crashes,
})

describe('Appendix B itself', () => {
  it('reports nothing for INV-10 … INV-14 (a matching owner, the prune replacement #15 after a prune, not a summary)', async () => {
    const r = await report(appendixB())
    for (const id of ['INV-10', 'INV-11', 'INV-12', 'INV-13', 'INV-14']) {
      expect(of(r, id)).toEqual([])
      expect(failuresOf(r, id)).toEqual([])
    }
  })
})

describe('INV-10 messages', () => {
  it('without compaction/start #51 the summary-error #52 is outside any open bracket', async () => {
    const e = appendixB()
    foreign(at(e, 51))
    const r = await report(e)
    expect(of(r, 'INV-10')[0]).toBe('INV-10@52')
    expect(messagesOf(r, 'INV-10')[0]).toBe('compaction/summary-error cmp-7f3a outside any open bracket')
  })

  it('an end with another compactionId', async () => {
    const e = appendixB()
    at(e, 56).data['compactionId'] = 'cmp-x'
    const r = await report(e)
    expect(of(r, 'INV-10')).toEqual(['INV-10@56'])
    expect(messagesOf(r, 'INV-10')).toEqual(['compaction/end carries compactionId cmp-x; the open bracket (#51) is cmp-7f3a'])
  })

  it('an end with a sourceCommandId the start lacks', async () => {
    const e = appendixB()
    at(e, 56).data['sourceCommandId'] = 'cmd-1'
    const r = await report(e)
    expect(of(r, 'INV-10')).toEqual(['INV-10@56'])
    expect(messagesOf(r, 'INV-10')).toEqual(["compaction/end carries sourceCommandId cmd-1; the bracket's (#51) is undefined"])
  })

  it('an end with another turn', async () => {
    const e = appendixB()
    at(e, 56).data['turn'] = 4
    const r = await report(e)
    expect(of(r, 'INV-10')).toEqual(['INV-10@56'])
    expect(messagesOf(r, 'INV-10')).toEqual(["compaction/end turn 4 differs from the start's turn 3 (#51)"])
  })
})

describe('INV-11 owner enclosure', () => {
  it('a null-owner bracket inside turn 3 is reported once per bracket event, with the null message', async () => {
    const e = appendixB()
    at(e, 51).data['turn'] = null
    at(e, 56).data['turn'] = null
    const r = await report(e)
    expect(of(r, 'INV-11')).toEqual(['INV-11@51', 'INV-11@52', 'INV-11@54', 'INV-11@55', 'INV-11@56'])
    expect(messagesOf(r, 'INV-11')).toEqual([
      'compaction/start of a turn: null bracket occurs while turn 3 is open',
      'compaction/summary-error of a turn: null bracket occurs while turn 3 is open',
      'compaction/summary of a turn: null bracket occurs while turn 3 is open',
      'the checkpoint of a turn: null bracket occurs while turn 3 is open',
      'compaction/end of a turn: null bracket occurs while turn 3 is open',
    ])
  })

  it('a bracket owned by turn 2 inside turn 3: every event, the checkpoint included', async () => {
    const e = appendixB()
    at(e, 51).data['turn'] = 2
    at(e, 56).data['turn'] = 2
    const r = await report(e)
    expect(of(r, 'INV-11')).toEqual(['INV-11@51', 'INV-11@52', 'INV-11@54', 'INV-11@55', 'INV-11@56'])
    expect(messagesOf(r, 'INV-11')).toEqual([
      'compaction/start of a bracket owned by turn 2 occurs while turn 3 is open',
      'compaction/summary-error of a bracket owned by turn 2 occurs while turn 3 is open',
      'compaction/summary of a bracket owned by turn 2 occurs while turn 3 is open',
      'the checkpoint of a bracket owned by turn 2 occurs while turn 3 is open',
      'compaction/end of a bracket owned by turn 2 occurs while turn 3 is open',
    ])
  })

  it('a checkpoint-source user/message inside the bracket but not right after its summary is not enclosure-judged', async () => {
    const e = appendixB()
    at(e, 51).data['turn'] = 2
    at(e, 56).data['turn'] = 2
    copyInto(e, 53, 55)
    const r = await report(e)
    expect(of(r, 'INV-11')).toEqual(['INV-11@51', 'INV-11@52', 'INV-11@54', 'INV-11@55', 'INV-11@56'])
  })

  it('a bracket owned by turn 3 while no turn is open (turn/start #40 removed)', async () => {
    const e = appendixB()
    foreign(at(e, 40))
    const r = await report(e)
    expect(messagesOf(r, 'INV-11')[0]).toBe('compaction/start of a bracket owned by turn 3 occurs while no turn is open')
    expect(of(r, 'INV-11')[0]).toBe('INV-11@51')
  })
})

describe('INV-12 one summary', () => {
  it('a second compaction/summary names the first', async () => {
    const e = appendixB()
    copyInto(e, 56, 54)
    const r = await report(e)
    expect(of(r, 'INV-12')).toEqual(['INV-12@56'])
    expect(messagesOf(r, 'INV-12')).toEqual(['a second compaction/summary in bracket cmp-7f3a; the first is (#54)'])
  })

  it('a summary-error after the summary names it', async () => {
    const e = appendixB()
    copyInto(e, 56, 52)
    const r = await report(e)
    expect(of(r, 'INV-12')).toEqual(['INV-12@56'])
    expect(messagesOf(r, 'INV-12')).toEqual(["compaction/summary-error after the bracket's summary (#54)"])
  })

  it('a summary-error of another compactionId is not judged against the open bracket', async () => {
    const e = appendixB()
    copyInto(e, 56, 52)
    at(e, 56).data['compactionId'] = 'cmp-x'
    const r = await report(e)
    expect(of(r, 'INV-12')).toEqual([])
  })

  it('an end without error after no summary', async () => {
    const e = appendixB()
    foreign(at(e, 54))
    const r = await report(e)
    expect(of(r, 'INV-12')).toEqual(['INV-12@56'])
    expect(messagesOf(r, 'INV-12')).toEqual(['compaction/end without error, but the bracket (#51) has 0 summaries (exactly one is required)'])
  })
})

/** Appendix B with #55 made an appended (not replacing) user/message: no checkpoint after the summary. */
function noCheckpoint(): Events {
  const e = appendixB()
  at(e, 55)['surfaceOp'] = 'append'
  delete at(e, 55)['sourceEventSeqs']
  return e
}

const FAULT_63: RunManifest['faults'] = [{ id: 'f', kind: 'FAULT-63', target: 'append', when: { occurrence: 1 }, params: {} }]
const APPEND_USER: RunManifest['faults'] = [{ id: 'f', kind: 'FAULT-62', target: 'append', when: { eventType: 'user/message' }, params: {} }]
const APPEND_OTHER: RunManifest['faults'] = [{ id: 'f', kind: 'FAULT-62', target: 'append', when: { eventType: 'assistant/message' }, params: {} }]
const FLUSH_USER: RunManifest['faults'] = [{ id: 'f', kind: 'FAULT-62', target: 'flush', when: { eventType: 'user/message' }, params: {} }]

const AWAIT_MESSAGE = 'after compaction/summary #54 without its checkpoint (injected append fault), the next bracket event must be compaction/end with error; found compaction/end'

describe('INV-13 summary adjacency', () => {
  it('an appended user/message after the summary is no checkpoint', async () => {
    const r = await report(noCheckpoint())
    expect(of(r, 'INV-13')).toEqual(['INV-13@55'])
    expect(messagesOf(r, 'INV-13')).toEqual(['the event after compaction/summary #54 is user/message, not its checkpoint replacement'])
  })

  it('a replacing event that is not a user/message is no checkpoint', async () => {
    const e = appendixB()
    at(e, 55).type = 'assistant/message'
    const r = await report(e)
    expect(of(r, 'INV-13')).toEqual(['INV-13@55'])
  })

  for (const [name, faults] of [['FAULT-63 by kind', FAULT_63], ['an append fault on user/message', APPEND_USER]] as const) {
    it(`with ${name} the missing checkpoint is judged at the next bracket event: an end without error`, async () => {
      const r = await report(noCheckpoint(), manifestWith(faults))
      expect(of(r, 'INV-13')).toEqual(['INV-13@56'])
      expect(messagesOf(r, 'INV-13')).toEqual([AWAIT_MESSAGE])
    })
  }

  for (const [name, faults] of [['an append fault on another type', APPEND_OTHER], ['a flush fault on user/message', FLUSH_USER]] as const) {
    it(`${name} is no injected replacement-append fault`, async () => {
      const r = await report(noCheckpoint(), manifestWith(faults))
      expect(of(r, 'INV-13')).toEqual(['INV-13@55'])
    })
  }

  it('with FAULT-63 an end with error is the allowed next bracket event', async () => {
    const e = noCheckpoint()
    at(e, 56).data['error'] = { message: 'append refused' }
    const r = await report(e, manifestWith(FAULT_63))
    expect(of(r, 'INV-13')).toEqual([])
  })

  it('with FAULT-63 a summary-error as the next bracket event is reported', async () => {
    const e = noCheckpoint()
    copyInto(e, 56, 52)
    const r = await report(e, manifestWith(FAULT_63))
    expect(of(r, 'INV-13')).toEqual(['INV-13@56'])
    expect(messagesOf(r, 'INV-13')).toEqual([AWAIT_MESSAGE.replace('found compaction/end', 'found compaction/summary-error')])
  })

  it('a log ending right after the summary is reported at it', async () => {
    const r = await report(appendixB().filter((x) => x.seq <= 54))
    expect(of(r, 'INV-13')).toEqual(['INV-13@54'])
    expect(messagesOf(r, 'INV-13')).toEqual(['the log ends right after a compaction/summary: its checkpoint replacement is missing'])
  })

  it('… but not with an injected append fault, nor when the summary is torn-final', async () => {
    const cut = (): Events => appendixB().filter((x) => x.seq <= 54)
    expect(of(await report(cut(), manifestWith(FAULT_63)), 'INV-13')).toEqual([])
    expect(of(await report(cut(), manifestWith([], [{ afterSeq: 54 }] as NonNullable<RunManifest['crashes']>)), 'INV-13')).toEqual([])
  })
})

describe('INV-14 replacement stored under another type', () => {
  it('a tool/result replacement right after the summary without a compact source', async () => {
    const e = appendixB()
    const op = at(e, 55)['surfaceOp']
    copyInto(e, 55, 15)
    at(e, 55)['surfaceOp'] = op
    const r = await report(e)
    expect(of(r, 'INV-14')).toEqual(['INV-14@55'])
    expect(messagesOf(r, 'INV-14')).toEqual([
      "the replacement after compaction/summary #54 is stored as tool/result: the checkpoint is one user/message with source {kind:'plugin', plugin:'compact'} (§1.4.4)",
    ])
    expect(failuresOf(r, 'INV-14')).toEqual([])
  })

  it('a first log line with a replacing surfaceOp has no previous line (no failure)', async () => {
    const e = appendixB()
    at(e, 0)['surfaceOp'] = { op: 'replace', start: 0, end: 0 }
    const r = await report(e)
    expect(failuresOf(r, 'INV-14')).toEqual([])
    expect(of(r, 'INV-14')).toEqual([])
  })

  it('a user/message replacement with a user source is judged once, by the user/message rule', async () => {
    const e = appendixB()
    at(e, 55).data['source'] = { kind: 'user' }
    const r = await report(e)
    expect(of(r, 'INV-14')).toEqual(['INV-14@55'])
    expect(messagesOf(r, 'INV-14')).toEqual([
      'the replacement after compaction/summary #54 has source {"kind":"user"}, not {kind:\'plugin\', plugin:\'compact\'}',
    ])
  })
})

describe('INV-14 checkpoint correlation', () => {
  it('a checkpoint source without a compactionId', async () => {
    const e = appendixB()
    delete source55(e)['compactionId']
    const r = await report(e)
    expect(of(r, 'INV-14')).toEqual(['INV-14@55', 'INV-14@55'])
    expect(messagesOf(r, 'INV-14')).toEqual([
      'a checkpoint source without a compactionId cannot be correlated with its bracket (§1.6)',
      "checkpoint compactionId undefined differs from its bracket's cmp-7f3a (#51)",
    ])
  })

  it('a checkpoint source with an empty compactionId', async () => {
    const e = appendixB()
    source55(e)['compactionId'] = ''
    const r = await report(e)
    expect(messagesOf(r, 'INV-14')).toEqual([
      'a checkpoint source without a compactionId cannot be correlated with its bracket (§1.6)',
      "checkpoint compactionId  differs from its bracket's cmp-7f3a (#51)",
    ])
  })

  it('a checkpoint with another compactionId / a sourceCommandId its bracket lacks', async () => {
    const e = appendixB()
    source55(e)['compactionId'] = 'cmp-x'
    source55(e)['sourceCommandId'] = 'cmd-1'
    const r = await report(e)
    expect(of(r, 'INV-14')).toEqual(['INV-14@55', 'INV-14@55'])
    expect(messagesOf(r, 'INV-14')).toEqual([
      "checkpoint compactionId cmp-x differs from its bracket's cmp-7f3a (#51)",
      "checkpoint sourceCommandId cmd-1 differs from its bracket's undefined",
    ])
  })

  it('a summary outside any bracket: its checkpoint is not correlated (no failure)', async () => {
    const e = appendixB()
    foreign(at(e, 51))
    const r = await report(e)
    expect(failuresOf(r, 'INV-14')).toEqual([])
    expect(of(r, 'INV-14')).toEqual([])
  })

  it('a checkpoint span differing at the start or at the end', async () => {
    for (const [start, end] of [[4, 42], [3, 41]] as const) {
      const e = appendixB()
      at(e, 55)['surfaceOp'] = { op: 'replace', start, end }
      const r = await report(e)
      expect(of(r, 'INV-14')).toEqual(['INV-14@55'])
      expect(messagesOf(r, 'INV-14')).toEqual([`checkpoint span ${start}…${end} differs from the summary's shadowedRange 3…42 (#54)`])
    }
  })

  it('a checkpoint without sourceEventSeqs', async () => {
    const e = appendixB()
    delete at(e, 55)['sourceEventSeqs']
    const r = await report(e)
    expect(of(r, 'INV-14')).toEqual(['INV-14@55'])
    expect(messagesOf(r, 'INV-14')).toEqual(['sourceEventSeqs [] must be exactly [startSeq, summarySeq, ...shadowedSeqs] = [51, 54, 3, 10, 15, 23, 28, 37, 42]'])
  })
})

describe('INV-13 / INV-14 on unreadable, non-adjacent and foreign-summary lines', () => {
  it('an unreadable user/message right after the summary is no checkpoint (no failure)', async () => {
    const e = appendixB()
    at(e, 55).data = {}
    const r = await report(e)
    expect(failuresOf(r, 'INV-13')).toEqual([])
    expect(of(r, 'INV-13')).toEqual(['INV-13@55'])
    expect(messagesOf(r, 'INV-13')).toEqual(['the event after compaction/summary #54 is user/message, not its checkpoint replacement'])
  })

  it('a tool/result replacement right after the summary is no checkpoint', async () => {
    const e = appendixB()
    const op = at(e, 55)['surfaceOp']
    copyInto(e, 55, 15)
    at(e, 55)['surfaceOp'] = op
    const r = await report(e)
    expect(of(r, 'INV-13')).toEqual(['INV-13@55'])
  })

  it('with FAULT-63 an unreadable compaction/end is skipped while awaiting the end (no failure)', async () => {
    const e = noCheckpoint()
    at(e, 56).data['compactionId'] = 7
    const r = await report(e, manifestWith(FAULT_63))
    expect(failuresOf(r, 'INV-13')).toEqual([])
    expect(of(r, 'INV-13')).toEqual([])
  })

  it('with FAULT-63 a summary-error carrying an error field is still no compaction/end', async () => {
    const e = noCheckpoint()
    copyInto(e, 56, 52)
    at(e, 56).data['error'] = { message: 'x' }
    const r = await report(e, manifestWith(FAULT_63))
    expect(of(r, 'INV-13')).toEqual(['INV-13@56'])
  })

  it('a tool/result replacement after a gap following the summary is not its replacement', async () => {
    const e = appendixB().filter((x) => x.seq !== 55)
    const op = at(e, 56)['surfaceOp'] ?? { op: 'replace', start: 3, end: 42 }
    copyInto(e, 56, 15)
    at(e, 56)['surfaceOp'] = op
    const r = await report(e)
    expect(of(r, 'INV-14')).toEqual([])
  })

  it('a one-line log holding a tool/result replacement (no previous line, no failure)', async () => {
    const e = appendixB()
    const one = [{ ...structuredClone(at(e, 15)), seq: 0 }]
    const r = await report(one)
    expect(failuresOf(r, 'INV-14')).toEqual([])
    expect(of(r, 'INV-14')).toEqual([])
  })

  it('a checkpoint after a summary of another compactionId is not correlated with the open bracket', async () => {
    const e = appendixB()
    at(e, 54).data['compactionId'] = 'cmp-x'
    source55(e)['compactionId'] = 'cmp-x'
    const r = await report(e)
    expect(of(r, 'INV-14')).toEqual([])
  })

  it('a system/message replacement (its message is the data itself) right after the summary (no failure)', async () => {
    const e = appendixB()
    const op = at(e, 55)['surfaceOp']
    copyInto(e, 55, 2)
    at(e, 55)['surfaceOp'] = op
    const r = await report(e)
    expect(failuresOf(r, 'INV-14')).toEqual([])
    expect(of(r, 'INV-14')).toEqual(['INV-14@55'])
    expect(messagesOf(r, 'INV-14')).toEqual([
      "the replacement after compaction/summary #54 is stored as system/message: the checkpoint is one user/message with source {kind:'plugin', plugin:'compact'} (§1.4.4)",
    ])
  })
})
