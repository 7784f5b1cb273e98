/**
 * Broken subject: the summary request leaves out the system head.
 *
 * Bug: a middleware gives the summarizer "its own" prompt by dropping every system message from
 * compaction calls, so the summary request is `region ++ [instruction]` without the head (§8.2 sends
 * `[head] ++ projected region ++ [instruction]` when the session has a system head): the summarizer loses the
 * agent's instructions and the prompt-cache prefix the conversation built (§9).
 * Real-world analogue: `messages.filter((m) => m.role !== 'system')` before a summarization call.
 * Why this id: INV-44 (summarizer request shape) judges every captured compaction request.
 *
 * @fails INV-44 smoke/basic-pressure
 */
import type { StreamMiddleware } from '@compaction-sim/core'
import type { Subject } from '@compaction-sim/sim'
import { exampleSubject } from '../subject-core-adapter/subject.ts'

/** The buggy middleware. */
const dropSystemFromSummaries: StreamMiddleware = (options) =>
  options.purpose === 'compaction' ? { ...options, messages: options.messages.filter((m) => m.role !== 'system') } : options

const working = exampleSubject()
const subject: Subject = {
  ...working,
  name: 'broken-summary-without-head',
  runSession: (options) => working.runSession({
    ...options,
    hooks: { ...options.hooks, middleware: [...options.hooks?.middleware ?? [], dropSystemFromSummaries] },
  }),
}
export default subject
