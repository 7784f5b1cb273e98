/**
 * §13.3 configuration faults in `sim run`: FAULT-41's scripted capacity reports (`reportedContextWindow` per
 * route, FAULT-41's `params.contextWindow` for the conversation route) served by the mock's model endpoint and
 * carried into the run manifest; FAULT-43's invalid configuration (the engine is not constructed, nothing is
 * installed); and the catalog scenarios of FAULT-40…46 through the real runner.
 */
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runScenario } from '../../src/run/run-scenario.ts'
import { scenarioTranscript } from '../../src/run/transcript.ts'
import { createWorld, realise, worldRoutes } from '../../src/run/world.ts'
import { ScenarioError } from '../../src/scenario/errors.ts'
import { resolveScenario } from '../../src/scenario/resolve.ts'
import type { FaultConfig, ProviderConfig, Scenario } from '../../src/scenario/types.ts'
import { REPO_ROOT, tempDir } from '../cli/run-sim.ts'

const FILE = '/work/scenarios/faults/x.yaml'
const BASE = 'http://mock.test/v1'

let tmp: { dir: string; cleanup: () => Promise<void> }
beforeAll(async () => { tmp = await tempDir() })
afterAll(async () => { await tmp.cleanup() })

function scenarioOf(provider: ProviderConfig, faults: FaultConfig[]): Scenario {
  return {
    name: 'config', seed: 1, provider, faults,
    transcript: { inline: { turns: [{ user: 'hi', steps: [{ reply: 'hello' }] }] } },
  }
}

function issuesOf(raw: Scenario): unknown[] {
  try {
    resolveScenario(raw, { file: FILE })
  } catch (err) {
    if (err instanceof ScenarioError) return err.issues.map((i) => [i.path, i.reason])
    throw err
  }
  return []
}

const ROUTED: ProviderConfig = {
  wire: 'openai',
  routes: [
    { model: 'zero', contextWindow: 2000, reportedContextWindow: 0 },
    { model: 'negative', contextWindow: 2000, reportedContextWindow: -2000 },
    { model: 'fraction', contextWindow: 2000, reportedContextWindow: 1999.5 },
    { model: 'none', contextWindow: 2000, reportedContextWindow: 'none' },
    { model: 'wrong', contextWindow: 2000, reportedContextWindow: 128000 },
    { model: 'honest', contextWindow: 2000 },
  ],
}

