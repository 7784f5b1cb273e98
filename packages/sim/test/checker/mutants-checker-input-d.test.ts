/**
 * The input stage's shape-preserving payload repairs (`src/checker/input.ts`, `repairPayload`, lines 400 to
 * the end), as `checkLog` reports them on small edits of Appendix B (#4 and #17 request/headers, #14 the
 * prune, #25 a turn/end, #51 compaction/start, #54 compaction/summary). A broken rule the stage can repair is
 * reported once under the invariant that owns it (§12) and the event is still judged for its other rules; a
 * rule it cannot repair is INV-02 and the event is opaque (its later rules are not judged). Each problem
 * message is the validator's reason plus ` (field …)`; every expectation is written out by hand. It pins:
 * - INV-10: an empty `sourceCommandId` on a bracket event is repaired (like an empty `compactionId`);
 * - INV-16: an empty `shadowedSeqs` (only an array that is empty: a non-array is INV-02), `llmStreamCall`
 *   without `rawOutput` (only then: a malformed `rawOutput` is INV-02, once, with or without `llmStreamCall`), a non-text summary block (any index,
 *   two digits included; a field that merely ends like one is not a block), and that each repair is applied
 *   once so the next rule is judged;
 * - INV-20: a prune whose `shadowedSeqs` is an array of the wrong length (not a non-array, not a broken
 *   `shadowedRange`);
 * - INV-41: `header.system` in the seed dialect (not rc.8, where a non-string system is INV-02), a
 *   `startsSeries` that is not true, a string `reason` outside the dialect's list (not a non-string reason,
 *   not another header field, not a `reason` of another type); each repair lets validation finish in one round.
 */
import type { Dialect } from '@compaction-sim/core'
import { describe, expect, it } from 'vitest'
import { checkLog } from '../../src/checker/run.ts'
import { at, editedAppendixB, reportOf, type AppendixEvent } from './support.ts'

type Events = AppendixEvent[]

/** `id@seq: message` of every violation reported at `seq`, in report order. */
async function linesAt(events: Events, seq: number, dialect: Dialect = 'seed'): Promise<string[]> {
  const r = reportOf(await checkLog([...events] as never, { dialect, manifest: null }))
  return r.violations.filter((v) => v.seq === seq).map((v) => `${v.id}@${v.seq}: ${v.message}`)
}

/** The header object of the request/header at `seq`. */
const headerOf = (e: Events, seq: number): Record<string, unknown> => at(e, seq).data['header'] as Record<string, unknown>

describe('INV-10: bracket ids', () => {
  it('an empty sourceCommandId on compaction/start is INV-10 (repaired), not INV-02', async () => {
    const e = editedAppendixB((x) => { at(x, 51).data['sourceCommandId'] = '' })
    expect(await linesAt(e, 51)).toEqual([
      'INV-10@51: expected a non-empty string, got the string "" (field data.sourceCommandId)',
    ])
  })
})

describe('INV-16: the summary record', () => {
  it('a non-text block and an empty shadowedSeqs: each is reported once, the block first', async () => {
    const e = editedAppendixB((x) => {
      ;(at(x, 54).data['summary'] as Array<Record<string, unknown>>)[0]!['type'] = 'image'
      at(x, 54).data['shadowedSeqs'] = []
    })
    // Folded as written: the empty list also differs from the entry span the summary-error #52 named (INV-40).
    expect(await linesAt(e, 54)).toEqual([
      'INV-16@54: expected \'text\', got the string "image" (field data.summary[0].type)',
      'INV-16@54: expected a non-empty array of seqs (§1.4.15) (field data.shadowedSeqs)',
      'INV-40@54: the summary names shadowedSeqs [], but summary-error #52 of the same bracket named [3, 10, 15, 23, 28, 37, 42]: every attempt summarises the entry span (§7.3)',
    ])
  })

  it('a shadowedSeqs that is not an array (an empty string) is INV-02, not the empty-list repair', async () => {
    const e = editedAppendixB((x) => { at(x, 54).data['shadowedSeqs'] = '' })
    expect(await linesAt(e, 54)).toEqual([
      'INV-02@54: expected an array, got the string "" (field data.shadowedSeqs)',
    ])
  })

  it('a malformed rawOutput without llmStreamCall is INV-02 (the stream-call repair needs llmStreamCall true)', async () => {
    const e = editedAppendixB((x) => {
      delete at(x, 54).data['llmStreamCall'] // #54 is a stream call as written
      at(x, 54).data['rawOutput'] = 'x'
    })
    expect(await linesAt(e, 54)).toEqual([
      'INV-02@54: expected an array, got the string "x" (field data.rawOutput)',
    ])
  })

  it('a malformed rawOutput on a stream call is INV-02 once, not also INV-16 (only a missing rawOutput is INV-16)', async () => {
    const malformed = editedAppendixB((x) => { at(x, 54).data['rawOutput'] = 'x' }) // #54 has llmStreamCall: true
    expect(await linesAt(malformed, 54)).toEqual([
      'INV-02@54: expected an array, got the string "x" (field data.rawOutput)',
    ])
    const missing = editedAppendixB((x) => { delete at(x, 54).data['rawOutput'] })
    expect(await linesAt(missing, 54)).toEqual([
      'INV-16@54: expected rawOutput when llmStreamCall is true (§1.4.15) (field data.rawOutput)',
    ])
  })

  it('another field failing on a stream call is INV-02, not the stream-call repair (only field data.rawOutput is)', async () => {
    // data.model is checked before the stream-call rule (§1.4.15), so its failure comes first in either edit.
    const present = editedAppendixB((x) => { at(x, 54).data['model'] = 5 }) // #54 has llmStreamCall: true
    expect(await linesAt(present, 54)).toEqual([
      'INV-02@54: expected a string, got the number 5 (field data.model)',
    ])
    const missing = editedAppendixB((x) => {
      at(x, 54).data['model'] = 5
      delete at(x, 54).data['rawOutput']
    })
    expect(await linesAt(missing, 54)).toEqual([
      'INV-02@54: expected a string, got the number 5 (field data.model)',
    ])
    const plain = editedAppendixB((x) => {
      at(x, 54).data['model'] = 5
      delete at(x, 54).data['llmStreamCall']
    })
    expect(await linesAt(plain, 54)).toEqual([
      'INV-02@54: expected a string, got the number 5 (field data.model)',
    ])
  })

  it('a non-text block at a two-digit index (#10 of 11) is INV-16', async () => {
    const e = editedAppendixB((x) => {
      const blocks = at(x, 54).data['summary'] as Array<Record<string, unknown>>
      for (let i = 1; i <= 10; i++) blocks.push({ type: 'text', text: '' })
      blocks[10]!['type'] = 'image'
    })
    // Folded as written: the record check sees the image block too.
    expect(await linesAt(e, 54)).toEqual([
      'INV-16@54: expected \'text\', got the string "image" (field data.summary[10].type)',
      'INV-16@54: summary holds a block that is not text',
    ])
  })

  it('a summaryRoom key named like a summary block field is INV-02, not a block repair', async () => {
    const e = editedAppendixB((x) => { at(x, 54).data['summaryRoom'] = { promptTokens: 1, 'data.summary[0].type': 1 } })
    expect(await linesAt(e, 54)).toEqual([
      'INV-02@54: is not a summaryRoom field (allowed: configuredMaxTokens, promptTokens, contextWindow, maxOutputTokens, deferredTo) (field data.summaryRoom.data.summary[0].type)',
    ])
  })
})

