/**
 * Range selection edges the worked examples leave open (mutation issue #18, module `range`): the §4.2 order
 * "empty measurement → null" before the meter/surface check, the seed-only head rule, a corrupt surface whose
 * first node is already negative, HARD-6's side comparison (each side's exact token sum, ties to the older
 * side, one side missing or priced 0, a prompt already in the retained tail), and which user message
 * `openTurnPromptPosition` takes for the open turn's prompt. Expected spans are worked out by hand next to each.
 */
import { describe, expect, it } from 'vitest'
import type { Seq } from '../../src/brand.ts'
import type { EventLog } from '../../src/log/event-log.ts'
import type { EventDraft } from '../../src/log/events.ts'
import type { Measurement } from '../../src/meter/measurement.ts'
import { openTurnPromptPosition, selectCompactableRange, systemHeadCount } from '../../src/range/select.ts'
import { ToolPairingError } from '../../src/surface/tool-pairing.ts'
import { assistant, marker, replacement, result, user } from '../support/events.ts'
import { logAt, measurementOf, system } from './surface-builder.ts'

describe('§4.2 preconditions', () => {
  it('an empty measurement returns null before the meter/surface check (§4.2: "if priced is empty → return null")', () => {
    const log = logAt([[1, user('a')], [2, user('b')]])
    const empty: Measurement = { ...measurementOf(logAt([]), {}), logRevision: log.length }
    expect(empty.nodes).toEqual([])
    expect(selectCompactableRange(log, empty, 0)).toBeNull()
  })

  it('the head rule is seed-only: a dsh-0.1.0-rc.8 log never has h = 1, whatever its first node is (§14.1)', () => {
    // rc.8 has no system/message event (the log refuses one on the surface), so this state is only reachable
    // through a log-shaped object; it pins the documented "always 0 in dsh-0.1.0-rc.8".
    const headed = { dialect: 'dsh-0.1.0-rc.8', nodes: [1 as Seq], event: () => ({ type: 'system/message' }) } as unknown as EventLog
    expect(systemHeadCount(headed)).toBe(0)
    const seed = { dialect: 'seed', nodes: [1 as Seq], event: () => ({ type: 'system/message' }) } as unknown as EventLog
    expect(systemHeadCount(seed)).toBe(1)
  })

  it('a surface negative at position 0 throws even when the whole history fits the budget', () => {
    // #1 is a result with no call at all: the balance is -1 after position 0. With R = 1000 step 1 reaches
    // keep = h = 0 and would return null without ever examining a cut; §4.1 says fail loudly instead.
    const log = logAt([[1, result('x')], [2, user('a')]])
    expect(log.state.surface.firstNegativePosition).toBe(0)
    const m = measurementOf(log, { 1: 5, 2: 5 })
    expect(() => selectCompactableRange(log, m, 1000)).toThrow(ToolPairingError)
    expect(() => selectCompactableRange(log, m, 1000)).toThrow('tool pairing goes negative after node 1 at position 0 (a tool result without an open call)')
  })
})

/**
 * Turn 1 closed (#4, #6); turn 2 open with prompt #12 and work #14, #16; #18 is the newest node, retained at
 * R = 0. Positions: 0 #2 head, 1 #4, 2 #6, 3 #12 prompt (p), 4 #14, 5 #16, 6 #18 (keep). Older side = #4 + #6,
 * newer side = #14 + #16.
 */
const TWO_SIDES: ReadonlyArray<readonly [number, EventDraft]> = [
  [2, system()], [4, user('first task')], [6, assistant([])], [8, marker('turn/end', 1)], [10, marker('turn/start', 2)],
  [12, user('prompt')], [14, assistant([])], [16, assistant([])], [18, assistant([])],
]
const OLDER = { start: 4, end: 6, shadowedSeqs: [4, 6], startPosition: 1, endPosition: 2 }
const NEWER = { start: 14, end: 16, shadowedSeqs: [14, 16], startPosition: 4, endPosition: 5 }

describe('HARD-6 side comparison: each side is exactly its own nodes', () => {
  const log = logAt(TWO_SIDES)
  const hardened = (prices: Readonly<Record<number, number>>): unknown =>
    selectCompactableRange(log, measurementOf(log, { 2: 100, 18: 50, ...prices }), 0, { keepOpenTurnPrompt: true })

  it('the newer side wins at 30 > 20; neither the prompt (5) nor the newer side\'s first node counts for the older', () => {
    expect(hardened({ 4: 10, 6: 10, 12: 5, 14: 15, 16: 15 })).toStrictEqual(NEWER)
  })

  it('the older side wins at 30 > 20; neither the prompt nor the older side\'s last node counts for the newer', () => {
    expect(hardened({ 4: 20, 6: 10, 12: 5, 14: 10, 16: 10 })).toStrictEqual(OLDER)
  })

  it('the newer side stops before the retained tail: #18 (50) is not counted for it', () => {
    expect(hardened({ 4: 20, 6: 20, 12: 5, 14: 10, 16: 20 })).toStrictEqual(OLDER)
  })

  it('each side counts its last node: 10 + 30 = 40 beats 30 + 5 = 35', () => {
    expect(hardened({ 4: 10, 6: 30, 12: 5, 14: 30, 16: 5 })).toStrictEqual(OLDER)
    expect(hardened({ 4: 30, 6: 5, 12: 5, 14: 10, 16: 30 })).toStrictEqual(NEWER)
  })

  it('a tie (20 = 20) takes the older side', () => {
    expect(hardened({ 4: 10, 6: 10, 12: 5, 14: 10, 16: 10 })).toStrictEqual(OLDER)
    expect(hardened({ 4: 0, 6: 0, 12: 5, 14: 0, 16: 0 })).toStrictEqual(OLDER)
  })
})

