/**
 * The hardened profile's checks HARD-1, HARD-3 and HARD-4 (issue #19, `packages/core/docs/hardened.md`). They
 * are not §12 invariants: the protocol permits what they reject. Each is judged only when the run manifest's
 * `compaction` resolves (`resolveCompactionConfig`) to a hardening spec with its rule on; otherwise it is not
 * even listed (`hardenedChecks`), so faithful runs report exactly the §12 and WORLD coverage they always did.
 */
import {
  blocksPrice, envelopePrice, hardeningOf, hardId, ROLE_OVERHEAD, TRANSIENT_FAILURE_CODES, type HardeningRule, type HardeningSpec, type LogEvent,
  type SessionEvent,
} from '@compaction-sim/core'
import type { CheckerModel } from './model.ts'
import { at, isCheckpointEvent } from './support.ts'
import type { CheckId, InvariantCheck, RunInputs } from './types.ts'

type Check = InvariantCheck<CheckerModel>

/** The hardening spec a run was made under (faithful when the manifest sets none, or there is no manifest). */
function specOf(inputs: RunInputs): HardeningSpec {
  return hardeningOf(inputs.policy)
}

/** Route price (`P_route`) of a checkpoint and of the nodes it shadows, read before its replacement is folded. */
function checkpointPrices(e: SessionEvent<'user/message'>, m: CheckerModel): { checkpoint: number; shadowed: number; seqs: readonly number[] } | null {
  const op = e.surfaceOp
  if (typeof op !== 'object' || op.op !== 'replace') return null
  const span = m.span(op.start, op.end)
  if (!span.ok) return null
  const checkpoint = blocksPrice(e.data.content, m.meter.imagePrice) + ROLE_OVERHEAD
  let shadowed = 0
  for (const seq of span.seqs) shadowed += m.meter.routePriceOf(seq)
  return { checkpoint, shadowed, seqs: span.seqs }
}

/**
 * HARD-2's deferral seen by HARD-3: the route price of the live nodes after the checkpoint's span up to the
 * bracket summary's `summaryRoom.deferredTo` (0 without one, or when that node is not after the span).
 */
function deferredTokens(e: SessionEvent<'user/message'>, m: CheckerModel): number {
  const to = m.bracket?.summary?.data.summaryRoom?.deferredTo
  const op = e.surfaceOp
  if (to === undefined || typeof op !== 'object' || op.op !== 'replace') return 0
  const whole = m.span(op.start, to)
  const span = m.span(op.start, op.end)
  if (!whole.ok || !span.ok) return 0
  let tokens = 0
  for (const seq of whole.seqs.slice(span.seqs.length)) tokens += m.meter.routePriceOf(seq)
  return tokens
}

/**
 * HARD-1: after a failed pressure bracket (a numeric-owner bracket in a pre-step window whose `compaction/end`
 * carries an error), the next pressure bracket of the same lifecycle starts only after the surface grew by
 * `minGrowthTokens` (`P_route`) or `replaceGeneration` moved, and after the back-off: `baseSteps · 2^(k−1)` (at
 * most `maxSteps`) pre-steps skipped, k the consecutive failures since the last committed pressure bracket. A
 * skipped pre-step is counted by the `step/start` after it (the failing pre-step's own `step/start` excluded).
 */
const hard1: Check = {
  id: 'HARD-1',
  family: 'hardened',
  statement: 'Hardened failureBackoff: after a failed pressure bracket, no pressure bracket before the surface grew (or replaceGeneration moved) and the back-off in pre-steps elapsed.',
  create: (ctx, r) => {
    const rule = specOf(ctx.inputs).failureBackoff
    let failed: { seq: number; failures: number; steps: number; surface: number; generation: number } | null = null
    let failures = 0
    // The code of the open bracket's latest summary failure: a bracket that failed on a transient one (§1.2.1)
    // is not a HARD-1 failure (nor a success), as in the engine.
    let lastSummaryFailure: string | null = null
    return {
      before: (e: LogEvent, _item, m) => {
        if (rule === null) return
        if (e.type === 'session/end-seed') { failed = null; failures = 0; return }
        if (e.type === 'compaction/start') lastSummaryFailure = null
        if (e.type === 'compaction/summary') lastSummaryFailure = null
        if (e.type === 'compaction/summary-error') lastSummaryFailure = (e as SessionEvent<'compaction/summary-error'>).data.failure.code
        if (e.type === 'step/start' && failed !== null) { failed.steps++; return }
        if (e.type === 'compaction/start' && failed !== null && m.window?.kind === 'pre-step' && !m.inputs.explicitRegionStarts.has(e.seq)) {
          const skipped = failed.steps - 1
          const wait = Math.min(rule.maxSteps, rule.baseSteps * 2 ** Math.min(failed.failures - 1, 30))
          const grown = m.meter.surfaceTokens - failed.surface
          const moved = m.state.surface.replaceGeneration !== failed.generation
          if (!moved && grown < rule.minGrowthTokens) {
            r.violation(e.seq, `pressure bracket after the failed one ending ${at(failed.seq)} with the surface grown by ${grown} < ${rule.minGrowthTokens} tokens and replaceGeneration unchanged`)
          } else if (skipped < wait) {
            r.violation(e.seq, `pressure bracket after ${skipped} skipped pre-step(s) since the failed one ending ${at(failed.seq)}; back-off after ${failed.failures} consecutive failure(s) is ${wait}`)
          }
        }
        if (e.type === 'compaction/end' && m.bracket?.mode === 'pressure') {
          if ((e as SessionEvent<'compaction/end'>).data.error === undefined) {
            failures = 0
            failed = null
          } else if (lastSummaryFailure !== null && TRANSIENT_FAILURE_CODES.has(lastSummaryFailure)) {
            // a transient summary failure: the back-off neither grows nor resets
          } else {
            failures++
            failed = { seq: e.seq, failures, steps: 0, surface: m.meter.surfaceTokens, generation: m.state.surface.replaceGeneration }
          }
        }
      },
    }
  },
}

