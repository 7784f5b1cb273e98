/**
 * HARD-2 (`summaryFit`, packages/core/docs/hardened.md "Fit"): the §4.2 span shrunk from its newer end to the
 * longest prefix that ends on a balanced cut and satisfies `Σ P_route + min(capTokens, Σ P_fixed) ≤ tokensMax`.
 * Pins the exact-fit boundary (`== tokensMax` fits, one token less does not), `min(capTokens, Σ P_fixed)` with
 * either side the smaller, the step-by-step shrink, the balanced-cut condition on the new end, `null` when no
 * prefix fits, and `deferredTo` (the span's last node before shrinking) present only when it shrank. Every
 * expected span is worked out by hand in the comments next to it.
 */
import { describe, expect, it } from 'vitest'
import type { Seq } from '../../src/brand.ts'
import { selectCompactableRange, type SummaryFit } from '../../src/range/select.ts'
import { ToolPairingError } from '../../src/surface/tool-pairing.ts'
import { assistant, marker, result, user } from '../support/events.ts'
import { logAt, measurementOf, system } from './surface-builder.ts'

/** A fit whose `P_fixed` prices come from `fixed` (by seq); asking for any other seq fails the test. */
function fitOf(tokensMax: number, capTokens: number, fixed: Readonly<Record<number, number>>): SummaryFit {
  return {
    tokensMax,
    capTokens,
    fixedTokens: (seq: Seq) => {
      const p = fixed[seq]
      if (p === undefined) throw new Error(`P_fixed asked for node ${seq}, which is not in the span`)
      return p
    },
  }
}

/**
 * Head #1, then five plain user nodes (every cut balanced). R = 0 retains #6 (keep = position 5), so the
 * faithful span is #2 … #5 (positions 1 … 4): Σ P_route = 10 + 20 + 30 + 40 = 100, Σ P_fixed = 1 + 2 + 3 + 4 = 10.
 */
