/**
 * The run-report schema as a published artifact and `validateRunReport` as its gate: the generated
 * validator is fresh (style rule 16), the schema is closed and describes every property, and invalid
 * reports are rejected with messages that name the JSON path and what was expected.
 */
import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import {
  RUN_REPORT_VALIDATOR_PATH, generatedValidator, isValidatorStale, main, readRunReportSchema,
} from '../../src/report/build-validator.ts'
import { isRunReport, jsonPath, validateRunReport } from '../../src/report/index.ts'
import type { RunReport } from '../../src/report/types.ts'
import { mixedReport, passed, reportOf } from './sample-report.ts'

type Json = null | boolean | number | string | Json[] | { [key: string]: Json }
const schema = readRunReportSchema() as { [key: string]: Json }

/** Every schema object below `node` reached through keywords that hold subschemas, with its JSON pointer. */
function* subschemas(node: Json, path: string): Generator<{ path: string; schema: { [key: string]: Json } }> {
  if (typeof node !== 'object' || node === null || Array.isArray(node)) return
  yield { path, schema: node }
  for (const keyword of ['properties', 'definitions'] as const) {
    const map = node[keyword]
    if (typeof map === 'object' && map !== null && !Array.isArray(map)) {
      for (const [key, child] of Object.entries(map)) yield* subschemas(child, `${path}/${keyword}/${key}`)
    }
  }
  for (const keyword of ['items', 'if', 'then', 'else'] as const) yield* subschemas(node[keyword] ?? null, `${path}/${keyword}`)
  for (const keyword of ['oneOf', 'anyOf', 'allOf'] as const) {
    const list = node[keyword]
    if (Array.isArray(list)) for (const [i, child] of list.entries()) yield* subschemas(child, `${path}/${keyword}/${i}`)
  }
}

/** A change to a report: set the value at `path`, or delete the key when no value is given. */
type Change = [path: Array<string | number>, value?: unknown]

/** A deep copy of the sample report with `changes` applied. */
function edited(...changes: Change[]): unknown {
  const copy: unknown = structuredClone(mixedReport)
  for (const change of changes) {
    const [path] = change
    let node = copy as Record<string | number, unknown>
    for (const key of path.slice(0, -1)) node = node[key] as Record<string | number, unknown>
    const last = path.at(-1) ?? ''
    if (change.length === 1) delete node[last]
    else node[last] = change[1]
  }
  return copy
}

describe('generated validator', () => {
  it('is fresh (regenerate with `pnpm report:schema`)', () => {
    expect(isValidatorStale()).toBe(false)
  })

  it('carries an @generated header and is generated deterministically', () => {
    expect(readFileSync(RUN_REPORT_VALIDATOR_PATH, 'utf8').split('\n')[0]).toMatch(/^\/\/ @generated /)
    expect(generatedValidator()).toBe(generatedValidator())
  })

  it('--check exits 0 when fresh, 2 on an unknown flag', () => {
    const writes: string[] = []
    const out = process.stdout.write.bind(process.stdout)
    const err = process.stderr.write.bind(process.stderr)
    process.stdout.write = ((text: string) => writes.push(text) > 0) as typeof process.stdout.write
    process.stderr.write = ((text: string) => writes.push(text) > 0) as typeof process.stderr.write
    try {
      expect(main(['--check'])).toBe(0)
      expect(main(['--bogus'])).toBe(2)
    } finally {
      process.stdout.write = out
      process.stderr.write = err
    }
    expect(writes.join('')).toContain('fresh')
  })
})

describe('run-report.schema.json', () => {
  it('is draft-07 and closed: every object schema with properties forbids unknown keys', () => {
    expect(schema['$schema']).toBe('http://json-schema.org/draft-07/schema#')
    const open = [...subschemas(schema, '#')]
      .filter(({ path, schema: s }) => s['properties'] !== undefined && !path.endsWith('/if'))
      .filter(({ schema: s }) => s['additionalProperties'] !== false)
      .map(({ path }) => path)
    expect(open).toEqual([])
  })

  it('describes every property and every definition (editor completion)', () => {
    const missing: string[] = []
    for (const { path, schema: s } of subschemas(schema, '#')) {
      const properties = s['properties']
      if (typeof properties !== 'object' || properties === null || Array.isArray(properties) || path.endsWith('/if')) continue
      for (const [key, child] of Object.entries(properties)) {
        const description = (child as { description?: unknown }).description
        if (typeof description !== 'string' || description === '') missing.push(`${path}/properties/${key}`)
      }
    }
    for (const [name, definition] of Object.entries(schema['definitions'] as Record<string, { [key: string]: Json }>)) {
      if (typeof definition['description'] !== 'string') missing.push(`#/definitions/${name}`)
    }
    expect(missing).toEqual([])
  })
})

