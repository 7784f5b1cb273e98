/**
 * Drift guard between the published `run-report.schema.json` (source of truth) and the hand-written
 * `report/types.ts`: (1) typed examples of every definition validate against that definition, and a
 * fully populated typed report validates as a whole; (2) for every object definition, the keys of its
 * TypeScript type — listed through a mapped type, so a missing or extra key fails to compile — equal the
 * schema's `properties`, and the required keys equal the type's non-optional keys; (3) string-literal
 * unions equal the schema enums and consts.
 */
import { DIALECTS, type Dialect } from '@compaction-sim/core'
import type { SchemaObject } from 'ajv'
import { describe, expect, it } from 'vitest'
import { INVARIANT_IDS, type InvariantId, type PolicySource } from '../../src/checker/types.ts'
import { createRunReportAjv, readRunReportSchema } from '../../src/report/build-validator.ts'
import { RUN_REPORT_SCHEMA_VERSION } from '../../src/report/types.ts'
import type {
  ExpectationResult, FinalPressure, ReportedFault, ReportedOutcome, ReportedViolation, RunReport, RunSummary, ScenarioArtifacts,
  ScenarioCounts, ScenarioReport, ScenarioStatus,
} from '../../src/report/types.ts'
import { errored, failed, mixedReport, passed, reportOf, skipped } from './sample-report.ts'

const schema = readRunReportSchema()
const definitions = schema['definitions'] as Record<string, SchemaObject>
const ajv = createRunReportAjv()
ajv.addSchema(schema, 'run-report')

function validates(definition: string | null, value: unknown): string[] {
  const validate = ajv.compile({ $ref: definition === null ? 'run-report#' : `run-report#/definitions/${definition}` })
  return validate(value) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message ?? ''}`)
}

/** The keys of `T`, every one listed exactly once (a missing or extra key is a compile error); `true` = required. */
const keysOf = <T>(keys: { [K in keyof Required<T>]: {} extends Pick<T, K> ? false : true }): Record<string, boolean> => keys
/** The members of a string-literal union, every one listed exactly once. */
const membersOf = <T extends string>(members: { [K in T]: true }): string[] => Object.keys(members).sort()

const timings = { ms: 12.5 }
const fullScenario: Required<ScenarioReport> = {
  ...passed, artifacts: passed.artifacts!, counts: passed.counts!, outcomes: passed.outcomes!, finalPressure: passed.finalPressure!,
  policySource: 'manifest', invariants: ['INV-01', 'INV-47'], skipReason: 'not skipped, but every key is exercised', error: 'and none',
  errorKind: 'internal', warnings: ['step compaction failed: m; continuing the turn'],
  violations: [{ id: 'INV-05', seq: 3, message: 'm' }], expectations: [{ name: 'durable', passed: false, expected: 'a', actual: 'b' }],
  timings,
}
const fullReport = { ...reportOf([fullScenario, failed, skipped, errored], { seed: 4294967295 }), timings } as Required<RunReport>

/** Typed examples per definition; `<root>` is the whole document. */
const examples: Record<string, readonly unknown[]> = {
  '<root>': [fullReport, mixedReport, reportOf([])] satisfies RunReport[],
  Tool: [{ name: 'compaction-sim', version: '0.1.0' }] satisfies Array<RunReport['tool']>,
  Seed: [0, 4294967295] satisfies number[],
  Count: [0, 3] satisfies number[],
  Timings: [timings, { ms: 0 }] satisfies Array<NonNullable<RunReport['timings']>>,
  Summary: [mixedReport.summary] satisfies RunSummary[],
  Status: ['passed', 'failed', 'skipped', 'error'] satisfies ScenarioStatus[],
  Dialect: [...DIALECTS] satisfies Dialect[],
  InvariantId: ['INV-01', 'INV-47'] satisfies InvariantId[],
  PolicySource: ['manifest', 'defaults'] satisfies PolicySource[],
  Scenario: [fullScenario, passed, failed, skipped, errored] satisfies ScenarioReport[],
  Violation: [{ id: 'INV-12', seq: 0, message: '' }] satisfies ReportedViolation[],
  Expectation: [{ name: 'counts.prunes', passed: true, expected: '2', actual: '2' }] satisfies ExpectationResult[],
  Counts: [passed.counts] satisfies Array<ScenarioCounts | undefined>,
  Outcome: [{ turn: 0, kind: 'completed' }, { turn: 2, kind: 'error', code: 'SERVER' }] satisfies ReportedOutcome[],
  FinalPressure: [{ tokens: 1, ratio: 0.5, contextWindow: 2 }, { tokens: 1, ratio: null, contextWindow: null }] satisfies FinalPressure[],
  Fault: [{ id: 'f1', kind: 'FAULT-84', fired: 0 }] satisfies ReportedFault[],
  Artifacts: [passed.artifacts] satisfies Array<ScenarioArtifacts | undefined>,
}

/** Object definitions → the keys of their TypeScript type, with whether each is required. */
const typeKeys: Record<string, Record<string, boolean>> = {
  '<root>': keysOf<RunReport>({ schemaVersion: true, tool: true, runId: true, seed: true, summary: true, scenarios: true, timings: false }),
  Tool: keysOf<RunReport['tool']>({ name: true, version: true }),
  Timings: keysOf<NonNullable<RunReport['timings']>>({ ms: true }),
  Summary: keysOf<RunSummary>({ total: true, passed: true, failed: true, skipped: true, error: true }),
  Scenario: keysOf<ScenarioReport>({
    file: true, name: true, subject: true, seed: true, dialect: true, status: true, skipReason: false, error: false, errorKind: false,
    artifacts: false, counts: false, outcomes: false, finalPressure: false, policySource: false, invariants: false, violations: true,
    expectations: true, faults: true, warnings: false, replay: true, timings: false,
  }),
  Violation: keysOf<ReportedViolation>({ id: true, seq: true, message: true }),
  Expectation: keysOf<ExpectationResult>({ name: true, passed: true, expected: true, actual: true }),
  Counts: keysOf<ScenarioCounts>({
    events: true, turns: true, requests: true, brackets: true, failedBrackets: true, prunes: true, offloads: true, retries: true,
    summaryErrors: true, checkpoints: true, crashes: true,
  }),
  Outcome: keysOf<ReportedOutcome>({ turn: true, kind: true, code: false }),
  FinalPressure: keysOf<FinalPressure>({ tokens: true, ratio: true, contextWindow: true }),
  Fault: keysOf<ReportedFault>({ id: true, kind: true, fired: true }),
  Artifacts: keysOf<ScenarioArtifacts>({ log: true, manifest: true, requests: true }),
}

/** A copy of the `enum` at `#/definitions/<path…>`; throws when there is none. */
function enumAt(...path: string[]): string[] {
  let node: unknown = definitions
  for (const key of path) node = (node as Record<string, unknown> | undefined)?.[key]
  const values = (node as { enum?: unknown } | undefined)?.enum
  if (!Array.isArray(values)) throw new Error(`#/definitions/${path.join('/')} has no enum`)
  return [...(values as string[])]
}

