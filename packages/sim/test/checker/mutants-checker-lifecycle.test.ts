/**
 * The §12.8 lifecycle checks (`src/checker/lifecycle.ts`, INV-46 and INV-47) on small edits of Appendix B (turn 3 =
 * #40 …; step 3.1 ends at #50, opening the pre-step window; the pressure bracket cmp-7f3a is start #51,
 * summary-error #52, offload #53, summary #54, checkpoint #55, end #56; step 3.2 starts at #57). Every expectation
 * is written out by hand from the spec. It pins:
 * - INV-46 "every event of the bracket lies in its window": a checkpoint of the bracket is judged like its other
 *   later events, and a bracket started outside any window is reported at its first later event too;
 * - INV-46 prunes: a prune outside any pre-step or overflow window;
 * - INV-46 placement at the start: manual (turn: null) brackets between turns only, explicit-region brackets in
 *   their owning turn (owned by no turn / another turn / no turn open), automatic brackets in a window of their turn
 *   (outside any window with and without an open turn, a window of another turn);
 * - INV-47: a summary or a checkpoint carrying the id of a bracket that has already ended, naming the bracket's start.
 */
import type { LogEvent, RunManifest } from '@compaction-sim/core'
import { moveEvent } from '@compaction-sim/fixtures'
import { describe, expect, it } from 'vitest'
import { appendixB, checkedReport, editedAppendixB, renumber, violationLines, type AppendixEvent } from './support.ts'

type Events = AppendixEvent[]

const MANIFEST: RunManifest = {
  scenario: 'lifecycle', compaction: {}, pruner: {},
  routes: [{ provider: 'mock', model: 'mock-4k', contextWindow: 4000, imageTokens: 85 }], faults: [],
}

/** The manifest field naming #51 as an explicit-region start (seqs are branded numbers). */
const EXPLICIT_51 = [51] as unknown as NonNullable<RunManifest['explicitRegionStarts']>

/** `id@seq: message` lines of `id` for `events`, after asserting no check threw. */
async function lines(events: Events, id: string, manifest?: RunManifest): Promise<string[]> {
  const r = await checkedReport(events, manifest)
  expect(r.internalErrors).toEqual([])
  return violationLines(r, id)
}

const moved = (from: number, to: number): Events => moveEvent(appendixB() as unknown as LogEvent[], from, to) as unknown as Events

const WINDOW_TAIL = 'not in the pre-step window opened at #50 where the bracket started: every event of the bracket lies in its window'

describe('INV-46: every event of a pressure bracket lies in its window', () => {
  it('INV-46: a checkpoint that is the first event of the bracket after the next step/start is reported at the checkpoint', async () => {
    // step/start #57 moved to #55: checkpoint #56, end #57.
    expect(await lines(moved(57, 55), 'INV-46')).toEqual([
      `INV-46@56: user/message of the pressure bracket cmp-7f3a (#51) lies outside any pre-step or overflow window, ${WINDOW_TAIL}`,
    ])
  })
  it('INV-46: a plain user message in the bracket after the next step/start is no event of the bracket', async () => {
    // step/start #57 moved to #55 and a copy of the plain user message #42 put at #56: checkpoint #57, end #58.
    const events = editedAppendixB((e) => {
      const [step] = e.splice(57, 1)
      e.splice(55, 0, step as Events[number], structuredClone(e[42] as Events[number]))
      renumber(e)
    })
    expect(await lines(events, 'INV-46')).toEqual([
      `INV-46@57: user/message of the pressure bracket cmp-7f3a (#51) lies outside any pre-step or overflow window, ${WINDOW_TAIL}`,
    ])
  })

  it('INV-46: another bracket\'s checkpoint or summary after the next step/start is left to INV-10', async () => {
    for (const copied of [55, 54]) {
      const events = editedAppendixB((e) => {
        const [step] = e.splice(57, 1)
        const other = structuredClone(e[copied] as Events[number])
        if (copied === 55) ((other.data['source'] as Record<string, unknown>)['compactionId']) = 'cmp-other'
        else other.data['compactionId'] = 'cmp-other'
        e.splice(55, 0, step as Events[number], other)
        renumber(e)
      })
      expect(await lines(events, 'INV-46')).toEqual([
        `INV-46@57: user/message of the pressure bracket cmp-7f3a (#51) lies outside any pre-step or overflow window, ${WINDOW_TAIL}`,
      ])
    }
  })
})

