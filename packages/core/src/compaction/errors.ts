/**
 * Typed errors of the compaction engine (§7.5, §7.6, §7.9, §8.4, §3.5 step 11). Each class has a stable
 * `code` from a closed union. Bracket failures are classified once (summary / changed / commit, §7.9):
 * automatic entry points throw `CompactionError`, `compactNow` throws `ManualCompactionError` (or the
 * caller's exact abort reason, §7.10).
 */
import type { LlmFailure } from '../log/llm.ts'

/** Expected failure classes for an explicit idle-session compaction request (§7.9, D-17). */
export type ManualCompactionErrorCode = 'busy' | 'cancelled' | 'changed' | 'summary' | 'commit' | 'persistence'

/**
 * A failed `compactNow` (§7.9): `busy` (lock, open turn or admission; nothing written), `cancelled` (agent
 * maintenance cancelled; `cause` is the agent's reason), `changed` / `summary` (the span was not replaced by
 * this bracket), `commit` (a commit-stage or close failure; no promise about partial mutation), `persistence`
 * (the bracket closed successfully but the flush failed).
 */
export class ManualCompactionError extends Error {
  override readonly name = 'ManualCompactionError'
  readonly code: ManualCompactionErrorCode

  constructor(code: ManualCompactionErrorCode, message: string, options?: ErrorOptions) {
    super(message, options)
    this.code = code
  }
}

/** The failure class of a bracket that got past `compaction/start` (§7.9, without cancellation). */
export type CompactionErrorCode = 'summary' | 'changed' | 'commit'

/**
 * A failed automatic bracket (pressure, overflow, `compactRegion`), thrown after the bracket was closed (or
 * could not be closed: `closed` false leaves a live orphan, §7.8). `message` is the rendered error chain of
 * the failure, the same text as `compaction/end.error`; `cause` is the underlying error.
 */
export class CompactionError extends Error {
  override readonly name = 'CompactionError'
  readonly code: CompactionErrorCode
  /** Id of the failed bracket. */
  readonly compactionId: string
  /** True when a `compaction/end` was appended (with `error`, or on the success path); false = live orphan. */
  readonly closed: boolean

  constructor(code: CompactionErrorCode, compactionId: string, closed: boolean, message: string, options?: ErrorOptions) {
    super(message, options)
    this.code = code
    this.compactionId = compactionId
    this.closed = closed
  }
}

/**
 * A summarizer-hook rejection (§8.4, §7.4): carries the structured `LlmFailure` unchanged (including
 * `offloadImages`, which the in-bracket offload of §6.8 needs) and the call's target when one was resolved.
 * `message` is the failure's message; `code` is its canonical code.
 */
export class SummarizerError extends Error {
  override readonly name = 'SummarizerError'
  readonly failure: LlmFailure
  readonly provider?: string
  readonly model?: string
  readonly maxTokens?: number

  constructor(failure: LlmFailure, target: { provider?: string; model?: string; maxTokens?: number } = {}, options?: ErrorOptions) {
    super(failure.message, options)
    this.failure = failure
    if (target.provider !== undefined) this.provider = target.provider
    if (target.model !== undefined) this.model = target.model
    if (target.maxTokens !== undefined) this.maxTokens = target.maxTokens
  }

  /** The failure's canonical code (§1.2.1). */
  get code(): string { return this.failure.code }
}

/** The selected span or its prices changed while the bracket was open (§7.3, §7.6); class `changed`. */
export class SurfaceChangedError extends Error {
  override readonly name = 'SurfaceChangedError'
  readonly code = 'SURFACE_CHANGED'
}

/** The framed checkpoint is not cheaper than what it would shadow (§7.5, INV-17); class `summary`. */
export class SummaryNotSmallerError extends Error {
  override readonly name = 'SummaryNotSmallerError'
  readonly code = 'NOT_SMALLER'
  /** `P_fixed` of the framed checkpoint. */
  readonly framedTokens: number
  /** `shadowedTokenCount` of the prepared span. */
  readonly shadowedTokens: number

  constructor(framedTokens: number, shadowedTokens: number) {
    super(`summary is not smaller than the shadowed content (${framedTokens} estimated framed tokens >= ${shadowedTokens})`)
    this.framedTokens = framedTokens
    this.shadowedTokens = shadowedTokens
  }
}

/** §3.5 step 11: pressure is still at or above the threshold after the configured number of attempts (FAULT-33). */
export class CompactionConvergenceError extends Error {
  override readonly name = 'CompactionConvergenceError'
  readonly code = 'NOT_CONVERGED'
  /** The configured total `compactionRetries + 1`, even when selection ran out earlier. */
  readonly attempts: number
  readonly totalTokens: number
  readonly thresholdTokens: number

  constructor(attempts: number, totalTokens: number, thresholdTokens: number) {
    super(`still above threshold after ${attempts} compaction attempts (${totalTokens} estimated tokens >= threshold ${thresholdTokens})`)
    this.attempts = attempts
    this.totalTokens = totalTokens
    this.thresholdTokens = thresholdTokens
  }
}

/** The bracket's owner no longer matches the log at commit (§7.7 "pre-validate … owner"); class `commit`. */
export class BracketOwnerError extends Error {
  override readonly name = 'BracketOwnerError'
  readonly code = 'OWNER'
}

/**
 * HARD-3 (hardened profile, `docs/hardened.md`): the framed checkpoint leaves too little headroom under the
 * pressure threshold. A summary failure: the bracket closes, and the pressure path counts it as a failure.
 */
export class CheckpointBudgetError extends Error {
  override readonly name = 'CheckpointBudgetError'
  readonly code = 'CHECKPOINT_BUDGET'
  /** `P_route` of the framed checkpoint. */
  readonly checkpointTokens: number
  /** threshold − envelope − rest of the surface − margin. */
  readonly budgetTokens: number

  constructor(checkpointTokens: number, budgetTokens: number) {
    super(`checkpoint over its budget (hardened HARD-3): ${checkpointTokens} route tokens > ${budgetTokens} ` +
      '(threshold − envelope − retained surface − margin)')
    this.checkpointTokens = checkpointTokens
    this.budgetTokens = budgetTokens
  }
}

/**
 * HARD-4 (hardened profile, `docs/hardened.md`): the framed checkpoint is not cheaper than what it shadows at
 * the route's prices (`P_route`), though it may pass the §7.5 `P_fixed` rule. A summary failure.
 */
export class NotRelievedError extends Error {
  override readonly name = 'NotRelievedError'
  readonly code = 'NOT_RELIEVED'
  /** `P_route` of the framed checkpoint. */
  readonly checkpointTokens: number
  /** `P_route` of the shadowed nodes as metered. */
  readonly shadowedRouteTokens: number

  constructor(checkpointTokens: number, shadowedRouteTokens: number) {
    super(`summary gives no metered relief (hardened HARD-4): ${checkpointTokens} route tokens >= ` +
      `${shadowedRouteTokens} route tokens shadowed`)
    this.checkpointTokens = checkpointTokens
    this.shadowedRouteTokens = shadowedRouteTokens
  }
}
