/**
 * The hardened profile's text-projection check HARD-5 (`hardening.oversizedUserText`, issue #19,
 * `packages/core/docs/hardened.md`). Listed only when the run manifest's `compaction` resolves to a hardening
 * spec with the rule on; a faithful run never registers it (and INV-37 refuses any `text/offload` there).
 *
 * The bound is `floor(maxWindowRatio × contextWindow)` of the route context in force (the latest
 * `request/context`); a block's price is its structural `blockPrice` (§2.2). Judged from the log alone:
 * - no request carries an oversized user text block: at every conversation dispatch (the first chunk of an
 *   attempt) every live `user/message` text block priced above the bound has its `text/offload`; at every
 *   summary outcome (`compaction/summary` or `compaction/summary-error`) so has every such block of its
 *   `shadowedSeqs` (the summary request carried them);
 * - no spurious projection: every `text/offload` names a live `user/message` text block whose price is the
 *   logged `tokens` and above the logged `bound`, the bound is the one of the route context in force, and the
 *   path is `userTextReadOnlyPath(message id, block index)`.
 */
import {
  blockPrice, hardeningOf, oversizedTextBound, userTextReadOnlyPath, type LogEvent, type SessionEvent, type TextBlock,
} from '@compaction-sim/core'
import type { CheckerModel } from './model.ts'
import { at, hardenedRuleOn } from './support.ts'
import type { InvariantCheck } from './types.ts'

type Check = InvariantCheck<CheckerModel>

/** One text block of a live appended user message. */
interface Candidate { seq: number; blockIndex: number; tokens: number }

/** HARD-5: oversized user text is projected before any request carries it, and only oversized text is. */
const hard5: Check = {
  id: 'HARD-5',
  family: 'hardened',
  statement: 'Oversized user text projected (hardened oversizedUserText): no conversation or summary request carries a user text block priced above floor(maxWindowRatio × contextWindow); every text/offload names a live user/message text block above that bound.',
  applicability: hardenedRuleOn('oversizedUserText', 'faithful §6'),
  create: (ctx, r) => {
    const ratio = hardeningOf(ctx.inputs.policy).oversizedUserText?.maxWindowRatio ?? 1
    /** Text blocks of live user messages, by seq, that no `text/offload` marks yet. */
    const candidates = new Map<number, Candidate[]>()
    const reported = new Set<string>()
    const boundNow = (m: CheckerModel): number | undefined => {
      const window = m.state.routeContext?.data.contextWindow
      return window === undefined ? undefined : oversizedTextBound(ratio, window)
    }
    const judge = (seqs: Iterable<number>, m: CheckerModel, where: number, what: string): void => {
      const bound = boundNow(m)
      if (bound === undefined) return
      for (const seq of seqs) {
        const list = candidates.get(seq)
        if (list === undefined) continue
        if (m.position(seq) < 0) { candidates.delete(seq); continue }
        const marks = m.textOffloads(seq)
        for (const c of list) {
          const key = `${c.seq}/${c.blockIndex}`
          if (c.tokens <= bound || marks.has(c.blockIndex) || reported.has(key)) continue
          reported.add(key)
          r.violation(where, `${what} carries text block ${c.blockIndex} of user/message ${at(c.seq)} (${c.tokens} tokens > bound ${bound}) without a text/offload before it`)
        }
      }
    }
    return {
      types: ['user/message', 'assistant/chunk', 'compaction/summary', 'compaction/summary-error', 'text/offload'],
      before: (e: LogEvent, _item, m) => {
        if (e.type !== 'text/offload') return
        const d = (e as SessionEvent<'text/offload'>).data
        const node = (m.position(d.seq) >= 0 ? m.event(d.seq) : undefined) as SessionEvent | undefined
        if (node?.type !== 'user/message') {
          r.violation(e.seq, `text/offload names ${at(d.seq)}, which is ${node?.type ?? 'not a live surface node'}, not a live user/message`)
          return
        }
        if (node.surfaceOp !== 'append') {
          r.violation(e.seq, `text/offload names ${at(d.seq)}, a checkpoint (a replacement), not user-authored text`)
          return
        }
        const message = node.data
        const block = message.content[d.blockIndex]
        if (block?.type !== 'text') {
          r.violation(e.seq, `text/offload names block ${d.blockIndex} of ${at(d.seq)}, which is ${block === undefined ? 'out of range' : `a ${block.type} block`}, not text`)
          return
        }
        const tokens = blockPrice(block as TextBlock)
        const bound = boundNow(m)
        if (tokens !== d.tokens) r.violation(e.seq, `text/offload logs ${d.tokens} tokens for block ${d.blockIndex} of ${at(d.seq)}, whose price is ${tokens}`)
        if (bound !== undefined && d.bound !== bound) r.violation(e.seq, `text/offload logs bound ${d.bound}; the route context in force gives ${bound}`)
        if (tokens <= (bound ?? d.bound)) {
          r.violation(e.seq, `spurious text/offload: block ${d.blockIndex} of ${at(d.seq)} is ${tokens} tokens, not above the bound ${bound ?? d.bound}`)
        }
        const path = userTextReadOnlyPath(message.id, d.blockIndex)
        if (d.path !== path) r.violation(e.seq, `text/offload path ${JSON.stringify(d.path)} is not the read-only path ${JSON.stringify(path)} of the block`)
      },
      after: (e: LogEvent, _item, m) => {
        switch (e.type) {
          case 'user/message': {
            if (m.position(e.seq) < 0 || !('surfaceOp' in e) || e.surfaceOp !== 'append') return // checkpoints are not user text
            const list: Candidate[] = []
            for (const [i, b] of (e as SessionEvent<'user/message'>).data.content.entries()) {
              if (b.type === 'text') list.push({ seq: e.seq, blockIndex: i, tokens: blockPrice(b) })
            }
            if (list.length > 0) candidates.set(e.seq, list)
            return
          }
          case 'assistant/chunk':
            if (m.lastDispatch?.seq === e.seq) judge([...candidates.keys()], m, e.seq, 'the conversation request dispatched here')
            return
          case 'compaction/summary':
          case 'compaction/summary-error':
            judge((e as SessionEvent<'compaction/summary'>).data.shadowedSeqs, m, e.seq, `the summary request of this ${e.type}`)
            return
          default:
            return
        }
      },
    }
  },
}

/** The hardened text-projection checks, in HARD-id order. */
export const HARDENED_TEXT_CHECKS: readonly Check[] = [hard5]
