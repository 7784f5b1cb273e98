/**
 * What every command handler gets from `main` (`cli/main.ts`): the run's output and the exit code it sets
 * on success. Its own module so that `commands/*` need not import `main.ts`, which lazily imports them.
 */
import type { ExitCode } from './exit-status.ts'
import type { CliOutput } from './output.ts'

/** What a command handler gets: the run's output and the exit code it sets on success. */
export interface CommandContext {
  readonly out: CliOutput
  exitCode: ExitCode
}
