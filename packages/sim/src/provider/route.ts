/**
 * One route of the provider world (issue #15): a model the mock serves, with its capacity, prices, limits,
 * tokenizer, wire and (when it serves summary calls) its summarizer. A scenario's `provider.routes[]`
 * resolves to these; the single-model `provider:` block is shorthand for one route.
 *
 * CONTRACT (issue #15 wave 1): shared by the routes, enforcement, tokenizer and summarizer work. Each
 * sub-spec is owned by its module (`enforce.ts`, `tokenizers.ts`, `summarizers.ts`).
 */
import type { EnforceSpec, ImageLimitsSpec, UsageMode } from './enforce.ts'
import type { SummarizerSpec } from './summarizers.ts'
import type { TokenizerName } from './tokenizers.ts'
import type { MockWire } from './types.ts'

/** A resolved, frozen route. */
export interface MockRoute {
  /** The model id requests name (`model` on the wire). */
  readonly model: string
  readonly wire: MockWire
  /** The true window; null = the route reports no capacity (FAULT-40). */
  readonly contextWindow: number | null
  /**
   * A scripted capacity report (FAULT-41) served instead of `contextWindow` by the model endpoint: any number
   * (0, negative, fractional, a wrong but valid window) or null (none). Absent = the true window.
   */
  readonly reportedContextWindow?: number | null
  /** Largest `max_tokens` the route accepts; null = unlimited. */
  readonly maxOutputTokens: number | null
  /** Route price of one image (§2.3); null = not reported. */
  readonly imageTokens: number | null
  readonly tokenizer: TokenizerName
  readonly enforce: EnforceSpec
  readonly imageLimits: ImageLimitsSpec
  readonly usage: UsageMode
  /** What the route answers to compaction requests. */
  readonly summarizer: SummarizerSpec
}

/** The capacity `route` reports (`GET /models/<id>`): its scripted `reportedContextWindow`, else its true window. */
export function reportedWindow(route: MockRoute): number | null {
  return route.reportedContextWindow === undefined ? route.contextWindow : route.reportedContextWindow
}
