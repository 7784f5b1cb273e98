/**
 * The §12.1 log-and-surface checks of `src/checker/log-surface.ts` (INV-04 … INV-06) on small edits of
 * Appendix B, whose assistant message #23 (step 1.2) cites its attempt's chunks #18 … #22 (block-start,
 * text-delta, block-end of one text block at index 0, a usage chunk 1400/90, a `stop` finish), and whose only
 * tool-result replacement is the prune #15 of node #12. Every expectation is written out by hand from
 * §1.4.6/§1.4.7/§1.4.9 and §12.1. It pins:
 * - INV-04: an interrupted message keeps only the non-whitespace text/reasoning blocks of its attempt (no
 *   tool calls); an empty provenance list is judged only by the message's block count; a message outside its
 *   open step (wrong turn or wrong step) is left to INV-09; the exact messages for a wrong citation, an
 *   unassemblable attempt, a content mismatch (with the interrupted suffix only when interrupted), usage with
 *   no usage chunk and differing usage; a message without usage is not judged for usage;
 * - INV-05: appends are not replacements; the exact messages of an unresolved span and of missing provenance;
 * - INV-06: the exact messages of a multi-node rewrite, of a rewrite of a non-tool-result node and of a
 *   rewrite that differs outside `message.content[0].content` (including fields of that block itself).
 */
import { describe, expect, it } from 'vitest'
import { at, checkedReport, editedAppendixB, violationLines, type AppendixEvent } from './support.ts'

type Events = AppendixEvent[]

/** The text of the text block of #23 (and of its block-end #20), as Appendix B has it. */
const A2_TEXT = 'The assertion compares floats with strict equality; 0.1 + 0.2 is 0.30000000000000004, so the expectation needs toBeCloseTo. '.repeat(3)

/** Sets the chunk of the `assistant/chunk` at `seq`. */
function setChunk(e: Events, seq: number, chunk: Record<string, unknown>): void {
  at(e, seq).data['chunk'] = chunk
}

/** The `data.message` of the event at `seq`. */
const messageOf = (e: Events, seq: number): Record<string, unknown> => at(e, seq).data['message'] as Record<string, unknown>

/** INV-04 lines of Appendix B edited by `edit`. */
async function inv04(edit: (e: Events) => void): Promise<string[]> {
  return violationLines(await checkedReport(editedAppendixB(edit)), 'INV-04')
}

/**
 * Attempt #18 … #22 of step 1.2 turned into three blocks: the text block 0 (closed by #20), a whitespace-only
 * text block 1 (#21, never closed) and a tool-call block 2 built from a delta (#22, no finish chunk); #23
 * carries no usage (its attempt no longer streams one).
 */
function threeBlockAttempt(e: Events): void {
  setChunk(e, 21, { type: 'text-delta', index: 1, text: ' \n\t ' })
  setChunk(e, 22, { type: 'tool-call-delta', index: 2, id: 'call_x', name: 'read', argumentsDelta: '{}' })
  delete at(e, 23).data['usage']
}

describe('INV-04: an interrupted message is the kept prefix of its stream (§1.4.6)', () => {
  it('keeping only the non-whitespace text block of a text / whitespace text / tool-call attempt is clean', async () => {
    expect(await inv04((e) => {
      threeBlockAttempt(e)
      at(e, 23).data['interrupted'] = true
    })).toEqual([])
  })

  it('an interrupted message with the full assembly (whitespace block and tool call kept) is reported, with the interrupted suffix', async () => {
    expect(await inv04((e) => {
      threeBlockAttempt(e)
      at(e, 23).data['interrupted'] = true
      messageOf(e, 23)['content'] = [
        { type: 'text', text: A2_TEXT },
        { type: 'text', text: ' \n\t ' },
        { type: 'tool-call', id: 'call_x', name: 'read', arguments: '{}' },
      ]
    })).toEqual(['INV-04@23: its content is not the assembly of its chunks [18, 19, 20, 21, 22] (§1.4.6) for an interrupted stream'])
  })

  it('an interrupted message keeping only the tool call is reported', async () => {
    expect(await inv04((e) => {
      threeBlockAttempt(e)
      at(e, 23).data['interrupted'] = true
      messageOf(e, 23)['content'] = [{ type: 'tool-call', id: 'call_x', name: 'read', arguments: '{}' }]
    })).toEqual(['INV-04@23: its content is not the assembly of its chunks [18, 19, 20, 21, 22] (§1.4.6) for an interrupted stream'])
  })

  it('the same kept-prefix content without interrupted is reported as not the full assembly, without the suffix', async () => {
    expect(await inv04(threeBlockAttempt)).toEqual(['INV-04@23: its content is not the assembly of its chunks [18, 19, 20, 21, 22] (§1.4.6)'])
  })
})

