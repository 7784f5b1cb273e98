/**
 * The crash child's request capture (§1.1, §13.4): `readChildCapture` keeps only updates written while the log
 * was shorter than the crash-point seq + 1 (those provably precede the crash event, so the set is the same on
 * every run), the last one per request, in index order; a missing file is an empty capture; a bad line names
 * `path:line`. `childCaptureWriter` writes what it reads.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { CapturedRequest } from '@compaction-sim/core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { childCaptureWriter, readChildCapture, type CrashJob } from '../../src/world/crash.ts'

let dir: string
beforeAll(async () => { dir = await mkdtemp(join(tmpdir(), 'child-capture-')) })
afterAll(async () => { await rm(dir, { recursive: true, force: true }) })

const request = (index: number, logRevisionAtDispatch: number, outcome: CapturedRequest['outcome']): CapturedRequest => ({
  index, logRevisionAtDispatch, time: 0, purpose: 'conversation', provider: 'openai', model: 'm', messages: [], outcome,
})

function job(capturePath: string): CrashJob {
  const crashPoint = { afterEvent: 'tool/call', occurrence: 1 }
  return { scenarioFile: 'x.yaml', seed: 1, logPath: 'x.jsonl', crashPoint, resume: false, blockMs: 1, capturePath }
}

describe('the crash child capture', () => {
  it('keeps updates written before the crash event was appended, the last per request, in index order', async () => {
    const path = join(dir, 'a.jsonl')
    const write = childCaptureWriter(job(path))
    write?.(request(0, 4, 'aborted'), 4) // dispatch
    write?.(request(0, 4, 'tool-calls'), 9) // finish, before the crash event (seq 10)
    write?.(request(1, 11, 'aborted'), 11) // dispatched after the crash event (seq 10) was appended: may or may not precede the block
    write?.(request(2, 8, 'aborted'), 8) // dispatched before it …
    write?.(request(2, 8, 'stop'), 11) // … finished after it: its outcome never became durable
    const kept = await readChildCapture(path, 11)
    expect(kept.map((r) => [r.index, r.outcome])).toEqual([[0, 'tool-calls'], [2, 'aborted']])
    expect((await readChildCapture(path, null)).map((r) => [r.index, r.outcome])).toEqual([[0, 'tool-calls'], [1, 'aborted'], [2, 'stop']])
  })

  it('reads a missing file as no request, and names path:line for a bad update', async () => {
    expect(await readChildCapture(join(dir, 'missing.jsonl'), 3)).toEqual([])
    const bad = join(dir, 'bad.jsonl')
    await writeFile(bad, `${JSON.stringify({ logLength: 1, request: request(0, 1, 'stop') })}\n{"index":1}\n`)
    await expect(readChildCapture(bad, null)).rejects.toThrow(`${bad}:2: expected a capture update`)
    expect(await readFile(bad, 'utf8')).toContain('"logLength":1')
  })

  it('writes nothing without a capture path', () => {
    const { capturePath: _unused, ...rest } = job('x')
    expect(childCaptureWriter(rest)).toBeUndefined()
  })
})
