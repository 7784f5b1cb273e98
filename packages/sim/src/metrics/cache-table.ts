/**
 * Plain-text tables of a `cache` report section (issue #9), shared by the Markdown report and the README
 * example: cells are unescaped strings (the renderer escapes them for where they land). Pure and deterministic.
 */
import type { CacheRequestRow, CacheTotals, ScenarioCache, ScenarioReport } from '../report/types.ts'

/** Header of the per-request table (§9.4 columns, then what the provider reported). */
export const CACHE_REQUEST_HEADER: readonly string[] = Object.freeze([
  'index', 'purpose', 'prompt', 'cached', 'uncached', 'written', 'divergence', 'cause', 'recomputed', 'cost (USD)',
  'reported cached', 'check',
])

/** Header of the per-scenario summary table. */
export const CACHE_SUMMARY_HEADER: readonly string[] = Object.freeze([
  'scenario', 'contract', 'requests', 'reuse', 'conversation reuse', 'compaction reuse', 'recomputed by compaction', 'summary cost',
  'tokens saved', 'net saving', 'mismatches',
])

/** A USD amount with 6 decimals (costs of single requests are fractions of a cent). */
export function usd(amount: number): string {
  return amount.toFixed(6)
}

/** A reuse ratio as a percentage with one decimal, `–` when there is nothing to divide. */
export function percent(totals: CacheTotals): string {
  return totals.reuseRatio === null ? '–' : `${(totals.reuseRatio * 100).toFixed(1)}%`
}

/** The check cell: `ok`, `MISMATCH` (the provider reported other figures), `scripted`, or `–` (nothing reported). */
function checkOf(row: CacheRequestRow): string {
  if (row.scripted === true) return 'scripted'
  if (row.mismatch === true) return 'MISMATCH'
  return row.reported === undefined ? '–' : 'ok'
}

/** One row of the per-request table. */
export function cacheRequestCells(row: CacheRequestRow): string[] {
  return [
    String(row.index), row.rejected ? `${row.purpose} (rejected)` : row.purpose, String(row.prompt), String(row.cached),
    String(row.uncached),
    String(row.written), row.divergence === null ? '–' : String(row.divergence), row.cause, String(row.recomputed), usd(row.cost),
    row.reported === undefined ? '–' : String(row.reported.cached), checkOf(row),
  ]
}

/** One row of the per-scenario summary table (`name` is the scenario's display name). */
export function cacheSummaryCells(name: string, cache: ScenarioCache): string[] {
  return [
    name, cache.deviation === 'none' ? cache.contract : `${cache.contract} (${cache.deviation})`, String(cache.overall.requests),
    percent(cache.overall), percent(cache.conversation), percent(cache.compaction), String(cache.recomputedByCompaction),
    usd(cache.summaryCost), String(cache.tokensSaved), usd(cache.netSaving), String(cache.mismatches),
  ]
}

/** The scenarios of a run that carry a cache section, with it. */
export function scenariosWithCache(scenarios: readonly ScenarioReport[]): Array<{ scenario: ScenarioReport; cache: ScenarioCache }> {
  return scenarios.flatMap((scenario) => (scenario.cache === undefined ? [] : [{ scenario, cache: scenario.cache }]))
}
