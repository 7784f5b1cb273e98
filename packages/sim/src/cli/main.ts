/**
 * The `sim` command line: a yargs root (strict, one module per command under `commands/`) and the
 * single place where a run's outcome becomes an exit code (`exit-codes.ts`). `main` never exits the
 * process and never throws, so tests call it in-process with a captured `CliIo`.
 *
 * Lazy start (issue #17): this module imports no command module, yargs only inside `main`, and nothing of
 * core, the checker or the runner. The root knows each command by name and description (`COMMANDS`); its
 * module is imported when yargs picks it. `sim --version` alone answers before yargs loads.
 */
import { readFileSync } from 'node:fs'
import type { Argv, CommandModule } from 'yargs'
import type { CommandContext } from './context.ts'
import type { ErrorVerdict } from './exit-codes.ts'
import { ExitCode, UsageError } from './exit-status.ts'
import type { CliIo, CliOutput } from './output.ts'

export type { CommandContext } from './context.ts'

/**
 * One command as the root knows it before it runs: its yargs `command` and `describe` (all that `sim --help`
 * shows), `module`, which imports the command's module and builds its yargs definition, and `yargs`, the
 * lazy definition registered on the root. The module's own `command` and `describe` must be the same
 * strings (a test checks); its builder and handler run only once yargs has chosen the command.
 */
export interface LazyCommand {
  readonly command: string
  readonly describe: string
  /** Imports the command module and returns its yargs definition for `ctx`. */
  module(ctx: CommandContext): Promise<{ readonly command?: string | readonly string[] | undefined; readonly describe?: string | false | undefined }>
  /** The definition for the root: `builder` loads the module (for the options or `<command> --help`), `handler` runs it. */
  yargs(ctx: CommandContext): CommandModule
}

/** A `LazyCommand` for the module `load` imports; `T` (the parsed arguments) stays inside this closure. */
function lazy<T>(command: string, describe: string, load: () => Promise<(ctx: CommandContext) => CommandModule<object, T>>): LazyCommand {
  return {
    command,
    describe,
    module: async (ctx) => (await load())(ctx),
    yargs(ctx) {
      let loaded: CommandModule<object, T> | undefined
      const get = async (): Promise<CommandModule<object, T>> => (loaded ??= (await load())(ctx))
      return {
        command,
        describe,
        builder: async (y: Argv) => {
          const builder = (await get()).builder
          if (typeof builder === 'function') return await builder(y) as unknown as Argv
          return builder === undefined ? y : y.options(builder)
        },
        handler: async (args) => {
          await (await get()).handler(args as unknown as Parameters<CommandModule<object, T>['handler']>[0])
        },
      }
    },
  }
}

/**
 * The commands of `sim`, in `--help` order. A command module pulls in its whole implementation (checker,
 * runner, subjects, …), so none is imported before yargs has picked its command: `sim --version` and
 * `sim --help` load only yargs, chalk and this folder's small modules.
 */
export const COMMANDS: readonly LazyCommand[] = [
  lazy('inspect <log>', 'Print the folded state at the end of a session log', async () => (await import('./commands/inspect.ts')).inspectCommand),
  lazy('check <logs..>', 'Check logs against every invariant INV-01 … INV-47', async () => (await import('./commands/check.ts')).checkCommand),
  lazy('run <files..>', 'Run scenarios against a mocked provider and check them', async () => (await import('./commands/run.ts')).runCommand),
  lazy('conform', 'Run the conformance pack against a subject', async () => (await import('./commands/conform.ts')).conformCommand),
  lazy('serve', 'Serve the mock provider over real HTTP (loopback)', async () => (await import('./commands/serve.ts')).serveCommand),
  lazy('sweep <files..>', 'Run scenarios over a grid of policies (Pareto report)', async () => (await import('./commands/sweep.ts')).sweepCommand),
  lazy('report <command>', 'Work with report folders (merge shards)', async () => (await import('./commands/report.ts')).reportCommand),
  lazy('import <format> <file>', 'Import a real session (OpenAI, Anthropic, Claude Code, Codex, DSH) as a scenario',
    async () => (await import('./commands/import.ts')).importCommand),
  lazy('fuzz', 'Model-based fuzzing: random sessions, faults, shrinking to a scenario', async () => (await import('./commands/fuzz.ts')).fuzzCommand),
  lazy('init', 'Scaffold conformance for your adapter: subject, test, CI workflow', async () => (await import('./commands/init.ts')).initCommand),
]

/** Help text width in columns: fixed so help output is the same in a terminal, a pipe and a test. */
const HELP_WIDTH_COLUMNS = 80

/**
 * Runs `sim` with `argv` (the arguments after the script name) and resolves to its exit code
 * (0 ok, 1 failed check, 2 usage or input error, 3 internal error). Never rejects.
 * @param io streams, environment and TTY facts; the real process when omitted.
 */
export async function main(argv: readonly string[], io?: CliIo): Promise<ExitCode> {
  // `sim --version` alone answers before yargs and chalk load (they cost more CPU than Node's own start);
  // with any other argument yargs prints the same line.
  if (argv.length === 1 && argv[0] === '--version') {
    const stdout = io?.stdout ?? process.stdout
    stdout.write(`${packageVersion()}\n`)
    return ExitCode.Ok
  }
  const [{ default: yargs }, { createOutput, processIo, resolveColorLevel }] = await Promise.all([import('yargs'), import('./output.ts')])
  io ??= processIo()
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
    for (const command of COMMANDS) cli.command(command.yargs(ctx))
    cli
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
    // A yargs validation error (a coerce or check of a lazily built command) that bypassed `.fail()` is still a usage error.
    const usage = error instanceof Error && error.name === 'YError' ? new UsageError(error.message, { cause: error }) : error
    return await report(usage, out)
  }
  return ctx.exitCode
}

/**
 * Writes the verdict on `error` to stderr and returns its exit code. `classifyError` is imported here, on
 * the error path only: it needs the core and scenario error classes, which `--version` must not load.
 */
async function report(error: unknown, out: CliOutput): Promise<ExitCode> {
  let verdict: ErrorVerdict
  try {
    verdict = (await import('./exit-codes.ts')).classifyError(error)
  } catch (importError) {
    verdict = { exitCode: ExitCode.Internal, message: `cannot load the error classifier: ${String(importError)}`, internal: true }
  }
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
