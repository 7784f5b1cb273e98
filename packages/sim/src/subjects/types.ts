/**
 * What a simulated run drives (design §2 "subject"): something that runs a scenario's transcript as a
 * session against the mock provider over real HTTP and leaves a durable session log. The reference core
 * is the only subject now; a later issue adds the official DSH engine (`dsh`) and user modules. A subject
 * owns its log file; the runner owns the provider world and only talks to the subject through these types.
 */
import type { CapturedRequest, LogEvent, StreamMiddleware, TurnEndReason } from '@compaction-sim/core'
import type { Transcript } from '@compaction-sim/fixtures'
import type { ResolvedScenario } from '../scenario/resolve.ts'

/** What the world may change between turns (FAULT-44 route switch). */
export interface TurnControl {
  /** Switches the proposed model (same provider) from the next request on. */
  setModel(model: string): void
}

/** Calls from the subject into the provider world; every hook is optional. */
export interface SubjectHooks {
  /** Before 1-based `turn` runs: aligns the provider's replies; returns the turn's abort signal (FAULT-10, FAULT-22). */
  beginTurn?: (turn: number, control: TurnControl) => AbortSignal | undefined
  /** A fresh per-call timeout signal for the HTTP adapter (the world aborts it when a `TIMEOUT` fault hangs). */
  adapterTimeout?: () => AbortSignal
  /** Stream middleware installed on the subject's runtime, in order (FAULT-17 throws, FAULT-32 reroutes). */
  middleware?: readonly StreamMiddleware[]
  /** FAULT-31: the summarizer sees no routed target and no agent route, so no summary target resolves (§8.1). */
  unroutableSummarizer?: boolean
}

/** Options of one subject session (see `runReferenceSession` for the reference subject's contract). */
export interface SubjectSessionOptions {
  scenario: ResolvedScenario
  transcript: Transcript
  /** The durable JSONL log file (created unless `resume`). */
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
  hooks?: SubjectHooks
}

/** How one turn ended. */
export interface SubjectTurnOutcome {
  turn: number
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
}

/** A subject: one session per call, deterministic for a given scenario, transcript and seed. */
export interface Subject {
  readonly name: string
  runSession(options: SubjectSessionOptions): Promise<SubjectSessionResult>
}
