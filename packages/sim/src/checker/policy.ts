/**
 * §12.3 INV-25 and §12.4 Range selection and retention: INV-25 … INV-31. Pressure figures come from the
 * reference meter and the routed target's resolved policy (§3.3); capacity from the manifest, else the latest
 * `request/context` for the route (§12.0). A check that needs a capacity no input gives records the instance
 * as not evaluated — never as passed or violated.
 */
import { deriveEventMessage, hardeningOf, type ContentBlock, type LogEvent, type SessionEvent, type ToolResultBlock } from '@compaction-sim/core'
import { calibratedPressure, checkedPermille } from './hardened-capacity.ts'
import type { BracketMode, CheckerModel } from './model.ts'
import { isHeadRefresh } from './hardened-head.ts'
import { at, blockText, hasNonWhitespace, seqList, summaryBefore } from './support.ts'
import type { InvariantCheck, Reporter } from './types.ts'
import { plural } from '../plural.ts'

type Check = InvariantCheck<CheckerModel>

/** How a `compaction/start` about to be folded will be classified (the model's rule, read before the fold). */
function modeAtStart(e: SessionEvent<'compaction/start'>, m: CheckerModel): BracketMode {
  if (m.inputs.explicitRegionStarts.has(e.seq)) return 'explicit'
  if (e.data.turn === null) return 'manual'
  if (m.window?.kind === 'pre-step') return 'pressure'
  if (m.window?.kind === 'overflow') return 'overflow'
  return 'misplaced'
}

/** Judges "pressure ≥ threshold" at `seq` for `what`; reports a violation, or a skip when it cannot be judged. */
function judgePressure(seq: number, what: string, m: CheckerModel, r: Reporter, permille: number): void {
  const figures = m.figures()
  switch (figures.kind) {
    case 'no-target':
      r.violation(seq, `${what} without a routed target (no request/header): automatic policy does nothing (§3.5 step 1)`)
      return
    case 'no-capacity':
      r.skip(seq, `no capacity is known for ${figures.route.provider}/${figures.route.model} (manifest or request/context)`)
      return
    case 'config-error':
      r.violation(seq, `${what}, but the pressure check for the route throws a configuration error first: ${figures.message}`)
      return
    case 'ok': {
      const taint = m.meter.taint
      if (taint !== null) {
        r.skip(seq, `the pressure figure is not exact from ${at(taint.seq)} on (${taint.reason})`)
        return
      }
      // Hardened HARD-8 with `calibrate` (issue #19): the calibrated figure; exactly totalTokens at factor 1000.
      const total = calibratedPressure(m.pressure(), permille)
      if (total < figures.spec.thresholdTokens) {
        const calibrated = permille === 1000 ? '' : ` (calibrated ×${permille / 1000}, hardened HARD-8)`
        r.violation(seq, `${what} below pressure: totalTokens ${total}${calibrated} < threshold ${figures.spec.thresholdTokens} of ${figures.policy.route.provider}/${figures.policy.route.model}`)
      }
      return
    }
  }
}

/** INV-25: prune runs and automatic pressure brackets in a pre-step window start only at or above the threshold. */
const inv25: Check = {
  id: 'INV-25',
  family: 'policy',
  statement: 'Below pressure: no prune, no bracket. Each run of prune pairs in a pre-step window, and each automatic pressure bracket, starts with measured totalTokens ≥ the routed threshold.',
  create: (ctx, r) => {
    let lastPairEnd = -2
    return {
      types: ['compaction/prune', 'tool/result', 'compaction/start'],
      before: (event, _item, m) => {
        switch (event.type) {
          case 'compaction/prune':
            if (m.window?.kind === 'pre-step' && event.seq !== lastPairEnd + 1) judgePressure(event.seq, 'a prune run', m, r, checkedPermille(ctx, m))
            return
          case 'tool/result':
            if (m.prevItem?.event?.type === 'compaction/prune' && m.prevItem.seq === event.seq - 1) lastPairEnd = event.seq
            return
          case 'compaction/start':
            if (modeAtStart(event as SessionEvent<'compaction/start'>, m) === 'pressure') judgePressure(event.seq, 'an automatic pressure bracket', m, r, checkedPermille(ctx, m))
            return
          default:
            return
        }
      },
    }
  },
}

