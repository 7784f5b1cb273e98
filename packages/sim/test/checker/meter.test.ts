import { TokenMeter, type LogEvent } from '@compaction-sim/core'
import { appendixBEvents } from '@compaction-sim/fixtures'
import { describe, expect, it } from 'vitest'
import { eventItems, TornTail } from '../../src/checker/input.ts'
import { CheckerModel } from '../../src/checker/model.ts'
import { resolveRunInputs } from '../../src/checker/run-inputs.ts'

/** Folds `events` through the checker model and returns its pressure after every prefix. */
function checkerPressures(events: readonly LogEvent[]): number[] {
  const model = new CheckerModel('seed', resolveRunInputs(null, null, 'seed'))
  const out: number[] = []
  for (const x of eventItems(events, { dialect: 'seed', knownTypes: new Set() })) {
    if (x instanceof TornTail || x.event === null) throw new Error('unexpected input item')
    model.fold(x, x.event)
    out.push(model.pressure().totalTokens)
  }
  return out
}

describe('the checker\'s reference meter (§2.4: "results MUST be equal")', () => {
  it('equals core\'s TokenMeter at every prefix of Appendix B', () => {
    const events = appendixBEvents()
    const mine = checkerPressures(events)
    const list: LogEvent[] = []
    const core = new TokenMeter({ events: list }, { dialect: 'seed' })
    const theirs = events.map((e) => {
      list.push(e)
      return core.measure().totalTokens
    })
    expect(mine).toEqual(theirs)
  })

  it('reproduces the pressures Appendix B lists', () => {
    const p = checkerPressures(appendixBEvents())
    expect([p[13], p[15], p[26], p[40], p[50], p[56], p[66]]).toEqual([3230, 1521, 1513, 1922, 3762, 2277, 2286])
  })
})
