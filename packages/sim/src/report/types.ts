/**
 * The canonical `RunReport` (design §4 item 7): one JSON document per `sim run`, versioned by
 * `schemaVersion`, published as `packages/sim/schema/run-report.schema.json`. Every other format
 * (pretty, markdown, junit, …) is a pure function of it. Deterministic: no wall-clock value appears
 * unless the run asked for `--timings` (then only under `timings` keys). Paths are POSIX, relative to
 * the working directory (`file`) or to the report's folder (`artifacts`).
 */
import type { Dialect } from '@compaction-sim/core'
import type { CheckId, InvariantId, PolicySource } from '../checker/types.ts'

/** Version of the report document; bumped on any incompatible change. */
export const RUN_REPORT_SCHEMA_VERSION = 1

/** How one scenario ended: `error` = it could not run (bad input or an internal failure of sim). */
export type ScenarioStatus = 'passed' | 'failed' | 'skipped' | 'error'

/** One invariant violation as the checker reported it (§12 id, the seq it was found at). */
export interface ReportedViolation {
  /** A §12 invariant id, or a world-truth check id (`WORLD-01` …, issue #21). */
  id: CheckId
  seq: number
  message: string
}

/** One evaluated `expect` item of the scenario. `expected`/`actual` are short human strings. */
export interface ExpectationResult {
  /**
   * Which expectation: `outcome[0]`, `counts.brackets`, `finalPressure.ratioMax`, `events[2]`, `finalSurfaceNodes`,
   * `perPreStep.brackets`, `summarized[0]`, `warnings[0]`, `rejections.window`, `requests[0]`, `durable`, …
   */
  name: string
  passed: boolean
  expected: string
  actual: string
  /**
   * Set when the item was not judged: `seed-specific` = the scenario pins its expectations to its own seed
   * (`expect.seedSpecific`) and ran under another; `dialect` = the subject writes a log dialect that cannot hold
   * what the item looks for (§14, e.g. D-07: rc.8 writes no `compaction/summary-error`). Then `passed` is true
   * (it never fails the scenario) and `actual` is `not evaluated (seed-specific)` or `not evaluated (<§14 rule>)`.
   */
  notEvaluated?: ExpectationSkip
}

/** Why an expectation was not judged (closed). */
export type ExpectationSkip = 'seed-specific' | 'dialect'

/** Countable things of a session log (the names of `expect.counts`, plus totals). */
export interface ScenarioCounts {
  events: number
  turns: number
  /** Chat requests the mock provider received (all purposes). */
  requests: number
  brackets: number
  failedBrackets: number
  prunes: number
  offloads: number
  retries: number
  summaryErrors: number
  checkpoints: number
  /** Child processes killed at a §13.4 crash point (each followed by a restore). */
  crashes: number
}

/** How a turn ended (`turn/end` reason kind and, for `error`, its failure code). */
export interface ReportedOutcome {
  turn: number
  kind: string
  code?: string
}

/** Pressure at the end of the session, by the reference meter (§2). */
export interface FinalPressure {
  tokens: number
  /** `tokens / contextWindow`, null when the route reports no window. */
  ratio: number | null
  contextWindow: number | null
}

/** An injected fault and how many times it fired. */
export interface ReportedFault {
  id: string
  kind: string
  fired: number
}

/** What a timeline marker marks: a compaction bracket's start or end (§5), a prune (§6), an image offload (§6.5). */
export type TimelineMarkerKind = 'compaction-start' | 'compaction-end' | 'prune' | 'offload'

/** One log event marked on a pressure timeline. */
export interface TimelineMarker {
  kind: TimelineMarkerKind
  seq: number
  /** The bracket's `compactionId`, on `compaction-start` and `compaction-end` markers. */
  compactionId?: string
  /** Set on the `compaction-end` of a failed bracket (one that carries an `error`). */
  failed?: true
}

