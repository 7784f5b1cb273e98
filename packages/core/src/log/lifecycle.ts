/**
 * The log side of lifecycle rules (§11): end-seed boundaries, crash-repair closers (§11.4) and the
 * recognition of repair runs (§12.0).
 */
import type { CallId, Seq } from '../brand.ts'
import { MessageId } from '../brand.ts'
import type { EventDraft, LogEvent, SessionEvent } from './events.ts'
import type { ContentBlock, ToolResultMessage } from './llm.ts'

/** Error code of a synthetic result for a call whose `tool/call` was logged (§11.4, Appendix A). */
export const TOOL_OUTCOME_UNKNOWN = 'TOOL_OUTCOME_UNKNOWN'
/** Error code of a synthetic result for a call that was never dispatched (§11.4, Appendix A). */
export const TOOL_NOT_STARTED = 'TOOL_NOT_STARTED'
/** Synthetic result text for `TOOL_OUTCOME_UNKNOWN` ([project constant], §11.4). */
export const TOOL_OUTCOME_UNKNOWN_TEXT = 'The tool call was interrupted after it started and its outcome was not recorded. Check the affected state before running it again.'
/** Synthetic result text for `TOOL_NOT_STARTED` ([project constant], §11.4). */
export const TOOL_NOT_STARTED_TEXT = 'The tool call was interrupted before it started. Run it again if it is still needed.'

/** True when `event` is a repair closer of §12.0: a synthetic repair result, a step/end, or an interrupted turn/end. */
export function isRepairCloser(event: LogEvent): boolean {
  const e = event as SessionEvent
  switch (e.type) {
    case 'tool/result': {
      const code = e.data.error?.code
      return e.surfaceOp === 'append' && (code === TOOL_NOT_STARTED || code === TOOL_OUTCOME_UNKNOWN)
    }
    case 'step/end':
      return true
    case 'turn/end':
      return e.data.reason.kind === 'interrupted'
    default:
      return false
  }
}

/**
 * The repair run before the end-seed at `endSeedSeq` (§12.0): the maximal run of repair closers
 * immediately before it, as `{first, last}` seqs, or null when the end-seed is not preceded by one.
 */
export function repairRunBefore(events: readonly LogEvent[], endSeedSeq: number): { first: Seq; last: Seq } | null {
  let first = endSeedSeq
  while (first > 0) {
    const prev = events[first - 1]
    if (prev === undefined || !isRepairCloser(prev)) break
    first--
  }
  return first === endSeedSeq ? null : { first: first as Seq, last: (endSeedSeq - 1) as Seq }
}

/**
 * The closers a restore appends when a stored log ends inside an open turn (§11.4): a synthetic
 * result for each unanswered tool call of the open turn (transcript order), `step/end` if a step is
 * open, then `turn/end {interrupted}`. Times equal the last stored event's time. Returns [] when no
 * turn is open. Pure: reads the events, returns drafts whose seqs continue the log.
 */
export function repairClosers(events: readonly LogEvent[]): SessionEvent[] {
  let turnStartIndex = -1
  for (let i = events.length - 1; i >= 0; i--) {
    const t = events[i]?.type
    if (t === 'turn/end') return []
    if (t === 'turn/start') { turnStartIndex = i; break }
  }
  if (turnStartIndex < 0) return []
  const turnStart = events[turnStartIndex] as SessionEvent<'turn/start'>
  const turn = turnStart.data.turn
  const time = events[events.length - 1]?.time ?? turnStart.time
  const calls: Array<{ callId: CallId; step: number }> = []
  const answered = new Set<string>()
  const logged = new Map<string, Seq>()
  let openStep: number | null = null
  for (let i = turnStartIndex + 1; i < events.length; i++) {
    const e = events[i] as SessionEvent
    switch (e.type) {
      case 'step/start': openStep = e.data.step; break
      case 'step/end': openStep = null; break
      case 'assistant/message':
        for (const b of e.data.message.content as ContentBlock[]) {
          if (b.type === 'tool-call' && typeof b['id'] === 'string') calls.push({ callId: b['id'] as CallId, step: e.data.step })
        }
        break
      case 'tool/call': logged.set(e.data.callId, e.seq); break
      case 'tool/result': if (e.surfaceOp === 'append') answered.add(e.data.message.source.callId); break
      default: break
    }
  }
  const out: SessionEvent[] = []
  const push = (draft: EventDraft): void => { out.push({ ...draft, seq: (events.length + out.length) as Seq } as SessionEvent) }
  for (const { callId, step } of calls) {
    if (answered.has(callId)) continue
    answered.add(callId)
    const callSeq = logged.get(callId)
    const seq = events.length + out.length
    const unknown = callSeq !== undefined
    const message: ToolResultMessage = {
      id: MessageId(`interrupted-${callId}-${seq}`),
      role: 'user',
      content: [{ type: 'tool-result', toolCallId: callId, isError: true, content: [{ type: 'text', text: unknown ? TOOL_OUTCOME_UNKNOWN_TEXT : TOOL_NOT_STARTED_TEXT }] }],
      source: { kind: 'tool', callId },
    }
    const error = unknown ? { name: 'ToolOutcomeUnknownError', code: TOOL_OUTCOME_UNKNOWN } : { name: 'ToolNotStartedError', code: TOOL_NOT_STARTED }
    push({ time, type: 'tool/result', data: { turn, step, message, error }, surfaceOp: 'append', ...(unknown ? { sourceEventSeqs: [callSeq] } : {}) })
  }
  if (openStep !== null) push({ time, type: 'step/end', data: { turn, step: openStep } })
  push({ time, type: 'turn/end', data: { turn, reason: { kind: 'interrupted' } } })
  return out
}
