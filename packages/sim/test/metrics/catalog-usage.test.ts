/**
 * Issue #9 "done when": for catalog scenarios whose provider reports usage by contract (not scripted usage),
 * the mock provider's reported usage equals the contract model's prediction — every `cache` row that carries
 * reported usage and is not scripted agrees on cached and uncached tokens — and a deviating provider
 * (`scenarios/cache/openai-none-cached.yaml`) shows the gap in report.json and report.md. It runs every
 * scenario of the catalog (about 11 s on 2 cores), so the claim holds for the catalog, not for a sample.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { renderMarkdown } from '../../src/report/markdown.ts'
import type { RunReport } from '../../src/report/types.ts'
import { validateRunReport } from '../../src/report/validate.ts'
import { expandGlob } from '../../src/run/globs.ts'
import { runScenarios } from '../../src/run/run-scenario.ts'

const ROOT = fileURLToPath(new URL('../../../../', import.meta.url))
// The whole catalog (every YAML file under scenarios/, ~11 s): not a subset, so a scenario added later is covered too.
const FILES = expandGlob('scenarios/**/*.yaml', ROOT)
const DEVIATING = 'scenarios/cache/openai-none-cached.yaml'

let dir = ''
let report: RunReport

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'sim-cache-'))
  report = await runScenarios(FILES, { outDir: dir, cwd: ROOT })
}, 180_000)

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
