/**
 * The faithful-vs-hardened comparison of a sweep with a `profile` axis (issue #19), shared by the Markdown and
 * HTML forms: the cells are grouped by their policy without the profile, and each group gives one row per
 * scenario (and a total row) with the metrics of every profile side by side. Read from the document
 * only, so it is as deterministic as the document.
 */
import type { SweepCell, SweepProfile, SweepReport, SweepRunMetrics } from './types.ts'
import { hardId } from '@compaction-sim/core'
import { round } from './job.ts'

/** The issue #19 metrics of one scenario (or of a total) under one profile; null when the run did not happen. */
export interface ProfileFigures {
  status: SweepRunMetrics['status'] | 'mixed'
  /** Why a run errored or was skipped (e.g. the scenario does not load under the profile). */
  reason?: string
  turns: number
  turnsCompleted: number
  providerRejections: number
  overflowIncidents: number
  summaryCalls: number
  compactionsPer100Turns: number | null
  cacheReuse: number | null
  cost: number | null
  pressureMax: number
}

/** One row: a scenario (`file`) or the total (`file` null), with figures per profile of the grid. */
export interface ProfileRow {
  file: string | null
  figures: Partial<Record<SweepProfile, ProfileFigures | null>>
}

/** One group: the cells of one policy that differ only in their profile. */
export interface ProfileGroup {
  /** The shared part of the cell ids (`w8000-t0.8-r0.16-p1`). */
  base: string
  rows: ProfileRow[]
}

/** The figures of `runs` summed (a single run gives its own). */
function figuresOf(runs: readonly SweepRunMetrics[]): ProfileFigures {
  const sum = (pick: (r: SweepRunMetrics) => number): number => runs.reduce((n, r) => n + pick(r), 0)
  const turns = sum((r) => r.turns)
  const prompt = sum((r) => r.promptTokens)
  const statuses = [...new Set(runs.map((r) => r.status))]
  const reasons = [...new Set(runs.flatMap((r) => (r.status === 'error' || r.status === 'skipped') && r.reason !== undefined ? [r.reason] : []))]
  const costs = runs.map((r) => r.cost)
  return {
    status: statuses.length === 1 ? statuses[0] as SweepRunMetrics['status'] : 'mixed',
    ...(reasons.length === 0 ? {} : { reason: reasons.join('; ') }),
    turns,
    turnsCompleted: sum((r) => r.turnsCompleted ?? 0),
    providerRejections: sum((r) => r.providerRejections ?? 0),
    overflowIncidents: sum((r) => r.overflowIncidents),
    summaryCalls: sum((r) => r.summaryCalls ?? 0),
    compactionsPer100Turns: turns === 0 ? null : round((100 * sum((r) => r.compactions)) / turns, 2),
    cacheReuse: prompt === 0 ? null : round(sum((r) => r.cachedTokens) / prompt),
    cost: costs.some((c) => c === null) ? null : round(costs.reduce<number>((n, c) => n + (c ?? 0), 0), 8),
    pressureMax: Math.max(0, ...runs.map((r) => r.pressureMax)),
  }
}

/** The comparison groups of `report`; empty when the grid has no `profile` axis. */
export function profileGroups(report: SweepReport): ProfileGroup[] {
  const profiles = report.grid.profile
  if (profiles === undefined) return []
  const groups = new Map<string, Partial<Record<SweepProfile, SweepCell>>>()
  for (const cell of report.cells) {
    const profile = cell.policy.profile
    if (profile === undefined) continue
    const base = cell.id.slice(0, cell.id.length - profile.length - 1)
    const group = groups.get(base) ?? {}
    group[profile] = cell
    groups.set(base, group)
  }
  const out: ProfileGroup[] = []
  for (const [base, cells] of groups) {
    const rows: ProfileRow[] = []
    const row = (file: string | null): ProfileRow => {
      const figures: ProfileRow['figures'] = {}
      for (const p of profiles) {
        const runs = (cells[p]?.runs ?? []).filter((r) => file === null || r.file === file)
        figures[p] = runs.length === 0 ? null : figuresOf(runs)
      }
      return { file, figures }
    }
    for (const file of report.scenarios) rows.push(row(file))
    rows.push(row(null))
    out.push({ base, rows })
  }
  return out
}

