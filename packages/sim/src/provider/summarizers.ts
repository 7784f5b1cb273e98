/**
 * Summarizers of a summary route (issue #15): what the mock answers to a `purpose: compaction` request.
 * `builtin` is the deterministic §8.3 summarizer (`deterministic-summary.ts`); `fixed` answers n characters;
 * `ratio` answers a summary priced at a fraction of the region's §2.2 price (≥ 1 allowed: a summary that
 * does not shrink); `script` answers, per attempt, exactly what it says (text, reasoning, tool calls,
 * images, finish, chunking, virtual latency).
 *
 * CONTRACT (issue #15 wave 1): `SummarizerSpec` and `summaryOutcome` are shared by the routes and
 * summarizer work; the non-builtin kinds are filled in by the summarizer work.
 */
import { deterministicSummary } from './deterministic-summary.ts'
import type { ProviderTokenizer } from './tokenizers.ts'
import type { ParsedRequest, PlannedFinish, PlannedOutcome } from './types.ts'

/** One scripted attempt of a `script` summarizer (every key optional; absent = nothing of that kind). */
export interface SummaryAttemptSpec {
  readonly text?: string
  readonly reasoning?: string
  readonly toolCalls?: readonly { readonly name: string; readonly arguments: string }[]
  readonly images?: number
  readonly finish?: PlannedFinish
  /** SSE data events to cut the reply into (default: the mock's `deltaChars` pieces). */
  readonly chunks?: number
  /** Virtual milliseconds before the first byte. */
  readonly latencyMs?: number
}

/** A summary route's summarizer, resolved. */
export type SummarizerSpec =
  | { readonly kind: 'builtin' }
  | { readonly kind: 'fixed'; readonly chars: number }
  | { readonly kind: 'ratio'; readonly ratio: number }
  | { readonly kind: 'script'; readonly attempts: readonly SummaryAttemptSpec[] }

/** The default summarizer. */
export const BUILTIN_SUMMARIZER: SummarizerSpec = Object.freeze({ kind: 'builtin' })

/**
 * The outcome of the `attempt`-th (1-based, counted per summary route over the whole scenario) compaction
 * request `request`, with the route's tokenizer for any output cap.
 */
export function summaryOutcome(
  spec: SummarizerSpec, request: ParsedRequest, attempt: number, tokenizer: ProviderTokenizer,
): PlannedOutcome {
  void attempt
  void tokenizer
  // Wave-1 stub: every kind answers the builtin summary until the summarizer work lands.
  void spec
  return { kind: 'reply', reply: { blocks: [{ type: 'text', text: deterministicSummary(request) }] } }
}
