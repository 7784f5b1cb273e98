/**
 * Range selection (§4.2) and explicit-region validation (§3.8) edges the worked examples leave open: the
 * head rule per dialect with a system message present, the full text of every rejection (the user reads
 * it), and the corrupt-surface guard, each built inside the test that judges it.
 */
import { describe, expect, it } from 'vitest'
import { InvariantError } from '../../src/errors.ts'
import { RangeSelectionError, RegionError, selectCompactableRange, systemHeadCount, validateExplicitRegion } from '../../src/range/select.ts'
import { ToolPairingError } from '../../src/surface/tool-pairing.ts'
import { assistant, marker, replacement, result, user } from '../support/events.ts'
import { appendAt, logAt, measurementOf, system } from './surface-builder.ts'

/** The error `fn` throws (fails the test when it returns). */
function thrown(fn: () => unknown): Error {
  try {
    fn()
  } catch (err) {
    return err as Error
  }
  throw new Error('did not throw')
}

describe('§4.2 head position h with a system message at position 0', () => {
  it('seed: the system head is position 0 and never compacted (h = 1)', () => {
    const log = logAt([[1, system()], [2, user('a')], [3, user('b')]])
    expect(systemHeadCount(log)).toBe(1)
    expect(selectCompactableRange(log, measurementOf(log, { 1: 5, 2: 5, 3: 5 }), 0)).toEqual({
      start: 2, end: 2, shadowedSeqs: [2], startPosition: 1, endPosition: 1,
    })
  })

  it('an empty surface has no head', () => {
    expect(systemHeadCount(logAt([]))).toBe(0)
  })
})

describe('selectCompactableRange rejections, in full', () => {
  it('a budget that is not a non-negative integer', () => {
    const log = logAt([[1, user('a')], [2, user('b')]])
    const err = thrown(() => selectCompactableRange(log, measurementOf(log, { 1: 5, 2: 5 }), 1.5))
    expect(err).toBeInstanceOf(InvariantError)
    expect(err.message).toContain('retainTokens must be a non-negative integer, got 1.5')
  })

  it('a measurement with fewer nodes than the surface names the missing one as none', () => {
    const log = logAt([[1, user('a')], [2, user('b')]])
    const stale = measurementOf(logAt([[1, user('a')]]), { 1: 5 })
    const err = thrown(() => selectCompactableRange(log, stale, 0))
    expect(err).toBeInstanceOf(RangeSelectionError)
    expect(err).toMatchObject({ name: 'RangeSelectionError', code: 'METER_SURFACE_MISMATCH' })
    expect(err.message).toBe('meter/surface mismatch at position 1: the measurement (log revision 2) has node none, the surface has 2')
  })

  it('a measurement with more nodes than the surface', () => {
    const log = logAt([[1, user('a')]])
    const longer = measurementOf(logAt([[1, user('a')], [2, user('b')]]), { 1: 5, 2: 5 })
    expect(thrown(() => selectCompactableRange(log, longer, 0)).message)
      .toBe('meter/surface mismatch at position 1: the measurement (log revision 3) has node 2, the surface has none')
  })

  it('a corrupt surface (a result whose call was shadowed) names where the balance goes negative', () => {
    const log = logAt([[1, user('a')], [2, assistant(['x'])], [3, result('x')], [4, user('b')]])
    log.append(replacement(2, 2, [2]))
    const err = thrown(() => selectCompactableRange(log, measurementOf(log, { 1: 5, 5: 5, 3: 5, 4: 5 }), 0))
    expect(err).toBeInstanceOf(ToolPairingError)
    expect(err.message).toContain('tool pairing goes negative after node 3 at position 2 (a tool result without an open call)')
  })

  it('a corrupt surface fails loudly even when the whole history fits the budget (no cut is ever examined)', () => {
    const log = logAt([[1, user('a')], [2, assistant(['x'])], [3, result('x')], [4, user('b')]])
    log.append(replacement(2, 2, [2]))
    const err = thrown(() => selectCompactableRange(log, measurementOf(log, { 1: 5, 5: 5, 3: 5, 4: 5 }), 1_000_000))
    expect(err).toBeInstanceOf(ToolPairingError)
    expect(err).toMatchObject({ code: 'NEGATIVE_BALANCE' })
    expect(err.message).toContain('tool pairing goes negative after node 3 at position 2 (a tool result without an open call)')
  })
})

describe('validateExplicitRegion rejections, in full (§3.8)', () => {
  const EXAMPLE: Parameters<typeof logAt>[0] = [
    [2, system()], [4, user('fix the test')], [7, assistant(['c7'])], [9, result('c7')], [12, user('and the docs')],
  ]
  const messageOf = (log: ReturnType<typeof logAt>, start: number, end: number): string => {
    const err = thrown(() => validateExplicitRegion(log, start, end))
    expect(err).toBeInstanceOf(RegionError)
    expect(err.name).toBe('RegionError')
    return err.message
  }

  it('each rule states its seqs and positions', () => {
    const log = logAt(EXAMPLE)
    expect(messageOf(log, 99, 12)).toBe('start seq 99 not found in surface')
    expect(messageOf(log, 4, 99)).toBe('end seq 99 not found in surface')
    expect(messageOf(log, 12, 4)).toBe('start seq 12 at position 4 is after end seq 4 at position 1')
    expect(messageOf(log, 9, 12)).toBe('the cut before start seq 9 (position 3) is not a balanced boundary')
    expect(messageOf(log, 4, 7)).toBe('the cut after end seq 7 (position 2) is not a balanced boundary')
    expect(messageOf(log, 2, 9)).toBe('the span 2…9 includes the system head at position 0')
  })

  it('a shadowed seq says so, for the start and for the end', () => {
    const log = logAt(EXAMPLE)
    appendAt(log, [[20, replacement(4, 9, [4, 7, 9])]])
    expect(messageOf(log, 4, 12)).toBe('start seq 4 not found in surface (it was shadowed)')
    expect(messageOf(log, 12, 9)).toBe('end seq 9 not found in surface (it was shadowed)')
  })

  it('busy and no open turn', () => {
    const log = logAt(EXAMPLE)
    log.append({ time: 0, type: 'compaction/start', data: { compactionId: 'cmp-1' as never, turn: 1 } })
    expect(messageOf(log, 4, 12)).toBe('compaction cmp-1 (started at seq 13) is still open')
    const closed = logAt(EXAMPLE)
    closed.append(marker('turn/end'))
    expect(messageOf(closed, 4, 12)).toBe('no open turn: compactRegion runs inside a turn')
  })
})
