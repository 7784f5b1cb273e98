/**
 * Test helper: a `RunReport` with one scenario of each status (passed; failed by an expectation and a
 * violation; skipped; error), built from typed parts so the renderer and schema tests share one input.
 */
import type { RunReport, ScenarioReport, ScenarioStatus } from '../../src/report/types.ts'

const counts = {
  events: 40, turns: 3, requests: 5, brackets: 1, failedBrackets: 0, prunes: 2, offloads: 0, retries: 1, summaryErrors: 0,
  checkpoints: 1, crashes: 0,
}

/** A passed scenario with every optional field present. */
export const passed: ScenarioReport = {
  file: 'scenarios/smoke/basic.yaml',
  name: 'basic',
  subject: 'reference',
  seed: 7,
  dialect: 'seed',
  status: 'passed',
  artifacts: { log: 'smoke/basic.jsonl', manifest: 'smoke/basic.jsonl.manifest.json', requests: 'smoke/basic.requests.json' },
  counts,
  outcomes: [{ turn: 0, kind: 'completed' }, { turn: 1, kind: 'error', code: 'CONTEXT_WINDOW_EXCEEDED' }],
  finalPressure: { tokens: 4120, ratio: 0.412, contextWindow: 10000 },
  policySource: 'manifest',
  invariants: 'all',
  violations: [],
  expectations: [{ name: 'counts.brackets', passed: true, expected: '1', actual: '1' }],
  faults: [{ id: 'f1', kind: 'FAULT-01', fired: 1 }],
  replay: 'pnpm sim run scenarios/smoke/basic.yaml --seed 7',
}

/** Failed by one expectation and one violation; its strings carry `|`, a line break, `<`, `&` and an ESC. */
export const failed: ScenarioReport = {
  file: 'scenarios/policy/threshold-edge.yaml',
  name: 'threshold-edge',
  subject: 'reference',
  seed: 42,
  dialect: 'dsh-0.1.0-rc.8',
  status: 'failed',
  counts: { ...counts, brackets: 0, prunes: 0, retries: 0 },
  finalPressure: { tokens: 9000, ratio: null, contextWindow: null },
  invariants: ['INV-12', 'INV-30'],
  violations: [{ id: 'INV-12', seq: 17, message: 'bracket a|b never closed\nsee <seq 3> & \u001b[31mred\u001b[0m' }],
  expectations: [
    { name: 'outcome[0]', passed: true, expected: 'completed', actual: 'completed' },
    { name: 'counts.brackets', passed: false, expected: '1', actual: '0 | none' },
  ],
  faults: [],
  replay: 'pnpm sim run scenarios/policy/threshold-edge.yaml --seed 42',
}

/** Skipped, with its reason. */
export const skipped: ScenarioReport = {
  file: 'scenarios/policy/threshold-edge.yaml',
  name: 'threshold-edge',
  subject: 'dsh',
  seed: 42,
  dialect: 'dsh-0.1.0-rc.8',
  status: 'skipped',
  skipReason: 'subject dsh lacks pruning (§14)',
  violations: [],
  expectations: [],
  faults: [],
  replay: 'pnpm sim run scenarios/policy/threshold-edge.yaml --seed 42 --subject dsh',
}

/** Could not run: a schema error naming file:line:column, with an XML-forbidden character. */
export const errored: ScenarioReport = {
  file: 'bad.yaml',
  name: 'bad',
  subject: 'reference',
  seed: 3,
  dialect: 'seed',
  status: 'error',
  error: 'bad.yaml:3:5: /seed must be integer "x"\u0000',
  errorKind: 'input',
  violations: [],
  expectations: [],
  faults: [],
  replay: 'pnpm sim run bad.yaml --seed 3',
}

/** A report over `scenarios` with a summary that agrees with them. */
export function reportOf(scenarios: ScenarioReport[], extra: Partial<Pick<RunReport, 'timings' | 'seed'>> = {}): RunReport {
  const tally = (status: ScenarioStatus): number => scenarios.filter((s) => s.status === status).length
  return {
    schemaVersion: 1,
    tool: { name: 'compaction-sim', version: '0.1.0' },
    runId: 'run-0123abcd',
    seed: null,
    summary: {
      total: scenarios.length, passed: tally('passed'), failed: tally('failed'), skipped: tally('skipped'), error: tally('error'),
    },
    scenarios,
    ...extra,
  }
}

/** One scenario of each status. */
export const mixedReport: RunReport = reportOf([passed, failed, skipped, errored])
