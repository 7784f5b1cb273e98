/**
 * The later §12.2 bracket checks (`src/checker/bracket.ts`, INV-14's fold/shadow comparison, INV-15 … INV-19)
 * on small hand edits of Appendix B, whose only bracket is `compaction/start` #51 (cmp-7f3a), the summary
 * #54 (shadowedRange 3…42, shadowedSeqs [3, 10, 15, 23, 28, 37, 42], shadowedTokenCount 1,652), its
 * checkpoint #55 (replace 3…42, three text blocks: preamble + opening tag, the summary, the closing tag)
 * and `compaction/end` #56. Every expectation (id@seq and message) is written out by hand from §7, §8.5,
 * §11.4 and §14.1. It pins:
 * - INV-14: a fold whose span differs from the summary's shadowedSeqs;
 * - INV-15: appended checkpoints, checkpoints without a summary right before them, after no open bracket,
 *   after another bracket's summary, or naming another compactionId;
 * - INV-16: the empty shadowedSeqs (left to the input stage), each end of shadowedRange,
 *   fractional / zero shadowedTokenCount, non-surface shadowedSeqs, the Σ P_fixed message, non-text and
 *   whitespace-only summaries (a negative count is the input stage's, never INV-16's);
 * - INV-18: forbidden blocks, the first-block rule per dialect (messages, rc.8 structure), the length-2
 *   boundary, the closing block and the framed middle;
 * - INV-19: compaction events right after a crash-repair closer (interrupted turn/end, outcome-unknown
 *   result that is not a pruned copy, duplicates excepted, a prune too), and the open-bracket-at-end rule
 *   against the manifest's crash seqs.
 */
import type { Dialect, RunManifest } from '@compaction-sim/core'
import { describe, expect, it } from 'vitest'
import { checkLog, type CheckReport } from '../../src/checker/run.ts'
import { appendixB, at, renumber, reportOf } from './support.ts'

type Events = ReturnType<typeof appendixB>

const data = (e: Events, seq: number): Record<string, unknown> => at(e, seq).data
const SEQS = '[3, 10, 15, 23, 28, 37, 42]'

async function report(events: readonly unknown[], dialect: Dialect = 'seed', manifest?: RunManifest): Promise<CheckReport> {
  return reportOf(await checkLog(events, manifest === undefined ? { dialect } : { dialect, manifest }))
}
/** `id@seq` of the violations of one id. */
const of = (r: CheckReport, id: string): string[] => r.violations.filter((v) => v.id === id).map((v) => `${v.id}@${v.seq}`)
/** `id@seq message` of the violations of one id. */
const full = (r: CheckReport, id: string): string[] => r.violations.filter((v) => v.id === id).map((v) => `${v.id}@${v.seq} ${v.message}`)
/** Appendix B edited by `edit`. */
function edited(edit: (e: Events) => void): Events {
  const e = appendixB()
  edit(e)
  return e
}
const checkpointContent = (e: Events): Array<Record<string, unknown>> => data(e, 55)['content'] as Array<Record<string, unknown>>
const summaryText = (): string => ((data(appendixB(), 54)['summary'] as Array<Record<string, unknown>>)[0] as { text: string }).text
const OPENING = '\n\n<compacted-summary>'

describe('the untouched Appendix B', () => {
  it('has no INV-14 … INV-19 violation (seed) and no internal error', async () => {
    const r = await report(appendixB())
    expect(r.violations.filter((v) => /^INV-1[4-9]$/.test(v.id))).toEqual([])
    expect(r.internalErrors).toEqual([])
  })

  it('has no INV-18 violation in the rc.8 dialect either', async () => {
    expect(of(await report(appendixB(), 'dsh-0.1.0-rc.8'), 'INV-18')).toEqual([])
  })
})

describe('INV-14: the fold span against the summary\'s shadowedSeqs', () => {
  it('a summary that leaves #28 out of shadowedSeqs while the fold 3…42 shadows it', async () => {
    const r = await report(edited((e) => {
      data(e, 54)['shadowedSeqs'] = [3, 10, 15, 23, 37, 42]
      at(e, 55)['sourceEventSeqs'] = [51, 54, 3, 10, 15, 23, 37, 42]
    }))
    expect(full(r, 'INV-14')).toEqual([`INV-14@55 the fold shadows ${SEQS} but the summary (#54) names shadowedSeqs [3, 10, 15, 23, 37, 42]`])
  })
})

