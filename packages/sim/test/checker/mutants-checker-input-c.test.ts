/**
 * The checker's input stage (`src/checker/input.ts`, lines 300–399) as `checkLog` shows it on in-memory events
 * (every element is judged as an event line): edits of Appendix B (#1 the step/start 1.1, #3 the first user
 * message, #10 the assistant message citing its chunks #6 … #9, #12 the tool/result citing #11, #30 the first
 * image/offload, #51 compaction/start, #54 the summary with one text block, #55 the checkpoint citing
 * [51, 54, 3, 10, 15, 23, 28, 37, 42]), and an appended event #67. Every expectation is written out by hand from
 * §1.1, §1.5.1, §12 (INV-02/03/04/14/16/30) and the module's contract. It pins:
 * - the nesting bound: an in-memory event nested deeper than 256 levels is malformed (INV-02), not folded;
 * - events that cannot be copied: a non-object (number, null, array) is "expected an event object, got …", an
 *   object holding a function is "not lossless JSON"; both are opaque INV-02 at the event's own seq, or at its
 *   position when it has no seq; a value that copies once but not twice is just as opaque;
 * - a valid event is used as given (a Proxy over a valid event is folded, never copied), and a non-LogError
 *   thrown while validating (a throwing getter) is an internal failure, never an INV-02;
 * - validation rounds: at most 8 repairs per event; an event needing 8 repairs is opaque, one needing 7 folds;
 * - a validation failure without a seq is reported at the event's position;
 * - INV-03: `surfaceOp` or `sourceEventSeqs` on a log-only type is removed and the event folded, with INV-30 also
 *   for `surfaceOp` on `compaction/*` and `image/offload`; a surface type without `surfaceOp` is opaque; an
 *   unrepairable payload failure is one INV-02 and opaque;
 * - INV-04 repair: the unique non-negative seqs below the event's own seq are kept in order (0 included), a
 *   non-array list is removed, an empty result is removed except on an `assistant/message` (kept as `[]`).
 */
import type { CheckResult } from '../../src/checker/run.ts'
import { describe, expect, it } from 'vitest'
import { checkLog } from '../../src/checker/run.ts'
import { at, editedAppendixB, reportOf, type AppendixEvent } from './support.ts'

type Events = AppendixEvent[]

/** Every violation of a report as `id@seq: message`, in report order. */
function lines(result: CheckResult): string[] {
  return reportOf(result).violations.map((v) => `${v.id}@${v.seq}: ${v.message}`)
}

/** Checks in-memory events (seed dialect, no manifest). */
const check = (events: readonly unknown[]): Promise<CheckResult> => checkLog(events, { dialect: 'seed' })

/** Appendix B with `extra` appended after #66 (at position 67). */
const withTail = (extra: unknown): unknown[] => [...editedAppendixB(), extra]

/** An ignorable foreign record #67 with `data` as given. */
const note = (data: Record<string, unknown>): Record<string, unknown> => ({ seq: 67, time: 1700000000340, type: 'x/note', ignorable: true, data })

const NOT_LOSSLESS = 'the event is not lossless JSON (it holds a value that cannot be copied: a function, symbol or class instance)'

describe('the nesting bound applies to in-memory events (INV-02)', () => {
  it('an ignorable record nesting 300 levels deep is malformed', async () => {
    let deep: Record<string, unknown> = {}
    for (let i = 0; i < 300; i++) deep = { a: deep }
    expect(lines(await check(withTail(note({ d: deep }))))).toEqual([
      "INV-02@67: the event nests deeper than 256 levels (beyond the checker's bound; judged malformed)",
    ])
  })
})