describe('HARD-6 with one side missing', () => {
  it('the prompt right before the cut: no newer side, the older side is the span (also when it is priced 0)', () => {
    // Positions: 0 #2, 1 #4, 2 #6, 3 #12 prompt, 4 #14 (keep at R = 0 = p + 1).
    const log = logAt(TWO_SIDES.slice(0, 7))
    expect(log.nodes).toEqual([2, 4, 6, 12, 14])
    const opts = { keepOpenTurnPrompt: true }
    expect(selectCompactableRange(log, measurementOf(log, { 2: 100, 4: 10, 6: 10, 12: 5, 14: 50 }), 0, opts)).toStrictEqual(OLDER)
    expect(selectCompactableRange(log, measurementOf(log, { 2: 100, 4: 0, 6: 0, 12: 5, 14: 50 }), 0, opts)).toStrictEqual(OLDER)
  })

  it('the prompt right after the head: no older side, the newer side is the span (also when it is priced 0)', () => {
    // Positions: 0 #2 head, 1 #4 prompt (p = h), 2 #6, 3 #8, 4 #10 (keep at R = 0).
    const log = logAt([[2, system()], [4, user('only task')], [6, assistant([])], [8, assistant([])], [10, assistant([])]])
    const opts = { keepOpenTurnPrompt: true }
    const span = { start: 6, end: 8, shadowedSeqs: [6, 8], startPosition: 2, endPosition: 3 }
    expect(selectCompactableRange(log, measurementOf(log, { 2: 100, 4: 50, 6: 10, 8: 10, 10: 5 }), 0, opts)).toStrictEqual(span)
    expect(selectCompactableRange(log, measurementOf(log, { 2: 100, 4: 50, 6: 0, 8: 0, 10: 5 }), 0, opts)).toStrictEqual(span)
  })

  it('a prompt already in the retained tail changes nothing', () => {
    // Positions: 0 #2, 1 #4, 2 #6, 3 #8, 4 #12 prompt, 5 #14. R = 25: #14 10, #12 20, #8 30 ≥ 25 → keep = 3,
    // so the prompt (position 4) is retained and the span is #4 … #6, with or without the option.
    const log = logAt([
      [2, system()], [4, user('first task')], [6, assistant([])], [8, assistant([])], [9, marker('turn/end', 1)],
      [10, marker('turn/start', 2)], [12, user('prompt')], [14, assistant([])],
    ])
    const m = measurementOf(log, { 2: 100, 4: 10, 6: 10, 8: 10, 12: 10, 14: 10 })
    expect(openTurnPromptPosition(log)).toBe(4)
    const span = { start: 4, end: 6, shadowedSeqs: [4, 6], startPosition: 1, endPosition: 2 }
    expect(selectCompactableRange(log, m, 25)).toStrictEqual(span)
    expect(selectCompactableRange(log, m, 25, { keepOpenTurnPrompt: true })).toStrictEqual(span)
  })
})

describe('openTurnPromptPosition: the open turn\'s first appended user message', () => {
  it('-1 while the open turn has no user message yet', () => {
    const log = logAt([[1, user('a')], [2, assistant([])], [3, marker('turn/end', 1)], [4, marker('turn/start', 2)], [5, assistant([])]])
    expect(log.nodes).toEqual([1, 2, 5])
    expect(openTurnPromptPosition(log)).toBe(-1)
  })

  it('a user message appended between the turns (just before turn/start) is not the open turn\'s prompt', () => {
    const log = logAt([[1, user('a')], [2, marker('turn/end', 1)], [3, user('between turns')], [4, marker('turn/start', 2)], [5, assistant([])]])
    expect(log.nodes).toEqual([1, 3, 5])
    expect(openTurnPromptPosition(log)).toBe(-1)
  })

  it('a replacing user message (a checkpoint) inside the open turn is skipped; the appended prompt counts', () => {
    const log = logAt([
      [1, user('t1')], [2, assistant([])], [3, marker('turn/end', 1)], [4, marker('turn/start', 2)],
      [5, replacement(1, 2, [1, 2])], [6, user('prompt')], [7, assistant([])],
    ])
    expect(log.nodes).toEqual([5, 6, 7])
    expect(openTurnPromptPosition(log)).toBe(1)
  })
})
