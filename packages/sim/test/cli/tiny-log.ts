/**
 * A tiny valid seed-dialect log (15 events, one turn of two steps with a prune between them) and its
 * session header record. Final surface [2, 4, 9, 12], replaceGeneration 1, series epoch 1.
 */
const T0 = 1_700_000_000_000
const ROUTE = { provider: 'mock', model: 'mock-4k' }
const TOOLS = [{ name: 'read', description: 'Read a file.', parameters: { type: 'object' } }]
const toolResult = (text: string) => ({
  turn: 1,
  step: 1,
  message: {
    id: 'm-t1',
    role: 'user',
    content: [{ type: 'tool-result', toolCallId: 'call_1', content: [{ type: 'text', text }], isError: false }],
    source: { kind: 'tool', callId: 'call_1' },
  },
})

/** The session header record (first line of a harness log, not an event). */
export const TINY_HEADER = { type: 'session', version: 0, id: 'tiny-1', createdAt: T0 }

/** The 15 events, seq 0–14. */
export const TINY_EVENTS: object[] = [
  { type: 'turn/start', data: { turn: 1 } },
  { type: 'step/start', data: { turn: 1, step: 1 } },
  {
    type: 'user/message',
    data: { id: 'm-u1', role: 'user', content: [{ type: 'text', text: 'Read a.ts' }], source: { kind: 'user' } },
    surfaceOp: 'append',
  },
  { type: 'request/header', data: { header: { config: ROUTE, tools: TOOLS }, reason: 'initial' } },
  {
    type: 'assistant/message',
    data: {
      turn: 1,
      step: 1,
      message: {
        id: 'm-a1',
        role: 'assistant',
        content: [{ type: 'tool-call', id: 'call_1', name: 'read', arguments: '{"path":"a.ts"}' }],
        source: { kind: 'model', ...ROUTE },
      },
    },
    surfaceOp: 'append',
  },
  { type: 'tool/call', data: { turn: 1, step: 1, callId: 'call_1', name: 'read', arguments: '{"path":"a.ts"}' } },
  { type: 'tool/result', data: toolResult('x'.repeat(400)), surfaceOp: 'append', sourceEventSeqs: [5] },
  { type: 'step/end', data: { turn: 1, step: 1 } },
  { type: 'compaction/prune', data: { shadowedRange: { start: 6, end: 6 }, shadowedSeqs: [6], shadowedTokenCount: 112 } },
  {
    type: 'tool/result',
    data: toolResult('xxxx[pruned]'),
    surfaceOp: { op: 'replace', start: 6, end: 6 },
    sourceEventSeqs: [6],
  },
  { type: 'step/start', data: { turn: 1, step: 2 } },
  { type: 'request/header', data: { header: { config: ROUTE, tools: TOOLS }, reason: 'series' } },
  {
    type: 'assistant/message',
    data: {
      turn: 1,
      step: 2,
      message: { id: 'm-a2', role: 'assistant', content: [{ type: 'text', text: 'Done.' }], source: { kind: 'model', ...ROUTE } },
    },
    surfaceOp: 'append',
  },
  { type: 'step/end', data: { turn: 1, step: 2 } },
  { type: 'turn/end', data: { turn: 1, reason: { kind: 'completed' } } },
].map((event, seq) => ({ seq, time: T0 + 5 * (seq + 1), ...event }))
