/**
 * Broken subject: a canned checkpoint text instead of the summary the model wrote.
 *
 * Bug: the backend does not trust the summarizer's text and stores a fixed one ("Earlier conversation
 * condensed.") in both `compaction/summary.summary` and the checkpoint message, though the summary call
 * succeeded (§8.4, §8.5 frame the model's text).
 * Real-world analogue: a placeholder summary left in from development, or a "sanitiser" that replaces model
 * output it cannot parse with a constant.
 * Why this id: the log is consistent with itself (summary and checkpoint agree, INV-18); the world returned
 * another text. (INV-43 sees it too: the requests after it carried the real checkpoint, not the stored one.)
 * Unlike `canned-summary.ts`, the summary call here succeeded.
 *
 * @fails WORLD-04 smoke/basic-pressure
 */
import type { Subject } from '@compaction-sim/sim'
import { exampleSubject } from '../subject-core-adapter/subject.ts'
import { isCheckpoint, rewriteLog, type StoredEvent } from './support/log-file.ts'

/** The text the buggy backend stores. */
const CANNED = 'Earlier conversation condensed.'

/** The summary and its checkpoint with the canned text (the checkpoint's framing kept). */
function canned(e: StoredEvent): StoredEvent {
  if (e.type === 'compaction/summary') return { ...e, data: { ...e.data, summary: [{ type: 'text', text: CANNED }] } }
  if (!isCheckpoint(e)) return e
  const content = e.data['content'] as unknown[]
  return { ...e, data: { ...e.data, content: [content[0], { type: 'text', text: CANNED }, content.at(-1)] } }
}

const working = exampleSubject()
const subject: Subject = {
  ...working,
  name: 'broken-canned-checkpoint',
  runSession: async (options) => {
    const result = await working.runSession(options)
    await rewriteLog(options.logPath, (events) => events.map(canned))
    return result
  },
}
export default subject
