/**
 * Assembles `sweep.json` (issue #10) from the grid, the scenarios and the finished runs: per-cell sums, the Pareto
 * front per window and a recommendation per window. A pure function of its inputs with cells in grid order, so
 * the document is byte-identical whatever the worker count, and `sim report merge` of shards rebuilds exactly
 * the unsharded document by calling the same `finishSweep`.
 */
import { createHash } from 'node:crypto'
import { TOOL_VERSION } from '../run/run-scenario.ts'
import { round } from './job.ts'
import {
  SWEEP_REPORT_SCHEMA_VERSION,
  type SweepCell, type SweepCellMetrics, type SweepGrid, type SweepRecommendation, type SweepReport, type SweepRunMetrics,
} from './types.ts'
import { plural } from '../plural.ts'

/** Deterministic id of a sweep: a hash of its grid, scenarios and seeds. */
export function sweepIdOf(grid: SweepGrid, scenarios: readonly string[]): string {
  return `sweep-${createHash('sha256').update(JSON.stringify({ grid, scenarios })).digest('hex').slice(0, 10)}`
}

/**
 * Sums `runs` into a cell's metrics (runs in job order). `probeRetention` is there when some run reports probes;
 * `cacheReuse` under the `retention` objective or a `profile` axis (`profiled`), which also adds the issue #19 sums.
 */
export function cellMetricsOf(runs: readonly SweepRunMetrics[], objective?: SweepGrid['objective'], profiled = false): SweepCellMetrics {
  const sum = (pick: (r: SweepRunMetrics) => number): number => runs.reduce((n, r) => n + pick(r), 0)
  const factsTotal = sum((r) => r.factsTotal)
  const promptTokens = sum((r) => r.promptTokens)
  const cachedTokens = sum((r) => r.cachedTokens)
  const costs = runs.map((r) => r.cost)
  return {
    runs: runs.length,
    runsNotPassed: runs.filter((r) => r.status !== 'passed').length,
    turns: sum((r) => r.turns),
    compactions: sum((r) => r.compactions),
    prunes: sum((r) => r.prunes),
    failedBrackets: sum((r) => r.failedBrackets),
    overflowIncidents: sum((r) => r.overflowIncidents),
    pressureMax: Math.max(0, ...runs.map((r) => r.pressureMax)),
    pressureMean: runs.length === 0 ? 0 : round(sum((r) => r.pressureMean) / runs.length),
    summaryPromptTokens: sum((r) => r.summaryPromptTokens),
    promptTokens,
    cachedTokens,
    uncachedTokens: promptTokens - cachedTokens,
    cost: costs.some((c) => c === null) ? null : round(costs.reduce<number>((n, c) => n + (c ?? 0), 0), 8),
    violations: sum((r) => r.violations),
    retention: factsTotal === 0 ? null : round(sum((r) => r.factsKept) / factsTotal),
    ...probeRetentionOf(runs),
    ...(objective === 'retention' || profiled ? { cacheReuse: promptTokens === 0 ? null : round(cachedTokens / promptTokens) } : {}),
    ...(profiled ? profileSums(runs) : {}),
  }
}

/** The `profile`-axis sums of a cell (issue #19): rejections, summary calls and compactions per 100 turns. */
function profileSums(runs: readonly SweepRunMetrics[]): Pick<SweepCellMetrics, 'providerRejections' | 'summaryCalls' | 'turnsCompleted' | 'compactionsPer100Turns'> {
  const turns = runs.reduce((n, r) => n + r.turns, 0)
  const compactions = runs.reduce((n, r) => n + r.compactions, 0)
  return {
    providerRejections: runs.reduce((n, r) => n + (r.providerRejections ?? 0), 0),
    summaryCalls: runs.reduce((n, r) => n + (r.summaryCalls ?? 0), 0),
    turnsCompleted: runs.reduce((n, r) => n + (r.turnsCompleted ?? 0), 0),
    compactionsPer100Turns: turns === 0 ? null : round((100 * compactions) / turns, 2),
  }
}

function probeRetentionOf(runs: readonly SweepRunMetrics[]): Pick<SweepCellMetrics, 'probeRetention'> {
  if (!runs.some((r) => r.probesPlanted !== undefined)) return {}
  const planted = runs.reduce((n, r) => n + (r.probesPlanted ?? 0), 0)
  const visible = runs.reduce((n, r) => n + (r.probesVisible ?? 0), 0)
  return { probeRetention: planted === 0 ? null : round(visible / planted) }
}

/** The retention a cell is ranked by: its probe retention when it has one, else its fact retention, else 0. */
export function retentionScore(m: SweepCellMetrics): number {
  return m.probeRetention ?? m.retention ?? 0
}

