/**
 * Reference core vs the released DSH engine (0.1.0-rc.8), same scenario for both subjects (issue #7 closing note):
 * the same synthetic session prefix (`synthetic-log.ts`, one seed) cut at a turn boundary near 1k, 10k and 30k
 * events, and for each size
 *
 * (a) one pressure compaction cycle (check → bracket → commit) on the prefix plus an open `turn/start`, the window
 *     set so the prefix stands at 90% of each subject's own meter — the reference through `runCycleBench`
 *     (cycle.bench.ts: `CompactionEngine` + `ScriptedAdapter`), the official engine in oracle mode
 *     (`compactIfNeeded(…, 'pressure')` on a seeded session, basic engine `auto: false`, pruner loaded);
 * (b) the per-step overhead of a one-step turn after the prefix was compacted under a window shared by every size
 *     (the 1k prefix at 90%) — the reference through `runStepBench`, the official engine through its full agent loop
 *     (automatic pre-step listener) over an agent seeded with the prefix.
 *
 * The official engine runs in-process with the recorder's machinery: a lean scripted `LlmAdapter` (no HTTP), seeded
 * UUIDs and the virtual clock (`packages/fixtures/src/record-dsh/`). Installing those replaces `Date.now` and
 * `randomUUID` for the whole process, so `bench/run.ts --dsh` runs this bench alone. Prints medians and
 * reference/official ratios (below 1 = the reference is faster); nothing is gated.
 */
import { Bench } from 'tinybench'
import type { LogEvent } from '@compaction-sim/core'
import { installDeterminism } from '@compaction-sim/fixtures/record-dsh/determinism'
import { installPromiseWithResolvers } from '@compaction-sim/fixtures/record-dsh/polyfill'
import { runCycleBench, runStepBench, STEP_ROUNDS, STEP_TURNS_PER_SAMPLE, type CycleBenchRow, type StepBenchRow } from './cycle.bench.ts'
import { medianMs } from './fold.bench.ts'
import { settleYoungGeneration } from './gc.ts'
import { syntheticLog } from './synthetic-log.ts'

/** Session sizes compared, in events (before the cut to a turn boundary). */
export const DSH_SIZES = [1_000, 10_000, 30_000] as const

/** Route the synthetic log's headers name (both subjects answer it). */
const ROUTE = { provider: 'mock', model: 'mock-4k' } as const
const PRESSURE_AT_START = 0.9
const TIME_START_MS = 1_700_000_000_000
const TIME_STEP_MS = 5

/** One size of the comparison: both subjects' medians. */
export interface DshBenchRow {
  sizeEvents: number
  cycle: { referenceMs: number; officialMs: number; referenceShadowed: number; officialShadowed: number; officialSamples: number }
  step: { referenceUs: number; officialUs: number; officialSurfaceNodes: number; referenceSurfaceNodes: number; officialSamples: number }
}

/** The synthetic log of `size` events cut after its last `turn/end` (the same cut cycle.bench.ts makes). */
function turnBoundaryPrefix(all: readonly LogEvent[], size: number): LogEvent[] {
  let cut = Math.min(size, all.length)
  while (cut > 0 && all[cut - 1]?.type !== 'turn/end') cut--
  if (cut === 0) throw new Error(`dsh bench: the synthetic log has no turn/end in its first ${size} events`)
  return all.slice(0, cut)
}

/** `prefix` plus an open `turn/start` (a pre-step: the turn is open, no step is), as cycle.bench.ts builds it. */
function withOpenTurn(prefix: readonly LogEvent[]): LogEvent[] {
  const turn = prefix.filter((e) => e.type === 'turn/end').length + 1
  const open = { seq: prefix.length, time: TIME_START_MS + TIME_STEP_MS * prefix.length, type: 'turn/start', data: { turn } } as LogEvent
  return [...prefix, open]
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((x, y) => x - y)
  const mid = sorted.length >> 1
  const value = sorted.length % 2 === 1 ? sorted[mid] : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2
  if (value === undefined) throw new Error('dsh bench: no samples')
  return value
}

/**
 * Runs (a) and (b) for both subjects at `sizes`; the reference rows come from cycle.bench.ts unchanged.
 * @throws Error when a cycle did not compact, a warm-up did not compact, or a timed official step compacted.
 */
