/**
 * The public `Subject` contract (design §2 "subject"), exported from `@compaction-sim/sim`: something that
 * runs a scenario's transcript as a session against the mock provider over real HTTP and leaves a durable
 * session log in the seed dialect. Kinds: the reference core, the official DSH engine (`dsh`) and user
 * modules (`--subject module:<path>`, `subjects/module.ts`). A subject owns its log file; the runner owns
 * the provider world and only talks to the subject through these types. After the session the runner judges
 * the log with the checker (§12), the returned request capture (§1.1) and the scenario's `expect`.
 */
import type { CapturedRequest, Dialect, EventDraft, LogEvent, StreamMiddleware, TurnEndReason } from '@compaction-sim/core'
import type { Transcript } from '@compaction-sim/fixtures'
import type { ExpectationGaps } from '../run/expectations.ts'
import type { ResolvedScenario } from '../scenario/resolve.ts'

/** What the world may change between turns (FAULT-44 route switch). */
export interface TurnControl {
  /** Switches the proposed model (same provider) from the next request on. */
  setModel(model: string): void
}

/** A manual action as the world is told of it (`SubjectHooks.beginManual`). */
export interface ManualCall {
  readonly kind: 'compactNow'
  /** The action's `afterTurn` (0 = before the first turn). */
  readonly afterTurn: number
}

/** Read-only views of a running session that fault targeting needs (`SubjectHooks.observeSession`). */
export interface SessionView {
  /** The session's virtual clock, without advancing it (what a capture's `time` reads at dispatch), in epoch ms. */
  now(): number
  /** Where that clock starts (epoch ms): fault targeting's `atVirtualMs` counts from here. */
  readonly originMs: number
  /** The session log's length now (what a capture's `logRevisionAtDispatch` reads at dispatch). */
  logLength(): number
}

/** Calls from the subject into the provider world; every hook is optional. */
export interface SubjectHooks {
  /**
   * Called once, before the first turn, with views of the session: the world times `atVirtualMs` faults by its clock
   * and stamps the crash child's fault counts with its log length. A subject that never calls it gets no
   * `atVirtualMs` fault fired (the report says why).
   */
  observeSession?: (view: SessionView) => void
  /** Before 1-based `turn` runs: aligns the provider's replies; returns the turn's abort signal (FAULT-10, FAULT-22). */
  beginTurn?: (turn: number, control: TurnControl) => AbortSignal | undefined
  /**
   * Before each manual `compactNow` (§3.7) of `scenario.manual` runs: returns the caller signal to pass to it. A
   * manual compaction has no turn, so without this signal the world has nothing to abort when a FAULT-22 summary
   * call hangs (§7.10: the bracket closes `end{error}` and the caller's exact abort reason is thrown).
   */
  beginManual?: (call: ManualCall) => AbortSignal | undefined
  /** A fresh per-call timeout signal for the HTTP adapter (the world aborts it when a `TIMEOUT` fault hangs). */
  adapterTimeout?: () => AbortSignal
  /** Stream middleware installed on the subject's runtime, in order (FAULT-17 throws, FAULT-32 reroutes). */
  middleware?: readonly StreamMiddleware[]
  /** FAULT-31: the summarizer sees no routed target and no agent route, so no summary target resolves (§8.1). */
  unroutableSummarizer?: boolean
  /**
   * FAULT-09: direct API use — conversation requests are dispatched without logging `request/header` (or
   * `request/context`), so the log has no routed target (§2.7) and overflow recovery delegates.
   */
  directApi?: boolean
  /**
   * FAULT-60…63 (§13.5): asked before the compaction engine appends each bracket event (after its
   * pre-validation); a string refuses the append with that storage-fault message, null lets it through.
   */
  rejectAppend?: (draft: EventDraft) => string | null
  /**
   * Called when the subject runs item `index` of the scenario's `concurrent:` block (§13.6, §13.7): the world
   * counts the scenario's FAULT-70…84 as fired once any item ran.
   */
  concurrentRan?: (index: number) => void
  /**
   * FAULT-64/65 (§13.5, §7.11): asked when the compaction engine awaits the session durability checkpoint after a
   * closed manual bracket (`failed`: the bracket closed with `end{error}`); a string makes that flush fail with
   * this storage-fault message, null lets it through.
   */
  rejectFlush?: (bracket: FlushPoint) => string | null
}

/** What a manual flush follows (`SubjectHooks.rejectFlush`). */
export interface FlushPoint {
  /** The bracket just closed with `compaction/end{error}` (a failed bracket); false after a committed one. */
  readonly failed: boolean
}