describe('scripted capacity reports (FAULT-41)', () => {
  it('the model endpoint serves each route\'s report: any number, none, or the true window', async () => {
    const scenario = resolveScenario(scenarioOf(ROUTED, [{ kind: 'FAULT-41' }]), { file: FILE })
    const world = createWorld({ scenario, transcript: await scenarioTranscript(scenario, 1), now: () => 0 })
    const served: Array<[string, unknown]> = []
    for (const model of ['zero', 'negative', 'fraction', 'none', 'wrong', 'honest']) {
      const response = await world.provider.handle(new Request(`${BASE}/models/${model}`))
      const body = await response.json() as Record<string, unknown>
      served.push([model, 'context_window' in body ? body['context_window'] : 'absent'])
    }
    expect(served).toEqual([['zero', 0], ['negative', -2000], ['fraction', 1999.5], ['none', 'absent'], ['wrong', 128000], ['honest', 2000]])
    const list = await (await world.provider.handle(new Request(`${BASE}/models`))).json() as { data: Array<{ id: string }> }
    expect(list.data.map((m) => m.id)).toEqual(['zero', 'negative', 'fraction', 'none', 'wrong', 'honest'])
  })

  it('the manifest lists the reported capacity when the runtime accepts it, none otherwise', () => {
    const scenario = resolveScenario(scenarioOf(ROUTED, [{ kind: 'FAULT-41' }]), { file: FILE })
    expect(worldRoutes(scenario).map((r) => [r.model, r.contextWindow ?? 'absent'])).toEqual([
      ['zero', 'absent'], ['negative', 'absent'], ['fraction', 'absent'], ['none', 'absent'], ['wrong', 128000], ['honest', 2000],
    ])
    expect(realise(scenario.faults[0] ?? (() => { throw new Error('fault') })()).kind).toBe('setup')
  })

  it('params.contextWindow is the conversation route\'s report', async () => {
    const scenario = resolveScenario(scenarioOf({ wire: 'openai', model: 'm', contextWindow: 2000 }, [
      { kind: 'FAULT-41', params: { contextWindow: -1 } },
    ]), { file: FILE })
    const world = createWorld({ scenario, transcript: await scenarioTranscript(scenario, 1), now: () => 0 })
    const body = await (await world.provider.handle(new Request(`${BASE}/models/m`))).json() as Record<string, unknown>
    expect(body['context_window']).toBe(-1)
  })

  it('refuses a scripted report without FAULT-41, FAULT-41 with nothing to report, and both forms at once', () => {
    const scripted: ProviderConfig = { wire: 'openai', model: 'm', contextWindow: 2000, reportedContextWindow: 0 }
    expect(issuesOf(scenarioOf(scripted, []))).toEqual([
      ['/provider/reportedContextWindow', 'scripts the capacity the route reports: declare a FAULT-41 fault (§13.3) for it'],
    ])
    expect(issuesOf(scenarioOf({ wire: 'openai', model: 'm', contextWindow: 2000 }, [{ kind: 'FAULT-41' }]))).toEqual([
      ['/faults/0/params/contextWindow', 'FAULT-41 needs a capacity to report: set params.contextWindow or a route\'s reportedContextWindow'],
    ])
    expect(issuesOf(scenarioOf(scripted, [{ kind: 'FAULT-41', params: { contextWindow: 5 } }]))).toEqual([
      ['/faults/0/params/contextWindow', 'cannot be combined with a route\'s reportedContextWindow (give one or the other)'],
    ])
  })

  it('the anthropic static table carries the scripted report too: an invalid one warns at every check', async () => {
    const text = await readFile(join(REPO_ROOT, 'scenarios/faults/fault-41-invalid-capacity.yaml'), 'utf8')
    const file = join(tmp.dir, 'f41-anthropic.yaml')
    await writeFile(file, text.replace('  wire: openai\n', '  wire: anthropic\n  name: openai\n').replace(/name: fault-41-invalid-capacity/, 'name: f41-anthropic'))
    const report = await runScenario(file, { outDir: join(tmp.dir, 'f41-anthropic'), cwd: tmp.dir })
    expect([report.status, report.expectations.filter((e) => !e.passed)]).toEqual(['passed', []])
    expect(report.warnings?.filter((w) => w.startsWith('step compaction failed: openai/mock-2k reported an invalid context window: 0'))).toHaveLength(3)
  })

  it('a wrong but valid report is what the policy uses: a 2000-token route reporting 128000 is never compacted for pressure', async () => {
    const text = await readFile(join(REPO_ROOT, 'scenarios/faults/fault-41-invalid-capacity.yaml'), 'utf8')
    const cut = text.indexOf('\nexpect:')
    const file = join(tmp.dir, 'f41-wrong.yaml')
    await writeFile(file, `${text.slice(0, cut)
      .replace('reportedContextWindow: 0}', 'reportedContextWindow: 128000}')
      .replace(/\n- kind: FAULT-44\n {2}params: \{switchTo: mock-2k-frac\}/, '')}\nexpect:\n  counts: {brackets: 0, prunes: 0}\n  warnings:\n  - {matches: '/./', absent: true}\n`)
    const report = await runScenario(file, { outDir: join(tmp.dir, 'f41-wrong'), cwd: tmp.dir })
    expect([report.status, report.violations, report.expectations.filter((e) => !e.passed)]).toEqual(['passed', [], []])
    // The same run with the honest report compacts before turn 2 (threshold 1000 of 2000).
    const honest = join(tmp.dir, 'f41-honest.yaml')
    await writeFile(honest, (await readFile(file, 'utf8')).replace(', reportedContextWindow: 128000}', '}').replace(', reportedContextWindow: 1999.5}', '}')
      .replace('- kind: FAULT-41\n', '').replace('faults:\n', 'faults: []\n').replace('counts: {brackets: 0, prunes: 0}', 'counts: {brackets: {min: 1}}'))
    const compacted = await runScenario(honest, { outDir: join(tmp.dir, 'f41-honest'), cwd: tmp.dir })
    expect([compacted.status, compacted.expectations.filter((e) => !e.passed)]).toEqual(['passed', []])
  })
})