describe('HARD-2 on a surface of plain nodes (every cut balanced)', () => {
  const log = logAt([[1, system()], [2, user('u2')], [3, user('u3')], [4, user('u4')], [5, user('u5')], [6, user('u6')]])
  const m = measurementOf(log, { 1: 7, 2: 10, 3: 20, 4: 30, 5: 40, 6: 50 })
  const FIXED = { 2: 1, 3: 2, 4: 3, 5: 4 }
  const select = (tokensMax: number, capTokens = 1000): unknown =>
    selectCompactableRange(log, m, 0, { summaryFit: fitOf(tokensMax, capTokens, FIXED) })

  const FULL = { start: 2, end: 5, shadowedSeqs: [2, 3, 4, 5], startPosition: 1, endPosition: 4 }

  it('without the option the faithful span #2 … #5', () => {
    expect(selectCompactableRange(log, m, 0)).toStrictEqual(FULL)
  })

  it('exact fit: 100 + min(1000, 10) = 110 ≤ 110 keeps the whole span, with no deferredTo', () => {
    const r = select(110)
    expect(r).toStrictEqual(FULL)
    expect(r).not.toHaveProperty('deferredTo')
    expect(Object.isFrozen(r)).toBe(true)
  })

  it('one token less: 110 > 109 drops #5 (60 + 6 = 66 fits) and records deferredTo #5', () => {
    const r = select(109)
    expect(r).toStrictEqual({ start: 2, end: 4, shadowedSeqs: [2, 3, 4], startPosition: 1, endPosition: 3, deferredTo: 5 })
    expect(Object.isFrozen(r)).toBe(true)
  })

  it('capTokens below Σ P_fixed: the room is the cap (100 + min(3, 10) = 103)', () => {
    expect(select(103, 3)).toStrictEqual(FULL)
    // 102: drop #5 → 60 + min(3, 6) = 63 ≤ 102.
    expect(select(102, 3)).toStrictEqual({ start: 2, end: 4, shadowedSeqs: [2, 3, 4], startPosition: 1, endPosition: 3, deferredTo: 5 })
  })

  it('capTokens above Σ P_fixed: the room is Σ P_fixed, not the cap (100 + 10, not 100 + 1000)', () => {
    expect(select(110, 1000)).toStrictEqual(FULL)
    expect(select(110, 10)).toStrictEqual(FULL)
    expect(select(110, 11)).toStrictEqual(FULL)
  })

  it('capTokens of zero: the span needs no room beyond its prices (100 + 0)', () => {
    expect(select(100, 0)).toStrictEqual(FULL)
    // 99: drop #5 → 60 + 0 fits.
    expect(select(99, 0)).toMatchObject({ start: 2, end: 4, deferredTo: 5 })
  })

  it('shrinks one node at a time from the newer end; the start never moves; deferredTo stays the old end', () => {
    // #2 … #4: 60 + 6 = 66; #2 … #3: 30 + 3 = 33; #2: 10 + 1 = 11.
    expect(select(66)).toStrictEqual({ start: 2, end: 4, shadowedSeqs: [2, 3, 4], startPosition: 1, endPosition: 3, deferredTo: 5 })
    expect(select(65)).toStrictEqual({ start: 2, end: 3, shadowedSeqs: [2, 3], startPosition: 1, endPosition: 2, deferredTo: 5 })
    expect(select(33)).toStrictEqual({ start: 2, end: 3, shadowedSeqs: [2, 3], startPosition: 1, endPosition: 2, deferredTo: 5 })
    expect(select(32)).toStrictEqual({ start: 2, end: 2, shadowedSeqs: [2], startPosition: 1, endPosition: 1, deferredTo: 5 })
    expect(select(11)).toStrictEqual({ start: 2, end: 2, shadowedSeqs: [2], startPosition: 1, endPosition: 1, deferredTo: 5 })
  })

  it('null when not even the first node fits (10 + 1 = 11 > 10)', () => {
    expect(select(10)).toBeNull()
    expect(select(0)).toBeNull()
    expect(select(10, 0)).toStrictEqual({ start: 2, end: 2, shadowedSeqs: [2], startPosition: 1, endPosition: 1, deferredTo: 5 })
    expect(select(9, 0)).toBeNull()
  })

  it('the fit is judged against the retained tail it leaves: a larger R gives a shorter span to fit', () => {
    // R = 90: acc #6 50, #5 90 ≥ 90 → keep = position 4; span #2 … #4 (60 + 6 = 66).
    expect(selectCompactableRange(log, m, 90, { summaryFit: fitOf(66, 1000, FIXED) }))
      .toStrictEqual({ start: 2, end: 4, shadowedSeqs: [2, 3, 4], startPosition: 1, endPosition: 3 })
    expect(selectCompactableRange(log, m, 90, { summaryFit: fitOf(65, 1000, FIXED) }))
      .toStrictEqual({ start: 2, end: 3, shadowedSeqs: [2, 3], startPosition: 1, endPosition: 2, deferredTo: 4 })
  })
})

describe('HARD-2 without a system head (h = 0)', () => {
  // Seed, no head: R = 0 retains #3; span #1 … #2 at positions 0 … 1 (Σ P_route 10, Σ P_fixed 0).
  const log = logAt([[1, user('a')], [2, user('b')], [3, user('c')]])
  const m = measurementOf(log, { 1: 4, 2: 6, 3: 5 })
  const fit = (tokensMax: number): SummaryFit => fitOf(tokensMax, 1000, { 1: 0, 2: 0 })

  it('shrinks down to position 0 and returns null below it (never reads before the surface start)', () => {
    expect(selectCompactableRange(log, m, 0, { summaryFit: fit(10) }))
      .toStrictEqual({ start: 1, end: 2, shadowedSeqs: [1, 2], startPosition: 0, endPosition: 1 })
    expect(selectCompactableRange(log, m, 0, { summaryFit: fit(4) }))
      .toStrictEqual({ start: 1, end: 1, shadowedSeqs: [1], startPosition: 0, endPosition: 0, deferredTo: 2 })
    expect(selectCompactableRange(log, m, 0, { summaryFit: fit(3) })).toBeNull()
    expect(selectCompactableRange(log, m, 0, { summaryFit: fit(0) })).toBeNull()
  })
})

/**
 * A span that contains a whole tool unit: #3 calls a and b, #4 and #5 answer them. R = 0 retains #7; the
 * faithful span is #2 … #6 (positions 1 … 5), Σ P_route 50, Σ P_fixed 5. The cuts after #3 and #4 are open
 * (balance 2 and 1), so no shrunk span may end there even when it fits by size.
 */
