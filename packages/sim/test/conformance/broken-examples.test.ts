/**
 * Issue #21 "Broken examples": every subject under `examples/broken/` is the working example with one realistic
 * bug, and its header names the bug, the pack scenario that shows it and the id `sim conform --level must` must
 * fail it with. This runs each through `sim conform --level must --filter <that scenario>` and asserts that the
 * scenario fails, with that id among its violations. (The unmodified example passing `must` over the whole pack
 * is `example-subject.test.ts`.)
 */
import { readdirSync, readFileSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RunReport } from '../../src/report/types.ts'
import { REPO_ROOT, runSim, tempDir } from '../cli/run-sim.ts'

const DIR = join(REPO_ROOT, 'examples/broken')

/** What a broken example's header promises: the id it fails with and the pack scenario. */
interface BrokenCase { file: string; id: string; scenario: string }

/** Reads `Fails \`sim conform --level must\` with **ID** (\`scenario\`)` from each header. */
function brokenCases(): BrokenCase[] {
  return readdirSync(DIR).filter((f) => f.endsWith('.ts') && f !== 'support.ts').sort().map((file) => {
    const header = readFileSync(join(DIR, file), 'utf8').split('*/')[0] ?? ''
    const m = /Fails `sim conform --level must` with \*\*((?:INV|WORLD)-\d\d)\*\* \(`([^`]+)`\)/.exec(header.replace(/\n \* /g, ' '))
    if (m === null) throw new Error(`${file}: the header does not name the id and scenario it fails with`)
    return { file, id: m[1] ?? '', scenario: m[2] ?? '' }
  })
}

let tmp: { dir: string; cleanup: () => Promise<void> }
beforeAll(async () => { tmp = await tempDir() })
afterAll(async () => { await tmp.cleanup() })

describe('examples/broken: each realistic bug fails sim conform --level must with the id its header names', () => {
  const all = brokenCases()
  it('holds a broken example for every WORLD check', () => {
    expect(all.length).toBeGreaterThanOrEqual(7)
    expect(new Set(all.map((p) => p.id))).toEqual(new Set(['WORLD-01', 'WORLD-02', 'WORLD-03', 'WORLD-04', 'WORLD-05', 'WORLD-06']))
  })
  for (const p of all) {
    it(`${p.file}: ${p.id} on ${p.scenario}`, async () => {
      const outDir = join(tmp.dir, p.file)
      const run = await runSim([
        'conform', '--subject', `module:${join(DIR, p.file)}`, '--level', 'must', '--filter', `/${p.scenario}`,
        '--reporter', 'json', '--out-dir', outDir,
      ])
      expect(run.exitCode, run.stderr).toBe(1)
      const report = JSON.parse(await readFile(join(outDir, 'report.json'), 'utf8')) as RunReport
      expect(report.scenarios.map((s) => s.status)).toEqual(['failed'])
      expect(report.scenarios[0]?.violations.map((v) => v.id)).toContain(p.id)
    }, 300_000)
  }
})
