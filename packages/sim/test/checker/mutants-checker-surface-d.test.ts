/**
 * Two internals of the checker surface, driven through their own APIs with hand-picked inputs (every slot,
 * flag and count below is worked out by hand from the module docs, never computed with the modules):
 * - `LiveEvents` (`src/checker/live-events.ts`), the seq → event table of the live surface: 64 slots at
 *   first, home slot = the seq's low bits, linear probing, growth to 128 slots at the 33rd entry (more than
 *   half full), backward-shift deletion. It pins `size`, replacement in place, probing past a collision on
 *   get / delete, deleting an absent seq, re-using a freed slot, the backward shift across a member that must
 *   stay, the movability rule of a member whose home lies cyclically in or out of (hole, slot] both without
 *   and with wrap-around at slot 63, the slot-array sizes (64, doubling at the 33rd entry, packed values),
 *   and that growth re-inserts every member (seq 1 included) exactly once.
 * - `RepairLookahead` (`src/checker/lookahead.ts`), the §12.0 repair-run / torn-final lookahead: the
 *   REPAIR_RUN_ITEMS_MAX bound (4,096 closers are still a repair run, 4,097 are released as ordinary
 *   events), an end-seed with nothing before it, the crash-after rule for a trailing run of closers and for
 *   an empty lookahead, and that an unparsed or duplicate `session/end-seed` line ends no repair run.
 */
import type { LogEvent } from '@compaction-sim/core'
import { describe, expect, it } from 'vitest'
import { LiveEvents } from '../../src/checker/live-events.ts'
import { RepairLookahead } from '../../src/checker/lookahead.ts'
import type { FoldItem } from '../../src/checker/types.ts'

/** A distinct stand-in event for `seq` (the table only stores and returns it). */
const ev = (seq: number, tag = ''): LogEvent => ({ seq, tag } as unknown as LogEvent)

/** The private slot arrays of a table (their sizes are the documented memory bound). */
const slots = (t: LiveEvents): { keys: number; values: number } => {
  const raw = t as unknown as { keys: Float64Array; values: unknown[] }
  return { keys: raw.keys.length, values: raw.values.length }
}

/** A table holding `seqs`, set in this order, each with `ev(seq)`. */
function tableOf(seqs: readonly number[]): { table: LiveEvents; events: Map<number, LogEvent> } {
  const table = new LiveEvents()
  const events = new Map<number, LogEvent>()
  for (const s of seqs) {
    const e = ev(s)
    events.set(s, e)
    table.set(s, e)
  }
  return { table, events }
}

describe('LiveEvents: size, replacement and probing past a collision', () => {
  it('size counts distinct seqs; setting a held seq again replaces its event in place', () => {
    const table = new LiveEvents()
    expect(table.size).toBe(0)
    const a = ev(5, 'a')
    const b = ev(5, 'b')
    table.set(5, a)
    expect(table.size).toBe(1)
    table.set(5, b)
    expect(table.size).toBe(1)
    expect(table.get(5)).toBe(b)
  })

  it('seqs 0 and 64 share home slot 0: 64 is found in slot 1, 128 (same home) is absent', () => {
    const { table, events } = tableOf([0, 64])
    expect(table.get(64)).toBe(events.get(64))
    expect(table.get(0)).toBe(events.get(0))
    expect(table.get(128)).toBeUndefined()
    expect(table.size).toBe(2)
  })

  it('deleting 64 (slot 1, home 0) removes 64 only, walking forward past 0', () => {
    const { table, events } = tableOf([0, 64])
    table.delete(64)
    expect(table.get(64)).toBeUndefined()
    expect(table.get(0)).toBe(events.get(0))
    expect(table.size).toBe(1)
  })

  it('deleting 65 (slot 2, home 1) walks past seq 1 in slot 1', () => {
    const { table, events } = tableOf([1, 65])
    table.delete(65)
    expect(table.get(65)).toBeUndefined()
    expect(table.get(1)).toBe(events.get(1))
    expect(table.size).toBe(1)
  })

  it('deleting an absent seq whose home slot is taken changes nothing', () => {
    const { table, events } = tableOf([0])
    table.delete(64)
    expect(table.size).toBe(1)
    expect(table.get(0)).toBe(events.get(0))
    const empty = new LiveEvents()
    empty.delete(3)
    expect(empty.size).toBe(0)
  })

  it('a freed slot is free again: set 1, delete 1, set 1 holds one event', () => {
    const table = new LiveEvents()
    table.set(1, ev(1, 'a'))
    table.delete(1)
    expect(table.size).toBe(0)
    const b = ev(1, 'b')
    table.set(1, b)
    expect(table.size).toBe(1)
    expect(table.get(1)).toBe(b)
  })
})