describe('HARD-2 shrinks only to a balanced cut (§4.1)', () => {
  const log = logAt([
    [1, system()], [2, user('u2')], [3, assistant(['a', 'b'])], [4, result('a')], [5, result('b')], [6, user('u6')], [7, user('u7')],
  ])
  const m = measurementOf(log, { 1: 5, 2: 10, 3: 10, 4: 10, 5: 10, 6: 10, 7: 10 })
  const FIXED = { 2: 1, 3: 1, 4: 1, 5: 1, 6: 1 }
  const select = (tokensMax: number): unknown => selectCompactableRange(log, m, 0, { summaryFit: fitOf(tokensMax, 1000, FIXED) })

  it('fits whole at 50 + 5 = 55', () => {
    expect(select(55)).toStrictEqual({ start: 2, end: 6, shadowedSeqs: [2, 3, 4, 5, 6], startPosition: 1, endPosition: 5 })
  })

  it('54: drops #6; #2 … #5 (40 + 4 = 44) ends after both results, a balanced cut', () => {
    expect(select(54)).toStrictEqual({ start: 2, end: 5, shadowedSeqs: [2, 3, 4, 5], startPosition: 1, endPosition: 4, deferredTo: 6 })
    expect(select(44)).toStrictEqual({ start: 2, end: 5, shadowedSeqs: [2, 3, 4, 5], startPosition: 1, endPosition: 4, deferredTo: 6 })
  })

  it('43: #2 … #4 (33) and #2 … #3 (22) fit by size but end inside the unit; the whole unit goes back → #2', () => {
    expect(select(43)).toStrictEqual({ start: 2, end: 2, shadowedSeqs: [2], startPosition: 1, endPosition: 1, deferredTo: 6 })
    expect(select(11)).toStrictEqual({ start: 2, end: 2, shadowedSeqs: [2], startPosition: 1, endPosition: 1, deferredTo: 6 })
    expect(select(10)).toBeNull()
  })
})

describe('HARD-2 on the HARD-6 side (both options)', () => {
  // Turn 1 closed (#4, #6); turn 2 open, prompt #12, work #14 … #18; R = 0 retains #20. Positions:
  // 0 #2 head, 1 #4, 2 #6, 3 #12 prompt, 4 #14, 5 #16, 6 #18, 7 #20. Older side #4 … #6 = 20, newer
  // side #14 … #18 = 90 → the newer side, which HARD-2 then shrinks from its own end; its start stays #14.
  const log = logAt([
    [2, system()], [4, user('first task')], [6, assistant([])], [8, marker('turn/end', 1)], [10, marker('turn/start', 2)],
    [12, user('prompt')], [14, assistant([])], [16, assistant([])], [18, assistant([])], [20, user('steer')],
  ])
  const m = measurementOf(log, { 2: 100, 4: 10, 6: 10, 12: 50, 14: 30, 16: 30, 18: 30, 20: 5 })
  const FIXED = { 14: 1, 16: 1, 18: 1 }

  it('the newer side whole at 90 + 3 = 93, shrunk to #14 … #16 (60 + 2) at 92', () => {
    expect(selectCompactableRange(log, m, 0, { keepOpenTurnPrompt: true, summaryFit: fitOf(93, 1000, FIXED) }))
      .toStrictEqual({ start: 14, end: 18, shadowedSeqs: [14, 16, 18], startPosition: 4, endPosition: 6 })
    expect(selectCompactableRange(log, m, 0, { keepOpenTurnPrompt: true, summaryFit: fitOf(92, 1000, FIXED) }))
      .toStrictEqual({ start: 14, end: 16, shadowedSeqs: [14, 16], startPosition: 4, endPosition: 5, deferredTo: 18 })
  })

  it('null when not even #14 fits (30 + 1 > 30); the prompt is never reached', () => {
    expect(selectCompactableRange(log, m, 0, { keepOpenTurnPrompt: true, summaryFit: fitOf(30, 1000, FIXED) })).toBeNull()
  })

  it('a corrupt surface still throws before any fit is tried', () => {
    const bad = logAt([[1, result('x')], [2, user('a')], [3, user('b')]])
    expect(() => selectCompactableRange(bad, measurementOf(bad, { 1: 1, 2: 1, 3: 1 }), 0, { summaryFit: fitOf(100, 1, {}) }))
      .toThrow(ToolPairingError)
  })
})
