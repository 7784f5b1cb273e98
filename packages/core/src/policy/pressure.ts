/**
 * The decision half of `compactIfNeeded(agent, 'pressure', signal)` (§3.5 steps 1–8) and the automatic
 * pre-step listener's warning de-duplication (§3.9). `evaluatePressure` never writes: a below-pressure
 * check returns before anything (pruner, selection, bracket) could touch the log (§3.11).
 */
import type { OpenBracket } from '../log/session-state.ts'
import type { EventLog } from '../log/event-log.ts'
import type { LlmFailure, LlmModelInfo } from '../log/llm.ts'
import type { Measurement } from '../meter/measurement.ts'
import { InvariantError } from '../errors.ts'
import {
  resolveCompactSpec, resolveTargetPolicy, routeKey, TargetPressureConfigError,
  type CompactionPolicySpec, type CompactSpec, type RouteTarget, type TargetPolicy,
} from './config.ts'

/** Thrown when a live compaction lock exists (§11.1, §11.2); an operational failure, warned every time (§3.9). */
export class CompactionBusyError extends Error {
  override readonly name = 'CompactionBusyError'
  readonly code = 'busy'
  /** The live, unmatched `compaction/start`. */
  readonly bracket: OpenBracket
  constructor(bracket: OpenBracket, options?: ErrorOptions) {
    super(`busy: compaction ${bracket.compactionId} (started at seq ${bracket.startSeq}) is still open`, options)
    this.bracket = bracket
  }
}

/**
 * The runtime's rejection of an adapter-reported context window that is not a positive integer (§1.2.1,
 * §2.7 `INVALID_MODEL_CONTEXT`). An operational error for policy, so it is warned every time (§3.9), unlike
 * a missing window, which is a target-pressure configuration error.
 */
export class ModelContextError extends Error {
  override readonly name = 'ModelContextError'
  readonly code = 'INVALID_MODEL_CONTEXT'
  /** `"provider/model"` of the route whose adapter reported the window. */
  readonly key: string
  /** The structured failure the runtime reports (§1.2). */
  readonly failure: LlmFailure
  constructor(key: string, contextWindow: unknown, options?: ErrorOptions) {
    const message = `adapter for ${key} reported context window ${String(contextWindow)}, which is not a positive integer`
    super(message, options)
    this.key = key
    this.failure = { code: 'INVALID_MODEL_CONTEXT', message }
  }
}

/** Inputs of one pressure check (§3.5). `measure` must measure `log` now (its `logRevision` equals `log.length`). */
export interface PressureInput {
  readonly log: EventLog
  readonly spec: CompactionPolicySpec
  readonly measure: () => Measurement
  /** The runtime's live, exact-route capacity lookup (§2.7); its errors propagate. */
  readonly resolveModelInfo: (provider: string, model: string, signal?: AbortSignal) => Promise<LlmModelInfo>
  readonly signal?: AbortSignal
  /**
   * The pressure figure step 8 compares with the threshold; `totalTokens` when absent (the protocol). The hardened
   * HARD-8 calibration passes its calibrated figure (`calibratedTotal`, docs/hardened.md).
   */
  readonly pressureOf?: (m: Measurement) => number
}

/**
 * The outcome of §3.5 steps 1–8. `no-target`: no routed target (step 1). `below`: pressure under the
 * threshold, nothing may be written (step 8). `above`: pressure qualifies; `measurement` is current.
 */
export type PressureDecision =
  | { readonly kind: 'no-target' }
  | { readonly kind: 'below'; readonly measurement: Measurement; readonly compact: CompactSpec }
  | { readonly kind: 'above'; readonly measurement: Measurement; readonly compact: CompactSpec; readonly policy: TargetPolicy }

/** The routed target of the folded header (§2.7): both provider and model non-empty, else null. */
export function routedTarget(log: EventLog): RouteTarget | null {
  const header = log.state.header
  if (header === null) return null
  const { provider, model } = header.header.config
  return provider !== '' && model !== '' ? { provider, model } : null
}

/**
 * §3.5 steps 1–8. Resolves capacity live, re-measures if the log advanced during the lookup (so no stale
 * figure is compared), then checks the lock after the await. Never writes to `log`.
 * Throws: whatever `resolveModelInfo` throws; `ModelContextError` for a reported window that is not a
 * positive integer (the runtime's INVALID_MODEL_CONTEXT, §2.7); `CompactionBusyError` on a live lock (step 5);
 * `TargetPressureConfigError` for a missing window (step 6, `NO_CAPACITY`) or a retained budget not below
 * the threshold (step 7).
 */
export async function evaluatePressure(input: PressureInput): Promise<PressureDecision> {
  const { log, spec, measure, signal } = input
  const target = routedTarget(log) // step 1: no AgentOptions fallback
  if (target === null) return { kind: 'no-target' }
  const policy = resolveTargetPolicy(spec, target) // step 2
  let measurement = currentMeasurement(log, measure) // step 3
  const info = await input.resolveModelInfo(target.provider, target.model, signal) // step 4
  const key = routeKey(target)
  const context = info.context
  if (context !== undefined && (!Number.isSafeInteger(context.contextWindow) || context.contextWindow <= 0)) {
    throw new ModelContextError(key, context.contextWindow)
  }
  // Step 4 (cont.): another entry point may have committed a replacement during the await.
  if (log.length !== measurement.logRevision) measurement = currentMeasurement(log, measure)
  const lock = log.state.lock // step 5, evaluated after the await (§11.1)
  if (lock.state === 'live') throw new CompactionBusyError(lock.bracket)
  if (context === undefined) throw new TargetPressureConfigError('NO_CAPACITY', key, `no context capacity for ${key}`) // step 6
  const compact = resolveCompactSpec(policy, context.contextWindow) // step 7
  const pressure = input.pressureOf === undefined ? measurement.totalTokens : input.pressureOf(measurement)
  if (pressure < compact.thresholdTokens) return { kind: 'below', measurement, compact } // step 8
  return { kind: 'above', measurement, compact, policy }
}

function currentMeasurement(log: EventLog, measure: () => Measurement): Measurement {
  const m = measure()
  if (m.logRevision !== log.length) {
    throw new InvariantError(`measure() returned log revision ${m.logRevision}, but the log has ${log.length} events`)
  }
  return m
}

/**
 * The automatic pre-step listener's de-duplication (§3.9): every operational failure warns every time; a
 * `TargetPressureConfigError` warns once per `"provider/model"` key for the lifetime of this gate (one per
 * engine; a new lifecycle starts with an empty set, §11.5).
 */
export class PressureWarningGate {
  private readonly warnedKeys = new Set<string>()

  /** True when `err` should be logged as a warning now; remembers target-pressure config keys. */
  shouldWarn(err: unknown): boolean {
    if (!(err instanceof TargetPressureConfigError)) return true
    if (this.warnedKeys.has(err.key)) return false
    this.warnedKeys.add(err.key)
    return true
  }
}
