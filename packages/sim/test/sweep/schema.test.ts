/**
 * `sweep-report.schema.json` ⟷ `sweep/types.ts` (issue #10): a document using every key of every type validates,
 * each object definition lists exactly the keys of its type (required = non-optional), and the validator names
 * the JSON path of a wrong value.
 */
import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import type {
  SweepCell, SweepCellMetrics, SweepGrid, SweepPolicy, SweepRecommendation, SweepReport, SweepRunMetrics,
} from '../../src/sweep/types.ts'
import { SWEEP_REPORT_SCHEMA_PATH, validateSweepReport } from '../../src/sweep/validate.ts'

const policy: Required<SweepPolicy> = { thresholdRatio: 0.8, retainRatio: 0.1, pruner: true, contextWindow: 8000, summarizer: 'forgets-paths', profile: 'hardened' }
const run: Required<SweepRunMetrics> = {
  file: 'scenarios/sweep/deep-steps.yaml', seed: 103, status: 'failed', reason: 'r', turns: 8, requests: 30, compactions: 2, prunes: 3,
  failedBrackets: 1, overflowIncidents: 1, pressureMax: 0.9, pressureMean: 0.5, summaryPromptTokens: 900, promptTokens: 9000,
  cachedTokens: 7000, cost: 0.01, violations: 0, violationIds: [], factsTotal: 4, factsKept: 3, probesPlanted: 40, probesVisible: 31,
  providerRejections: 1, summaryCalls: 3, turnsCompleted: 7,
}
const metrics: Required<SweepCellMetrics> = {
  runs: 1, runsNotPassed: 1, turns: 8, compactions: 2, prunes: 3, failedBrackets: 1, overflowIncidents: 1, pressureMax: 0.9,
  pressureMean: 0.5, summaryPromptTokens: 900, promptTokens: 9000, cachedTokens: 7000, uncachedTokens: 2000, cost: null, violations: 0,
  retention: 0.75, probeRetention: 0.775, cacheReuse: 0.7778,
  providerRejections: 1, summaryCalls: 3, turnsCompleted: 7, compactionsPer100Turns: 25,
}
const cell: Required<SweepCell> = {
  index: 0, id: 'w8000-t0.8-r0.1-p1', policy, status: 'ran', skipReason: 's', metrics, runs: [run], pareto: true,
}
const grid: Required<SweepGrid> = {
  thresholdRatio: [0.8], retainRatio: [0.1], pruner: [true], contextWindow: [8000], seeds: [1], compactionsPerTurnMax: 0.5,
  summarizer: ['builtin', { ratio: 0.3 }], objective: 'retention', profile: ['faithful', 'hardened'], ownPolicy: true,
}
const recommendation: Required<SweepRecommendation> = { contextWindow: 8000, cell: cell.id, policy, reasoning: 'why' }
const report: Required<SweepReport> = {
  schemaVersion: 1, tool: { name: 'compaction-sim', version: '0.1.0' }, sweepId: 'sweep-x', grid, scenarios: [run.file],
  costBasis: 'uncachedTokens', complete: true, shard: { index: 1, count: 2 },
  summary: { cells: 1, ran: 1, skipped: 0, runs: 1, violations: 0, pareto: 1 }, cells: [cell],
  recommendations: [recommendation, { contextWindow: 16000, cell: null, policy: null, reasoning: 'none' }],
}

interface Definition { properties?: Record<string, unknown>; required?: string[] }
const schema = JSON.parse(readFileSync(SWEEP_REPORT_SCHEMA_PATH, 'utf8')) as Definition & { definitions: Record<string, Definition> }

describe('sweep-report.schema.json', () => {
  it('accepts a document using every key of every type', () => {
    expect(validateSweepReport(report)).toEqual([])
  })

  it('lists exactly the keys of each type, required = non-optional', () => {
    const pairs: Array<[Definition, object, string[]]> = [
      [schema, report, ['shard']],
      [schema.definitions['policy'] ?? {}, policy, ['thresholdRatio', 'retainRatio', 'pruner', 'contextWindow', 'summarizer', 'profile']],
      [schema.definitions['run'] ?? {}, run, ['reason', 'probesPlanted', 'probesVisible', 'providerRejections', 'summaryCalls', 'turnsCompleted']],
      [schema.definitions['cellMetrics'] ?? {}, metrics, ['probeRetention', 'cacheReuse', 'providerRejections', 'summaryCalls', 'turnsCompleted', 'compactionsPer100Turns']],
      [schema.definitions['cell'] ?? {}, cell, ['skipReason', 'metrics', 'runs', 'pareto']],
      [schema.definitions['grid'] ?? {}, grid, ['summarizer', 'objective', 'profile', 'ownPolicy']],
      [schema.definitions['recommendation'] ?? {}, recommendation, []],
    ]
    for (const [definition, example, optional] of pairs) {
      expect(Object.keys(definition.properties ?? {}).sort()).toEqual(Object.keys(example).sort())
      expect([...(definition.required ?? [])].sort()).toEqual(Object.keys(example).filter((k) => !optional.includes(k)).sort())
    }
  })

  it('names the path of a wrong value', () => {
    const bad = { ...report, cells: [{ ...cell, status: 'maybe' }] }
    expect(validateSweepReport(bad)).toContain('/cells/0/status must be equal to one of the allowed values')
  })
})
