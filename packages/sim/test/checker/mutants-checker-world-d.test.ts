/**
 * Mutation-testing pins for WORLD-05 and WORLD-06 (`src/checker/world.ts`), judged on one real `sim run` of
 * `scenarios/smoke/basic-pressure.yaml` (70 events, seq 0…69; six captured requests c0…c5 dispatched at log
 * revisions 6, 20, 33, 44, 56 (the summary call, inside the bracket at 55…58, between turns) and 62), with one
 * hand-made lie planted into the log, the capture or the world record. This file pins:
 * - WORLD-05: usage logged when the world reported none, no usage logged when the world reported some, other
 *   figures — each with its exact message — and that the same wire figures split differently are no violation;
 * - WORLD-06: the step/bracket state at a dispatch is the state after event `L - 1` (revision 0: outside
 *   everything); step/start opens a step, step/end, turn/end and session/end-seed close it; compaction/start
 *   opens a bracket, compaction/end and session/end-seed close it; a summary call outside a bracket and a
 *   conversation call outside both a step and a bracket are reported at `min(L, lastSeq)`; a dispatch beyond
 *   the log's end is reported at the last seq with its own message.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { CapturedRequest } from '@compaction-sim/core'
import { checkLog } from '../../src/checker/run.ts'
import type { WorldRecord } from '../../src/provider/world-record.ts'
import { tempDir } from '../cli/run-sim.ts'
import { runOf, type RawEvent, type Run } from './world-runs.ts'

let cleanup: () => Promise<void>
let base: Run

beforeAll(async () => {
  let dir: string
  ;({ dir, cleanup } = await tempDir())
  base = await runOf('scenarios/smoke/basic-pressure.yaml', dir)
}, 120_000)
afterAll(async () => {
  await cleanup()
})

const fresh = (): Run => structuredClone(base)

/** `id@seq: message` for the given check id, with `internalErrors` asserted empty. */
async function judged(run: Run, id: 'WORLD-05' | 'WORLD-06'): Promise<string[]> {
  const result = await checkLog(run.events, { dialect: 'seed', manifest: run.manifest, requests: run.requests, world: run.world })
  if (result.kind !== 'report') throw result.error
  expect(result.internalErrors).toEqual([])
  return result.violations.filter((v) => v.id === id).map((v) => `${v.id}@${v.seq}: ${v.message}`)
}

const at = (run: Run, seq: number): RawEvent => {
  const e = run.events[seq]
  if (e === undefined) throw new Error(`no event ${seq}`)
  return e
}
const world = (run: Run, index: number): WorldRecord['requests'][number] => {
  const w = run.world.requests.find((x) => x.index === index)
  if (w === undefined) throw new Error(`no world request ${index}`)
  return w
}
const capture = (run: Run, index: number): CapturedRequest => {
  const c = run.requests.find((x) => x.index === index)
  if (c === undefined) throw new Error(`no capture request ${index}`)
  return c
}
/** The capture request `index`, re-dispatched at log revision `L`. */
function dispatchedAt(index: number, L: number): Run {
  const run = fresh()
  capture(run, index).logRevisionAtDispatch = L
  return run
}

describe('the pinned run', () => {
  it('has the shape this file relies on, and passes WORLD-05 and WORLD-06 as written', async () => {
    const run = fresh()
    expect(run.events.length).toBe(70)
    expect(run.requests.map((c) => `${c.index}:${c.purpose}@${c.logRevisionAtDispatch}`)).toEqual([
      '0:conversation@6', '1:conversation@20', '2:conversation@33', '3:conversation@44', '4:compaction@56', '5:conversation@62',
    ])
    expect([15, 18, 19, 28, 29, 55, 56, 58, 59, 69].map((s) => at(run, s).type)).toEqual([
      'assistant/message', 'step/end', 'step/start', 'step/end', 'turn/end', 'compaction/start', 'compaction/summary', 'compaction/end', 'step/start', 'turn/end',
    ])
    expect(await judged(run, 'WORLD-05')).toEqual([])
    expect(await judged(run, 'WORLD-06')).toEqual([])
  })
})

