/**
 * How the world answers compaction requests (issue #15): each request gets the summarizer of the route
 * serving it (`request.route.summarizer`), else the scenario's `provider.summarizer`, with that route's
 * tokenizer for the output cap, at its attempt number.
 *
 * Attempt counting: attempt k of a summary route is the k-th compaction request that route (its model id)
 * receives, whatever answers it — the summarizer or a fault that fires instead (a faulted attempt consumes
 * its scripted reply). Requests the route's enforcement rejects before planning are not attempts. The count
 * spans the whole scenario: after a crash restore, the resumed world first counts the killed child's
 * compaction requests (`countEarlier`, fed from the child's request capture), so a script continues where
 * the crashed process stopped instead of restarting at attempt 1.
 */
import type { CapturedRequest } from '@compaction-sim/core'
import { summaryReply, type SummarizerSpec } from '../provider/summarizers.ts'
import { createTokenizer, type ProviderTokenizer } from '../provider/tokenizers.ts'
import type { FaultInjectingPlan } from '../provider/faults.ts'
import type { ParsedRequest, PlannedReply, ReplyPlan } from '../provider/types.ts'

/** The summarizer and tokenizer that answer `request` (module doc); `fallback` is the scenario provider's summarizer. */
export function summarizerFor(
  request: ParsedRequest, fallback: SummarizerSpec, tokenizerOf: (request: ParsedRequest) => ProviderTokenizer,
): { spec: SummarizerSpec; tokenizer: ProviderTokenizer } {
  return { spec: request.route?.summarizer ?? fallback, tokenizer: tokenizerOf(request) }
}

/** The summary routes' attempt counters and replies (module doc). One per world. */
export class SummaryService {
  private readonly fallback: SummarizerSpec
  private readonly attempts = new Map<string, number>()
  private readonly tokenizers = new Map<string, ProviderTokenizer>()

  constructor(fallback: SummarizerSpec) {
    this.fallback = fallback
  }

  /** The attempt number `request` is (1-based), without counting it. */
  attemptOf(request: ParsedRequest): number {
    return (this.attempts.get(routeKey(request)) ?? 0) + 1
  }

  /** Counts `request` as an attempt of its route. */
  count(request: ParsedRequest): void {
    const key = routeKey(request)
    this.attempts.set(key, (this.attempts.get(key) ?? 0) + 1)
  }

  /** Counts the compaction requests an earlier process of this scenario dispatched (a crash child's capture). */
  countEarlier(requests: readonly CapturedRequest[]): void {
    for (const r of requests) if (r.purpose === 'compaction') this.attempts.set(r.model, (this.attempts.get(r.model) ?? 0) + 1)
  }

  /** The reply the route's summarizer gives `request` at its current attempt. */
  reply(request: ParsedRequest): PlannedReply {
    const { spec, tokenizer } = summarizerFor(request, this.fallback, (r) => this.tokenizer(r))
    return summaryReply(spec, request, this.attemptOf(request), tokenizer)
  }

  private tokenizer(request: ParsedRequest): ProviderTokenizer {
    const name = request.route?.tokenizer ?? 'heuristic'
    let t = this.tokenizers.get(name)
    if (t === undefined) {
      t = createTokenizer(name)
      this.tokenizers.set(name, t)
    }
    return t
  }
}

function routeKey(request: ParsedRequest): string {
  return request.route?.model ?? request.model
}

/**
 * `faulted` as a plan that also counts a compaction request a fault answered (the base plan, which counts
 * the requests it serves itself, was not consumed): the attempt happened all the same (module doc).
 */
export function countingFaultedSummaries(faulted: FaultInjectingPlan, summaries: SummaryService): ReplyPlan {
  return {
    peek: (request) => faulted.peek(request),
    next: (request) => {
      const before = faulted.fired.length
      const outcome = faulted.next(request)
      if (faulted.fired.length > before && request.purpose === 'compaction') summaries.count(request)
      return outcome
    },
  }
}
