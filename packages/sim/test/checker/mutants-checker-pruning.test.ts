/**
 * The §12.3 pruning checks (`src/checker/pruning.ts`, INV-20 … INV-24) on small edits of Appendix B, whose
 * only prune is the pair #14 (`compaction/prune` of node #12, price 3,012) / #15 (its replacement), in the
 * pre-step window opened by `step/end` #13. Every expectation is written out by hand from §5.3/§5.4 and
 * §12.3. It pins:
 * - INV-20: the end-of-log rule (a trailing prune is reported unless it is torn-final), each field of the
 *   replacement's shape (type, `surfaceOp` start/end, `sourceEventSeqs` present, one long, naming s), the
 *   `shadowedRange` end, that an empty `shadowedSeqs` is judged only at the following event, and that a
 *   duplicate or opaque line after the prune is reported without the check failing;
 * - INV-21: a prune of a non-surface node (message text), of the surface's first node (position 0);
 * - INV-22: multi-node replacements and replacements of non-tool-result nodes or with a non-tool-result
 *   message are not judged; a rewrite of a node within the threshold is INV-23's, not INV-22's; the
 *   diagnosis names lost non-text blocks / offload placeholders, counts markers and lone surrogates in text
 *   blocks only, and finds a lone surrogate in any text block;
 * - INV-23: prunes of nodes without a tool-result block (null projection, text, unknown block with content);
 * - INV-24: the no-turn message, and the rc.8 overflow exception (bracket opened before the overflow window
 *   only, never for a pre-step window, no window, or the seed dialect).
 */
import type { Dialect, RunManifest } from '@compaction-sim/core'
import { describe, expect, it } from 'vitest'
import { checkLog, type CheckReport } from '../../src/checker/run.ts'
import { appendixB, at, foreign, renumber, reportOf } from './support.ts'

type Events = ReturnType<typeof appendixB>
type Ev = Events[number]

/** The seed dialect's prune marker (§5.1), written out: 43 code points. */
const MARKER = '\n\n[... middle of tool result omitted ...]\n\n'


async function report(events: readonly unknown[], dialect: Dialect = 'seed', manifest?: RunManifest): Promise<CheckReport> {
  return reportOf(await checkLog(events, manifest === undefined ? { dialect } : { dialect, manifest }))
}

/** `id@seq` of the violations of one id. */
const of = (r: CheckReport, id: string): string[] => r.violations.filter((v) => v.id === id).map((v) => `${v.id}@${v.seq}`)
/** The messages of the violations of one id. */
const messagesOf = (r: CheckReport, id: string): string[] => r.violations.filter((v) => v.id === id).map((v) => v.message)
/** The internal failures of one check (a hook that threw). */
const failuresOf = (r: CheckReport, id: string): unknown[] => r.internalErrors.filter((f) => f.id === id)

/** The data of the tool/result at `seq`, and its tool-result block. */
function resultBlock(events: Events, seq: number): Record<string, unknown> {
  const message = at(events, seq).data['message'] as { content: Array<Record<string, unknown>> }
  return message.content[0] as Record<string, unknown>
}

/** Sets the inner content of the tool result at `seq`. */
function setInner(events: Events, seq: number, blocks: unknown[]): void {
  resultBlock(events, seq)['content'] = blocks
}

const prune = (seq: number, node: number, count: number): Ev => ({
  seq, time: 1700000000000 + seq * 5, type: 'compaction/prune',
  data: { shadowedRange: { start: node, end: node }, shadowedSeqs: [node], shadowedTokenCount: count },
})

describe('INV-20 at the end of the log', () => {
  const upTo14 = (): Events => appendixB().filter((e) => e.seq <= 14)

  it('a log ending right after compaction/prune #14 is reported at 14', async () => {
    const r = await report(upTo14())
    expect(of(r, 'INV-20')).toEqual(['INV-20@14'])
    expect(messagesOf(r, 'INV-20')).toEqual(['the log ends right after a compaction/prune: its replacement is missing'])
  })

  it('with a manifest crash right after 14 the prune is torn-final: exempt', async () => {
    const manifest: RunManifest = {
      scenario: 'torn-prune', compaction: {}, pruner: {},
      routes: [{ provider: 'mock', model: 'mock-4k', contextWindow: 4000 }], faults: [], crashes: [{ afterSeq: 14 }] as NonNullable<RunManifest['crashes']>,
    }
    expect(of(await report(upTo14(), 'seed', manifest), 'INV-20')).toEqual([])
  })

  it('the complete Appendix B has no INV-20', async () => {
    expect(of(await report(appendixB()), 'INV-20')).toEqual([])
  })
})

