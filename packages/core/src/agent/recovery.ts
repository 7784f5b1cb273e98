/**
 * Request-error recovery (§3.10, §6.6, §1.4.13): the waterfall that runs inside the failed step after the
 * failed attempt's chunks are logged and before any retry. Listeners, in order: overflow recovery
 * (`CONTEXT_WINDOW_EXCEEDED` only), image offload (`IMAGE_OFFLOAD_REQUIRED` only), the generic transient
 * retry (its own codes only, never the two protocol codes, INV-35). The terminal default is `fail`: the
 * original failure stays authoritative (INV-34). Cancellation always wins over a retry decision.
 */
import { FailureCode } from '../adapter/contract.ts'
import { errorChain } from '../errors.ts'
import type { EventLog } from '../log/event-log.ts'
import type { LlmFailure } from '../log/llm.ts'
import { appendOffload, offloadCountOf, selectOffload } from '../offload/select.ts'
import { resolveTargetPolicy, type CompactionPolicySpec } from '../policy/config.ts'
import { routedTarget } from '../policy/pressure.ts'
import type { DerivedMessage } from '../surface/derive.ts'
import type { AgentCompactionEngine } from './compaction-port.ts'
import { retryDelayMs, type RetryPolicySpec } from './options.ts'

/** What a request-error listener sees: the failure of the attempt just logged and where it happened. */
export interface RequestErrorContext {
  readonly failure: LlmFailure
  readonly signal: AbortSignal
  readonly turn: number
  readonly step: number
  /** Provider the failed attempt was actually dispatched to (after middleware). */
  readonly provider: string
  /** The failed request's messages with their surface nodes, in request order (§6.3 selection input). */
  readonly requestNodes: readonly DerivedMessage[]
}

/** A listener's answer: retry in the same step, or let the failure stand. */
export type RequestErrorDecision = { readonly kind: 'retry' } | { readonly kind: 'fail' }

/** One waterfall stage: decide, or delegate to `next()` (§3.10). */
export type RequestErrorListener = (
  context: RequestErrorContext, next: () => Promise<RequestErrorDecision>,
) => Promise<RequestErrorDecision>

const RETRY: RequestErrorDecision = Object.freeze({ kind: 'retry' })
const FAIL: RequestErrorDecision = Object.freeze({ kind: 'fail' })

/**
 * Runs `listeners` as a waterfall: each may answer or call `next()`; past the last one the answer is
 * `fail`. A `retry` answered while `context.signal` is aborted is turned into `fail` (cancellation wins).
 * A listener that throws propagates: such failures are not adapter failures (§1.2.1, FAULT-17).
 */
export async function runRequestErrorWaterfall(
  listeners: readonly RequestErrorListener[], context: RequestErrorContext,
): Promise<RequestErrorDecision> {
  const at = async (index: number): Promise<RequestErrorDecision> => {
    const listener = listeners[index]
    return listener === undefined ? FAIL : listener(context, () => at(index + 1))
  }
  const decision = await at(0)
  return context.signal.aborted ? FAIL : decision
}

/** Dependencies of the overflow listener. */
export interface OverflowRecoveryOptions {
  readonly log: EventLog
  readonly engine: AgentCompactionEngine
  readonly policy: CompactionPolicySpec
  readonly warn: (message: string) => void
}

/**
 * The §3.10 overflow listener with its per-agent `overflowRetries` counter. Retries only on generation
 * proof (INV-32): `replaceGeneration` advanced during recovery — by a bracket or by pruning alone, even when
 * a later summary attempt threw. At most `maxOverflowRetries` of the routed policy in a row (INV-33);
 * `reset()` deletes the counter (on any `assistant/message` and when the agent becomes idle).
 */
export class OverflowRecovery {
  private retries: number | undefined
  private readonly options: OverflowRecoveryOptions

  constructor(options: OverflowRecoveryOptions) {
    this.options = options
  }

  /** The current counter (0 when deleted). */
  get count(): number { return this.retries ?? 0 }

  /** Deletes the counter (§3.10 reset rules). */
  reset(): void { this.retries = undefined }

