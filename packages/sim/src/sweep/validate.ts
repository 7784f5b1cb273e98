/**
 * Validates a sweep document against `packages/sim/schema/sweep-report.schema.json` (compiled once with ajv at
 * first use; the schema is read with `fs`, Node 20 warns on JSON imports). Used before `sweep.json` is written
 * and when `sim report merge` reads shard documents (a shard that does not validate is an input error).
 */
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { Ajv, type ValidateFunction } from 'ajv'

/** Path of the sweep report schema. */
export const SWEEP_REPORT_SCHEMA_PATH = fileURLToPath(new URL('../../schema/sweep-report.schema.json', import.meta.url))

let compiled: ValidateFunction | null = null

/** The schema problems of `doc` as `<json path> <message>` lines; empty when it is a valid sweep document. */
export function validateSweepReport(doc: unknown): string[] {
  compiled ??= new Ajv({ allErrors: true, strict: true }).compile(JSON.parse(readFileSync(SWEEP_REPORT_SCHEMA_PATH, 'utf8')) as object)
  if (compiled(doc)) return []
  return (compiled.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? 'is invalid'}`)
}
