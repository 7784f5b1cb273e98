/**
 * §12.3 Pruning: INV-20 … INV-24 (INV-25, the pressure half of pruning, lives with the policy checks). A prune
 * is a metering record (`compaction/prune`) immediately followed by its one-node `tool/result` replacement
 * (§5.4); the content is re-derived with core's pure `pruneContent` under the run's pruner spec (the manifest's,
 * else the §5.1 defaults with the dialect's marker).
 */
import {
  isOffloadPlaceholder, jsonEqual, measuredChars, pruneContent,
  type ContentBlock, type LogEvent, type Message, type PruneSpec, type SessionEvent,
} from '@compaction-sim/core'
import type { CheckerModel } from './model.ts'
import { at, blockText } from './support.ts'
import type { InvariantCheck } from './types.ts'

type Check = InvariantCheck<CheckerModel>

/** The inner content of a tool-result message (the blocks inside its single tool-result block), or null. */
export function innerContent(message: Message | null): ContentBlock[] | null {
  const block = message?.content[0]
  if (block === undefined || block.type !== 'tool-result') return null
  const inner: unknown = (block as Record<string, unknown>)['content']
  return Array.isArray(inner) ? (inner as ContentBlock[]) : null
}

/** The replace op of a tool/result event, or null for an append. */
function resultReplace(e: LogEvent): { start: number; end: number } | null {
  if (e.type !== 'tool/result' || !('surfaceOp' in e)) return null
  const op = e.surfaceOp
  return typeof op === 'object' ? op : null
}

/** INV-20: every prune record names one node and is followed by exactly its replacement (torn-final exempt). */
const inv20: Check = {
  id: 'INV-20',
  family: 'pruning',
  statement: 'Prune adjacency and shape: compaction/prune names one node s with shadowedRange {s, s}, and the next event is the tool/result replacement of exactly s citing [s] (exempt: torn-final prune).',
  create: (_ctx, r) => ({
    types: ['compaction/prune'],
    before: (event) => {
      const e = event as SessionEvent<'compaction/prune'>
      const s = e.data.shadowedSeqs[0]
      if (s !== undefined && (e.data.shadowedRange.start !== s || e.data.shadowedRange.end !== s)) {
        r.violation(e.seq, `shadowedRange ${e.data.shadowedRange.start}…${e.data.shadowedRange.end} must be {start: ${s}, end: ${s}}`)
      }
    },
    input: (item, m) => {
      const prev = m.prevItem
      if (prev === null || prev.duplicate || prev.event?.type !== 'compaction/prune' || prev.tornFinal) return
      const s = (prev.event as SessionEvent<'compaction/prune'>).data.shadowedSeqs[0]
      const e = item.duplicate ? null : item.event
      const op = e === null ? null : resultReplace(e)
      const cited = e !== null && 'sourceEventSeqs' in e ? e.sourceEventSeqs : undefined
      if (op === null || op.start !== s || op.end !== s || cited === undefined || cited.length !== 1 || cited[0] !== s) {
        r.violation(item.seq, `the event after compaction/prune ${at(prev.seq)} is ${item.type}${op === null ? '' : ` replacing ${op.start}…${op.end}`}, not the tool/result replacement of node ${String(s)} citing [${String(s)}]`)
      }
    },
    end: (m) => {
      const last = m.prevItem
      if (last !== null && !last.duplicate && last.event?.type === 'compaction/prune' && !last.tornFinal) {
        r.violation(last.seq, 'the log ends right after a compaction/prune: its replacement is missing')
      }
    },
  }),
}

/** INV-21: the prune's shadow price is P_fixed of the node's projected message just before it. */
const inv21: Check = {
  id: 'INV-21',
  family: 'pruning',
  statement: 'Prune shadow price: shadowedTokenCount equals P_fixed of the projected message of the pruned node just before the prune.',
  create: (_ctx, r) => ({
    types: ['compaction/prune'],
    before: (event, _item, m) => {
      const e = event as SessionEvent<'compaction/prune'>
      const s = e.data.shadowedSeqs[0]
      if (s === undefined) return
      if (m.position(s) < 0) {
        r.violation(e.seq, `prices node ${s}, which is not a current surface node`)
        return
      }
      const price = m.meter.fixedPriceOf(s)
      if (price !== e.data.shadowedTokenCount) r.violation(e.seq, `shadowedTokenCount ${e.data.shadowedTokenCount} differs from P_fixed of the projected message of ${at(s)} = ${price} (§2.6)`)
    },
  }),
}