describe('validateRunReport', () => {
  it('accepts the sample report, an empty run, and a JSON round trip of them', () => {
    expect(validateRunReport(mixedReport)).toEqual([])
    expect(validateRunReport(reportOf([]))).toEqual([])
    expect(validateRunReport(JSON.parse(JSON.stringify(mixedReport)))).toEqual([])
    expect(isRunReport(mixedReport)).toBe(true)
  })

  it('names the JSON path of a missing field', () => {
    expect(validateRunReport(edited([['scenarios', 1, 'replay']]))).toEqual(['$.scenarios[1].replay: is required'])
    expect(validateRunReport(edited([['runId']]))).toEqual(['$.runId: is required'])
    expect(isRunReport(edited([['runId']]))).toBe(false)
  })

  it('names the JSON path and the allowed values of a wrong enum', () => {
    expect(validateRunReport(edited([['scenarios', 0, 'status'], 'ok']))).toEqual([
      '$.scenarios[0].status: must be one of "passed", "failed", "skipped", "error"',
    ])
    expect(validateRunReport(edited([['scenarios', 0, 'violations'], [{ id: 'INV-99', seq: 1, message: '' }]]))).toEqual([
      '$.scenarios[0].violations[0].id: must be one of "INV-01", "INV-02", "INV-03", …, "HARD-7", "HARD-8"',
    ])
    expect(validateRunReport(edited([['schemaVersion'], 2]))).toEqual(['$.schemaVersion: must be 1'])
  })

  it('requires the reason of a skipped and the message of an errored scenario', () => {
    expect(validateRunReport(edited([['scenarios', 2, 'skipReason']], [['scenarios', 3, 'error']]))).toEqual([
      '$.scenarios[2].skipReason: is required for this status',
      '$.scenarios[3].error: is required for this status',
    ])
  })

  it('reports unknown keys, wrong types and every problem at once, in document order', () => {
    expect(validateRunReport(edited(
      [['seed'], 'x'],
      [['scenarios', 0, 'extra'], true],
      [['scenarios', 0, 'finalPressure', 'ratio'], -1],
      [['scenarios', 1, 'invariants'], ['INV-01', 'INV-01']],
      [['scenarios', 1, 'counts', 'prunes'], 1.5],
    ))).toEqual([
      '$.seed: must be integer or null',
      '$.scenarios[0].extra: is not allowed (unknown property)',
      '$.scenarios[0].finalPressure.ratio: must be >= 0 or null',
      '$.scenarios[1].counts.prunes: must be integer',
      '$.scenarios[1].invariants: must be "all" or must not repeat items (items 0 and 1 are equal)',
    ])
  })

  it('rejects a summary that disagrees with the rows', () => {
    const report: RunReport = { ...mixedReport, summary: { ...mixedReport.summary, passed: 2, total: 5 } }
    expect(validateRunReport(report)).toEqual([
      '$.summary.total: is 5 but $.scenarios has 4 entries',
      '$.summary.passed: is 2 but 1 scenario has status passed',
    ])
  })

  it('rejects what is not a report at all', () => {
    expect(validateRunReport(null)).toEqual(['$: must be object'])
    expect(validateRunReport([passed])).toEqual(['$: must be object'])
  })

  it('writes JSON paths for indices, identifiers and other keys', () => {
    expect(jsonPath('')).toBe('$')
    expect(jsonPath('/scenarios/12/counts')).toBe('$.scenarios[12].counts')
    expect(jsonPath('/a~1b/c d/~0x')).toBe('$["a/b"]["c d"]["~x"]')
  })
})
