/**
 * The full message of each pruning (§12.3) and policy (§12.3 INV-25, §12.4) conformance case: the checker's
 * output says which promise broke, at which event and why, and these are the words a user reads. Each
 * line was reviewed against the case's construction (the planted value and the rule it breaks) before it
 * was pinned; a case added later is simply not listed here.
 */
import { conformanceCases } from '@compaction-sim/fixtures'
import { describe, expect, it } from 'vitest'
import { checkLog } from '../../src/checker/run.ts'
import { reportOf } from './support.ts'

/** [case name, id@seq, message] of the case's expected violation. */
const MESSAGES: ReadonlyArray<readonly [string, string, string]> = [
  ['range-shape', 'INV-20@14', 'shadowedRange 11…12 must be {start: 12, end: 12}'],
  ['replacement-provenance', 'INV-20@15', 'the event after compaction/prune #14 is tool/result replacing 12…12, not the tool/result replacement of node 12 citing [12]'],
  ['interleaved-event', 'INV-20@15', 'the event after compaction/prune #14 is ui/status, not the tool/result replacement of node 12 citing [12]'],
  ['dangling-prune', 'INV-20@14', 'the event after compaction/prune #13 is step/start, not the tool/result replacement of node 11 citing [11]'],
  ['shadow-price-off-by-one', 'INV-21@14', 'shadowedTokenCount 3013 differs from P_fixed of the projected message of #12 = 3012 (§2.6)'],
  ['route-image-price', 'INV-21@13', 'shadowedTokenCount 2597 differs from P_fixed of the projected message of #11 = 2567 (§2.6)'],
  ['double-marker', 'INV-22@15', 'the rewrite of #12 is not pruneContent of its projected content: the marker appears 2 times (exactly once is required)'],
  ['head-off-by-one', 'INV-22@15', 'the rewrite of #12 is not pruneContent of its projected content: the head, tail or block layout differs from pruneContent\'s'],
  ['code-unit-slicing', 'INV-22@14', 'the rewrite of #11 is not pruneContent of its projected content: a lone UTF-16 surrogate (code-unit slicing)'],
  ['re-trim-of-replacement', 'INV-23@15', 'prunes #14 whose measured text is 50 code points, within thresholdChars 50'],
  ['prune-inside-step', 'INV-24@15', 'a prune outside any pre-step or overflow window (step 1.2 is running)'],
  ['prune-inside-bracket', 'INV-24@52', 'a prune inside the open bracket cmp-7f3a (#51)'],
  ['prune-below-pressure', 'INV-25@14', 'a prune run below pressure: totalTokens 3180 < threshold 3200 of mock/mock-4k'],
  ['bracket-below-pressure', 'INV-25@16', 'an automatic pressure bracket below pressure: totalTokens 318 < threshold 320 of mock/mock-400'],
  ['head-replaced', 'INV-26@67', 'replacement 2…2 shadows the system head #2 at position 0'],
  ['explicit-region-includes-head', 'INV-26@18', 'replacement 2…10 shadows the system head #2 at position 0'],
  ['middle-span', 'INV-27@25', 'the span starts at #10 (position 2), not at position 1, the first node after the system head'],
  ['span-cuts-tool-unit', 'INV-28@26', 'the cut after #12 (position 2) has 1 unanswered call crossing it'],
  ['nothing-retained', 'INV-29@15', 'no node follows the span 3…10: the newest unit must stay verbatim'],
  ['tail-below-budget', 'INV-29@26', 'the retained tail [20, 22] prices 27 (P_route) < retainTokens 64'],
  ['summary-copied-to-surface', 'INV-30@67', 'the raw summary text of #54 appears on the surface outside its checkpoint (a second copy of history)'],
  ['third-bracket-in-window', 'INV-31@24', 'a pressure bracket opens after 2 successful ones in the pre-step window #15; the bound is compactionRetries + 1 = 2'],
]

describe('pruning and policy violation messages, in full', () => {
  for (const [name, where, message] of MESSAGES) {
    const id = where.slice(0, where.indexOf('@'))
    it(`${where} ${name}`, async () => {
      const c = conformanceCases().find((x) => x.name === name && x.expect.id === id)
      if (c === undefined) throw new Error(`no conformance case ${id} ${name}`)
      const options = { dialect: c.dialect, manifest: ('manifest' in c ? c.manifest : undefined) ?? null, ...(c.requests === undefined ? {} : { requests: c.requests }) }
      const r = reportOf(await checkLog(c.events, options))
      expect(r.violations.filter((v) => v.id === id).map((v) => `${v.id}@${v.seq}: ${v.message}`)).toEqual([`${where}: ${message}`])
    })
  }
})
