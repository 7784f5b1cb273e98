/**
 * `pnpm bench`: runs the benchmarks and prints a table and the flatness ratio. Plain tinybench 6 scripts,
 * not `vitest bench` (vitest 4 bundles tinybench 2). Options: `--seed <uint32>` (default 1) picks the
 * synthetic log; `--check` exits 1 when a bounded ratio (fold append, meter, loop per-step, pressure cycle per
 * shadowed node) exceeds its bound or a `sim check` ratio falls below its target (off by default: timings on a
 * shared 2-core machine are noisy, so CI does not gate on them). The pressure cycle ratio per cycle is
 * informational: its region grows with the session. `--dsh` runs only `dsh.bench.ts` instead: the
 * reference core vs the released DSH engine on the same synthetic prefix at 1k/10k/30k events (it replaces
 * `Date.now` and `randomUUID` process-wide, so it never shares a run with the other benches). `--startup` runs only
 * `startup.bench.ts`: the built CLI's start-up against bare node, one smoke scenario and the whole catalog (child CPU).
 * `--tokenizers` runs only `tokenizers.bench.ts`: the mock provider over a 200-turn session with an `o200k_base` route vs a
 * `heuristic` one (issue #15; `--check` gates the ratio at 2x). The full run includes it too.
 */
import { parseArgs } from 'node:util'
import { APPEND_BATCH_EVENTS, APPEND_RATIO_MAX, FOLD_SIZES, runFoldBench, type FoldBenchRow } from './fold.bench.ts'
import {
  CYCLE_NODE_RATIO_MAX, CYCLE_SIZES, runCycleBench, runStepBench, STEP_RATIO_MAX, STEP_SIZES, STEP_TURNS_PER_SAMPLE,
} from './cycle.bench.ts'
import { CHECK_RATIO_MIN, formatCheckRows, runCheckBench } from './check.bench.ts'
import { runDecisionBench } from './decisions.bench.ts'
import { runMeterBench } from './meter.bench.ts'
import { formatStartupRows, runStartupBench } from './startup.bench.ts'
import { formatTokenizerResult, runTokenizerBench, TOKENIZER_RATIO_MAX } from './tokenizers.bench.ts'

const { values } = parseArgs({
  args: process.argv.slice(2),
  options: {
    seed: { type: 'string', default: '1' }, check: { type: 'boolean', default: false }, dsh: { type: 'boolean', default: false },
    startup: { type: 'boolean', default: false }, tokenizers: { type: 'boolean', default: false },
  },
  strict: true,
})
const seed = Number(values.seed)
if (!Number.isInteger(seed) || seed < 0 || seed > 0xffffffff) {
  process.stderr.write(`bench: --seed must be a uint32, got ${values.seed}\n`)
  process.exit(2)
}

process.stdout.write(`SEED=${seed} node=${process.version}\n`)
const startedMs = performance.now()
if (values.dsh) {
  const { formatDshRows, runDshBench } = await import('./dsh.bench.ts')
  process.stdout.write(`\nreference core vs released DSH engine 0.1.0-rc.8, same synthetic prefix (ratios reference/official)\n`)
  process.stdout.write(`${formatDshRows(await runDshBench({ seed }))}\ntotal ${((performance.now() - startedMs) / 1000).toFixed(1)} s\n`)
  process.exit(0)
}
const startupTitle = '\nbuilt CLI: child CPU time (user + sys) of sim start-up, one smoke scenario and the whole catalog\n'
if (values.startup) {
  process.stdout.write(`${startupTitle}${formatStartupRows(runStartupBench())}\ntotal ${((performance.now() - startedMs) / 1000).toFixed(1)} s\n`)
  process.exit(0)
}
const tokenizerTitle = '\nprovider tokenizers: the mock provider over one 200-turn session, o200k_base route vs heuristic route (issue #15)\n'
if (values.tokenizers) {
  const result = await runTokenizerBench({ seed })
  process.stdout.write(`${tokenizerTitle}${formatTokenizerResult(result)}\ntotal ${((performance.now() - startedMs) / 1000).toFixed(1)} s\n`)
  if (values.check && result.ratio > TOKENIZER_RATIO_MAX) process.exitCode = 1
  process.exit()
}
const rows = await runFoldBench({ seed })
process.stdout.write(`\n${formatTable(rows)}\n`)