describe('INV-04: an empty provenance list means a known empty stream', () => {
  it('an empty list on a message with one content block is reported with the block count', async () => {
    expect(await inv04((e) => { at(e, 23)['sourceEventSeqs'] = [] })).toEqual([
      'INV-04@23: an empty provenance list means a known empty stream, but the message has 1 content block',
    ])
  })

  it('an empty list on a message with two content blocks names both', async () => {
    expect(await inv04((e) => {
      at(e, 23)['sourceEventSeqs'] = []
      messageOf(e, 23)['content'] = [{ type: 'text', text: 'a' }, { type: 'text', text: 'b' }]
    })).toEqual(['INV-04@23: an empty provenance list means a known empty stream, but the message has 2 content blocks'])
  })

  it('an empty list on a message with empty content is clean (not compared with the attempt #18 … #22)', async () => {
    expect(await inv04((e) => {
      at(e, 23)['sourceEventSeqs'] = []
      messageOf(e, 23)['content'] = []
    })).toEqual([])
  })
})

describe('INV-04 leaves a message outside its open step to INV-09', () => {
  it('#23 naming turn 2 (open step 1.2) with a short citation: no INV-04', async () => {
    expect(await inv04((e) => {
      at(e, 23).data['turn'] = 2
      at(e, 23)['sourceEventSeqs'] = [18, 19, 20, 21]
    })).toEqual([])
  })

  it('#23 naming step 1 (open step 1.2) with a short citation: no INV-04', async () => {
    expect(await inv04((e) => {
      at(e, 23).data['step'] = 1
      at(e, 23)['sourceEventSeqs'] = [18, 19, 20, 21]
    })).toEqual([])
  })

  it('in its own step the same short citation is reported with both lists', async () => {
    expect(await inv04((e) => { at(e, 23)['sourceEventSeqs'] = [18, 19, 20, 21] })).toEqual([
      'INV-04@23: cites chunks [18, 19, 20, 21] but the chunks of its own attempt are [18, 19, 20, 21, 22]',
    ])
  })

  it('#10 citing part of its attempt names both lists', async () => {
    expect(await inv04((e) => { at(e, 10)['sourceEventSeqs'] = [6, 7, 8] })).toEqual([
      'INV-04@10: cites chunks [6, 7, 8] but the chunks of its own attempt are [6, 7, 8, 9]',
    ])
  })
})

describe('INV-04: assembly failure, content and usage messages', () => {
  it('an attempt with an unclosed image block cannot be assembled', async () => {
    expect(await inv04((e) => { setChunk(e, 21, { type: 'block-start', index: 1, blockType: 'image' }) })).toEqual([
      'INV-04@23: its chunks [18, 19, 20, 21, 22] cannot be assembled: block 1 of type image never received a block-end',
    ])
  })

  it('a content that is not the assembly is reported without the interrupted suffix', async () => {
    expect(await inv04((e) => { messageOf(e, 23)['content'] = [{ type: 'text', text: 'something else' }] })).toEqual([
      'INV-04@23: its content is not the assembly of its chunks [18, 19, 20, 21, 22] (§1.4.6)',
    ])
  })

  it('a message with usage whose attempt streamed no usage chunk', async () => {
    // #21 becomes a text-delta of the already closed block 0: ignored by assembly, and no usage chunk remains.
    expect(await inv04((e) => { setChunk(e, 21, { type: 'text-delta', index: 0, text: 'ignored' }) })).toEqual([
      'INV-04@23: it carries usage but its attempt streamed no usage chunk',
    ])
  })

  it('a message whose usage differs from the usage chunk #21', async () => {
    expect(await inv04((e) => { at(e, 23).data['usage'] = { inputTokens: 1400, outputTokens: 91 } })).toEqual([
      'INV-04@23: its usage differs from the last usage chunk of its attempt (§1.4.7)',
    ])
  })

  it('a message without usage is not judged for usage (its attempt streams one)', async () => {
    expect(await inv04((e) => { delete at(e, 23).data['usage'] })).toEqual([])
  })
})

