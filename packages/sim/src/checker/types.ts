/**
 * The checker's vocabulary (§12): stable invariant ids, violations, the per-run context, and the shape
 * every registered check has. A check owns one INV id; it receives the events of ONE streaming fold
 * (`CheckerModel`, §12.0) through hooks and reports violations through a `Reporter` bound to its id.
 */
import type { WorldRecord } from '../provider/world-record.ts'
import type { CapturedRequest, CompactionPolicySpec, Dialect, FaultSpec, LogEvent, PruneSpec, RunManifest } from '@compaction-sim/core'

/** Every invariant id of §12, in catalog order. Ids are an API (design §4 item 6): never renumbered. */
export const INVARIANT_IDS = [
  'INV-01', 'INV-02', 'INV-03', 'INV-04', 'INV-05', 'INV-06', 'INV-07', 'INV-08', 'INV-09', 'INV-10',
  'INV-11', 'INV-12', 'INV-13', 'INV-14', 'INV-15', 'INV-16', 'INV-17', 'INV-18', 'INV-19', 'INV-20',
  'INV-21', 'INV-22', 'INV-23', 'INV-24', 'INV-25', 'INV-26', 'INV-27', 'INV-28', 'INV-29', 'INV-30',
  'INV-31', 'INV-32', 'INV-33', 'INV-34', 'INV-35', 'INV-36', 'INV-37', 'INV-38', 'INV-39', 'INV-40',
  'INV-41', 'INV-42', 'INV-43', 'INV-44', 'INV-45', 'INV-46', 'INV-47',
] as const

/** One stable invariant id of §12 (`INV-01` … `INV-47`). */
export type InvariantId = (typeof INVARIANT_IDS)[number]

/** The world-truth checks (issue #21, `world.ts`): the log judged against the world record. Never renumbered. */
export const WORLD_CHECK_IDS = ['WORLD-01', 'WORLD-02', 'WORLD-03', 'WORLD-04', 'WORLD-05', 'WORLD-06'] as const

/** One world-truth check id. */
export type WorldCheckId = (typeof WORLD_CHECK_IDS)[number]

/** A check of the hardened profile (issue #19, packages/core/docs/hardened.md): `HARD-1` … `HARD-8`. */
export type HardCheckId = `HARD-${number}`

/** The id of any registered check: a §12 invariant, a world-truth check, or a hardened-profile check. */
export type CheckId = InvariantId | WorldCheckId | HardCheckId

/** The §12 families; one checker module each. */
export type Family = 'log-surface' | 'bracket' | 'pruning' | 'policy' | 'recovery' | 'offload' | 'reconstruction' | 'lifecycle' | 'world'

/**
 * A broken protocol promise: `seq` is the event where it was detected, `message` names the other events
 * involved. `excerpt` is a short rendering of the offending event for human output (never in `--json`).
 */
export interface Violation {
  id: CheckId
  seq: number
  message: string
  excerpt?: string
}

/** Where each check's verdict stands after a run. */
export type CoverageStatus =
  | 'evaluated' // every instance was judged
  | 'partial' // some instances could not be judged (e.g. a capacity no input gives); see `skipped`
  | 'not-evaluated' // the run lacks what the check needs (e.g. no request capture)
  | 'not-applicable' // the dialect exempts it (§14.1)

/** Coverage of one invariant in one run. */
export interface Coverage {
  id: CheckId
  status: CoverageStatus
  /** Why the check was not (fully) evaluated; empty when `evaluated`. */
  reason: string
  /** Instances that could not be judged (`partial`). */
  skipped: number
}

/** Whether a check runs in a given context, and why not. */
export type Applicability =
  | { kind: 'applies' }
  | { kind: 'not-applicable'; reason: string }
  | { kind: 'not-evaluated'; reason: string }

/** Where the policy, pruner and fault facts of a run came from (§1.1, §12.0 "Without a manifest"). */
export type PolicySource = 'manifest' | 'defaults'

