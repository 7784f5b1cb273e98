/**
 * Meter-vs-provider drift (issue #15). A reference session of `scenarios/smoke/basic-pressure.yaml` against a
 * mock whose one route counts with `o200k_base` (the route is built here until scenario `provider.routes[]`
 * lands): every captured request carries the engine meter's reading at dispatch (equal to the §2.5 replay of
 * the log prefix) and the provider's count (equal to a fresh `o200k_base` count of what the mock received);
 * the drift figures are those of the per-request formula; the markdown, pretty and HTML reports show them.
 * Then `runScenario` on the same file (no routes yet): the capture artifact carries both figures and the
 * report carries no drift section.
 */
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { readLog, type CapturedRequest } from '@compaction-sim/core'
import { ENFORCE_OFF, NO_IMAGE_LIMITS } from '../../src/provider/enforce.ts'
import { MockProvider } from '../../src/provider/mock-provider.ts'
import { mountIntercept } from '../../src/provider/mount-intercept.ts'
import type { MockRoute } from '../../src/provider/route.ts'
import { BUILTIN_SUMMARIZER } from '../../src/provider/summarizers.ts'
import { createTokenizer, type TokenizerName } from '../../src/provider/tokenizers.ts'
import { renderHtml } from '../../src/report/html.ts'
import { renderMarkdown } from '../../src/report/markdown.ts'
import { renderPretty } from '../../src/report/pretty.ts'
import { validateRunReport } from '../../src/report/validate.ts'
import type { ScenarioReport } from '../../src/report/types.ts'
import { driftOf, joinProviderCounts, requestDriftPct, withProviderLine, withReplayedMeter } from '../../src/run/drift.ts'
import { runScenario } from '../../src/run/run-scenario.ts'
import { timelineOf } from '../../src/run/timeline.ts'
import { scenarioTranscript } from '../../src/run/transcript.ts'
import { createWorld } from '../../src/run/world.ts'
import { loadScenario } from '../../src/scenario/load.ts'
import { resolveScenario, type ResolvedScenario } from '../../src/scenario/resolve.ts'
import { runReferenceSession } from '../../src/subjects/reference.ts'
import { REPO_ROOT, tempDir } from '../cli/run-sim.ts'
import { passed, reportOf } from '../report/sample-report.ts'

const BASE_URL = 'http://drift-test.mock.sim.test/v1'
const FILE = join(REPO_ROOT, 'scenarios/smoke/basic-pressure.yaml')
let tmp: { dir: string; cleanup: () => Promise<void> }
let scenario: ResolvedScenario

beforeAll(async () => {
  tmp = await tempDir()
  scenario = resolveScenario(await loadScenario(FILE), { file: FILE })
})
afterAll(async () => {
  await tmp.cleanup()
})

/** One reference session against a mock serving the scenario's model as one route counted by `tokenizer`. */
async function routedSession(tokenizer: TokenizerName): Promise<{ requests: CapturedRequest[]; provider: MockProvider; logPath: string }> {
  const transcript = await scenarioTranscript(scenario, scenario.seed)
  const world = createWorld({ scenario, transcript, now: () => 0 })
  const route: MockRoute = {
    model: scenario.provider.model, wire: scenario.provider.wire, contextWindow: scenario.provider.contextWindow, maxOutputTokens: null,
    imageTokens: null, tokenizer, enforce: ENFORCE_OFF, imageLimits: NO_IMAGE_LIMITS, usage: 'reported', summarizer: BUILTIN_SUMMARIZER,
  }
  const { spec } = world.provider
  const provider = new MockProvider({ wire: spec.wire, plan: spec.plan, clock: spec.clock, cache: spec.cache, routes: [route] })
  const mount = mountIntercept(provider, BASE_URL)
  const logPath = join(tmp.dir, `${tokenizer}.jsonl`)
  const join_ = joinProviderCounts(provider)
  try {
    const result = await runReferenceSession({
      scenario, transcript, logPath, baseUrl: BASE_URL, seed: scenario.seed, hooks: world.hooks, onRequest: join_.onRequest,
    })
    return { requests: join_.annotate(result.requests), provider, logPath }
  } finally {
    mount.close()
  }
}

