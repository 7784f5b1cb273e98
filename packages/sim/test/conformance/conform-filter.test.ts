/** `sim conform --filter` that selects no pack scenario is an input error (exit 2), never a pass with nothing judged. */
import { access } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runSim, tempDir } from '../cli/run-sim.ts'

let tmp: { dir: string; cleanup: () => Promise<void> }
beforeAll(async () => { tmp = await tempDir() })
afterAll(async () => { await tmp.cleanup() })

describe('sim conform --filter', () => {
  it('matching no pack scenario exits 2 naming the filter, the pack and the level, and writes no report', async () => {
    const outDir = join(tmp.dir, 'none')
    const run = await runSim(['conform', '--subject', 'reference', '--filter', 'no-such-scenario', '--out-dir', outDir], { env: { CI: 'true' } })
    expect(run.exitCode).toBe(2)
    expect(run.stderr).toMatch(/^error: --filter "no-such-scenario" matches no scenario of pack compaction-sim-conformance v\d+ at level must for subject reference: nothing was judged$/m)
    await expect(access(join(outDir, 'report.json'))).rejects.toThrow()
  })

  it('a filter that matches runs just those scenarios', async () => {
    const outDir = join(tmp.dir, 'smoke')
    const run = await runSim(['conform', '--subject', 'reference', '--filter', 'smoke/no-pressure', '--out-dir', outDir], { env: { CI: 'true' } })
    expect(run.exitCode, run.stderr).toBe(0)
    expect(`${run.stdout}${run.stderr}`).toMatch(/reference conforms at level must \(pack v\d+\): 1 passed, 0 failed/)
  })
}, 120_000)
