/**
 * The canonical `RunReport` (design §4 item 7): one JSON document per `sim run`, versioned by
 * `schemaVersion`, published as `packages/sim/schema/run-report.schema.json`. Every other format
 * (pretty, markdown, junit, …) is a pure function of it. Deterministic: no wall-clock value appears
 * unless the run asked for `--timings` (then only under `timings` keys). Paths are POSIX, relative to
 * the working directory (`file`) or to the report's folder (`artifacts`).
 */
import type { Dialect } from '@compaction-sim/core'
import type { InvariantId, PolicySource } from '../checker/types.ts'

/** Version of the report document; bumped on any incompatible change. */
export const RUN_REPORT_SCHEMA_VERSION = 1

/** How one scenario ended: `error` = it could not run (bad input or an internal failure of sim). */
export type ScenarioStatus = 'passed' | 'failed' | 'skipped' | 'error'

/** One invariant violation as the checker reported it (§12 id, the seq it was found at). */
export interface ReportedViolation {
  id: InvariantId
  seq: number
  message: string
}

/** One evaluated `expect` item of the scenario. `expected`/`actual` are short human strings. */
export interface ExpectationResult {
  /** Which expectation: `outcome[0]`, `counts.brackets`, `finalPressure.ratioMax`, `events[2]`, `finalSurfaceNodes`, `durable`, … */
  name: string
  passed: boolean
  expected: string
  actual: string
}

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
  /** Whose fault an `error` is: `input` (a bad scenario, exit 2) or `internal` (a bug of sim, exit 3). */
  errorKind?: 'input' | 'internal'
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
}
