/**
 * Issue #21 "Broken examples": every subject of `examples/broken/` (one realistic adapter bug each) fails
 * `sim conform --level must` with the id its header names, and the unmodified example
 * (`examples/subject-core-adapter/subject.ts`) passes `must`, `should` and `may`.
 *
 * The id and the pack scenario that shows it are read from each file's `@fails <id> <pack path part>` header
 * line, so the test and the header cannot drift. A header naming a catalog file (`scenarios/….yaml`) instead of a
 * pack entry is run with `sim run` on that file (a bug the pack has no entry for yet: §13.6, issue #16). The kit runs in-process (`runConformance`, the API behind
 * `sim conform`; crash scenarios still run the subject module in a child): one filtered `must` run per broken
 * subject, and one `may` run of the example judged at all three levels (judging is pure, `judgeReport`).
 */
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { entriesAt, judgeReport, loadPack, type ConformanceLevel } from '../../src/conformance/pack.ts'
import { runConformance } from '../../src/conformance/run.ts'
import { runScenarios } from '../../src/run/run-scenario.ts'
import type { RunReport } from '../../src/report/types.ts'
import { loadModuleSubject } from '../../src/subjects/module.ts'
import { REPO_ROOT, tempDir } from '../cli/run-sim.ts'

const BROKEN_DIR = join(REPO_ROOT, 'examples/broken')
const EXAMPLE = join(REPO_ROOT, 'examples/subject-core-adapter/subject.ts')

/** One broken example as its header declares it. */
interface BrokenExample {
  readonly file: string
  readonly name: string
  /** The id `sim conform --level must` fails it with. */
  readonly id: string
  /** The `--filter` text selecting the pack scenario that shows the bug. */
  readonly scenario: string
}

/** Parses the `@fails <id> <scenario>` line of a broken example's header (exactly one). */
function parseHeader(file: string, text: string): BrokenExample {
  const header = /^\/\*\*[\s\S]*?\*\//.exec(text)?.[0]
  if (header === undefined) throw new Error(`${file}: no header comment`)
  const lines = [...header.matchAll(/^ \* @fails (\S+) (\S+)$/gm)]
  if (lines.length !== 1) throw new Error(`${file}: expected one "@fails <id> <pack scenario>" header line, found ${lines.length}`)
  const [, id = '', scenario = ''] = lines[0] ?? []
  if (!/^(INV-\d{2}|WORLD-\d{2})$/.test(id)) throw new Error(`${file}: @fails names ${id}, not an INV- or WORLD- id`)
  return { file, name: file.replace(/\.ts$/, ''), id, scenario }
}

const EXAMPLES = readdirSync(BROKEN_DIR).filter((f) => f.endsWith('.ts')).sort()
  .map((f) => parseHeader(f, readFileSync(join(BROKEN_DIR, f), 'utf8')))

let tmp: { dir: string; cleanup: () => Promise<void> }
beforeAll(async () => { tmp = await tempDir() })
afterAll(async () => { await tmp.cleanup() })

/** Ids the violations of a report name, per scenario. */
const violated = (report: RunReport): string[][] => report.scenarios.map((s) => [...new Set(s.violations.map((v) => v.id))].sort())

describe('examples/broken', () => {
  it('holds at least 12 examples whose headers cover every class of issue #21', () => {
    expect(EXAMPLES.length).toBeGreaterThanOrEqual(12)
    const ids = new Set(EXAMPLES.map((e) => e.id))
    for (const id of ['WORLD-01', 'WORLD-02', 'WORLD-03', 'WORLD-04', 'WORLD-05', 'WORLD-06', 'INV-09', 'INV-14', 'INV-44']) {
      expect(ids.has(id), `no broken example fails with ${id}`).toBe(true)
    }
    expect(() => parseHeader('x.ts', '/**\n * a bug\n */\n')).toThrow('x.ts: expected one "@fails <id> <pack scenario>" header line, found 0')
    expect(() => parseHeader('x.ts', '/**\n * @fails SOMETHING smoke/basic\n */\n')).toThrow('not an INV- or WORLD- id')
  })

  for (const example of EXAMPLES.filter((e) => e.scenario.startsWith('scenarios/'))) {
    it(`${example.name} fails sim run ${example.scenario} with ${example.id}`, async () => {
      const subject = await loadModuleSubject(`module:${join(BROKEN_DIR, example.file)}`)
      const report = await runScenarios([join(REPO_ROOT, example.scenario)], { subject, outDir: join(tmp.dir, example.name), cwd: REPO_ROOT })
      expect(report.scenarios.map((s) => s.error ?? s.status)).toEqual(['failed'])
      expect(violated(report).flat(), JSON.stringify(report.scenarios.map((s) => s.violations.slice(0, 3)))).toContain(example.id)
    }, 300_000)
  }

  for (const example of EXAMPLES.filter((e) => !e.scenario.startsWith('scenarios/'))) {
    it(`${example.name} fails sim conform --level must with ${example.id} (${example.scenario})`, async () => {
      const subject = await loadModuleSubject(`module:${join(BROKEN_DIR, example.file)}`)
      const { report } = await runConformance({
        subject, level: 'must', filter: example.scenario, outDir: join(tmp.dir, example.name), cwd: REPO_ROOT,
      })
      expect(report.scenarios.length, `${example.scenario} selects no pack entry at must`).toBeGreaterThan(0)
      expect(report.scenarios.map((s) => s.error ?? s.status)).not.toContain('error')
      expect(report.summary.failed).toBeGreaterThan(0)
      expect(violated(report).flat(), JSON.stringify(report.scenarios.map((s) => s.violations.slice(0, 3)))).toContain(example.id)
    }, 300_000) // a liveness bound for a loaded 2-core machine (crash children), not a speed check
  }
})

describe('the unmodified example', () => {
  it('passes must, should and may (one run of every entry, judged at each level)', async () => {
    const subject = await loadModuleSubject(`module:${EXAMPLE}`)
    const { report } = await runConformance({ subject, level: 'may', outDir: join(tmp.dir, 'example'), cwd: REPO_ROOT })
    const pack = loadPack()
    const verdicts: Record<string, string[]> = {}
    for (const level of ['must', 'should', 'may'] as ConformanceLevel[]) {
      const files = new Set(entriesAt(pack, level, subject.features).map((e) => e.file.replaceAll('\\', '/').split('/conformance/').at(-1)))
      const scenarios = report.scenarios.filter((s) => files.has(s.file.split('/conformance/').at(-1)))
      expect(scenarios.length).toBe(files.size)
      const judged = judgeReport({ ...report, scenarios }, level)
      verdicts[level] = judged.scenarios.filter((s) => s.status === 'failed' || s.status === 'error')
        .map((s) => `${s.name}: ${s.error ?? s.expectations.filter((e) => !e.passed).map((e) => `${e.name} ${e.actual}`).join('; ')}`)
    }
    expect(verdicts).toEqual({ must: [], should: [], may: [] })
    const skipped = report.scenarios.filter((s) => s.status === 'skipped').map((s) => s.name).sort()
    expect(skipped).toEqual(['compact-region-explicit', 'fault-31-no-summary-target'])
  }, 600_000) // the whole pack with its crash children: a liveness bound, not a speed check
})
