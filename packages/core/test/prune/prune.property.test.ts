/**
 * Seeded properties of the pruner (§5.3, §5.4; INV-20–INV-23): for random block mixes with astral
 * characters, offload placeholders and non-text blocks, `pruneContent` keeps exactly head + marker +
 * tail of the measured text within the threshold, preserves every other block in place, never emits a
 * lone surrogate, and is idempotent; `pruneSession` over random logs writes exactly those pairs and an
 * immediate second pass writes nothing.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { Seq } from '../../src/brand.ts'
import { PRUNE_MARKER } from '../../src/constants.ts'
import { EventLog } from '../../src/log/event-log.ts'
import type { SessionEvent } from '../../src/log/events.ts'
import type { ContentBlock, ImageAttachmentRef, ToolResultMessage } from '../../src/log/llm.ts'
import { fixedPrice } from '../../src/meter/price.ts'
import { countImages, harnessReadOnlyPath, imageOffloadProjection, offloadPlaceholder } from '../../src/offload/projection.ts'
import { resolvePruneConfig, type PruneSpec } from '../../src/prune/config.ts'
import { isMeasuredTextBlock, measuredChars, pruneContent } from '../../src/prune/content.ts'
import { pruneSession } from '../../src/prune/session.ts'
import { fcParams } from '../support/seed.ts'

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/

/** Every string inside a JSON-like value. */
function stringsOf(value: unknown, out: string[] = []): string[] {
  if (typeof value === 'string') out.push(value)
  else if (Array.isArray(value)) for (const v of value) stringsOf(v, out)
  else if (typeof value === 'object' && value !== null) for (const v of Object.values(value)) stringsOf(v, out)
  return out
}

const ref = (n: number, named: boolean): ImageAttachmentRef => {
  const r: ImageAttachmentRef = { attachmentId: `sha256:${n.toString(16).padStart(64, '0')}`, mediaType: 'image/png', bytes: 100, width: 10, height: 10 }
  if (named) r.name = `img-${n}.png`
  return r
}

const pieceArb = fc.constantFrom('a', 'b', 'Z', ' ', '\n', 'é', 'e\u0301', '😀', '𝄞', '👩\u200d💻', '中', '\u{10FFFF}')
const textArb: fc.Arbitrary<string> = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 120, size: 'max' }),
  fc.array(pieceArb, { maxLength: 140, size: 'max' }).map((a) => a.join('')),
)

const imageArb: fc.Arbitrary<ContentBlock> = fc.record({ n: fc.nat(1000), named: fc.boolean() })
  .map(({ n, named }) => ({ type: 'image', attachment: ref(n, named) }))

const placeholderArb: fc.Arbitrary<ContentBlock> = fc.record({ n: fc.nat(1000), named: fc.boolean(), path: fc.boolean() })
  .map(({ n, named, path }) => {
    const r = ref(n, named)
    return { type: 'text', text: offloadPlaceholder(r, path ? harnessReadOnlyPath(r) : undefined) }
  })

/** Top-level blocks of a tool result: mostly text, with every other kind mixed in. */
const blockArb: fc.Arbitrary<ContentBlock> = fc.oneof(
  { weight: 8, arbitrary: textArb.map((text): ContentBlock => ({ type: 'text', text })) },
  { weight: 2, arbitrary: placeholderArb },
  { weight: 2, arbitrary: imageArb },
  { weight: 1, arbitrary: textArb.map((text): ContentBlock => ({ type: 'reasoning', text })) },
  { weight: 1, arbitrary: fc.constant<ContentBlock>({ type: 'tool-call', id: 'call_x' as never, name: 'grep', arguments: '{}' }) },
  { weight: 1, arbitrary: textArb.map((text): ContentBlock => ({ type: 'tool-result', toolCallId: 'n' as never, content: [{ type: 'text', text }] })) },
  { weight: 1, arbitrary: textArb.map((payload): ContentBlock => ({ type: 'custom', payload })) },
)

const MARKERS = [PRUNE_MARKER, '✂', '«😀»']

/** A valid spec: threshold = head + codePoints(marker) + tail + slack. */
const specArb: fc.Arbitrary<PruneSpec> = fc.record({
  marker: fc.constantFrom(...MARKERS), head: fc.nat(40), tail: fc.nat(40), slack: fc.nat(60),
}).map(({ marker, head, tail, slack }) => resolvePruneConfig(
  { thresholdChars: head + Array.from(marker).length + tail + slack, headChars: head, tailChars: tail }, marker,
))

