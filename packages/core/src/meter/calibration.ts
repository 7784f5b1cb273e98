/**
 * Capacity evidence per route for the hardened rule HARD-8 (`hardening.capacitySanity`, `docs/hardened.md`).
 * The meter folds it from the log alone, so a restored engine and the checker see the same figures:
 *
 * - a **calibration observation** compares what the provider counted for one request with the meter's estimate
 *   of the same request, `envelopePrice(H) + surfaceTokens` (`P_route`) of the prefix the request was built from.
 *   Two sources: an appended `assistant/message` with `usage` (observed = `inputTokens + cacheReadTokens +
 *   cacheWriteTokens`, the prompt side) and a failed attempt's `finish` chunk whose `CONTEXT_WINDOW_EXCEEDED`
 *   failure message states the counted prompt (the OpenAI, DeepSeek and Anthropic wordings, `overflowPromptTokens`).
 *   The route's factor is the latest observation's `ceil(1000 · observed / estimated)` permille, bounded to
 *   [`CALIBRATION_MIN_PERMILLE`, `CALIBRATION_MAX_PERMILLE`];
 * - a **capacity excess** is the first `assistant/message` of a route whose usage (`inputTokens + cacheReadTokens +
 *   cacheWriteTokens + outputTokens`, the §2.5 provider figure) is above the `contextWindow` of the route's latest
 *   `request/context`: evidence that the adapter-reported window is wrong. A `request/context` carrying
 *   `capacityWarning` marks the route as warned for the rest of the log.
 *
 * Nothing here changes a faithful measurement: the meter folds the evidence always, and only the hardened engine
 * reads it.
 */
import type { LlmFailure, TokenUsage } from '../log/llm.ts'
import type { Measurement } from './measurement.ts'

/** Factors are kept in thousandths, so every figure derived from one is an exact integer computation. */
export const CALIBRATION_SCALE = 1000
/** The smallest factor (1: the estimate is never scaled down). */
export const CALIBRATION_MIN_PERMILLE = 1000
/** The largest factor (8: twice the worst script the §2.2 4-units-per-token rule under-prices). */
export const CALIBRATION_MAX_PERMILLE = 8000

/** One request the provider counted, against the meter's estimate of it. */
export interface CalibrationObservation {
  /** The seq of the evidence: the `assistant/message` with usage, or the failed attempt's `finish` chunk. */
  readonly seq: number
  readonly source: 'usage' | 'rejection'
  /** Prompt tokens the provider counted. */
  readonly observedTokens: number
  /** `envelopePrice(H) + surfaceTokens` of the request's prefix. */
  readonly estimatedTokens: number
  /** The bounded factor in thousandths (`calibrationPermille`). */
  readonly permille: number
}

/** The first usage above the reported window of a route. */
export interface CapacityExcess {
  /** Seq of the `assistant/message` whose usage exceeded the window. */
  readonly usageSeq: number
  /** `inputTokens + cacheReadTokens + cacheWriteTokens + outputTokens`. */
  readonly usageTokens: number
  /** The `contextWindow` of the route's latest `request/context` then. */
  readonly contextWindow: number
}

/** What the log says about one route's capacity and pricing. */
export interface RouteCapacityEvidence {
  /** The latest observation; undefined before the first. */
  readonly calibration: CalibrationObservation | undefined
  /** The first excess; undefined when usage never exceeded the reported window. */
  readonly excess: CapacityExcess | undefined
  /** True once a `request/context` of the route carried `capacityWarning`. */
  readonly warned: boolean
}

/** `"provider/model"` of a route (the capacity key of §2.7). */
export function capacityRouteKey(provider: string, model: string): string {
  return `${provider}/${model}`
}

/** Factors are rounded up to tenths (100 thousandths), so a steady ratio does not rewrite `request/context` each step. */
export const CALIBRATION_STEP_PERMILLE = 100

/**
 * `observed / estimated` rounded up to tenths, in thousandths (`100 · ceil(10 · observed / estimated)`), bounded to
 * [1000, 8000]; 1000 when either figure is not positive. Integer arithmetic: `observed · 10` is exact and a non-integer
 * quotient of integers of this size never rounds to an integer.
 */
export function calibrationPermille(observedTokens: number, estimatedTokens: number): number {
  if (!(estimatedTokens > 0) || !(observedTokens > 0)) return CALIBRATION_MIN_PERMILLE
  const steps = CALIBRATION_SCALE / CALIBRATION_STEP_PERMILLE
  const raw = Math.ceil((observedTokens * steps) / estimatedTokens) * CALIBRATION_STEP_PERMILLE
  return Math.min(CALIBRATION_MAX_PERMILLE, Math.max(CALIBRATION_MIN_PERMILLE, raw))
}

