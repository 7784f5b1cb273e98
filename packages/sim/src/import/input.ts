/**
 * Input errors of an importer: the first field that is not what its format says stops the import with
 * `ImportInputError` (the JSON pointer of the field, the 1-based line for JSONL formats, and what was
 * expected); `importSession` turns it into a `ScenarioError` naming the file, so the CLI exits 2 with
 * `file:line: /field reason` (JSONL) or `file: /json/path reason` (JSON arrays).
 */

/** Why an import file was refused, at one field. */
export class ImportInputError extends Error {
  override readonly name = 'ImportInputError'
  constructor(readonly path: string, readonly reason: string, readonly line?: number) {
    super(`${line === undefined ? '' : `line ${line}: `}${path === '' ? '' : `${path} `}${reason}`)
  }
}

/** A JSON object (not null, not an array). */
export type Obj = Record<string, unknown>

export const isObj = (value: unknown): value is Obj => typeof value === 'object' && value !== null && !Array.isArray(value)

/** What kind of JSON value `value` is, for messages (never the value itself: it may hold a secret). */
export function kindOf(value: unknown): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'an array'
  if (typeof value === 'object') return 'an object'
  if (typeof value === 'string') return 'a string'
  return typeof value === 'number' ? 'a number' : typeof value === 'boolean' ? 'a boolean' : typeof value
}

/** Field checks below one JSONL line (`line`) or one JSON document (`line` undefined). */
export class Fields {
  constructor(readonly line?: number) {}

  fail(path: string, reason: string): never {
    throw new ImportInputError(path, reason, this.line)
  }

  obj(value: unknown, path: string, expected: string): Obj {
    if (!isObj(value)) this.fail(path, `must be ${expected} (got ${kindOf(value)})`)
    return value
  }

  arr(value: unknown, path: string, expected: string): unknown[] {
    if (!Array.isArray(value)) this.fail(path, `must be ${expected} (got ${kindOf(value)})`)
    return value
  }

  str(value: unknown, path: string, expected: string): string {
    if (typeof value !== 'string') this.fail(path, `must be ${expected} (got ${kindOf(value)})`)
    return value
  }

  /** A string, or absent (undefined/null). */
  optStr(value: unknown, path: string, expected: string): string | undefined {
    if (value === undefined || value === null) return undefined
    return this.str(value, path, expected)
  }

  /** Where a dropped item sits: `line N` for JSONL, else the JSON pointer. */
  where(path: string): string {
    return this.line === undefined ? (path === '' ? '/' : path) : `line ${this.line}${path === '' ? '' : ` ${path}`}`
  }
}

/** Parses a whole JSON document; a syntax error names its line. */
export function parseJsonDocument(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error)
    const position = /position (\d+)/.exec(message)
    const line = position === null ? undefined : text.slice(0, Number(position[1])).split('\n').length
    throw new ImportInputError('', `is not JSON: ${message}`, line)
  }
}

/** Splits JSONL text into its lines (1-based numbers), a `\r\n` end allowed; blank lines are skipped. */
export function* jsonlLines(text: string): Generator<{ line: number; value: unknown }> {
  const lines = text.split('\n')
  for (let i = 0; i < lines.length; i++) {
    const raw = (lines[i] as string).replace(/\r$/, '')
    if (raw.trim() === '') continue
    try {
      yield { line: i + 1, value: JSON.parse(raw) }
    } catch (error) {
      throw new ImportInputError('', `is not JSON: ${error instanceof Error ? error.message : String(error)}`, i + 1)
    }
  }
}
