/**
 * The reference subject on the anthropic wire, end to end (issue #15): `runScenario` on the catalog's
 * `scenarios/smoke/anthropic-wire.yaml` passes every invariant and its expectations; the mock saw Anthropic
 * bodies (`POST …/messages`, top-level `system`, `max_tokens` on every request); the checker judges the
 * protocol capture — INV-43 and INV-44 are evaluated on it and catch a tampered compaction request; and a
 * subject that does not declare `anthropicWire` is skipped with the reason instead of being run.
 */
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { CapturedRequest } from '@compaction-sim/core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { checkLog } from '../../src/checker/run.ts'
import { runScenario } from '../../src/run/run-scenario.ts'
import type { ScenarioReport } from '../../src/report/types.ts'
import { referenceSubject } from '../../src/subjects/reference.ts'
import { REPO_ROOT, tempDir } from '../cli/run-sim.ts'

const FILE = join(REPO_ROOT, 'scenarios/smoke/anthropic-wire.yaml')
let tmp: { dir: string; cleanup: () => Promise<void> }
let report: ScenarioReport

beforeAll(async () => {
  tmp = await tempDir()
  report = await runScenario(FILE, { outDir: tmp.dir, cwd: REPO_ROOT })
}, 300_000)
afterAll(async () => { await tmp.cleanup() })

async function capture(): Promise<CapturedRequest[]> {
  if (report.artifacts === undefined) throw new Error('no artifacts')
  return (await readFile(join(tmp.dir, report.artifacts.requests), 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as CapturedRequest)
}

describe('the reference subject on the anthropic wire', () => {
  it('passes every invariant and every expectation of scenarios/smoke/anthropic-wire.yaml', () => {
    expect([report.status, report.subject, report.skipReason]).toEqual(['passed', 'reference', undefined])
    expect(report.violations).toEqual([])
    expect(report.expectations.filter((e) => !e.passed)).toEqual([])
    expect(report.expectations.length).toBeGreaterThan(10)
    expect(report.counts).toMatchObject({ brackets: 2, checkpoints: 2, failedBrackets: 0 })
    expect(report.faults).toMatchObject([{ id: 'anthropic-overflow-turn-4', fired: 1 }])
  })

  it('sends a logged max_tokens on every request: the route default on conversation calls, the policy cap on summary calls', async () => {
    const requests = await capture()
    expect(requests.map((r) => [r.purpose, r.maxTokens])).toEqual([
      ['conversation', 4096], ['conversation', 4096], ['conversation', 4096], ['conversation', 4096], ['compaction', 8192],
      ['conversation', 4096], ['conversation', 4096], ['compaction', 8192], ['conversation', 4096],
    ])
    expect(requests[6]).toMatchObject({ outcome: 'error', failureCode: 'CONTEXT_WINDOW_EXCEEDED' })
  })

  it('has the checker judge the capture (INV-43, INV-44 evaluated), and catch a compaction request that differs from its bracket', async () => {
    if (report.artifacts === undefined) throw new Error('no artifacts')
    const log = join(tmp.dir, report.artifacts.log)
    const clean = await checkLog(log, { dialect: 'seed', requests: join(tmp.dir, report.artifacts.requests) })
    if (clean.kind !== 'report') throw new Error(clean.error.message)
    expect(clean.violations).toEqual([])
    const status = (id: string): string | undefined => clean.coverage.find((c) => c.id === id)?.status
    expect([status('INV-43'), status('INV-44')]).toEqual(['evaluated', 'evaluated'])
    const requests = await capture()
    const tampered = requests.map((r) => (r.purpose === 'compaction' && r.index === 7 ? { ...r, messages: r.messages.slice(0, 1).concat(r.messages.slice(2)) } : r))
    const path = join(tmp.dir, 'tampered.requests.jsonl')
    await writeFile(path, tampered.map((r) => JSON.stringify(r)).join('\n') + '\n')
    const dirty = await checkLog(log, { dialect: 'seed', requests: path })
    if (dirty.kind !== 'report') throw new Error(dirty.error.message)
    expect(dirty.violations.map((v) => v.id)).toContain('INV-44')
  })

  it('skips the scenario for a subject that does not declare the anthropicWire feature, naming it', async () => {
    const subject = { ...referenceSubject, name: 'openai-only', features: ['timeouts' as const] }
    const skipped = await runScenario(FILE, { outDir: join(tmp.dir, 'skip'), cwd: REPO_ROOT, subject })
    expect(skipped.status).toBe('skipped')
    expect(skipped.skipReason).toBe(
      'subject openai-only does not declare the feature this scenario needs: anthropicWire (provider.wire: anthropic)',
    )
  })
})