/** The replace op of a surface event, or null. */
function replaceOp(e: LogEvent): { start: number; end: number } | null {
  const op = 'surfaceOp' in e ? e.surfaceOp : undefined
  return typeof op === 'object' && op !== null ? op : null
}

/** INV-26: a system head at position 0 stays there; no replacement shadows it (seed only, §14.1). */
const inv26: Check = {
  id: 'INV-26',
  family: 'policy',
  statement: 'System head never compacted: a system/message at position 0 stays at position 0 and no replacement shadows it.',
  applicability: (ctx) => ctx.dialect === 'seed' ? { kind: 'applies' } : { kind: 'not-applicable', reason: 'the rc.8 dialect has no system head (§14.1)' },
  create: (ctx, r) => {
    // Hardened HARD-7 (`hardening.headRefresh`, issue #19) refreshes the head in place: a system/message replacing
    // exactly the head and citing it (judged by HARD-7). Only that replacement, and only with the rule on.
    const headRefresh = hardeningOf(ctx.inputs.policy).headRefresh !== null
    return {
      types: ['system/message', 'user/message', 'assistant/message', 'tool/result'],
      before: (e, _item, m) => {
        const op = replaceOp(e)
        if (op === null || m.headCount() === 0) return
        if (headRefresh && isHeadRefresh(e, m.nodes[0])) return
        const span = m.span(op.start, op.end)
        if (span.ok && span.startPosition === 0) r.violation(e.seq, `replacement ${op.start}…${op.end} shadows the system head ${at(m.nodes[0] ?? -1)} at position 0`)
      },
    }
  },
}

/** INV-27: every non-explicit bracket's span starts at the first node after the head when its checkpoint lands. */
const inv27: Check = {
  id: 'INV-27',
  family: 'policy',
  statement: 'Head-anchored automatic spans: for every bracket not listed as an explicit region call, shadowedSeqs[0] is the node at position h (1 with a system head, else 0) when the checkpoint lands.',
  create: (ctx, r) => {
    // Hardened HARD-6 (`hardening.openTurnPrompt`, issue #19) may anchor the span just after the open turn's prompt.
    const keepsOpenPrompt = hardeningOf(ctx.inputs.policy).openTurnPrompt !== null
    return {
      types: ['user/message'],
      before: (e, _item, m) => {
        const summary = summaryBefore(e, m)
        const b = m.bracket
        if (summary === null || b === null || b.summary !== summary || b.mode === 'explicit') return
        const first = summary.data.shadowedSeqs[0]
        if (first === undefined) return
        const h = m.headCount()
        const pos = m.position(first)
        if (pos !== h && !(keepsOpenPrompt && afterOpenTurnPrompt(pos, m))) r.violation(e.seq, `the span starts at ${at(first)} (position ${pos}), not at position ${h}, the first node after ${h === 1 ? 'the system head' : 'the surface start'}`)
      },
    }
  },
}

/** True when the node before `pos` is the open turn's own user prompt (its first appended user/message). */
function afterOpenTurnPrompt(pos: number, m: CheckerModel): boolean {
  const from = m.state.openTurnStartSeq
  const prev = pos > 0 ? m.nodes[pos - 1] : undefined
  if (from === null || prev === undefined) return false
  for (let seq = from + 1; seq <= prev; seq++) {
    const e = m.event(seq)
    if (e?.type === 'user/message' && 'surfaceOp' in e && e.surfaceOp === 'append') return seq === prev
  }
  return false
}