const objectSchema = (name: string): SchemaObject => (name === '<root>' ? schema : definitions[name] ?? {})

describe('report/types.ts ⟷ run-report.schema.json', () => {
  it('has a typed example for every definition', () => {
    expect(Object.keys(examples).filter((k) => k !== '<root>').sort()).toEqual(Object.keys(definitions).sort())
  })

  it.each(Object.entries(examples))('every example of %s validates against its definition', (name, values) => {
    for (const value of values) expect(validates(name === '<root>' ? null : name, value)).toEqual([])
  })

  it('a report using every key of every type validates as a whole', () => {
    expect(validates(null, fullReport)).toEqual([])
    expect(Object.keys(fullReport).sort()).toEqual(Object.keys(typeKeys['<root>'] ?? {}).sort())
    expect(Object.keys(fullScenario).sort()).toEqual(Object.keys(typeKeys['Scenario'] ?? {}).sort())
  })

  it('covers every object definition of the schema with a key list', () => {
    const withProperties = Object.entries(definitions).filter(([, d]) => d['properties'] !== undefined).map(([n]) => n)
    expect(Object.keys(typeKeys).filter((k) => k !== '<root>').sort()).toEqual(withProperties.sort())
  })

  it.each(Object.entries(typeKeys))('the keys of the %s type equal the schema properties', (name, keys) => {
    expect(Object.keys(keys).sort()).toEqual(Object.keys(objectSchema(name)['properties'] as object).sort())
  })

  it.each(Object.entries(typeKeys))('the required keys of the %s type equal the schema required list', (name, keys) => {
    const required = Object.entries(keys).filter(([, isRequired]) => isRequired).map(([key]) => key).sort()
    expect(required).toEqual([...(objectSchema(name)['required'] as string[])].sort())
  })

  it('the literal unions equal the schema enums and consts', () => {
    const statuses = membersOf<ScenarioStatus>({ passed: true, failed: true, skipped: true, error: true })
    expect(statuses).toEqual(enumAt('Status').sort())
    expect(definitions['Dialect']?.['enum']).toEqual([...DIALECTS])
    expect(definitions['InvariantId']?.['enum']).toEqual([...INVARIANT_IDS])
    const errorKinds = membersOf<NonNullable<ScenarioReport['errorKind']>>({ input: true, internal: true })
    expect(errorKinds).toEqual(enumAt('Scenario', 'properties', 'errorKind').sort())
    expect(membersOf<PolicySource>({ manifest: true, defaults: true })).toEqual(enumAt('PolicySource').sort())
    expect((schema['properties'] as Record<string, SchemaObject>)['schemaVersion']?.['const']).toBe(RUN_REPORT_SCHEMA_VERSION)
    const toolName: RunReport['tool']['name'] = 'compaction-sim'
    expect(definitions['Tool']?.['properties']?.['name']?.['const']).toBe(toolName)
  })
})
