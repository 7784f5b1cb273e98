/**
 * Where the CLI writes and how it colours text. stdout carries data (a `--json` document, or the table a
 * command exists to print); stderr carries human text (warnings, errors). Everything the CLI reads from
 * its process (streams, environment, TTY) comes through an injectable `CliIo`, so tests run `main()`
 * in-process with captured output.
 */
import { Chalk, type ChalkInstance, type ColorSupportLevel } from 'chalk'

/** A sink for text; `process.stdout` and `process.stderr` satisfy it. */
export interface TextSink {
  write(text: string): unknown
}

/** The process facts the CLI depends on. `isTTY` describes stdout. */
export interface CliIo {
  stdout: TextSink
  stderr: TextSink
  env: Readonly<Record<string, string | undefined>>
  isTTY: boolean
  /** The working directory relative paths and config files are looked up in (default `process.cwd()`). */
  cwd?: string
}

/** The real process: its streams, `process.env`, and whether stdout is a terminal. */
export function processIo(): CliIo {
  return {
    stdout: process.stdout,
    stderr: process.stderr,
    env: process.env,
    isTTY: process.stdout.isTTY === true,
  }
}

/** The colour level (0 = none) chosen for one run. */
export type ColorLevel = ColorSupportLevel

/**
 * Decides the colour level, first rule that applies wins:
 * 1. `--color` / `--no-color` on the command line (`flag`): the most specific request;
 * 2. `FORCE_COLOR`: `0`/`false` disables, `1`–`3` pick that level, empty/`true`/other values mean 1
 *    (Node's own precedence: FORCE_COLOR overrides NO_COLOR);
 * 3. `NO_COLOR` with any non-empty value disables, even on a TTY (no-color.org; chalk 5 ignores it
 *    on TTYs, which is why this is decided here and not by chalk);
 * 4. otherwise colour only on a TTY whose `TERM` is not `dumb`: 3 for `COLORTERM=truecolor|24bit`,
 *    2 for a `TERM` naming 256 colours, else 1.
 * `--color` without FORCE_COLOR gives level 1 when not on a TTY, else the TTY's level.
 */
export function resolveColorLevel(flag: boolean | undefined, io: Pick<CliIo, 'env' | 'isTTY'>): ColorLevel {
  if (flag === false) return 0
  const forced = forceColorLevel(io.env['FORCE_COLOR'])
  if (flag === true) return Math.max(forced ?? 0, terminalLevel(io), 1) as ColorLevel
  if (forced !== undefined) return forced
  const noColor = io.env['NO_COLOR']
  if (noColor !== undefined && noColor !== '') return 0
  return terminalLevel(io)
}

function forceColorLevel(value: string | undefined): ColorLevel | undefined {
  if (value === undefined) return undefined
  switch (value.trim().toLowerCase()) {
    case '0': case 'false': return 0
    case '2': return 2
    case '3': return 3
    default: return 1
  }
}

function terminalLevel(io: Pick<CliIo, 'env' | 'isTTY'>): ColorLevel {
  if (!io.isTTY) return 0
  const term = io.env['TERM'] ?? ''
  if (term === 'dumb') return 0
  const colorTerm = io.env['COLORTERM'] ?? ''
  if (colorTerm === 'truecolor' || colorTerm === '24bit') return 3
  if (term.includes('256')) return 2
  return 1
}

/** The writer one command run uses: the two streams, a chalk bound to the chosen level, and `--debug`. */
export interface CliOutput {
  readonly io: CliIo
  readonly color: ChalkInstance
  readonly debug: boolean
  /** Writes `text` plus a newline to stdout (data). */
  data(text: string): void
  /** Writes `value` as exactly one JSON document (2-space indent, trailing newline) to stdout. */
  json(value: unknown): void
  /** Writes `text` plus a newline to stderr (human text). */
  info(text: string): void
  /** Writes `warning: <text>` to stderr. */
  warn(text: string): void
  /** Writes `error: <text>` to stderr. */
  error(text: string): void
}

/** Binds `io` to a colour level and a debug switch. */
export function createOutput(io: CliIo, level: ColorLevel, debug: boolean): CliOutput {
  const color = new Chalk({ level })
  return {
    io,
    color,
    debug,
    data: (text) => { io.stdout.write(`${text}\n`) },
    json: (value) => { io.stdout.write(`${JSON.stringify(value, null, 2)}\n`) },
    info: (text) => { io.stderr.write(`${text}\n`) },
    warn: (text) => { io.stderr.write(`${color.yellow('warning:')} ${text}\n`) },
    error: (text) => { io.stderr.write(`${color.red('error:')} ${text}\n`) },
  }
}