describe('INV-15: checkpoints only as the replacement right after their own bracket\'s summary', () => {
  it('an appended checkpoint', async () => {
    const r = await report(edited((e) => { at(e, 55)['surfaceOp'] = 'append' }))
    expect(full(r, 'INV-15')).toEqual(['INV-15@55 a checkpoint is appended; checkpoints only ever replace the span they summarise'])
  })

  it('a checkpoint replacement with no compaction/summary right before it (#54 moved behind it)', async () => {
    const e = appendixB()
    const summary = at(e, 54)
    e.splice(e.indexOf(summary), 1)
    e.splice(e.indexOf(at(e, 55)) + 1, 0, summary)
    renumber(e)
    // now #54 is the checkpoint and #55 the summary
    const r = await report(e)
    expect(full(r, 'INV-15')).toEqual(['INV-15@54 a checkpoint lands without its compaction/summary right before it'])
  })

  const wrongBracket = (seq: number): string => `INV-15@55 a checkpoint follows compaction/summary #${seq}, which is not the summary of its own open bracket`

  it('no bracket open (no compaction/start #51): reported, not a crash', async () => {
    const r = await report(edited((e) => { at(e, 51).type = 'llm/retry'; at(e, 51).data = { attempt: 1 } }))
    expect(full(r, 'INV-15')).toEqual([wrongBracket(54)])
    expect(r.internalErrors.filter((f) => f.id === 'INV-15')).toEqual([])
  })

  it('the summary right before is another bracket\'s (cmp-other), the checkpoint names the same cmp-other', async () => {
    const r = await report(edited((e) => {
      data(e, 54)['compactionId'] = 'cmp-other'
      ;(data(e, 55)['source'] as Record<string, unknown>)['compactionId'] = 'cmp-other'
    }))
    expect(full(r, 'INV-15')).toEqual([wrongBracket(54)])
  })

  it('the bracket\'s own summary, but the checkpoint names cmp-other', async () => {
    const r = await report(edited((e) => { (data(e, 55)['source'] as Record<string, unknown>)['compactionId'] = 'cmp-other' }))
    expect(full(r, 'INV-15')).toEqual([wrongBracket(54)])
  })
})

describe('INV-16: the summary record', () => {
  it('an empty shadowedSeqs is left to the input stage', async () => {
    const r = await report(edited((e) => { data(e, 54)['shadowedSeqs'] = [] }))
    // the input stage's message only: no shadowedRange comparison against a missing first seq
    expect(full(r, 'INV-16')).toEqual(['INV-16@54 expected a non-empty array of seqs (§1.4.15) (field data.shadowedSeqs)'])
    expect(r.internalErrors.filter((f) => f.id === 'INV-16')).toEqual([])
  })

  it('shadowedRange starting before the first shadowed seq', async () => {
    const r = await report(edited((e) => { data(e, 54)['shadowedRange'] = { start: 2, end: 42 } }))
    expect(full(r, 'INV-16')).toEqual([`INV-16@54 shadowedRange 2…42 does not match the first and last of shadowedSeqs ${SEQS}`])
  })

  it('shadowedRange ending after the last shadowed seq', async () => {
    const r = await report(edited((e) => { data(e, 54)['shadowedRange'] = { start: 3, end: 49 } }))
    expect(full(r, 'INV-16')).toEqual([`INV-16@54 shadowedRange 3…49 does not match the first and last of shadowedSeqs ${SEQS}`])
  })

  it('a fractional shadowedTokenCount', async () => {
    const r = await report(edited((e) => { data(e, 54)['shadowedTokenCount'] = 1652.5 }))
    expect(full(r, 'INV-16')).toEqual(['INV-16@54 shadowedTokenCount 1652.5 is not a non-negative integer'])
  })

  it('a zero shadowedTokenCount is an integer, judged against Σ P_fixed = 1,652', async () => {
    const r = await report(edited((e) => { data(e, 54)['shadowedTokenCount'] = 0 }))
    expect(full(r, 'INV-16')).toEqual([`INV-16@54 shadowedTokenCount 0 differs from Σ P_fixed of the projected messages of ${SEQS} = 1652 (§2.6)`])
  })

  it('a wrong shadowedTokenCount (1,000)', async () => {
    const r = await report(edited((e) => { data(e, 54)['shadowedTokenCount'] = 1000 }))
    expect(full(r, 'INV-16')).toEqual([`INV-16@54 shadowedTokenCount 1000 differs from Σ P_fixed of the projected messages of ${SEQS} = 1652 (§2.6)`])
  })

  it('shadowedSeqs naming the pruned-away #12', async () => {
    const r = await report(edited((e) => {
      data(e, 54)['shadowedSeqs'] = [3, 10, 12, 15, 23, 28, 37, 42]
    }))
    expect(full(r, 'INV-16')).toEqual(['INV-16@54 shadowedSeqs name [12], which are not current surface nodes'])
  })

  it('a summary with a reasoning block next to its text', async () => {
    const r = await report(edited((e) => {
      (data(e, 54)['summary'] as unknown[]).push({ type: 'reasoning', text: 'hidden' })
    }))
    expect(full(r, 'INV-16')).toEqual([
      'INV-16@54 expected \'text\', got the string "reasoning" (field data.summary[1].type)',
      'INV-16@54 summary holds a block that is not text',
    ])
  })

  it('a summary of whitespace-only text', async () => {
    const r = await report(edited((e) => { data(e, 54)['summary'] = [{ type: 'text', text: ' \n\t ' }] }))
    expect(full(r, 'INV-16')).toEqual(['INV-16@54 summary has no text block with a non-whitespace character (§8.4 step 5)'])
  })

  it('a summary with one visible and one whitespace-only text block is fine', async () => {
    const r = await report(edited((e) => { (data(e, 54)['summary'] as unknown[]).push({ type: 'text', text: '  ' }) }))
    expect(of(r, 'INV-16')).toEqual([])
  })
})

