/**
 * The check of the hardened profile's head rule (issue #19, packages/core/docs/hardened.md). It runs only when the
 * run manifest's `compaction` resolves to a hardening spec with `headRefresh` on; a faithful run never registers
 * it, so its reports are unchanged.
 *
 * HARD-7 (`hardening.headRefresh`): while the surface has a system head (a `system/message` at position 0), it is
 * the only `system/message` on the surface, and every later `system/message` is a replacement of exactly that head
 * (`surfaceOp {op:'replace', start: h, end: h}`) citing it (`sourceEventSeqs [h]`), never an append. Without a head
 * (an empty initial prompt) §1.4.5 applies as written: the first non-empty prompt is appended at the tail.
 */
import type { LogEvent } from '@compaction-sim/core'
import type { CheckerModel } from './model.ts'
import { at, hardenedRuleOn } from './support.ts'
import type { InvariantCheck } from './types.ts'

type Check = InvariantCheck<CheckerModel>

/** The replace op of an event, or null for an append (or no surface op). */
function replaceOf(e: LogEvent): { start: number; end: number } | null {
  const op = 'surfaceOp' in e ? e.surfaceOp : undefined
  return typeof op === 'object' && op !== null ? op : null
}

/** True when `e` is the HARD-7 head refresh: a `system/message` replacing exactly the head `head`, citing only it. */
export function isHeadRefresh(e: LogEvent, head: number | undefined): boolean {
  const op = replaceOf(e)
  if (e.type !== 'system/message' || op === null || head === undefined) return false
  const cited = 'sourceEventSeqs' in e ? e.sourceEventSeqs : undefined
  return op.start === head && op.end === head && cited !== undefined && cited.length === 1 && cited[0] === head
}

const headRefreshOn = hardenedRuleOn('headRefresh', 'faithful §1.4.5')

/** HARD-7: the head is refreshed in place; no second system message joins a surface that has a head. */
const hard7: Check = {
  id: 'HARD-7',
  family: 'hardened',
  statement: 'Head refresh (hardened headRefresh): while the surface has a system head, every system/message replaces exactly that head (start = end = the head) with sourceEventSeqs [the head]; none is appended, so the head is the only system/message on the surface; without a head none replaces anything.',
  applicability: (ctx) => {
    if (ctx.dialect !== 'seed') return { kind: 'not-applicable', reason: 'the rc.8 dialect has no system head (§14.1)' }
    return headRefreshOn(ctx)
  },
  // "Only system message on the surface" follows from the per-event rule: position 0 only ever holds the first node
  // or a replacement node, so a head exists only if a system/message was appended onto an empty surface or replaced
  // position 0 (reported here without a head); once it exists no other system/message is appended (reported here).
  create: (_ctx, r) => ({
    types: ['system/message'],
    before: (e, _item, m) => {
      const op = replaceOf(e)
      if (m.headCount() === 0) {
        if (op !== null) r.violation(e.seq, `a system/message replaces ${op.start}…${op.end} while the surface has no system head: without a head the prompt is appended (§1.4.5)`)
        return
      }
      const head = m.nodes[0] as number
      if (isHeadRefresh(e, head)) return
      if (op === null) r.violation(e.seq, `a system/message is appended while the surface has the system head ${at(head)}: hardening.headRefresh replaces the head`)
      else {
        const cited = 'sourceEventSeqs' in e ? e.sourceEventSeqs ?? [] : []
        r.violation(e.seq, `a system/message replaces ${op.start}…${op.end} citing [${cited.join(', ')}]: the head refresh replaces exactly the head ${at(head)} and cites [${head}]`)
      }
    },
  }),
}

/** The hardened head check. */
export const HARDENED_HEAD_CHECKS: readonly Check[] = [hard7]
