/**
 * The checker judges two rules with core code it shares with the engine: the lock's end-seed staleness rule
 * (`SessionState.lock`, §11.1/§11.3) and the pruner's head/marker/tail transform (`pruneContent`, §5.3). A
 * bug in that shared code would make engine and checker agree on a wrong answer, so these cases state the
 * right answer by hand — literal strings and seqs, never computed with core — and ask the checker to accept
 * exactly it and to flag near misses (off by one code point, a split surrogate pair) under the right id.
 */
import type { RunManifest } from '@compaction-sim/core'
import { describe, expect, it } from 'vitest'
import { checkLog } from '../../src/checker/run.ts'
import { appendixB, found, renumber, reportOf } from './support.ts'

type Events = ReturnType<typeof appendixB>
type Event = Events[number]

/** The seed dialect's prune marker (§5.1), written out: 2 newlines, 39 visible characters, 2 newlines = 43 code points. */
const MARKER = '\n\n[... middle of tool result omitted ...]\n\n'

/** `id@seq` strings of one invariant; the invariant must have been judged on every instance (a skip is no pass). */
async function violationsOf(id: string, events: Events, manifest?: RunManifest): Promise<string[]> {
  const result = await checkLog(events, manifest === undefined ? { dialect: 'seed' } : { dialect: 'seed', manifest })
  expect(reportOf(result).coverage.find((c) => c.id === id)).toMatchObject({ status: 'evaluated', skipped: 0 })
  return found(result).filter((v) => v.startsWith(`${id}@`))
}

describe('end-seed staleness (§11.1, §11.3) judged against hand-written seqs (INV-45)', () => {
  /** Appendix B up to the pressure bracket's start (seq 51), interrupted there: the bracket is an orphan. */
  function orphanAt51(): Events {
    return appendixB().slice(0, 52)
  }
  const turnEnd = (seq: number): Event => ({ seq, time: 1700000000265, type: 'turn/end', data: { turn: 3, reason: { kind: 'interrupted' } } })
  const endSeed = (seq: number): Event => ({ seq, time: 1700000000270, type: 'session/end-seed', data: {} })
  const manualStart = (seq: number, id: string): Event => ({ seq, time: 1700000000275, type: 'compaction/start', data: { compactionId: id, turn: null } })

  it('an orphan from before the end-seed (seq 51 < end-seed 53) is stale: a new start at 54 is allowed', async () => {
    const events = [...orphanAt51(), turnEnd(52), endSeed(53), manualStart(54, 'cmp-new')]
    expect(await violationsOf('INV-45', events)).toEqual([])
  })

  it('without the end-seed the orphan at 51 is live: the start at 53 is reported', async () => {
    const events = [...orphanAt51(), turnEnd(52), manualStart(53, 'cmp-new')]
    expect(await violationsOf('INV-45', events)).toEqual(['INV-45@53'])
    const r = reportOf(await checkLog(events, { dialect: 'seed' }))
    expect(r.violations.filter((v) => v.id === 'INV-45').map((v) => v.message))
      // The repair turn/end #52 without an end-seed: the message names the missing end-seed (§11.4, issue #21).
      .toEqual(['compaction/start while the lock is live: cmp-7f3a (#51) is unmatched in this lifecycle; a restore resumed the log at #52 without appending session/end-seed (§11.4), so no new lifecycle began'])
  })

  it('an orphan opened after the end-seed (54 > 53) is live in the new lifecycle: the start at 55 is reported', async () => {
    const events = [...orphanAt51(), turnEnd(52), endSeed(53), manualStart(54, 'cmp-a'), manualStart(55, 'cmp-b')]
    expect(await violationsOf('INV-45', events)).toEqual(['INV-45@55'])
  })

  it('two end-seeds: the orphans of both earlier lifecycles are stale (starts at 54 and 56 allowed)', async () => {
    const events = [...orphanAt51(), turnEnd(52), endSeed(53), manualStart(54, 'cmp-a'), endSeed(55), manualStart(56, 'cmp-b')]
    expect(await violationsOf('INV-45', events)).toEqual([])
  })

  it('a bracket that ended before the end-seed leaves the lock free, also across the end-seed', async () => {
    const events = renumber([...appendixB(), endSeed(67), manualStart(68, 'cmp-new')])
    expect(await violationsOf('INV-45', events)).toEqual([])
  })
})

