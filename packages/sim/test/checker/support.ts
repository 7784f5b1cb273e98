/**
 * Test helpers for the checker: the Appendix B events as mutable clones, and small assertions on results.
 */
import { appendixBEvents } from '@compaction-sim/fixtures'
import type { Dialect, RunManifest } from '@compaction-sim/core'
import { checkLog, type CheckResult, type CheckReport } from '../../src/checker/run.ts'
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

/** One Appendix B event (a mutable clone). */
export type AppendixEvent = ReturnType<typeof appendixB>[number]

/** The event of `events` with `seq` (seqs need not equal indexes after an insertion). */
export const at = (events: readonly AppendixEvent[], seq: number): AppendixEvent => events.find((x) => x.seq === seq) as AppendixEvent

/** Turns an event into an ignorable foreign record (keeps its seq). */
export function foreign(e: AppendixEvent): void {
  e.type = 'x/note'
  e.data = {}
  e['ignorable'] = true
  delete e['surfaceOp']
  delete e['sourceEventSeqs']
}

/** Appendix B with `edit` applied. */
export function editedAppendixB(edit: (e: AppendixEvent[]) => void = () => undefined): AppendixEvent[] {
  const e = appendixB()
  edit(e)
  return e
}

/** The report of `events` checked in `dialect` (seed by default), with `manifest` when given. */
export async function checkedReport(events: readonly AppendixEvent[], manifest?: RunManifest, dialect: Dialect = 'seed'): Promise<CheckReport> {
  return reportOf(await checkLog([...events] as never, manifest === undefined ? { dialect } : { dialect, manifest }))
}

/** `id@seq: message` of one invariant's violations. */
export function violationLines(r: CheckReport, id: string): string[] {
  return r.violations.filter((v) => v.id === id).map((v) => `${v.id}@${v.seq}: ${v.message}`)
}