  /** The listener; bind-free so it can sit in a waterfall array. */
  readonly listener: RequestErrorListener = async (context, next) => {
    const { log, engine, policy, warn } = this.options
    const { failure, signal } = context
    if (failure.code !== FailureCode.CONTEXT_WINDOW_EXCEEDED || signal.aborted) return next()
    const target = routedTarget(log)
    if (target === null) return next() // FAULT-09: no routed target, nothing to compact against
    const n = this.retries ?? 0
    if (n >= resolveTargetPolicy(policy, target).maxOverflowRetries) return next() // FAULT-07, FAULT-08
    const g0 = log.state.surface.replaceGeneration
    try {
      await engine.compactIfNeeded('context-overflow', signal)
    } catch (err) {
      if (!signal.aborted && log.state.surface.replaceGeneration > g0) {
        warn(`overflow compaction failed after durable surface progress: ${errorChain(err)}; retrying from the replacement surface`)
        this.retries = n + 1
        return RETRY // FAULT-05
      }
      const consequence = signal.aborted ? 'cancellation prevents retry' : 'preserving the original request error'
      warn(`overflow compaction failed: ${errorChain(err)}; ${consequence}`)
      return next() // FAULT-06, FAULT-11
    }
    if (signal.aborted || log.state.surface.replaceGeneration <= g0) return next() // FAULT-03, FAULT-10
    this.retries = n + 1
    return RETRY // FAULT-01, FAULT-02, FAULT-04
  }
}

/**
 * The §6.6 image-offload listener: for `IMAGE_OFFLOAD_REQUIRED` with a positive integer `offloadImages`
 * (§6.1; else FAULT-15), selects the oldest eligible occurrences of the failed request (§6.3) and records
 * them with one `image/offload`; retries in the same step without `llm/retry` and without spending the
 * retry budget. Nothing selectable → delegate (FAULT-14).
 */
export function imageOffloadListener(log: EventLog, clock: () => number): RequestErrorListener {
  return async (context, next) => {
    const { failure, signal } = context
    if (failure.code !== FailureCode.IMAGE_OFFLOAD_REQUIRED || signal.aborted) return next()
    const count = offloadCountOf(failure)
    if (count === undefined) return next()
    const targets = selectOffload(context.requestNodes, log, count)
    if (targets.length === 0) return next()
    appendOffload(log, targets, clock)
    return RETRY
  }
}

/** Dependencies of the generic transient-retry listener. */
export interface TransientRetryOptions {
  readonly log: EventLog
  readonly spec: RetryPolicySpec
  readonly clock: () => number
  readonly newRetryId: () => string
  /** Virtual back-off; may reject when `signal` aborts. */
  readonly sleep: (ms: number, signal: AbortSignal) => Promise<void>
}

/**
 * The generic retry policy of §1.4.13: for its transient codes, writes `llm/retry`, sleeps, writes
 * `llm/retry-started`, and retries. Its budget is the count of its `llm/retry` events for the same turn,
 * step, provider and policy, independent of overflow recovery and offload (FAULT-16).
 */
export class TransientRetry {
  private readonly used = new Map<string, number>()
  private readonly options: TransientRetryOptions

  constructor(options: TransientRetryOptions) {
    this.options = options
  }

  /** Forgets the budgets of the previous step (budgets are per turn and step). */
  startStep(): void { this.used.clear() }

  /** The listener; bind-free so it can sit in a waterfall array. */
  readonly listener: RequestErrorListener = async (context, next) => {
    const { log, spec, clock, newRetryId, sleep } = this.options
    const { failure, signal, turn, step, provider } = context
    if (!spec.codes.includes(failure.code) || signal.aborted) return next()
    const key = JSON.stringify([turn, step, provider])
    const retry = (this.used.get(key) ?? 0) + 1
    if (retry > spec.maxRetries) return next()
    this.used.set(key, retry)
    const retryId = newRetryId()
    const delayMs = retryDelayMs(spec, retry, failure.providerRetryAfterMs)
    log.append({
      time: clock(), type: 'llm/retry',
      data: {
        retryId, turn, step, provider, mode: 'normal', policyKey: spec.policyKey, retry, maxRetries: spec.maxRetries, delayMs, failure,
      },
    })
    try {
      await sleep(delayMs, signal)
    } catch (err) {
      if (signal.aborted) return FAIL // cancellation during the back-off: no retry-started, the loop ends the turn
      throw err
    }
    if (signal.aborted) return FAIL
    log.append({ time: clock(), type: 'llm/retry-started', data: { retryId, turn, step, retry } })
    return RETRY
  }
}
