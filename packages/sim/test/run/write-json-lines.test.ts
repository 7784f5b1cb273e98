/** `writeJsonLines`: the capture is written in batches, so a long session's capture never becomes one string. */
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { writeJsonLines } from '../../src/run/run-scenario.ts'
import { tempDir } from '../cli/run-sim.ts'

let tmp: { dir: string; cleanup: () => Promise<void> }
beforeAll(async () => { tmp = await tempDir() })
afterAll(async () => { await tmp.cleanup() })

describe('writeJsonLines', () => {
  it('writes one line per item, in order, across several 1 MiB batches', async () => {
    const items = Array.from({ length: 300 }, (_, i) => ({ index: i, text: `${i}:`.padEnd(10_000, 'x') }))
    const path = join(tmp.dir, 'capture.jsonl')
    await writeJsonLines(path, items)
    const lines = (await readFile(path, 'utf8')).split('\n')
    expect(lines.pop()).toBe('')
    expect(lines.map((l) => JSON.parse(l) as unknown)).toEqual(items)
  })

  it('writes an empty file for no items', async () => {
    const path = join(tmp.dir, 'empty.jsonl')
    await writeJsonLines(path, [])
    expect(await readFile(path, 'utf8')).toBe('')
  })
})
