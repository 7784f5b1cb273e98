/** Small builders of valid event drafts for unit tests. */
import { EventLog } from '../../src/log/event-log.ts'
import type { EventDraft } from '../../src/log/events.ts'
import type { ContentBlock } from '../../src/log/llm.ts'

const T = 1_700_000_000_000

/** A user/message append. */
export function user(text: string, extra: ContentBlock[] = []): EventDraft<'user/message'> {
  return { time: T, type: 'user/message', data: { id: `u-${text}` as never, role: 'user', content: [{ type: 'text', text }, ...extra], source: { kind: 'user' } }, surfaceOp: 'append' }
}

/** An assistant/message append with the given tool-call ids (text when none). */
export function assistant(callIds: string[] = [], turn = 1, step = 1): EventDraft<'assistant/message'> {
  const content: ContentBlock[] = callIds.length === 0
    ? [{ type: 'text', text: 'done' }]
    : callIds.map((id) => ({ type: 'tool-call', id: id as never, name: 'read', arguments: '{}' }))
  return { time: T, type: 'assistant/message', data: { turn, step, message: { id: `a-${callIds.join('-')}` as never, role: 'assistant', content, source: { kind: 'model', provider: 'mock', model: 'm' } } }, surfaceOp: 'append' }
}

/** A tool/result append answering `callId`. */
export function result(callId: string, text = 'ok', turn = 1, step = 1, sourceEventSeqs?: number[]): EventDraft<'tool/result'> {
  const d: EventDraft<'tool/result'> = {
    time: T, type: 'tool/result',
    data: { turn, step, message: { id: `t-${callId}` as never, role: 'user', content: [{ type: 'tool-result', toolCallId: callId as never, content: [{ type: 'text', text }], isError: false }], source: { kind: 'tool', callId: callId as never } } },
    surfaceOp: 'append',
  }
  if (sourceEventSeqs !== undefined) d.sourceEventSeqs = sourceEventSeqs as never
  return d
}

/** A log-only event of the given simple type. */
export function marker(type: 'turn/start' | 'turn/end' | 'step/start' | 'step/end' | 'session/end-seed', turn = 1, step = 1): EventDraft {
  switch (type) {
    case 'turn/start': return { time: T, type, data: { turn } }
    case 'turn/end': return { time: T, type, data: { turn, reason: { kind: 'completed' } } }
    case 'step/start': return { time: T, type, data: { turn, step } }
    case 'step/end': return { time: T, type, data: { turn, step } }
    case 'session/end-seed': return { time: T, type, data: {} }
  }
}

/** A checkpoint-like user/message replacing `start`…`end`, citing `cites`. */
export function replacement(start: number, end: number, cites: number[]): EventDraft<'user/message'> {
  return {
    time: T, type: 'user/message',
    data: { id: `ck-${start}-${end}` as never, role: 'user', content: [{ type: 'text', text: 'summary' }], source: { kind: 'plugin', plugin: 'compact', compactionId: 'cmp' } },
    surfaceOp: { op: 'replace', start: start as never, end: end as never }, sourceEventSeqs: cites as never,
  }
}

/** A seed-dialect EventLog holding `drafts`, appended in order. */
export function logOf(...drafts: EventDraft[]): EventLog {
  const log = new EventLog({ dialect: 'seed' })
  for (const d of drafts) log.append(d)
  return log
}