/** The §5.3 retained text of the first `p` measured code points: head part, marker once past the head, tail part. */
function retainedPrefix(cps: readonly string[], p: number, spec: PruneSpec): string {
  const removedStart = spec.headChars
  const removedEnd = cps.length - spec.tailChars
  return cps.slice(0, Math.min(p, removedStart)).join('') + (p > removedStart ? spec.marker : '') +
    (p > removedEnd ? cps.slice(removedEnd, p).join('') : '')
}

/** The measured text seen before each non-measured block, plus the whole measured text at the end. */
function layout(blocks: readonly ContentBlock[]): { before: string[]; others: ContentBlock[]; text: string } {
  const before: string[] = []
  const others: ContentBlock[] = []
  let text = ''
  for (const b of blocks) {
    if (isMeasuredTextBlock(b)) text += b.text
    else {
      before.push(text)
      others.push(b)
    }
  }
  return { before, others, text }
}

describe('pruneContent properties (§5.3, INV-22)', () => {
  it('§5.3: within the threshold and strictly smaller; exactly head + marker + tail; other blocks kept in place; no lone surrogate; idempotent', () => {
    fc.assert(fc.property(fc.array(blockArb, { maxLength: 8, size: 'max' }), specArb, (blocks, spec) => {
      const input = layout(blocks)
      const cps = Array.from(input.text)
      const total = measuredChars(blocks)
      expect(total).toBe(cps.length)
      const out = pruneContent(blocks, spec)
      if (total <= spec.thresholdChars) {
        expect(out).toBeNull()
        return
      }
      expect(out).not.toBeNull()
      const blocksOut = out ?? []
      const after = measuredChars(blocksOut)
      expect(after).toBeLessThanOrEqual(spec.thresholdChars)
      expect(after).toBeLessThan(total)
      const output = layout(blocksOut)
      // The measured text is the §5.3 head, one marker, and the tail (so the marker appears exactly once).
      expect(output.text).toBe(retainedPrefix(cps, cps.length, spec))
      expect(after).toBe(spec.headChars + Array.from(spec.marker).length + spec.tailChars)
      // Non-measured blocks (placeholders included) are the same objects, in order, at the same retained-text offsets.
      expect(output.others.length).toBe(input.others.length)
      output.others.forEach((b, i) => expect(b).toBe(input.others[i]))
      let p = 0
      const expectedBefore: string[] = []
      for (const b of blocks) {
        if (isMeasuredTextBlock(b)) p += Array.from(b.text).length
        else expectedBefore.push(retainedPrefix(cps, p, spec))
      }
      expect(output.before).toEqual(expectedBefore)
      for (const s of stringsOf(blocksOut)) expect(LONE_SURROGATE.test(s)).toBe(false)
      expect(blocksOut.some((b) => b.type === 'text' && b['text'] === '')).toBe(false)
      expect(pruneContent(blocksOut, spec)).toBeNull()
    }), fcParams({ numRuns: 100 }))
  }, 60_000)
})

interface ResultPlan { inner: ContentBlock[]; offload: boolean[]; withUser: boolean }

const planArb: fc.Arbitrary<ResultPlan[]> = fc.array(
  fc.record({ inner: fc.array(blockArb, { maxLength: 6, size: 'max' }), offload: fc.array(fc.boolean(), { maxLength: 4 }), withUser: fc.boolean() }),
  { maxLength: 6, size: 'max' },
)