describe('INV-18: the checkpoint framing', () => {
  const firstSeed = 'INV-18@55 the first checkpoint block is not text(CHECKPOINT_PREAMBLE + "\\n\\n<compacted-summary>") (§8.5)'
  const firstRc8 = 'INV-18@55 the first checkpoint block does not end with "\\n\\n<compacted-summary>" (§14.1)'
  const differs = 'INV-18@55 the framed blocks differ from compaction/summary.summary of #54'

  it('an image block inside the checkpoint', async () => {
    const image = structuredClone((data(appendixB(), 28)['content'] as unknown[])[1])
    const r = await report(edited((e) => { checkpointContent(e).splice(2, 0, image as Record<string, unknown>) }))
    expect(full(r, 'INV-18')).toEqual(['INV-18@55 the checkpoint holds a image block', differs])
  })

  it('a first block not ending with the opening tag: the seed and the rc.8 message', async () => {
    const edit = (e: Events): void => { checkpointContent(e)[0] = { type: 'text', text: 'Automatic checkpoint.' } }
    expect(full(await report(edited(edit), 'seed'), 'INV-18')).toEqual([firstSeed])
    expect(full(await report(edited(edit), 'dsh-0.1.0-rc.8'), 'INV-18')).toEqual([firstRc8])
  })

  it('rc.8: a first block of other text ending with the opening tag is fine', async () => {
    const edit = (e: Events): void => { checkpointContent(e)[0] = { type: 'text', text: `Context condensed.${OPENING}` } }
    expect(of(await report(edited(edit), 'dsh-0.1.0-rc.8'), 'INV-18')).toEqual([])
    expect(full(await report(edited(edit), 'seed'), 'INV-18')).toEqual([firstSeed])
  })

  it('rc.8: a reasoning first block ending with the opening tag is not text', async () => {
    const edit = (e: Events): void => { checkpointContent(e)[0] = { type: 'reasoning', text: `Context condensed.${OPENING}` } }
    expect(full(await report(edited(edit), 'dsh-0.1.0-rc.8'), 'INV-18')).toEqual(['INV-18@55 the checkpoint holds a reasoning block', firstRc8])
  })

  it('rc.8: an empty checkpoint content', async () => {
    const r = await report(edited((e) => { data(e, 55)['content'] = [] }), 'dsh-0.1.0-rc.8')
    expect(full(r, 'INV-18')).toEqual([firstRc8])
    expect(r.internalErrors.filter((f) => f.id === 'INV-18')).toEqual([])
  })

  it('two blocks (opening, closing): framed, with an empty middle that differs', async () => {
    const r = await report(edited((e) => { checkpointContent(e).splice(1, 1) }))
    expect(full(r, 'INV-18')).toEqual([differs])
  })

  it('one block (the opening only)', async () => {
    const r = await report(edited((e) => { checkpointContent(e).splice(1, 2) }))
    expect(full(r, 'INV-18')).toEqual([firstSeed])
  })

  it('a wrong closing block', async () => {
    const r = await report(edited((e) => { checkpointContent(e)[2] = { type: 'text', text: '</summary>' } }))
    expect(full(r, 'INV-18')).toEqual(['INV-18@55 the last checkpoint block is not text("</compacted-summary>") (§8.5)'])
  })

  it('a framed text that differs from the summary', async () => {
    const r = await report(edited((e) => { checkpointContent(e)[1] = { type: 'text', text: `${summaryText()} ` } }))
    expect(full(r, 'INV-18')).toEqual([differs])
  })
})