describe('INV-20: the event after the prune must be the replacement of exactly s citing [s]', () => {
  it('a step/start instead of the replacement (#15 dropped): reported at 15, naming the type', async () => {
    const events = renumber(appendixB().filter((e) => e.seq !== 15))
    const r = await report(events)
    expect(of(r, 'INV-20')).toEqual(['INV-20@15'])
    expect(messagesOf(r, 'INV-20')).toEqual(['the event after compaction/prune #14 is step/start, not the tool/result replacement of node 12 citing [12]'])
    expect(failuresOf(r, 'INV-20')).toEqual([])
  })

  it('a duplicate of #14 right after it: the prune is reported at the copy, and no check fails', async () => {
    const e = appendixB()
    const i = e.findIndex((x) => x.seq === 14)
    e.splice(i + 1, 0, structuredClone(e[i]!)) // line 15 holds seq 14 again; #15 follows it
    const r = await report(e)
    expect(r.violations.map((v) => `${v.id}@${v.seq}: ${v.message}`)).toEqual([
      'INV-20@14: the event after compaction/prune #14 is compaction/prune, not the tool/result replacement of node 12 citing [12]',
      'INV-01@15: event line 15 holds seq 14 (a duplicate or out-of-order seq); the k-th event must hold seq k',
    ])
    expect(r.internalErrors).toEqual([])
  })

  it('an opaque #15 (its message is a number, INV-02): reported as an event after the prune, and no check fails', async () => {
    const e = appendixB()
    at(e, 15).data['message'] = 5
    const r = await report(e)
    expect(messagesOf(r, 'INV-20')).toEqual([
      'the event after compaction/prune #14 is tool/result, not the tool/result replacement of node 12 citing [12]',
    ])
    expect(of(r, 'INV-20')).toEqual(['INV-20@15'])
    expect(r.internalErrors).toEqual([])
  })

  it('a tool/result append: reported without a "replacing" part', async () => {
    const events = appendixB()
    at(events, 15)['surfaceOp'] = 'append'
    const r = await report(events)
    expect(messagesOf(r, 'INV-20')).toEqual(['the event after compaction/prune #14 is tool/result, not the tool/result replacement of node 12 citing [12]'])
  })

  it('a user/message replacing {12, 12} citing [12] is not a tool/result replacement', async () => {
    const events = appendixB()
    const e15 = at(events, 15)
    e15.type = 'user/message'
    e15.data = { id: 'm-u9', role: 'user', content: [{ type: 'text', text: 'not a tool result' }], source: { kind: 'user' } }
    const r = await report(events)
    expect(of(r, 'INV-20')).toEqual(['INV-20@15'])
    expect(messagesOf(r, 'INV-20')).toEqual(['the event after compaction/prune #14 is user/message, not the tool/result replacement of node 12 citing [12]'])
  })

  it('replacing 11…12 (start is not s): reported', async () => {
    const events = appendixB()
    at(events, 15)['surfaceOp'] = { op: 'replace', start: 11, end: 12 }
    const r = await report(events)
    expect(of(r, 'INV-20')).toEqual(['INV-20@15'])
    expect(messagesOf(r, 'INV-20')).toEqual(['the event after compaction/prune #14 is tool/result replacing 11…12, not the tool/result replacement of node 12 citing [12]'])
  })

  it('replacing 12…13 (end is not s): reported by INV-20; INV-22 judges single-node replacements only', async () => {
    const events = appendixB()
    at(events, 15)['surfaceOp'] = { op: 'replace', start: 12, end: 13 }
    // the unpruned original copied: not pruneContent's output, but a two-node replacement is not INV-22's
    setInner(events, 15, [{ type: 'text', text: 'L'.repeat(12000) }])
    const r = await report(events)
    expect(of(r, 'INV-20')).toEqual(['INV-20@15'])
    expect(of(r, 'INV-22')).toEqual([])
  })

  it('a replacement without sourceEventSeqs: reported', async () => {
    const events = appendixB()
    delete at(events, 15)['sourceEventSeqs']
    const r = await report(events)
    expect(of(r, 'INV-20')).toEqual(['INV-20@15'])
    expect(failuresOf(r, 'INV-20')).toEqual([])
  })

  it('a replacement citing [12, 11] (s first, but two seqs): reported', async () => {
    const events = appendixB()
    at(events, 15)['sourceEventSeqs'] = [12, 11]
    expect(of(await report(events), 'INV-20')).toEqual(['INV-20@15'])
  })

  it('a replacement citing [11] (one seq, not s): reported', async () => {
    const events = appendixB()
    at(events, 15)['sourceEventSeqs'] = [11]
    expect(of(await report(events), 'INV-20')).toEqual(['INV-20@15'])
  })

  it('shadowedRange 12…13 with shadowedSeqs [12]: reported at the prune', async () => {
    const events = appendixB()
    at(events, 14).data['shadowedRange'] = { start: 12, end: 13 }
    const r = await report(events)
    expect(of(r, 'INV-20')).toEqual(['INV-20@14'])
    expect(messagesOf(r, 'INV-20')).toEqual(['shadowedRange 12…13 must be {start: 12, end: 12}'])
  })

  it('empty shadowedSeqs: no node to compare the range with (nothing at 14); the replacement at 15 names no s', async () => {
    const events = appendixB()
    at(events, 14).data['shadowedSeqs'] = []
    const r = await report(events)
    // the validator's shape report at 14 (its own message), and the hook's adjacency report at 15 only
    expect(of(r, 'INV-20')).toEqual(['INV-20@14', 'INV-20@15'])
    expect(messagesOf(r, 'INV-20')).toEqual([
      'expected exactly one seq (the pruned node, §1.4.17), got 0 (field data.shadowedSeqs)',
      'the event after compaction/prune #14 is tool/result replacing 12…12, not the tool/result replacement of node undefined citing [undefined]',
    ])
    expect(of(r, 'INV-21')).toEqual([])
  })
})