describe('LiveEvents: backward-shift deletion', () => {
  it('0@0, 1@1, 64@2: deleting 0 keeps 1 (home 1) in place and moves 64 (home 0) into the hole', () => {
    const { table, events } = tableOf([0, 1, 64])
    table.delete(0)
    expect(table.get(64)).toBe(events.get(64))
    expect(table.get(1)).toBe(events.get(1))
    expect(table.get(0)).toBeUndefined()
    expect(table.size).toBe(2)
  })

  it('62@62, 126@63, 0@0, 190@1: deleting 0 moves 190 (home 62, wrapped past slot 63) into slot 0', () => {
    const { table, events } = tableOf([62, 126, 0, 190])
    table.delete(0)
    expect(table.get(190)).toBe(events.get(190))
    expect(table.get(62)).toBe(events.get(62))
    expect(table.get(126)).toBe(events.get(126))
    expect(table.size).toBe(3)
  })

  it('hole 63, member 127@0 whose home is the hole (63): it moves into slot 63', () => {
    const { table, events } = tableOf([63, 127])
    table.delete(63)
    expect(table.get(127)).toBe(events.get(127))
    expect(table.get(63)).toBeUndefined()
    expect(table.size).toBe(1)
  })

  it('hole 63, member 126@0 whose home 62 lies before the hole: it moves into slot 63', () => {
    const { table, events } = tableOf([62, 63, 126])
    table.delete(63)
    expect(table.get(126)).toBe(events.get(126))
    expect(table.get(62)).toBe(events.get(62))
    expect(table.size).toBe(2)
  })

  it('hole 62, members 63@63 and 127@0 both homed at 63, after the hole: both stay', () => {
    const { table, events } = tableOf([62, 63, 127])
    table.delete(62)
    expect(table.get(127)).toBe(events.get(127))
    expect(table.get(63)).toBe(events.get(63))
    expect(table.get(62)).toBeUndefined()
    expect(table.size).toBe(2)
  })

  it('hole 63, member 0@0 at its own home: it stays', () => {
    const { table, events } = tableOf([63, 0])
    table.delete(63)
    expect(table.get(0)).toBe(events.get(0))
    expect(table.get(63)).toBeUndefined()
    expect(table.size).toBe(1)
  })
})

describe('LiveEvents: growth', () => {
  it('64 slots (values packed) at first, still 64 at 32 entries, 128 at the 33rd', () => {
    const table = new LiveEvents()
    expect(slots(table)).toEqual({ keys: 64, values: 64 })
    for (let s = 0; s < 32; s++) table.set(s, ev(s))
    expect(slots(table)).toEqual({ keys: 64, values: 64 })
    table.set(32, ev(32))
    expect(slots(table)).toEqual({ keys: 128, values: 128 })
    expect(table.size).toBe(33)
  })

  it('after growing twice (100 entries) every seq 0 … 99 is held once, seq 1 included', () => {
    const seqs = Array.from({ length: 100 }, (_, s) => s)
    const { table, events } = tableOf(seqs)
    expect(table.size).toBe(100)
    expect(table.get(0)).toBe(events.get(0))
    expect(table.get(1)).toBe(events.get(1))
    expect(table.get(63)).toBe(events.get(63))
    expect(table.get(99)).toBe(events.get(99))
    expect(table.get(100)).toBeUndefined()
    expect(seqs.filter((s) => table.get(s) !== events.get(s))).toEqual([])
  })
})

/** A fold item for an in-memory event (or an unparsed line: `event` null). */
function item(seq: number, type: string, event: LogEvent | null, duplicate = false): FoldItem {
  return { index: seq, line: null, seq, type, event, problems: [], duplicate, repair: false, tornFinal: false, excerpt: '' }
}
const ordinary = (seq: number): FoldItem => item(seq, 'turn/start', { seq, type: 'turn/start', data: { turn: 1 } } as unknown as LogEvent)
/** `step/end` is a repair closer whatever its data (§12.0). */
const closer = (seq: number): FoldItem => item(seq, 'step/end', { seq, type: 'step/end', data: { turn: 1, step: 1 } } as unknown as LogEvent)
const endSeed = (seq: number): FoldItem => item(seq, 'session/end-seed', { seq, type: 'session/end-seed', data: {} } as unknown as LogEvent)

/** Feeds `items`, ends with `crashAfter`, and returns `seq[ repair][ torn]` of every item emitted, in order. */
function through(items: readonly FoldItem[], crashAfter: (seq: number) => boolean = () => false): string[] {
  const out: string[] = []
  const lookahead = new RepairLookahead((x) => out.push(`${x.seq}${x.repair ? ' repair' : ''}${x.tornFinal ? ' torn' : ''}`))
  for (const x of items) lookahead.push(x)
  lookahead.end(crashAfter)
  return out
}

/** `from … to` as numbers. */
const range = (from: number, to: number): number[] => Array.from({ length: to - from + 1 }, (_, k) => from + k)

describe('RepairLookahead (§12.0 repair run, torn-final)', () => {
  it('4,096 closers before an end-seed are a repair run (all repair, the event before them torn-final)', () => {
    const items = [ordinary(0), ...range(1, 4096).map(closer), endSeed(4097)]
    expect(through(items)).toEqual(['0 torn', ...range(1, 4096).map((s) => `${s} repair`), '4097'])
  })

  it('4,097 closers exceed the bound: released as ordinary events, and the end-seed marks nothing torn', () => {
    const items = [ordinary(0), ...range(1, 4097).map(closer), endSeed(4098)]
    expect(through(items)).toEqual(['0', ...range(1, 4097).map(String), '4098'])
  })

  it('an end-seed that is the first item has no event before it to mark', () => {
    expect(through([endSeed(0), ordinary(1)])).toEqual(['0', '1'])
  })

  it('a crash after the last of a trailing run of closers marks that closer torn-final, nothing else', () => {
    expect(through([ordinary(0), closer(1), closer(2)], (s) => s === 2)).toEqual(['0', '1', '2 torn'])
    expect(through([ordinary(0), closer(1), closer(2)], (s) => s === 0)).toEqual(['0', '1', '2'])
  })

  it('an empty lookahead ends without asking about any seq', () => {
    const asked: number[] = []
    expect(through([], (s) => { asked.push(s); return true })).toEqual([])
    expect(asked).toEqual([])
  })

  it('an unparsed session/end-seed line (no event) ends no repair run', () => {
    expect(through([ordinary(0), closer(1), item(2, 'session/end-seed', null)])).toEqual(['0', '1', '2'])
  })

  it('a duplicate session/end-seed line ends no repair run', () => {
    const dup = { ...endSeed(2), duplicate: true }
    expect(through([ordinary(0), closer(1), dup])).toEqual(['0', '1', '2'])
  })
})
