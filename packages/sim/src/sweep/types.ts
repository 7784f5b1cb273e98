/**
 * The `sweep.json` document of `sim sweep` (issue #10), published as `packages/sim/schema/sweep-report.schema.json`:
 * the grid, the scenarios and seeds, one entry per grid cell (skipped with the §3.2 reason, or run with its
 * metrics summed over scenarios × seeds and its per-run rows), the Pareto set and a recommendation per window.
 * A pure function of its inputs: no wall-clock value, cells in grid order whatever the worker count or shard.
 */

import type { HardeningRule } from '@compaction-sim/core'
import type { SummarizerConfig } from '../scenario/types.ts'

/** Version of the sweep document; bumped on any incompatible change. */
export const SWEEP_REPORT_SCHEMA_VERSION = 1

/** The policy grid: every combination of the four axes is a cell. */
export interface SweepGrid {
  /** §3.1 `thresholdRatio` values, ascending. */
  thresholdRatio: number[]
  /** §3.1 `retainRatio` values, ascending. */
  retainRatio: number[]
  /** Pruner loaded (`true`, the scenario's own config or the §5.1 defaults) or not. */
  pruner: boolean[]
  /** Context windows of the routed model (tokens), ascending. */
  contextWindow: number[]
  /** Seeds each scenario runs with; empty = each scenario's own seed once. */
  seeds: number[]
  /** A recommended policy compacts at most this many times per turn (summed over the runs). */
  compactionsPerTurnMax: number
  /**
   * Summary-route summarizers to compare (issue #20), each replacing the scenarios' own; absent = the scenarios'
   * own summarizer, one per cell.
   */
  summarizer?: SummarizerConfig[]
  /**
   * `retention` (issue #20): the Pareto front also maximises probe retention and cache reuse, and the
   * recommendation prefers the cell that keeps most; absent = cost, compactions and overflow incidents only.
   */
  objective?: 'retention'
  /**
   * Policy profiles to compare (issue #19): each cell sets the scenarios' `policy.profile` and replaces their
   * `policy.hardening` (a rule profile: `faithful` plus that one rule); absent = the scenarios' own profile, one
   * per cell (and the document has no profile fields at all).
   */
  profile?: SweepProfile[]
  /**
   * `true` (`--own-policy`, grid key `ownPolicy: true`): every scenario keeps its own policy and windows, so the
   * `thresholdRatio`, `retainRatio`, `pruner` and `contextWindow` axes are empty and the cells differ only by
   * summarizer and profile (e.g. a faithful-vs-hardened comparison of scenarios written for their own policies).
   */
  ownPolicy?: true
}

/**
 * A policy profile of the `profile` axis (issue #19; `packages/core/docs/hardened.md`): the protocol as written
 * (`faithful`), every HARD rule on (`hardened`), or one rule alone on top of faithful (its config key, e.g.
 * `failureBackoff`), which is how a sweep measures each rule's own effect.
 */
export type SweepProfile = 'faithful' | 'hardened' | HardeningRule

/**
 * The policy of one cell. Under a grid's `ownPolicy` the four policy fields are absent: each scenario runs with its
 * own threshold, retention, pruner and windows, and only the summarizer and profile axes vary.
 */
export interface SweepPolicy {
  thresholdRatio?: number
  retainRatio?: number
  pruner?: boolean
  contextWindow?: number
  /** The summarizer of the cell (present when the grid has a `summarizer` axis). */
  summarizer?: SummarizerConfig
  /** The profile of the cell (present when the grid has a `profile` axis). */
  profile?: SweepProfile
}