/** The factor as logged on `request/context.calibration` (`permille / 1000`). */
export function calibrationValue(permille: number): number {
  return permille / CALIBRATION_SCALE
}

/** `ceil(permille · tokens / 1000)`; exact for either sign (a negative relief is rounded towards zero). */
export function scaleTokens(tokens: number, permille: number): number {
  return Math.ceil((tokens * permille) / CALIBRATION_SCALE)
}

/**
 * The calibrated pressure of a measurement: with a usage baseline only the estimated surface change since the
 * anchor is scaled (`baseline + ceil(f · delta)`); an estimated baseline is all estimate and is scaled whole.
 * At factor 1 this is exactly `totalTokens`.
 */
export function calibratedTotal(m: Pick<Measurement, 'baseline' | 'surfaceDeltaTokens' | 'totalTokens'>, permille: number): number {
  if (permille === CALIBRATION_MIN_PERMILLE) return m.totalTokens
  if (m.baseline.kind === 'usage') return Math.max(0, m.baseline.tokens + scaleTokens(m.surfaceDeltaTokens, permille))
  return Math.max(0, scaleTokens(m.baseline.tokens + m.surfaceDeltaTokens, permille))
}

/** The retained-tail budget in estimate units: `ceil(1000 · retain / f)`, so the tail scaled by f covers `retain`. */
export function calibratedRetain(retainTokens: number, permille: number): number {
  if (permille === CALIBRATION_MIN_PERMILLE) return retainTokens
  return Math.ceil((retainTokens * CALIBRATION_SCALE) / permille)
}

/** The prompt side of a usage record: `inputTokens + cacheReadTokens + cacheWriteTokens`. */
export function usagePromptTokens(usage: TokenUsage): number {
  return usage.inputTokens + (usage.cacheReadTokens ?? 0) + (usage.cacheWriteTokens ?? 0)
}

const OVERFLOW_COUNTS: readonly RegExp[] = [
  /your messages resulted in (\d+) tokens/i, // OpenAI, prompt only
  /you requested \d+ tokens \((\d+) in the messages/i, // OpenAI and DeepSeek, prompt + completion
  /prompt is too long: (\d+) tokens > \d+ maximum/i, // Anthropic
  /input length and `max_tokens` exceed context limit: (\d+) \+ \d+ > \d+/i, // Anthropic, prompt + max_tokens
]

/**
 * The prompt tokens a provider states it counted in a window rejection, or undefined. Only a
 * `CONTEXT_WINDOW_EXCEEDED` failure, and only the wordings of the real OpenAI, DeepSeek and Anthropic errors
 * (which the adapters pass through as `LlmFailure.message`, and the loop logs in the attempt's `finish` chunk).
 */
export function overflowPromptTokens(failure: LlmFailure): number | undefined {
  if (failure.code !== 'CONTEXT_WINDOW_EXCEEDED') return undefined
  for (const pattern of OVERFLOW_COUNTS) {
    const match = pattern.exec(failure.message)
    const n = match === null ? NaN : Number(match[1])
    if (Number.isSafeInteger(n) && n > 0) return n
  }
  return undefined
}

/** The per-route fold the meter runs; read through `TokenMeter.capacityEvidence`. */
export class CapacityEvidenceFold {
  private readonly routes = new Map<string, { calibration?: CalibrationObservation; excess?: CapacityExcess; warned: boolean }>()

  /** The evidence of a route (empty when the log has none). */
  evidence(provider: string, model: string): RouteCapacityEvidence {
    const r = this.routes.get(capacityRouteKey(provider, model))
    return { calibration: r?.calibration, excess: r?.excess, warned: r?.warned ?? false }
  }

  private route(key: string): { calibration?: CalibrationObservation; excess?: CapacityExcess; warned: boolean } {
    let r = this.routes.get(key)
    if (r === undefined) {
      r = { warned: false }
      this.routes.set(key, r)
    }
    return r
  }

  /** A calibration observation of a route (the latest one wins). */
  observe(key: string, seq: number, source: 'usage' | 'rejection', observedTokens: number, estimatedTokens: number): void {
    if (!(estimatedTokens > 0)) return
    const permille = calibrationPermille(observedTokens, estimatedTokens)
    this.route(key).calibration = Object.freeze({ seq, source, observedTokens, estimatedTokens, permille })
  }

  /** A usage figure of a route against its reported window; only the first excess is kept. */
  usage(key: string, seq: number, usageTokens: number, contextWindow: number | undefined): void {
    if (contextWindow === undefined || usageTokens <= contextWindow) return
    const r = this.route(key)
    r.excess ??= Object.freeze({ usageSeq: seq, usageTokens, contextWindow })
  }

  /** A `request/context` that carried `capacityWarning`. */
  warned(key: string): void {
    this.route(key).warned = true
  }
}