export async function runDshBench(options: { seed: number; sizes?: readonly number[] }): Promise<DshBenchRow[]> {
  const sizes = options.sizes ?? DSH_SIZES
  installPromiseWithResolvers()
  const determinism = installDeterminism()
  const driver = await import('@compaction-sim/fixtures/record-dsh/bench-driver')
  const all = syntheticLog({ seed: options.seed, eventCount: Math.max(...sizes) })
  const prefixes = sizes.map((size) => turnBoundaryPrefix(all, size))

  const referenceCycles: CycleBenchRow[] = await runCycleBench({ seed: options.seed, sizes })
  const officialCycles: Array<{ ms: number; shadowed: number; samples: number }> = []
  for (const prefix of prefixes) {
    const events = withOpenTurn(prefix)
    const contextWindow = Math.ceil(await driver.officialTotalTokens(events) / PRESSURE_AT_START)
    let world = await driver.prepareOfficialCycle(events, contextWindow, ROUTE, determinism)
    let shadowed = 0
    const name = `official pressure cycle @ ${prefix.length}`
    const iterations = Math.max(5, Math.round(20_000 / prefix.length))
    const bench = new Bench({ iterations, time: 0, warmupIterations: 2, warmupTime: 0, throws: true })
    bench.add(name, async () => {
      shadowed = (await world.run()).shadowedNodes
    }, {
      beforeEach: async () => {
        await world.dispose()
        world = await driver.prepareOfficialCycle(events, contextWindow, ROUTE, determinism)
        settleYoungGeneration()
      },
    })
    await bench.run()
    await world.dispose()
    officialCycles.push({ ms: medianMs(bench, name), shadowed, samples: iterations })
  }

  const referenceSteps: StepBenchRow[] = await runStepBench({ seed: options.seed, sizes })
  const stepWindow = Math.ceil(await driver.officialTotalTokens(prefixes[0] ?? []) / PRESSURE_AT_START)
  const pooled = prefixes.map((): number[] => [])
  const surfaceNodes = prefixes.map(() => 0)
  for (let round = 0; round < STEP_ROUNDS; round++) {
    for (const [i, prefix] of prefixes.entries()) {
      const loop = await driver.prepareOfficialLoop(prefix, stepWindow, ROUTE, determinism)
      try {
        const compacted = loop.compactions()
        if (compacted === 0) throw new Error(`dsh bench: the ${prefix.length}-event prefix was not compacted by the warm-up turn`)
        settleYoungGeneration()
        const started = performance.now()
        await loop.turns(STEP_TURNS_PER_SAMPLE)
        pooled[i]?.push((performance.now() - started) / STEP_TURNS_PER_SAMPLE)
        if (loop.compactions() !== compacted) throw new Error('dsh bench: a timed official step compacted')
        surfaceNodes[i] = loop.surfaceNodes()
      } finally {
        await loop.dispose()
      }
    }
  }

  return prefixes.map((prefix, i) => {
    const rc = referenceCycles[i]
    const oc = officialCycles[i]
    const rs = referenceSteps[i]
    if (rc === undefined || oc === undefined || rs === undefined) throw new Error('dsh bench: missing row')
    return {
      sizeEvents: prefix.length,
      cycle: { referenceMs: rc.msPerCycle, officialMs: oc.ms, referenceShadowed: rc.shadowedNodes, officialShadowed: oc.shadowed, officialSamples: oc.samples },
      step: {
        referenceUs: rs.usPerStep, officialUs: median(pooled[i] ?? []) * 1000,
        referenceSurfaceNodes: rs.surfaceNodes, officialSurfaceNodes: surfaceNodes[i] ?? 0, officialSamples: pooled[i]?.length ?? 0,
      },
    }
  })
}

/** The printed comparison: one table per measure, ratios reference/official, and the growth of each subject. */
export function formatDshRows(rows: readonly DshBenchRow[]): string {
  const fmt = (n: number): string => n.toLocaleString('en-US')
  const lines = ['cycle: one pressure compaction (check → bracket → commit), prefix at 90% of each subject\'s window']
  lines.push('  events   reference ms   official ms   ref/official   shadowed ref/official')
  for (const r of rows) {
    const c = r.cycle
    lines.push(`${fmt(r.sizeEvents).padStart(8)}   ${c.referenceMs.toFixed(3).padStart(12)}   ${c.officialMs.toFixed(3).padStart(11)}   `
      + `${(c.referenceMs / c.officialMs).toFixed(2).padStart(11)}x   ${fmt(c.referenceShadowed)}/${fmt(c.officialShadowed)}`)
  }
  lines.push(`step: one-step turn after the prefix was compacted (shared window, ${STEP_TURNS_PER_SAMPLE} turns per sample)`)
  lines.push('  events   reference µs   official µs   ref/official   surface nodes ref/official')
  for (const r of rows) {
    const s = r.step
    lines.push(`${fmt(r.sizeEvents).padStart(8)}   ${s.referenceUs.toFixed(1).padStart(12)}   ${s.officialUs.toFixed(1).padStart(11)}   `
      + `${(s.referenceUs / s.officialUs).toFixed(2).padStart(11)}x   ${s.referenceSurfaceNodes}/${s.officialSurfaceNodes}`)
  }
  const first = rows[0]
  const last = rows[rows.length - 1]
  if (first !== undefined && last !== undefined && first !== last) {
    const growth = (a: number, b: number): string => `${(b / a).toFixed(2)}x`
    const span = `${fmt(last.sizeEvents)} / ${fmt(first.sizeEvents)}`
    lines.push(`growth ${span}: cycle reference ${growth(first.cycle.referenceMs, last.cycle.referenceMs)}, `
      + `official ${growth(first.cycle.officialMs, last.cycle.officialMs)}; step reference ${growth(first.step.referenceUs, last.step.referenceUs)}, `
      + `official ${growth(first.step.officialUs, last.step.officialUs)}`)
  }
  lines.push('note: the official sessions are seeded (they end the seed with session/end-seed, where the engine\'s '
    + '"bracket open" scan stops); a live-grown session of the same length scans further, so official step figures are a lower bound.')
  return lines.join('\n')
}
