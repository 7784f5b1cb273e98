/**
 * `--out-dir` naming an existing file (issue #17): `sim run`, `sim sweep`, `sim conform` and
 * `sim report merge` exit 2 with a message naming the path — not 3, "a bug in sim" — and so does a path
 * under a file.
 */
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { checkOutDir } from '../../src/cli/out-dir.ts'
import { normalise, REPO_ROOT, runSim, tempDir } from './run-sim.ts'

const NO_PRESSURE = join(REPO_ROOT, 'scenarios/smoke/no-pressure.yaml')
let tmp: { dir: string; cleanup: () => Promise<void> }
let file: string
beforeAll(async () => {
  tmp = await tempDir()
  file = join(tmp.dir, 'a-file')
  await writeFile(file, 'not a folder\n')
})
afterAll(async () => { await tmp.cleanup() })

/** Exit code and the first stderr line starting with `error:`, paths normalised. */
async function refusal(argv: string[]): Promise<[number, string]> {
  const run = await runSim(argv, { env: { CI: 'true' } })
  return [run.exitCode, normalise(run.stderr.split('\n').find((l) => l.startsWith('error:')) ?? run.stderr, { [tmp.dir]: '<tmp>' })]
}

describe('--out-dir naming a file', () => {
  it('sim run: exit 2 naming the path', async () => {
    expect(await refusal(['run', NO_PRESSURE, '--out-dir', file])).toEqual([2, 'error: --out-dir: <tmp>/a-file exists and is not a folder'])
  })

  it('sim sweep: exit 2 naming the path', async () => {
    expect(await refusal(['sweep', NO_PRESSURE, '--threshold', '0.8', '--pruner', 'on', '--workers', '1', '--out-dir', file]))
      .toEqual([2, 'error: --out-dir: <tmp>/a-file exists and is not a folder'])
  })

  it('sim conform: exit 2 naming the path', async () => {
    expect(await refusal(['conform', '--subject', 'reference', '--out-dir', file]))
      .toEqual([2, 'error: --out-dir: <tmp>/a-file exists and is not a folder'])
  })

  it('sim report merge: exit 2 naming the path', async () => {
    const shards = [1, 2].map((i) => join(tmp.dir, `shard-${i}`))
    for (const [i, dir] of shards.entries()) {
      const run = await runSim(['run', NO_PRESSURE, '--shard', `${i + 1}/2`, '--out-dir', dir], { env: { CI: 'true' } })
      expect(run.exitCode).toBe(0)
    }
    expect(await refusal(['report', 'merge', ...shards, '--out-dir', file]))
      .toEqual([2, 'error: --out-dir: <tmp>/a-file exists and is not a folder'])
  })

  it('a path under a file is refused too; a missing folder under a folder is fine', () => {
    expect(() => checkOutDir(join(file, 'sub'), tmp.dir)).toThrow(`--out-dir: ${join(file, 'sub')} is under a file, not a folder`)
    expect(() => checkOutDir(join(tmp.dir, 'new', 'deeper'), tmp.dir)).not.toThrow()
    expect(() => checkOutDir('relative/new', tmp.dir)).not.toThrow()
  })
})
