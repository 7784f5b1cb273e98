/**
 * A generator of valid session logs for property tests: fast-check draws abstract operations and this
 * interpreter turns each into a valid event against a naive reference model of the surface (§1.5.1
 * taken literally: `indexOf` + `splice`). The model is independent of the core's incremental fold.
 */
import fc from 'fast-check'
import type { EventDraft } from '../../src/log/events.ts'
import type { ContentBlock } from '../../src/log/llm.ts'

/** The first event of every generated log: tool-result replacements need an open turn (§1.3). */
export const openTurn: EventDraft = { time: 1_700_000_000_000, type: 'turn/start', data: { turn: 1 } }

/** One abstract operation; numbers pick targets modulo what exists. */
export type Op =
  | { k: 'user'; images: number }
  | { k: 'system' }
  | { k: 'assistant'; calls: number }
  | { k: 'result'; pick: number; images: number }
  | { k: 'replace'; a: number; b: number }
  | { k: 'prune'; pick: number }
  | { k: 'offload'; pick: number }
  | { k: 'logonly'; which: number }

/** Arbitrary operation, weighted towards appends. */
export const opArb: fc.Arbitrary<Op> = fc.oneof(
  { arbitrary: fc.record({ k: fc.constant('user' as const), images: fc.integer({ min: 0, max: 2 }) }), weight: 4 },
  { arbitrary: fc.constant({ k: 'system' as const }), weight: 1 },
  { arbitrary: fc.record({ k: fc.constant('assistant' as const), calls: fc.integer({ min: 0, max: 3 }) }), weight: 4 },
  { arbitrary: fc.record({ k: fc.constant('result' as const), pick: fc.nat(), images: fc.integer({ min: 0, max: 1 }) }), weight: 5 },
  { arbitrary: fc.record({ k: fc.constant('replace' as const), a: fc.nat(), b: fc.nat() }), weight: 2 },
  { arbitrary: fc.record({ k: fc.constant('prune' as const), pick: fc.nat() }), weight: 2 },
  { arbitrary: fc.record({ k: fc.constant('offload' as const), pick: fc.nat() }), weight: 1 },
  { arbitrary: fc.record({ k: fc.constant('logonly' as const), which: fc.nat() }), weight: 3 },
)

/** The naive model: the spec's fold, written as plainly as possible. */
export interface NaiveModel {
  nodes: number[]
  replaceGeneration: number
  shadowed: Set<number>
  /** Pairing delta of every surface event by seq. */
  delta: Map<number, number>
  /** Image counts of user/tool nodes by seq, and the indexes offloaded so far. */
  images: Map<number, number>
  offloaded: Map<number, Set<number>>
  /** Calls requested but not yet answered, oldest first. */
  pending: string[]
  toolResults: Set<number>
  /** Data of each tool/result event by seq (for content-only prunes). */
  resultData: Map<number, EventDraft<'tool/result'>['data']>
}

/** A fresh, empty naive model. */
export function newModel(): NaiveModel {
  return { nodes: [], replaceGeneration: 0, shadowed: new Set(), delta: new Map(), images: new Map(), offloaded: new Map(), pending: [], toolResults: new Set(), resultData: new Map() }
}

/** Naive prefix balances over the model's surface (§4.1). */
export function naiveBalances(m: NaiveModel): number[] {
  const out = [0]
  for (const s of m.nodes) out.push((out[out.length - 1] ?? 0) + (m.delta.get(s) ?? 0))
  return out
}

function image(n: number): ContentBlock {
  const hex = n.toString(16).padStart(64, '0')
  return { type: 'image', attachment: { attachmentId: `sha256:${hex}`, mediaType: 'image/png', bytes: 100, width: 10, height: 10, name: `img-${n}.png` } }
}

/**
 * Turns `op` into the next event (seq = `seq`) and updates the model as the spec's fold would, or
 * returns null when the op has nothing to act on. Times advance by 5 ms per event.
 */