/** INV-28: both edges of a checkpoint's span are balanced cuts (§4.1). */
const inv28: Check = {
  id: 'INV-28',
  family: 'policy',
  statement: 'Balanced span edges: when a checkpoint lands, the cut before shadowedRange.start and the cut after shadowedRange.end are balanced.',
  create: (_ctx, r) => ({
    types: ['user/message'],
    before: (e, _item, m) => {
      if (summaryBefore(e, m) === null) return
      const op = replaceOp(e)
      if (op === null) return
      const span = m.span(op.start, op.end)
      if (!span.ok) return
      const surface = m.state.surface
      const before = surface.balanceAt(span.startPosition)
      const after = surface.balanceAt(span.endPosition + 1)
      if (before !== 0) r.violation(e.seq, `the cut before ${at(op.start)} (position ${span.startPosition}) has ${plural(before, 'unanswered call')} crossing it`)
      if (after !== 0) r.violation(e.seq, `the cut after ${at(op.end)} (position ${span.endPosition}) has ${plural(after, 'unanswered call')} crossing it`)
    },
  }),
}

/** INV-29: a tail follows every span; pressure brackets keep at least retainTokens of it (P_route). */
const inv29: Check = {
  id: 'INV-29',
  family: 'policy',
  statement: 'Tail retained verbatim: at least one node follows the span, and for a pressure bracket the P_route sum of the following nodes is ≥ the resolved retainTokens (explicit regions exempt).',
  create: (ctx, r) => ({
    types: ['user/message'],
    before: (e, _item, m) => {
      const summary = summaryBefore(e, m)
      const b = m.bracket
      const op = replaceOp(e)
      if (summary === null || b === null || b.summary !== summary || b.mode === 'explicit' || op === null) return
      const span = m.span(op.start, op.end)
      if (!span.ok) return
      const following = m.nodes.slice(span.endPosition + 1)
      if (following.length === 0) {
        r.violation(e.seq, `no node follows the span ${op.start}…${op.end}: the newest unit must stay verbatim`)
        return
      }
      if (b.mode !== 'pressure') return
      let tail = 0
      for (const s of following) tail += m.meter.routePriceOf(s)
      const route = m.routedTarget()
      if (route === null) return
      const retention = m.policy(route).retention
      let retain: number
      if (retention.kind === 'tokens') retain = retention.retainTokens
      else {
        const figures = m.figures()
        if (figures.kind !== 'ok') {
          r.skip(e.seq, `the retained budget of ${route.provider}/${route.model} is unknown (${figures.kind})`)
          return
        }
        retain = figures.spec.retainTokens
      }
      // Hardened HARD-8 with `calibrate` (issue #19): the tail counts at the route's calibration factor.
      const permille = checkedPermille(ctx, m)
      if (tail * permille < retain * 1000) {
        const calibrated = permille === 1000 ? '' : ` at calibration ×${permille / 1000} (hardened HARD-8)`
        r.violation(e.seq, `the retained tail ${seqList(following)} prices ${tail} (P_route)${calibrated} < retainTokens ${retain}`)
      }
    },
  }),
}

/** A 52-bit FNV-1a style hash of a string: summary texts are remembered by hash, not by content (bounded memory). */
function textKey(text: string): string {
  let h1 = 0x811c9dc5
  let h2 = 0x01000193
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    h1 = Math.imul(h1 ^ c, 0x01000193) >>> 0
    h2 = Math.imul(h2 ^ c, 0x5bd1e995) >>> 0
  }
  return `${text.length}:${h1.toString(36)}:${h2.toString(36)}`
}

/** Characters `sampleKey` reads besides the length (spread evenly over the text). */
const SAMPLED_CHARS = 8

/** A 31-bit fingerprint of a text from its length and a few evenly spaced characters; equal texts have equal keys. */
function sampleKey(text: string): number {
  const n = text.length
  let h = Math.imul(n, 0x9e3779b1)
  if (n > 0) {
    for (let k = 0; k < SAMPLED_CHARS; k++) h = Math.imul(h ^ text.charCodeAt(Math.floor((k * n) / SAMPLED_CHARS)), 0x01000193)
    h = Math.imul(h ^ text.charCodeAt(n - 1), 0x01000193)
  }
  return h >>> 1
}

