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
import { hardeningOf, type LogEvent } from '@compaction-sim/core'
import type { CheckerModel } from './model.ts'
import { at, seqList } from './support.ts'
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

/** HARD-7: the head is refreshed in place; no second system message joins a surface that has a head. */
const hard7: Check = {
  id: 'HARD-7',
  family: 'hardened',
  statement: 'Head refresh (hardened headRefresh): while the surface has a system head it is the only system/message on the surface, and every later system/message replaces exactly that head (start = end = the head) with sourceEventSeqs [the head]; none is appended.',
  applicability: (ctx) => {
    if (ctx.dialect !== 'seed') return { kind: 'not-applicable', reason: 'the rc.8 dialect has no system head (§14.1)' }
    return hardeningOf(ctx.inputs.policy).headRefresh !== null
      ? { kind: 'applies' }
      : { kind: 'not-applicable', reason: 'hardening.headRefresh is off for this run (faithful §1.4.5)' }
  },
  create: (_ctx, r) => {
    /** The last event reported by `before` (one report per event: the surface check then stays quiet). */
    let reported = -1
    const violation = (seq: number, message: string): void => {
      reported = seq
      r.violation(seq, message)
    }
    return {
      types: ['system/message'],
      before: (e, _item, m) => {
        if (m.headCount() === 0) {
          const op = replaceOf(e)
          if (op !== null) violation(e.seq, `a system/message replaces ${op.start}…${op.end} while the surface has no system head: without a head the prompt is appended (§1.4.5)`)
          return
        }
        const head = m.nodes[0] as number
        if (isHeadRefresh(e, head)) return
        const op = replaceOf(e)
        if (op === null) violation(e.seq, `a system/message is appended while the surface has the system head ${at(head)}: hardening.headRefresh replaces the head`)
        else {
          const cited = 'sourceEventSeqs' in e ? e.sourceEventSeqs ?? [] : []
          violation(e.seq, `a system/message replaces ${op.start}…${op.end} citing [${cited.join(', ')}]: the head refresh replaces exactly the head ${at(head)} and cites [${head}]`)
        }
      },
      after: (e, _item, m) => {
        if (reported === e.seq || m.headCount() === 0) return
        const others = m.nodes.slice(1).filter((seq) => m.event(seq)?.type === 'system/message')
        if (others.length > 0) r.violation(e.seq, `the surface holds the system head ${at(m.nodes[0] ?? -1)} and also the system/message ${seqList(others)}: under hardening.headRefresh the head is the only one`)
      },
    }
  },
}

/** The hardened head check. */
export const HARDENED_HEAD_CHECKS: readonly Check[] = [hard7]
