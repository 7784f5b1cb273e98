/**
 * The hardened profile's capacity check HARD-8 (`hardening.capacitySanity`, issue #19, packages/core/docs/hardened.md)
 * and the checker's own, independent fold of the capacity evidence it judges (`CapacityEvidenceModel`, kept on the
 * `CheckerModel` so INV-25 and INV-29 can accept calibrated pressure when the rule calibrates).
 *
 * Evidence, recomputed here from the log alone (not with core's `meter/calibration.ts`):
 * - an appended `assistant/message` with `usage` under a header `H`: observed prompt = `inputTokens + cacheReadTokens +
 *   cacheWriteTokens`, estimate = `envelopePrice(H) + surfaceTokens` (`P_route`) right before the message lands;
 * - a failed attempt's `finish` chunk with a `CONTEXT_WINDOW_EXCEEDED` failure whose message states the counted prompt
 *   (OpenAI "resulted in N tokens" / "(N in the messages", Anthropic "prompt is too long: N tokens" / "exceed context
 *   limit: N + …"), against the same estimate at that chunk;
 * - the route's factor in thousandths is the latest observation's `100 · ⌈10 · observed / estimate⌉` (tenths, rounded
 *   up), clamped to [1000, 8000];
 * - usage above the window: `inputTokens + cacheReadTokens + cacheWriteTokens + outputTokens` > the `contextWindow` of
 *   the route's latest `request/context`; the first such message of a route is the one to warn about.
 */
import { envelopePrice, hardeningOf, type EpochHeader, type EventDataMap, type LogEvent, type SessionEvent, type Dialect } from '@compaction-sim/core'
import type { CheckerModel } from './model.ts'
import { at, hardenedRuleOn } from './support.ts'
import type { InvariantCheck, RunContext } from './types.ts'

type Check = InvariantCheck<CheckerModel>

interface RouteEvidence {
  /** Latest factor in thousandths and the seq of its evidence. */
  permille: number
  evidenceSeq: number
  /** The first usage above the reported window, or null. */
  excess: { usageSeq: number; usageTokens: number; contextWindow: number } | null
  warned: boolean
}

const MIN = 1000
const MAX = 8000

