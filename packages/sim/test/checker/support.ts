/**
 * Test helpers for the checker: the Appendix B events as mutable clones, and small assertions on results.
 */
import { appendixBEvents } from '@compaction-sim/fixtures'
import type { CheckResult, CheckReport } from '../../src/checker/run.ts'
import type { CheckId } from '../../src/checker/types.ts'

/** A mutable deep copy of the Appendix B events (seq 0 … 66). */
export function appendixB(): Array<Record<string, unknown> & { seq: number; type: string; data: Record<string, unknown> }> {
  return structuredClone(appendixBEvents()) as never
}

/** The report of a result, failing the test when the input was unreadable. */
export function reportOf(result: CheckResult): CheckReport {
  if (result.kind !== 'report') throw new Error(`expected a report, got an input error: ${result.error.message}`)
  return result
}

/** `id@seq` strings of a report's violations, for compact assertions. */
export function found(result: CheckResult): string[] {
  return reportOf(result).violations.map((v) => `${v.id}@${v.seq}`)
}

/** The distinct ids a report names. */
export function idsOf(result: CheckResult): CheckId[] {
  return [...new Set(reportOf(result).violations.map((v) => v.id))]
}

/** Re-numbers `seq` of every event to its index (after inserting or removing events in a test). */
export function renumber<T extends { seq: number }>(events: T[]): T[] {
  events.forEach((e, i) => { e.seq = i })
  return events
}
