/**
 * Issue #19, the measurement: a sweep with a `profile` axis (`--profile faithful,hardened` or `profile:` in a
 * grid file) runs one cell per profile, each with the metrics (turns, provider rejections, overflow
 * incidents, summary calls, compactions per 100 turns, cache reuse, cost, max pressure); the faithful cell
 * measures exactly what the same sweep without the axis measures, and the Markdown and HTML forms put both
 * profiles side by side. A bad profile value is a usage error naming where it came from.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { UsageError } from '../../src/cli/exit-codes.ts'
import { applyPolicyOverride } from '../../src/run/run-scenario.ts'
import type { Scenario } from '../../src/scenario/types.ts'
import { gridFromFlags, parseGrid } from '../../src/sweep/grid.ts'
import { renderSweepHtml } from '../../src/sweep/html.ts'
import { renderSweepMarkdown } from '../../src/sweep/markdown.ts'
import { runSweep } from '../../src/sweep/sweep.ts'
import type { SweepCellMetrics, SweepReport, SweepRunMetrics } from '../../src/sweep/types.ts'
import { validateSweepReport } from '../../src/sweep/validate.ts'

const SCENARIO = 'scenarios/policy/generated-session-pruner.yaml'
const AXES = { threshold: '0.8', retain: '0.1', pruner: 'on', window: '6000' }

let dir = ''
let plain: SweepReport
let profiled: SweepReport

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'profile-sweep-'))
  const cwd = process.cwd()
  plain = await runSweep({ grid: gridFromFlags(AXES), scenarios: [SCENARIO], outDir: join(dir, 'plain'), cwd, workers: 1 })
  profiled = await runSweep({
    grid: gridFromFlags({ ...AXES, profile: 'hardened,faithful' }), scenarios: [SCENARIO], outDir: join(dir, 'profiled'), cwd, workers: 1,
  })
}, 120_000)
afterAll(async () => rm(dir, { recursive: true, force: true }))

/** `value` without the keys only a `profile` axis adds. */
function withoutProfileKeys<T extends SweepRunMetrics | SweepCellMetrics>(value: T): Partial<T> {
  const copy: Record<string, unknown> = { ...value }
  for (const key of ['providerRejections', 'summaryCalls', 'turnsCompleted', 'compactionsPer100Turns', 'cacheReuse']) delete copy[key]
  return copy as Partial<T>
}

describe('sim sweep --profile', () => {
  it('runs one schema-valid cell per profile, faithful first, each with the issue #19 metrics', () => {
    expect(validateSweepReport(profiled)).toEqual([])
    expect(profiled.grid.profile).toEqual(['faithful', 'hardened'])
    expect(profiled.cells.map((c) => `${c.id} ${c.status} ${c.policy.profile}`)).toEqual([
      'w6000-t0.8-r0.1-p1-faithful ran faithful', 'w6000-t0.8-r0.1-p1-hardened ran hardened',
    ])
    for (const cell of profiled.cells) {
      const m = cell.metrics as SweepCellMetrics
      expect(m.turns).toBeGreaterThan(0)
      expect(m.turnsCompleted).toBeGreaterThan(0)
      expect(m.turnsCompleted).toBeLessThanOrEqual(m.turns)
      expect(m.summaryCalls).toBeGreaterThanOrEqual(m.compactions)
      expect(m.providerRejections).toBeTypeOf('number')
      expect(m.compactionsPer100Turns).toBe(Math.round((10000 * m.compactions) / m.turns) / 100)
      expect(m.cacheReuse).toBe(Math.round((10000 * m.cachedTokens) / m.promptTokens) / 10000)
      expect(m.pressureMax).toBeGreaterThan(0)
      for (const run of cell.runs ?? []) expect(run.summaryCalls).toBeTypeOf('number')
    }
  })

  it('measures the faithful cell exactly as the sweep without the axis, which carries no profile key', () => {
    const [faithful] = profiled.cells
    const [own] = plain.cells
    expect(own?.policy.profile).toBeUndefined()
    expect(plain.grid.profile).toBeUndefined()
    expect(own?.metrics).not.toHaveProperty('summaryCalls')
    expect(withoutProfileKeys(faithful?.metrics as SweepCellMetrics)).toEqual(own?.metrics)
    expect((faithful?.runs ?? []).map(withoutProfileKeys)).toEqual(own?.runs)
    expect(renderSweepMarkdown(plain)).not.toContain('Profiles')
    expect(renderSweepHtml(plain)).not.toContain('class="profiles"')
  })

  it('puts both profiles side by side in the Markdown table and the HTML page, per scenario and in total', () => {
    const md = renderSweepMarkdown(profiled)
    expect(md).toContain('## Profiles: faithful vs hardened')
    expect(md).toContain('| scenario | turns completed (faithful) | turns completed (hardened) | rejections (faithful) | rejections (hardened) |')
    expect(md).toContain(`| ${SCENARIO} |`)
    expect(md).toContain('| **total** |')
    const html = renderSweepHtml(profiled)
    expect(html).toContain('<table class="profiles">')
    expect(html).toContain('<th class="profile">faithful</th><th class="profile">hardened</th>')
    expect(html).toMatch(/<tr class="total"><td>total<\/td>/)
  })
})

