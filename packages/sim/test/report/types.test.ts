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
import { INVARIANT_IDS, type CheckId, type InvariantId, type PolicySource } from '../../src/checker/types.ts'
import { createRunReportAjv, readRunReportSchema } from '../../src/report/build-validator.ts'
import { RUN_REPORT_SCHEMA_VERSION } from '../../src/report/types.ts'
import type {
  ExpectationResult, FinalPressure, ReportedFault, ReportedOutcome, ReportedViolation, RunReport, RunSummary, ScenarioArtifacts,
  ScenarioCounts, ScenarioDrift, ScenarioReport, ScenarioStatus, SessionReport,
} from '../../src/report/types.ts'
import type { ReportedPath, ScenarioTimeline, TimelineMarker, TimelineMarkerKind, TimelinePoint } from '../../src/report/types.ts'
import type { DifferentialAspect, DifferentialDifference, DifferentialReport, DifferentialScenario } from '../../src/report/types.ts'
import type { RunShard } from '../../src/report/types.ts'
import type {
  RetentionCount, RetentionCycle, RetentionKind, RetentionKindCurve, RetentionLoss, ScenarioRetention,
} from '../../src/report/types.ts'
import type {
  CacheCauseKind, CacheContractName, CacheDeviation, CachePriceRef, CacheReportedUsage, CacheRequestRow, CacheTotals, RunCache,
  ScenarioCache,
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
const timeline: ScenarioTimeline = {
  events: 40,
  points: [
    { request: 0, purpose: 'conversation', seq: 4, tokens: 900, ratio: 0.09, thresholdTokens: 8000, providerTokens: 1012 },
    { request: 1, purpose: 'compaction', seq: 20, tokens: 8100, ratio: null, thresholdTokens: null },
  ],
  markers: [
    { kind: 'compaction-start', seq: 19, compactionId: 'c1' }, { kind: 'compaction-end', seq: 25, compactionId: 'c1', failed: true },
    { kind: 'prune', seq: 30 },
  ],
}
const cacheRow: Required<CacheRequestRow> = {
  index: 1, purpose: 'compaction', cacheKey: 'mock/mock-4k', rejected: false, prompt: 2000, cached: 1792, uncached: 208, written: 0,
  divergence: 6, source: 0, cause: 'offload@5', causeKind: 'offload', recomputed: 99, output: 164, cost: 0.0012,
  reported: { cached: 0, uncached: 2000, written: 0 }, mismatch: true, scripted: true,
}
const cacheTotals: CacheTotals = { requests: 2, prompt: 2094, cached: 1792, uncached: 302, reuseRatio: 0.86 }
const cachePrice: CachePriceRef = { tableVersion: 1, tableDate: '2025-06-01', entry: 'openai/gpt-4.1', currency: 'USD' }
const scenarioCache: ScenarioCache = {
  contract: 'openai', deviation: 'none-cached', granularityTokens: 128, ttlMs: null, price: cachePrice,
  requests: [
    cacheRow, { ...cacheRow, index: 0, purpose: 'conversation', divergence: null, source: null, cause: 'none', causeKind: 'none' },
  ],
  overall: cacheTotals, conversation: { requests: 0, prompt: 0, cached: 0, uncached: 0, reuseRatio: null }, compaction: cacheTotals,
  seriesBoundaries: 1, recomputedByCompaction: 99, summaryCost: 0.001, tokensSaved: 1400, savedCost: 0.0007, recomputeCost: 0.0001,
  netSaving: -0.0004, mismatches: 1, scriptedUsage: 0,
}
const runCache: RunCache = {
  scenarios: 1, overall: cacheTotals, cost: 0.0024, netSaving: -0.0004, mismatches: 1, mismatchedScenarios: ['scenarios/cache/x.yaml'],
  price: { tableVersion: 1, tableDate: '2025-06-01' },
}
const drift: ScenarioDrift = { requests: 3, meanPct: 8.1, maxPct: 12.44, maxRequest: 2, minPct: -0.5 }
const fullSession: Required<SessionReport> = {
  name: 'a', status: 'failed', artifacts: passed.artifacts!, counts: passed.counts!, outcomes: passed.outcomes!, finalPressure: passed.finalPressure!,
  violations: [{ id: 'INV-45', seq: 9, message: 'm' }], expectations: [{ name: 'counts.brackets', passed: false, expected: '1', actual: '0' }],
  faults: [{ id: 'orphan', kind: 'FAULT-60', fired: 1 }], warnings: ['manual compactNow after turn 2 failed: busy'],
}
const plainSession: SessionReport = { name: 'b', status: 'passed', artifacts: passed.artifacts!, violations: [], expectations: [], faults: [] }
const retentionCount: RetentionCount = { planted: 2, visible: 1, share: 0.5, compacted: 1, kept: 0, keptShare: 0 }
const retentionCycle: RetentionCycle = {
  cycle: 1, seq: 40, turn: 3, recall: retentionCount, artifact: { planted: 0, visible: 0, share: null, compacted: 0, kept: 0, keptShare: null }, continuation: retentionCount,
  decision: retentionCount,
}
const retentionCurve: RetentionKindCurve = { kind: 'artifact', probes: 2, planted: 2, curve: [0.5, null], keptCurve: [0, null], final: null, lost: 1 }
const retentionLoss: RetentionLoss = { id: 'artifact-002', kind: 'artifact', cycle: 2, plantedSeq: 17 }
const retention: ScenarioRetention = {
  probes: 3, cycles: 1, kinds: [retentionCurve], points: [retentionCycle], lost: [retentionLoss], unplanted: ['decision-1'],
}
const fullScenario: Required<ScenarioReport> = {
  ...passed, artifacts: passed.artifacts!, counts: passed.counts!, outcomes: passed.outcomes!, finalPressure: passed.finalPressure!,
  policySource: 'manifest', invariants: ['INV-01', 'INV-47'], skipReason: 'not skipped, but every key is exercised', error: 'and none',
  errorKind: 'internal', warnings: ['step compaction failed: m; continuing the turn'],
  violations: [{ id: 'INV-05', seq: 3, message: 'm' }], expectations: [
    { name: 'durable', passed: false, expected: 'a', actual: 'b' },
    { name: 'counts.brackets', passed: true, expected: '≥ 1', actual: 'not evaluated (seed-specific)', notEvaluated: 'seed-specific' },
  ],
  timings, timeline, paths: [{ path: 'pressure/compact', reached: 2 }], cache: scenarioCache, drift, sessions: [fullSession, plainSession], retention,
}
const difference: Required<DifferentialDifference> = {
  aspect: 'pressure', base: '452', other: '448', verdict: 'explained', rule: 'D-03', note: 'gap 4 tokens; D-03 predicts 4',
}
const differentialScenario: Required<DifferentialScenario> = {
  file: 'scenarios/smoke/basic-pressure.yaml', name: 'basic-pressure', base: 'reference', other: 'dsh', status: 'compared',
  skipReason: 'compared, but every key is exercised', differences: [difference, { ...difference, verdict: 'unexplained', aspect: 'brackets' }],
}
const differential: DifferentialReport = {
  base: 'reference', subjects: ['reference', 'dsh'],
  summary: { scenarios: 1, compared: 1, skipped: 0, identical: 0, explained: 1, unexplained: 1 },
  scenarios: [differentialScenario],
}
const fullReport = { ...reportOf([fullScenario, failed, skipped, errored], { seed: 4294967295 }), timings, differential, cache: runCache,
  shard: { index: 1, count: 3, files: ['scenarios/smoke/basic-pressure.yaml'] }, seeds: [1, 2, 3] } as Required<RunReport>

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
  CheckId: ['INV-01', 'WORLD-06'] satisfies CheckId[],
  PolicySource: ['manifest', 'defaults'] satisfies PolicySource[],
  Scenario: [fullScenario, passed, failed, skipped, errored] satisfies ScenarioReport[],
  Session: [fullSession, plainSession] satisfies SessionReport[],
  Violation: [{ id: 'INV-12', seq: 0, message: '' }, { id: 'WORLD-01', seq: 3, message: '' }] satisfies ReportedViolation[],
  Expectation: [{ name: 'counts.prunes', passed: true, expected: '2', actual: '2' }] satisfies ExpectationResult[],
  Counts: [passed.counts] satisfies Array<ScenarioCounts | undefined>,
  Outcome: [{ turn: 0, kind: 'completed' }, { turn: 2, kind: 'error', code: 'SERVER' }] satisfies ReportedOutcome[],
  FinalPressure: [{ tokens: 1, ratio: 0.5, contextWindow: 2 }, { tokens: 1, ratio: null, contextWindow: null }] satisfies FinalPressure[],
  Fault: [{ id: 'f1', kind: 'FAULT-84', fired: 0 }] satisfies ReportedFault[],
  Artifacts: [passed.artifacts] satisfies Array<ScenarioArtifacts | undefined>,
  Timeline: [timeline, { events: 0, points: [], markers: [] }] satisfies ScenarioTimeline[],
  TimelinePoint: timeline.points satisfies TimelinePoint[],
  TimelineMarker: timeline.markers satisfies TimelineMarker[],
  Path: [{ path: 'x', reached: 0 }] satisfies ReportedPath[],
  Differential: [differential] satisfies DifferentialReport[],
  RunShard: [{ index: 2, count: 2, files: [] }] satisfies RunShard[],
  DifferentialSummary: [differential.summary] satisfies Array<DifferentialReport['summary']>,
  DifferentialScenario: [differentialScenario, { ...differentialScenario, status: 'skipped', differences: [] }] satisfies DifferentialScenario[],
  DifferentialDifference: differentialScenario.differences satisfies DifferentialDifference[],
  DifferentialAspect: ['brackets', 'pressure'] satisfies DifferentialAspect[],
  ScenarioCache: [scenarioCache] satisfies ScenarioCache[],
  CacheRequestRow: scenarioCache.requests satisfies CacheRequestRow[],
  CacheReportedUsage: [{ cached: 0, uncached: 1, written: 2 }] satisfies CacheReportedUsage[],
  CacheTotals: [cacheTotals, scenarioCache.conversation] satisfies CacheTotals[],
  CachePriceRef: [cachePrice] satisfies CachePriceRef[],
  RunCache: [runCache] satisfies RunCache[],
  ScenarioDrift: [drift, { requests: 1, meanPct: 0, maxPct: 0, maxRequest: 0, minPct: 0 }] satisfies ScenarioDrift[],
  RetentionKind: ['recall', 'decision'] satisfies RetentionKind[],
  RetentionCount: [retentionCount] satisfies RetentionCount[],
  RetentionCycle: [retentionCycle] satisfies RetentionCycle[],
  RetentionKindCurve: [retentionCurve] satisfies RetentionKindCurve[],
  RetentionLoss: [retentionLoss] satisfies RetentionLoss[],
  ScenarioRetention: [retention, { probes: 0, cycles: 0, kinds: [], points: [], lost: [], unplanted: [] }] satisfies ScenarioRetention[],
}

