/**
 * Seeded properties of image-offload selection (§6.3, INV-36, INV-38): over random surfaces of user,
 * system, assistant and tool-result nodes (images nested in tool results, earlier offloads, a
 * replacement that moves a later seq to an earlier position, an optional summary region), the
 * selection is exactly the first min(k, eligible) not-yet-offloaded occurrences in request order and
 * depth-first order, never assistant or system output, never an offloaded index, and the log accepts it.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { Seq } from '../../src/brand.ts'
import { EventLog } from '../../src/log/event-log.ts'
import type { AssistantMessage, ContentBlock, ToolResultMessage } from '../../src/log/llm.ts'
import { appendOffload, selectOffload } from '../../src/offload/select.ts'
import { fcParams } from '../support/seed.ts'

type Kind = 'user' | 'system' | 'assistant' | 'tool'
/** One generated surface node; `layout` is a tool result's inner shape: 'i' image, 't' text, n = nested result with n images. */
interface NodePlan { kind: Kind; images: number; layout: Array<'i' | 't' | number>; offload: boolean[]; inRegion: boolean }

const nodeArb: fc.Arbitrary<NodePlan> = fc.record({
  kind: fc.constantFrom<Kind>('user', 'system', 'assistant', 'tool'),
  images: fc.integer({ min: 0, max: 3 }),
  layout: fc.array(fc.oneof(fc.constant<'i'>('i'), fc.constant<'t'>('t'), fc.integer({ min: 0, max: 2 })), { maxLength: 5 }),
  offload: fc.array(fc.boolean(), { maxLength: 5 }),
  inRegion: fc.boolean(),
})

let imageCounter = 0
function image(): ContentBlock {
  const n = imageCounter++
  const attachmentId = `sha256:${n.toString(16).padStart(64, '0')}`
  return { type: 'image', attachment: { attachmentId, mediaType: 'image/png', bytes: 1, width: 1, height: 1, name: `p${n}.png` } }
}
const text = (t: string): ContentBlock => ({ type: 'text', text: t })
const assistantMessage = (id: string, content: ContentBlock[]): AssistantMessage =>
  ({ id: id as never, role: 'assistant', content, source: { kind: 'model', provider: 'mock', model: 'm' } })

/** What the test knows about a surface node independently of the core: its kind and its depth-first image count. */
interface Known { seq: number; kind: Kind; images: number; offloaded: Set<number>; inRegion: boolean }

function build(plans: readonly NodePlan[], replaceAt: number | null): { log: EventLog; known: Known[] } {
  const log = new EventLog({ dialect: 'seed' })
  log.append({ time: 0, type: 'turn/start', data: { turn: 1 } })
  const known: Known[] = []
  plans.forEach((plan, i) => {
    switch (plan.kind) {
      case 'user': {
        const content = [text(`u${i}`), ...Array.from({ length: plan.images }, image)]
        const data = { id: `u${i}` as never, role: 'user' as const, content, source: { kind: 'user' as const } }
        const e = log.append({ time: 0, type: 'user/message', data, surfaceOp: 'append' })
        known.push({ seq: e.seq, kind: 'user', images: plan.images, offloaded: new Set(), inRegion: plan.inRegion })
        return
      }
      case 'system': {
        const content = [text(`s${i}`), ...Array.from({ length: plan.images }, image)]
        const data = { id: `s${i}` as never, role: 'system' as const, content, source: { kind: 'plugin' as const, plugin: 'system-prompt' } }
        const e = log.append({ time: 0, type: 'system/message', data, surfaceOp: 'append' })
        known.push({ seq: e.seq, kind: 'system', images: plan.images, offloaded: new Set(), inRegion: plan.inRegion })
        return
      }
      case 'assistant': {
        const content = [text(`a${i}`), ...Array.from({ length: plan.images }, image)]
        const e = log.append({ time: 0, type: 'assistant/message', data: { turn: 1, step: 1, message: assistantMessage(`a${i}`, content) }, surfaceOp: 'append' })
        known.push({ seq: e.seq, kind: 'assistant', images: plan.images, offloaded: new Set(), inRegion: plan.inRegion })
        return
      }
      case 'tool': {
        const callId = `call_${i}` as never
        // The calling assistant message carries images too: they must never be selected.
        const calling = assistantMessage(`c${i}`, [{ type: 'tool-call', id: callId, name: 'read', arguments: '{}' }, image()])
        const a = log.append({ time: 0, type: 'assistant/message', data: { turn: 1, step: 1, message: calling }, surfaceOp: 'append' })
        known.push({ seq: a.seq, kind: 'assistant', images: 1, offloaded: new Set(), inRegion: plan.inRegion })
        let images = 0
        const inner: ContentBlock[] = plan.layout.map((part): ContentBlock => {
          if (part === 'i') { images++; return image() }
          if (part === 't') return text('out')
          images += part
          return { type: 'tool-result', toolCallId: 'nested' as never, content: Array.from({ length: part }, image) }
        })
        const message: ToolResultMessage = {
          id: `t${i}` as never, role: 'user', content: [{ type: 'tool-result', toolCallId: callId, content: inner }], source: { kind: 'tool', callId },
        }
        const e = log.append({ time: 0, type: 'tool/result', data: { turn: 1, step: 1, message }, surfaceOp: 'append' })
        known.push({ seq: e.seq, kind: 'tool', images, offloaded: new Set(), inRegion: plan.inRegion })
        return
      }
    }
  })
  // A replacement of one user node by a later-seq user node with two images: request order ≠ seq order.
  const userIndex = replaceAt === null ? -1 : known.findIndex((k, i) => k.kind === 'user' && i >= replaceAt % Math.max(1, known.length))
  const replaced = known[userIndex]
  if (replaced !== undefined) {
    const e = log.append({
      time: 0, type: 'user/message',
      data: { id: 'ck' as never, role: 'user', content: [text('checkpoint'), image(), image()], source: { kind: 'plugin', plugin: 'compact', compactionId: 'cmp' } },
      surfaceOp: { op: 'replace', start: replaced.seq as Seq, end: replaced.seq as Seq }, sourceEventSeqs: [replaced.seq as Seq],
    })
    known[userIndex] = { seq: e.seq, kind: 'user', images: 2, offloaded: new Set(), inRegion: replaced.inRegion }
  }
  // Earlier offloads of user/tool images, by each plan's mask (one event).
  const targets: Array<{ seq: Seq; imageIndexes: number[] }> = []
  known.forEach((k, i) => {
    if (k.kind !== 'user' && k.kind !== 'tool') return
    const mask = plans[Math.min(i, plans.length - 1)]?.offload ?? []
    const indexes = mask.map((on, idx) => (on ? idx : -1)).filter((idx) => idx >= 0 && idx < k.images)
    for (const idx of indexes) k.offloaded.add(idx)
    if (indexes.length > 0) targets.push({ seq: k.seq as Seq, imageIndexes: indexes })
  })
  if (targets.length > 0) log.append({ time: 0, type: 'image/offload', data: { targets } })
  return { log, known }
}

