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
 *
 * Upstream summarizers (issue #20, `provider/upstream.ts`): the reply comes from the world's cassette, keyed by
 * the upstream request the compaction request maps to; attempts do not matter (the same request gets the same
 * reply). In record mode `prepare` fetches what the cassette lacks before the plan is asked; in replay mode a
 * missing entry throws `CassetteMissError` (the mock answers 500 and the run reports it as an input error).
 */
import type { CapturedRequest } from '@compaction-sim/core'
import { summaryReply, type SummarizerSpec } from '../provider/summarizers.ts'
import { createTokenizer, type ProviderTokenizer } from '../provider/tokenizers.ts'
import type { FaultInjectingPlan } from '../provider/faults.ts'
import type { ParsedRequest, PlannedReply, ReplyPlan } from '../provider/types.ts'
import {
  cassetteKey, cassetteMiss, recordUpstream, replyOfUpstream, upstreamRequestBody, type Cassette, type RecordOptions,
} from '../provider/upstream.ts'

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
  private readonly cassette: Cassette | null
  private readonly recordOptions: RecordOptions

  /** `cassette` answers upstream summarizers (null: a scenario without one; an upstream request then throws). */
  constructor(fallback: SummarizerSpec, cassette: Cassette | null = null, recordOptions: RecordOptions = {}) {
    this.fallback = fallback
    this.cassette = cassette
    this.recordOptions = recordOptions
  }

  /**
   * Record mode: fetches the upstream reply of a compaction request the cassette lacks (module doc). No-op for
   * other requests, other summarizers, recorded keys and replay mode.
   */
  async prepare(request: ParsedRequest): Promise<void> {
    if (request.purpose !== 'compaction' || this.cassette === null || !this.cassette.record) return
    const { spec } = summarizerFor(request, this.fallback, (r) => this.tokenizer(r))
    if (spec.kind !== 'upstream') return
    const body = upstreamRequestBody(spec.upstream, request)
    const key = cassetteKey(body)
    if (this.cassette.get(key) !== undefined) return
    await recordUpstream(spec.upstream, request, body, key, this.cassette, this.recordOptions)
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
    if (spec.kind === 'upstream') {
      if (this.cassette === null) throw new RangeError('an upstream summarizer needs the scenario\'s cassette (createWorld `cassette`)')
      const key = cassetteKey(upstreamRequestBody(spec.upstream, request))
      const entry = this.cassette.get(key)
      if (entry === undefined) throw cassetteMiss(this.cassette, request, key)
      return replyOfUpstream(entry, key)
    }
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