/** The reference meter's pressure (§2.5) at the dispatch of one captured request. */
export interface TimelinePoint {
  /** The request's dispatch index (`index` in the request capture). */
  request: number
  purpose: 'conversation' | 'compaction'
  /** The log length when the request was dispatched (`logRevisionAtDispatch`): the seq the point sits at. */
  seq: number
  tokens: number
  /** `tokens / contextWindow`, null when the route in force reports no window. */
  ratio: number | null
  /** §3.3 threshold of the route in force (`floor(contextWindow × thresholdRatio)`), null when there is none. */
  thresholdTokens: number | null
  /** The prompt of this request as the provider's tokenizer counted it (issue #15); present when the scenario reports `drift`. */
  providerTokens?: number
}

/** A scenario's pressure over its log: one point per captured request, and the compaction, prune and offload events. */
export interface ScenarioTimeline {
  /** Events in the final log (the x-axis spans seq 0 … `events`). */
  events: number
  points: TimelinePoint[]
  markers: TimelineMarker[]
}

/** How often one protocol path was reached by a scenario (filled by the path-coverage work, issue #8). */
export interface ReportedPath {
  path: string
  reached: number
}

/** Provider cache contract a mock follows (issue #9): the plain §9.3 model, or an OpenAI-, Anthropic- or DeepSeek-style contract. */
export type CacheContractName = 'protocol' | 'openai' | 'anthropic' | 'deepseek'

/** How a scenario's mock deviates from its contract when it reports usage (`none` = it follows the contract). */
export type CacheDeviation = 'none' | 'none-cached' | 'half-cached'

/** Kind of a §9.4 divergence cause. */
export type CacheCauseKind = 'none' | 'replacement' | 'prune' | 'offload' | 'tools-change' | 'route-change'

/** The cache usage the provider reported for one request (absent when the reply carried no usage). */
export interface CacheReportedUsage {
  /** Cache-read tokens the provider reported. */
  cached: number
  /** Prompt tokens processed without the cache (input minus read and write). */
  uncached: number
  /** Cache-write tokens reported (Anthropic-style `cache_creation_input_tokens`); 0 for contracts without a write metric. */
  written: number
}

/** One captured request under the §9 model and the scenario's cache contract (§9.4). */
export interface CacheRequestRow {
  /** The request's dispatch index (`index` in the request capture). */
  index: number
  purpose: 'conversation' | 'compaction'
  /** `provider/model` of the request (§9.2 `cacheKey`, rendered with a slash). */
  cacheKey: string
  /** `true` when the provider rejected the request (it is not a cache source, §9.3). */
  rejected: boolean
  /** §9.2 `prompt(R)`: Σ segment weights. */
  prompt: number
  /** Cache-read tokens the contract predicts. */
  cached: number
  /** `prompt − cached`. */
  uncached: number
  /** Cache-write tokens the contract predicts (Anthropic-style); 0 for contracts without writes. */
  written: number
  /** §9.3 `divergence`: index of the first segment not reused from the best source; null when there is no source. */
  divergence: number | null
  /** Dispatch index of the best source (§9.3 tie-break); null when there is none. */
  source: number | null
  /** §9.4 cause as text: `replacement@1`, `prune@4`, `offload@5`, `tools-change`, `route-change`, `none`. */
  cause: string
  causeKind: CacheCauseKind
  /** §9.4 `recomputed(R)`: tokens processed before that must be processed again. */
  recomputed: number
  /** Output tokens (the reply's reported usage, else the §9.3 default). */
  output: number
  /** Predicted cost of the request in the price table's currency (input, read, write and output). */
  cost: number
  /** What the mock provider reported; absent when the reply carried no usage (e.g. a rejected request). */
  reported?: CacheReportedUsage
  /** `true` when the reported usage differs from the prediction (cached, uncached or written). */
  mismatch?: true
  /** `true` when the scenario scripted this reply's usage (then the provider did not report by contract; no `mismatch` is flagged). */
  scripted?: true
}

