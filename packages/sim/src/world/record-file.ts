/**
 * Reading and writing the world record (`provider/world-record.ts`) as a file: validated against
 * `packages/sim/schema/world-record.schema.json` (ajv, compiled once at first use) before it is written and
 * when it is read, so a malformed record is an input error naming the file and the JSON path, never a crash.
 */
import { readFileSync } from 'node:fs'
import { readFile, writeFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import { Ajv, type ValidateFunction } from 'ajv'
import type { WorldRecord } from '../provider/world-record.ts'

/** Path of the world record schema. */
export const WORLD_RECORD_SCHEMA_PATH = fileURLToPath(new URL('../../schema/world-record.schema.json', import.meta.url))

let compiled: ValidateFunction | null = null

/** The schema problems of `doc` as `<json pointer> <message>` lines; empty when it is a valid world record. */
export function validateWorldRecord(doc: unknown): string[] {
  compiled ??= new Ajv({ allErrors: true, strict: true }).compile(JSON.parse(readFileSync(WORLD_RECORD_SCHEMA_PATH, 'utf8')) as object)
  if (compiled(doc)) return []
  return (compiled.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? 'is invalid'}`)
}

/** A world record file that cannot be read or does not validate (exit 2). */
export class WorldRecordError extends Error {
  override readonly name = 'WorldRecordError'
  readonly code = 'WORLD_RECORD'
  readonly file: string

  constructor(file: string, reason: string, options?: ErrorOptions) {
    super(`${file}: ${reason}`, options)
    this.file = file
  }
}

/** The record as its file holds it (pretty JSON, one trailing newline; byte-stable for the same record). */
export function worldRecordText(record: WorldRecord): string {
  const problems = validateWorldRecord(record)
  if (problems.length > 0) throw new Error(`the world record does not match its schema (a bug in sim): ${problems.slice(0, 5).join('; ')}`)
  return `${JSON.stringify(record, null, 1)}\n`
}

/** Writes `record` to `path` (validated first). */
export async function writeWorldRecord(path: string, record: WorldRecord): Promise<void> {
  await writeFile(path, worldRecordText(record))
}

/** Reads and validates a world record file. Throws `WorldRecordError`. */
export async function loadWorldRecord(path: string): Promise<WorldRecord> {
  let text: string
  try {
    text = await readFile(path, 'utf8')
  } catch (error) {
    throw new WorldRecordError(path, `cannot read the world record: ${error instanceof Error ? error.message : String(error)}`, { cause: error })
  }
  let doc: unknown
  try {
    doc = JSON.parse(text)
  } catch (error) {
    throw new WorldRecordError(path, `the world record is not JSON: ${error instanceof Error ? error.message : String(error)}`, { cause: error })
  }
  const problems = validateWorldRecord(doc)
  if (problems.length > 0) throw new WorldRecordError(path, `not a world record (world-record.schema.json): ${problems.slice(0, 5).join('; ')}`)
  return doc as WorldRecord
}