/** Metrics of one run (one scenario under one seed) of a cell. See README "Tune thresholds" for the definitions. */
export interface SweepRunMetrics {
  file: string
  seed: number
  /** The run's scenario status (`failed` = an expectation or invariant failed; `error` = it could not run). */
  status: 'passed' | 'failed' | 'skipped' | 'error'
  /** Why a run was skipped or errored. */
  reason?: string
  turns: number
  requests: number
  compactions: number
  prunes: number
  failedBrackets: number
  /** Requests dispatched with a prompt above the window (reference meter) or rejected as a context overflow. */
  overflowIncidents: number
  /** Highest and mean reference-meter pressure over the conversation requests (tokens / window). */
  pressureMax: number
  pressureMean: number
  /** Prompt tokens of the compaction (summary) requests. */
  summaryPromptTokens: number
  /** Prompt tokens of every request (the reference meter at dispatch). */
  promptTokens: number
  /** Cached prompt tokens (the cache section when present, else the shared-prefix estimate). */
  cachedTokens: number
  /** Predicted cost (cache-cost model, issue #9); null when the run's report carries no cache section. */
  cost: number | null
  /** §12 invariant violations (must be 0); their ids in `violationIds`. */
  violations: number
  violationIds: string[]
  /** Current facts of the transcript and how many survive in the last conversation request. */
  factsTotal: number
  factsKept: number
  /**
   * Retention probes (issue #20), summed over every compaction cycle and kind of the run's `retention` section:
   * planted before the cycle, and visible after it. Present when the report has that section.
   */
  probesPlanted?: number
  probesVisible?: number
  /**
   * Present when the grid has a `profile` axis (issue #19): conversation requests the provider rejected
   * (a captured request with a failure code), and compaction (summary) requests dispatched.
   */
  providerRejections?: number
  summaryCalls?: number
  /** Turns whose outcome is `completed` (issue #19; present under a `profile` axis). */
  turnsCompleted?: number
}

/** Sums over a cell's runs. */
export interface SweepCellMetrics {
  runs: number
  /** Runs whose status is not `passed` (failed, skipped, error). */
  runsNotPassed: number
  turns: number
  compactions: number
  prunes: number
  failedBrackets: number
  overflowIncidents: number
  pressureMax: number
  /** Mean over runs of each run's mean pressure. */
  pressureMean: number
  summaryPromptTokens: number
  promptTokens: number
  cachedTokens: number
  /** `promptTokens − cachedTokens`. */
  uncachedTokens: number
  /** Σ cost, null when any run has none. */
  cost: number | null
  violations: number
  /** `Σ factsKept / Σ factsTotal`; null when no scenario carries facts. */
  retention: number | null
  /**
   * `Σ probesVisible / Σ probesPlanted` over the runs (the area under their retention curves, issue #20); null
   * when no cycle had a planted probe. Present when some run reports probes.
   */
  probeRetention?: number | null
  /** `cachedTokens / promptTokens` (null without prompt tokens); present under the `retention` objective. */
  cacheReuse?: number | null
  /**
   * Present when the grid has a `profile` axis (issue #19): Σ provider rejections, Σ summary calls, and
   * `100 × compactions / turns` (null without turns); `cacheReuse` is then present too.
   */
  providerRejections?: number
  summaryCalls?: number
  turnsCompleted?: number
  compactionsPer100Turns?: number | null
}

/** One grid cell. */
export interface SweepCell {
  /** Position in the full grid (window, pruner, threshold, retain order): the merge order. */
  index: number
  /** Stable id, e.g. `w8000-t0.7-r0.1-p1`; the shard assignment hashes it. */
  id: string
  policy: SweepPolicy
  status: 'ran' | 'skipped'
  /** Why a cell did not run: the §3.2 rule it breaks. */
  skipReason?: string
  metrics?: SweepCellMetrics
  runs?: SweepRunMetrics[]
  /** On the Pareto front of its window (minimal cost, compactions and overflow incidents; zero violations). */
  pareto?: true
}

/** The recommended cell of one window, with the reasoning. */
export interface SweepRecommendation {
  contextWindow: number
  /** The recommended cell's id; null when no cell qualifies. */
  cell: string | null
  policy: SweepPolicy | null
  reasoning: string
}

/** The sweep document. */
export interface SweepReport {
  schemaVersion: typeof SWEEP_REPORT_SCHEMA_VERSION
  tool: { name: 'compaction-sim'; version: string }
  /** Deterministic id: a hash of the grid, the scenarios and the seeds. */
  sweepId: string
  grid: SweepGrid
  /** Scenario files, in the order given (globs expanded and sorted). */
  scenarios: string[]
  /** What the Pareto front and the recommendation minimise as cost: `cost` (cache-cost model) or `uncachedTokens`. */
  costBasis: 'cost' | 'uncachedTokens'
  /** False when the sweep was interrupted (Ctrl-C): only the finished cells are listed. */
  complete: boolean
  /** The slice this document holds (`--shard i/n`); absent on an unsharded or merged sweep. */
  shard?: { index: number; count: number }
  summary: { cells: number; ran: number; skipped: number; runs: number; violations: number; pareto: number }
  cells: SweepCell[]
  recommendations: SweepRecommendation[]
}