/** Token totals over a set of requests. */
export interface CacheTotals {
  requests: number
  prompt: number
  cached: number
  uncached: number
  /** `Σ cached / Σ prompt`; null when no prompt tokens. */
  reuseRatio: number | null
}

/** The price table entry a scenario's costs were computed with (packages/sim/src/metrics/prices.ts). */
export interface CachePriceRef {
  /** Version of the price table file. */
  tableVersion: number
  /** The date the table's prices were taken (ISO `YYYY-MM-DD`). */
  tableDate: string
  /** The priced model family entry, e.g. `openai/gpt-4.1`. */
  entry: string
  currency: 'USD'
}

/** The `cache` section of one scenario (issue #9): per-request reuse under the §9 model and the contract, and its aggregates. */
export interface ScenarioCache {
  contract: CacheContractName
  deviation: CacheDeviation
  /** Granularity in tokens the prediction rounds to (§9.3 `G`; 128 for OpenAI-style). */
  granularityTokens: number
  /** Cache retention on the virtual clock; null = unlimited. */
  ttlMs: number | null
  price: CachePriceRef
  requests: CacheRequestRow[]
  overall: CacheTotals
  conversation: CacheTotals
  compaction: CacheTotals
  /** Series boundaries (§10.3): `request/header` events with reason `series`. */
  seriesBoundaries: number
  /** §9.4 tokens recomputed because of compaction (Σ recomputed over replacement/prune/offload causes). */
  recomputedByCompaction: number
  /** Predicted cost of the compaction (summary) requests. */
  summaryCost: number
  /** Prompt tokens later conversation requests did not send because of summary replacements (Σ shadowed − checkpoint). */
  tokensSaved: number
  /** `tokensSaved` priced at the cache-read price (conservative: those tokens would mostly have been a warm prefix). */
  savedCost: number
  /** Extra cost of `recomputedByCompaction` (input price − read price per token). */
  recomputeCost: number
  /** `savedCost − summaryCost − recomputeCost`. */
  netSaving: number
  /** Requests whose reported usage differs from the prediction. */
  mismatches: number
  /** Requests whose usage was scripted by the scenario (not produced by the contract); their mismatches are expected. */
  scriptedUsage: number
}

/** Run-level cache totals over every scenario that carries a `cache` section. */
export interface RunCache {
  scenarios: number
  overall: CacheTotals
  cost: number
  netSaving: number
  mismatches: number
  /** Scenario files with at least one mismatch between reported and predicted usage. */
  mismatchedScenarios: string[]
  price: { tableVersion: number; tableDate: string }
}

/**
 * Meter-vs-provider drift of one scenario (issue #15) over its conversation requests that carry both
 * `meterTokensAtDispatch` and `providerPromptTokens`: per request `(provider − meter) / meter` in percent,
 * signed (positive = the provider counts more than the meter said), rounded to 0.01.
 */
export interface ScenarioDrift {
  /** Conversation requests measured. */
  requests: number
  meanPct: number
  /** The largest signed drift. */
  maxPct: number
  /** Dispatch index of the request with `maxPct` (the first one on a tie). */
  maxRequest: number
  /** The smallest signed drift. */
  minPct: number
}

/** Files written for one scenario, relative to the report folder. */
export interface ScenarioArtifacts {
  log: string
  manifest: string
  requests: string
}