describe('INV-05: replacement spans and provenance', () => {
  it('Appendix B has no INV-05 or INV-06: appends are not replacements', async () => {
    const r = await checkedReport(editedAppendixB())
    expect(violationLines(r, 'INV-05')).toEqual([])
    expect(violationLines(r, 'INV-06')).toEqual([])
  })

  it('a reversed checkpoint span 42…3 names both positions', async () => {
    // The surface before #55: 2, 3, 10, 15, 23, 28, 37, 42, 47, 49 (node 3 at position 1, node 42 at position 7).
    const r = await checkedReport(editedAppendixB((e) => { at(e, 55)['surfaceOp'] = { op: 'replace', start: 42, end: 3 } }))
    expect(violationLines(r, 'INV-05')).toEqual([
      'INV-05@55: replacement 42…3: the span is reversed: node 42 is at position 7, after node 3 at position 1',
    ])
  })

  it('a checkpoint whose provenance misses node 3 names the span and the missing node', async () => {
    const r = await checkedReport(editedAppendixB((e) => { at(e, 55)['sourceEventSeqs'] = [51, 54, 10, 15, 23, 28, 37, 42] }))
    expect(violationLines(r, 'INV-05')).toEqual([
      'INV-05@55: sourceEventSeqs must cite every node of the span [3, 10, 15, 23, 28, 37, 42]; missing [3]',
    ])
  })
})

describe('INV-06: a tool-result rewrite is content-only on exactly one tool/result node', () => {
  const inv06 = async (edit: (e: Events) => void): Promise<string[]> => violationLines(await checkedReport(editedAppendixB(edit)), 'INV-06')
  /** The tool-result block of the tool/result at `seq`. */
  const block = (e: Events, seq: number): Record<string, unknown> => (messageOf(e, seq)['content'] as Array<Record<string, unknown>>)[0] as Record<string, unknown>

  it('#15 rewriting nodes 10 … 12 names the two nodes it shadows', async () => {
    expect(await inv06((e) => {
      at(e, 15)['surfaceOp'] = { op: 'replace', start: 10, end: 12 }
      at(e, 15)['sourceEventSeqs'] = [10, 12]
    })).toEqual(['INV-06@15: a tool/result replacement shadows exactly one node; this one shadows [10, 12]'])
  })

  it('#15 rewriting the assistant message #10 names its type', async () => {
    expect(await inv06((e) => {
      at(e, 15)['surfaceOp'] = { op: 'replace', start: 10, end: 10 }
      at(e, 15)['sourceEventSeqs'] = [10]
    })).toEqual(['INV-06@15: a tool/result replacement must replace a tool/result node; #10 is assistant/message'])
  })

  const DIFFERS = 'INV-06@15: differs from #12 outside message.content[0].content (ids, source, toolCallId, isError, turn, step, error, meta and extra fields must be copied, §1.4.9)'

  it('#15 adding meta differs from #12', async () => {
    expect(await inv06((e) => { at(e, 15).data['meta'] = { bytes: 12000 } })).toEqual([DIFFERS])
  })

  it('#15 flipping isError of its tool-result block differs from #12', async () => {
    expect(await inv06((e) => { block(e, 15)['isError'] = true })).toEqual([DIFFERS])
  })

  it('#15 adding a field to its tool-result block differs from #12', async () => {
    expect(await inv06((e) => { block(e, 15)['note'] = 'x' })).toEqual([DIFFERS])
  })

  it('#15 with other inner content only is clean', async () => {
    expect(await inv06((e) => { block(e, 15)['content'] = [{ type: 'text', text: 'pruned' }] })).toEqual([])
  })
})
