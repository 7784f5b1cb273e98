/**
 * The scenario schema as a published artifact: the generated validator and the published copy are fresh
 * (style rule 16), every property carries a `description` for editor completion, and the closed enums
 * agree with the core's vocabularies.
 */
import { readFileSync } from 'node:fs'
import { DIALECTS, EVENT_TYPES, FailureCode } from '@compaction-sim/core'
import { describe, expect, it } from 'vitest'
import {
  PUBLISHED_SCHEMA_PATH, SCENARIO_VALIDATOR_PATH, generatedFiles, main, readScenarioSchema, staleFiles,
} from '../../src/scenario/build-validator.ts'
import { COUNT_NAMES, FAULT_KINDS, SCENARIO_INVARIANT_IDS } from '../../src/scenario/types.ts'

type Json = null | boolean | number | string | Json[] | { [key: string]: Json }
const schema = readScenarioSchema() as { [key: string]: Json }
const definitions = schema['definitions'] as Record<string, { [key: string]: Json }>

function enumOf(name: string): Json[] {
  const values = definitions[name]?.['enum']
  if (!Array.isArray(values)) throw new Error(`#/definitions/${name} has no enum`)
  return values
}

/** Every schema object below `node` reached through keywords that hold subschemas, with its JSON pointer. */
function* subschemas(node: Json, path: string): Generator<{ path: string; schema: { [key: string]: Json } }> {
  if (typeof node !== 'object' || node === null || Array.isArray(node)) return
  yield { path, schema: node }
  for (const keyword of ['properties', 'definitions', 'dependencies'] as const) {
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

describe('generated validator and published schema', () => {
  it('are fresh (regenerate with `pnpm scenario:schema`)', () => {
    expect(staleFiles()).toEqual([])
  })

  it('carry an @generated header', () => {
    expect(readFileSync(SCENARIO_VALIDATOR_PATH, 'utf8').split('\n')[0]).toMatch(/^\/\/ @generated /)
    const published = JSON.parse(readFileSync(PUBLISHED_SCHEMA_PATH, 'utf8')) as { $comment: string }
    expect(published.$comment).toMatch(/^@generated /)
  })

  it('publishes the source schema unchanged apart from $comment', () => {
    const published = JSON.parse(readFileSync(PUBLISHED_SCHEMA_PATH, 'utf8')) as Record<string, unknown>
    const { $comment: _comment, ...rest } = published
    expect(rest).toEqual(schema)
  })

  it('is generated deterministically', () => {
    expect(generatedFiles()).toEqual(generatedFiles())
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

describe('schema.json', () => {
  it('is draft-07 and closed: every object schema with properties forbids unknown keys', () => {
    expect(schema['$schema']).toBe('http://json-schema.org/draft-07/schema#')
    const open = [...subschemas(schema, '#')]
      .filter(({ path, schema: s }) => s['properties'] !== undefined && !/\/(if|dependencies\/[^/]+)$/.test(path))
      .filter(({ schema: s }) => s['additionalProperties'] !== false && s['discriminator'] === undefined)
      .map(({ path }) => path)
    expect(open).toEqual([])
  })

  it('describes every property and every definition (editor completion)', () => {
    const missing: string[] = []
    for (const { path, schema: s } of subschemas(schema, '#')) {
      const properties = s['properties']
      if (typeof properties !== 'object' || properties === null || Array.isArray(properties)) continue
      if (/\/dependencies\/[^/]+$/.test(path)) continue
      for (const [key, child] of Object.entries(properties)) {
        const description = (child as { description?: unknown }).description
        if (typeof description !== 'string' || description === '') missing.push(`${path}/properties/${key}`)
      }
    }
    for (const [name, definition] of Object.entries(definitions)) {
      if (typeof definition['description'] !== 'string') missing.push(`#/definitions/${name}`)
    }
    expect(missing).toEqual([])
  })

  it('enumerates exactly the core vocabularies and the §12/§13 ids', () => {
    expect(enumOf('Dialect')).toEqual([...DIALECTS])
    expect(enumOf('EventType')).toEqual([...EVENT_TYPES])
    expect(enumOf('CrashPoint')).toEqual([...EVENT_TYPES, 'checkpoint'])
    expect(enumOf('FailureCode')).toEqual(Object.values(FailureCode))
    expect(enumOf('FaultKind')).toEqual([...FAULT_KINDS])
    expect(enumOf('InvariantId')).toEqual([...SCENARIO_INVARIANT_IDS])
    expect(Object.keys((definitions['Counts']?.['properties'] ?? {}) as object)).toEqual([...COUNT_NAMES])
  })

  it('lists the §13 fault ids: FAULT-01…17, 20…33, 40…46, 50…57, 60…66, 70…79, 80…84', () => {
    const ranges: Array<[number, number]> = [[1, 17], [20, 33], [40, 46], [50, 57], [60, 66], [70, 79], [80, 84]]
    const ids = ranges.flatMap(([from, to]) => Array.from({ length: to - from + 1 }, (_, i) => `FAULT-${String(from + i).padStart(2, '0')}`))
    expect(FAULT_KINDS).toEqual(ids)
    expect(SCENARIO_INVARIANT_IDS).toEqual(Array.from({ length: 47 }, (_, i) => `INV-${String(i + 1).padStart(2, '0')}`))
  })
})
