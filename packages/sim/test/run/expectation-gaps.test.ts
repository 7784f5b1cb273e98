/**
 * Dialect gaps (`Subject.expectationGaps`, §14): an event pattern or count the subject's log cannot hold is reported
 * `not evaluated (<rule>)`, never fails, and does not move the ordered event match; everything else is judged.
 */
import type { LogEvent } from '@compaction-sim/core'
import { describe, expect, it } from 'vitest'
import { matchEvents, type ExpectationGaps } from '../../src/run/expectations.ts'
import type { ResolvedEventPattern } from '../../src/scenario/resolve.ts'

const event = (seq: number, type: string, data: Record<string, unknown> = {}): LogEvent => ({ seq, time: 0, type, data } as unknown as LogEvent)
const pattern = (type: string, extra: Partial<ResolvedEventPattern> = {}): ResolvedEventPattern =>
  ({ type, data: null, text: null, absent: false, ...extra } as ResolvedEventPattern)

const noSummaryErrors: ExpectationGaps = {
  event: (p) => (p.type === 'compaction/summary-error' ? '§14 D-07: never written' : null),
  count: () => null,
}

describe('matchEvents with dialect gaps', () => {
  const log = [event(0, 'compaction/start'), event(1, 'compaction/end', { error: 'x' }), event(2, 'turn/end')]
  const patterns = [pattern('compaction/start'), pattern('compaction/summary-error'), pattern('compaction/end'), pattern('turn/end')]

  it('without gaps the missing summary-error fails and the rest is not reached', () => {
    expect(matchEvents(patterns, log).map((r) => [r.name, r.passed])).toEqual([
      ['events[0]', true], ['events[1]', false], ['events[2]', false], ['events[3]', false],
    ])
  })

  it('with the gap it is not evaluated (naming the rule), and the later patterns still match in order', () => {
    const results = matchEvents(patterns, log, noSummaryErrors)
    expect(results.map((r) => [r.name, r.passed, r.actual, r.notEvaluated])).toEqual([
      ['events[0]', true, 'seq 0', undefined],
      ['events[1]', true, 'not evaluated (§14 D-07: never written)', 'dialect'],
      ['events[2]', true, 'seq 1', undefined],
      ['events[3]', true, 'seq 2', undefined],
    ])
  })

  it('a gap does not excuse the patterns around it: a wrong later pattern still fails', () => {
    const results = matchEvents([...patterns, pattern('compaction/summary')], log, noSummaryErrors)
    expect(results.at(-1)).toMatchObject({ name: 'events[4]', passed: false })
  })
})
