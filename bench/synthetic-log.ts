/**
 * A deterministic generator of valid seed-dialect session logs for benchmarks: turns of 1–3 steps
 * (step/start, user/message on a turn's first step, request/header when one is due, assistant/chunk
 * stream, assistant/message with 0–2 tool calls, tool/call + tool/result per call, step/end, turn/end)
 * and, about every 50 events, a prune pair at a pre-step (compaction/prune, then a content-only
 * tool/result replacement of the oldest unpruned tool/result node; protocol §1.4.9, §1.4.17, §5.4).
 * The same seed and count always give the same events, and a shorter log is a prefix of a longer one.
 */
import { CallId, MessageId, Seq, type LogEvent, type SessionEvent, type ToolResultMessage } from '@compaction-sim/core'

/** A 32-bit seeded PRNG (mulberry32): same seed, same sequence of floats in [0, 1). */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** Options of `syntheticLog`. */
export interface SyntheticLogOptions {
  /** uint32 seed of the PRNG. */
  seed: number
  /** Exact number of events returned (the log is cut after the event with seq `eventCount - 1`). */
  eventCount: number
  /** Events between prune pairs, at least; a prune waits for the next pre-step. Default 50. */
  pruneEveryEvents?: number
}

const TIME_START_MS = 1_700_000_000_000
const TIME_STEP_MS = 5
const PROVIDER = 'mock'
const MODEL = 'mock-4k'
const TOOLS = [{
  name: 'read',
  description: 'Read a UTF-8 text file from the workspace.',
  parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
}]
const WORDS = [
  'the', 'test', 'fails', 'because', 'float', 'sum', 'compare', 'strict', 'equality', 'helper', 'module', 'returns',
  'value', 'expected', 'received', 'function', 'export', 'const', 'number', 'string', 'array', 'object', 'path', 'file',
]
const STEPS_PER_TURN_MAX = 3
const TOOL_CALLS_PER_STEP_MAX = 2

/**
 * Builds exactly `eventCount` events of a valid seed-dialect log (every prefix is itself valid).
 * Bounded: each generated turn adds at least six events, so the loop ends after at most `eventCount` turns.
 */
