/**
 * The Markdown form of `sweep.json` (issue #10): the recommendation per window with its reasoning, one table
 * per window (★ marks the Pareto front), and the skipped cells with their §3.2 reason. A pure function of the
 * document, so it is byte-identical whenever the document is.
 */
import type { SweepCell, SweepReport } from './types.ts'
import { plural } from '../plural.ts'
import { figureTexts, profileGroups, PROFILE_COLUMNS, RULE_COLUMNS, ruleRows, ruleTexts, sideBySideProfiles } from './profile-compare.ts'

/** Escapes a table cell. */
function cellText(text: string): string {
  return text.replaceAll('|', '\\|').replaceAll('\n', ' ')
}

/** A ratio as a percentage with one decimal. */
function percent(ratio: number | null): string {
  return ratio === null ? 'n/a' : `${(ratio * 100).toFixed(1)}%`
}

/** The cost column: the cache-cost model's figure (4 decimals) or `n/a`. */
function cost(value: number | null): string {
  return value === null ? 'n/a' : value.toFixed(4)
}

/** Renders `report` as Markdown. */
export function renderSweepMarkdown(report: SweepReport): string {
  const out: string[] = [
    `# Sweep ${report.sweepId}`,
    '',
    `${report.summary.cells} cells (${report.summary.ran} ran, ${report.summary.skipped} skipped) × ${plural(report.scenarios.length, 'scenario')}`
      + ` × ${report.grid.seeds.length === 0 ? 'each scenario\'s own seed' : `seeds ${report.grid.seeds.join(', ')}`}: `
      + `${plural(report.summary.runs, 'run')}, ${plural(report.summary.violations, 'invariant violation')}, ${plural(report.summary.pareto, 'Pareto point')}.`,
    `Cost basis: ${report.costBasis === 'cost' ? 'the cache-cost model (USD)' : 'uncached prompt tokens (no cache-cost section)'}.`,
  ]
  if (report.grid.objective === 'retention') {
    out.push('', 'Objective: **retention** — the Pareto front also maximises probe retention (the area under the retention curves) '
      + 'and cache reuse; each window recommends the clean Pareto cell that keeps the most.')
  }
  if (!report.complete) out.push('', '**Incomplete:** the sweep was interrupted; only finished cells are listed.')
  if (report.shard !== undefined) out.push('', `Shard ${report.shard.index}/${report.shard.count} (merge with \`sim report merge\`).`)
  if (report.grid.ownPolicy === true) {
    out.push('', 'Own policy: every scenario ran with its own threshold, retention, pruner and windows (`--own-policy`), so there '
      + 'are no per-window tables and no recommendations; compare the profiles below.')
  }
  out.push('', '## Recommendations', '')
  for (const r of report.recommendations) out.push(`- **window ${r.contextWindow}:** ${cellText(r.reasoning)}`)
  out.push(...profileSection(report))
  for (const contextWindow of report.grid.contextWindow) {
    const cells = report.cells.filter((c) => c.status === 'ran' && c.policy.contextWindow === contextWindow)
    out.push('', `## Window ${contextWindow}`, '')
    if (cells.length === 0) {
      out.push('No cell of this window ran.')
      continue
    }
    const probes = cells.some((c) => c.metrics?.probeRetention !== undefined)
    const summarizers = report.grid.summarizer !== undefined
    out.push(
      `| | cell | threshold | retain | pruner${summarizers ? ' | summarizer' : ''} | compactions | prunes | failed | overflow `
        + '| pressure max | pressure mean | summary tokens | prompt tokens | cached | cost | violations | retention |'
        + `${probes ? ' probe retention |' : ''}`,
      `|---|---|---:|---:|---|${summarizers ? '---|' : ''}---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|${probes ? '---:|' : ''}`,
    )
    for (const c of cells) out.push(row(c, summarizers, probes))
  }
  const skipped = report.cells.filter((c) => c.status === 'skipped')
  if (skipped.length > 0) {
    out.push('', '## Skipped cells', '', '| cell | reason |', '|---|---|')
    for (const c of skipped) out.push(`| ${c.id} | ${cellText(c.skipReason ?? '')} |`)
  }
  return `${out.join('\n')}\n`
}

function row(c: SweepCell, summarizers = false, probes = false): string {
  const m = c.metrics
  if (m === undefined) return `| | ${c.id} | | | | | | | | | | | | | | | |${summarizers ? ' |' : ''}${probes ? ' |' : ''}`
  const p = c.policy
  const summarizer = summarizers ? ` | ${cellText(typeof p.summarizer === 'string' ? p.summarizer : JSON.stringify(p.summarizer ?? 'own'))}` : ''
  return `| ${c.pareto === true ? '★' : ''} | ${c.id} | ${p.thresholdRatio} | ${p.retainRatio} | ${p.pruner ? 'on' : 'off'}${summarizer} `
    + `| ${m.compactions} | ${m.prunes} | ${m.failedBrackets} | ${m.overflowIncidents} `
    + `| ${percent(m.pressureMax)} | ${percent(m.pressureMean)} `
    + `| ${m.summaryPromptTokens} | ${m.promptTokens} | ${m.cachedTokens} | ${cost(m.cost)} | ${m.violations} | ${percent(m.retention)} |`
    + `${probes ? ` ${percent(m.probeRetention ?? null)} |` : ''}`
}

/**
 * The `profile` axis comparison (issue #19): per policy, one table with a row per scenario and a total row, each
 * metric once per profile side by side. Nothing when the grid has no `profile` axis.
 */
function profileSection(report: SweepReport): string[] {
  const all = report.grid.profile
  if (all === undefined) return []
  const profiles = sideBySideProfiles(all)
  const out = ['', `## Profiles: ${profiles.join(' vs ')}`]
  for (const group of profileGroups(report)) {
    const heads = PROFILE_COLUMNS.flatMap((c) => profiles.map((p) => `${c} (${p})`))
    out.push('', `### ${group.base}`, '', `| scenario | ${heads.join(' | ')} |`, `|---|${heads.map(() => '---:|').join('')}`)
    for (const row of group.rows) {
      const texts = profiles.map((p) => figureTexts(row.figures[p]))
      const cells = PROFILE_COLUMNS.flatMap((_c, i) => texts.map((t) => cellText(t[i] ?? '')))
      out.push(`| ${row.file === null ? '**total**' : cellText(row.file)} | ${cells.join(' | ')} |`)
    }
    const rules = ruleRows(report, group)
    if (rules.length > 0) {
      out.push('', `#### Per rule (${group.base}): each rule alone on top of faithful, in total`, '',
        `| ${RULE_COLUMNS.join(' | ')} |`, `|---|---|${PROFILE_COLUMNS.map(() => '---:|').join('')}---:|---:|`)
      for (const row of rules) out.push(`| ${ruleTexts(row).map(cellText).join(' | ')} |`)
    }
  }
  return out
}