/** Input of `finishSweep`: cells without the Pareto marks (any order; they are sorted by `index`). */
export interface SweepParts {
  grid: SweepGrid
  scenarios: string[]
  cells: SweepCell[]
  complete: boolean
  shard?: { index: number; count: number }
}

/** The cost a cell is ranked by under `basis`. */
function costOf(m: SweepCellMetrics, basis: SweepReport['costBasis']): number {
  return basis === 'cost' ? m.cost ?? Number.POSITIVE_INFINITY : m.uncachedTokens
}

/** Builds the document: sorts cells, marks the Pareto front of each window, recommends one cell per window. */
export function finishSweep(parts: SweepParts): SweepReport {
  const cells = [...parts.cells].sort((a, b) => a.index - b.index).map((c): SweepCell => {
    const { pareto: _drop, ...rest } = c
    return rest
  })
  const ran = cells.filter((c) => c.status === 'ran' && c.metrics !== undefined)
  const costBasis = ran.length > 0 && ran.every((c) => c.metrics?.cost !== null) ? 'cost' : 'uncachedTokens'
  const recommendations: SweepRecommendation[] = []
  for (const contextWindow of parts.grid.contextWindow) {
    const pool = ran.filter((c) => c.policy.contextWindow === contextWindow && c.metrics?.violations === 0
      && (c.runs ?? []).every((r) => r.status !== 'error' && r.status !== 'skipped'))
    const front = paretoFront(pool, costBasis, parts.grid.objective)
    for (const c of front) c.pareto = true
    recommendations.push(parts.grid.objective === 'retention'
      ? recommendRetention(contextWindow, front, pool, costBasis, parts.grid.compactionsPerTurnMax)
      : recommend(contextWindow, front, pool, costBasis, parts.grid.compactionsPerTurnMax))
  }
  const report: SweepReport = {
    schemaVersion: SWEEP_REPORT_SCHEMA_VERSION,
    tool: { name: 'compaction-sim', version: TOOL_VERSION },
    sweepId: sweepIdOf(parts.grid, parts.scenarios),
    grid: parts.grid,
    scenarios: parts.scenarios,
    costBasis,
    complete: parts.complete,
    ...(parts.shard === undefined ? {} : { shard: parts.shard }),
    summary: {
      cells: cells.length,
      ran: ran.length,
      skipped: cells.filter((c) => c.status === 'skipped').length,
      runs: ran.reduce((n, c) => n + (c.metrics?.runs ?? 0), 0),
      violations: ran.reduce((n, c) => n + (c.metrics?.violations ?? 0), 0),
      pareto: cells.filter((c) => c.pareto === true).length,
    },
    cells,
    recommendations,
  }
  return report
}

/**
 * Cells not dominated in (cost, compactions, overflow incidents): no other is ≤ in all and < in one. Under the
 * `retention` objective (issue #20) two more axes count, maximised: retention (`retentionScore`) and cache reuse.
 */
export function paretoFront(cells: readonly SweepCell[], basis: SweepReport['costBasis'], objective?: SweepGrid['objective']): SweepCell[] {
  const key = (c: SweepCell): number[] => {
    const m = c.metrics as SweepCellMetrics
    const base = [costOf(m, basis), m.compactions, m.overflowIncidents]
    return objective === 'retention' ? [...base, -retentionScore(m), -(m.cacheReuse ?? 0)] : base
  }
  return cells.filter((c) => {
    const a = key(c)
    return !cells.some((o) => {
      const b = key(o)
      return b.every((v, i) => v <= (a[i] ?? 0)) && b.some((v, i) => v < (a[i] ?? 0))
    })
  })
}

/**
 * The recommendation of one window under the `retention` objective (issue #20): among the Pareto cells with no
 * overflow incident, no failed bracket and at most `perTurnMax` compactions per turn, the one that keeps the most
 * (`retentionScore`), ties to the cheaper one; the reasoning lists what every Pareto point keeps and what it costs.
 */