describe('a run that cannot load under a profile', () => {
  it('shows error and its reason in that profile\'s row, in Markdown and HTML', () => {
    const broken = structuredClone(profiled)
    const hardened = broken.cells[1]
    const run = hardened?.runs?.[0]
    if (hardened === undefined || run === undefined) throw new Error('the profiled sweep has no hardened run')
    Object.assign(run, { status: 'error', reason: 'policy: invalid compaction config: hardening.x is unknown', turns: 0 })
    const md = renderSweepMarkdown(broken)
    expect(md).toMatch(new RegExp(`\\| ${SCENARIO} \\| \\d+/\\d+ \\| error: policy: invalid compaction config: hardening\\.x is unknown \\|`))
    expect(renderSweepHtml(broken)).toContain('<td class="failed">error: policy: invalid compaction config: hardening.x is unknown</td>')
  })
})

describe('the profile axis of a grid', () => {
  it('reads --profile and profile: in a fixed order and names the source of a bad value', () => {
    expect(gridFromFlags({ profile: 'hardened' }).profile).toEqual(['hardened'])
    expect(parseGrid('profile: [hardened, faithful]\n', 'g.grid').profile).toEqual(['faithful', 'hardened'])
    expect(parseGrid('profile: faithful\n', 'g.grid').profile).toEqual(['faithful'])
    expect(() => gridFromFlags({ profile: 'faithful,strict' })).toThrow(UsageError)
    expect(() => gridFromFlags({ profile: 'faithful,strict' })).toThrow(/--profile: expected faithful, hardened, a rule \(failureBackoff, .*\) or all, got "strict"/)
    expect(() => parseGrid('profile: [strict]\n', 'g.grid')).toThrow(/g\.grid:1:10: profile: expected faithful, hardened, a rule/)
    expect(parseGrid('thresholdRatio: 0.8\n', 'g.grid')).not.toHaveProperty('profile')
  })

  it('takes one rule alone by its config key, and all for both profiles and every rule, in HARD-id order', () => {
    expect(gridFromFlags({ profile: 'headRefresh,faithful,failureBackoff' }).profile).toEqual(['faithful', 'failureBackoff', 'headRefresh'])
    expect(parseGrid('profile: all\n', 'g.grid').profile).toEqual([
      'faithful', 'hardened', 'failureBackoff', 'summaryRoom', 'checkpointBudget', 'meteredRelief',
      'oversizedUserText', 'openTurnPrompt', 'headRefresh', 'capacitySanity',
    ])
    expect(() => gridFromFlags({ profile: 'HARD-1' })).toThrow(/--profile: expected .* got "HARD-1"/)
  })
})

describe('a rule profile runs the scenario with exactly that rule', () => {
  const raw = {
    name: 'x', seed: 1, provider: { wire: 'openai', model: 'm', contextWindow: 4000 },
    policy: { thresholdRatio: 0.6, profile: 'hardened', hardening: { openTurnPrompt: false } },
    transcript: { generate: { generator: 'shaped', turns: 1 } },
  } as unknown as Scenario
  it('sets profile faithful plus the one rule, and drops the scenario\'s own hardening under every profile', () => {
    expect(applyPolicyOverride(raw, { profile: 'checkpointBudget' }).policy).toEqual({
      thresholdRatio: 0.6, profile: 'faithful', hardening: { checkpointBudget: true },
    })
    expect(applyPolicyOverride(raw, { profile: 'faithful' }).policy).toEqual({ thresholdRatio: 0.6, profile: 'faithful' })
    expect(applyPolicyOverride(raw, { profile: 'hardened' }).policy).toEqual({ thresholdRatio: 0.6, profile: 'hardened' })
    expect(applyPolicyOverride(raw, {}).policy).toEqual(raw.policy)
  })
})

