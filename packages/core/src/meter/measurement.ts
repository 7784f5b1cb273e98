/** The token meter's result types (§2.4, §2.5). */
import type { Seq } from '../brand.ts'
import type { TokenUsage } from '../log/llm.ts'

/** The meter's reference point for `totalTokens` (§2.5). */
export type Baseline =
  | { kind: 'usage'; tokens: number; usage: TokenUsage }
  | { kind: 'estimated'; tokens: number }
  | { kind: 'none'; tokens: 0 }

/** One priced surface node (`P_route` of its projected message; 0 when it projects to null). */
export interface PricedNode {
  readonly seq: Seq
  readonly tokens: number
}

/** A detached, immutable measurement of a log prefix (§2.5 `measure`). */
export interface Measurement {
  /** Length of the log prefix measured. */
  readonly logRevision: number
  readonly baseline: Baseline
  readonly surfaceDeltaTokens: number
  /** Pressure: `max(0, baseline.tokens + surfaceDeltaTokens)`. */
  readonly totalTokens: number
  readonly surfaceTokens: number
  /** Surface nodes in position order with their metered prices. */
  readonly nodes: readonly PricedNode[]
}
