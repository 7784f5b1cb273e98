/**
 * A request capture (§1.1) for the Appendix B log, built independently of the checker: conversation
 * requests are core's `EventLog.deriveMessages()` of each dispatch prefix, the two summary requests are
 * `[head] ++ projected region ++ [instruction]` of their prefixes (§8.2, §9.5 R0 … R7).
 */
import { COMPACTION_INSTRUCTION, EventLog, MessageId, type CapturedRequest, type LogEvent, type Message } from '@compaction-sim/core'

const TOOLS = [{
  name: 'read',
  description: 'Read a UTF-8 text file from the workspace.',
  parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
}]

/** Dispatch revisions of the conversation requests (first chunk of each attempt) of Appendix B. */
export const APPENDIX_B_CONVERSATION_REVISIONS = [6, 18, 29, 32, 43, 59]

/** The summary requests: revision at dispatch (after #51, after the offload #53). */
export const APPENDIX_B_SUMMARY_REVISIONS = [52, 54]

const REGION = [3, 10, 15, 23, 28, 37, 42]

/** The instruction message of the summary request (§8.2; source recommended by §1.6). */
export const INSTRUCTION: Message = {
  id: MessageId('instruction'),
  role: 'user',
  content: [{ type: 'text', text: COMPACTION_INSTRUCTION }],
  source: { kind: 'plugin', plugin: 'compaction-instruction' },
}

/** The capture of the Appendix B run, in dispatch order. */
export function appendixBCapture(events: readonly LogEvent[]): CapturedRequest[] {
  const revisions = [...APPENDIX_B_CONVERSATION_REVISIONS.map((L) => ({ L, purpose: 'conversation' as const })), ...APPENDIX_B_SUMMARY_REVISIONS.map((L) => ({ L, purpose: 'compaction' as const }))]
    .sort((a, b) => a.L - b.L)
  return revisions.map(({ L, purpose }, index) => {
    const log = EventLog.fromEvents(events.slice(0, L), { dialect: 'seed' })
    const nodes = log.deriveNodeMessages()
    const messages = purpose === 'conversation'
      ? nodes.map((n) => n.message)
      : [...nodes.filter((n) => n.seq === 2).map((n) => n.message), ...REGION.map((s) => nodes.find((n) => n.seq === s)?.message as Message), INSTRUCTION]
    const base = { index, logRevisionAtDispatch: L, time: events[L]?.time ?? 0, purpose, provider: 'mock', model: 'mock-4k', messages, tools: TOOLS }
    return purpose === 'compaction'
      ? { ...base, maxTokens: 8192, outcome: L === 52 ? 'error' : 'stop' }
      : { ...base, outcome: L === 29 ? 'error' : 'stop' }
  }) as CapturedRequest[]
}