const first = rows[0]
const last = rows[rows.length - 1]
if (first !== undefined && last !== undefined && first !== last) {
  const ratio = last.appendUsPerEventMedian / first.appendUsPerEventMedian
  const verdict = ratio <= APPEND_RATIO_MAX ? 'ok' : 'OVER BOUND'
  process.stdout.write(
    `\nappend ratio ${fmtInt(last.sizeEvents)} / ${fmtInt(first.sizeEvents)}: ${ratio.toFixed(2)}x `
    + `(bound ${APPEND_RATIO_MAX}x) ${verdict}\n`,
  )
  if (values.check && ratio > APPEND_RATIO_MAX) process.exitCode = 1
}
const meterRows = await runMeterBench({ seed, sizes: FOLD_SIZES })
process.stdout.write('\nmeter: append + measure() per event (next 1,000 events)\n')
for (const r of meterRows) process.stdout.write(`${fmtInt(r.sizeEvents).padStart(8)} events  ${r.usPerAppendAndMeasure.toFixed(3)} µs/event  (${r.samples} samples)\n`)
const m0 = meterRows[0]
const mN = meterRows[meterRows.length - 1]
if (m0 !== undefined && mN !== undefined && m0 !== mN) {
  const ratio = mN.usPerAppendAndMeasure / m0.usPerAppendAndMeasure
  process.stdout.write(`meter ratio ${fmtInt(mN.sizeEvents)} / ${fmtInt(m0.sizeEvents)}: ${ratio.toFixed(2)}x (bound ${APPEND_RATIO_MAX}x) ${ratio <= APPEND_RATIO_MAX ? 'ok' : 'OVER BOUND'}\n`)
  if (values.check && ratio > APPEND_RATIO_MAX) process.exitCode = 1
}
const cycleRows = await runCycleBench({ seed, sizes: CYCLE_SIZES })
process.stdout.write('\ncycle: one pressure compaction (check → bracket → commit), window at 90% pressure, CPU time\n')
for (const r of cycleRows) {
  process.stdout.write(
    `${fmtInt(r.sizeEvents).padStart(8)} events  ${r.msPerCycle.toFixed(3)} ms/cycle  ${r.usPerShadowedNode.toFixed(2)} µs/shadowed node  `
    + `(${fmtInt(r.shadowedNodes)} nodes shadowed, ${r.surfaceNodes} left; ${r.samples} samples)\n`,
  )
}
const c0 = cycleRows[0]
const cN = cycleRows[cycleRows.length - 1]
if (c0 !== undefined && cN !== undefined && c0 !== cN) {
  const sizes = `${fmtInt(cN.sizeEvents)} / ${fmtInt(c0.sizeEvents)}`
  const perCycle = cN.msPerCycle / c0.msPerCycle
  const perNode = cN.usPerShadowedNode / c0.usPerShadowedNode
  const verdict = perNode <= CYCLE_NODE_RATIO_MAX ? 'ok' : 'OVER BOUND'
  process.stdout.write(`cycle ratio ${sizes}: ${perCycle.toFixed(2)}x per cycle (informational), ${perNode.toFixed(2)}x per shadowed node `
    + `(bound ${CYCLE_NODE_RATIO_MAX}x) ${verdict}\n`)
  if (values.check && perNode > CYCLE_NODE_RATIO_MAX) process.exitCode = 1
}
const stepRows = await runStepBench({ seed, sizes: STEP_SIZES })
process.stdout.write(`\nloop: one-step turn (pre-step check, request assembly, reply appends), ${STEP_TURNS_PER_SAMPLE} turns per sample\n`)
for (const r of stepRows) {
  const detail = `${r.surfaceNodes} surface nodes; ${r.samples} samples`
  process.stdout.write(`${fmtInt(r.sizeEvents).padStart(8)} events  ${r.usPerStep.toFixed(1)} µs/step  (${detail})\n`)
}
const s0 = stepRows[0]
const sN = stepRows[stepRows.length - 1]
if (s0 !== undefined && sN !== undefined && s0 !== sN) {
  const ratio = sN.usPerStep / s0.usPerStep
  const verdict = ratio <= STEP_RATIO_MAX ? 'ok' : 'OVER BOUND'
  const sizes = `${fmtInt(sN.sizeEvents)} / ${fmtInt(s0.sizeEvents)}`
  process.stdout.write(`step ratio ${sizes}: ${ratio.toFixed(2)}x (bound ${STEP_RATIO_MAX}x) ${verdict}\n`)
  if (values.check && ratio > STEP_RATIO_MAX) process.exitCode = 1
}
process.stdout.write('\ndecisions\n')
for (const r of await runDecisionBench({ seed })) process.stdout.write(`  ${r.name}: ${r.medianMs.toFixed(3)} ms p50 (${r.samples} samples; ${r.detail})\n`)
const tokenizerResult = await runTokenizerBench({ seed })
process.stdout.write(`${tokenizerTitle}${formatTokenizerResult(tokenizerResult)}\n`)
if (values.check && tokenizerResult.ratio > TOKENIZER_RATIO_MAX) process.exitCode = 1
const checkRows = await runCheckBench({ seed })
process.stdout.write(`\nsim check vs a JSON.parse loop (fastest of 3; issue #17 target ≥ ${CHECK_RATIO_MIN * 100}% end to end)\n${formatCheckRows(checkRows)}\n`)
for (const r of checkRows) {
  // The target is end to end (whole processes, CLI start-up included); the in-process ratio is the checker alone.
  const gated = r.e2e?.ratio ?? r.ratio
  const verdict = gated >= CHECK_RATIO_MIN ? 'ok' : 'UNDER TARGET'
  const e2e = r.e2e === null ? '' : `end to end ${(r.e2e.ratio * 100).toFixed(1)}%, `
  process.stdout.write(`check ratio ${r.kind} ${fmtInt(r.events)}: ${e2e}in process ${(r.ratio * 100).toFixed(1)}% `
    + `(cpu ${(r.cpuRatio * 100).toFixed(1)}%) ${verdict}\n`)
  if (values.check && gated < CHECK_RATIO_MIN) process.exitCode = 1
}
process.stdout.write(`${startupTitle}${formatStartupRows(runStartupBench())}\n`)
process.stdout.write(`total ${((performance.now() - startedMs) / 1000).toFixed(1)} s\n`)

function formatTable(table: readonly FoldBenchRow[]): string {
  const header = ['events', 'fold ms (p50)', 'fold events/s', `append µs/event (next ${fmtInt(APPEND_BATCH_EVENTS)}, p50)`, 'samples']
  const body = table.map((r) => [
    fmtInt(r.sizeEvents),
    r.foldMsMedian.toFixed(2),
    fmtInt(Math.round(r.foldEventsPerSecond)),
    r.appendUsPerEventMedian.toFixed(3),
    `${r.foldSamples}/${r.appendSamples}`,
  ])
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((row) => (row[i] ?? '').length)))
  const line = (cells: readonly string[]): string => cells.map((c, i) => c.padStart(widths[i] ?? 0)).join('  ')
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...body.map(line)].join('\n')
}

function fmtInt(n: number): string {
  return n.toLocaleString('en-US')
}
