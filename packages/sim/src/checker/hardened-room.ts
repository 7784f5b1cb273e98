/**
 * The hardened profile's HARD-2 check (`hardening.summaryRoom`, issue #19, packages/core/docs/hardened.md):
 * every summary request of a bracket fits its summary route. Listed only when the run manifest's `compaction`
 * resolves to a hardening spec with the rule on (`run.ts`), so faithful reports are unchanged.
 *
 * Judged from the log: the request's cap is the `maxTokens` of `compaction/summary` / `compaction/summary-error`
 * (the cap as dispatched), the route's limits are the `summaryRoom` record the rule writes beside it (and the
 * world record's `maxOutputTokens` of that model, when a world record is given), and the summary prompt is
 * priced here with the reference meter (`P_route`: tools + system head + shadowed nodes + instruction), at the
 * event, i.e. with the offloads of earlier attempts applied.
 */
import { INSTRUCTION_TOKENS, toolsPrice, type LogEvent, type SessionEvent } from '@compaction-sim/core'
import type { CheckerModel } from './model.ts'
import { hardenedRuleOn } from './support.ts'
import type { InvariantCheck } from './types.ts'

type Check = InvariantCheck<CheckerModel>
type SummaryEvent = SessionEvent<'compaction/summary' | 'compaction/summary-error'>

/** The reference meter's price of the summary prompt of `shadowedSeqs` (null when a seq is not a live node). */
export function summaryPromptPrice(m: CheckerModel, shadowedSeqs: readonly number[]): number | null {
  let sum = toolsPrice(m.header?.tools) + INSTRUCTION_TOKENS
  const head = m.nodes[0]
  if (m.headCount() === 1 && head !== undefined) sum += m.meter.routePriceOf(head)
  for (const seq of shadowedSeqs) {
    if (m.position(seq) < 0) return null
    sum += m.meter.routePriceOf(seq)
  }
  return sum
}

/**
 * HARD-2: a summary request under the rule carries `maxTokens` ≤ the summary route's output limit (recorded, and
 * the world's when known) and its priced prompt + `maxTokens` ≤ the route's recorded window; the record's
 * `promptTokens` is the reference price, and `configuredMaxTokens` appears only above a clamped cap.
 */
const hard2: Check = {
  id: 'HARD-2',
  family: 'hardened',
  statement: 'Hardened summaryRoom: every summary request has maxTokens ≤ the summary route\'s output limit and its priced prompt (P_route) + maxTokens ≤ the summary route\'s window, as recorded on compaction/summary(-error).summaryRoom.',
  applicability: hardenedRuleOn('summaryRoom', 'faithful §8.2 cap'),
  create: (ctx, r) => {
    const worldLimits = new Map((ctx.world?.routes ?? []).map((route) => [route.model, route.maxOutputTokens]))
    return {
      types: ['compaction/summary', 'compaction/summary-error'],
      before: (event: LogEvent, _item, m) => {
        const e = event as SummaryEvent
        const d = e.data
        const room = d.summaryRoom
        const maxTokens = d.maxTokens
        const world = d.model === undefined ? undefined : worldLimits.get(d.model)
        if (maxTokens !== undefined && world !== undefined && world !== null && maxTokens > world) {
          r.violation(e.seq, `the summary request asked maxTokens ${maxTokens} > ${world}, the output limit the world gives route ${d.model}`)
          return
        }
        if (room === undefined) {
          if (maxTokens !== undefined) r.skip(e.seq, 'no summaryRoom record: the summary route\'s limits were not known to the engine')
          return
        }
        const prompt = summaryPromptPrice(m, d.shadowedSeqs)
        if (prompt === null) return // a span that is not on the surface is INV-05's / INV-10's to report
        if (room.promptTokens !== prompt) {
          r.violation(e.seq, `summaryRoom.promptTokens ${room.promptTokens} differs from the summary prompt's reference price ${prompt} (P_route)`)
          return
        }
        if (maxTokens === undefined) return // nothing was dispatched (refused before the call: the prompt fills the window)
        if (room.configuredMaxTokens !== undefined && maxTokens >= room.configuredMaxTokens) {
          r.violation(e.seq, `configuredMaxTokens ${room.configuredMaxTokens} is recorded, but the cap sent (${maxTokens}) was not clamped below it`)
        } else if (room.maxOutputTokens !== undefined && maxTokens > room.maxOutputTokens) {
          r.violation(e.seq, `maxTokens ${maxTokens} > the summary route's output limit ${room.maxOutputTokens}`)
        } else if (room.contextWindow !== undefined && prompt + maxTokens > room.contextWindow) {
          r.violation(e.seq, `the priced summary prompt ${prompt} + maxTokens ${maxTokens} = ${prompt + maxTokens} > the summary route's window ${room.contextWindow}`)
        }
      },
    }
  },
}

/** The HARD-2 check. */
export const HARDENED_ROOM_CHECKS: readonly Check[] = [hard2]