/** Object definitions → the keys of their TypeScript type, with whether each is required. */
const typeKeys: Record<string, Record<string, boolean>> = {
  '<root>': keysOf<RunReport>({
    schemaVersion: true, tool: true, runId: true, seed: true, summary: true, scenarios: true, timings: false, differential: false,
    cache: false, shard: false, seeds: false,
  }),
  Tool: keysOf<RunReport['tool']>({ name: true, version: true }),
  Timings: keysOf<NonNullable<RunReport['timings']>>({ ms: true }),
  Summary: keysOf<RunSummary>({ total: true, passed: true, failed: true, skipped: true, error: true }),
  Scenario: keysOf<ScenarioReport>({
    file: true, name: true, subject: true, seed: true, dialect: true, status: true, skipReason: false, error: false, errorKind: false,
    artifacts: false, counts: false, outcomes: false, finalPressure: false, policySource: false, invariants: false, violations: true,
    expectations: true, faults: true, warnings: false, replay: true, timings: false, timeline: false, paths: false,
    cache: false, drift: false, sessions: false, retention: false,
  }),
  Session: keysOf<SessionReport>({
    name: true, status: true, artifacts: true, counts: false, outcomes: false, finalPressure: false, violations: true, expectations: true,
    faults: true, warnings: false,
  }),
  Violation: keysOf<ReportedViolation>({ id: true, seq: true, message: true }),
  Expectation: keysOf<ExpectationResult>({ name: true, passed: true, expected: true, actual: true, notEvaluated: false }),
  Counts: keysOf<ScenarioCounts>({
    events: true, turns: true, requests: true, brackets: true, failedBrackets: true, prunes: true, offloads: true, retries: true,
    summaryErrors: true, checkpoints: true, crashes: true,
  }),
  Outcome: keysOf<ReportedOutcome>({ turn: true, kind: true, code: false }),
  FinalPressure: keysOf<FinalPressure>({ tokens: true, ratio: true, contextWindow: true }),
  Fault: keysOf<ReportedFault>({ id: true, kind: true, fired: true }),
  Artifacts: keysOf<ScenarioArtifacts>({ log: true, manifest: true, requests: true }),
  Timeline: keysOf<ScenarioTimeline>({ events: true, points: true, markers: true }),
  TimelinePoint: keysOf<TimelinePoint>({
    request: true, purpose: true, seq: true, tokens: true, ratio: true, thresholdTokens: true, providerTokens: false,
  }),
  ScenarioDrift: keysOf<ScenarioDrift>({ requests: true, meanPct: true, maxPct: true, maxRequest: true, minPct: true }),
  RetentionCount: keysOf<RetentionCount>({ planted: true, visible: true, share: true, compacted: true, kept: true, keptShare: true }),
  RetentionCycle: keysOf<RetentionCycle>({
    cycle: true, seq: true, turn: true, recall: true, artifact: true, continuation: true, decision: true,
  }),
  RetentionKindCurve: keysOf<RetentionKindCurve>({ kind: true, probes: true, planted: true, curve: true, keptCurve: true, final: true, lost: true }),
  RetentionLoss: keysOf<RetentionLoss>({ id: true, kind: true, cycle: true, plantedSeq: true }),
  ScenarioRetention: keysOf<ScenarioRetention>({ probes: true, cycles: true, kinds: true, points: true, lost: true, unplanted: true }),
  TimelineMarker: keysOf<TimelineMarker>({ kind: true, seq: true, compactionId: false, failed: false }),
  Path: keysOf<ReportedPath>({ path: true, reached: true }),
  Differential: keysOf<DifferentialReport>({ base: true, subjects: true, summary: true, scenarios: true }),
  DifferentialSummary: keysOf<DifferentialReport['summary']>({
    scenarios: true, compared: true, skipped: true, identical: true, explained: true, unexplained: true,
  }),
  DifferentialScenario: keysOf<DifferentialScenario>({
    file: true, name: true, base: true, other: true, status: true, skipReason: false, differences: true,
  }),
  DifferentialDifference: keysOf<DifferentialDifference>({ aspect: true, base: true, other: true, verdict: true, rule: false, note: true }),
  ScenarioCache: keysOf<ScenarioCache>({
    contract: true, deviation: true, granularityTokens: true, ttlMs: true, price: true, requests: true, overall: true, conversation: true,
    compaction: true, seriesBoundaries: true, recomputedByCompaction: true, summaryCost: true, tokensSaved: true, savedCost: true,
    recomputeCost: true, netSaving: true, mismatches: true, scriptedUsage: true,
  }),
  CacheRequestRow: keysOf<CacheRequestRow>({
    index: true, purpose: true, cacheKey: true, rejected: true, prompt: true, cached: true, uncached: true, written: true, divergence: true,
    source: true, cause: true, causeKind: true, recomputed: true, output: true, cost: true, reported: false, mismatch: false,
    scripted: false,
  }),
  CacheReportedUsage: keysOf<CacheReportedUsage>({ cached: true, uncached: true, written: true }),
  CacheTotals: keysOf<CacheTotals>({ requests: true, prompt: true, cached: true, uncached: true, reuseRatio: true }),
  CachePriceRef: keysOf<CachePriceRef>({ tableVersion: true, tableDate: true, entry: true, currency: true }),
  RunCache: keysOf<RunCache>({
    scenarios: true, overall: true, cost: true, netSaving: true, mismatches: true, mismatchedScenarios: true, price: true,
  }),
  RunShard: keysOf<RunShard>({ index: true, count: true, files: true }),
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
    const errorKinds = membersOf<NonNullable<ScenarioReport['errorKind']>>({ input: true, internal: true, watchdog: true })
    expect(errorKinds).toEqual(enumAt('Scenario', 'properties', 'errorKind').sort())
    expect(membersOf<PolicySource>({ manifest: true, defaults: true })).toEqual(enumAt('PolicySource').sort())
    const markerKinds = membersOf<TimelineMarkerKind>({ 'compaction-start': true, 'compaction-end': true, prune: true, offload: true })
    expect(markerKinds).toEqual(enumAt('TimelineMarker', 'properties', 'kind').sort())
    const purposes = membersOf<TimelinePoint['purpose']>({ conversation: true, compaction: true })
    expect(purposes).toEqual(enumAt('TimelinePoint', 'properties', 'purpose').sort())
    expect((schema['properties'] as Record<string, SchemaObject>)['schemaVersion']?.['const']).toBe(RUN_REPORT_SCHEMA_VERSION)
    const aspects = membersOf<DifferentialAspect>({
      brackets: true, shadowed: true, summaries: true, prunes: true, offloads: true, retries: true, surface: true, pressure: true,
    })
    expect(aspects).toEqual(enumAt('DifferentialAspect').sort())
    expect(membersOf<DifferentialDifference['verdict']>({ explained: true, unexplained: true }))
      .toEqual(enumAt('DifferentialDifference', 'properties', 'verdict').sort())
    expect(membersOf<DifferentialScenario['status']>({ compared: true, skipped: true })).toEqual(enumAt('DifferentialScenario', 'properties', 'status').sort())
    const contracts = membersOf<CacheContractName>({ protocol: true, openai: true, anthropic: true, deepseek: true })
    expect(contracts).toEqual(enumAt('ScenarioCache', 'properties', 'contract').sort())
    expect(membersOf<CacheDeviation>({ none: true, 'none-cached': true, 'half-cached': true }))
      .toEqual(enumAt('ScenarioCache', 'properties', 'deviation').sort())
    const causeKinds = membersOf<CacheCauseKind>({
      none: true, replacement: true, prune: true, offload: true, 'tools-change': true, 'route-change': true,
    })
    expect(causeKinds).toEqual(enumAt('CacheRequestRow', 'properties', 'causeKind').sort())
    const toolName: RunReport['tool']['name'] = 'compaction-sim'
    expect(definitions['Tool']?.['properties']?.['name']?.['const']).toBe(toolName)
  })
})
