/**
 * The conformance pack v3 (`packages/sim/conformance/pack.json`; the v1 files, judged as v3 judges): every entry is a valid scenario frozen
 * from the catalog, `may` entries exercise an optional [seed-only] feature, and judging at `must` counts
 * only the §12 invariants and §13.4 durability.
 */
import { existsSync } from 'node:fs'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { entriesAt, judgeReport, judgeScenario, loadPack, PackError } from '../../src/conformance/pack.ts'
import { loadScenario } from '../../src/scenario/load.ts'
import { resolveScenario } from '../../src/scenario/resolve.ts'
import { requiredFeatures } from '../../src/subjects/features.ts'
import { REPO_ROOT, tempDir } from '../cli/run-sim.ts'
import { failed, passed, reportOf } from '../report/sample-report.ts'

const pack = loadPack()
const OPTIONAL = new Set(['imageOffload', 'summaryError', 'seriesHeaders'])

describe('conformance pack v3', () => {
  it('is version 3 with unique entries whose files load and whose catalog origin exists', async () => {
    expect([pack.name, pack.version]).toEqual(['compaction-sim-conformance', 3])
    expect(new Set(pack.scenarios.map((e) => e.file)).size).toBe(pack.scenarios.length)
    expect(pack.scenarios.length).toBeGreaterThanOrEqual(50)
    for (const entry of pack.scenarios) {
      expect(entry.file.startsWith(join(REPO_ROOT, 'packages/sim/conformance/pack-v1/')), entry.file).toBe(true)
      expect(existsSync(join(REPO_ROOT, entry.from)), entry.from).toBe(true)
      const scenario = resolveScenario(await loadScenario(entry.file), { file: entry.file })
      if (entry.level === 'may') {
        const needs = requiredFeatures(scenario).map((n) => n.feature)
        expect(needs.some((f) => OPTIONAL.has(f)), `${entry.file} needs ${needs.join(', ')}`).toBe(true)
      }
    }
  })

  it('runs the should entries at must and should, and every entry at may', () => {
    const core = pack.scenarios.filter((e) => e.level === 'should').length
    expect(entriesAt(pack, 'must', []).length).toBe(core)
    expect(entriesAt(pack, 'should', []).length).toBe(core)
    expect(entriesAt(pack, 'may').length).toBe(pack.scenarios.length)
    expect(core).toBeLessThan(pack.scenarios.length)
  })

  it('promotes the image-offload entries to should for a subject that declares imageOffload (absent features = all)', () => {
    const offload = pack.scenarios.filter((e) => e.feature === 'imageOffload')
    expect(offload.map((e) => /fault-(\d\d)-/.exec(e.file)?.[1])).toEqual(['12', '13', '14', '15', '29', '30'])
    expect(offload.every((e) => e.level === 'may')).toBe(true)
    const core = pack.scenarios.filter((e) => e.level === 'should')
    for (const level of ['must', 'should'] as const) {
      expect(entriesAt(pack, level, ['imageOffload']).length).toBe(core.length + offload.length)
      expect(entriesAt(pack, level, undefined).length).toBe(core.length + offload.length)
      expect(entriesAt(pack, level, ['summaryError', 'crash']).length).toBe(core.length)
    }
    expect(entriesAt(pack, 'may', []).length).toBe(pack.scenarios.length)
  })
})

describe('judging at a level', () => {
  const behaviourOnly = { ...passed, status: 'failed' as const, expectations: [
    { name: 'invariants', passed: true, expected: 'no violation of any invariant', actual: 'none' },
    { name: 'counts.brackets', passed: false, expected: '1', actual: '0' },
  ] }

  it('must: a scenario failed only by a behaviour expectation passes; invariants and durability still count', () => {
    const judged = judgeScenario(behaviourOnly, 'must')
    expect(judged.status).toBe('passed')
    expect(judged.expectations.map((e) => e.name)).toEqual(['invariants'])
    const violated = judgeScenario(failed, 'must')
    expect(violated.status).toBe('failed')
    expect(violated.expectations).toEqual([
      { name: 'invariants', passed: false, expected: 'no violation of any invariant', actual: '1 violation: INV-12' },
    ])
    const durable = judgeScenario({ ...passed, expectations: [{ name: 'durable', passed: false, expected: 'all', actual: 'missing: seq 3' }] }, 'must')
    expect(durable.status).toBe('failed')
  })

  it('a scenario with violations but a narrowed invariants expectation fails at must with every id', () => {
    const narrowed = { ...failed, expectations: [{ name: 'invariants', passed: true, expected: 'no violation of INV-30', actual: 'none' }] }
    expect(judgeScenario(narrowed, 'must').expectations).toEqual([
      { name: 'invariants', passed: false, expected: 'no violation of any invariant', actual: '1 violation: INV-12' },
    ])
  })

  it('should and may leave reports unchanged; judgeReport recounts the summary', () => {
    expect(judgeScenario(behaviourOnly, 'should')).toBe(behaviourOnly)
    const report = judgeReport(reportOf([behaviourOnly, passed]), 'must')
    expect(report.summary).toEqual({ total: 2, passed: 2, failed: 0, skipped: 0, error: 0 })
  })
})

describe('loadPack errors', () => {
  let tmp: { dir: string; cleanup: () => Promise<void> }
  beforeAll(async () => { tmp = await tempDir() })
  afterAll(async () => { await tmp.cleanup() })

  it('names the manifest and the bad field', async () => {
    const manifest = join(tmp.dir, 'pack.json')
    await writeFile(manifest, JSON.stringify({ name: 'x', version: 1, scenarios: [{ file: 'a.yaml', level: 'sometimes' }] }))
    expect(() => loadPack(manifest)).toThrow(new PackError(`${manifest}: scenarios[0].level: expected "should" or "may"`))
    await writeFile(manifest, '{"name":"x","version":0,"scenarios":[]}')
    expect(() => loadPack(manifest)).toThrow(`${manifest}: version: expected an integer ≥ 1`)
  })
})