describe('an event that cannot be copied is opaque (INV-02)', () => {
  it('a number is no event object', async () => {
    expect(lines(await check(withTail(5)))).toEqual(['INV-02@67: expected an event object, got number'])
  })

  it('a string is no event object', async () => {
    expect(lines(await check(withTail('turn/start')))).toEqual(['INV-02@67: expected an event object, got string'])
  })

  it('null is no event object', async () => {
    expect(lines(await check(withTail(null)))).toEqual(['INV-02@67: expected an event object, got null'])
  })

  it('an array is no event object', async () => {
    expect(lines(await check(withTail([])))).toEqual(['INV-02@67: expected an event object, got an array'])
  })

  it('an object holding a function is not lossless JSON, reported at its own seq', async () => {
    expect(lines(await check(withTail(note({ f: () => 1 }))))).toEqual([`INV-02@67: ${NOT_LOSSLESS}`])
  })

  it('without a seq it is reported at its position 67', async () => {
    const noSeq = note({ f: () => 1 })
    delete noSeq['seq']
    expect(lines(await check(withTail(noSeq)))).toEqual([`INV-02@67: ${NOT_LOSSLESS}`])
  })

  /** #67 with an unexpected key `extra` whose value is copyable only on every other read, starting with `firstCopyable`. */
  function flaky(firstCopyable: boolean): Record<string, unknown> {
    const event = note({})
    let reads = 0
    Object.defineProperty(event, 'extra', {
      enumerable: true,
      get: () => ((reads++ % 2 === 0) === firstCopyable ? {} : () => 1),
    })
    return event
  }

  it('a value whose first copy fails is opaque even if a later copy succeeds', async () => {
    // Reads: the nesting bound (copyable), the folded copy (not), the probe copy (copyable).
    expect(lines(await check(withTail(flaky(true))))).toEqual([`INV-02@67: ${NOT_LOSSLESS}`])
  })

  it('a value whose second copy fails is opaque even if the first copy succeeded', async () => {
    // Reads: the nesting bound (not copyable), the folded copy (copyable), the probe copy (not).
    const r = reportOf(await check(withTail(flaky(false))))
    expect(r.internalErrors).toEqual([])
    expect(lines(r)).toEqual([`INV-02@67: ${NOT_LOSSLESS}`])
  })
})

describe('a valid event is used as given; only LogErrors are violations', () => {
  it('a Proxy over the valid turn/start #0 is folded without copying', async () => {
    const r = reportOf(await check(editedAppendixB((e) => { (e as unknown[])[0] = new Proxy(e[0] as object, {}) })))
    expect(r.violations).toEqual([])
    expect(r.internalErrors).toEqual([])
    expect(r.ok).toBe(true)
  })

  it('a getter that throws while #0 is validated is an internal failure, not INV-02', async () => {
    // `time` of #0 reads 1700000000005 once (the nesting bound), then throws (validation, and any copy).
    const r = reportOf(await check(editedAppendixB((e) => {
      let reads = 0
      Object.defineProperty(e[0], 'time', {
        enumerable: true,
        get: () => { if (reads++ === 0) return 1700000000005; throw new Error('boom') },
      })
    })))
    expect(r.internalErrors).toEqual([{ id: 'model', message: 'Error: boom' }])
    expect(r.violations).toEqual([])
    expect(r.events).toBe(0)
  })
})