describe('the per-rule view', () => {
  /** `profiled` with a third cell, `failureBackoff`, a copy of the hardened one whose run has `extra` more rejections. */
  function withRuleCell(extra: number): SweepReport {
    const doc = structuredClone(profiled)
    const hardened = doc.cells[1]
    if (hardened === undefined) throw new Error('the profiled sweep has no hardened cell')
    const rule = structuredClone(hardened)
    rule.id = rule.id.replace(/-hardened$/, '-failureBackoff')
    rule.policy.profile = 'failureBackoff'
    const run = rule.runs?.[0]
    const faithfulRun = doc.cells[0]?.runs?.[0]
    if (run === undefined || faithfulRun === undefined) throw new Error('no runs')
    run.providerRejections = (faithfulRun.providerRejections ?? 0) + extra
    run.overflowIncidents = faithfulRun.overflowIncidents
    run.turnsCompleted = faithfulRun.turnsCompleted ?? 0
    doc.cells.push(rule)
    doc.grid.profile = ['faithful', 'hardened', 'failureBackoff']
    return doc
  }

  it('gives each profile one row of totals with its HARD id and how many scenarios it made worse or better', () => {
    const md = renderSweepMarkdown(withRuleCell(2))
    expect(md).toContain('#### Per rule (w6000-t0.8-r0.1-p1): each rule alone on top of faithful, in total')
    expect(md).toContain('| profile | rule | turns completed | rejections |')
    expect(md).toMatch(/\| faithful \| none \| \d+\/\d+ \| (\d+) \|.* \| 0 \| 0 \|/)
    expect(md).toMatch(/\| failureBackoff \| HARD-1 \| \d+\/\d+ \| \d+ \|.* \| 1 \| 0 \|/)
    expect(md).toMatch(/\| hardened \| all \|/)
    const html = renderSweepHtml(withRuleCell(2))
    expect(html).toContain('<table class="rules">')
    expect(html).toMatch(/<tr class="worse"><td>failureBackoff<\/td><td>HARD-1<\/td>/)
    expect(renderSweepMarkdown(withRuleCell(-1))).toMatch(/\| failureBackoff \| HARD-1 \| .* \| 0 \| 1 \|/)
  })

  it('is absent when the grid compares only faithful and hardened', () => {
    expect(renderSweepMarkdown(profiled)).not.toContain('Per rule')
    expect(renderSweepHtml(profiled)).not.toContain('class="rules"')
  })
})

describe('sim sweep --own-policy', () => {
  it('runs each scenario under its own policy: the same runs as a grid of exactly that policy, one cell per profile', async () => {
    const cwd = process.cwd()
    const own = await runSweep({
      grid: gridFromFlags({ ownPolicy: true, profile: 'faithful,hardened' }), scenarios: [SCENARIO], outDir: join(dir, 'own'), cwd, workers: 1,
    })
    // The scenario sets no policy (§3.1 defaults: threshold 0.8, retain 0.16), its pruner and a 6000-token window.
    const same = await runSweep({
      grid: gridFromFlags({ threshold: '0.8', retain: '0.16', pruner: 'on', window: '6000', profile: 'faithful' }),
      scenarios: [SCENARIO], outDir: join(dir, 'same'), cwd, workers: 1,
    })
    expect(validateSweepReport(own)).toEqual([])
    expect(own.grid).toMatchObject({ ownPolicy: true, thresholdRatio: [], retainRatio: [], pruner: [], contextWindow: [] })
    expect(own.cells.map((c) => `${c.id} ${JSON.stringify(c.policy)}`)).toEqual([
      'own-faithful {"profile":"faithful"}', 'own-hardened {"profile":"hardened"}',
    ])
    expect(own.recommendations).toEqual([])
    expect(own.cells[0]?.runs).toEqual(same.cells[0]?.runs)
    const md = renderSweepMarkdown(own)
    expect(md).toContain('Own policy: every scenario ran with its own threshold')
    expect(md).toContain('### own')
    expect(md).not.toContain('## Window')
    expect(renderSweepHtml(own)).toContain('<p class="own-policy">')
  }, 120_000)

  it('refuses a policy axis beside it, naming the flag or the grid key', () => {
    expect(() => gridFromFlags({ ownPolicy: true, threshold: '0.7', window: '4000' })).toThrow(/--own-policy cannot be combined with --threshold, --window/)
    expect(() => parseGrid('ownPolicy: true\ncontextWindow: [4000]\n', 'g.grid')).toThrow(/g\.grid:2:16: contextWindow: not allowed with ownPolicy: true/)
    expect(() => parseGrid('ownPolicy: yes please\n', 'g.grid')).toThrow(/g\.grid:1:12: ownPolicy: expected true or false/)
    expect(parseGrid('ownPolicy: true\nprofile: all\n', 'g.grid')).toMatchObject({ ownPolicy: true, contextWindow: [] })
  })
})