/** Why a pruned inner content is not what `pruneContent` produces, for the message of INV-22. */
function diagnosePrune(actual: readonly ContentBlock[], original: readonly ContentBlock[], spec: PruneSpec, dialect: CheckerModel['dialect']): string {
  const reasons: string[] = []
  const after = measuredChars(actual, dialect)
  if (after > spec.thresholdChars) reasons.push(`measured text ${after} code points exceeds thresholdChars ${spec.thresholdChars}`)
  let markers = 0
  for (const b of actual) {
    const text = blockText(b)
    if (b.type === 'text' && text !== undefined) markers += text.split(spec.marker).length - 1
  }
  if (markers !== 1) reasons.push(`the marker appears ${markers} times (exactly once is required)`)
  if (actual.some((b) => b.type === 'text' && /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(blockText(b) ?? ''))) reasons.push('a lone UTF-16 surrogate (code-unit slicing)')
  const kept = (blocks: readonly ContentBlock[]): string => JSON.stringify(blocks.filter((b) => b.type !== 'text' || isOffloadPlaceholder(blockText(b) ?? '')))
  if (kept(actual) !== kept(original)) reasons.push('non-text blocks or offload placeholders are not preserved in order')
  return reasons.length > 0 ? reasons.join('; ') : 'the head, tail or block layout differs from pruneContent\'s'
}

/** INV-22: the replacement's inner content is exactly `pruneContent` of the projected original (§5.3). */
const inv22: Check = {
  id: 'INV-22',
  family: 'pruning',
  statement: 'Prune content exactness: the replacement\'s inner content equals pruneContent(projected inner content of s) under the run\'s pruner config and marker.',
  create: (ctx, r) => ({
    types: ['tool/result'],
    before: (e, _item, m) => {
      const op = resultReplace(e)
      if (op === null || op.start !== op.end || m.position(op.start) < 0) return
      const original = innerContent(m.meter.projected(op.start))
      const actual = innerContent((e as SessionEvent<'tool/result'>).data.message)
      if (original === null || actual === null) return // INV-06 reports the shape
      let expected: ContentBlock[] | null
      try {
        expected = pruneContent(original, ctx.inputs.pruner, ctx.dialect)
      } catch (error) {
        r.skip(e.seq, `pruneContent failed on ${at(op.start)}: ${error instanceof Error ? error.message : String(error)}`)
        return
      }
      if (expected === null) return // within the threshold: INV-23 judges the prune itself
      if (!jsonEqual(actual, expected)) r.violation(e.seq, `the rewrite of ${at(op.start)} is not pruneContent of its projected content: ${diagnosePrune(actual, original, ctx.inputs.pruner, ctx.dialect)}`)
    },
  }),
}

/** INV-23: nothing is pruned whose projected measured text is within the threshold (§5.4 rule 5). */
const inv23: Check = {
  id: 'INV-23',
  family: 'pruning',
  statement: 'No re-trim: no compaction/prune targets a node whose projected measured text is at most thresholdChars.',
  create: (ctx, r) => ({
    types: ['compaction/prune'],
    before: (event, _item, m) => {
      const e = event as SessionEvent<'compaction/prune'>
      const s = e.data.shadowedSeqs[0]
      if (s === undefined || m.position(s) < 0) return
      const inner = innerContent(m.meter.projected(s))
      if (inner === null) return
      const chars = measuredChars(inner, ctx.dialect)
      if (chars <= ctx.inputs.pruner.thresholdChars) {
        r.violation(e.seq, `prunes ${at(s)} whose measured text is ${chars} code points, within thresholdChars ${ctx.inputs.pruner.thresholdChars}`)
      }
    },
  }),
}

/** INV-24: prunes only in a pre-step or overflow window, never inside an open bracket (rc.8 overflow exception). */
const inv24: Check = {
  id: 'INV-24',
  family: 'pruning',
  statement: 'Prunes only inside a qualified check: every prune pair lies in a pre-step or overflow window, never inside an open bracket.',
  create: (ctx, r) => ({
    types: ['compaction/prune'],
    before: (e, _item, m) => {
      const w = m.window
      if (w === null) r.violation(e.seq, `a prune outside any pre-step or overflow window${m.turn === null ? ' (no turn is open)' : ` (step ${m.step?.turn ?? '?'}.${m.step?.step ?? '?'} is running)`}`)
      const b = m.bracket
      if (b === null) return
      // §14.1: upstream's overflow path prunes without checking the lock; a bracket already open when the request failed is tolerated.
      const tolerated = ctx.dialect === 'dsh-0.1.0-rc.8' && w?.kind === 'overflow' && b.start.seq < w.openSeq
      if (!tolerated) r.violation(e.seq, `a prune inside the open bracket ${b.start.data.compactionId} (${at(b.start.seq)})`)
    },
  }),
}

/** The §12.3 checks INV-20 … INV-24, in id order. */
export const PRUNING_CHECKS: readonly Check[] = [inv20, inv21, inv22, inv23, inv24]
