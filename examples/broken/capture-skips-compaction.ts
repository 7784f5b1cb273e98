/**
 * Broken subject: the request capture leaves out the compaction requests.
 *
 * Bug: the §1.1 capture is recorded where conversation requests are built, not where every call is
 * dispatched, so summary calls (§8.2) never reach it. The checker then has no summarizer request to
 * judge, and INV-44 holds vacuously.
 * Real-world analogue: a request logger attached to the agent loop's model client while the summarizer
 * uses its own client instance (LangChain memory with a separate LLM, a condenser with its own SDK client).
 * Why this id: the capture is consistent with the log for every request it holds; the world served the
 * summary calls the capture lacks. (WORLD-04 follows: with no captured summary call, the bracket's summary
 * has no world call to come from.)
 *
 * @fails WORLD-06 smoke/basic-pressure
 */
import type { Subject } from '@compaction-sim/sim'
import { exampleSubject } from '../subject-core-adapter/subject.ts'

const working = exampleSubject()
const subject: Subject = {
  ...working,
  name: 'broken-capture-skips-compaction',
  runSession: async (options) => {
    const result = await working.runSession(options)
    const requests = result.requests.filter((r) => r.purpose !== 'compaction').map((r, index) => ({ ...r, index }))
    return { ...result, requests }
  },
}
export default subject
