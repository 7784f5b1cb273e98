/**
 * Issue #9 "done when": for catalog scenarios whose provider reports usage by contract (not scripted usage),
 * the mock provider's reported usage equals the contract model's prediction — every `cache` row that carries
 * reported usage and is not scripted agrees on cached and uncached tokens — and a deviating provider
 * (`scenarios/cache/openai-none-cached.yaml`) shows the gap in report.json and report.md. It runs a
 * representative slice of the catalog (issue #18: the whole catalog made this the slowest test file): every
 * scenario of `scenarios/cache/` (the three contracts and the deviating provider), every smoke scenario, and
 * one scenario per other folder for each mechanism that changes cache reuse — a crash (the child's cache dies
 * with it), repeated pressure cycles on both wires, a prune, a transient retry, a rerouted summary, and the
 * scenario whose every request is rejected. The whole catalog's `report.json` carries the same `cache`
 * sections; `sim run 'scenarios/**\/*.yaml'` lists any mismatch under `cache.mismatchedScenarios`.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { renderMarkdown } from '../../src/report/markdown.ts'
import type { RunReport } from '../../src/report/types.ts'
import { validateRunReport } from '../../src/report/validate.ts'
import { runScenarios } from '../../src/run/run-scenario.ts'

const ROOT = fileURLToPath(new URL('../../../../', import.meta.url))
// The slice (module doc): all of cache/ and smoke/, then one scenario per cache-relevant mechanism.
const FILES = [
  'scenarios/cache/anthropic-breakpoints.yaml',
  'scenarios/cache/deepseek-prune.yaml',
  'scenarios/cache/openai-compaction.yaml',
  'scenarios/cache/openai-none-cached.yaml',
  'scenarios/crash/fault-53-after-checkpoint.yaml',
  'scenarios/differential/pressure-cycles-deepseek.yaml',
  'scenarios/differential/pressure-cycles-openai.yaml',
  'scenarios/faults/fault-03-overflow-newest-unit-only.yaml',
  'scenarios/faults/fault-16-transient-retry.yaml',
  'scenarios/faults/fault-32-summary-rerouted.yaml',
  'scenarios/policy/pressure-prune-relieves.yaml',
  'scenarios/smoke/basic-pressure.yaml',
  'scenarios/smoke/no-pressure.yaml',
  'scenarios/smoke/overflow-recovery.yaml',
]
const DEVIATING = 'scenarios/cache/openai-none-cached.yaml'

let dir = ''
let report: RunReport

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'sim-cache-'))
  report = await runScenarios(FILES.map((f) => join(ROOT, f)), { outDir: dir, cwd: ROOT })
  // 14 scenarios (one crash child): a few seconds on a quiet 2-core machine; the bound fits a 10× slower one.
}, 300_000)

afterAll(async () => {
  await rm(dir, { recursive: true, force: true })
})

describe('mock usage by contract equals the model prediction (issue #9)', () => {
  it('runs every scenario of the subset and gives each a cache section', () => {
    expect(report.scenarios.map((s) => [s.file, s.status, s.cache === undefined])).toEqual(FILES.map((f) => [f, 'passed', false]))
  })

  it.each(FILES.filter((f) => f !== DEVIATING))('%s: reported usage equals the prediction on every contract-reported request', (file) => {
    const cache = report.scenarios.find((s) => s.file === file)?.cache
    const compared = cache?.requests.filter((r) => r.reported !== undefined && r.scripted !== true) ?? []
    expect(compared.filter((r) => r.reported?.cached !== r.cached || (r.reported.uncached + r.reported.written) !== r.uncached + r.written))
      .toEqual([])
    expect(cache?.mismatches).toBe(0)
  })

  it('the comparison is not vacuous: all but the scenarios whose every request is rejected have compared rows', () => {
    const without = report.scenarios
      .filter((s) => s.file !== DEVIATING)
      .filter((s) => !(s.cache?.requests ?? []).some((r) => r.reported !== undefined && r.scripted !== true))
      .map((s) => s.file)
    expect(without).toEqual(['scenarios/faults/fault-03-overflow-newest-unit-only.yaml'])
  })

  it('the contracts differ where they should: anthropic writes, openai and deepseek never do', () => {
    const by = (file: string): NonNullable<RunReport['scenarios'][number]['cache']> | undefined =>
      report.scenarios.find((s) => s.file === file)?.cache
    expect(by('scenarios/cache/anthropic-breakpoints.yaml')?.requests.some((r) => r.written > 0)).toBe(true)
    expect(by('scenarios/cache/openai-compaction.yaml')?.requests.every((r) => r.written === 0 && r.cached % 128 === 0)).toBe(true)
    expect(by('scenarios/cache/deepseek-prune.yaml')?.requests.every((r) => r.written === 0 && r.cached % 64 === 0)).toBe(true)
    expect(by('scenarios/cache/deepseek-prune.yaml')?.requests.some((r) => r.causeKind === 'prune')).toBe(true)
    expect(by('scenarios/cache/openai-compaction.yaml')?.requests.some((r) => r.cause === 'replacement@1')).toBe(true)
  })

  it('the deviating provider shows the gap: every predicted hit is a mismatch reported as 0 cached', () => {
    const cache = report.scenarios.find((s) => s.file === DEVIATING)?.cache
    const hits = cache?.requests.filter((r) => r.cached > 0 && r.reported !== undefined) ?? []
    expect(hits.length).toBeGreaterThan(0)
    expect(hits.every((r) => r.mismatch === true && r.reported?.cached === 0)).toBe(true)
    expect(cache?.mismatches).toBe(hits.length)
    expect(report.cache?.mismatchedScenarios).toEqual([DEVIATING])
    const md = renderMarkdown(report)
    expect(md).toContain('## Prompt cache')
    expect(md).toContain(`| openai-none-cached | openai (none-cached) | `)
    expect(md.split('\n').filter((line) => line.endsWith('| MISMATCH |'))).toHaveLength(hits.length)
  })

  it('the report with its cache sections validates against run-report.schema.json and names the price table date', () => {
    expect(validateRunReport(report)).toEqual([])
    expect(report.cache?.price.tableDate).toMatch(/^\d{4}-\d{2}-\d{2}$/)
  })
})
