/**
 * Typed errors of the reference core. Every error class carries a stable `code` from a closed
 * union; messages name the file, line and field where the input came from a file.
 */

/** Compile-time exhaustiveness check for closed unions; throws if reached at run time. */
export function assertNever(value: never, what = 'value'): never {
  throw new InvariantError(`unexpected ${what}: ${JSON.stringify(value)}`)
}

/** Raised when the core's own internal consistency is broken (a bug, never bad input). */
export class InvariantError extends Error {
  override readonly name = 'InvariantError'
  readonly code = 'INVARIANT'
}

/** Why a log line or an append was refused. */
export type LogErrorCode =
  | 'INVALID_JSON' // the line is not JSON, or not a JSON object
  | 'ENVELOPE' // seq/time/type/data/ignorable have the wrong shape
  | 'LOSSY_JSON' // -0, a non-finite number, undefined, a sparse array … (§1.1 rule 2)
  | 'SEQ' // seq is not the next index (INV-01): a gap or a duplicate
  | 'UNKNOWN_TYPE' // a type this dialect does not know, without `ignorable: true` (§1.1 rule 4)
  | 'DATA' // the payload of a known type does not have the shape §1.4 gives it
  | 'SURFACE_OP' // surfaceOp/sourceEventSeqs on a log-only type, or surfaceOp missing (INV-03)
  | 'REPLACE' // a replace op names non-nodes, a reversed span, or breaks §1.4.9 (INV-05, INV-06)
  | 'PROVENANCE' // sourceEventSeqs duplicate, future, negative, or empty (§1.5.1, INV-04)
  | 'OFFLOAD' // an image/offload target breaks §6.4
  | 'PACKED_ROW' // a DSH packed chunk row of the wrong shape (§1.1)
  | 'CORRUPT_LINE' // a line that is not the last one cannot be read
  | 'HEADER' // the optional session header record is malformed
  | 'IO' // the file cannot be opened, read or written

/** Where an input error was found. All fields are optional; `line` is 1-based. */
export interface LogErrorLocation {
  file?: string
  line?: number
  seq?: number
  field?: string
}

/**
 * An input error about a session log: an append refused by validation, or a line of a file
 * that cannot be read. `message` starts with `file:line` when those are known.
 */
export class LogError extends Error {
  override readonly name = 'LogError'
  readonly code: LogErrorCode
  readonly location: LogErrorLocation
  /** The reason alone, without the location prefix. */
  readonly reason: string

  constructor(code: LogErrorCode, reason: string, location: LogErrorLocation = {}, options?: ErrorOptions) {
    super(formatLocated(location, reason), options)
    this.code = code
    this.location = location
    this.reason = reason
  }

  /** A copy of this error with more location facts (e.g. the file name added by a reader). */
  at(location: LogErrorLocation): LogError {
    return new LogError(this.code, this.reason, { ...this.location, ...location }, { cause: this })
  }
}

function formatLocated(location: LogErrorLocation, reason: string): string {
  const where: string[] = []
  if (location.file !== undefined) where.push(location.line !== undefined ? `${location.file}:${location.line}` : location.file)
  else if (location.line !== undefined) where.push(`line ${location.line}`)
  if (location.seq !== undefined) where.push(`seq ${location.seq}`)
  if (location.field !== undefined) where.push(`field ${location.field}`)
  return where.length > 0 ? `${where.join(', ')}: ${reason}` : reason
}

/**
 * Renders an error and its causes as one line (§7.8 `errorChain`): the message (or the name when the
 * message is empty), then each `cause` as `": " + message` unless already contained in the text so far,
 * aggregate members bracketed and `"; "`-joined; non-Error values as `String(value)` or their own
 * string `message`.
 */
export function errorChain(err: unknown): string {
  let text = ''
  const seen = new Set<unknown>()
  let current: unknown = err
  while (current !== undefined && current !== null && !seen.has(current)) {
    seen.add(current)
    const own = ownText(current)
    if (text === '') text = own
    else if (own !== '' && !text.includes(own)) text = `${text}: ${own}`
    current = current instanceof Error ? current.cause : undefined
  }
  return text
}

function ownText(value: unknown): string {
  if (value instanceof AggregateError) {
    const head = value.message !== '' ? value.message : value.name
    return `${head} [${value.errors.map((e) => errorChain(e)).join('; ')}]`
  }
  if (value instanceof Error) return value.message !== '' ? value.message : value.name
  if (typeof value === 'object' && value !== null && typeof (value as { message?: unknown }).message === 'string') {
    return (value as { message: string }).message
  }
  return String(value)
}
