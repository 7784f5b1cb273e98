/**
 * INV-40, summary-error placement (`src/checker/offload.ts`, lines 270–330, §7.3/§7.4, §12.6), on small hand
 * edits of Appendix B, whose one bracket is `compaction/start` #51 (cmp-7f3a), `compaction/summary-error` #52
 * (IMAGE_OFFLOAD_REQUIRED, shadowedRange 3…42, shadowedSeqs [3, 10, 15, 23, 28, 37, 42]), `image/offload`
 * #53, `compaction/summary` #54 (the same span), the checkpoint #55 and `compaction/end` #56. The surface at
 * #52 is #2, #3, #10, #15, #23, #28, #37, #42, #47, #49 (positions 0 … 9). Every expectation (`id@seq:
 * message`) is written out by hand. It pins:
 * - the recorded span of a summary-error: shadowedRange ends against the first / last of shadowedSeqs (each
 *   end alone, and an empty list), a span not on the surface (reversed), shadowedSeqs that are not the span's nodes;
 * - the bracket's entry span: a second attempt naming another span is reported, one naming the same is not,
 *   and the summary is compared with the first attempt's span only within the same bracket;
 * - the next bracket event after a summary-error: an offload for another code, compaction/end without error
 *   (with error accepted), any other bracket event, and that session/end-seed clears the pending error;
 * - the placement: a summary-error outside any bracket, and after the bracket's summary.
 */
import { describe, expect, it } from 'vitest'
import { appendixB, at, checkedReport, editedAppendixB, foreign, renumber, violationLines, type AppendixEvent } from './support.ts'

const FULL = [3, 10, 15, 23, 28, 37, 42]

/** The INV-40 lines of a log. */
async function inv40(events: readonly AppendixEvent[]): Promise<string[]> {
  return violationLines(await checkedReport(events), 'INV-40')
}

/** Sets the recorded span (shadowedRange start…end, shadowedSeqs) of `e`. */
function setSpan(e: AppendixEvent, start: number, end: number, seqs: number[]): void {
  e.data['shadowedRange'] = { start, end }
  e.data['shadowedSeqs'] = seqs
}

/** Appendix B with copies of `from` (in order) inserted right after the event at `after`, renumbered. */
function withCopies(after: number, from: readonly number[], edit: (inserted: AppendixEvent[]) => void = () => undefined): AppendixEvent[] {
  const e = appendixB()
  const copies = from.map((s) => structuredClone(at(e, s)))
  edit(copies)
  e.splice(e.findIndex((x) => x.seq === after) + 1, 0, ...copies)
  return renumber(e)
}

describe('INV-40 on Appendix B itself', () => {
  it('reports nothing', async () => {
    expect(await inv40(appendixB())).toEqual([])
  })
})

describe('INV-40: the recorded span of a summary-error', () => {
  it('a shadowedRange start other than the first of shadowedSeqs is reported, and the span is not judged further', async () => {
    const e = editedAppendixB((x) => setSpan(at(x, 52), 10, 42, FULL))
    expect(await inv40(e)).toEqual([
      'INV-40@52: shadowedRange 10…42 does not match the first and last of shadowedSeqs [3, 10, 15, 23, 28, 37, 42]',
    ])
  })

  it('a shadowedRange end other than the last of shadowedSeqs is reported', async () => {
    const e = editedAppendixB((x) => setSpan(at(x, 52), 3, 37, FULL))
    expect(await inv40(e)).toEqual([
      'INV-40@52: shadowedRange 3…37 does not match the first and last of shadowedSeqs [3, 10, 15, 23, 28, 37, 42]',
    ])
  })

  it('an empty shadowedSeqs matches no shadowedRange', async () => {
    const e = editedAppendixB((x) => setSpan(at(x, 52), 3, 42, []))
    expect(await inv40(e)).toEqual(['INV-40@52: shadowedRange 3…42 does not match the first and last of shadowedSeqs []'])
  })

  it('a reversed span is not on the surface (and the summary then differs from that entry span)', async () => {
    const e = editedAppendixB((x) => setSpan(at(x, 52), 42, 3, [42, 3]))
    expect(await inv40(e)).toEqual([
      'INV-40@52: the recorded span 42…3 is not on the surface: the span is reversed: node 42 is at position 7, after node 3 at position 1',
      'INV-40@54: the summary names shadowedSeqs [3, 10, 15, 23, 28, 37, 42], but summary-error #52 of the same bracket named [42, 3]: every attempt summarises the entry span (§7.3)',
    ])
  })

  it('shadowedSeqs that are not the nodes of the span are reported (and the summary differs from them)', async () => {
    const e = editedAppendixB((x) => setSpan(at(x, 52), 3, 42, [3, 42]))
    expect(await inv40(e)).toEqual([
      'INV-40@52: shadowedSeqs [3, 42] are not the nodes of the span 3…42 ([3, 10, 15, 23, 28, 37, 42])',
      'INV-40@54: the summary names shadowedSeqs [3, 10, 15, 23, 28, 37, 42], but summary-error #52 of the same bracket named [3, 42]: every attempt summarises the entry span (§7.3)',
    ])
  })
})

