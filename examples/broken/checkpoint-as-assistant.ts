/**
 * Broken subject: the checkpoint is stored as an assistant message.
 *
 * Bug: the store writes the checkpoint replacement as an `assistant/message` (the summary is model output,
 * after all), but §1.4.4 makes a checkpoint exactly one `user/message` replacement with the compact source:
 * the next request then shows the summary as something the assistant said, which models treat as their own
 * earlier claims.
 * Real-world analogue: LangChain-style summary memory returning the summary as an `AIMessage`, or a
 * condenser that appends `{role: 'assistant', content: summary}`.
 * Why this id: INV-14 (§1.4.4, §12.2: the checkpoint is one sourced `user/message`; issue #21 "The right id").
 * The checker reports it at the misfiled event, besides what the misplaced message disturbs: INV-13 (the
 * event after the summary is not its checkpoint), INV-09 (an assistant message with no open step), INV-30 and
 * INV-43.
 *
 * @fails INV-14 smoke/basic-pressure
 */
import type { Subject } from '@compaction-sim/sim'
import { exampleSubject } from '../subject-core-adapter/subject.ts'
import { isCheckpoint, rewriteLog, type StoredEvent } from './support/log-file.ts'

/** The checkpoint as the buggy store writes it: an assistant message of the turn's latest step. */
function asAssistant(e: StoredEvent, turn: unknown, step: unknown): StoredEvent {
  const { id, content, source } = e.data
  return { ...e, type: 'assistant/message', data: { turn, step, message: { id, role: 'assistant', content, source } } }
}

const working = exampleSubject()
const subject: Subject = {
  ...working,
  name: 'broken-checkpoint-as-assistant',
  runSession: async (options) => {
    const result = await working.runSession(options)
    await rewriteLog(options.logPath, (events) => {
      let turn: unknown = null
      let step: unknown = null
      return events.map((e) => {
        if (e.type === 'step/start') [turn, step] = [e.data['turn'], e.data['step']]
        return isCheckpoint(e) ? asAssistant(e, turn, step) : e
      })
    })
    return result
  },
}
export default subject
