/**
 * `inspectLog`: read one session log and report its folded state at the end (surface, generation,
 * header in force, open turn/step, open brackets, last end-seed). The programmatic side of `sim inspect`.
 */
import { LogError, loadSessionLog, summarizeSession, type Dialect, type SessionSummary } from '@compaction-sim/core'

/** Options of `inspectLog`. The dialect is explicit: there is no silent guessing (design.md §4.2). */
export interface InspectOptions {
  dialect: Dialect
  /** Foreign log-only types to accept besides the dialect's own (protocol §14.1, `--known-type`). */
  knownTypes?: readonly string[]
}

/** A torn final line that the reader dropped (protocol §1.1); `line` is 1-based in the file. */
export interface TornTail {
  line: number
  text: string
  reason: string
}

/** The folded state of a log plus where it came from and whether its final line was torn. */
export type InspectResult = { file: string } & SessionSummary & { tornTail: TornTail | null }

/**
 * Reads `path` as a session log of `options.dialect` and summarises its end state.
 * A torn final line is not an error: it is dropped and returned as `tornTail`.
 * @throws LogError for an unreadable file (code `IO`, naming the file) or an invalid line
 *   (message `file:line: reason`).
 */
export async function inspectLog(path: string, options: InspectOptions): Promise<InspectResult> {
  const loadOptions: { dialect: Dialect; knownTypes?: ReadonlySet<string> } = { dialect: options.dialect }
  if (options.knownTypes !== undefined && options.knownTypes.length > 0) loadOptions.knownTypes = new Set(options.knownTypes)
  let loaded: Awaited<ReturnType<typeof loadSessionLog>>
  try {
    loaded = await loadSessionLog(path, loadOptions)
  } catch (err) {
    if (isErrnoError(err)) throw new LogError('IO', describeErrno(err), { file: path }, { cause: err })
    throw err
  }
  const tornTail = loaded.tornTail === undefined ? null
    : { line: loaded.tornTail.line, text: loaded.tornTail.text, reason: loaded.tornTail.reason }
  return { file: path, ...summarizeSession(loaded.log), tornTail }
}

function isErrnoError(err: unknown): err is NodeJS.ErrnoException {
  return err instanceof Error && typeof (err as NodeJS.ErrnoException).code === 'string'
    && typeof (err as NodeJS.ErrnoException).syscall === 'string'
}

function describeErrno(err: NodeJS.ErrnoException): string {
  switch (err.code) {
    case 'ENOENT': return 'no such file'
    case 'EISDIR': return 'is a directory, not a log file'
    case 'EACCES': case 'EPERM': return 'permission denied'
    default: return `cannot read: ${err.message}`
  }
}