describe('INV-40: every attempt names the entry span (§7.3)', () => {
  // A second attempt: a copy of summary-error #52 and of offload #53 inserted after #53 (new #54, #55; the
  // summary is then #56, the checkpoint #57, the end #58).
  it('a second summary-error naming another span is reported against the first; the summary matching the first is not', async () => {
    const e = withCopies(53, [52, 53], ([se]) => setSpan(se as AppendixEvent, 3, 37, [3, 10, 15, 23, 28, 37]))
    expect(at(e, 54).type).toBe('compaction/summary-error')
    expect(await inv40(e)).toEqual([
      'INV-40@54: names shadowedSeqs [3, 10, 15, 23, 28, 37], but summary-error #52 of the same bracket named [3, 10, 15, 23, 28, 37, 42]: every attempt summarises the entry span (§7.3)',
    ])
  })

  it('a second summary-error naming the same span is not reported', async () => {
    const e = withCopies(53, [52, 53])
    expect(at(e, 54).type).toBe('compaction/summary-error')
    expect(at(e, 56).type).toBe('compaction/summary')
    expect(await inv40(e)).toEqual([])
  })

  it('a summary naming another span than the summary-error of its bracket is reported', async () => {
    const e = editedAppendixB((x) => setSpan(at(x, 54), 3, 37, [3, 10, 15, 23, 28, 37]))
    expect(await inv40(e)).toEqual([
      'INV-40@54: the summary names shadowedSeqs [3, 10, 15, 23, 28, 37], but summary-error #52 of the same bracket named [3, 10, 15, 23, 28, 37, 42]: every attempt summarises the entry span (§7.3)',
    ])
  })

  it('a summary of another compactionId is not compared with the open bracket\'s entry span', async () => {
    const e = editedAppendixB((x) => {
      setSpan(at(x, 54), 3, 37, [3, 10, 15, 23, 28, 37])
      at(x, 54).data['compactionId'] = 'cmp-9c1d'
    })
    expect(await inv40(e)).toEqual([])
  })
})

describe('INV-40: the next bracket event after a summary-error (§7.4)', () => {
  it('an image/offload after a summary-error of another code is reported', async () => {
    const e = editedAppendixB((x) => { (at(x, 52).data['failure'] as Record<string, unknown>)['code'] = 'RATE_LIMITED' })
    expect(await inv40(e)).toEqual(['INV-40@53: image/offload after summary-error #52 whose code is RATE_LIMITED'])
  })

  it('compaction/end without error right after the summary-error is reported', async () => {
    const e = editedAppendixB((x) => { for (const s of [53, 54, 55]) foreign(at(x, s)) })
    expect(await inv40(e)).toEqual(['INV-40@56: compaction/end without error right after summary-error #52'])
  })

  it('compaction/end with error right after the summary-error is not reported', async () => {
    const e = editedAppendixB((x) => {
      for (const s of [53, 54, 55]) foreign(at(x, s))
      at(x, 56).data['error'] = 'summary request failed'
    })
    expect(await inv40(e)).toEqual([])
  })

  it('a compaction/summary right after the summary-error is reported as the wrong next event', async () => {
    const e = editedAppendixB((x) => foreign(at(x, 53)))
    expect(await inv40(e)).toEqual([
      'INV-40@54: compaction/summary follows summary-error #52; the next bracket event must be image/offload or compaction/end with error',
    ])
  })

  /** Appendix B up to summary-error #52, then `next` at #53 and a new compaction/start (cmp-9c1d) at #54. */
  const cutAfter52 = (next: AppendixEvent): AppendixEvent[] => {
    const e = appendixB().filter((x) => x.seq <= 52)
    const start = structuredClone(at(e, 51))
    start.seq = 54
    start.time = 1700000000275
    start.data['compactionId'] = 'cmp-9c1d'
    return [...e, next, start]
  }

  it('session/end-seed clears the pending summary-error: neither it nor the next compaction/start is reported', async () => {
    const e = cutAfter52({ seq: 53, time: 1700000000270, type: 'session/end-seed', data: {} })
    expect(await inv40(e)).toEqual([])
  })

  it('without the end-seed (an ignorable record instead) the next compaction/start is reported', async () => {
    const e = cutAfter52({ seq: 53, time: 1700000000270, type: 'x/note', data: {}, ignorable: true })
    expect(await inv40(e)).toEqual([
      'INV-40@54: compaction/start follows summary-error #52; the next bracket event must be image/offload or compaction/end with error',
    ])
  })
})

describe('INV-40: where a summary-error may occur', () => {
  it('a summary-error without an open bracket is reported', async () => {
    const e = editedAppendixB((x) => foreign(at(x, 51)))
    expect(await inv40(e)).toEqual(['INV-40@52: compaction/summary-error outside its open bracket'])
  })

  it('a summary-error naming another compactionId than the open bracket\'s is reported as outside it', async () => {
    const e = editedAppendixB((x) => { at(x, 52).data['compactionId'] = 'cmp-9c1d' })
    expect(await inv40(e)).toEqual(['INV-40@52: compaction/summary-error outside its open bracket'])
  })

  it('a summary-error after the bracket\'s summary is reported (and the end without error after it)', async () => {
    // A copy of #52 inserted after summary #54: new #55; the checkpoint is then #56, the end #57.
    const e = withCopies(54, [52])
    expect(at(e, 55).type).toBe('compaction/summary-error')
    expect(await inv40(e)).toEqual([
      'INV-40@55: compaction/summary-error after the bracket\'s summary #54',
      'INV-40@57: compaction/end without error right after summary-error #55',
    ])
  })
})