describe('INV-21 on the node a prune prices', () => {
  it('a node that is not on the surface (step/end #13): reported with that message', async () => {
    const events = appendixB()
    at(events, 14).data['shadowedRange'] = { start: 13, end: 13 }
    at(events, 14).data['shadowedSeqs'] = [13]
    const r = await report(events)
    expect(messagesOf(r, 'INV-21')).toEqual(['prices node 13, which is not a current surface node'])
  })

  it('the first surface node (system message #2, position 0) priced at its P_fixed 28: accepted', async () => {
    const events = appendixB()
    at(events, 14).data = { shadowedRange: { start: 2, end: 2 }, shadowedSeqs: [2], shadowedTokenCount: 28 }
    expect(of(await report(events), 'INV-21')).toEqual([])
  })
})

describe('a tool result at surface position 0 (#2, #3, #10 made foreign records)', () => {
  function headless(): Events {
    const events = appendixB()
    for (const s of [2, 3, 10]) foreign(at(events, s))
    return events
  }

  it('INV-22 judges its rewrite: the marker without the tail is reported at 15', async () => {
    const events = headless()
    setInner(events, 15, [{ type: 'text', text: `${'L'.repeat(4096)}${MARKER}` }])
    expect(of(await report(events), 'INV-22')).toEqual(['INV-22@15'])
  })

  it('INV-23 judges its prune: a 4-code-point result is reported at 14', async () => {
    const events = headless()
    setInner(events, 12, [{ type: 'text', text: 'tiny' }])
    expect(of(await report(events), 'INV-23')).toEqual(['INV-23@14'])
  })
})

describe('INV-22: what is not judged', () => {
  it('a rewrite of a node within the threshold (4 code points) is INV-23\'s, not INV-22\'s', async () => {
    const events = appendixB()
    setInner(events, 12, [{ type: 'text', text: 'tiny' }])
    const r = await report(events)
    expect(of(r, 'INV-22')).toEqual([])
    expect(of(r, 'INV-23')).toEqual(['INV-23@14'])
  })

  it('a replacement whose message has no tool-result block is opaque (INV-02): INV-22 does not see it', async () => {
    const events = appendixB()
    const message = at(events, 15).data['message'] as Record<string, unknown>
    message['content'] = [{ type: 'text', text: 'no tool-result block' }]
    const r = await report(events)
    expect(of(r, 'INV-02')).toEqual(['INV-02@15'])
    expect(of(r, 'INV-22')).toEqual([])
    expect(failuresOf(r, 'INV-22')).toEqual([])
  })

  it('a tool/result replacing the user message #3 (no tool-result block to prune): not judged, not skipped', async () => {
    const events = appendixB()
    at(events, 15)['surfaceOp'] = { op: 'replace', start: 3, end: 3 }
    at(events, 15)['sourceEventSeqs'] = [3]
    const r = await report(events)
    expect(of(r, 'INV-22')).toEqual([])
    expect(failuresOf(r, 'INV-22')).toEqual([])
    expect(r.coverage.find((c) => c.id === 'INV-22')).toMatchObject({ status: 'evaluated', skipped: 0 })
  })
})

