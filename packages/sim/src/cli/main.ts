/**
 * The `sim` command line: a yargs root (strict, one module per command under `commands/`) and the
 * single place where a run's outcome becomes an exit code (`exit-codes.ts`). `main` never exits the
 * process and never throws, so tests call it in-process with a captured `CliIo`.
 */
import { readFileSync } from 'node:fs'
import yargs from 'yargs'
import { checkCommand } from './commands/check.ts'
import { conformCommand } from './commands/conform.ts'
import { inspectCommand } from './commands/inspect.ts'
import { runCommand } from './commands/run.ts'
import { serveCommand } from './commands/serve.ts'
import { sweepCommand } from './commands/sweep.ts'
import { reportCommand } from './commands/report.ts'
import { fuzzCommand } from './commands/fuzz.ts'
import { initCommand } from './commands/init.ts'
import { classifyError, ExitCode, UsageError } from './exit-codes.ts'
import { createOutput, processIo, resolveColorLevel, type CliIo, type CliOutput } from './output.ts'

/** What a command handler gets: the run's output and the exit code it sets on success. */
export interface CommandContext {
  readonly out: CliOutput
  exitCode: ExitCode
}

/** Help text width in columns: fixed so help output is the same in a terminal, a pipe and a test. */
const HELP_WIDTH_COLUMNS = 80

/**
 * Runs `sim` with `argv` (the arguments after the script name) and resolves to its exit code
 * (0 ok, 1 failed check, 2 usage or input error, 3 internal error). Never rejects.
 * @param io streams, environment and TTY facts; the real process when omitted.
 */
export async function main(argv: readonly string[], io: CliIo = processIo()): Promise<ExitCode> {
  const flags = scanGlobalFlags(argv)
  const debug = flags.debug ?? isSet(io.env['DEBUG'])
  const out = createOutput(io, resolveColorLevel(flags.color, io), debug)
  const ctx: CommandContext = { out, exitCode: ExitCode.Ok }
  let shown = ''
  try {
    const cli = yargs()
      .scriptName('sim')
      .usage('$0 <command> [options]')
      .strict()
      .exitProcess(false)
      .wrap(HELP_WIDTH_COLUMNS)
      .option('color', {
        type: 'boolean',
        global: true,
        describe: 'Colour output; --no-color disables it',
      })
      .option('debug', { type: 'boolean', global: true, describe: 'Stack traces for internal errors' })
      .command(inspectCommand(ctx))
      .command(checkCommand(ctx))
      .command(runCommand(ctx))
      .command(conformCommand(ctx))
      .command(serveCommand(ctx))
      .command(sweepCommand(ctx))
      .command(reportCommand(ctx))
      .command(fuzzCommand(ctx))
      .command(initCommand(ctx))
      .command('$0', false, () => undefined, () => {
        throw new UsageError('a command is required')
      })
      .help()
      .alias('help', 'h')
      .version(packageVersion())
      .fail((message: string | null, error: Error | undefined) => {
        if (error !== undefined && error !== null && error.name !== 'YError') throw error
        throw new UsageError(message ?? error?.message ?? 'invalid command line')
      })
    await cli.parseAsync([...argv], {}, (_error, _args, output) => {
      shown = output
    })
    if (shown !== '') io.stdout.write(`${shown}\n`) // --help or --version
  } catch (error) {
    return report(error, out)
  }
  return ctx.exitCode
}

/** Writes the verdict on `error` to stderr and returns its exit code. */
function report(error: unknown, out: CliOutput): ExitCode {
  const verdict = classifyError(error)
  try {
    if (!verdict.internal) {
      out.error(verdict.message)
      if (error instanceof UsageError) out.info(`Run 'sim --help' for usage.`)
    } else {
      out.error(`internal error: ${verdict.message}`)
      if (out.debug && error instanceof Error && error.stack !== undefined) out.info(error.stack)
      else out.info('This is a bug in sim. Rerun with --debug (or DEBUG=1) for the stack trace.')
    }
  } catch {
    // stderr itself cannot be written (e.g. a closed pipe): the exit code is all that is left to report
  }
  return verdict.exitCode
}

/**
 * Reads `--color`/`--no-color`/`--debug` before yargs does, so that usage errors reported by yargs are
 * coloured (or not) the same way as everything else. The last occurrence wins; scanning stops at `--`.
 */
function scanGlobalFlags(argv: readonly string[]): { color?: boolean; debug?: boolean } {
  const flags: { color?: boolean; debug?: boolean } = {}
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? ''
    if (arg === '--') break
    const match = /^--(no-)?(color|debug)(?:=(.*))?$/.exec(arg)
    if (match === null) continue
    const name = match[2] === 'color' ? 'color' : 'debug'
    let value = match[1] === undefined
    if (match[3] !== undefined) value = value === parseBoolean(match[3])
    else if (argv[i + 1] === 'true' || argv[i + 1] === 'false') value = value === parseBoolean(argv[++i] ?? '')
    flags[name] = value
  }
  return flags
}

/** The version in this package's package.json (read at run time: JSON imports warn on Node 20). */
function packageVersion(): string {
  let manifest: unknown
  try {
    manifest = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'))
  } catch {
    return '0.0.0' // package.json unreadable (a bundled copy): --version still answers
  }
  const version = typeof manifest === 'object' && manifest !== null && 'version' in manifest ? manifest.version : undefined
  return typeof version === 'string' ? version : '0.0.0'
}

function parseBoolean(text: string): boolean {
  return text !== 'false' && text !== '0' && text !== ''
}

function isSet(value: string | undefined): boolean {
  return value !== undefined && value !== '' && value !== '0' && value.toLowerCase() !== 'false'
}
