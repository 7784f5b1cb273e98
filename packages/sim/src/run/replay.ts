/**
 * The finished log as core reads it, and the reference meter's final pressure over it (§2.5): shared by the
 * one-session runner and the several-session runner (`sessions.ts`).
 */
import { EventLog, LogError, MeterReplayError, TokenMeter, readLog, type Dialect, type LogEvent } from '@compaction-sim/core'
import type { FinalPressure } from '../report/types.ts'
import type { ResolvedScenario } from '../scenario/resolve.ts'

/** The log as core reads it and its final pressure, or why core cannot replay it (a reader or meter error). */
export type Replay =
  | { kind: 'replayed'; events: readonly LogEvent[]; finalPressure: FinalPressure }
  | { kind: 'unreplayable'; error: LogError | MeterReplayError }

/**
 * Reads the finished log with core's reader and replays the reference meter over it (§2.5). A subject's log
 * that breaks the rules the reader or the meter rely on (a seq gap, a replacement range that is not on the
 * surface, a step opened twice, …) is `unreplayable`: the scenario then carries the checker's verdict alone.
 */
export async function replayOf(logPath: string, dialect: Dialect, scenario: ResolvedScenario): Promise<Replay> {
  try {
    const events = (await readLog(logPath, { dialect })).events
    return { kind: 'replayed', events, finalPressure: pressureOf(events, scenario, dialect) }
  } catch (err) {
    if (err instanceof LogError || err instanceof MeterReplayError) return { kind: 'unreplayable', error: err }
    throw err
  }
}

/** The reference meter's pressure at the end of the log (§2), against the window of the route in force. */
export function pressureOf(events: readonly LogEvent[], scenario: ResolvedScenario, dialect: Dialect = 'seed'): FinalPressure {
  const tokens = new TokenMeter({ events }, { dialect }).measure().totalTokens
  const log = EventLog.fromEvents(events, { dialect })
  const context = log.state.routeContext?.data
  const contextWindow = context?.contextWindow ?? (context === undefined ? scenario.provider.contextWindow : null)
  return { tokens, ratio: contextWindow === null ? null : tokens / contextWindow, contextWindow }
}
