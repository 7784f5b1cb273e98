/**
 * Provider routes in a run (issue #15): a summary route other than the conversation route receives the
 * compaction calls (the captured `model`), its own window is the one enforced on them, and the run manifest
 * lists every declared route (§1.1).
 */
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { CapturedRequest, RunManifest } from '@compaction-sim/core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runScenario } from '../../src/run/run-scenario.ts'
import { scenarioTranscript } from '../../src/run/transcript.ts'
import { createWorld, worldMockRoutes, worldRoutes } from '../../src/run/world.ts'
import { resolveScenario } from '../../src/scenario/resolve.ts'
import type { FaultConfig, Scenario } from '../../src/scenario/types.ts'
import { REPO_ROOT, tempDir } from '../cli/run-sim.ts'

let tmp: { dir: string; cleanup: () => Promise<void> }
let basic: string

beforeAll(async () => {
  tmp = await tempDir()
  basic = await readFile(join(REPO_ROOT, 'scenarios/smoke/basic-pressure.yaml'), 'utf8')
})
afterAll(async () => { await tmp.cleanup() })

/** basic-pressure with its one route replaced by a conversation route and a summary route of `summaryWindow`. */
function routed(summaryWindow: number, keepExpect: boolean): string {
  const provider = [
    'provider:', '  wire: openai', '  routes:', '    - { model: mock-1k, contextWindow: 1000 }',
    `    - { model: summary-route, contextWindow: ${summaryWindow} }`, '  summary: summary-route', '',
  ].join('\n')
  const text = basic.replace(/provider:\n(?: {2}.*\n)+/, provider)
  expect(text).toContain('summary: summary-route')
  return keepExpect ? text : text.replace(/\nexpect:[\s\S]*$/, '\n')
}

async function run(name: string, text: string): Promise<{ requests: CapturedRequest[]; manifest: RunManifest; status: string; counts: unknown }> {
  const file = join(tmp.dir, `${name}.yaml`)
  await writeFile(file, text)
  const outDir = join(tmp.dir, name)
  const report = await runScenario(file, { outDir, cwd: tmp.dir })
  const artifacts = report.artifacts
  if (artifacts === undefined) throw new Error(`${name}: no artifacts (${report.status}: ${report.error ?? ''})`)
  const requests = (await readFile(join(outDir, artifacts.requests), 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as CapturedRequest)
  const manifest = JSON.parse(await readFile(join(outDir, artifacts.manifest), 'utf8')) as RunManifest
  return { requests, manifest, status: report.status, counts: report.counts }
}

describe('a summary route of its own', () => {
  it('receives every compaction call while conversation calls stay on the conversation route', async () => {
    const { requests, manifest, status } = await run('summary-8k', routed(8000, true))
    expect(status).toBe('passed')
    const models = requests.map((r) => [r.purpose, r.model])
    expect(models.filter(([p]) => p === 'compaction')).toEqual([['compaction', 'summary-route']])
    expect(models.filter(([p]) => p === 'conversation').every(([, m]) => m === 'mock-1k')).toBe(true)
    expect(manifest.routes).toEqual([
      { provider: 'openai', model: 'mock-1k', contextWindow: 1000 },
      { provider: 'openai', model: 'summary-route', contextWindow: 8000 },
    ])
    expect(manifest.compaction).toMatchObject({ summarizationProvider: 'openai', summarizationModel: 'summary-route' })
  })

  it('enforces its own window: a summary prompt above it is refused as an overflow, the conversation is not', async () => {
    const { requests, status } = await run('summary-tiny', routed(100, false))
    expect(status).toBe('passed') // no expectations besides the invariants: the failed bracket is handled
    const compaction = requests.filter((r) => r.purpose === 'compaction')
    expect(compaction.length).toBeGreaterThan(0)
    expect(compaction.map((r) => [r.model, r.outcome, r.failureCode])).toEqual(
      compaction.map(() => ['summary-route', 'error', 'CONTEXT_WINDOW_EXCEEDED']),
    )
    expect(requests.filter((r) => r.purpose === 'conversation').every((r) => r.outcome !== 'error')).toBe(true)
  })
})

describe('the world\'s routes', () => {
  const ROUTED: Scenario = {
    name: 'routes', seed: 1,
    provider: { wire: 'openai', routes: [{ model: 'big', contextWindow: 8000 }, { model: 'small', contextWindow: 2000 }], summary: 'small' },
    transcript: { inline: { turns: [{ user: 'hi', steps: [{ reply: 'hello' }] }, { user: 'again', steps: [{ reply: 'ok' }] }] } },
  }
  const withFaults = (faults: FaultConfig[]): ReturnType<typeof resolveScenario> => resolveScenario({ ...ROUTED, faults }, { file: '/x.yaml' })
  const windows = (faults: FaultConfig[]): Array<[string, number | null]> => worldMockRoutes(withFaults(faults)).map((r) => [r.model, r.contextWindow])

  it('serves every declared route, plus the synthetic FAULT-44 and FAULT-32 routes; FAULT-40 reports no window', () => {
    expect(windows([])).toEqual([['big', 8000], ['small', 2000]])
    expect(windows([{ kind: 'FAULT-44', params: { contextWindow: 500 } }])).toEqual([['big', 8000], ['small', 2000], ['big-switched', 500]])
    expect(windows([{ kind: 'FAULT-44', params: { switchTo: 'small' } }])).toEqual([['big', 8000], ['small', 2000]])
    // The rerouted summary call keeps the summary route's window.
    expect(windows([{ kind: 'FAULT-32' }])).toEqual([['big', 8000], ['small', 2000], ['big-rerouted', 2000]])
    expect(windows([{ kind: 'FAULT-40' }])).toEqual([['big', null], ['small', null]])
    expect(worldRoutes(withFaults([]))).toEqual([
      { provider: 'openai', model: 'big', contextWindow: 8000 }, { provider: 'openai', model: 'small', contextWindow: 2000 },
    ])
  })

  it('FAULT-44 with switchTo moves the agent to that declared route after its turn', async () => {
    const scenario = withFaults([{ id: 'sw', kind: 'FAULT-44', params: { switchTo: 'small' } }])
    const world = createWorld({ scenario, transcript: await scenarioTranscript(scenario, 1), now: () => 0 })
    const models: string[] = []
    const control = { setModel: (model: string): void => { models.push(model) } }
    world.hooks.beginTurn?.(1, control)
    world.hooks.beginTurn?.(2, control)
    expect(models).toEqual(['small'])
    expect(world.fired().get('sw')).toBe(1)
  })
})