describe('invalid configuration (FAULT-43)', () => {
  const invalid = { thresholdRatio: 0.5, retainRatio: 0.6 }
  const provider: ProviderConfig = { wire: 'openai', model: 'm', contextWindow: 2000 }

  it('without FAULT-43 the policy is still a load error naming the field', () => {
    expect(issuesOf({ ...scenarioOf(provider, []), policy: invalid })).toEqual([
      ['/policy/retainRatio', 'breaks the retention rule: retainRatio 0.6 must be strictly below thresholdRatio 0.5 (§3.2 rule 7)'],
    ])
  })

  it('with FAULT-43 the rejection is the fault: kept as configError, the policy is the nothing-installed stand-in', () => {
    const scenario = resolveScenario({ ...scenarioOf(provider, [{ kind: 'FAULT-43' }]), policy: invalid }, { file: FILE })
    expect(scenario.configError).toBe('invalid compaction config: retainRatio breaks the retention rule: retainRatio 0.6 must be strictly below thresholdRatio 0.5 (§3.2 rule 7)')
    expect(scenario.policy.auto).toBe(false)
    expect(scenario.policyConfig).toEqual(invalid)
    expect(realise(scenario.faults[0] ?? (() => { throw new Error('fault') })()).kind).toBe('setup')
  })

  it('refuses FAULT-43 over a valid policy', () => {
    expect(issuesOf({ ...scenarioOf(provider, [{ kind: 'FAULT-43' }]), policy: { thresholdRatio: 0.5 } })).toEqual([
      ['/faults/0/kind', 'FAULT-43 needs a policy that §3.2 rejects (e.g. thresholdRatio 1.5, or retainRatio not below thresholdRatio): this policy block is valid'],
    ])
  })

  it('the run writes a valid manifest (no compaction installed) with the refused block on the FAULT-43 entry', async () => {
    const out = join(tmp.dir, 'f43')
    const report = await runScenario(join(REPO_ROOT, 'scenarios/faults/fault-43-invalid-configuration.yaml'), { outDir: out, cwd: REPO_ROOT })
    expect([report.status, report.violations, report.expectations.filter((e) => !e.passed)]).toEqual(['passed', [], []])
    const manifest = JSON.parse(await readFile(join(out, report.artifacts?.manifest ?? 'missing'), 'utf8')) as {
      compaction: unknown; faults: Array<{ kind: string; params: Record<string, unknown> }>
    }
    expect(manifest.compaction).toEqual({ auto: false })
    expect(manifest.faults[0]?.params['config']).toEqual({ thresholdRatio: 0.5, retainRatio: 0.6 })
    const log = await readFile(join(out, report.artifacts?.log ?? 'missing'), 'utf8')
    expect(log).not.toContain('"type":"compaction/')
  })
})

describe('the §13.3 catalog scenarios on the reference subject', () => {
  const cases = [
    ['fault-40-no-capacity', 'no context capacity for openai/mock-nocap'],
    ['fault-41-invalid-capacity', 'reported an invalid context window: 0'],
    ['fault-42-retain-not-below-threshold', 'retained budget 1200 for openai/mock-2k is not below its threshold 1000'],
    ['fault-43-invalid-configuration', 'compaction engine construction failed: invalid compaction config: retainRatio'],
    ['fault-44-route-switch', null],
    ['fault-45-envelope-only-pressure', null],
    ['fault-46-newest-unit-exceeds-window', null],
  ] as const
  it.each(cases)('%s passes', async (name, warning) => {
    const report = await runScenario(join(REPO_ROOT, 'scenarios/faults', `${name}.yaml`), { outDir: join(tmp.dir, name), cwd: REPO_ROOT })
    expect([report.status, report.violations, report.expectations.filter((e) => !e.passed)]).toEqual(['passed', [], []])
    if (warning !== null) expect(report.warnings?.some((w) => w.includes(warning))).toBe(true)
  })
})