/** The result of one scenario under one subject. */
export interface ScenarioReport {
  /** The scenario file as given (POSIX, relative to the working directory). */
  file: string
  name: string
  subject: string
  seed: number
  dialect: Dialect
  status: ScenarioStatus
  /** Why a `skipped` scenario did not run (e.g. a §14 rule for a subject lacking the feature). */
  skipReason?: string
  /** What stopped an `error` scenario: `file:line:column` or the internal error's message. */
  error?: string
  /**
   * Whose fault an `error` is: `input` (a bad scenario, exit 2), `internal` (a bug of sim, exit 3) or
   * `watchdog` (a child showed no sign of life within its scaled liveness bound, issue #18; exit 3).
   */
  errorKind?: 'input' | 'internal' | 'watchdog'
  artifacts?: ScenarioArtifacts
  counts?: ScenarioCounts
  outcomes?: ReportedOutcome[]
  finalPressure?: FinalPressure
  /** Where the checker's policy came from (always `manifest` for runs of sim). */
  policySource?: PolicySource
  /** Invariants the scenario selected (`all` = every id of §12). */
  invariants?: 'all' | InvariantId[]
  violations: ReportedViolation[]
  expectations: ExpectationResult[]
  faults: ReportedFault[]
  /** Warnings of the subject (pre-step and overflow listeners, failed manual actions), in order; absent when none. */
  warnings?: string[]
  /** One shell command that reproduces this scenario's run exactly. */
  replay: string
  /** Wall-clock duration, present only with `--timings`. */
  timings?: { ms: number }
  /** Pressure over the log by the reference meter (for the HTML report); absent for skipped and errored scenarios. */
  timeline?: ScenarioTimeline
  /** Protocol paths the scenario reached; absent until the path-coverage work (issue #8) fills it. */
  paths?: ReportedPath[]
  /** Prompt-cache reuse and cost under the scenario's cache contract (issue #9); absent for skipped and errored scenarios. */
  cache?: ScenarioCache
  /** Meter-vs-provider drift (issue #15); present when the provider world serves routes and some request has both figures. */
  drift?: ScenarioDrift
  /**
   * A several-session scenario (issue #16): each session's verdict and artifacts. The scenario's violations,
   * expectations and faults are then the sessions' (prefixed `session <name>: ` / `<name>.`).
   */
  sessions?: SessionReport[]
  /** The retention curve of the scenario's probes (issue #20); present when it declares or plants probes. */
  retention?: ScenarioRetention
}

/** A retention probe's kind (issue #20). */
export type RetentionKind = 'recall' | 'artifact' | 'continuation' | 'decision'

/** Probes of one kind at one cycle: planted before the cycle's checkpoint, and visible on the surface after it. */
export interface RetentionCount {
  planted: number
  visible: number
  /** `visible / planted` rounded to 4 decimals; null when none was planted yet. */
  share: number | null
  /** Planted probes whose stating event is off the surface (summarized or pruned): only a checkpoint can show them. */
  compacted: number
  /** Of the compacted probes, how many are visible (the summaries kept them). */
  kept: number
  /** `kept / compacted` rounded to 4 decimals; null when none is compacted yet. */
  keptShare: number | null
}

/** One compaction cycle: the surface right after a committed bracket (its `compaction/summary`). */
export interface RetentionCycle {
  /** 1-based, in log order. */
  cycle: number
  /** Seq of the cycle's `compaction/summary` event. */
  seq: number
  /** The turn it ran in (the turns started so far). */
  turn: number
  recall: RetentionCount
  artifact: RetentionCount
  continuation: RetentionCount
  decision: RetentionCount
}

/** The curve of one kind over the cycles. */
export interface RetentionKindCurve {
  kind: RetentionKind
  /** Probes of this kind (declared or planted). */
  probes: number
  /** Of them, how many the log states at all (the others are listed in `unplanted`). */
  planted: number
  /** `share` of each cycle, in cycle order. */
  curve: Array<number | null>
  /** `keptShare` of each cycle, in cycle order: what the summaries kept. */
  keptCurve: Array<number | null>
  /** Share at the last cycle (null without cycles or planted probes). */
  final: number | null
  /** Probes of this kind lost for good (see `lost`). */
  lost: number
}

/** A probe lost at `cycle` and never visible again after it. */
export interface RetentionLoss {
  id: string
  kind: RetentionKind
  cycle: number
  /** Seq of the event that stated it (the last of its expected strings to appear). */
  plantedSeq: number
}

/**
 * The `retention` section (issue #20): after every committed bracket, the share of probes of each kind still
 * visible on the model-visible surface (the checkpoint text plus the retained tail).
 */