/** Counted prompt tokens a window rejection's message states, or null (see the module doc for the wordings). */
export function statedPromptTokens(message: string): number | null {
  const forms = [
    /your messages resulted in (\d+) tokens/i,
    /\((\d+) in the messages,/i,
    /prompt is too long: (\d+) tokens/i,
    /exceed context limit: (\d+) \+/i,
  ]
  for (const form of forms) {
    const m = form.exec(message)
    if (m !== null) {
      const n = Number.parseInt(m[1] ?? '', 10)
      if (n > 0) return n
    }
  }
  return null
}

/** The checker's per-route capacity evidence (module doc). Fed by `CheckerModel.fold`. */
export class CapacityEvidenceModel {
  private readonly routes = new Map<string, RouteEvidence>()

  private entry(h: { provider: string; model: string }): RouteEvidence {
    const key = `${h.provider}\u0000${h.model}`
    let r = this.routes.get(key)
    if (r === undefined) {
      r = { permille: MIN, evidenceSeq: -1, excess: null, warned: false }
      this.routes.set(key, r)
    }
    return r
  }

  private observe(seq: number, h: EpochHeader, dialect: Dialect, surfaceTokens: number, counted: number): void {
    const estimate = envelopePrice(h, dialect) + surfaceTokens
    if (estimate <= 0 || counted <= 0) return
    const r = this.entry(h.config)
    let p = Math.ceil((counted * 10) / estimate) * 100 // tenths, rounded up
    if (p < MIN) p = MIN
    if (p > MAX) p = MAX
    r.permille = p
    r.evidenceSeq = seq
  }

  /** An `assistant/message` about to be appended: `surfaceTokens` is the surface before it. */
  onUsage(e: SessionEvent<'assistant/message'>, h: EpochHeader | undefined, dialect: Dialect, surfaceTokens: number, ctx: EventDataMap['request/context'] | undefined): void {
    const u = e.data.usage
    if (u === undefined || h === undefined) return
    const prompt = u.inputTokens + (u.cacheReadTokens ?? 0) + (u.cacheWriteTokens ?? 0)
    this.observe(e.seq, h, dialect, surfaceTokens, prompt)
    if (ctx === undefined || ctx.provider !== h.config.provider || ctx.model !== h.config.model || ctx.contextWindow === undefined) return
    const total = prompt + u.outputTokens
    const r = this.entry(h.config)
    if (total > ctx.contextWindow && r.excess === null) r.excess = { usageSeq: e.seq, usageTokens: total, contextWindow: ctx.contextWindow }
  }

  /** A failed attempt's `finish` chunk (the surface is the rejected request's). */
  onRejection(seq: number, code: string, message: string, h: EpochHeader | undefined, dialect: Dialect, surfaceTokens: number): void {
    if (code !== 'CONTEXT_WINDOW_EXCEEDED' || h === undefined) return
    const counted = statedPromptTokens(message)
    if (counted !== null) this.observe(seq, h, dialect, surfaceTokens, counted)
  }

  /** A folded `request/context`: one that carries `capacityWarning` warns its route for good. */
  onContext(data: EventDataMap['request/context']): void {
    if (data.capacityWarning !== undefined) this.entry(data).warned = true
  }

  /** The route's factor in thousandths (1000 without evidence). */
  permille(provider: string, model: string): number {
    return this.routes.get(`${provider}\u0000${model}`)?.permille ?? MIN
  }

  /** Seq of the evidence behind the factor, or -1. */
  evidenceSeq(provider: string, model: string): number {
    return this.routes.get(`${provider}\u0000${model}`)?.evidenceSeq ?? -1
  }

  /** The excess still waiting for its warning record, or null. */
  pendingWarning(provider: string, model: string): { usageSeq: number; usageTokens: number; contextWindow: number } | null {
    const r = this.routes.get(`${provider}\u0000${model}`)
    return r === undefined || r.warned ? null : r.excess
  }
}

/**
 * The calibration factor in thousandths INV-25 and INV-29 apply to the routed target: the evidence's factor when the
 * run's manifest has `hardening.capacitySanity` with `calibrate`, else 1000 (the protocol's figures).
 */
export function checkedPermille(ctx: RunContext, m: CheckerModel): number {
  const rule = hardeningOf(ctx.inputs.policy).capacitySanity
  const route = m.routedTarget()
  if (rule === null || !rule.calibrate || route === null) return MIN
  return m.capacityEvidence.permille(route.provider, route.model)
}

/** Calibrated §2.5 pressure: a usage baseline plus `⌈f · delta⌉`, else `⌈f · total⌉` (recomputed, not core's). */
export function calibratedPressure(reading: { totalTokens: number; baseline: { kind: string; tokens: number } }, permille: number): number {
  if (permille === MIN) return reading.totalTokens
  if (reading.baseline.kind === 'usage') {
    const delta = reading.totalTokens - reading.baseline.tokens
    return Math.max(0, reading.baseline.tokens + Math.ceil((delta * permille) / 1000))
  }
  return Math.max(0, Math.ceil((reading.totalTokens * permille) / 1000))
}

function sameWarning(a: unknown, b: { usageSeq: number; usageTokens: number; contextWindow: number }): boolean {
  if (typeof a !== 'object' || a === null) return false
  const w = a as Record<string, unknown>
  return w['usageSeq'] === b.usageSeq && w['usageTokens'] === b.usageTokens && w['contextWindow'] === b.contextWindow
}

/**
 * HARD-8: (a) the first `request/context` of a route after its usage exceeded the reported window carries
 * `capacityWarning` naming that usage, no other record carries one, and no conversation request of the route is
 * dispatched while its warning is still unwritten; (b) with `calibrate`, every `request/context` carries
 * `calibration` equal to the factor the logged evidence implies (absent at factor 1), and a request is dispatched
 * only under a record with the current factor.
 */
const hard8: Check = {
  id: 'HARD-8',
  family: 'hardened',
  statement: 'Hardened capacitySanity: usage above the reported window is warned on the next request/context of its route, once; the logged calibration factor is the one the logged usage and rejections imply.',
  applicability: hardenedRuleOn('capacitySanity', 'faithful §2.7'),
  create: (ctx, r) => {
    const rule = hardeningOf(ctx.inputs.policy).capacitySanity
    const expected = (m: CheckerModel, provider: string, model: string): number | undefined => {
      if (rule === null || !rule.calibrate) return undefined
      const p = m.capacityEvidence.permille(provider, model)
      return p > MIN ? p / 1000 : undefined
    }
    return {
      types: ['request/context', 'assistant/chunk'],
      before: (e: LogEvent, _item, m) => {
        if (rule === null) return
        if (e.type === 'request/context') {
          const d = (e as SessionEvent<'request/context'>).data
          const pending = m.capacityEvidence.pendingWarning(d.provider, d.model)
          if (pending !== null && !sameWarning(d.capacityWarning, pending)) {
            r.violation(e.seq, `usage of ${pending.usageTokens} tokens ${at(pending.usageSeq)} exceeds the reported window ${pending.contextWindow} of ${d.provider}/${d.model}, but this request/context does not carry that capacityWarning`)
          } else if (pending === null && d.capacityWarning !== undefined) {
            r.violation(e.seq, `capacityWarning for ${d.provider}/${d.model} without unwarned usage above its reported window (once per route)`)
          }
          const want = expected(m, d.provider, d.model)
          if (d.calibration !== want) {
            const evidence = m.capacityEvidence.evidenceSeq(d.provider, d.model)
            r.violation(e.seq, `calibration ${d.calibration ?? 'absent'} for ${d.provider}/${d.model}, but the logged evidence${evidence >= 0 ? ` (${at(evidence)})` : ''} implies ${want ?? 'none (factor 1)'}`)
          }
          return
        }
        // The first chunk of an attempt is its dispatch: the route context in force must be up to date.
        const c = e as SessionEvent<'assistant/chunk'>
        const s = m.step
        if (s === null || s.turn !== c.data.turn || s.step !== c.data.step || s.attemptOpen) return
        const route = m.routedTarget()
        const ctxNow = m.state.routeContext?.data
        if (route === null || ctxNow === undefined || ctxNow.provider !== route.provider || ctxNow.model !== route.model) return
        const pending = m.capacityEvidence.pendingWarning(route.provider, route.model)
        if (pending !== null) {
          r.violation(e.seq, `request dispatched for ${route.provider}/${route.model} before the capacityWarning for the usage ${at(pending.usageSeq)} was written`)
        }
        const want = expected(m, route.provider, route.model)
        if (ctxNow.calibration !== want) {
          r.violation(e.seq, `request dispatched for ${route.provider}/${route.model} under calibration ${ctxNow.calibration ?? 'absent'}, but the logged evidence implies ${want ?? 'none (factor 1)'}`)
        }
      },
    }
  },
}

/** The capacity checks, listed only when `hardening.capacitySanity` is on (`run.ts`). */
export const HARDENED_CAPACITY_CHECKS: readonly Check[] = [hard8]