describe('INV-20: the prune record', () => {
  it('a broken shadowedRange is INV-02 even when shadowedSeqs also has the wrong length', async () => {
    const e = editedAppendixB((x) => {
      at(x, 14).data['shadowedRange'] = 'x'
      at(x, 14).data['shadowedSeqs'] = [12, 13]
    })
    expect(await linesAt(e, 14)).toEqual([
      'INV-02@14: expected an object, got the string "x" (field data.shadowedRange)',
    ])
  })

  it('a shadowedSeqs that is not an array (a two-character string) is INV-02', async () => {
    const e = editedAppendixB((x) => { at(x, 14).data['shadowedSeqs'] = 'ab' })
    expect(await linesAt(e, 14)).toEqual([
      'INV-02@14: expected an array, got the string "ab" (field data.shadowedSeqs)',
    ])
  })
})

describe('INV-41: header form and reasons', () => {
  const SEED_REASONS = "one of 'initial', 'resume', 'change', 'series'"

  it('a string reason of a turn/end (not an object) is INV-02: the reason repair is the header\'s', async () => {
    const e = editedAppendixB((x) => { at(x, 25).data['reason'] = 'completed' })
    expect(await linesAt(e, 25)).toEqual([
      'INV-02@25: expected an object, got the string "completed" (field data.reason)',
    ])
  })

  it('a header reason outside the seed list is INV-41, reported once', async () => {
    const e = editedAppendixB((x) => { at(x, 17).data['reason'] = 'bogus' })
    expect((await linesAt(e, 17))).toEqual([
      `INV-41@17: expected ${SEED_REASONS}, got the string "bogus" (field data.reason)`,
    ])
  })

  it('a non-string header reason is INV-02', async () => {
    const e = editedAppendixB((x) => { at(x, 17).data['reason'] = 5 })
    expect(await linesAt(e, 17)).toEqual([
      `INV-02@17: expected ${SEED_REASONS}, got the number 5 (field data.reason)`,
    ])
  })

  it('a malformed header config is INV-02, whatever the reason', async () => {
    const e = editedAppendixB((x) => { (headerOf(x, 17)['config'] as Record<string, unknown>)['temperature'] = 'x' })
    expect(await linesAt(e, 17)).toEqual([
      'INV-02@17: expected a finite number, got the string "x" (field data.header.config.temperature)',
    ])
  })

  it('header.system in the seed dialect is INV-41, reported once', async () => {
    const e = editedAppendixB((x) => { headerOf(x, 17)['system'] = 'be brief' })
    expect((await linesAt(e, 17))).toEqual([
      'INV-41@17: the seed dialect has no header.system (system text lives in system/message, §1.4.5, D-02) (field data.header.system)',
    ])
  })

  it('a startsSeries that is not true is INV-41, reported once', async () => {
    const e = editedAppendixB((x) => { at(x, 17).data['startsSeries'] = false })
    expect((await linesAt(e, 17))).toEqual([
      'INV-41@17: expected true (or the field absent), got false (field data.startsSeries)',
    ])
  })

  it('a non-string header.system in the rc.8 dialect is INV-02 (rc.8 headers may carry a system)', async () => {
    const e = editedAppendixB((x) => { headerOf(x, 4)['system'] = 42 })
    expect(await linesAt(e, 4, 'dsh-0.1.0-rc.8')).toEqual([
      'INV-02@4: expected a string, got the number 42 (field data.header.system)',
    ])
  })
})
