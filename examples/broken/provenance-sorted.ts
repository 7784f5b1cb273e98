/**
 * Broken subject: checkpoint provenance stored sorted.
 *
 * Bug: the store keeps `sourceEventSeqs` in a set-like column and writes them back sorted ascending, but a
 * checkpoint's provenance is ordered: `[startSeq, summarySeq, ...shadowedSeqs]` (§1.4.4), the bracket's own
 * events first. Sorted, the replaced nodes (older) come before the bracket's start.
 * Real-world analogue: provenance in a join table read back with `ORDER BY seq`, or deduplicated through
 * `[...new Set(seqs)].sort()`.
 * Why this id: INV-14 fixes that order (§12.2).
 *
 * @fails INV-14 smoke/basic-pressure
 */
import type { Subject } from '@compaction-sim/sim'
import { exampleSubject } from '../subject-core-adapter/subject.ts'
import { isCheckpoint, rewriteLog } from './support/log-file.ts'

const working = exampleSubject()
const subject: Subject = {
  ...working,
  name: 'broken-provenance-sorted',
  runSession: async (options) => {
    const result = await working.runSession(options)
    await rewriteLog(options.logPath, (events) => events.map((e) =>
      isCheckpoint(e) && e.sourceEventSeqs !== undefined ? { ...e, sourceEventSeqs: [...e.sourceEventSeqs].sort((a, b) => a - b) } : e))
    return result
  },
}
export default subject