function recommendRetention(
  contextWindow: number, front: readonly SweepCell[], pool: readonly SweepCell[], basis: SweepReport['costBasis'], perTurnMax: number,
): SweepRecommendation {
  const m = (c: SweepCell): SweepCellMetrics => c.metrics as SweepCellMetrics
  const fmt = (c: SweepCell): string => (basis === 'cost' ? `cost ${(m(c).cost ?? 0).toFixed(4)}` : `${m(c).uncachedTokens} uncached prompt tokens`)
  const pct = (c: SweepCell): string => `${Math.round(retentionScore(m(c)) * 1000) / 10}%`
  if (front.length === 0) {
    return { contextWindow, cell: null, policy: null, reasoning: `no cell of window ${contextWindow} ran every run without an error or an invariant violation` }
  }
  const order = (a: SweepCell, b: SweepCell): number => retentionScore(m(b)) - retentionScore(m(a))
    || costOf(m(a), basis) - costOf(m(b), basis) || m(a).compactions - m(b).compactions || a.index - b.index
  const qualified = front.filter((c) => m(c).overflowIncidents === 0 && m(c).failedBrackets === 0 && m(c).compactions <= perTurnMax * m(c).turns)
  const best = [...(qualified.length > 0 ? qualified : front)].sort(order)[0] as SweepCell
  const others = [...front].filter((c) => c !== best).sort(order).map((c) => `${c.id} keeps ${pct(c)} at ${fmt(c)}`)
  return {
    contextWindow, cell: best.id, policy: best.policy,
    reasoning: `${best.id}: keeps the most retention probes (${pct(best)}) at ${fmt(best)}, ${plural(m(best).compactions, 'compaction')} `
      + `in ${plural(m(best).turns, 'turn')}, cache reuse ${m(best).cacheReuse === null || m(best).cacheReuse === undefined ? 'n/a' : `${Math.round((m(best).cacheReuse ?? 0) * 1000) / 10}%`}`
      + `${qualified.length > 0 ? '' : ' (no Pareto point is free of overflow incidents, failed brackets and over-frequent compaction)'}`
      + `${others.length === 0 ? '; the only Pareto point' : `; other Pareto points: ${others.join('; ')}`}; ${plural(pool.length, 'clean cell')} considered`,
  }
}

/**
 * The recommendation of one window: the cheapest Pareto cell with no overflow incident, no failed bracket and
 * at most `perTurnMax` compactions per turn; ties go to fewer compactions, higher retention, then grid order.
 * When none qualifies, the Pareto cell with the fewest overflow incidents, and the reasoning says so.
 */
function recommend(
  contextWindow: number, front: readonly SweepCell[], pool: readonly SweepCell[], basis: SweepReport['costBasis'], perTurnMax: number,
): SweepRecommendation {
  const m = (c: SweepCell): SweepCellMetrics => c.metrics as SweepCellMetrics
  const unit = basis === 'cost' ? 'cost' : 'uncached prompt tokens'
  const fmt = (c: SweepCell): string => `${basis === 'cost' ? (m(c).cost ?? 0).toFixed(4) : m(c).uncachedTokens}`
  if (front.length === 0) {
    const reasoning = `no cell of window ${contextWindow} ran every run without an error or an invariant violation`
    return { contextWindow, cell: null, policy: null, reasoning }
  }
  const order = (a: SweepCell, b: SweepCell): number =>
    costOf(m(a), basis) - costOf(m(b), basis) || m(a).compactions - m(b).compactions
    || (m(b).retention ?? 0) - (m(a).retention ?? 0) || a.index - b.index
  const bounded = (c: SweepCell): boolean => m(c).compactions <= perTurnMax * m(c).turns
  const qualified = front.filter((c) => m(c).overflowIncidents === 0 && m(c).failedBrackets === 0 && bounded(c)).sort(order)
  const best = qualified[0]
  if (best !== undefined) {
    const cheapest = [...front].sort(order)[0] as SweepCell
    const dear = m(cheapest)
    const note = cheapest === best ? 'it is also the cheapest Pareto point' : `cheaper Pareto point ${cheapest.id} (${fmt(cheapest)}) `
      + `is excluded: ${plural(dear.overflowIncidents, 'overflow incident')}, ${plural(dear.failedBrackets, 'failed bracket')}, `
      + `${plural(dear.compactions, 'compaction')} in ${plural(dear.turns, 'turn')}`
    return {
      contextWindow, cell: best.id, policy: best.policy,
      reasoning: `${best.id}: lowest ${unit} (${fmt(best)}) among the ${qualified.length} of ${plural(front.length, 'Pareto point')} `
        + `with 0 overflow incidents, 0 failed brackets and at most ${perTurnMax} compactions per turn `
        + `(${m(best).compactions} in ${m(best).turns} turns, retention ${m(best).retention ?? 'n/a'}); ${note}; `
        + `${plural(pool.length, 'clean cell')} considered`,
    }
  }
  const fallback = [...front].sort((a, b) => m(a).overflowIncidents - m(b).overflowIncidents || order(a, b))[0] as SweepCell
  return {
    contextWindow, cell: fallback.id, policy: fallback.policy,
    reasoning: `${fallback.id}: no Pareto point has 0 overflow incidents, 0 failed brackets and at most ${perTurnMax} `
      + `compactions per turn; this one has the fewest overflow incidents (${m(fallback).overflowIncidents}) at ${unit} `
      + `${fmt(fallback)} — consider a larger window`,
  }
}
