/**
 * Restore (§11.4): rebuild a session from its durable log for a new lifecycle. The stored events are
 * validated as appends (unknown required types refuse, §1.1 rule 4); a surface whose tool pairing goes
 * negative refuses (INV-08); a log that ends inside an open turn gets the repair closers of §11.4 (never
 * a `compaction/*` event, INV-19); then `session/end-seed` unless the seed already ends with one (FAULT-57).
 * An unmatched `compaction/start` before that end-seed is stale and blocks nothing (§7.12, §11.1).
 */
import { LogError } from '../errors.ts'
import { EventLog, type EventLogOptions } from '../log/event-log.ts'
import type { LogEvent, SessionEvent } from '../log/events.ts'
import { repairClosers } from '../log/lifecycle.ts'

/** Why a stored log cannot be restored. Each names the first offending seq. */
export type RestoreErrorCode =
  | 'UNKNOWN_TYPE' // a type this dialect does not know, without `ignorable: true` (§1.1 rule 4)
  | 'INVALID_EVENT' // the event is refused as an append (§1 validation: shape, seq, replace, offload)
  | 'NEGATIVE_PAIRING' // the surface's tool-pairing balance goes negative, e.g. an orphan tool result (INV-08)

/** An input error: the stored log cannot be restored. `seq` is the first offending event. */
export class RestoreError extends Error {
  override readonly name = 'RestoreError'
  readonly code: RestoreErrorCode
  readonly seq: number

  constructor(code: RestoreErrorCode, seq: number, message: string, options?: ErrorOptions) {
    super(`seq ${seq}: ${message}`, options)
    this.code = code
    this.seq = seq
  }
}

/** Options of `restoreSession`. */
export interface RestoreOptions extends EventLogOptions {
  /** Time of the `session/end-seed` (the first event of the new lifecycle). */
  readonly clock: () => number
}

/** A restored session: the log of the new lifecycle and what restore appended to it. */
export interface RestoredSession {
  readonly log: EventLog
  /** Repair closers appended after the stored events (§11.4), possibly none. */
  readonly closers: readonly SessionEvent[]
  /** The end-seed written, or null when the seed already ended with one (FAULT-57). */
  readonly endSeed: SessionEvent<'session/end-seed'> | null
}

/**
 * Restores `stored` (contiguous events from storage, seq 0 first) into a fresh `EventLog`: validate and
 * fold every event, refuse negative pairing, append repair closers if a turn is open, then an end-seed
 * unless the seed (stored ++ closers) already ends with one. A new `Agent` over the returned log logs
 * `resume` on its first header (§10.3, §11.5). Throws `RestoreError` naming the first offending seq.
 */
export function restoreSession(stored: readonly LogEvent[], options: RestoreOptions): RestoredSession {
  const { clock, ...logOptions } = options
  const log = new EventLog(logOptions)
  for (const [index, event] of stored.entries()) {
    try {
      log.accept(event)
    } catch (err) {
      if (!(err instanceof LogError)) throw err
      const seq = err.location.seq ?? index
      const code = err.code === 'UNKNOWN_TYPE' ? 'UNKNOWN_TYPE' : 'INVALID_EVENT'
      throw new RestoreError(code, seq, `cannot restore: ${err.reason}`, { cause: err })
    }
    if (log.state.surface.firstNegativePosition >= 0) {
      const reason = 'cannot restore: the tool-pairing balance goes negative here (an orphan tool result, INV-08)'
      throw new RestoreError('NEGATIVE_PAIRING', event.seq, reason)
    }
  }
  const closers: SessionEvent[] = []
  for (const closer of repairClosers(log.events)) closers.push(log.accept(closer) as SessionEvent)
  const last = log.events[log.length - 1]
  const endSeed = last?.type === 'session/end-seed'
    ? null
    : log.append({ time: clock(), type: 'session/end-seed', data: {} }) as SessionEvent<'session/end-seed'>
  return { log, closers, endSeed }
}

