/**
 * The local bracket checker (support/invariants.ts) must catch what it claims to: it passes the Appendix B
 * log and reports each hand-made violation of INV-10 … INV-19 with its id. The engine tests rely on it.
 */
import { appendixBEvents } from '@compaction-sim/fixtures'
import { describe, expect, it } from 'vitest'
import type { LogEvent } from '../../src/log/events.ts'
import { bracketViolations } from './support/invariants.ts'

type Mutable = { seq: number; type: string; data: Record<string, unknown>; sourceEventSeqs?: number[] }

/** The Appendix B log with `edit` applied to a deep copy of its events (renumbered when events are removed). */
function mutated(edit: (events: Mutable[]) => void): LogEvent[] {
  const events = structuredClone(appendixBEvents()) as unknown as Mutable[]
  edit(events)
  return events as unknown as LogEvent[]
}

const ids = (violations: string[]): string[] => [...new Set(violations.map((v) => v.split(' ')[0] ?? ''))]

describe('bracket invariant checker', () => {
  it('passes the running example', () => {
    expect(bracketViolations(appendixBEvents())).toEqual([])
  })

  it('reports a wrong shadow price (INV-16) and a checkpoint that is not smaller (INV-17)', () => {
    expect(ids(bracketViolations(mutated((e) => { (e[54] as Mutable).data['shadowedTokenCount'] = 1660 })))).toEqual(['INV-16'])
    expect(ids(bracketViolations(mutated((e) => { (e[54] as Mutable).data['shadowedTokenCount'] = 100 })))).toEqual(['INV-16', 'INV-17'])
  })

  it('reports reordered provenance (INV-14) and unframed content (INV-18)', () => {
    expect(ids(bracketViolations(mutated((e) => { (e[55] as Mutable).sourceEventSeqs = [54, 51, 3, 10, 15, 23, 28, 37, 42] })))).toEqual(['INV-14'])
    expect(ids(bracketViolations(mutated((e) => { ((e[55] as Mutable).data['content'] as unknown[]).pop() })))).toEqual(['INV-18'])
  })

  it('reports a missing end at EOF (INV-19), a mismatched id (INV-10) and a success without summary (INV-12)', () => {
    expect(ids(bracketViolations(appendixBEvents().slice(0, 56)))).toEqual(['INV-19'])
    expect(ids(bracketViolations(mutated((e) => { (e[56] as Mutable).data['compactionId'] = 'other' })))).toEqual(['INV-10'])
    const noSummary: LogEvent[] = appendixBEvents().slice(0, 54)
    noSummary.push({ ...appendixBEvents()[56], seq: 54 } as LogEvent)
    expect(ids(bracketViolations(noSummary))).toEqual(['INV-12'])
  })

  it('reports an event between summary and checkpoint (INV-13, INV-15) and a wrong owner (INV-11)', () => {
    const events = mutated((e) => { (e[51] as Mutable).data['turn'] = 2 })
    expect(ids(bracketViolations(events))).toContain('INV-11')
    const split: LogEvent[] = appendixBEvents().slice(0, 55)
    split.push({ seq: 55 as never, time: 1, type: 'x/note', data: {}, ignorable: true })
    for (const e of appendixBEvents().slice(55, 57)) split.push({ ...e, seq: split.length } as LogEvent)
    expect(ids(bracketViolations(split))).toEqual(['INV-13', 'INV-15'])
  })
})
