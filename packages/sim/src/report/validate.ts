/**
 * Validation of a `RunReport` read from outside (a `report.json` on disk, another tool's output) against
 * the published schema `packages/sim/schema/run-report.schema.json`, through the ajv standalone validator
 * generated from it (`validate.generated.cjs`, see `build-validator.ts`). Once the shape holds, the
 * summary is checked against the scenario rows (a rule JSON Schema cannot state).
 */
import { createRequire } from 'node:module'
import type { ErrorObject, ValidateFunction } from 'ajv'
import type { RunReport, ScenarioStatus } from './types.ts'

const require = createRequire(import.meta.url)
const validateSchema = require('./validate.generated.cjs') as ValidateFunction<RunReport>

/** Allowed values listed in full up to this many; longer enums show the first and last few. */
const ENUM_VALUES_SHOWN_MAX = 8

/** A JSON pointer (`/scenarios/0/status`) as a JSON path (`$.scenarios[0].status`). */
export function jsonPath(pointer: string): string {
  if (pointer === '') return '$'
  let path = '$'
  for (const raw of pointer.slice(1).split('/')) {
    const segment = raw.replace(/~1/g, '/').replace(/~0/g, '~')
    if (/^(0|[1-9][0-9]*)$/.test(segment)) path += `[${segment}]`
    else if (/^[A-Za-z_$][A-Za-z0-9_$]*$/.test(segment)) path += `.${segment}`
    else path += `[${JSON.stringify(segment)}]`
  }
  return path
}

const childPointer = (pointer: string, key: string): string => `${pointer}/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`

function listValues(values: readonly unknown[]): string {
  const shown = values.length <= ENUM_VALUES_SHOWN_MAX
    ? values.map((v) => JSON.stringify(v))
    : [...values.slice(0, 3).map((v) => JSON.stringify(v)), '…', ...values.slice(-2).map((v) => JSON.stringify(v))]
  return shown.join(', ')
}

/** One ajv error as `pointer` + message; the pointer names the offending key for `required`/`additionalProperties`. */
function describe(error: ErrorObject): { pointer: string; message: string } {
  const params = error.params as Record<string, unknown>
  switch (error.keyword) {
    case 'required': {
      // A `then` branch: the key is required because of the scenario's status (see the schema's `allOf`).
      const message = error.schemaPath.includes('/then/') ? 'is required for this status' : 'is required'
      return { pointer: childPointer(error.instancePath, String(params['missingProperty'])), message }
    }
    case 'additionalProperties':
      return {
        pointer: childPointer(error.instancePath, String(params['additionalProperty'])),
        message: 'is not allowed (unknown property)',
      }
    case 'enum':
      return { pointer: error.instancePath, message: `must be one of ${listValues(params['allowedValues'] as unknown[])}` }
    case 'uniqueItems':
      return {
        pointer: error.instancePath,
        message: `must not repeat items (items ${String(params['j'])} and ${String(params['i'])} are equal)`,
      }
    case 'const':
      return { pointer: error.instancePath, message: `must be ${JSON.stringify(params['allowedValue'])}` }
    default:
      return { pointer: error.instancePath, message: error.message ?? `fails ${error.keyword}` }
  }
}

/**
 * ajv errors as `<JSON path>: <message>` strings, in ajv's (schema) order, without noise: `if` errors
 * are dropped (their `then` error says what is missing), and a failed `oneOf` becomes one message
 * ("must be X or Y") unless a deeper error explains it, in which case the deeper one stands alone.
 */
function formatErrors(errors: readonly ErrorObject[]): string[] {
  const oneOfPointers = new Set(errors.filter((e) => e.keyword === 'oneOf').map((e) => e.instancePath))
  const hasDeeper = (pointer: string): boolean => errors.some((e) => e.instancePath.startsWith(`${pointer}/`))
  const out: string[] = []
  const merged = new Map<string, string[]>()
  for (const error of errors) {
    if (error.keyword === 'if') continue
    const atOneOf = oneOfPointers.has(error.instancePath) && error.keyword !== 'required' && error.keyword !== 'additionalProperties'
    if (!atOneOf) {
      const { pointer, message } = describe(error)
      out.push(`${jsonPath(pointer)}: ${message}`)
      continue
    }
    if (hasDeeper(error.instancePath)) continue
    if (error.keyword === 'oneOf') {
      const branches = merged.get(error.instancePath) ?? []
      out.push(`${jsonPath(error.instancePath)}: ${branches.length === 0 ? 'must match exactly one allowed form' : branches.join(' or ')}`)
      continue
    }
    const branches = merged.get(error.instancePath) ?? []
    const message = describe(error).message
    branches.push(branches.length === 0 ? message : message.replace(/^must be /, ''))
    merged.set(error.instancePath, branches)
  }
  return out
}

const STATUSES: readonly ScenarioStatus[] = ['passed', 'failed', 'skipped', 'error']

/** Summary totals that disagree with the scenario rows, as path-named messages. */
function summaryErrors(report: RunReport): string[] {
  const errors: string[] = []
  if (report.summary.total !== report.scenarios.length) {
    errors.push(`$.summary.total: is ${report.summary.total} but $.scenarios has ${report.scenarios.length} entries`)
  }
  for (const status of STATUSES) {
    const rows = report.scenarios.filter((s) => s.status === status).length
    if (report.summary[status] !== rows) {
      const rowsText = rows === 1 ? '1 scenario has' : `${rows} scenarios have`
      errors.push(`$.summary.${status}: is ${report.summary[status]} but ${rowsText} status ${status}`)
    }
  }
  return errors
}

/**
 * Checks `value` against the published run-report schema, then the summary against the rows. Returns
 * every problem as `<JSON path>: <what was expected>` (e.g. `$.scenarios[0].status: must be one of
 * "passed", "failed", "skipped", "error"`); an empty array means valid. Never throws.
 */
export function validateRunReport(value: unknown): string[] {
  if (!validateSchema(value)) return formatErrors(validateSchema.errors ?? [])
  return summaryErrors(value)
}

/** Type guard form of `validateRunReport`. */
export function isRunReport(value: unknown): value is RunReport {
  return validateRunReport(value).length === 0
}
