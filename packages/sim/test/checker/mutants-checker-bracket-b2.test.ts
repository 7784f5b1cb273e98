/**
 * INV-19 (`src/checker/bracket.ts`) on small hand edits of Appendix B (bracket cmp-7f3a: start #51, summary
 * #54, checkpoint #55, end #56; the tool result #49 and step/end #50 right before the start; the pruned copy
 * #15 of #12; the final turn/end #66). Every expectation (id@seq and message) is written out by hand from
 * §11.4 and §13.4/§13.5. It pins:
 * - the crash-repair closers (§11.4): an interrupted turn/end and an appended TOOL_OUTCOME_UNKNOWN result,
 *   followed by compaction/start or compaction/prune; not a completed turn/end, a plain result, a pruned
 *   (replaced) copy of an outcome-unknown result, another event type carrying such an error, a duplicate
 *   line, or the first line of a log;
 * - the open bracket at the end of the log, excused only by a manifest crash at or after its start.
 */
import type { RunManifest } from '@compaction-sim/core'
import { describe, expect, it } from 'vitest'
import { checkLog, type CheckReport } from '../../src/checker/run.ts'
import { appendixB, at, renumber, reportOf } from './support.ts'

type Events = ReturnType<typeof appendixB>
type Ev = Events[number]


async function report(events: readonly unknown[], manifest?: RunManifest): Promise<CheckReport> {
  return reportOf(await checkLog(events, manifest === undefined ? { dialect: 'seed' } : { dialect: 'seed', manifest }))
}
/** `id@seq message` of the INV-19 violations. */
const inv19 = (r: CheckReport): string[] => r.violations.filter((v) => v.id === 'INV-19').map((v) => `${v.id}@${v.seq} ${v.message}`)
const failures = (r: CheckReport): unknown[] => r.internalErrors.filter((f) => f.id === 'INV-19')

const follows = (type: string, seq: number, closer: number): string =>
  `INV-19@${seq} ${type} follows crash-repair closer #${closer}: repair closes turns, steps and tool calls, never a bracket (§11.4)`
const stillOpen = (id: string, seq: number): string =>
  `INV-19@${seq} bracket ${id} (#${seq}) is still open at the end of the log and no crash or close fault explains it`

const lateStart = (seq: number): Ev => ({ seq, time: 1700000000340, type: 'compaction/start', data: { compactionId: 'cmp-late', turn: 3 } } as Ev)
const latePrune = (seq: number): Ev => ({
  seq, time: 1700000000340, type: 'compaction/prune', data: { shadowedRange: { start: 49, end: 49 }, shadowedSeqs: [49], shadowedTokenCount: 500 },
} as Ev)
const interruptedEnd = (e: Events): void => { at(e, 66).data['reason'] = { kind: 'interrupted' } }
const unknownOutcome = { name: 'ToolOutcomeUnknown', code: 'TOOL_OUTCOME_UNKNOWN' }

/** Appendix B without step/end #50, so the tool result #49 is right before compaction/start (now #50). */
function resultBeforeStart(edit: (result: Ev) => void = () => undefined): Events {
  const e = appendixB()
  edit(at(e, 49))
  e.splice(e.indexOf(at(e, 50)), 1)
  return renumber(e)
}

describe('INV-19: compaction events right after a crash-repair closer', () => {
  it('compaction/start after an interrupted turn/end (and left open: the end rule too)', async () => {
    const e = appendixB()
    interruptedEnd(e)
    e.push(lateStart(67))
    expect(inv19(await report(e))).toEqual([follows('compaction/start', 67, 66), stillOpen('cmp-late', 67)])
  })

  it('compaction/start after a completed turn/end: only the end rule', async () => {
    const e = appendixB()
    e.push(lateStart(67))
    expect(inv19(await report(e))).toEqual([stillOpen('cmp-late', 67)])
  })

  it('compaction/prune after an interrupted turn/end', async () => {
    const e = appendixB()
    interruptedEnd(e)
    e.push(latePrune(67))
    expect(inv19(await report(e))).toEqual([follows('compaction/prune', 67, 66)])
  })

  it('a duplicate line of the interrupted turn/end right before is no closer of its own', async () => {
    const e = appendixB()
    interruptedEnd(e)
    e.push(structuredClone(at(e, 66)), lateStart(67))
    const r = await report(e)
    expect(inv19(r)).toEqual([stillOpen('cmp-late', 67)])
  })

  it('compaction/start right after an appended TOOL_OUTCOME_UNKNOWN result', async () => {
    const r = await report(resultBeforeStart((x) => { x.data['error'] = unknownOutcome }))
    expect(inv19(r)).toEqual([follows('compaction/start', 50, 49)])
  })

  it('compaction/start right after a plain tool result: none', async () => {
    const r = await report(resultBeforeStart())
    expect(inv19(r)).toEqual([])
    expect(failures(r)).toEqual([])
  })

  it('only a tool/result is an outcome-unknown closer: a step/end #50 carrying an extra TOOL_OUTCOME_UNKNOWN error is none', async () => {
    const e = appendixB()
    at(e, 50).data['error'] = unknownOutcome
    const r = await report(e)
    expect(inv19(r)).toEqual([])
  })

  it('a pruned copy (replace of #12) of an outcome-unknown result is no closer', async () => {
    const e = appendixB()
    at(e, 12).data['error'] = unknownOutcome
    at(e, 15).data['error'] = unknownOutcome
    e.splice(e.indexOf(at(e, 15)) + 1, 0, { seq: 0, time: 1700000000081, type: 'compaction/start', data: { compactionId: 'cmp-early', turn: 1 } } as Ev)
    renumber(e)
    // the inserted start is #16; its bracket is superseded by cmp-7f3a (#52), which ends at #57
    expect(inv19(await report(e))).toEqual([])
  })

  it('a compaction event as the first line: no closer before it, no crash', async () => {
    const r = await report([{ seq: 0, time: 1700000000000, type: 'compaction/start', data: { compactionId: 'cmp-first', turn: 1 } }])
    expect(failures(r)).toEqual([])
    expect(inv19(r)).toEqual([stillOpen('cmp-first', 0)])
  })
})

describe('INV-19: a bracket left open at the end of the log', () => {
  /** Appendix B cut after the checkpoint #55: cmp-7f3a (#51) never ends. */
  const cut = (): Events => appendixB().filter((x) => x.seq <= 55)
  const manifest = (afterSeq: number): RunManifest => ({
    scenario: 'open-bracket', compaction: {}, pruner: {},
    routes: [{ provider: 'mock', model: 'mock-4k', contextWindow: 4000 }], faults: [], crashes: [{ afterSeq }] as NonNullable<RunManifest['crashes']>,
  })

  it('without a manifest: reported at the start', async () => {
    expect(inv19(await report(cut()))).toEqual([stillOpen('cmp-7f3a', 51)])
  })

  it('a crash right after the start (#51) explains it', async () => {
    expect(inv19(await report(cut(), manifest(51)))).toEqual([])
  })

  it('a crash inside the bracket (#53) explains it', async () => {
    expect(inv19(await report(cut(), manifest(53)))).toEqual([])
  })

  it('a crash before the bracket (#40) does not', async () => {
    expect(inv19(await report(cut(), manifest(40)))).toEqual([stillOpen('cmp-7f3a', 51)])
  })
})