describe('INV-22 diagnosis (threshold 49, head 3, tail 3: 3 + 43 + 3 = 49)', () => {
  const manifest: RunManifest = {
    scenario: 'hand-written-prune', compaction: {}, pruner: { thresholdChars: 49, headChars: 3, tailChars: 3 },
    routes: [{ provider: 'mock', model: 'mock-4k', contextWindow: 4000 }], faults: [],
  }
  const prefix = 'the rewrite of #12 is not pruneContent of its projected content: '
  // 'ab😀c' + 50 × 'x' + 'd😀ef' = 58 code points; the correct rewrite is 'ab😀' + marker + '😀ef'
  const LONG = { type: 'text', text: `ab\u{1F600}c${'x'.repeat(50)}d\u{1F600}ef` }
  const RIGHT = { type: 'text', text: `ab\u{1F600}${MARKER}\u{1F600}ef` }
  const SHORT_HEAD = { type: 'text', text: `ab${MARKER}\u{1F600}ef` }
  const image = (): Record<string, unknown> => structuredClone((at(appendixB(), 28).data['content'] as unknown[])[1] as Record<string, unknown>)
  const PLACEHOLDER = '[image omitted from this request to stay within the provider\'s image budget: ci-1.png. Ask for it again if you still need it.]'

  async function messages(original: unknown[], rewritten: unknown[]): Promise<string[]> {
    const events = appendixB()
    setInner(events, 12, original)
    setInner(events, 15, rewritten)
    const r = await report(events, 'seed', manifest)
    expect(failuresOf(r, 'INV-22')).toEqual([])
    return messagesOf(r, 'INV-22')
  }

  it('the correct rewrite is accepted', async () => {
    expect(await messages([LONG], [RIGHT])).toEqual([])
  })

  it('an image the original does not hold: the non-text blocks are not preserved', async () => {
    expect(await messages([LONG], [RIGHT, image()])).toEqual([`${prefix}non-text blocks or offload placeholders are not preserved in order`])
  })

  it('an image of the original dropped: not preserved', async () => {
    expect(await messages([LONG, image()], [RIGHT])).toEqual([`${prefix}non-text blocks or offload placeholders are not preserved in order`])
  })

  it('an offload placeholder of the original dropped: not preserved', async () => {
    expect(await messages([{ type: 'text', text: PLACEHOLDER }, LONG], [RIGHT])).toEqual([`${prefix}non-text blocks or offload placeholders are not preserved in order`])
  })

  it('the placeholder kept: accepted', async () => {
    expect(await messages([{ type: 'text', text: PLACEHOLDER }, LONG], [{ type: 'text', text: PLACEHOLDER }, RIGHT])).toEqual([])
  })

  it('a marker and a lone surrogate inside a kept reasoning block are not counted: only the short head is wrong', async () => {
    const reasoning = { type: 'reasoning', text: `${MARKER}\uD83D` }
    expect(await messages([LONG, reasoning], [SHORT_HEAD, reasoning])).toEqual([`${prefix}the head, tail or block layout differs from pruneContent's`])
  })

  it('a lone surrogate in the first of two text blocks is found (the second is sound)', async () => {
    // 9 + 40 + 6 code points; the right rewrite is ['ab😀' + marker, '😀ef']
    const three = [`ab\u{1F600}cdefgh`, 'x'.repeat(40), `ijk\u{1F600}ef`].map((text) => ({ type: 'text', text }))
    expect(await messages(three, [{ type: 'text', text: `ab\u{1F600}${MARKER}` }, { type: 'text', text: '\u{1F600}ef' }])).toEqual([])
    expect(await messages(three, [{ type: 'text', text: `ab\uD83D${MARKER}` }, { type: 'text', text: '\u{1F600}ef' }]))
      .toEqual([`${prefix}a lone UTF-16 surrogate (code-unit slicing)`])
  })
})