/** Options of one subject session (see `runReferenceSession` for the reference subject's contract). */
export interface SubjectSessionOptions {
  /**
   * The resolved scenario: provider (`provider.wire`, `name`, `model` of the conversation route), every route
   * the mock serves (`provider.routes`, with `conversationRoute` and `summaryRoute`; issue #15), policy (a
   * summary route other than the conversation route is its `summarizationProvider`/`summarizationModel`),
   * pruner, manual actions. Route capacities are also served by `GET <baseUrl>/models/<id>`.
   */
  scenario: ResolvedScenario
  /** What to replay: the system prompt, tools, each turn's user input and the results of its tool calls. */
  transcript: Transcript
  /** The durable JSONL log file (created unless `resume`); seed dialect, every event fsync'ed (§1.1). */
  logPath: string
  /** Base URL of the mock provider, including the version path (e.g. `http://mock.sim.test/v1`). */
  baseUrl: string
  /** The fetch to use (default: the global one, which msw patches). */
  fetch?: typeof fetch
  /** The run's seed (uint32): the subject's ids and random choices derive from it. */
  seed: number
  /** Restore the existing log (§11.4) and continue at the turn after its last one. */
  resume?: boolean
  /**
   * Called synchronously after each event is durably fsync'ed, in seq order, before the store writes the
   * next one (the store's own hook, one append per write when set): a caller that blocks here stops the
   * writer exactly at that event (the crash harness, §13.4).
   */
  onDurable?: (event: LogEvent) => void
  /**
   * Called synchronously with a snapshot of each captured request (§1.1) when it is dispatched, and again
   * (same `index`, final `outcome`) when it finishes; the later call supersedes. `logLength` is the log's
   * length at that moment (at dispatch, `logRevisionAtDispatch`). The crash child writes these out, so the
   * requests of a killed session reach the capture (§13.4).
   */
  onRequest?: (request: CapturedRequest, logLength: number) => void
  /**
   * Calls into the provider world. A subject must call `beginTurn` before each turn (the provider serves
   * that turn's replies) and should honour the rest as far as its declared `features` say.
   */
  hooks?: SubjectHooks
  /**
   * A clean stop (issue #16, feature `restart`): end this lifecycle at the point through the subject's own API
   * — after turn `afterTurn` (and its manual actions), or right after the log's `inBracket`-th `compaction/start`
   * (counted over the whole log) is durable, leaving that bracket open and persisting nothing after it. The
   * store is closed normally (nothing torn); the runner then calls `runSession` again with `resume` (§11.4).
   */
  stop?: SubjectStop
}

/** Where a subject stops its lifecycle cleanly (`SubjectSessionOptions.stop`). */
export type SubjectStop = { readonly kind: 'afterTurn'; readonly turn: number } | { readonly kind: 'inBracket'; readonly occurrence: number }

/** How one turn ended. */
export interface SubjectTurnOutcome {
  /** 1-based turn number (the log's `turn/start` turn). */
  turn: number
  /** The reason of its `turn/end`. */
  reason: TurnEndReason
}

/** What a subject session produced besides its log file. */
export interface SubjectSessionResult {
  /** Turns run by this session (a resumed session lists only its own). */
  outcomes: SubjectTurnOutcome[]
  /** Listener warnings and manual-compaction failures, in order. */
  warnings: string[]
  /** Every request dispatched to the provider (§1.1 capture; conversation and compaction). */
  requests: CapturedRequest[]
  /** `compaction/start` seqs of explicit `compactRegion` calls (§1.1 `explicitRegionStarts`). */
  explicitRegionStarts: number[]
  /** Events in the log when the session ended (all durable). */
  events: number
  /** The last turn of the log before this session started (0 for a new one). */
  startedAfterTurn: number
  /** Set when the session ended at its `stop` point: the log's length then (all durable). Absent otherwise. */
  stoppedAt?: { events: number }
}