/** A seed log in an open turn: per plan an optional user message, an assistant call, its tool result; then one offload of the masked images. */
function buildLog(plans: readonly ResultPlan[]): EventLog {
  const log = new EventLog({ dialect: 'seed' })
  log.append({ time: 0, type: 'turn/start', data: { turn: 1 } })
  log.append({ time: 0, type: 'step/start', data: { turn: 1, step: 1 } })
  const targets: Array<{ seq: Seq; imageIndexes: number[] }> = []
  plans.forEach((plan, i) => {
    const callId = `call_${i}` as never
    if (plan.withUser) {
      // A long user message is never a prune candidate (§5.4: tool results only).
      const data = { id: `u${i}` as never, role: 'user' as const, content: [{ type: 'text' as const, text: 'x'.repeat(9000) }], source: { kind: 'user' as const } }
      log.append({ time: 0, type: 'user/message', data, surfaceOp: 'append' })
    }
    log.append({
      time: 0, type: 'assistant/message',
      data: { turn: 1, step: 1, message: { id: `a${i}` as never, role: 'assistant', content: [{ type: 'tool-call', id: callId, name: 'read', arguments: '{}' }], source: { kind: 'model', provider: 'mock', model: 'm' } } },
      surfaceOp: 'append',
    })
    const message: ToolResultMessage = {
      id: `t${i}` as never, role: 'user', source: { kind: 'tool', callId },
      content: [{ type: 'tool-result', toolCallId: callId, content: plan.inner, isError: i % 2 === 0 }],
    }
    const e = log.append({ time: 0, type: 'tool/result', data: { turn: 1, step: 1, message, meta: { i } }, surfaceOp: 'append' })
    const images = countImages(message.content)
    const indexes = plan.offload.map((on, k) => (on ? k : -1)).filter((k) => k >= 0 && k < images)
    if (indexes.length > 0) targets.push({ seq: e.seq, imageIndexes: indexes })
  })
  if (targets.length > 0) log.append({ time: 0, type: 'image/offload', data: { targets } })
  return log
}

describe('pruneSession properties (§5.4, INV-20–INV-23)', () => {
  it('§5.4: prunes exactly the over-threshold projected results in surface order, as adjacent exact pairs; a second pass writes nothing', () => {
    fc.assert(fc.property(planArb, specArb, (plans, spec) => {
      const log = buildLog(plans)
      const before = log.length
      const expected: Array<{ seq: number; projected: ToolResultMessage; inner: ContentBlock[] }> = []
      for (const seq of log.nodes) {
        const e = log.event(seq) as SessionEvent
        if (e.type !== 'tool/result') continue
        const projected = imageOffloadProjection(e.data.message, log.offloadedIndexes(seq))
        const inner = pruneContent(projected.content[0].content, spec)
        if (inner !== null) expected.push({ seq, projected, inner })
      }
      let t = 1000
      const res = pruneSession(log, spec, () => t++)
      expect(res.pruned.map((p) => p.originalSeq)).toEqual(expected.map((x) => x.seq))
      expect(log.length).toBe(before + 2 * expected.length)
      let removed = 0
      res.pruned.forEach((p, i) => {
        const want = expected[i]
        if (want === undefined) throw new Error('unreachable')
        const s = p.originalSeq
        expect(p.replacementSeq).toBe(before + 2 * i + 1)
        const metering = log.event(p.replacementSeq - 1) as SessionEvent
        const replacement = log.event(p.replacementSeq) as SessionEvent<'tool/result'>
        const original = log.event(s) as SessionEvent<'tool/result'>
        // INV-20 adjacency and shape; INV-21 price of the projection.
        expect(metering).toEqual({
          seq: p.replacementSeq - 1, time: 1000 + 2 * i, type: 'compaction/prune',
          data: { shadowedRange: { start: s, end: s }, shadowedSeqs: [s], shadowedTokenCount: fixedPrice(want.projected) },
        })
        expect(replacement.surfaceOp).toEqual({ op: 'replace', start: s, end: s })
        expect(replacement.sourceEventSeqs).toEqual([s])
        // §1.4.9 content-only; INV-22 exact content.
        const block = original.data.message.content[0]
        expect(replacement.data).toEqual({ ...original.data, message: { ...original.data.message, content: [{ ...block, content: want.inner }] } })
        const inner = replacement.data.message.content[0].content
        expect(p.callId).toBe(block.toolCallId)
        expect(p.charsBefore).toBe(measuredChars(want.projected.content[0].content))
        expect(p.charsAfter).toBe(measuredChars(inner))
        expect(p.charsAfter).toBeLessThanOrEqual(spec.thresholdChars)
        expect(p.charsAfter).toBeLessThan(p.charsBefore)
        // INV-39: offloaded images never reappear in a replacement.
        expect(countImages(inner)).toBe(countImages(want.projected.content))
        for (const str of stringsOf(replacement.data)) expect(LONE_SURROGATE.test(str)).toBe(false)
        removed += p.charsBefore - p.charsAfter
      })
      expect(res.charsRemoved).toBe(removed)
      // §5.4 rule 5 / INV-23: convergence in one pass.
      const length = log.length
      expect(pruneSession(log, spec, () => 0)).toEqual({ pruned: [], charsRemoved: 0 })
      expect(log.length).toBe(length)
    }), fcParams({ numRuns: 60 }))
  }, 60_000)
})