describe('INV-23 on prunes of nodes without a tool-result block', () => {
  it('the user message #3 (a short text): not judged, no failure', async () => {
    const events = appendixB()
    at(events, 14).data = { shadowedRange: { start: 3, end: 3 }, shadowedSeqs: [3], shadowedTokenCount: 20 }
    const r = await report(events)
    expect(of(r, 'INV-23')).toEqual([])
    expect(failuresOf(r, 'INV-23')).toEqual([])
  })

  it('a user message whose first block is an unknown type holding a short content array: not judged', async () => {
    const events = appendixB()
    at(events, 3).data['content'] = [{ type: 'x-widget', content: [{ type: 'text', text: 'short' }] }]
    at(events, 14).data['shadowedRange'] = { start: 3, end: 3 }
    at(events, 14).data['shadowedSeqs'] = [3]
    const r = await report(events)
    expect(of(r, 'INV-23')).toEqual([])
    expect(failuresOf(r, 'INV-23')).toEqual([])
  })

  it('an assistant message with empty content (#10, projects to null): not judged, no failure', async () => {
    const events = appendixB()
    ;(at(events, 10).data['message'] as Record<string, unknown>)['content'] = []
    at(events, 14).data = { shadowedRange: { start: 10, end: 10 }, shadowedSeqs: [10], shadowedTokenCount: 0 }
    const r = await report(events)
    expect(of(r, 'INV-23')).toEqual([])
    expect(failuresOf(r, 'INV-23')).toEqual([])
  })
})

describe('INV-24 placement', () => {
  it('a prune between turns: "(no turn is open)"', async () => {
    // Appendix B up to turn/end #25, then a prune of the replacement #15 at 26
    const events = [...appendixB().filter((e) => e.seq <= 25), prune(26, 15, 1366)]
    const r = await report(events)
    expect(of(r, 'INV-24')).toEqual(['INV-24@26'])
    expect(messagesOf(r, 'INV-24')).toEqual(['a prune outside any pre-step or overflow window (no turn is open)'])
  })

  const start = (seq: number, turn: number | null): Ev => ({ seq, time: 1700000000000 + seq * 5, type: 'compaction/start', data: { compactionId: 'cmp-x', turn } })
  const stepStart = (seq: number): Ev => ({ seq, time: 1700000000000 + seq * 5, type: 'step/start', data: { turn: 1, step: 2 } })
  const stepEnd = (seq: number): Ev => ({ seq, time: 1700000000000 + seq * 5, type: 'step/end', data: { turn: 1, step: 2 } })
  const overflow = (seq: number): Ev => ({
    seq, time: 1700000000000 + seq * 5, type: 'assistant/chunk',
    data: { turn: 1, step: 2, chunk: { type: 'finish', reason: { kind: 'error', failure: { message: 'context window exceeded', code: 'CONTEXT_WINDOW_EXCEEDED' } } } },
  })
  const replacement = (seq: number): Ev => ({ ...structuredClone(at(appendixB(), 15)), seq })
  const upTo13 = (): Events => appendixB().filter((e) => e.seq <= 13)

  /** Bracket opened at 14 (pre-step window of #13), step 1.2 at 15 fails with an overflow at 16; prune pair 17/18. */
  const bracketBeforeOverflow = (): Events => [...upTo13(), start(14, 1), stepStart(15), overflow(16), prune(17, 12, 3012), replacement(18)]

  it('rc.8: a bracket opened before the overflow failure is tolerated (§14.1)', async () => {
    expect(of(await report(bracketBeforeOverflow(), 'dsh-0.1.0-rc.8'), 'INV-24')).toEqual([])
  })

  it('seed: the same prune is reported at 17', async () => {
    const r = await report(bracketBeforeOverflow())
    expect(of(r, 'INV-24')).toEqual(['INV-24@17'])
    expect(messagesOf(r, 'INV-24')).toEqual(['a prune inside the open bracket cmp-x (#14)'])
  })

  it('rc.8: a bracket opened after the overflow failure (#15 < bracket #16) is reported', async () => {
    const events = [...upTo13(), stepStart(14), overflow(15), start(16, 1), prune(17, 12, 3012), replacement(18)]
    expect(of(await report(events, 'dsh-0.1.0-rc.8'), 'INV-24')).toEqual(['INV-24@17'])
  })

  it('rc.8: a bracket opened before a pre-step window (#14 < step/end #16) is not tolerated', async () => {
    const events = [...upTo13(), start(14, 1), stepStart(15), stepEnd(16), prune(17, 12, 3012), replacement(18)]
    expect(of(await report(events, 'dsh-0.1.0-rc.8'), 'INV-24')).toEqual(['INV-24@17'])
  })

  it('rc.8: a manual bracket between turns and no window: both rules reported, no failure', async () => {
    const events = [...appendixB().filter((e) => e.seq <= 25), start(26, null), prune(27, 15, 1366)]
    const r = await report(events, 'dsh-0.1.0-rc.8')
    expect(of(r, 'INV-24')).toEqual(['INV-24@27', 'INV-24@27'])
    expect(failuresOf(r, 'INV-24')).toEqual([])
  })
})