/**
 * What a subject can do beyond running plain turns. A scenario that needs a feature the subject does not
 * declare is reported `skipped` with the reason (`subjects/features.ts` derives the needs of a scenario):
 *
 * - `manualCompaction` — runs `manual: compactNow` actions (§3.7) after their turn.
 * - `explicitRegion` — runs `manual: compactRegion` actions (§3.8) before their step; reports `explicitRegionStarts`.
 * - `manualPrune` — runs `manual: prune` actions after their turn: the pruner with no turn open (FAULT-66, §5.4 rule 4).
 * - `imageOffload` — [seed-only] image offload (§6): `image/offload` on IMAGE_OFFLOAD_REQUIRED (FAULT-12…15, 29, 30).
 * - `summaryError` — [seed-only] logs `compaction/summary-error` for a failed summary (§1.4.16).
 * - `seriesHeaders` — [seed-only] `request/header` reason `series` / `startsSeries` (§10.3), when a scenario expects them.
 * - `abort` — honours the turn's abort signal from `hooks.beginTurn` (FAULT-10, FAULT-22) and a manual compaction's
 *   caller signal from `hooks.beginManual` (FAULT-22 on a `compactNow` summary call).
 * - `timeouts` — passes `hooks.adapterTimeout()` to each provider call (FAULT-21).
 * - `routeSwitch` — applies `TurnControl.setModel` (FAULT-44).
 * - `middleware` — installs `hooks.middleware` on its runtime (FAULT-17, FAULT-32).
 * - `unroutableSummarizer` — honours `hooks.unroutableSummarizer` (FAULT-31).
 * - `crash` — supports `resume` and `onDurable` as the store's hook, so it can run in the crash child (§13.4).
 * - `directApi` — honours `hooks.directApi`: dispatches without `request/header` logging (FAULT-09).
 * - `appendFaults` — routes its engine's bracket appends through `hooks.rejectAppend` (FAULT-60…63, and FAULT-11's live lock).
 * - `flushFaults` — asks `hooks.rejectFlush` at its engine's manual durability checkpoint and fails that flush (FAULT-64, 65).
 * - `steering` — enters a transcript step's `steer` message as a `user/message` when the next step of the turn opens.
 * - `resultOrder` — logs a step's tool results in the transcript's order when it differs from the call order.
 * - `anthropicWire` — speaks the Anthropic messages wire (`POST <baseUrl>/messages`) when `provider.wire` is `anthropic`.
 * - `concurrency` — runs the scenario's `concurrent:` items in-process at their points (§13.6, §13.7) and records
 *   each outcome as a `concurrent[<i>] …` warning; calls `hooks.concurrentRan`.
 * - `sessions` — several `runSession` calls of one scenario run concurrently in the process, each on its own log and
 *   `baseUrl` (`sessions:`); one session's compaction lock never blocks another's (§11.1, INV-45).
 * - `restart` — honours `options.stop` (a clean stop after a turn or inside a bracket) and resumes (`resume`) in the same process.
 */
export const SUBJECT_FEATURES = [
  'manualCompaction', 'explicitRegion', 'manualPrune', 'imageOffload', 'summaryError', 'seriesHeaders',
  'abort', 'timeouts', 'routeSwitch', 'middleware', 'unroutableSummarizer', 'crash', 'directApi', 'appendFaults',
  'flushFaults', 'steering', 'resultOrder', 'anthropicWire', 'concurrency', 'sessions', 'restart',
] as const

/** One feature of `SUBJECT_FEATURES`. */
export type SubjectFeature = (typeof SUBJECT_FEATURES)[number]

/**
 * A subject: one session per `runSession` call, deterministic for a given scenario, transcript and seed
 * (no wall clock, no unseeded randomness: the same inputs must give a byte-identical log).
 */
export interface Subject {
  /** Short name shown in reports (`subject` of each scenario), e.g. `reference` or `my-backend`. */
  readonly name: string
  /**
   * What the subject can do (see `SUBJECT_FEATURES`); scenarios needing anything else are skipped with the
   * reason. Absent = every feature (the reference subject's case).
   */
  readonly features?: readonly SubjectFeature[]
  /** Log dialect the subject writes and the checker reads it with (§14.1). Absent = `seed`. */
  readonly dialect?: Dialect
  /**
   * Why this subject cannot run `scenario` (it is then `skipped` with this reason, checked before `features`),
   * or null. The `dsh` subject names the §14 rule (D-nn) of the missing release feature.
   */
  skipReason?(scenario: ResolvedScenario): string | null
  /**
   * The `expect` items this subject's log dialect cannot hold (§14), or null when all can be judged. They are
   * reported `not evaluated (<rule>)` and never fail the scenario; invariants and every other item still judge
   * the run. The `dsh` subject names D-07 (`compaction/summary-error`), D-06 (`image/offload`), D-02
   * (`system/message`) and the §14.1 checkpoint framing of seed error texts.
   */
  expectationGaps?(scenario: ResolvedScenario): ExpectationGaps | null
  /**
   * Runs (or, with `resume`, continues) one session and resolves once every event is durable in
   * `options.logPath`. Provider failures must end turns, not reject; reject only for bugs or I/O errors
   * (the runner reports those as internal errors).
   */
  runSession(options: SubjectSessionOptions): Promise<SubjectSessionResult>
}