describe('pruneContent (§5.3) judged against hand-written head/marker/tail (INV-22)', () => {
  /** Head 3 and tail 3 code points around the 43-code-point marker: 3 + 43 + 3 = 49 = thresholdChars (§5.1 budget). */
  const manifest: RunManifest = {
    scenario: 'hand-written-prune', compaction: {}, pruner: { thresholdChars: 49, headChars: 3, tailChars: 3 },
    routes: [{ provider: 'mock', model: 'mock-4k', contextWindow: 4000 }], faults: [],
  }
  /** The inner content array of the tool result at `seq` (Appendix B's seq 12 original and seq 15 rewrite). */
  function inner(events: Events, seq: number): unknown[] {
    const message = (events[seq] as Event).data['message'] as { content: Array<{ content: unknown[] }> }
    return (message.content[0] as { content: unknown[] }).content
  }
  /** Appendix B with `original` as the text blocks of seq 12's result and `rewritten` as those of its prune rewrite at 15. */
  function pruneLog(original: string[], rewritten: string[]): Events {
    const events = appendixB()
    const set = (seq: number, texts: string[]) => {
      const blocks = inner(events, seq)
      blocks.splice(0, blocks.length, ...texts.map((text) => ({ type: 'text', text })))
    }
    set(12, original)
    set(15, rewritten)
    return events
  }

  // 'ab😀c' + 50 × 'x' + 'd😀ef' = 4 + 50 + 4 = 58 code points > 49. The emoji is one code point, two UTF-16 units.
  const ONE_BLOCK = [`ab\u{1F600}c${'x'.repeat(50)}d\u{1F600}ef`]

  it('the correct rewrite: the first 3 code points, the marker, the last 3 — accepted', async () => {
    expect(await violationsOf('INV-22', pruneLog(ONE_BLOCK, [`ab\u{1F600}${MARKER}\u{1F600}ef`]), manifest)).toEqual([])
  })

  it('code-unit slicing (a lone high surrogate in the head, a lone low one in the tail) is reported at the rewrite', async () => {
    expect(await violationsOf('INV-22', pruneLog(ONE_BLOCK, [`ab\uD83D${MARKER}\uDE00ef`]), manifest)).toEqual(['INV-22@15'])
  })

  it('a head one code point short is reported', async () => {
    expect(await violationsOf('INV-22', pruneLog(ONE_BLOCK, [`ab${MARKER}\u{1F600}ef`]), manifest)).toEqual(['INV-22@15'])
  })

  it('a head one code point long is reported', async () => {
    expect(await violationsOf('INV-22', pruneLog(ONE_BLOCK, [`ab\u{1F600}c${MARKER}\u{1F600}ef`]), manifest)).toEqual(['INV-22@15'])
  })

  it('a tail one code point short is reported', async () => {
    expect(await violationsOf('INV-22', pruneLog(ONE_BLOCK, [`ab\u{1F600}${MARKER}ef`]), manifest)).toEqual(['INV-22@15'])
  })

  it('a tail one code point long is reported', async () => {
    expect(await violationsOf('INV-22', pruneLog(ONE_BLOCK, [`ab\u{1F600}${MARKER}d\u{1F600}ef`]), manifest)).toEqual(['INV-22@15'])
  })

  // Three blocks of 9 + 40 + 6 = 55 code points: the head ends inside the first, the middle block is wholly
  // removed (and dropped, not kept empty), the tail starts inside the last.
  const THREE_BLOCKS = [`ab\u{1F600}cdefgh`, 'x'.repeat(40), `ijk\u{1F600}ef`]

  it('across blocks: marker right after the head in the first block, middle block dropped, tail block cut — accepted', async () => {
    expect(await violationsOf('INV-22', pruneLog(THREE_BLOCKS, [`ab\u{1F600}${MARKER}`, `\u{1F600}ef`]), manifest)).toEqual([])
  })

  it('across blocks: the emptied middle block kept as an empty text block is reported', async () => {
    expect(await violationsOf('INV-22', pruneLog(THREE_BLOCKS, [`ab\u{1F600}${MARKER}`, '', `\u{1F600}ef`]), manifest)).toEqual(['INV-22@15'])
  })

  it('across blocks: head, marker and tail merged into one block is reported', async () => {
    expect(await violationsOf('INV-22', pruneLog(THREE_BLOCKS, [`ab\u{1F600}${MARKER}\u{1F600}ef`]), manifest)).toEqual(['INV-22@15'])
  })

  it('the messages name what is wrong with the rewrite', async () => {
    const messages = async (rewritten: string[]) => {
      const r = reportOf(await checkLog(pruneLog(ONE_BLOCK, rewritten), { dialect: 'seed', manifest }))
      return r.violations.filter((v) => v.id === 'INV-22').map((v) => v.message)
    }
    const prefix = 'the rewrite of #12 is not pruneContent of its projected content: '
    expect(await messages([`ab\uD83D${MARKER}\uDE00ef`])).toEqual([`${prefix}a lone UTF-16 surrogate (code-unit slicing)`])
    expect(await messages([`ab${MARKER}\u{1F600}ef`])).toEqual([`${prefix}the head, tail or block layout differs from pruneContent's`])
    expect(await messages([`ab\u{1F600}${MARKER}${MARKER}\u{1F600}ef`])).toEqual([
      `${prefix}measured text 92 code points exceeds thresholdChars 49; the marker appears 2 times (exactly once is required)`,
    ])
    expect(await messages([`ab\u{1F600}\u{1F600}ef`])).toEqual([`${prefix}the marker appears 0 times (exactly once is required)`])
  })

  it('a result of exactly 49 code points is within the threshold: pruning it at all is INV-23', async () => {
    const within = [`ab\u{1F600}c${'x'.repeat(41)}d\u{1F600}ef`] // 4 + 41 + 4 = 49
    expect(await violationsOf('INV-23', pruneLog(within, [`ab\u{1F600}${MARKER}\u{1F600}ef`]), manifest)).toEqual(['INV-23@14'])
    const r = reportOf(await checkLog(pruneLog(within, [`ab\u{1F600}${MARKER}\u{1F600}ef`]), { dialect: 'seed', manifest }))
    expect(r.violations.filter((v) => v.id === 'INV-23').map((v) => v.message)).toEqual(['prunes #12 whose measured text is 49 code points, within thresholdChars 49'])
  })

  it('one code point more (50) may be pruned: no INV-23', async () => {
    const over = [`ab\u{1F600}c${'x'.repeat(42)}d\u{1F600}ef`] // 4 + 42 + 4 = 50
    expect(await violationsOf('INV-23', pruneLog(over, [`ab\u{1F600}${MARKER}\u{1F600}ef`]), manifest)).toEqual([])
  })
})
