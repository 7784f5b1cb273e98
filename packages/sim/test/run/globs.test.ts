/** `expandGlob`: `**` spans any number of folders (none included), results are sorted POSIX paths. */
import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { expandGlob, isGlob } from '../../src/run/globs.ts'
import { tempDir } from '../cli/run-sim.ts'

let tmp: { dir: string; cleanup: () => Promise<void> }

beforeAll(async () => {
  tmp = await tempDir()
  for (const path of ['s/a.yaml', 's/b.yml', 's/x/c.yaml', 's/x/y/d.yaml', 's/.hidden/e.yaml', 's/x/notes.md']) {
    await mkdir(join(tmp.dir, path, '..'), { recursive: true })
    await writeFile(join(tmp.dir, path), '')
  }
})
afterAll(async () => { await tmp.cleanup() })

describe('expandGlob', () => {
  it('matches ** across folders (and none), skips dot folders, sorts', () => {
    expect(expandGlob('s/**/*.yaml', tmp.dir)).toEqual(['s/a.yaml', 's/x/c.yaml', 's/x/y/d.yaml'])
    expect(expandGlob('s/*.y*ml', tmp.dir)).toEqual(['s/a.yaml', 's/b.yml'])
    expect(expandGlob('s/?.yaml', tmp.dir)).toEqual(['s/a.yaml'])
    expect(expandGlob('s/x/*', tmp.dir)).toEqual(['s/x/c.yaml', 's/x/notes.md'])
    expect(expandGlob(`${tmp.dir}/s/x/**/d.yaml`, '/')).toEqual([`${tmp.dir}/s/x/y/d.yaml`])
    expect(expandGlob('s/**/*.json', tmp.dir)).toEqual([])
  })

  it('tells globs from plain paths', () => {
    expect([isGlob('a/**/b'), isGlob('a/b.yaml'), isGlob('a/[ab].yaml')]).toEqual([true, false, true])
  })
})
