/**
 * The process-level guard of the exit-code contract (0 ok · 1 failed · 2 input · 3 internal; issue #16: any
 * other code is a bug). `main` never throws, but a promise it awaits can stay pending forever — a subject, or a
 * provider call nobody answers — with nothing left in the event loop to settle it. Node then exits 13
 * ("unsettled top-level await") with no report. This guard turns that into an internal error: on `beforeExit`
 * with `main` still pending it writes what was pending (`run/pending-work.ts`: scenario, subject, seed, turn or
 * manual call, last request) to stderr and exits 3. An uncaught exception or unhandled rejection, which Node
 * would end with exit 1 ("a check failed"), is exit 3 too.
 *
 * Lazy start (issue #17): the registry is imported only when the guard fires (the runner has loaded it by then, so
 * the import returns that same instance); `sim --help` loads nothing outside `cli/`.
 */
import { writeSync } from 'node:fs'
import { ExitCode } from './exit-status.ts'

/** The first line the guard writes when the run never settled (tests match it). */
export const UNSETTLED_MESSAGE = 'internal error: the run stopped with work that can never finish (a promise nothing will settle)'

/** Writes `text` to stderr synchronously: the process exits right after, which would cut an async write. */
function writeStderr(text: string): void {
  try {
    writeSync(2, text)
  } catch {
    // stderr is closed: the exit code is all that is left to report
  }
}

/** The stderr text for a run that never settled, naming each pending task (or that none registered). */
export function unsettledReport(pending: readonly string[]): string {
  const lines = pending.length === 0
    ? ['  pending: nothing registered (the wait is outside a scenario run)']
    : pending.map((p) => `  pending: ${p}`)
  return `${[UNSETTLED_MESSAGE, ...lines, 'This is a bug in sim or in the subject; exit 3 instead of Node\'s exit 13.'].join('\n')}\n`
}

/**
 * Runs `run` (the CLI's `main`) under the guard and sets `process.exitCode` to its code. Used by the bin only:
 * it installs process-wide handlers, which in-process tests of `main` must not get.
 */
export async function runGuarded(run: () => Promise<number>): Promise<void> {
  let settled = false
  const fail = (text: string): never => {
    writeStderr(text)
    process.exit(ExitCode.Internal)
  }
  process.on('beforeExit', () => {
    if (settled) return
    // The pending import keeps the loop alive until it resolves, so `beforeExit` does not fire again meanwhile.
    void import('../run/pending-work.ts').then(
      (registry) => fail(unsettledReport(registry.pendingWork())),
      (err: unknown) => fail(unsettledReport([`(the pending-work registry did not load: ${String(err)})`])),
    )
  })
  const env = (process.env['DEBUG'] ?? '').toLowerCase()
  const debug = process.argv.includes('--debug') || (env !== '' && env !== '0' && env !== 'false')
  const crash = (err: unknown): void => {
    const shown = err instanceof Error ? (debug ? err.stack ?? `${err.name}: ${err.message}` : `${err.name}: ${err.message}`) : String(err)
    fail(`internal error: uncaught ${shown}\nThis is a bug in sim. Rerun with DEBUG=1 for the stack trace.\n`)
  }
  process.on('uncaughtException', crash)
  process.on('unhandledRejection', crash)
  const code = await run()
  settled = true
  process.exitCode = code
}
