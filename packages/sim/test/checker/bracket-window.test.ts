/**
 * INV-46's "every event of the bracket lies in the window" clause (§12.0 windows, §3.9, §3.10): a pressure or
 * overflow bracket is judged at its start AND at each later event (summary-error, summary, checkpoint, end);
 * the first event outside the window the start opened in is reported, once per bracket. Explicit-region and
 * manual brackets are judged by their owner only. Appendix B's pressure bracket is #51 … #56 in the pre-step
 * window opened by `step/end` #50; `step/start` #57, the series header #58 and the first chunk #59 follow it.
 */
import type { LogEvent } from '@compaction-sim/core'
import { appendixBEvents, moveEvent, validConformanceLogs } from '@compaction-sim/fixtures'
import { describe, expect, it } from 'vitest'
import { checkLog, type CheckOptions } from '../../src/checker/run.ts'
import { reportOf } from './support.ts'

type Log = ReturnType<typeof validConformanceLogs>[number]

function valid(name: string): Log {
  const log = validConformanceLogs().find((l) => l.name === name)
  if (log === undefined) throw new Error(`the ${name} conformance log is missing`)
  return log
}

/** Appendix B after checking the bracket and the step that follows it sit where these tests expect them. */
function appendixB(): LogEvent[] {
  const events = appendixBEvents() as LogEvent[]
  expect(events.slice(50, 60).map((e) => e.type)).toEqual([
    'step/end', 'compaction/start', 'compaction/summary-error', 'image/offload', 'compaction/summary', 'user/message', 'compaction/end',
    'step/start', 'request/header', 'assistant/chunk',
  ])
  return events
}

/** `seq: message` of every INV-46 violation of `events`. */
async function inv46(events: readonly LogEvent[], options: CheckOptions = { dialect: 'seed' }): Promise<string[]> {
  const r = reportOf(await checkLog([...events], options))
  return r.violations.filter((v) => v.id === 'INV-46').map((v) => `${v.seq}: ${v.message}`)
}

describe('INV-46: every event of a pressure or overflow bracket lies in its window', () => {
  it('INV-46: Appendix B\'s pressure bracket, wholly in the pre-step window of step 3.2, is clean', async () => {
    expect(await inv46(appendixB())).toEqual([])
  })

  it('INV-46: a pressure bracket whose summary-error follows the next step/start and first chunk is reported there, once', async () => {
    // New order: start #51, step/start #52, chunk #53, summary-error #54, offload #55, summary #56, checkpoint #57, end #58.
    const events = moveEvent(moveEvent(appendixB(), 57, 52), 59, 53)
    expect(await inv46(events)).toEqual([
      '54: compaction/summary-error of the pressure bracket cmp-7f3a (#51) lies outside any pre-step or overflow window, not in the ' +
      'pre-step window opened at #50 where the bracket started: every event of the bracket lies in its window',
    ])
  })

  it('INV-46: a pressure bracket whose only late event is its compaction/end is reported at the end', async () => {
    // step/start #57 moved before the end: checkpoint #55, step/start #56, end #57.
    const found = await inv46(moveEvent(appendixB(), 57, 56))
    expect(found).toHaveLength(1)
    expect(found[0]).toMatch(/^57: compaction\/end of the pressure bracket cmp-7f3a \(#51\) lies outside any pre-step or overflow window/)
  })

  it('INV-46: a pressure bracket that ends in the next step\'s pre-step window names that window', async () => {
    // The end moved after step 3.2's step/end (#65): the step ran inside the bracket and a new pre-step window opened at #64.
    const events = moveEvent(appendixB(), 56, 65)
    expect(events[64]?.type).toBe('step/end')
    const found = await inv46(events)
    expect(found).toHaveLength(1)
    expect(found[0]).toMatch(
      /^65: compaction\/end of the pressure bracket cmp-7f3a \(#51\) lies in the pre-step window opened at #64, not in the pre-step window opened at #50/,
    )
  })

  it('INV-46: an overflow bracket whose summary follows the same-step retry is reported at the summary', async () => {
    const base = valid('overflow-recovery')
    const start = base.events.findIndex((e) => e.type === 'compaction/start')
    const retry = base.events.findIndex((e, i) => i > start && e.type === 'assistant/chunk')
    expect(base.events[start + 1]?.type).toBe('compaction/summary')
    const events = moveEvent(base.events, retry, start + 1)
    const found = await inv46(events, { dialect: 'seed', manifest: base.manifest ?? null })
    expect(found).toHaveLength(1)
    const expected = `^${start + 2}: compaction/summary of the overflow bracket cmp-overflow-1 \\(#${start}\\) lies outside any`
    expect(found[0]).toMatch(new RegExp(expected))
  })

  it('INV-46: the valid overflow-recovery log, whose bracket stays in its overflow window, is clean', async () => {
    const base = valid('overflow-recovery')
    expect(await inv46(base.events, { dialect: 'seed', manifest: base.manifest ?? null })).toEqual([])
  })

  it('INV-46: an explicit-region bracket inside step 2.1 is judged by its owner only', async () => {
    const base = valid('explicit-region')
    expect(await inv46(base.events, { dialect: 'seed', manifest: base.manifest ?? null })).toEqual([])
  })
})
