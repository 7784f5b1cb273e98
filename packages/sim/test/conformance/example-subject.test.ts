/**
 * Issue #11 "done when": the example user subject (`examples/subject-core-adapter/`) passes
 * `sim conform --level must` over the whole pack, skipping only what its declared features leave out; the
 * deliberately broken copy (checkpoint provenance stored reversed) fails with INV-14 and nothing else, and
 * `--reporter github` annotates the pack file and writes the job summary. The second broken copy (a request
 * builder that drops old tool results, `broken-pairing/`) is refused by the mock's strict pairing validation on
 * `scenarios/world/pairing-rejection-broken-adapter.yaml` (issue #15), which the reference subject passes.
 */
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RunReport } from '../../src/report/types.ts'
import { REPO_ROOT, runSim, tempDir } from '../cli/run-sim.ts'

const EXAMPLE = join(REPO_ROOT, 'examples/subject-core-adapter/subject.ts')
const BROKEN = join(REPO_ROOT, 'examples/subject-core-adapter/broken/subject.ts')
const BROKEN_PAIRING = join(REPO_ROOT, 'examples/subject-core-adapter/broken-pairing/subject.ts')
const PAIRING_SCENARIO = join(REPO_ROOT, 'scenarios/world/pairing-rejection-broken-adapter.yaml')

let tmp: { dir: string; cleanup: () => Promise<void> }
beforeAll(async () => { tmp = await tempDir() })
afterAll(async () => { await tmp.cleanup() })

describe('sim conform with the example subject', () => {
  it('the example conforms at level must (exit 0): every covered pack scenario passes', async () => {
    const outDir = join(tmp.dir, 'example')
    const run = await runSim(['conform', '--subject', `module:${EXAMPLE}`, '--level', 'must', '--reporter', 'json', '--out-dir', outDir])
    expect(run.exitCode, run.stderr).toBe(0)
    const report = JSON.parse(run.stdout) as RunReport
    const skipped = report.scenarios.filter((s) => s.status === 'skipped').map((s) => s.skipReason?.replace(/ \(.*$/, ''))
    expect(skipped).toEqual([
      'subject core-adapter-example does not declare the feature this scenario needs: unroutableSummarizer',
      'subject core-adapter-example does not declare the feature this scenario needs: explicitRegion',
    ])
    expect(report.summary.failed + report.summary.error).toBe(0)
    expect(report.summary.passed).toBe(report.summary.total - 2)
    expect(report.scenarios.filter((s) => s.counts?.crashes === 1).length).toBeGreaterThanOrEqual(5) // crash scenarios ran in the child
    expect(run.stderr).toContain('core-adapter-example conforms at level must (pack v3)')
  }, 600_000) // the pack with its crash children: a liveness bound for a loaded machine, not a speed check

  it('the broken copy fails with INV-14 only (exit 1), annotated for GitHub with a job summary', async () => {
    const outDir = join(tmp.dir, 'broken')
    const summary = join(tmp.dir, 'step-summary.md')
    const run = await runSim(
      ['conform', '--subject', `module:${BROKEN}`, '--filter', '/smoke/', '--reporter', 'json', '--reporter', 'github', '--out-dir', outDir],
      { env: { GITHUB_STEP_SUMMARY: summary } },
    )
    expect(run.exitCode, run.stderr).toBe(1)
    const report = JSON.parse(await readFile(join(outDir, 'report.json'), 'utf8')) as RunReport
    const verdicts = report.scenarios.map((s) => [s.name, s.status, [...new Set(s.violations.map((v) => v.id))]])
    expect(verdicts).toEqual([
      ['basic-pressure', 'failed', ['INV-14']],
      ['no-pressure', 'passed', []],
      ['overflow-recovery', 'failed', ['INV-14']],
    ])
    const annotations = run.stdout.split('\n').filter((l) => l.startsWith('::error '))
    // No `expect.invariants` key in these files: a violation points at the `expect:` block (its nearest ancestor).
    const expectLine = async (file: string): Promise<string> =>
      String((await readFile(join(REPO_ROOT, file), 'utf8')).split('\n').indexOf('expect:') + 1)
    const files = ['packages/sim/conformance/pack-v1/smoke/basic-pressure.yaml', 'packages/sim/conformance/pack-v1/smoke/overflow-recovery.yaml']
    expect(annotations.map((l) => /^::error file=([^,]+),line=(\d+),title=([^:]+)::/.exec(l)?.slice(1))).toEqual([
      [files[0], await expectLine(files[0] ?? ''), 'INV-14'],
      [files[1], await expectLine(files[1] ?? ''), 'INV-14'],
    ])
    expect(run.stdout).toContain('--subject module:')
    expect(await readFile(summary, 'utf8')).toMatch(/^## ❌ conformance compaction-sim-conformance v3 \(must\) · core-adapter-example-broken: 1\/3 passed/)
    expect(run.stderr).toContain('core-adapter-example-broken does NOT conform at level must')
  }, 300_000)
})

describe('the broken-pairing example subject against strict provider pairing (issue #15)', () => {
  /** The scenario's one report entry, run under `subject`. */
  async function runPairing(subject: string, dir: string): Promise<{ exitCode: number; scenario: RunReport['scenarios'][number] }> {
    const outDir = join(tmp.dir, dir)
    const run = await runSim(['run', PAIRING_SCENARIO, '--subject', subject, '--reporter', 'json', '--out-dir', outDir])
    const report = JSON.parse(await readFile(join(outDir, 'report.json'), 'utf8')) as RunReport
    const [scenario] = report.scenarios
    if (scenario === undefined) throw new Error(`no scenario in the report: ${run.stderr}`)
    return { exitCode: run.exitCode, scenario }
  }
  const failed = (s: RunReport['scenarios'][number]): string[] =>
    s.expectations.filter((e) => !e.passed).map((e) => `${e.name}: expected ${e.expected}, got ${e.actual}`)

  it('the reference subject keeps every pair: the scenario passes with no rejection', async () => {
    const { exitCode, scenario } = await runPairing('reference', 'pairing-reference')
    expect(exitCode).toBe(0)
    expect(scenario.status).toBe('passed')
    expect(failed(scenario)).toEqual([])
  }, 120_000)

  it('the trimming request builder provokes the real 400 pairing rejection; the scenario fails on it', async () => {
    const { exitCode, scenario } = await runPairing(`module:${BROKEN_PAIRING}`, 'pairing-broken')
    expect(exitCode).toBe(1)
    expect(scenario.status).toBe('failed')
    expect(scenario.subject).toBe('core-adapter-example-broken-pairing')
    // Turn 1 carries two tool results (kept); from turn 2 on the oldest result is dropped and its call is left unanswered.
    expect(failed(scenario)).toEqual([
      'outcome[1]: expected completed, got error (UNKNOWN)',
      'outcome[2]: expected completed, got error (UNKNOWN)',
      'rejections.pairing: expected 0, got 2 (requests #4 UNKNOWN; #5 UNKNOWN)',
      'rejections.total: expected 0, got 2 (requests #4 UNKNOWN; #5 UNKNOWN)',
    ])
    expect(scenario.violations).toEqual([]) // the log is right; only the wire is wrong
    // `rejections.pairing` counts the mock's captures by rejectionKind: both refusals are strict pairing, none a window or a fault.
  }, 120_000)
})