describe('INV-46: prunes run in pre-step or overflow windows', () => {
  it('INV-46: a prune inside a step is reported', async () => {
    const events = moved(14, 44)
    expect(events[44]?.type).toBe('compaction/prune')
    expect(await lines(events, 'INV-46')).toEqual(['INV-46@44: a prune outside any pre-step or overflow window'])
  })
})

describe('INV-46: placement of a bracket at its start', () => {
  it('INV-46: a manual (turn: null) bracket while a turn is open is reported', async () => {
    const events = editedAppendixB((e) => { (e[51] as Events[number]).data['turn'] = null })
    expect(await lines(events, 'INV-46')).toEqual(['INV-46@51: a manual (turn: null) bracket while turn 3 is open'])
  })

  it('INV-46: an automatic bracket owned by another turn than its window\'s is reported', async () => {
    const events = editedAppendixB((e) => { (e[51] as Events[number]).data['turn'] = 2 })
    expect(await lines(events, 'INV-46')).toEqual(['INV-46@51: an automatic bracket owned by turn 2 in a pre-step window of turn 3'])
  })

  it('INV-46: an automatic bracket started inside a step, with its turn open, is reported without the no-turn note', async () => {
    // step/start #57 moved to #51: the bracket starts at #52.
    const found = await lines(moved(57, 51), 'INV-46')
    expect(found[0]).toBe('INV-46@52: an automatic bracket owned by turn 3 outside any pre-step or overflow window')
  })

  it('INV-46: an automatic bracket started between turns is reported with the no-turn note', async () => {
    // The bracket #51 … #56 moved before turn/start #40: start #40 … end #45, turn/start #46.
    const events = editedAppendixB((e) => { e.splice(40, 0, ...e.splice(51, 6)); renumber(e) })
    const found = await lines(events, 'INV-46')
    expect(found[0]).toBe('INV-46@40: an automatic bracket owned by turn 3 outside any pre-step or overflow window (no turn is open)')
  })

  it('INV-46: an explicit-region bracket in its owning turn is clean', async () => {
    expect(await lines(appendixB(), 'INV-46', { ...MANIFEST, explicitRegionStarts: EXPLICIT_51 })).toEqual([])
  })

  it('INV-46: an explicit-region bracket owned by no turn is reported', async () => {
    const events = editedAppendixB((e) => { (e[51] as Events[number]).data['turn'] = null })
    expect(await lines(events, 'INV-46', { ...MANIFEST, explicitRegionStarts: EXPLICIT_51 })).toEqual([
      'INV-46@51: an explicit-region bracket owned by no turn while turn 3 is open',
    ])
  })

  it('INV-46: an explicit-region bracket owned by another turn is reported', async () => {
    const events = editedAppendixB((e) => { (e[51] as Events[number]).data['turn'] = 2 })
    expect(await lines(events, 'INV-46', { ...MANIFEST, explicitRegionStarts: EXPLICIT_51 })).toEqual([
      'INV-46@51: an explicit-region bracket owned by turn 2 while turn 3 is open',
    ])
  })
})

describe('INV-47: no event carries the id of an ended bracket', () => {
  it('INV-47: a summary after its bracket\'s end is reported, naming the start', async () => {
    const events = editedAppendixB((e) => { e.splice(57, 0, structuredClone(e[54] as Events[number])); renumber(e) })
    expect(await lines(events, 'INV-47')).toEqual(['INV-47@57: compaction/summary carries compactionId cmp-7f3a, whose bracket (#51) has already ended'])
  })

  it('INV-47: a checkpoint after its bracket\'s end is reported, naming the start', async () => {
    const events = editedAppendixB((e) => { e.splice(57, 0, structuredClone(e[55] as Events[number])); renumber(e) })
    expect(await lines(events, 'INV-47')).toEqual(['INV-47@57: a checkpoint carries compactionId cmp-7f3a, whose bracket (#51) has already ended'])
  })

  it('INV-47: a plain user message after an ended bracket is no late event', async () => {
    const events = editedAppendixB((e) => { e.splice(57, 0, structuredClone(e[42] as Events[number])); renumber(e) })
    expect(await lines(events, 'INV-47')).toEqual([])
  })
})
