/**
 * Broken subject: one compaction lock for the whole process, not one per session.
 *
 * Bug: before any compaction entry point (pre-step pressure check, overflow recovery, manual `compactNow`) the
 * backend asks "is a compaction open anywhere?" over every session it serves, instead of reading the lock of the
 * session's own log (§11.1). A live bracket in one session — a slow summary call, or the live orphan a refused
 * `compaction/end` leaves (FAULT-60) — then makes every other session report `busy`, so their compactions never
 * run (the issue #16 race: "a live bracket in one session blocking another session's buttons").
 * Real-world analogue: a lock row keyed by the process or the tenant rather than the session id, or a
 * module-level `compacting` flag shared by every conversation of a server.
 * Why this id: INV-45 is the lock discipline, and its harness-trace clause — no `busy` that the session's own
 * log does not explain — is what breaks: session b reports busy naming session a's bracket (lock scope, §11.1).
 *
 * @fails INV-45 sessions/live-orphan-two-sessions
 */
import { CompactionBusyError, ManualCompactionError, type EventLog } from '@compaction-sim/core'
import type { Subject } from '@compaction-sim/sim'
import { exampleSubject } from '../subject-core-adapter/subject.ts'

/** Every session log the process serves now, by log file: the "global" lock reads all of them. */
const sessions = new Map<string, EventLog>()

/** The process-wide lock: the live bracket of any session, or null. */
function anyLiveBracket(): CompactionBusyError | null {
  for (const log of sessions.values()) {
    const lock = log.state.lock
    if (lock.state === 'live') return new CompactionBusyError(lock.bracket)
  }
  return null
}

const working = exampleSubject({
  engine: (engine, { log, warn, logPath }) => {
    sessions.set(logPath, log)
    return {
      preStep: async (signal) => {
        const busy = anyLiveBracket()
        if (busy !== null) {
          warn(`step compaction failed: ${busy.message}; continuing the turn`)
          return
        }
        await engine.preStep(signal)
      },
      compactIfNeeded: async (trigger, signal) => {
        const busy = anyLiveBracket()
        if (busy !== null) throw busy
        return engine.compactIfNeeded(trigger, signal)
      },
      compactNow: async (options) => {
        const busy = anyLiveBracket()
        if (busy !== null) throw new ManualCompactionError('busy', busy.message, { cause: busy })
        return engine.compactNow(options)
      },
    }
  },
})

const subject: Subject = {
  ...working,
  name: 'broken-lock-global',
  runSession: async (options) => {
    try {
      return await working.runSession(options)
    } finally {
      sessions.delete(options.logPath)
    }
  },
}
export default subject