export interface ScenarioRetention {
  /** Probes scored (the scenario's and the transcript's planted ones). */
  probes: number
  /** Committed brackets (the curve's length). */
  cycles: number
  kinds: RetentionKindCurve[]
  points: RetentionCycle[]
  lost: RetentionLoss[]
  /** Ids of probes whose expected strings never all appear in the log's messages (not scored). */
  unplanted: string[]
}

/** One session of a several-session scenario (`ScenarioReport.sessions`): its own log, judged on its own. */
export interface SessionReport {
  name: string
  status: 'passed' | 'failed'
  artifacts: ScenarioArtifacts
  counts?: ScenarioCounts
  outcomes?: ReportedOutcome[]
  finalPressure?: FinalPressure
  violations: ReportedViolation[]
  expectations: ExpectationResult[]
  faults: ReportedFault[]
  /** The session's subject warnings, in order; absent when none. */
  warnings?: string[]
}

/** Totals over all scenarios. */
export interface RunSummary {
  total: number
  passed: number
  failed: number
  skipped: number
  error: number
}

/** The canonical report of one `sim run`. */
export interface RunReport {
  schemaVersion: typeof RUN_REPORT_SCHEMA_VERSION
  tool: { name: 'compaction-sim'; version: string }
  /** Deterministic id of the run (from the seed override and the scenario list), also the default folder name. */
  runId: string
  /** The `--seed` override, or null when every scenario ran with its own `seed`. */
  seed: number | null
  summary: RunSummary
  /** In the order the files were given (globs expanded and sorted). */
  scenarios: ScenarioReport[]
  /** Wall-clock totals, present only with `--timings`. */
  timings?: { ms: number }
  /** Subject-vs-subject comparison, present only when the run used two or more subjects (`--subject reference,dsh`). */
  differential?: DifferentialReport
  /** Cache totals over the scenarios that carry a `cache` section (issue #9); absent when none does. */
  cache?: RunCache
  /** The slice this report holds (`sim run --shard i/n`, issue #10); absent on an unsharded or merged run. */
  shard?: RunShard
  /** The seeds of `sim run --seeds` (`seed` is then null; one row per scenario and seed, seeds in this order). */
  seeds?: number[]
}

/** One slice of a sharded `sim run` (issue #10): `sim report merge` rebuilds the unsharded report from all `count`. */
export interface RunShard {
  /** 1-based slice number. */
  index: number
  count: number
  /** Every scenario file of the whole run, in order (the merge's order and run id). */
  files: string[]
}

/** What the differential compares per scenario (issue #7). */
export type DifferentialAspect = 'brackets' | 'shadowed' | 'summaries' | 'prunes' | 'offloads' | 'retries' | 'surface' | 'pressure'

/** One difference between the base subject's log and another's, after the §14 normalizations. */
export interface DifferentialDifference {
  aspect: DifferentialAspect
  /** The base subject's value (JSON text). */
  base: string
  /** The other subject's value (JSON text). */
  other: string
  /** `explained` by a named §14 rule, else `unexplained` (fails the run). */
  verdict: 'explained' | 'unexplained'
  /** The §14 rule (D-nn, or a §14.1 area) that explains it; absent when unexplained. */
  rule?: string
  note: string
}

/** One scenario compared under the base subject and one other. */
export interface DifferentialScenario {
  file: string
  name: string
  base: string
  other: string
  /** `skipped` when either subject did not run the scenario (then `skipReason` says why). */
  status: 'compared' | 'skipped'
  skipReason?: string
  differences: DifferentialDifference[]
}

/** The `differential` section of a multi-subject run. */
export interface DifferentialReport {
  /** The subject every other one is compared with (the first of `--subject`). */
  base: string
  subjects: string[]
  summary: { scenarios: number; compared: number; skipped: number; identical: number; explained: number; unexplained: number }
  scenarios: DifferentialScenario[]
}
