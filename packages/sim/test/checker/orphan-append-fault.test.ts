/**
 * INV-11 with a declared FAULT-60/61 (§13.5): the live orphan of a refused `compaction/end` append stays open
 * while the session's later turns start and end ("every later entry point in this lifecycle reports busy").
 * The checker reads the turn-boundary clause consistently with INV-19's "the fault's expected orphan": a
 * boundary crossing a bracket that never shows another event is accepted; one crossing a bracket that later
 * continues is still reported, at the boundary's seq. Without the fault both are violations.
 */
import type { RunManifest } from '@compaction-sim/core'
import { describe, expect, it } from 'vitest'
import { checkLog } from '../../src/checker/run.ts'
import { appendixB, found } from './support.ts'

type Events = ReturnType<typeof appendixB>

const ROUTES: RunManifest['routes'] = [{ provider: 'mock', model: 'mock-4k', contextWindow: 4000 }]

function manifest(faults: RunManifest['faults']): RunManifest {
  return { scenario: 'orphan', compaction: {}, routes: ROUTES, faults }
}

const FAULT_60: RunManifest['faults'] = [{ id: 'orphan', kind: 'FAULT-60', target: 'append', when: { occurrence: 1 }, params: {} }]
const FAULT_61: RunManifest['faults'] = [{ id: 'orphan', kind: 'FAULT-61', target: 'append', when: { occurrence: 1 }, params: {} }]

/** Appendix B with bracket cmp-7f3a's `compaction/end` (#56) lost: an ignorable note takes its seq. */
function orphaned(): Events {
  const events = appendixB()
  const end = events[56]
  if (end?.type !== 'compaction/end') throw new Error('Appendix B changed: #56 is not compaction/end')
  events[56] = { seq: 56, time: end.time, type: 'x/note', data: {}, ignorable: true }
  return events
}

/** The same, with the end appended after turn 3's `turn/end` (#66): the bracket was no orphan. */
function endedLate(): Events {
  const events = orphaned()
  const last = events.at(-1)
  events.push({ seq: 67, time: last?.time ?? 0, type: 'compaction/end', data: { compactionId: 'cmp-7f3a', turn: 3 } })
  return events
}

async function bracketFindings(events: Events, faults: RunManifest['faults']): Promise<string[]> {
  const all = found(await checkLog(events, { dialect: 'seed', manifest: manifest(faults) }))
  return all.filter((v) => v.startsWith('INV-11') || v.startsWith('INV-19'))
}

describe('INV-11 and a declared FAULT-60/61 orphan', () => {
  it('without the fault, the turn/end crossing the open bracket and the open bracket at EOF are violations', async () => {
    expect(await bracketFindings(orphaned(), [])).toEqual(['INV-19@51', 'INV-11@66'])
  })

  it.each([['FAULT-60', FAULT_60], ['FAULT-61', FAULT_61]] as const)(
    'with %s declared, the orphan crossing turn/end is accepted',
    async (_kind, faults) => {
      expect(await bracketFindings(orphaned(), faults)).toEqual([])
    },
  )

  it('with FAULT-60 declared, a bracket that continues after the boundary is reported at the boundary', async () => {
    const result = await checkLog(endedLate(), { dialect: 'seed', manifest: manifest(FAULT_60) })
    const inv11 = found(result).filter((v) => v.startsWith('INV-11'))
    expect(inv11).toEqual(['INV-11@66', 'INV-11@67'])
    const held = (result.kind === 'report' ? result.violations : []).find((v) => v.id === 'INV-11' && v.seq === 66)
    expect(held?.message).toBe(
      'turn/end while bracket cmp-7f3a (#51) is open, and the bracket continues at a later event (it is no FAULT-60/61 orphan)',
    )
  })
})