/**
 * The blocks of a derived message, the content of its tool-result blocks in their place (a tool result's text is on
 * the surface too, and a tool/result message holds nothing but one tool-result block). Nested tool results are valid
 * to any depth, so the walk keeps a stack instead of recursing; the order of the blocks is not kept.
 */
function leafBlocks(content: readonly ContentBlock[]): ContentBlock[] {
  const out: ContentBlock[] = []
  const stack: ContentBlock[] = [...content]
  for (let b = stack.pop(); b !== undefined; b = stack.pop()) {
    if (b.type === 'tool-result') for (const inner of (b as ToolResultBlock).content) stack.push(inner)
    else out.push(b)
  }
  return out
}

/** INV-30: no compaction record on the surface; the raw summary text reaches the surface only inside its checkpoint. */
const inv30: Check = {
  id: 'INV-30',
  family: 'policy',
  statement: 'No compaction records on the surface, no duplicate history: no compaction/* or image/offload node; the raw summary text appears on the surface only inside its checkpoint.',
  create: (_ctx, r) => {
    const summaries = new Map<string, number>()
    /**
     * Cheap fingerprints (`sampleKey`) of the remembered texts: a text whose fingerprint is not here cannot match,
     * so it is not hashed in full (the common case: every surface text block is looked up).
     */
    const samples = new Set<number>()
    return {
      types: ['compaction/summary', 'system/message', 'user/message', 'assistant/message', 'tool/result'],
      before: (event, _item, m) => {
        if (event.type === 'compaction/summary') {
          for (const b of (event as SessionEvent<'compaction/summary'>).data.summary) {
            const text = blockText(b)
            if (text !== undefined && hasNonWhitespace(text)) {
              summaries.set(textKey(text), event.seq)
              samples.add(sampleKey(text))
            }
          }
          return
        }
        if (summaries.size === 0 || summaryBefore(event, m) !== null) return // a checkpoint is judged by INV-18
        const message = deriveEventMessage(event)
        if (message === null) return
        for (const b of leafBlocks(message.content)) {
          const text = blockText(b)
          if (text === undefined || b.type !== 'text' || !samples.has(sampleKey(text))) continue
          const from = summaries.get(textKey(text))
          if (from !== undefined) r.violation(event.seq, `the raw summary text of ${at(from)} appears on the surface outside its checkpoint (a second copy of history)`)
        }
      },
    }
  },
}

/** INV-31: at most compactionRetries + 1 successful pressure brackets per pre-step window, and none after the bound. */
const inv31: Check = {
  id: 'INV-31',
  family: 'policy',
  statement: 'Pressure convergence bound: within one pre-step window at most compactionRetries + 1 successful summary brackets, and no further bracket once the bound is reached.',
  create: (_ctx, r) => {
    let windowSeq = -1
    let successes = 0
    return {
      types: ['compaction/start', 'compaction/end'],
      before: (event, _item, m) => {
        const w = m.window
        if (w === null || w.kind !== 'pre-step') return
        if (w.openSeq !== windowSeq) {
          windowSeq = w.openSeq
          successes = 0
        }
        if (event.type === 'compaction/end') {
          const b = m.bracket
          const end = event as SessionEvent<'compaction/end'>
          if (b !== null && b.mode === 'pressure' && b.start.data.compactionId === end.data.compactionId && end.data.error === undefined) successes++
          return
        }
        if (modeAtStart(event as SessionEvent<'compaction/start'>, m) !== 'pressure') return
        const route = m.routedTarget()
        if (route === null) return // INV-25 reports a pressure bracket without a routed target
        const bound = m.policy(route).compactionRetries + 1
        if (successes >= bound) r.violation(event.seq, `a pressure bracket opens after ${successes} successful ones in the pre-step window ${at(w.openSeq)}; the bound is compactionRetries + 1 = ${bound}`)
      },
    }
  },
}

/** The §12.4 checks and INV-25, in id order. */
export const POLICY_CHECKS: readonly Check[] = [inv25, inv26, inv27, inv28, inv29, inv30, inv31]