/**
 * The inputs the log does not hold (§1.1 manifest), resolved once per run. Without a manifest every field
 * holds the §12.0 stand-in: §3.1 defaults, §5.1 defaults with the dialect's marker, no explicit calls, no
 * faults, no crashes, capacities only from `request/context`.
 */
export interface RunInputs {
  readonly policySource: PolicySource
  readonly manifestPath: string | null
  readonly manifest: RunManifest | null
  readonly policy: CompactionPolicySpec
  readonly pruner: PruneSpec
  readonly explicitRegionStarts: ReadonlySet<number>
  readonly explicitSeriesHeaders: ReadonlySet<number>
  readonly faults: readonly FaultSpec[]
  readonly crashes: ReadonlySet<number>
  /** Manifest route capacities keyed by `provider\u0000model` (absent routes fall back to `request/context`). */
  readonly manifestCapacity: ReadonlyMap<string, number>
}

/** What every check instance may read about the run. */
export interface RunContext {
  readonly dialect: Dialect
  readonly inputs: RunInputs
  /** The request capture (§1.1), sorted by dispatch order; null when none was given. */
  readonly requests: readonly CapturedRequest[] | null
  /** The world record (issue #21) the WORLD checks judge against; null when none was given. */
  readonly world: WorldRecord | null
}

/**
 * A problem found on one line before the fold (§12.1 INV-01…INV-04 and the validator-detected parts of
 * other invariants): reported by the check that owns `id`.
 */
export interface InputProblem {
  id: InvariantId
  /** Where it is reported; -1 means the item's own seq. */
  seq: number
  message: string
}

/**
 * One event line as the fold sees it. `event` is present iff the line is folded: it passed validation (or
 * only broke rules that leave its shape intact), and its seq is not a duplicate (INV-01). `repair` marks a
 * member of a crash-repair run; `tornFinal` marks an event whose next event starts a repair run or is an
 * end-seed, or the last event with a manifest crash right after it (§12.0).
 */
export interface FoldItem {
  /** 0-based index of the event line (header excluded, packed rows expanded): the seq it must hold (INV-01). */
  readonly index: number
  /** 1-based line in the file, or null for in-memory events. */
  readonly line: number | null
  /** The seq the event is judged under: its own when valid, else `index`. */
  readonly seq: number
  /** The event type as written (`'?'` when it has none). */
  readonly type: string
  readonly event: LogEvent | null
  readonly problems: readonly InputProblem[]
  /** The line holds a seq at or below one already folded (duplicate or out of order); it is not folded. */
  readonly duplicate: boolean
  repair: boolean
  tornFinal: boolean
  /** A short rendering for human output. */
  readonly excerpt: string
}

/** How a check reports. Bound to the check's id; `seq` is where the violation is detected. */
export interface Reporter {
  /** Records a violation at `seq`; `excerptOf` defaults to the event being folded when its seq is `seq`. */
  violation(seq: number, message: string, excerptOf?: string): void
  /** Records that one instance could not be judged (e.g. no capacity is known, §12.0). */
  skip(seq: number, reason: string): void
}

/**
 * A check's per-run hooks. `input` sees every line (folded or not) before the fold; `before` / `after` see
 * folded events of `types` (all types when absent) with the model before / after the event; `end` runs once
 * at the end of the log. Hooks must not throw: the dispatcher converts a throw into an internal error.
 */
export interface CheckHooks<M> {
  readonly input?: (item: FoldItem, model: M) => void
  readonly types?: readonly string[]
  readonly before?: (event: LogEvent, item: FoldItem, model: M) => void
  readonly after?: (event: LogEvent, item: FoldItem, model: M) => void
  readonly end?: (model: M) => void
}

/** One registered invariant check: stable id, family, a short paraphrase of its §12 statement, and hooks. */
export interface InvariantCheck<M> {
  readonly id: CheckId
  readonly family: Family
  readonly statement: string
  /** Whether it runs for this context (dialect adjustments §14.1, missing capture); default: applies. */
  readonly applicability?: (ctx: RunContext) => Applicability
  readonly create: (ctx: RunContext, report: Reporter) => CheckHooks<M>
}
