/**
 * Decision-half benchmarks (tinybench 6, run by `bench/run.ts`): range selection (§4.2) over a surface
 * of about 10,000 nodes, and pruning (§5.3) one tool result holding 1 MB of text.
 */
import { Bench } from 'tinybench'
import { EventLog, pruneContent, resolvePruneConfig, selectCompactableRange, TokenMeter, type ContentBlock } from '@compaction-sim/core'
import { medianMs, samples } from './fold.bench.ts'
import { mulberry32, syntheticLog } from './synthetic-log.ts'

/** One row: what was measured, its median in ms, and the sample count. */
export interface DecisionBenchRow {
  name: string
  medianMs: number
  samples: number
  detail: string
}

/** Runs the range-selection and pruning benchmarks. */
export async function runDecisionBench(options: { seed: number }): Promise<DecisionBenchRow[]> {
  const rows: DecisionBenchRow[] = []
  const events = syntheticLog({ seed: options.seed, eventCount: 41_000 })
  const log = EventLog.fromEvents(events, { dialect: 'seed' })
  const measurement = new TokenMeter(log, { dialect: 'seed' }).measure()
  const nodes = measurement.nodes.length
  const select = new Bench({ iterations: 200, time: 0, warmupIterations: 5, warmupTime: 0, throws: true })
  let spanNodes = 0
  select.add('select', () => {
    const range = selectCompactableRange(log, measurement, 20_480)
    spanNodes = range?.shadowedSeqs.length ?? 0
  })
  await select.run()
  rows.push({ name: `range selection, ${nodes.toLocaleString('en-US')}-node surface`, medianMs: medianMs(select, 'select'), samples: samples(select), detail: `span of ${spanNodes} nodes, R = 20,480` })

  const random = mulberry32(options.seed)
  let text = ''
  while (text.length < 1_048_576) text += String.fromCharCode(97 + Math.floor(random() * 26)).repeat(1 + Math.floor(random() * 8))
  const blocks: ContentBlock[] = [{ type: 'text', text: text.slice(0, 1_048_576) }]
  const spec = resolvePruneConfig({})
  const prune = new Bench({ iterations: 50, time: 0, warmupIterations: 3, warmupTime: 0, throws: true })
  let after = 0
  prune.add('prune', () => {
    const out = pruneContent(blocks, spec)
    after = out === null ? 0 : out.reduce((n, b) => n + (b.type === 'text' ? String(b['text']).length : 0), 0)
  })
  await prune.run()
  rows.push({ name: 'prune one 1 MB tool result', medianMs: medianMs(prune, 'prune'), samples: samples(prune), detail: `1,048,576 → ${after} code units` })
  return rows
}
