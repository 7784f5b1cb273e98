/**
 * Fold benchmarks (tinybench 6, run by `bench/run.ts`): (a) the full fold `EventLog.fromEvents` of a
 * synthetic log at each size, as events/s; (b) the per-event cost of appending the next 1,000 events to
 * a log that already holds N events. (b) must stay flat: per-step work is O(new events), not O(log
 * length) (design.md §6), so its cost at 100k may be at most 1.5× its cost at 1k.
 */
import { Bench } from 'tinybench'
import { EventLog, type EventDraft, type LogEvent } from '@compaction-sim/core'
import { settleYoungGeneration } from './gc.ts'
import { syntheticLog } from './synthetic-log.ts'

/** Sizes of the measured logs, in events. */
export const FOLD_SIZES = [1_000, 10_000, 100_000] as const
/** How many events are appended in one sample of benchmark (b). */
export const APPEND_BATCH_EVENTS = 1_000
/** The bound on (b): per-event append cost at the largest size over the smallest. */
export const APPEND_RATIO_MAX = 1.5

/** One row of the fold benchmark. Times are medians over the samples. */
export interface FoldBenchRow {
  sizeEvents: number
  foldMsMedian: number
  foldEventsPerSecond: number
  foldSamples: number
  appendUsPerEventMedian: number
  appendSamples: number
}

/** Options of `runFoldBench`. */
export interface FoldBenchOptions {
  seed: number
  sizes?: readonly number[]
}

const OPTIONS = { dialect: 'seed' } as const

/**
 * Generates one log of max(sizes) + 1,000 events (every size is a prefix of it) and measures (a) and (b)
 * at each size. The time budgets shrink with size so the whole run stays well under a minute.
 */
export async function runFoldBench(options: FoldBenchOptions): Promise<FoldBenchRow[]> {
  const sizes = options.sizes ?? FOLD_SIZES
  const largest = Math.max(...sizes)
  const all = syntheticLog({ seed: options.seed, eventCount: largest + APPEND_BATCH_EVENTS })
  EventLog.fromEvents(all, OPTIONS) // validates the whole generated log once, and freezes it
  const rows: FoldBenchRow[] = []
  for (const size of sizes) {
    const prefix = all.slice(0, size)
    const drafts = all.slice(size, size + APPEND_BATCH_EVENTS).map(toDraft)
    const iterations = Math.max(20, Math.round(2_000_000 / size))

    const fold = new Bench({ iterations, time: 0, warmupIterations: 2, warmupTime: 0, throws: true })
    fold.add(`fold ${size}`, () => {
      EventLog.fromEvents(prefix, OPTIONS)
    })
    await fold.run()
    const foldMs = medianMs(fold, `fold ${size}`)

    let log = EventLog.fromEvents(prefix, OPTIONS)
    const append = new Bench({ iterations, time: 0, warmupIterations: 2, warmupTime: 0, throws: true })
    append.add(`append ${APPEND_BATCH_EVENTS} @ ${size}`, () => {
      for (const draft of drafts) log.append(draft)
    }, {
      beforeEach: () => {
        log = EventLog.fromEvents(prefix, OPTIONS)
        settleYoungGeneration() // the re-fold's young objects are setup cost; else the first timed scavenge pays for them
      },
    })
    await append.run()
    const appendMs = medianMs(append, `append ${APPEND_BATCH_EVENTS} @ ${size}`)

    rows.push({
      sizeEvents: size,
      foldMsMedian: foldMs,
      foldEventsPerSecond: size / (foldMs / 1000),
      foldSamples: samples(fold),
      appendUsPerEventMedian: (appendMs * 1000) / APPEND_BATCH_EVENTS,
      appendSamples: samples(append),
    })
  }
  return rows
}

/** An event without its seq, ready to append. */
export function toDraft(event: LogEvent): EventDraft {
  const { seq: _seq, ...draft } = event
  return draft as EventDraft
}

/** Median latency (ms) of a finished task. */
export function medianMs(bench: Bench, name: string): number {
  const task = bench.getTask(name)
  const result = task?.result
  if (result === undefined || !('latency' in result)) throw new Error(`benchmark ${name} produced no latency statistics`)
  return result.latency.p50
}

/** Number of samples a finished bench ran. */
export function samples(bench: Bench): number {
  return bench.tasks.reduce((sum, task) => sum + task.runs, 0)
}
