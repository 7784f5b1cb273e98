/**
 * Range selection (§4.2) on the worked examples of §4.4 and the edge cases §4.2 lists, plus explicit
 * region validation (§3.8, §7.2) with its error codes in order.
 */
import { appendixBEvents } from '@compaction-sim/fixtures'
import { describe, expect, it } from 'vitest'
import { InvariantError } from '../../src/errors.ts'
import { EventLog } from '../../src/log/event-log.ts'
import type { EventDraft } from '../../src/log/events.ts'
import {
  RangeSelectionError, RegionError, selectCompactableRange, systemHeadCount, validateExplicitRegion,
} from '../../src/range/select.ts'
import { balancedCuts, ToolPairingError } from '../../src/surface/tool-pairing.ts'
import { assistant, marker, replacement, result, user } from '../support/events.ts'
import { appendAt, logAt, measurementOf, system } from './surface-builder.ts'

/** §4.4 Example 1: seq → node, in position order. */
const EXAMPLE_1: ReadonlyArray<readonly [number, EventDraft]> = [
  [2, system()],
  [4, user('fix the test')],
  [7, assistant(['c7'])],
  [9, result('c7')],
  [12, assistant(['c12a', 'c12b'])],
  [14, result('c12a')],
  [15, result('c12b')],
  [18, assistant([])],
  [21, user('and the docs')],
  [24, assistant(['c24'])],
  [26, result('c24')],
]
/** §4.4 Example 1 `P_route` column. */
const EXAMPLE_1_PRICES = { 2: 300, 4: 50, 7: 40, 9: 2000, 12: 60, 14: 900, 15: 700, 18: 80, 21: 30, 24: 40, 26: 600 }

function tailPrice(prices: Readonly<Record<number, number>>, seqs: readonly number[]): number {
  return seqs.reduce((sum, s) => sum + (prices[s] ?? Number.NaN), 0)
}

describe('§4.4 Example 1 — pressure selection with tool-pair rounding', () => {
  const log = logAt(EXAMPLE_1)
  const m = measurementOf(log, EXAMPLE_1_PRICES)

  it('has the balanced cuts of the example table (§4.1)', () => {
    expect(log.nodes).toEqual([2, 4, 7, 9, 12, 14, 15, 18, 21, 24, 26])
    expect(balancedCuts(log.state.surface)).toEqual([0, 1, 2, 4, 7, 8, 9, 11])
  })

  it('R = 1,600: step 1 stops at pos 5, rounding moves keep to 4 → {start: 4, end: 9}, shadowedSeqs [4, 7, 9]', () => {
    const r = selectCompactableRange(log, m, 1600)
    expect(r).toEqual({ start: 4, end: 9, shadowedSeqs: [4, 7, 9], startPosition: 1, endPosition: 3 })
    expect(tailPrice(EXAMPLE_1_PRICES, log.nodes.slice(4))).toBe(2410) // retained verbatim, ≥ 1,600
    expect(Object.isFrozen(r)).toBe(true)
  })

  it('R = 0 (overflow): the newest unit (#24, #26) is retained → {start: 4, end: 21}', () => {
    expect(selectCompactableRange(log, m, 0)).toEqual({
      start: 4, end: 21, shadowedSeqs: [4, 7, 9, 12, 14, 15, 18, 21], startPosition: 1, endPosition: 8,
    })
  })

  it('R = 5,000: the whole compactable history (4,500) fits the budget → null', () => {
    expect(selectCompactableRange(log, m, 5000)).toBeNull()
  })

  it('the boundary budget 4,500 also declines (keep reaches h exactly, §4.2 step 1)', () => {
    expect(selectCompactableRange(log, m, 4500)).toBeNull()
    expect(selectCompactableRange(log, m, 4450)?.shadowedSeqs).toEqual([4])
  })

  it('is deterministic: same surface and prices give the same span (§4.2 property 6)', () => {
    expect(selectCompactableRange(log, m, 1600)).toEqual(selectCompactableRange(log, m, 1600))
  })
})