describe('WORLD-05: the logged usage is the world\'s', () => {
  it('usage logged for an attempt the world reported no usage for is a violation naming the delivery', async () => {
    const run = fresh()
    const w = world(run, 0)
    w.usage = null
    w.usageDelivery = 'omitted'
    at(run, 15).data['usage'] = { inputTokens: 100, cacheReadTokens: 20, outputTokens: 7 }
    expect(await judged(run, 'WORLD-05')).toEqual([
      'WORLD-05@15: assistant/message logs usage (input 120 (cache read 20), output 7), but the world reported none for world request #0 (omitted)',
    ])
  })

  it('no usage logged where the world reported none is no violation', async () => {
    const run = fresh()
    const w = world(run, 0)
    w.usage = null
    w.usageDelivery = 'omitted'
    delete at(run, 15).data['usage']
    expect(await judged(run, 'WORLD-05')).toEqual([])
  })

  it('no usage logged where the world reported some is a violation quoting the world\'s figures', async () => {
    const run = fresh()
    world(run, 0).usage = { inputTokens: 100, cacheReadTokens: 20, outputTokens: 7 }
    delete at(run, 15).data['usage']
    expect(await judged(run, 'WORLD-05')).toEqual([
      'WORLD-05@15: assistant/message logs no usage, but the world reported input 120 (cache read 20), output 7 for world request #0',
    ])
  })

  it('other figures are a violation quoting both, for a conversation and for a summary attempt', async () => {
    const run = fresh()
    world(run, 0).usage = { inputTokens: 100, cacheReadTokens: 20, outputTokens: 7 }
    at(run, 15).data['usage'] = { inputTokens: 100, cacheReadTokens: 20, outputTokens: 8 }
    world(run, 4).usage = { inputTokens: 400, cacheReadTokens: 300, outputTokens: 60 }
    at(run, 56).data['usage'] = { inputTokens: 401, cacheReadTokens: 300, outputTokens: 60 }
    expect(await judged(run, 'WORLD-05')).toEqual([
      'WORLD-05@15: assistant/message logs usage input 120 (cache read 20), output 8; the world reported input 120 (cache read 20), output 7 for world request #0',
      'WORLD-05@56: compaction/summary logs usage input 701 (cache read 300), output 60; the world reported input 700 (cache read 300), output 60 for world request #4',
    ])
  })

  it('the same wire figures (total input, cache reads, output) split differently are no violation', async () => {
    const run = fresh()
    world(run, 0).usage = { inputTokens: 100, cacheReadTokens: 20, outputTokens: 7 }
    at(run, 15).data['usage'] = { inputTokens: 90, cacheReadTokens: 20, cacheWriteTokens: 10, outputTokens: 7 }
    expect(await judged(run, 'WORLD-05')).toEqual([])
  })
})

describe('WORLD-06: every served request belongs to a logged attempt', () => {
  const outsideStep = (seq: number, w: number): string => `WORLD-06@${seq}: world request #${w} is a conversation call dispatched outside any step`
  const outsideBracket = (seq: number, w: number): string => `WORLD-06@${seq}: world request #${w} is a summary call dispatched outside any compaction bracket`

  it('a conversation call at revision 0 or 1 (before the first step/start) is outside any step', async () => {
    expect(await judged(dispatchedAt(0, 0), 'WORLD-06')).toEqual([outsideStep(0, 0)])
    expect(await judged(dispatchedAt(0, 1), 'WORLD-06')).toEqual([outsideStep(1, 0)])
  })

  it('a summary call at revision 0 or 1 is outside any bracket, and only that is reported', async () => {
    expect(await judged(dispatchedAt(4, 0), 'WORLD-06')).toEqual([outsideBracket(0, 4)])
    expect(await judged(dispatchedAt(4, 1), 'WORLD-06')).toEqual([outsideBracket(1, 4)])
  })

  it('the state at revision L is the one after event L - 1: inside the step before its step/end, outside after it', async () => {
    expect(await judged(dispatchedAt(1, 17), 'WORLD-06')).toEqual([])
    expect(await judged(dispatchedAt(1, 18), 'WORLD-06')).toEqual([])
    expect(await judged(dispatchedAt(1, 19), 'WORLD-06')).toEqual([outsideStep(19, 1)])
  })

  it('turn/end closes a step that step/end did not', async () => {
    const run = dispatchedAt(2, 30)
    at(run, 28).type = 'assistant/chunk'
    expect(await judged(run, 'WORLD-06')).toEqual([outsideStep(30, 2)])
  })

  it('a conversation call inside a bracket but outside a step is no violation; after compaction/end it is', async () => {
    expect(await judged(dispatchedAt(5, 57), 'WORLD-06')).toEqual([])
    expect(await judged(dispatchedAt(5, 59), 'WORLD-06')).toEqual([outsideStep(59, 5)])
  })

  it('session/end-seed closes the open step and the open bracket', async () => {
    const step = dispatchedAt(1, 18)
    at(step, 17).type = 'session/end-seed'
    expect(await judged(step, 'WORLD-06')).toEqual([outsideStep(18, 1)])
    const bracket = dispatchedAt(4, 57)
    at(bracket, 56).type = 'session/end-seed'
    expect(await judged(bracket, 'WORLD-06')).toEqual([outsideBracket(57, 4)])
  })

  it('a dispatch at revision = the log\'s length is judged by the last event\'s state, reported at the last seq', async () => {
    expect(await judged(dispatchedAt(5, 70), 'WORLD-06')).toEqual([outsideStep(69, 5)])
  })

  it('a dispatch beyond the log\'s end is reported at the last seq with its own message', async () => {
    expect(await judged(dispatchedAt(5, 75), 'WORLD-06')).toEqual([
      'WORLD-06@69: capture request #5 (world request #5) was dispatched at log revision 75, beyond the log\'s 70 events',
    ])
  })
})
