/**
 * The dependency-free half of the exit-code contract (`exit-codes.ts` re-exports it): the four codes and
 * `UsageError`. `main.ts` imports only this, so `sim --version` and `sim --help` load neither the core
 * package nor the scenario modules that `classifyError` needs to recognise their errors.
 */

/** Exit codes: 0 ok · 1 a check or scenario failed · 2 usage or input error · 3 internal error of sim. */
export const ExitCode = {
  Ok: 0,
  Failed: 1,
  Usage: 2,
  Internal: 3,
} as const

/** One of the four exit codes of `ExitCode`. */
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode]

/** Why a command line or its input was refused; always exit 2. `message` is shown as is. */
export class UsageError extends Error {
  override readonly name = 'UsageError'
  readonly code = 'USAGE'
}