describe('§4.4 Example 2 — start > end after an earlier replacement (§4.3)', () => {
  const log = logAt(EXAMPLE_1)
  appendAt(log, [[30, replacement(4, 9, [4, 7, 9])]])
  const prices = { ...EXAMPLE_1_PRICES, 30: 150 }
  const m = measurementOf(log, prices)

  it('overflow recovery (R = 0) returns {start: 30, end: 21}; shadowedSeqs is authoritative', () => {
    expect(log.nodes).toEqual([2, 30, 12, 14, 15, 18, 21, 24, 26])
    const r = selectCompactableRange(log, m, 0)
    expect(r).toEqual({ start: 30, end: 21, shadowedSeqs: [30, 12, 14, 15, 18, 21], startPosition: 1, endPosition: 6 })
    // A seq-interval reading "21 … 30" would include #24 and #26 and exclude #12 … #18.
    expect(r?.shadowedSeqs).not.toContain(24)
    expect(r?.shadowedSeqs).toContain(12)
  })

  it('the explicit region (30, 21) is valid positionally and names the same nodes (§3.8)', () => {
    expect(validateExplicitRegion(log, 30, 21)).toEqual(selectCompactableRange(log, m, 0))
  })
})

describe('§4.4 Example 3 — an open tail declines', () => {
  it('[#2 head, #7 two calls, #9 one result] → null for any R (§4.2 property 5)', () => {
    const log = logAt([[2, system()], [7, assistant(['x', 'y'])], [9, result('x')]])
    const m = measurementOf(log, { 2: 28, 7: 30, 9: 500 })
    for (const r of [0, 1, 30, 500, 530, 10_000]) expect(selectCompactableRange(log, m, r)).toBeNull()
  })

  it('[#2 head, #4 user, #7 two calls, #9 one result], R = 0 → keep 3 → 2 → {start: 4, end: 4}', () => {
    const log = logAt([[2, system()], [4, user('q')], [7, assistant(['x', 'y'])], [9, result('x')]])
    const m = measurementOf(log, { 2: 28, 4: 20, 7: 30, 9: 500 })
    expect(selectCompactableRange(log, m, 0)).toEqual({ start: 4, end: 4, shadowedSeqs: [4], startPosition: 1, endPosition: 1 })
  })
})

describe('§4.4 Example 4 — Appendix B pre-step of turn 3 step 2, R = 640', () => {
  it('span {start: 3, end: 42}, shadowedSeqs [3, 10, 15, 23, 28, 37, 42] (#15 is the prune replacement of #12)', () => {
    const log = EventLog.fromEvents(appendixBEvents().slice(0, 51), { dialect: 'seed' })
    const m = measurementOf(log, { 2: 28, 3: 20, 10: 15, 15: 1303, 23: 101, 28: 152, 37: 77, 42: 22, 47: 14, 49: 1925 }, 3762)
    expect(log.nodes).toEqual([2, 3, 10, 15, 23, 28, 37, 42, 47, 49])
    expect(selectCompactableRange(log, m, 640)).toEqual({
      start: 3, end: 42, shadowedSeqs: [3, 10, 15, 23, 28, 37, 42], startPosition: 1, endPosition: 7,
    })
  })
})

describe('§4.2 null cases and failures', () => {
  it('empty surface → null', () => {
    const log = logAt([])
    expect(selectCompactableRange(log, measurementOf(log, {}), 0)).toBeNull()
  })

  it('surface consisting of the system head only → null (INV-26)', () => {
    const log = logAt([[1, system()]])
    expect(selectCompactableRange(log, measurementOf(log, { 1: 28 }), 0)).toBeNull()
  })

  it('a single unit after the head → null (only an indivisible unit remains)', () => {
    const log = logAt([[1, system()], [2, assistant(['a'])], [3, result('a')]])
    expect(selectCompactableRange(log, measurementOf(log, { 1: 28, 2: 10, 3: 10 }), 0)).toBeNull()
  })

  it('throws RangeSelectionError on a meter/surface mismatch', () => {
    const log = logAt([[1, user('a')], [2, user('b')]])
    const stale = measurementOf(logAt([[1, user('a')]]), { 1: 5 })
    expect(() => selectCompactableRange(log, stale, 0)).toThrow(RangeSelectionError)
    expect(() => selectCompactableRange(log, stale, 0)).toThrow(/meter\/surface mismatch at position 1/)
  })

  it('throws ToolPairingError on a corrupt surface (a result without an open call, §4.1)', () => {
    const log = logAt([[1, user('a')], [2, assistant(['x'])], [3, result('x')], [4, user('b')]])
    log.append(replacement(2, 2, [2])) // shadows the call, orphaning its result
    expect(() => selectCompactableRange(log, measurementOf(log, { 1: 5, 5: 5, 3: 5, 4: 5 }), 0)).toThrow(ToolPairingError)
  })

  it('rejects a budget that is not a non-negative integer (a caller bug, not input)', () => {
    const log = logAt([[1, user('a')], [2, user('b')]])
    expect(() => selectCompactableRange(log, measurementOf(log, { 1: 5, 2: 5 }), -1)).toThrow(InvariantError)
  })
})

