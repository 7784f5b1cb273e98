/**
 * One sweep job: a scenario under one seed and one cell's policy (issue #10). Runs it through `runScenario`
 * with a `policyOverride` (so the run is the same deterministic, checked run as `sim run`), then derives the
 * cell metrics from its report, its request capture and its transcript's facts. Pure data in and out, so a
 * worker thread can run it (`worker.ts`).
 */
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { parseFact } from '@compaction-sim/fixtures'
import type { CapturedRequest } from '@compaction-sim/core'
import type { ScenarioReport } from '../report/types.ts'
import { applyPolicyOverride, runScenario, type PolicyOverride } from '../run/run-scenario.ts'
import { scenarioTranscript } from '../run/transcript.ts'
import { loadScenario } from '../scenario/load.ts'
import { resolveScenario } from '../scenario/resolve.ts'
import type { SweepPolicy, SweepRunMetrics } from './types.ts'

/** What a job needs; plain data (structured-clonable). */
export interface SweepJob {
  /** Position in the sweep's job list: results are merged in this order. */
  index: number
  cellId: string
  policy: SweepPolicy
  /** Scenario file as given (relative to `cwd`). */
  file: string
  /** Seed override, or null for the scenario's own. */
  seed: number | null
  /** Folder of this job's artifacts (log, manifest, capture). */
  outDir: string
  cwd: string
}

/** A finished job. */
export interface SweepJobResult {
  index: number
  cellId: string
  metrics: SweepRunMetrics
}

/** Runs `job` and returns its metrics. Never throws for a scenario problem (it becomes the run's status). */
export async function runSweepJob(job: SweepJob): Promise<SweepJobResult> {
  // Each absent field (all four under a grid's `ownPolicy`) leaves the scenario's own value.
  const p = job.policy
  const override: PolicyOverride = {
    ...(p.thresholdRatio === undefined ? {} : { thresholdRatio: p.thresholdRatio }),
    ...(p.retainRatio === undefined ? {} : { retainRatio: p.retainRatio }),
    ...(p.pruner === undefined ? {} : { pruner: p.pruner }),
    ...(p.contextWindow === undefined ? {} : { contextWindow: p.contextWindow }),
    ...(p.summarizer === undefined ? {} : { summarizer: p.summarizer }),
    ...(p.profile === undefined ? {} : { profile: p.profile }),
  }
  const report = await runScenario(job.file, {
    outDir: job.outDir, cwd: job.cwd, policyOverride: override, ...(job.seed === null ? {} : { seed: job.seed }),
  })
  const requests = report.artifacts === undefined ? [] : await readCapture(join(job.outDir, report.artifacts.requests))
  const facts = report.status === 'passed' || report.status === 'failed' ? await factsOf(job, report.seed) : []
  const metrics = runMetricsOf(report, requests, facts)
  return { index: job.index, cellId: job.cellId, metrics: job.policy.profile === undefined ? metrics : { ...metrics, ...profileMetricsOf(requests, report) } }
}

/** The transcript's current facts (`Transcript.facts` without the superseded ones). */
async function factsOf(job: SweepJob, seed: number): Promise<string[]> {
  const raw = await loadScenario(job.file)
  const scenario = resolveScenario(applyPolicyOverride(raw, job.policy.contextWindow === undefined ? {} : { contextWindow: job.policy.contextWindow }), { file: job.file })
  const transcript = await scenarioTranscript(scenario, seed)
  return (transcript.facts ?? []).map(parseFact).filter((f) => f.status === 'current').map((f) => f.text)
}

async function readCapture(path: string): Promise<CapturedRequest[]> {
  const text = await readFile(path, 'utf8')
  return text.split('\n').filter((line) => line !== '').map((line) => JSON.parse(line) as CapturedRequest)
}

/**
 * The metrics of one run. Definitions (README "Tune thresholds"): pressure is the reference meter's reading at
 * each conversation request's dispatch over the window (the report's `timeline`); an overflow incident is a
 * request dispatched above the window (the mock does not enforce the window, a real provider would reject it)
 * or one that failed with a context-overflow code; cached tokens come from the `cache` section when the
 * report has one, else from the shared message prefix with the longest earlier request of the same model;
 * retention is the fraction of current facts whose literal text appears in the last conversation request;
 * probe sums come from the report's `retention` section (issue #20).
 */
