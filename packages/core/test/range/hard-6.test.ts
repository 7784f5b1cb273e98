/**
 * HARD-6 (hardened `openTurnPrompt`, packages/core/docs/hardened.md): selection never puts the open turn's
 * own user prompt into the span; without the option the protocol's §4.2 selection is unchanged.
 */
import { describe, expect, it } from 'vitest'
import type { EventDraft } from '../../src/log/events.ts'
import { openTurnPromptPosition, selectCompactableRange } from '../../src/range/select.ts'
import { assistant, marker, result, user } from '../support/events.ts'
import { appendAt, logAt, measurementOf, system } from './surface-builder.ts'

/** Turn 1 closed; turn 2 open with a runaway tool loop after its prompt (#21). */
const RUNAWAY: ReadonlyArray<readonly [number, EventDraft]> = [
  [2, system()],
  [4, user('first task')],
  [6, assistant([])],
  [8, marker('turn/end', 1)],
  [10, marker('turn/start', 2)],
  [21, user('fix the flaky screenshot test')],
  [24, assistant(['c24'])],
  [26, result('c24')],
  [28, assistant(['c28'])],
  [30, result('c28')],
  [32, assistant(['c32'])],
  [34, result('c32')],
]
const PRICES = { 2: 100, 4: 50, 6: 50, 21: 400, 24: 40, 26: 900, 28: 40, 30: 900, 32: 40, 34: 900 }

describe('HARD-6 — the open turn prompt stays in the retained tail', () => {
  const log = logAt(RUNAWAY)
  const m = measurementOf(log, PRICES)

  it('finds the open turn prompt on the surface', () => {
    expect(openTurnPromptPosition(log)).toBe(log.nodes.indexOf(21 as never))
  })

  it('faithful §4.2 (option off): overflow recovery summarizes the open prompt', () => {
    const r = selectCompactableRange(log, m, 0)
    expect(r?.shadowedSeqs).toContain(21)
  })

  it('hardened: the prompt is skipped; the heavier side (the open turn\'s work after it) is the span', () => {
    const r = selectCompactableRange(log, m, 0, { keepOpenTurnPrompt: true })
    expect(r?.shadowedSeqs).toEqual([24, 26, 28, 30])
    expect(r?.shadowedSeqs).not.toContain(21)
  })

  it('hardened: the older side wins when it carries more tokens (ties too)', () => {
    const heavyOld = measurementOf(log, { ...PRICES, 4: 5000 })
    expect(selectCompactableRange(log, heavyOld, 0, { keepOpenTurnPrompt: true })?.shadowedSeqs).toEqual([4, 6])
  })

  it('hardened under pressure: the same cut, the prompt and its tool work retained', () => {
    const r = selectCompactableRange(log, m, 1000, { keepOpenTurnPrompt: true })
    expect(r?.shadowedSeqs).not.toContain(21)
    expect(selectCompactableRange(log, m, 1000)?.shadowedSeqs).toContain(21)
  })

  it('hardened: the prompt right after the head: the span is the work after it, or null when none is closed', () => {
    const only = logAt([[2, system()], [4, user('only task')], [6, assistant(['c6'])], [8, result('c6')], [10, assistant(['c10'])], [12, result('c10')]])
    const mm = measurementOf(only, { 2: 100, 4: 500, 6: 40, 8: 900, 10: 40, 12: 900 })
    expect(selectCompactableRange(only, mm, 0)?.shadowedSeqs).toContain(4)
    expect(selectCompactableRange(only, mm, 0, { keepOpenTurnPrompt: true })?.shadowedSeqs).toEqual([6, 8])
    const bare = logAt([[2, system()], [4, user('only task')], [6, assistant(['c6'])], [8, result('c6')]])
    const mb = measurementOf(bare, { 2: 100, 4: 500, 6: 40, 8: 900 })
    expect(selectCompactableRange(bare, mb, 0)?.shadowedSeqs).toEqual([4])
    expect(selectCompactableRange(bare, mb, 0, { keepOpenTurnPrompt: true })).toBeNull()
  })

  it('between turns the option changes nothing', () => {
    const closed = logAt(RUNAWAY)
    appendAt(closed, [[40, marker('turn/end', 2)]])
    const mm = measurementOf(closed, PRICES)
    expect(openTurnPromptPosition(closed)).toBe(-1)
    expect(selectCompactableRange(closed, mm, 0, { keepOpenTurnPrompt: true })).toEqual(selectCompactableRange(closed, mm, 0))
  })
})