export function interpret(op: Op, seq: number, m: NaiveModel): EventDraft | null {
  const time = 1_700_000_000_000 + seq * 5
  switch (op.k) {
    case 'user': {
      const content: ContentBlock[] = [{ type: 'text', text: `user ${seq}` }]
      for (let i = 0; i < op.images; i++) content.push(image(seq * 10 + i))
      append(m, seq, 0)
      m.images.set(seq, op.images)
      return { time, type: 'user/message', data: { id: `u${seq}` as never, role: 'user', content, source: { kind: 'user' } }, surfaceOp: 'append' } as unknown as EventDraft
    }
    case 'system': {
      append(m, seq, 0)
      return { time, type: 'system/message', data: { id: `s${seq}` as never, role: 'system', content: [{ type: 'text', text: `system ${seq}` }], source: { kind: 'plugin', plugin: 'system-prompt' } }, surfaceOp: 'append' } as unknown as EventDraft
    }
    case 'assistant': {
      const content: ContentBlock[] = []
      for (let i = 0; i < op.calls; i++) {
        const id = `call-${seq}-${i}`
        m.pending.push(id)
        content.push({ type: 'tool-call', id: id as never, name: 'read', arguments: '{}' })
      }
      if (op.calls === 0) content.push({ type: 'text', text: `answer ${seq}` })
      append(m, seq, op.calls)
      return { time, type: 'assistant/message', data: { turn: 1, step: 1, message: { id: `a${seq}` as never, role: 'assistant', content, source: { kind: 'model', provider: 'mock', model: 'm' } } }, surfaceOp: 'append', sourceEventSeqs: [] } as unknown as EventDraft
    }
    case 'result': {
      if (m.pending.length === 0) return null
      const [callId] = m.pending.splice(op.pick % m.pending.length, 1) as [string]
      const inner: ContentBlock[] = [{ type: 'text', text: `result ${seq} `.repeat(3) }]
      for (let i = 0; i < op.images; i++) inner.push(image(seq * 10 + i))
      append(m, seq, -1)
      m.images.set(seq, op.images)
      m.toolResults.add(seq)
      const data = { turn: 1, step: 1, message: { id: `t${seq}` as never, role: 'user' as const, content: [{ type: 'tool-result' as const, toolCallId: callId as never, content: inner, isError: false }] as never, source: { kind: 'tool' as const, callId: callId as never } } }
      m.resultData.set(seq, data)
      return { time, type: 'tool/result', data, surfaceOp: 'append' } as unknown as EventDraft
    }
    case 'replace': {
      if (m.nodes.length === 0) return null
      const i = Math.min(op.a % m.nodes.length, op.b % m.nodes.length)
      const j = Math.max(op.a % m.nodes.length, op.b % m.nodes.length)
      const start = m.nodes[i] as number
      const end = m.nodes[j] as number
      const shadowed = m.nodes.splice(i, j - i + 1, seq)
      for (const s of shadowed) m.shadowed.add(s)
      m.replaceGeneration++
      m.delta.set(seq, 0)
      return {
        time, type: 'user/message',
        data: { id: `c${seq}` as never, role: 'user', content: [{ type: 'text', text: `checkpoint ${seq}` }], source: { kind: 'plugin', plugin: 'compact', compactionId: `cmp-${seq}` } },
        surfaceOp: { op: 'replace', start, end }, sourceEventSeqs: [...shadowed],
      } as unknown as EventDraft
    }
    case 'prune': {
      const candidates = m.nodes.filter((s) => m.toolResults.has(s))
      if (candidates.length === 0) return null
      const target = candidates[op.pick % candidates.length] as number
      const old = m.resultData.get(target)
      if (old === undefined) return null
      const pos = m.nodes.indexOf(target)
      m.nodes.splice(pos, 1, seq)
      m.shadowed.add(target)
      m.replaceGeneration++
      m.delta.set(seq, -1)
      m.toolResults.add(seq)
      m.images.set(seq, m.images.get(target) ?? 0)
      const block = old.message.content[0]
      const data = { ...old, message: { ...old.message, content: [{ ...block, content: [{ type: 'text', text: `pruned ${seq}` }] }] } } as typeof old
      m.resultData.set(seq, data)
      // A pruned copy keeps no images in this generator: its inner content is one text block.
      m.images.set(seq, 0)
      return { time, type: 'tool/result', data, surfaceOp: { op: 'replace', start: target, end: target }, sourceEventSeqs: [target] } as unknown as EventDraft
    }
    case 'offload': {
      const candidates = m.nodes.filter((s) => (m.images.get(s) ?? 0) > (m.offloaded.get(s)?.size ?? 0))
      if (candidates.length === 0) return null
      const target = candidates[op.pick % candidates.length] as number
      const done = m.offloaded.get(target) ?? new Set<number>()
      const total = m.images.get(target) ?? 0
      let idx = 0
      while (done.has(idx)) idx++
      if (idx >= total) return null
      done.add(idx)
      m.offloaded.set(target, done)
      return { time, type: 'image/offload', data: { targets: [{ seq: target, imageIndexes: [idx] }] } } as unknown as EventDraft
    }
    case 'logonly': {
      const which = op.which % 3
      if (which === 0) return { time, type: 'assistant/chunk', data: { turn: 1, step: 1, chunk: { type: 'text-delta', index: 0, text: 'x' } } } as unknown as EventDraft
      if (which === 1) return { time, type: 'request/header', data: { header: { config: { provider: 'mock', model: 'm' } }, reason: 'series' } } as unknown as EventDraft
      return { time, type: 'llm/retry-started', data: { retryId: 'r', turn: 1, step: 1, retry: 1 } } as unknown as EventDraft
    }
  }
}

function append(m: NaiveModel, seq: number, delta: number): void {
  m.nodes.push(seq)
  m.delta.set(seq, delta)
}