export function runMetricsOf(report: ScenarioReport, requests: readonly CapturedRequest[], facts: readonly string[]): SweepRunMetrics {
  const base = { file: report.file, seed: report.seed, status: report.status }
  const reason = report.skipReason ?? report.error
  const points = report.timeline?.points ?? []
  const conversation = points.filter((p) => p.purpose === 'conversation')
  const ratios = conversation.map((p) => p.ratio ?? 0)
  const promptTokens = points.reduce((n, p) => n + p.tokens, 0)
  const overflowFailed = requests.filter((r) => r.failureCode !== undefined && /overflow/i.test(r.failureCode)).map((r) => r.index)
  const aboveWindow = points.filter((p) => p.ratio !== null && p.ratio > 1).map((p) => p.request)
  const lastConversation = requests.filter((r) => r.purpose === 'conversation').at(-1)
  const lastText = lastConversation === undefined ? '' : JSON.stringify(lastConversation.messages)
  const cache = report.cache
  return {
    ...base,
    ...(reason === undefined ? {} : { reason }),
    turns: report.counts?.turns ?? 0,
    requests: report.counts?.requests ?? 0,
    compactions: report.counts?.brackets ?? 0,
    prunes: report.counts?.prunes ?? 0,
    failedBrackets: report.counts?.failedBrackets ?? 0,
    overflowIncidents: new Set([...overflowFailed, ...aboveWindow]).size,
    pressureMax: round(Math.max(0, ...ratios)),
    pressureMean: round(ratios.length === 0 ? 0 : ratios.reduce((a, b) => a + b, 0) / ratios.length),
    summaryPromptTokens: points.filter((p) => p.purpose === 'compaction').reduce((n, p) => n + p.tokens, 0),
    promptTokens,
    cachedTokens: cache === undefined ? estimateCachedTokens(requests, points) : cache.overall.cached,
    cost: cache === undefined ? null : round(cache.requests.reduce((n, r) => n + r.cost, 0), 8),
    violations: report.violations.length,
    violationIds: [...new Set(report.violations.map((v) => v.id))].sort(),
    factsTotal: facts.length,
    factsKept: facts.filter((f) => lastText.includes(JSON.stringify(f).slice(1, -1))).length,
    ...probeSums(report),
  }
}

/**
 * The extra run metrics of a `profile` axis (issue #19), from the run's captured requests: provider rejections
 * (requests of either purpose that ended in `error`: the provider refused them) and summary calls (compaction
 * requests dispatched, whatever their outcome), and the turns the report's outcomes call `completed`.
 */
export function profileMetricsOf(
  requests: readonly CapturedRequest[], report: ScenarioReport,
): Pick<SweepRunMetrics, 'providerRejections' | 'summaryCalls' | 'turnsCompleted'> {
  return {
    turnsCompleted: (report.outcomes ?? []).filter((o) => o.kind === 'completed').length,
    providerRejections: requests.filter((r) => r.outcome === 'error').length,
    summaryCalls: requests.filter((r) => r.purpose === 'compaction').length,
  }
}

/** The run's retention probes summed over cycles and kinds (`probesPlanted`, `probesVisible`); none without a section. */
function probeSums(report: ScenarioReport): Pick<SweepRunMetrics, 'probesPlanted' | 'probesVisible'> {
  const r = report.retention
  if (r === undefined) return {}
  let planted = 0
  let visible = 0
  for (const p of r.points) {
    for (const c of [p.recall, p.artifact, p.continuation, p.decision]) {
      planted += c.planted
      visible += c.visible
    }
  }
  return { probesPlanted: planted, probesVisible: visible }
}

/**
 * Cached prompt tokens when the report has no cache section: per request, the share of its messages (by JSON
 * length) that equals a prefix of an earlier request of the same model, times its prompt tokens. A stand-in
 * for the §9 model until the cache-cost section is present.
 */
export function estimateCachedTokens(
  requests: readonly CapturedRequest[], points: ReadonlyArray<{ request: number; tokens: number }>,
): number {
  const tokensOf = new Map(points.map((p) => [p.request, p.tokens]))
  const seen: Array<{ key: string; parts: string[] }> = []
  let cached = 0
  for (const r of requests) {
    const key = `${r.provider}/${r.model}`
    const parts = r.messages.map((m) => JSON.stringify(m))
    const total = parts.reduce((n, p) => n + p.length, 0)
    let best = 0
    for (const earlier of seen) {
      if (earlier.key !== key) continue
      let shared = 0
      for (let i = 0; i < parts.length && i < earlier.parts.length && parts[i] === earlier.parts[i]; i++) shared += parts[i]?.length ?? 0
      best = Math.max(best, shared)
    }
    if (total > 0) cached += Math.floor(((tokensOf.get(r.index) ?? 0) * best) / total)
    seen.push({ key, parts })
  }
  return cached
}

/** `value` rounded to `digits` decimals (so the report's numbers are short and stable). */
export function round(value: number, digits = 4): number {
  const f = 10 ** digits
  return Math.round(value * f) / f
}
