/**
 * Meter benchmark (tinybench 6, run by `bench/run.ts`): the per-event cost of appending the next 1,000
 * events to a log of N events and measuring pressure after each append, as the pre-step check does.
 * The meter is incremental (§2.4), so this must stay flat: at 100k events at most 1.5× its cost at 1k
 * (design.md §6; the official engine grows ~10× over that range).
 */
import { Bench } from 'tinybench'
import { EventLog, TokenMeter } from '@compaction-sim/core'
import { APPEND_BATCH_EVENTS, medianMs, samples, toDraft } from './fold.bench.ts'
import { settleYoungGeneration } from './gc.ts'
import { syntheticLog } from './synthetic-log.ts'

/** One row of the meter benchmark. */
export interface MeterBenchRow {
  sizeEvents: number
  usPerAppendAndMeasure: number
  samples: number
}

const OPTIONS = { dialect: 'seed' } as const

/** Measures append + `measure()` per event after N events, for each size. */
export async function runMeterBench(options: { seed: number; sizes: readonly number[] }): Promise<MeterBenchRow[]> {
  const largest = Math.max(...options.sizes)
  const all = syntheticLog({ seed: options.seed, eventCount: largest + APPEND_BATCH_EVENTS })
  EventLog.fromEvents(all, OPTIONS)
  const rows: MeterBenchRow[] = []
  for (const size of options.sizes) {
    const prefix = all.slice(0, size)
    const drafts = all.slice(size, size + APPEND_BATCH_EVENTS).map(toDraft)
    let log = EventLog.fromEvents(prefix, OPTIONS)
    let meter = new TokenMeter(log, OPTIONS)
    const name = `append+measure ${APPEND_BATCH_EVENTS} @ ${size}`
    const bench = new Bench({ iterations: Math.max(20, Math.round(1_000_000 / size)), time: 0, warmupIterations: 2, warmupTime: 0, throws: true })
    bench.add(name, () => {
      for (const draft of drafts) {
        log.append(draft)
        if (meter.measure().totalTokens < 0) throw new Error('negative pressure')
      }
    }, {
      beforeEach: () => {
        log = EventLog.fromEvents(prefix, OPTIONS)
        meter = new TokenMeter(log, OPTIONS)
        meter.measure()
        settleYoungGeneration()
      },
    })
    await bench.run()
    rows.push({ sizeEvents: size, usPerAppendAndMeasure: (medianMs(bench, name) * 1000) / APPEND_BATCH_EVENTS, samples: samples(bench) })
  }
  return rows
}