/** The column heads of the comparison, in order (each shown once per profile). */
export const PROFILE_COLUMNS = [
  'turns completed', 'rejections', 'overflow', 'summary calls', 'compactions / 100 turns', 'cache reuse', 'cost', 'pressure max',
] as const

/** The cells of one profile's figures as text, in `PROFILE_COLUMNS` order; a missing or failed run says why. */
export function figureTexts(f: ProfileFigures | null | undefined): string[] {
  if (f === null || f === undefined) return ['not run', '', '', '', '', '', '', '']
  // `completed/all`, or why the run did not happen (a scenario that does not load under the profile, …)
  const pct = (v: number | null): string => (v === null ? 'n/a' : `${(v * 100).toFixed(1)}%`)
  const head = f.status === 'error' || f.status === 'skipped' ? `${f.status}: ${f.reason ?? 'no reason given'}` : `${f.turnsCompleted}/${f.turns}`
  return [
    head, String(f.providerRejections), String(f.overflowIncidents), String(f.summaryCalls),
    f.compactionsPer100Turns === null ? 'n/a' : f.compactionsPer100Turns.toFixed(2), pct(f.cacheReuse),
    f.cost === null ? 'n/a' : f.cost.toFixed(4), pct(f.pressureMax),
  ]
}

/**
 * The profiles the side-by-side table shows: all of the grid's when there are at most three, else only
 * `faithful` and `hardened` (the per-rule view, `ruleRows`, then gives the rules one row each).
 */
export function sideBySideProfiles(profiles: readonly SweepProfile[]): SweepProfile[] {
  if (profiles.length <= 3) return [...profiles]
  return profiles.filter((p) => p === 'faithful' || p === 'hardened')
}

/** One row of the per-rule view: a profile's totals, and in how many scenarios it did worse or better than faithful. */
export interface RuleRow {
  profile: SweepProfile
  /** The checker id of a one-rule profile (`HARD-1` …); null for `faithful` and `hardened`. */
  hardId: string | null
  total: ProfileFigures | null
  /** Scenarios with fewer completed turns, or more rejections or overflow incidents, than faithful (null without a faithful cell). */
  worse: number | null
  /** Scenarios with more completed turns, or fewer rejections or overflow incidents, and none of the worse. */
  better: number | null
}

/**
 * The per-rule view of one group: a row per profile of the grid (faithful, hardened, then each rule alone) with
 * its totals and how many scenarios it changed against faithful. Empty when the grid has only faithful/hardened
 * (the side-by-side table already shows everything then).
 */
export function ruleRows(report: SweepReport, group: ProfileGroup): RuleRow[] {
  const profiles = report.grid.profile ?? []
  if (profiles.every((p) => p === 'faithful' || p === 'hardened')) return []
  const total = group.rows.find((r) => r.file === null)
  const scenarios = group.rows.filter((r) => r.file !== null)
  return profiles.map((profile) => {
    let worse: number | null = null
    let better: number | null = null
    if (profiles.includes('faithful')) {
      worse = 0
      better = 0
      for (const row of scenarios) {
        const base = row.figures.faithful
        const mine = row.figures[profile]
        if (base === null || base === undefined || mine === null || mine === undefined) continue
        const isWorse = mine.turnsCompleted < base.turnsCompleted || mine.providerRejections > base.providerRejections
          || mine.overflowIncidents > base.overflowIncidents
        const isBetter = mine.turnsCompleted > base.turnsCompleted || mine.providerRejections < base.providerRejections
          || mine.overflowIncidents < base.overflowIncidents
        if (isWorse) worse++
        else if (isBetter) better++
      }
    }
    return {
      profile,
      hardId: profile === 'faithful' || profile === 'hardened' ? null : hardId(profile),
      total: total?.figures[profile] ?? null,
      worse, better,
    }
  })
}

/** The column heads of the per-rule view, in order. */
export const RULE_COLUMNS = ['profile', 'rule', ...PROFILE_COLUMNS, 'worse than faithful', 'better than faithful'] as const

/** The cells of one per-rule row as text, in `RULE_COLUMNS` order. */
export function ruleTexts(row: RuleRow): string[] {
  const count = (n: number | null): string => (n === null ? 'n/a' : String(n))
  return [row.profile, row.hardId ?? (row.profile === 'hardened' ? 'all' : 'none'), ...figureTexts(row.total), count(row.worse), count(row.better)]
}
