/**
 * Broken subject: restore writes no `session/end-seed`.
 *
 * Bug: the restore routine repairs the interrupted turn (§11.4) but does not start a new lifecycle with
 * `session/end-seed` (§11.3), so nothing in the log says the process restarted: an unmatched
 * `compaction/start` of the crashed process stays live (§11.1), the repair's `turn/end` crosses an open
 * bracket, and the resumed loop's first header claims a resume the log cannot show.
 * Real-world analogue: reopening a persisted session by replaying its events into a fresh store object,
 * with the "new lifecycle" marker written only by the create path.
 * Why this id: the first violated promise is INV-11 (a repair run's turn/end may cross an open bracket only
 * before an end-seed); §11.4 names the missing end-seed itself.
 *
 * @fails INV-11 crash/fault-50-after-compaction-start
 */
import { EventLog, restoreSession, type LogEvent, type RestoredSession, type RestoreOptions } from '@compaction-sim/core'
import { exampleSubject } from '../subject-core-adapter/subject.ts'

/** The buggy restore: the reference repair's closers, and no end-seed after them. */
function restoreWithoutEndSeed(stored: readonly LogEvent[], options: RestoreOptions): RestoredSession {
  const reference = restoreSession(stored, options)
  const { clock: _clock, ...logOptions } = options
  const log = new EventLog(logOptions)
  for (const event of [...stored, ...reference.closers]) log.accept(event)
  return { log, closers: reference.closers, endSeed: null }
}

export default { ...exampleSubject({ restore: restoreWithoutEndSeed }), name: 'broken-restore-without-end-seed' }
