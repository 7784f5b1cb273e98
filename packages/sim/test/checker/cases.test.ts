/**
 * Single planted violations in the Appendix B log, one or more per §12 family: each must be reported under
 * its id at the seq where it is detected. (The conformance fixtures of `@compaction-sim/fixtures` carry the
 * full per-id catalog; these cases pin the checker's own conventions.)
 */
import type { RunManifest } from '@compaction-sim/core'
import { describe, expect, it } from 'vitest'
import { checkLog } from '../../src/checker/run.ts'
import { appendixB, found } from './support.ts'

type Events = ReturnType<typeof appendixB>
type Path = ReadonlyArray<string | number>

/** The value at `path` inside a JSON value (undefined when absent). */
function get(root: unknown, path: Path): unknown {
  let v = root
  for (const k of path) v = typeof v === 'object' && v !== null ? (v as Record<string | number, unknown>)[k] : undefined
  return v
}

/** Sets the value at `path` (the parent must exist). */
function set(root: unknown, path: Path, value: unknown): void {
  const parent = get(root, path.slice(0, -1)) as Record<string | number, unknown>
  parent[path[path.length - 1] as string | number] = value
}

/** Runs the checker on Appendix B after `edit`, returning `id@seq` strings. */
async function planted(edit: (events: Events) => Events | void, manifest?: RunManifest): Promise<string[]> {
  const events = appendixB()
  const out = edit(events) ?? events
  return found(await checkLog(out, manifest === undefined ? { dialect: 'seed' } : { dialect: 'seed', manifest }))
}

const cases: Array<[string, string, (events: Events) => Events | void]> = [
  ['INV-01', 'a lost chunk leaves a gap', (e) => e.filter((x) => x.seq !== 20)],
  ['INV-02', 'a payload that is not an object', (e) => set(e, [5, 'data'], 'x')],
  ['INV-03', 'surfaceOp on a request/header', (e) => set(e, [4, 'surfaceOp'], 'append')],
  ['INV-04', 'an assistant message citing part of its attempt', (e) => set(e, [10, 'sourceEventSeqs'], [6, 7, 8])],
  ['INV-05', 'a checkpoint whose provenance misses a shadowed node', (e) => set(e, [55, 'sourceEventSeqs'], [51, 54, 3, 10, 15, 23, 28, 37])],
  ['INV-06', 'a prune replacement that drops meta', (e) => set(e, [12, 'data', 'meta'], { bytes: 12000 })],
  ['INV-07', 'a duplicated user/message line', (e) => { e.splice(4, 0, structuredClone(e[3] as Events[number])) }],
  ['INV-09', 'a step that skips a number', (e) => set(e, [16, 'data', 'step'], 3)],
  ['INV-10', 'an end naming another bracket', (e) => set(e, [56, 'data', 'compactionId'], 'cmp-other')],
  ['INV-11', 'a turn: null bracket inside turn 3', (e) => set(e, [51, 'data', 'turn'], null)],
  ['INV-13', 'the end written before the checkpoint', (e) => {
    const end = e[56] as Events[number]
    const checkpoint = e[55] as Events[number]
    e[55] = { ...end, seq: 55 }
    e[56] = { ...checkpoint, seq: 56 }
  }],
  ['INV-14', 'a checkpoint correlated with another bracket', (e) => set(e, [55, 'data', 'source', 'compactionId'], 'cmp-x')],
  ['INV-16', 'the shadow price before the in-bracket offload (1660, §7.14)', (e) => set(e, [54, 'data', 'shadowedTokenCount'], 1660)],
  ['INV-17', 'a shadow price below the checkpoint\'s', (e) => set(e, [54, 'data', 'shadowedTokenCount'], 100)],
  ['INV-18', 'a checkpoint with the wrong closing tag', (e) => set(e, [55, 'data', 'content', 2, 'text'], '</summary>')],
  ['INV-19', 'a log that ends inside a bracket', (e) => e.slice(0, 56)],
  ['INV-20', 'a prune replacement citing more than its node', (e) => set(e, [15, 'sourceEventSeqs'], [11, 12])],
  ['INV-21', 'a prune shadow price that is not P_fixed', (e) => set(e, [14, 'data', 'shadowedTokenCount'], 3000)],
  ['INV-22', 'a prune without its marker', (e) => {
    const path = [15, 'data', 'message', 'content', 0, 'content', 0, 'text']
    set(e, path, String(get(e, path)).replace('[... middle of tool result omitted ...]', ''))
  }],
  ['INV-36', 'an offload of an image that does not exist', (e) => set(e, [30, 'data', 'targets'], [{ seq: 28, imageIndexes: [5] }])],
  ['INV-37', 'an offload after a SERVER failure', (e) => set(e, [29, 'data', 'chunk', 'reason', 'failure'], { message: 'outage', code: 'SERVER' })],
  ['INV-38', 'an offload of the newest image first', (e) => set(e, [30, 'data', 'targets'], [{ seq: 28, imageIndexes: [1] }])],
  ['INV-40', 'an offload after a summary-error that is not an image rejection', (e) => set(e, [52, 'data', 'failure'], { message: 'x', code: 'SERVER' })],
  ['INV-41', 'a series boundary logged as a change', (e) => set(e, [17, 'data', 'reason'], 'change')],
  ['INV-42', 'the boundary header before the retry is missing', (e) => set(e, [58], { seq: 58, time: get(e, [58, 'time']), type: 'x/note', data: {}, ignorable: true })],
  ['INV-46', 'a bracket owned by another turn', (e) => {
    set(e, [51, 'data', 'turn'], 2)
    set(e, [56, 'data', 'turn'], 2)
  }],
]

/** Where each planted case is detected (the event whose arrival reveals it). */
const AT: Record<string, number> = {
  'INV-01': 20, 'INV-02': 5, 'INV-03': 4, 'INV-04': 10, 'INV-05': 55, 'INV-06': 15, 'INV-07': 4, 'INV-09': 16, 'INV-10': 56, 'INV-11': 51,
  'INV-13': 55, 'INV-14': 55, 'INV-16': 54, 'INV-17': 55, 'INV-18': 55, 'INV-19': 51, 'INV-20': 15, 'INV-21': 14, 'INV-22': 15,
  'INV-36': 30, 'INV-37': 30, 'INV-38': 30, 'INV-40': 53, 'INV-41': 17, 'INV-42': 59, 'INV-46': 51,
}

describe('planted violations in Appendix B', () => {
  for (const [id, what, edit] of cases) {
    it(`${id}: ${what}`, async () => {
      expect(await planted(edit)).toContain(`${id}@${AT[id]}`)
    })
  }

  it('INV-25: with an 8,000-token window the prune and the bracket are below pressure', async () => {
    const manifest: RunManifest = { scenario: 'b', compaction: {}, routes: [{ provider: 'mock', model: 'mock-4k', contextWindow: 8000 }], faults: [] }
    expect((await planted(() => undefined, manifest)).filter((v) => v.startsWith('INV-25'))).toEqual(['INV-25@14', 'INV-25@51'])
  })

  it('INV-13 is exempt for a torn-final summary followed by repair and an end-seed', async () => {
    const found13 = await planted((e) => [...e.slice(0, 55),
      { seq: 55, time: 0, type: 'turn/end', data: { turn: 3, reason: { kind: 'interrupted' } } },
      { seq: 56, time: 0, type: 'session/end-seed', data: {} }] as Events)
    expect(found13.filter((v) => /INV-1[139]/.test(v))).toEqual([])
  })
})