export function syntheticLog(options: SyntheticLogOptions): LogEvent[] {
  const random = mulberry32(options.seed)
  const pruneEveryEvents = options.pruneEveryEvents ?? 50
  const events: LogEvent[] = []
  const pruneCandidates: Array<SessionEvent<'tool/result'>> = []
  let headerDue: 'initial' | 'series' | null = 'initial'
  let lastPruneEnd = 0
  let callCount = 0
  let messageCount = 0

  const int = (lo: number, hi: number): number => lo + Math.floor(random() * (hi - lo + 1))
  const text = (charsMin: number, charsMax: number): string => {
    const chars = int(charsMin, charsMax)
    const words: string[] = []
    let length = 0
    while (length < chars) {
      const word = WORDS[int(0, WORDS.length - 1)] ?? 'x'
      words.push(word)
      length += word.length + 1
    }
    return words.join(' ')
  }
  const push = <E extends LogEvent>(event: Omit<E, 'seq' | 'time'>): E => {
    const seq = events.length
    const full = { seq: Seq(seq), time: TIME_START_MS + TIME_STEP_MS * seq, ...event } as unknown as E
    events.push(full)
    return full
  }
  const messageId = (prefix: string): MessageId => MessageId(`${prefix}-${++messageCount}`)

  for (let turn = 1; events.length < options.eventCount; turn++) {
    push<SessionEvent<'turn/start'>>({ type: 'turn/start', data: { turn } })
    const stepsInTurn = int(1, STEPS_PER_TURN_MAX)
    for (let step = 1; step <= stepsInTurn; step++) {
      const pruned = pruneCandidates[0]
      if (events.length - lastPruneEnd >= pruneEveryEvents && pruned !== undefined) {
        pruneCandidates.shift()
        prunePair(pruned)
        lastPruneEnd = events.length
        headerDue ??= 'series'
      }
      push<SessionEvent<'step/start'>>({ type: 'step/start', data: { turn, step } })
      if (step === 1) {
        push<SessionEvent<'user/message'>>({
          type: 'user/message',
          data: { id: messageId('m-u'), role: 'user', content: [{ type: 'text', text: text(20, 200) }], source: { kind: 'user' } },
          surfaceOp: 'append',
        })
      }
      if (headerDue !== null) {
        push<SessionEvent<'request/header'>>({
          type: 'request/header',
          data: { header: { config: { provider: PROVIDER, model: MODEL }, tools: TOOLS }, reason: headerDue },
        })
        if (headerDue === 'initial') {
          push<SessionEvent<'request/context'>>({
            type: 'request/context', data: { provider: PROVIDER, model: MODEL, contextWindow: 128_000 },
          })
        }
        headerDue = null
      }
      const calls = step < stepsInTurn ? int(1, TOOL_CALLS_PER_STEP_MAX) : 0
      assistantStep(turn, step, calls)
      push<SessionEvent<'step/end'>>({ type: 'step/end', data: { turn, step } })
    }
    push<SessionEvent<'turn/end'>>({ type: 'turn/end', data: { turn, reason: { kind: 'completed' } } })
  }
  return events.slice(0, options.eventCount)

  function assistantStep(turn: number, step: number, calls: number): void {
    const reply = text(40, 400)
    const toolCalls = Array.from({ length: calls }, () => {
      const id = CallId(`call_${++callCount}`)
      return { type: 'tool-call' as const, id, name: 'read', arguments: JSON.stringify({ path: `src/file-${callCount}.ts` }) }
    })
    const chunkSeqs: Seq[] = []
    chunkSeqs.push(push<SessionEvent<'assistant/chunk'>>({
      type: 'assistant/chunk', data: { turn, step, chunk: { type: 'text-delta', index: 0, text: reply } },
    }).seq)
    for (const [k, call] of toolCalls.entries()) {
      chunkSeqs.push(push<SessionEvent<'assistant/chunk'>>({
        type: 'assistant/chunk',
        data: { turn, step, chunk: { type: 'tool-call-delta', index: k + 1, id: call.id, name: call.name, argumentsDelta: call.arguments } },
      }).seq)
    }
    chunkSeqs.push(push<SessionEvent<'assistant/chunk'>>({
      type: 'assistant/chunk',
      data: { turn, step, chunk: { type: 'finish', reason: { kind: calls > 0 ? 'tool-calls' : 'stop' } } },
    }).seq)
    push<SessionEvent<'assistant/message'>>({
      type: 'assistant/message',
      data: {
        turn, step,
        message: {
          id: messageId('m-a'), role: 'assistant', content: [{ type: 'text', text: reply }, ...toolCalls],
          source: { kind: 'model', provider: PROVIDER, model: MODEL },
        },
      },
      surfaceOp: 'append',
      sourceEventSeqs: chunkSeqs,
    })
    for (const call of toolCalls) {
      const callEvent = push<SessionEvent<'tool/call'>>({
        type: 'tool/call', data: { turn, step, callId: call.id, name: call.name, arguments: call.arguments },
      })
      const message: ToolResultMessage = {
        id: messageId('m-t'), role: 'user',
        content: [{ type: 'tool-result', toolCallId: call.id, content: [{ type: 'text', text: text(200, 4000) }], isError: false }],
        source: { kind: 'tool', callId: call.id },
      }
      pruneCandidates.push(push<SessionEvent<'tool/result'>>({
        type: 'tool/result', data: { turn, step, message }, surfaceOp: 'append', sourceEventSeqs: [callEvent.seq],
      }))
    }
  }

  function prunePair(node: SessionEvent<'tool/result'>): void {
    const [block] = node.data.message.content
    const inner = block.content[0]
    const original = inner !== undefined && inner.type === 'text' && 'text' in inner ? String(inner.text) : ''
    push<SessionEvent<'compaction/prune'>>({
      type: 'compaction/prune',
      data: {
        shadowedRange: { start: node.seq, end: node.seq },
        shadowedSeqs: [node.seq],
        shadowedTokenCount: Math.ceil(original.length / 4) + 4 + 4 + 4, // §2.2: text + tool-result block + message
      },
    })
    const content = [{ type: 'text' as const, text: `${original.slice(0, 64)}\n[pruned ${original.length - 64} characters]` }]
    const message: ToolResultMessage = { ...node.data.message, content: [{ ...block, content }] }
    push<SessionEvent<'tool/result'>>({
      type: 'tool/result',
      data: { ...node.data, message },
      surfaceOp: { op: 'replace', start: node.seq, end: node.seq },
      sourceEventSeqs: [node.seq],
    })
  }
}
