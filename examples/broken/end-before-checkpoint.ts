/**
 * Broken subject: `compaction/end` is written before the checkpoint.
 *
 * Bug: the store flushes the bracket's close ahead of the checkpoint replacement (two queued writes
 * reordered), so the log reads start, summary, end, checkpoint: the checkpoint lands outside its bracket and
 * no longer right after its summary (§7.7 commits the replacement, then closes).
 * Real-world analogue: two un-awaited `store.append` calls racing, or a write-behind queue keyed by event
 * type.
 * Why this id: INV-13 (summary adjacency) is the first promise broken: the event after the summary must be its
 * checkpoint. (The checkpoint then also lies outside its bracket, INV-15.) Over the whole `must` pack every
 * scenario gets a verdict (28 failed, 0 errors): where core's meter cannot place the late replacement, `sim run`
 * reports the checker's violations and a `replay` expectation naming the seq, not an internal error (issue #21,
 * checker totality).
 *
 * @fails INV-13 smoke/basic-pressure
 */
import type { Subject } from '@compaction-sim/sim'
import { exampleSubject } from '../subject-core-adapter/subject.ts'
import { isCheckpoint, rewriteLog, type StoredEvent } from './support/log-file.ts'

/** Swaps every checkpoint with the `compaction/end` that follows it, seqs kept in line order. */
function endFirst(events: StoredEvent[]): StoredEvent[] {
  const out = [...events]
  for (let i = 0; i + 1 < out.length; i++) {
    const [checkpoint, end] = [out[i], out[i + 1]]
    if (checkpoint === undefined || end === undefined || !isCheckpoint(checkpoint) || end.type !== 'compaction/end') continue
    out[i] = { ...end, seq: checkpoint.seq }
    out[i + 1] = { ...checkpoint, seq: end.seq }
    i++
  }
  return out
}

const working = exampleSubject()
const subject: Subject = {
  ...working,
  name: 'broken-end-before-checkpoint',
  runSession: async (options) => {
    const result = await working.runSession(options)
    await rewriteLog(options.logPath, endFirst)
    return result
  },
}
export default subject