describe('selectOffload properties (§6.3, INV-38)', () => {
  it('§6.3: oldest-first in request order, depth-first ascending, only user/tool nodes, never offloaded, exactly min(k, available)', () => {
    fc.assert(fc.property(
      fc.array(nodeArb, { maxLength: 10, size: 'max' }), fc.option(fc.nat(20)), fc.integer({ min: 1, max: 6 }), fc.boolean(),
      (plans, replaceAt, k, useRegion) => {
        const { log, known } = build(plans, replaceAt)
        const request = log.deriveNodeMessages()
        expect(request.map((n) => n.seq)).toEqual(known.map((n) => n.seq))
        const region = useRegion ? new Set(known.filter((n) => n.inRegion).map((n) => n.seq)) : undefined
        // The reference: every eligible, not-yet-offloaded occurrence in request order, indexes ascending.
        const available: Array<[number, number]> = []
        for (const n of known) {
          if (n.kind !== 'user' && n.kind !== 'tool') continue
          if (region !== undefined && !region.has(n.seq)) continue
          for (let idx = 0; idx < n.images; idx++) if (!n.offloaded.has(idx)) available.push([n.seq, idx])
        }
        const targets = selectOffload(request, log, k, region)
        const flat = targets.flatMap((t) => t.imageIndexes.map((idx): [number, number] => [t.seq, idx]))
        expect(flat).toEqual(available.slice(0, k))
        expect(flat).toHaveLength(Math.min(k, available.length))
        const position = new Map(known.map((n, i) => [n.seq, i]))
        let last = -1
        for (const t of targets) {
          const node = known[position.get(t.seq) ?? -1]
          expect(node?.kind === 'user' || node?.kind === 'tool').toBe(true)
          expect(t.imageIndexes.length).toBeGreaterThan(0)
          expect(position.get(t.seq) ?? -1).toBeGreaterThan(last)
          last = position.get(t.seq) ?? -1
          t.imageIndexes.forEach((idx, j) => {
            expect(node?.offloaded.has(idx)).toBe(false)
            if (j > 0) expect(idx).toBeGreaterThan(t.imageIndexes[j - 1] ?? -1)
          })
          if (region !== undefined) expect(region.has(t.seq)).toBe(true)
        }
        if (targets.length === 0) {
          expect(available).toEqual([])
          return
        }
        // INV-36: the log accepts the selection, and it is then offloaded.
        const length = log.length
        appendOffload(log, targets, () => 1)
        expect(log.length).toBe(length + 1)
        for (const t of targets) for (const idx of t.imageIndexes) expect(log.offloadedIndexes(t.seq).has(idx)).toBe(true)
      },
    ), fcParams({ numRuns: 100 }))
  }, 60_000)
})
