/**
 * Broken subject: crash repair closes the interrupted turn but leaves its tool call unanswered.
 *
 * Bug: the restore routine closes an open step and turn (§11.4) but writes no synthetic `tool/result` for
 * the calls of the interrupted turn that have none, so the surface keeps a tool call without its result:
 * the next request carries it and a strict provider refuses it (tool pairing, §1.2.2).
 * Real-world analogue: "resume" code that marks the last turn as interrupted and carries on, forgetting
 * that the model is still waiting for the outputs of the calls it made.
 * Why this id: INV-09 as amended (repair completeness): a crash-repair run answers every unanswered call of
 * the interrupted turn exactly once.
 *
 * @fails INV-09 crash/fault-56-mid-step-pending-tool-call
 */
import { EventLog, restoreSession, type LogEvent, type RestoredSession, type RestoreOptions, type SessionEvent } from '@compaction-sim/core'
import { exampleSubject } from '../subject-core-adapter/subject.ts'

/** The buggy restore: the reference repair without its synthetic tool results. */
function restoreWithoutResults(stored: readonly LogEvent[], options: RestoreOptions): RestoredSession {
  const reference = restoreSession(stored, options)
  const { clock, ...logOptions } = options
  const log = new EventLog(logOptions)
  for (const event of stored) log.accept(event)
  const closers = reference.closers
    .filter((c) => c.type !== 'tool/result')
    .map((c) => log.append({ time: c.time, type: c.type, data: c.data } as Parameters<EventLog['append']>[0]) as SessionEvent)
  const endSeed = log.events.at(-1)?.type === 'session/end-seed'
    ? null
    : log.append({ time: clock(), type: 'session/end-seed', data: {} }) as SessionEvent<'session/end-seed'>
  return { log, closers, endSeed }
}

export default { ...exampleSubject({ restore: restoreWithoutResults }), name: 'broken-repair-forgets-calls' }
