import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { appendixBEvents, APPENDIX_B_JSONL, fixturePath } from '@compaction-sim/fixtures'
import type { RunManifest } from '@compaction-sim/core'
import { describe, expect, it } from 'vitest'
import { tempDir } from '../cli/run-sim.ts'
import { checkLog } from '../../src/checker/run.ts'
import { appendixBCapture } from './captures.ts'
import { appendixB, found, reportOf } from './support.ts'

const MANIFEST: RunManifest = {
  scenario: 'appendix-b',
  compaction: {},
  pruner: {},
  routes: [{ provider: 'mock', model: 'mock-4k', contextWindow: 4000, imageTokens: 85 }],
  faults: [],
}

describe('the Appendix B running example (the reference log must be clean)', () => {
  it('the fixture file has zero violations, with every invariant evaluated that the log alone allows', async () => {
    const r = reportOf(await checkLog(fixturePath(APPENDIX_B_JSONL), { dialect: 'seed' }))
    expect(r.violations).toEqual([])
    expect(r).toMatchObject({ ok: true, events: 67, policySource: 'defaults', manifestPath: null, tornTail: null, meterTaint: null, internalErrors: [] })
    const notEvaluated = r.coverage.filter((c) => c.status !== 'evaluated').map((c) => `${c.id}:${c.status}`)
    // The world-truth checks need a world record (issue #21): a hand-written log has none.
    const world = ['01', '02', '03', '04', '05', '06'].map((n) => `WORLD-${n}:not-evaluated`)
    expect(notEvaluated).toEqual(['INV-39:partial', 'INV-43:not-evaluated', 'INV-44:not-evaluated', ...world])
  })

  it('the in-memory events have zero violations, with and without the manifest', async () => {
    expect(found(await checkLog(appendixBEvents(), { dialect: 'seed' }))).toEqual([])
    const r = reportOf(await checkLog(appendixBEvents(), { dialect: 'seed', manifest: MANIFEST }))
    expect(r.violations).toEqual([])
    expect(r.policySource).toBe('manifest')
  })

  it('with its request capture every invariant is evaluated and none is violated', async () => {
    const events = appendixBEvents()
    const r = reportOf(await checkLog(events, { dialect: 'seed', manifest: MANIFEST, requests: appendixBCapture(events) }))
    expect(r.violations).toEqual([])
    expect(r.coverage.filter((c) => c.status !== 'evaluated' && !c.id.startsWith('WORLD-'))).toEqual([])
  })

  it('a capture that shows an offloaded image again, or drifts from the log, is reported (INV-39, INV-43, INV-44)', async () => {
    const events = appendixBEvents()
    const capture = appendixBCapture(events)
    const original = appendixBCapture(events)
    // R3 (revision 32) resends #28 with both images: the offload of index 0 at #30 is undone on the wire.
    const r3 = capture.find((c) => c.logRevisionAtDispatch === 32)
    const r2 = original.find((c) => c.logRevisionAtDispatch === 29)
    if (r3 === undefined || r2 === undefined) throw new Error('capture layout changed')
    r3.messages = r2.messages
    // R6 (revision 54) drops the tools; R4 (revision 43) changes the model (and no longer extends the altered R3).
    const r6 = capture.find((c) => c.logRevisionAtDispatch === 54)
    const r4 = capture.find((c) => c.logRevisionAtDispatch === 43)
    if (r6 === undefined || r4 === undefined) throw new Error('capture layout changed')
    delete r6.tools
    r4.model = 'mock-8k'
    expect(found(await checkLog(events, { dialect: 'seed', requests: capture }))).toEqual(['INV-39@32', 'INV-43@32', 'INV-43@43', 'INV-43@43', 'INV-44@54'])
  })

  it('stays clean when its seqs are judged as lines of a mutated copy that changes nothing', async () => {
    const events = appendixB()
    expect(found(await checkLog(events, { dialect: 'seed' }))).toEqual([])
  })

  it('reads DSH packed chunk rows (expanded before every check, §1.1); a malformed row is an input error', async () => {
    const { dir, cleanup } = await tempDir()
    try {
      const lines = (await readFile(fixturePath(APPENDIX_B_JSONL), 'utf8')).trimEnd().split('\n')
      const delta = JSON.parse(lines[19] as string) as { time: number; data: { turn: number; step: number; chunk: { index: number; text: string } } }
      const row = { type: 'text-chunks', seq0: 19, time0: delta.time, data: { turn: delta.data.turn, step: delta.data.step, index: delta.data.chunk.index, dt: [], texts: [delta.data.chunk.text] } }
      const packed = join(dir, 'packed.jsonl')
      await writeFile(packed, `${[...lines.slice(0, 19), JSON.stringify(row), ...lines.slice(20)].join('\n')}\n`)
      expect(found(await checkLog(packed, { dialect: 'seed' }))).toEqual([])
      const broken = join(dir, 'broken.jsonl')
      await writeFile(broken, `${[...lines.slice(0, 19), JSON.stringify({ ...row, data: { ...row.data, dt: [5] } }), ...lines.slice(20)].join('\n')}\n`)
      const r = await checkLog(broken, { dialect: 'seed' })
      expect(r.kind === 'input-error' ? [r.error.line, r.error.code] : r.kind).toEqual([20, 'LOG'])
    } finally {
      await cleanup()
    }
  })
})