describe('meter vs provider drift', () => {
  it('an o200k_base route: every request carries both figures, and the drift is the per-request formula', async () => {
    const { requests, provider, logPath } = await routedSession('o200k_base')
    expect(requests.length).toBe(6)
    expect(provider.captured.length).toBe(requests.length)
    const o200k = createTokenizer('o200k_base')
    for (const [i, r] of requests.entries()) {
      const wire = provider.captured[i]
      expect(wire?.purpose).toBe(r.purpose)
      expect(r.providerPromptTokens).toBe(o200k.promptTokens(wire?.messages ?? [], wire?.tools, undefined))
    }
    // The engine's meter at dispatch is the §2.5 replay of the log prefix at `logRevisionAtDispatch`.
    const events = (await readLog(logPath, { dialect: 'seed' })).events
    const timeline = timelineOf(events, requests, { policy: scenario.policy, contextWindow: scenario.provider.contextWindow })
    expect(requests.map((r) => r.meterTokensAtDispatch)).toEqual(timeline.points.map((p) => p.tokens))
    const [filled, changed] = withReplayedMeter(requests, timeline)
    expect(changed).toBe(false)
    expect(filled).toEqual(requests)

    const drift = driftOf(requests)
    const pcts = requests.filter((r) => r.purpose === 'conversation').map((r) => ((r.providerPromptTokens ?? 0) - (r.meterTokensAtDispatch ?? 0))
      / (r.meterTokensAtDispatch ?? 1) * 100)
    expect(pcts.length).toBe(5)
    expect(drift).toEqual({
      requests: 5,
      meanPct: Math.round(pcts.reduce((a, b) => a + b, 0) / 5 * 100) / 100,
      maxPct: Math.round(Math.max(...pcts) * 100) / 100,
      maxRequest: requests.find((r) => requestDriftPct(r) === Math.max(...pcts))?.index,
      minPct: Math.round(Math.min(...pcts) * 100) / 100,
    })
    // BPE counts English prose and JSON tighter than chars / 4: the provider sees fewer tokens than the meter says.
    expect(drift?.meanPct).toBeLessThan(0)

    // The reports: one line each in markdown and pretty, the provider line in the HTML timeline.
    const scenarioReport: ScenarioReport = { ...passed, drift: drift!, timeline: withProviderLine(timeline, requests) }
    const report = reportOf([scenarioReport])
    expect(validateRunReport(report)).toEqual([])
    const md = renderMarkdown(report)
    const line = `meter vs provider drift: max ${fmt(drift!.maxPct)} (request ${drift!.maxRequest}), mean ${fmt(drift!.meanPct)}, `
      + `min ${fmt(drift!.minPct)} over 5 conversation requests`
    expect(md).toContain(`## Meter vs provider drift\n\n- \`scenarios/smoke/basic.yaml\` basic: ${line}\n`)
    expect(renderPretty(report, { color: false, ci: true })).toContain(` drift=max ${fmt(drift!.maxPct)} mean ${fmt(drift!.meanPct)}`)
    const html = renderHtml(report)
    expect(html.match(/<path class="line-provider" d="M[^"]+"\/>/g)?.length).toBe(1)
    expect(html.match(/<circle class="overlay-point overlay-provider"/g)?.length).toBe(5)
    expect(html).toContain('provider count (route tokenizer)')
  }, 120_000)

  it('a heuristic route counts exactly the §9.2 prompt the mock estimates for its usage', async () => {
    const { requests, provider } = await routedSession('heuristic')
    const heuristic = createTokenizer('heuristic')
    expect(requests.map((r) => r.providerPromptTokens))
      .toEqual(provider.captured.map((c) => heuristic.promptTokens(c.messages, c.tools, undefined)))
    expect(driftOf(requests)?.requests).toBe(5)
  }, 120_000)

  it('a request that never reached the mock gets no provider count; one mock capture per dispatch window is required', () => {
    const captured: Array<{ providerPromptTokens?: number; purpose: 'conversation'; model: string }> = []
    const provider = { captured } as unknown as MockProvider
    const join_ = joinProviderCounts(provider)
    const request = (index: number): CapturedRequest => ({
      index, logRevisionAtDispatch: 0, time: 0, purpose: 'conversation', provider: 'p', model: 'm', messages: [], outcome: 'stop',
    })
    join_.onRequest(request(0), 0)
    captured.push({ providerPromptTokens: 10, purpose: 'conversation', model: 'm' })
    join_.onRequest(request(0), 1)
    join_.onRequest(request(1), 1) // fails before the wire: nothing captured
    join_.onRequest(request(1), 2)
    join_.onRequest(request(2), 2) // two captures in one window: ambiguous
    captured.push({ providerPromptTokens: 11, purpose: 'conversation', model: 'm' }, { providerPromptTokens: 12, purpose: 'conversation', model: 'm' })
    join_.onRequest(request(2), 3)
    expect(join_.annotate([request(0), request(1), request(2)]).map((r) => r.providerPromptTokens)).toEqual([10, undefined, undefined])
  })

  it('runScenario: the capture artifact carries both figures; a heuristic route never counts above the conservative meter', async () => {
    const out = join(tmp.dir, 'run')
    const report = await runScenario(FILE, { outDir: out, cwd: REPO_ROOT })
    expect(report.status).toBe('passed')
    // Every scenario's mock serves its routes (the shorthand is one heuristic route), so the report has drift;
    // the §2.5 meter is conservative against the §9.2 count of the same pricing, so no request drifts upwards.
    expect(report.drift?.requests).toBe(5)
    expect(report.drift?.maxPct).toBe(0)
    expect(report.drift?.meanPct).toBeLessThan(0)
    const lines = (await readFile(join(out, report.artifacts?.requests ?? ''), 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as CapturedRequest)
    expect(lines.length).toBe(6)
    expect(lines.map((r) => r.meterTokensAtDispatch)).toEqual(report.timeline?.points.map((p) => p.tokens))
    expect(lines.every((r) => Number.isSafeInteger(r.providerPromptTokens) && (r.providerPromptTokens ?? 0) > 0)).toBe(true)
  }, 120_000)
})

function fmt(pct: number): string {
  return `${pct >= 0 ? '+' : ''}${pct.toFixed(2)}%`
}
