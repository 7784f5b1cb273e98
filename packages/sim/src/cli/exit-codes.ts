/**
 * The exit-code contract of `sim` (design.md §5) and the one place that maps a thrown error to it.
 * Scripts and CI read these numbers; changing one is a breaking change.
 */
import { LogError } from '@compaction-sim/core'
import { ScenarioError } from '../scenario/errors.ts'
import { ExitCode, UsageError } from './exit-status.ts'

export { ExitCode, UsageError } from './exit-status.ts'

/** How a thrown value ends the run: its exit code and the one-line message for stderr. */
export interface ErrorVerdict {
  exitCode: ExitCode
  message: string
  /** True for a bug in sim itself: the stack is worth showing under `--debug`. */
  internal: boolean
}

/**
 * Classifies `error`: a `UsageError` (bad flag, missing file), a core `LogError` (unreadable or invalid
 * log; its message is already `file:line: reason`) or a `ScenarioError` (invalid scenario, `file:line:column`) is an input error, exit 2; anything else is a bug
 * in sim, exit 3.
 */
export function classifyError(error: unknown): ErrorVerdict {
  if (error instanceof UsageError) return { exitCode: ExitCode.Usage, message: error.message, internal: false }
  if (error instanceof LogError) return { exitCode: ExitCode.Usage, message: error.message, internal: false }
  if (error instanceof ScenarioError) return { exitCode: ExitCode.Usage, message: error.message, internal: false }
  const message = error instanceof Error ? `${error.name}: ${error.message}` : String(error)
  return { exitCode: ExitCode.Internal, message, internal: true }
}