describe('§4.2 head position h (D-04, §14.1 "Range selection")', () => {
  it('seed dialect without a system head: spans start at position 0', () => {
    const log = logAt([[1, user('a')], [2, user('b')]])
    expect(systemHeadCount(log)).toBe(0)
    expect(selectCompactableRange(log, measurementOf(log, { 1: 5, 2: 5 }), 0)).toMatchObject({ start: 1, startPosition: 0, end: 1 })
  })

  it('a later system/message is ordinary history and may be compacted (§4.2 property 1)', () => {
    const log = logAt([[1, user('a')], [2, system('new prompt')], [3, user('b')]])
    expect(selectCompactableRange(log, measurementOf(log, { 1: 5, 2: 9, 3: 5 }), 0)?.shadowedSeqs).toEqual([1, 2])
  })

  it('dsh-0.1.0-rc.8 dialect: h = 0, the span starts at position 0', () => {
    const log = logAt([[1, user('a')], [2, assistant(['x'])], [3, result('x')], [4, user('b')]], 'dsh-0.1.0-rc.8')
    expect(systemHeadCount(log)).toBe(0)
    expect(selectCompactableRange(log, measurementOf(log, { 1: 5, 2: 5, 3: 5, 4: 5 }), 0)).toEqual({
      start: 1, end: 3, shadowedSeqs: [1, 2, 3], startPosition: 0, endPosition: 2,
    })
  })
})

describe('validateExplicitRegion (§3.8, §7.2 order)', () => {
  const region = (log: EventLog, start: number, end: number): unknown => {
    try {
      return validateExplicitRegion(log, start, end)
    } catch (err) {
      if (err instanceof RegionError) return err.code
      throw err
    }
  }

  it('accepts a balanced span after the head and returns its positional membership', () => {
    const log = logAt(EXAMPLE_1)
    expect(validateExplicitRegion(log, 12, 21)).toEqual({
      start: 12, end: 21, shadowedSeqs: [12, 14, 15, 18, 21], startPosition: 4, endPosition: 8,
    })
  })

  it('rejects each §3.8 case with its code', () => {
    const log = logAt(EXAMPLE_1)
    expect(region(log, 9001, 21)).toBe('not-a-node')
    expect(region(log, 4, 9001)).toBe('not-a-node')
    expect(region(log, 21, 4)).toBe('reversed')
    expect(region(log, 9, 21)).toBe('unbalanced-before')
    expect(region(log, 4, 7)).toBe('unbalanced-after')
    expect(region(log, 2, 9)).toBe('contains-system-head')
    expect(() => validateExplicitRegion(log, 9001, 21)).toThrow(/start seq 9001 not found in surface/)
  })

  it('a shadowed seq is not a node', () => {
    const log = logAt(EXAMPLE_1)
    appendAt(log, [[30, replacement(4, 9, [4, 7, 9])]])
    expect(region(log, 4, 21)).toBe('not-a-node')
    expect(() => validateExplicitRegion(log, 4, 21)).toThrow(/shadowed/)
  })

  it('busy on a live lock, checked after the span checks (§7.2 steps 2 → 3)', () => {
    const log = logAt(EXAMPLE_1)
    log.append({ time: 0, type: 'compaction/start', data: { compactionId: 'cmp-1' as never, turn: 1 } })
    expect(region(log, 4, 21)).toBe('busy')
    expect(region(log, 9, 21)).toBe('unbalanced-before')
  })

  it('a stale orphan (before the last end-seed) is not busy (§11.1)', () => {
    const log = logAt(EXAMPLE_1)
    log.append({ time: 0, type: 'compaction/start', data: { compactionId: 'cmp-1' as never, turn: 1 } })
    log.append(marker('session/end-seed'))
    expect(region(log, 4, 21)).toMatchObject({ start: 4, end: 21 })
  })

  it('no open turn, checked last (§7.2 step 4, §11.6)', () => {
    const log = logAt(EXAMPLE_1)
    log.append(marker('turn/end'))
    expect(region(log, 4, 21)).toBe('no-open-turn')
    log.append({ time: 0, type: 'compaction/start', data: { compactionId: 'cmp-1' as never, turn: null } })
    expect(region(log, 4, 21)).toBe('busy')
  })

  it('dsh-0.1.0-rc.8 has no head rule (D-14): position 0 may start a region', () => {
    const log = logAt([[1, user('a')], [2, user('b')]], 'dsh-0.1.0-rc.8')
    expect(validateExplicitRegion(log, 1, 1).shadowedSeqs).toEqual([1])
  })
})