describe('validation rounds: at most 8 repairs per event', () => {
  const bogus = (n: number): Array<{ type: string }> => Array.from({ length: n }, () => ({ type: 'bogus' }))
  const blockLine = (i: number): string => `INV-16@54: expected 'text', got the string "bogus" (field data.summary[${i}].type)`

  it('a summary with 7 non-text blocks is repaired 7 times and folded', async () => {
    const r = await check(editedAppendixB((e) => { at(e, 54).data['summary'] = bogus(7) }))
    expect(lines(r)).toEqual([
      ...[0, 1, 2, 3, 4, 5, 6].map(blockLine),
      'INV-16@54: summary holds a block that is not text',
      'INV-18@55: the framed blocks differ from compaction/summary.summary of #54',
    ])
  })

  it('a summary with 8 non-text blocks uses up the 8 rounds and is opaque', async () => {
    const r = await check(editedAppendixB((e) => { at(e, 54).data['summary'] = bogus(8) }))
    expect(lines(r)).toEqual([
      ...[0, 1, 2, 3, 4, 5, 6, 7].map(blockLine),
      'INV-15@55: a checkpoint lands without its compaction/summary right before it',
      'INV-12@56: compaction/end without error, but the bracket (#51) has 0 summaries (exactly one is required)',
    ])
  })

  it('a summary with 9 non-text blocks reports 8 of them', async () => {
    const r = await check(editedAppendixB((e) => { at(e, 54).data['summary'] = bogus(9) }))
    expect(lines(r).filter((l) => l.startsWith('INV-16@54'))).toEqual([0, 1, 2, 3, 4, 5, 6, 7].map(blockLine))
  })

  it('a validation failure of an event without a seq is reported at its position 67', async () => {
    const r = await check(withTail({ seq: 'x', time: 1700000000340, type: 'x/note', ignorable: true, data: {} }))
    expect(lines(r)).toEqual(['INV-02@67: expected a non-negative integer, got the string "x" (field seq)'])
  })

  it('an unrepairable payload failure (#3 without content) is one INV-02 and #3 is opaque', async () => {
    const r = await check(editedAppendixB((e) => { delete at(e, 3).data['content'] }))
    expect(lines(r)).toEqual([
      'INV-02@3: expected an array, got nothing (field data.content)',
      'INV-40@52: the recorded span 3…42 is not on the surface: start 3 is not a current node (seq 3 is not a surface node)',
      'INV-16@54: shadowedSeqs name [3], which are not current surface nodes',
      'INV-05@55: replacement 3…42: start 3 is not a current node (seq 3 is not a surface node)',
      'INV-27@55: the span starts at #3 (position -1), not at position 1, the first node after the system head',
    ])
  })
})

describe('INV-03: surface metadata on a log-only type is removed and the event folded', () => {
  it('surfaceOp on the step/start #1: INV-03 only, the step still opens', async () => {
    expect(lines(await check(editedAppendixB((e) => { at(e, 1)['surfaceOp'] = 'append' })))).toEqual([
      'INV-03@1: step/start is log-only and must not carry surfaceOp (INV-03) (field surfaceOp)',
    ])
  })

  it('sourceEventSeqs on the step/start #1: INV-03 only', async () => {
    expect(lines(await check(editedAppendixB((e) => { at(e, 1)['sourceEventSeqs'] = [0] })))).toEqual([
      'INV-03@1: step/start is log-only and must not carry sourceEventSeqs (INV-03) (field sourceEventSeqs)',
    ])
  })

  it('both on the step/start #1: two INV-03, one per field', async () => {
    expect(lines(await check(editedAppendixB((e) => { at(e, 1)['surfaceOp'] = 'append'; at(e, 1)['sourceEventSeqs'] = [0] })))).toEqual([
      'INV-03@1: step/start is log-only and must not carry surfaceOp (INV-03) (field surfaceOp)',
      'INV-03@1: step/start is log-only and must not carry sourceEventSeqs (INV-03) (field sourceEventSeqs)',
    ])
  })

  it('surfaceOp on compaction/start #51 is also a compaction record on the surface (INV-30)', async () => {
    const reason = 'compaction/start is log-only and must not carry surfaceOp (INV-03) (field surfaceOp)'
    expect(lines(await check(editedAppendixB((e) => { at(e, 51)['surfaceOp'] = 'append' })))).toEqual([`INV-03@51: ${reason}`, `INV-30@51: ${reason}`])
  })

  it('sourceEventSeqs on compaction/start #51 is INV-03 only', async () => {
    expect(lines(await check(editedAppendixB((e) => { at(e, 51)['sourceEventSeqs'] = [0] })))).toEqual([
      'INV-03@51: compaction/start is log-only and must not carry sourceEventSeqs (INV-03) (field sourceEventSeqs)',
    ])
  })

  it('surfaceOp on image/offload #30 is also INV-30', async () => {
    const reason = 'image/offload is log-only and must not carry surfaceOp (INV-03) (field surfaceOp)'
    expect(lines(await check(editedAppendixB((e) => { at(e, 30)['surfaceOp'] = 'append' })))).toEqual([`INV-03@30: ${reason}`, `INV-30@30: ${reason}`])
  })

  it('a surface type without surfaceOp (#3) is one INV-03 and opaque', async () => {
    expect(lines(await check(editedAppendixB((e) => { delete at(e, 3)['surfaceOp'] })))).toEqual([
      'INV-03@3: user/message is surface-eligible and requires surfaceOp (INV-03) (field surfaceOp)',
      'INV-40@52: the recorded span 3…42 is not on the surface: start 3 is not a current node (seq 3 is not a surface node)',
      'INV-16@54: shadowedSeqs name [3], which are not current surface nodes',
      'INV-05@55: replacement 3…42: start 3 is not a current node (seq 3 is not a surface node)',
      'INV-27@55: the span starts at #3 (position -1), not at position 1, the first node after the system head',
    ])
  })
})

