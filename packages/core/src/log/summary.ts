/** A plain-data summary of a session's folded state at the end of its log (what `sim inspect` prints). */
import type { Dialect, HeaderReason } from './events.ts'
import type { EventLog } from './event-log.ts'

/** The folded state at the end of a log, as plain JSON data. */
export interface SessionSummary {
  dialect: Dialect
  /** Number of events in the log. */
  events: number
  /** Surface node seqs in position order. */
  surface: number[]
  replaceGeneration: number
  offloadCount: number
  /** Series epoch now (§10.3). */
  seriesEpoch: number
  /** The header in force (§10.2), or null before the first snapshot. */
  header: {
    seq: number
    reason: HeaderReason
    startsSeries: boolean
    seriesEpochAtHeader: number
    provider: string
    model: string
  } | null
  openTurn: number | null
  openStep: { turn: number; step: number } | null
  /** Unmatched `compaction/start`s: stale orphans of earlier lifecycles, then the live one (§11.1). */
  openBrackets: Array<{ compactionId: string; startSeq: number; turn: number | null; live: boolean }>
  lastEndSeed: number | null
}

/** Summarises the folded state of `log` at its end. O(surface + open brackets). */
export function summarizeSession(log: EventLog): SessionSummary {
  const s = log.state
  const h = s.header
  return {
    dialect: log.dialect,
    events: log.length,
    surface: [...s.surface.nodes],
    replaceGeneration: s.surface.replaceGeneration,
    offloadCount: s.offloadCount,
    seriesEpoch: s.seriesEpoch,
    header: h === null ? null : {
      seq: h.seq,
      reason: h.reason,
      startsSeries: h.startsSeries,
      seriesEpochAtHeader: h.epochAtHeader,
      provider: h.header.config.provider,
      model: h.header.config.model,
    },
    openTurn: s.openTurn,
    openStep: s.openStep,
    openBrackets: s.openBrackets.map((b) => ({ compactionId: b.compactionId, startSeq: b.startSeq, turn: b.turn, live: b.live })),
    lastEndSeed: s.lastEndSeed,
  }
}