/**
 * HARD-3: a pressure bracket's checkpoint costs at most threshold − envelope − the rest of the surface (every
 * live node it does not shadow) − `marginTokens`, all at the route's prices, measured right before it lands.
 */
const hard3: Check = {
  id: 'HARD-3',
  family: 'hardened',
  statement: 'Hardened checkpointBudget: a pressure checkpoint is priced at most threshold − envelope − the retained surface − marginTokens, or at most reliefRatio of what it shadows.',
  create: (ctx, r) => {
    const rule = specOf(ctx.inputs).checkpointBudget
    return {
      types: ['user/message'],
      before: (e, _item, m) => {
        if (rule === null || !isCheckpointEvent(e) || m.bracket?.mode !== 'pressure') return
        const prices = checkpointPrices(e, m)
        if (prices === null) return // a broken replacement is INV-05's to report
        const figures = m.figures()
        if (figures.kind !== 'ok') {
          r.skip(e.seq, `no threshold is known for the routed target (${figures.kind})`)
          return
        }
        // HARD-2 left the nodes after the span up to `summaryRoom.deferredTo` for a later round: not retained.
        const deferred = deferredTokens(e, m)
        const rest = m.meter.surfaceTokens - prices.shadowed - deferred
        const envelope = envelopePrice(m.header, m.dialect)
        const budget = figures.spec.thresholdTokens - envelope - rest - rule.marginTokens
        // An over-budget checkpoint at most `reliefRatio` of what it shadows is relief, and kept (as in the engine).
        if (prices.checkpoint > budget && prices.checkpoint > rule.reliefRatio * prices.shadowed) {
          r.violation(e.seq, `checkpoint priced ${prices.checkpoint} > budget ${budget} (threshold ${figures.spec.thresholdTokens} − envelope ${envelope} − retained ${rest} − margin ${rule.marginTokens})`)
        }
      },
    }
  },
}

/** HARD-4: an automatic (pressure or overflow) checkpoint is cheaper than what it shadows at the route's prices. */
const hard4: Check = {
  id: 'HARD-4',
  family: 'hardened',
  statement: 'Hardened meteredRelief: an automatic checkpoint is priced below the nodes it shadows at the route prices (P_route), not only by the §7.5 P_fixed rule.',
  create: (ctx, r) => {
    const on = specOf(ctx.inputs).meteredRelief !== null
    return {
      types: ['user/message'],
      before: (e, _item, m) => {
        const mode = m.bracket?.mode
        if (!on || !isCheckpointEvent(e) || (mode !== 'pressure' && mode !== 'overflow')) return
        const prices = checkpointPrices(e, m)
        if (prices === null) return
        if (prices.checkpoint >= prices.shadowed) {
          r.violation(e.seq, `checkpoint priced ${prices.checkpoint} route tokens ≥ the ${prices.shadowed} route tokens of the ${prices.seqs.length} node(s) it shadows`)
        }
      },
    }
  },
}

/** The hardened checks this module owns, in HARD-id order. */
export const HARDENED_POLICY_CHECKS: readonly Check[] = [hard1, hard3, hard4]

const RULE_OF: ReadonlyMap<CheckId, HardeningRule> = new Map<CheckId, HardeningRule>([
  [hardId('failureBackoff') as CheckId, 'failureBackoff'],
  [hardId('checkpointBudget') as CheckId, 'checkpointBudget'],
  [hardId('meteredRelief') as CheckId, 'meteredRelief'],
])

/** The hardened checks whose rule the run's manifest switched on (none for a faithful run). */
export function hardenedChecks(inputs: RunInputs): readonly Check[] {
  const spec = specOf(inputs)
  return HARDENED_POLICY_CHECKS.filter((c) => {
    const rule = RULE_OF.get(c.id)
    return rule !== undefined && spec[rule] !== null
  })
}