describe('INV-04: the provenance repair keeps the well-formed part of the list', () => {
  const PROV_55 = [51, 54, 3, 10, 15, 23, 28, 37, 42]
  const setProv = (seq: number, value: unknown) => (e: Events): void => { at(e, seq)['sourceEventSeqs'] = value }

  it('a duplicate in the checkpoint #55 is dropped; the rest still covers its span', async () => {
    expect(lines(await check(editedAppendixB(setProv(55, [...PROV_55, 42]))))).toEqual([
      'INV-04@55: duplicate seq 42 in provenance (INV-04) (field sourceEventSeqs[9])',
    ])
  })

  it('seq 0 is kept (in order) when a duplicate is dropped', async () => {
    expect(lines(await check(editedAppendixB(setProv(55, [0, ...PROV_55, 42]))))).toEqual([
      'INV-04@55: duplicate seq 42 in provenance (INV-04) (field sourceEventSeqs[10])',
      'INV-14@55: sourceEventSeqs [0, 51, 54, 3, 10, 15, 23, 28, 37, 42] must be exactly [startSeq, summarySeq, ...shadowedSeqs] = [51, 54, 3, 10, 15, 23, 28, 37, 42]',
    ])
  })

  it('a negative seq in #55 is dropped', async () => {
    expect(lines(await check(editedAppendixB(setProv(55, [51, 54, -1, 3, 10, 15, 23, 28, 37, 42]))))).toEqual([
      'INV-04@55: expected a non-negative integer seq, got the number -1 (field sourceEventSeqs[2])',
    ])
  })

  it('a list that is no array (#10) is removed: the message is then judged without provenance', async () => {
    expect(lines(await check(editedAppendixB(setProv(10, 5))))).toEqual([
      'INV-04@10: expected an array of seqs, got the number 5 (field sourceEventSeqs)',
    ])
  })

  it('an assistant/message (#10) whose only seq is in the future keeps an empty list, judged against its blocks', async () => {
    expect(lines(await check(editedAppendixB(setProv(10, [99]))))).toEqual([
      "INV-04@10: provenance must cite earlier events: 99 is not < the event's own seq 10 (INV-04) (field sourceEventSeqs[0])",
      'INV-04@10: an empty provenance list means a known empty stream, but the message has 1 content block',
    ])
  })

  it('an empty list on the tool/result #12 is removed', async () => {
    expect(lines(await check(editedAppendixB(setProv(12, []))))).toEqual([
      'INV-04@12: provenance may be empty only on assistant/message; omit it instead (§1.5.1, INV-04) (field sourceEventSeqs)',
    ])
  })
})
