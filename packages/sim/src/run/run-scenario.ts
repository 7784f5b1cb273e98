/**
 * `runScenario` / `runScenarios`: the programmatic API behind `sim run` (design §4 item 6). For each
 * scenario: load and resolve it (a `ScenarioError` makes it `error`), build the world (seeded PRNG, virtual
 * clock, mock provider with the translated faults on the process's one msw server), run the subject — for
 * a §13.4 crash fault, first in a child process SIGKILLed at the crash point, then restored in-process —
 * and write `<slug>.jsonl`, `<slug>.manifest.json` (§1.1, found by `sim check` as the log's sibling) and
 * `<slug>.requests.jsonl` into the output folder; then check the log (§12) with the manifest and capture,
 * and evaluate `expect`. Same scenario files + seed → byte-identical report and artifacts.
 */
import { createHash } from 'node:crypto'
import { mkdir, writeFile } from 'node:fs/promises'
import { isAbsolute, join, relative, resolve as resolvePath, sep } from 'node:path'
import { performance } from 'node:perf_hooks'
import { http } from 'msw'
import { setupServer, type SetupServer } from 'msw/node'
import {
  EventLog, Seq, TokenMeter, readLog, type CapturedRequest, type LogEvent, type RunManifest,
} from '@compaction-sim/core'
import { checkLog } from '../checker/run.ts'
import { CheckInputError } from '../checker/run-inputs.ts'
import type { MockProvider } from '../provider/mock-provider.ts'
import {
  RUN_REPORT_SCHEMA_VERSION,
  type ExpectationResult, type FinalPressure, type ReportedFault, type RunReport, type ScenarioReport, type ScenarioStatus,
} from '../report/types.ts'
import { ScenarioError } from '../scenario/errors.ts'
import { loadScenario } from '../scenario/load.ts'
import { faultSpecOf, resolveScenario, type ResolvedScenario } from '../scenario/resolve.ts'
import { runReferenceSession } from '../subjects/reference.ts'
import { CLOCK_ORIGIN_MS } from '../world/clock.ts'
import type { SubjectSessionResult } from '../subjects/types.ts'
import { countsOf, evaluateExpectations, outcomesOf } from './expectations.ts'
import { scenarioTranscript } from './transcript.ts'
import { createWorld, unsupportedReason, worldRoutes } from './world.ts'

/** Base URL the in-process mock answers under (msw intercepts it; nothing leaves the process). */
export const MOCK_BASE_URL = 'http://provider.compaction-sim.test/v1'

/** Options of `runScenario` and `runScenarios`. */
export interface RunOptions {
  /** Folder the artifacts (and, for `runScenarios`' callers, the reports) go to; created if missing. */
  outDir: string
  /** Overrides every scenario's `seed` (uint32). */
  seed?: number
  /** Adds wall-clock durations under `timings` keys (then the report is no longer byte-stable). */
  timings?: boolean
  /** Working directory `file` paths are shown relative to (default `process.cwd()`). */
  cwd?: string
}

/** The version of sim written into reports. */
export const TOOL_VERSION = '0.1.0'

/** The one msw server of the process, dispatching to the provider of the scenario that runs now. */
class MockMount {
  private server: SetupServer | null = null
  private users = 0
  current: MockProvider | null = null

  open(): void {
    if (this.users++ > 0) return
    const handle = async ({ request }: { request: Request }): Promise<Response> => {
      const provider = this.current
      if (provider === null) return new Response('no scenario is running', { status: 503 })
      return provider.handle(request)
    }
    this.server = setupServer(
      http.post(`${MOCK_BASE_URL}/chat/completions`, handle),
      http.get(`${MOCK_BASE_URL}/models/:id`, handle),
      http.get(`${MOCK_BASE_URL}/models`, handle),
    )
    this.server.listen({ onUnhandledRequest: 'error' })
  }

  close(): void {
    if (--this.users > 0) return
    this.server?.close()
    this.server = null
  }
}

const mount = new MockMount()

/** The shape of the crash harness's API (`world/crash.ts`, owned by the crash harness). */
interface CrashHarness {
  runCrashingSession(options: {
    scenarioFile: string
    seed: number
    logPath: string
    crashPoint: { afterEvent: string; occurrence: number }
  }): Promise<{ killed: boolean; durableAcked: Array<{ seq: number; type: string }> }>
}

/** The crash harness when it is built, else null (crash scenarios are then skipped). */
async function crashHarness(): Promise<CrashHarness | null> {
  try {
    const mod = await import(new URL('../world/crash.ts', import.meta.url).href) as Partial<CrashHarness>
    return typeof mod.runCrashingSession === 'function' ? mod as CrashHarness : null
  } catch {
    return null // world/crash.ts does not exist yet: crash scenarios are skipped with a reason
  }
}

/** The one-line command that reproduces a scenario's run. */
export function replayCommand(file: string, seed: number): string {
  const quoted = /^[\w./-]+$/.test(file) ? file : `'${file.replaceAll("'", "'\\''")}'`
  return `pnpm sim run ${quoted} --seed ${seed}`
}

/** A file-name stem for the scenario's artifacts: its path without `scenarios/` and `.yaml`, `/` → `--`. */
export function slugOf(file: string): string {
  const stem = file.replaceAll('\\', '/').replace(/^(\.\/)?scenarios\//, '').replace(/\.ya?ml$/i, '')
  return stem.replace(/^\/+/, '').replaceAll('/', '--').replace(/[^A-Za-z0-9._-]/g, '_') || 'scenario'
}

/** Runs every scenario in order and assembles the `RunReport`; the mock is mounted once for all of them. */
export async function runScenarios(files: readonly string[], options: RunOptions): Promise<RunReport> {
  const started = performance.now()
  await mkdir(options.outDir, { recursive: true })
  const scenarios: ScenarioReport[] = []
  const slugs = new Map<string, number>()
  mount.open()
  try {
    for (const file of files) {
      let slug = slugOf(displayPath(file, options.cwd))
      const seen = slugs.get(slug) ?? 0
      slugs.set(slug, seen + 1)
      if (seen > 0) slug = `${slug}-${seen + 1}`
      scenarios.push(await runOne(file, slug, options))
    }
  } finally {
    mount.close()
  }
  const count = (s: ScenarioStatus): number => scenarios.filter((r) => r.status === s).length
  const report: RunReport = {
    schemaVersion: RUN_REPORT_SCHEMA_VERSION,
    tool: { name: 'compaction-sim', version: TOOL_VERSION },
    runId: runIdOf(files.map((f) => displayPath(f, options.cwd)), options.seed ?? null),
    seed: options.seed ?? null,
    summary: {
      total: scenarios.length, passed: count('passed'), failed: count('failed'), skipped: count('skipped'), error: count('error'),
    },
    scenarios,
  }
  if (options.timings === true) report.timings = { ms: Math.round(performance.now() - started) }
  return report
}

/** Runs one scenario (mounting the mock for just this run). See the module doc. */
export async function runScenario(file: string, options: RunOptions): Promise<ScenarioReport> {
  await mkdir(options.outDir, { recursive: true })
  mount.open()
  try {
    return await runOne(file, slugOf(displayPath(file, options.cwd)), options)
  } finally {
    mount.close()
  }
}

/** Deterministic id of a run: a hash of the seed override and the scenario list. */
export function runIdOf(files: readonly string[], seed: number | null): string {
  const hash = createHash('sha256').update(JSON.stringify({ seed, files })).digest('hex').slice(0, 10)
  return `run-${seed ?? 'own'}-${hash}`
}

function displayPath(file: string, cwd = process.cwd()): string {
  const rel = isAbsolute(file) ? relative(cwd, file) : file
  const shown = rel.startsWith('..') ? file : rel
  return shown.split(sep).join('/')
}

async function runOne(file: string, slug: string, options: RunOptions): Promise<ScenarioReport> {
  const started = performance.now()
  const shown = displayPath(file, options.cwd)
  const base = { file: shown, name: slug, subject: 'reference', seed: options.seed ?? 0, dialect: 'seed' as const }
  let report: ScenarioReport
  try {
    const raw = await loadScenario(file)
    const scenario = resolveScenario(raw, { file })
    report = await runResolved(scenario, shown, slug, options)
  } catch (err) {
    const internal = !(err instanceof ScenarioError || err instanceof CheckInputError)
    const message = err instanceof Error ? (internal ? `${err.name}: ${err.message}` : err.message) : String(err)
    report = {
      ...base,
      status: 'error',
      error: message,
      errorKind: internal ? 'internal' : 'input',
      violations: [],
      expectations: [],
      faults: [],
      replay: replayCommand(shown, options.seed ?? 0),
    }
    if (options.seed === undefined) report.replay = `pnpm sim run ${shown}`
  }
  if (options.timings === true) report.timings = { ms: Math.round(performance.now() - started) }
  return report
}

async function runResolved(scenario: ResolvedScenario, shown: string, slug: string, options: RunOptions): Promise<ScenarioReport> {
  const seed = options.seed ?? scenario.seed
  const head = {
    file: shown, name: scenario.name, subject: scenario.subject.kind, seed, dialect: scenario.dialect,
    replay: replayCommand(shown, seed),
  }
  const skip = (reason: string): ScenarioReport => ({
    ...head, status: 'skipped', skipReason: reason, violations: [], expectations: [], faults: [],
  })
  if (scenario.dialect !== 'seed') return skip(`the reference subject writes the seed dialect only, not ${scenario.dialect} (§14)`)
  const unsupported = unsupportedReason(scenario)
  if (unsupported !== null) return skip(unsupported)
  const crash = scenario.faults.find((f) => f.target === 'crash')
  const harness = crash === undefined ? null : await crashHarness()
  if (crash !== undefined && harness === null) return skip('crash harness not built (packages/sim/src/world/crash.ts)')
  const transcript = await scenarioTranscript(scenario, seed)
  const artifacts = { log: `${slug}.jsonl`, manifest: `${slug}.manifest.json`, requests: `${slug}.requests.jsonl` }
  const logPath = join(options.outDir, artifacts.log)
  // The provider's clock only stamps its own wire captures and `created` fields, which no artifact holds.
  const world = createWorld({ scenario, transcript, now: () => CLOCK_ORIGIN_MS })
  mount.current = world.provider
  const sessions: SubjectSessionResult[] = []
  const crashes: Array<{ afterSeq: number }> = []
  let acked: Array<{ seq: number; type: string }> = []
  try {
    const session = { scenario, transcript, logPath, baseUrl: MOCK_BASE_URL, seed, hooks: world.hooks }
    if (crash !== undefined && harness !== null) {
      const point = crash.when.afterEvent ?? 'turn/end'
      const result = await harness.runCrashingSession({
        scenarioFile: resolvePath(scenario.file), seed, logPath, crashPoint: { afterEvent: point, occurrence: crash.when.occurrence },
      })
      acked = result.durableAcked
      const last = acked.at(-1)
      if (result.killed && last !== undefined) crashes.push({ afterSeq: last.seq })
      sessions.push(await runReferenceSession({ ...session, resume: true }))
    } else {
      sessions.push(await runReferenceSession(session))
    }
  } finally {
    mount.current = null
  }
  const requests = renumber(sessions.flatMap((s) => s.requests))
  const manifest: RunManifest = {
    scenario: shown,
    compaction: structuredClone(scenario.policyConfig) as RunManifest['compaction'],
    routes: worldRoutes(scenario),
    faults: scenario.faults.map(faultSpecOf),
  }
  if (scenario.prunerConfig !== null) manifest.pruner = structuredClone(scenario.prunerConfig) as NonNullable<RunManifest['pruner']>
  if (crashes.length > 0) manifest.crashes = crashes.map((c) => ({ afterSeq: Seq(c.afterSeq) }))
  const regionStarts = sessions.flatMap((s) => s.explicitRegionStarts)
  if (regionStarts.length > 0) manifest.explicitRegionStarts = regionStarts.map((s) => Seq(s))
  await writeFile(join(options.outDir, artifacts.manifest), `${JSON.stringify(manifest, null, 2)}\n`)
  await writeFile(join(options.outDir, artifacts.requests), requests.map((r) => `${JSON.stringify(r)}\n`).join(''))

  const check = await checkLog(logPath, { dialect: 'seed', manifest, requests })
  if (check.kind === 'input-error') throw check.error
  if (check.internalErrors.length > 0) {
    throw new Error(`the checker failed internally: ${check.internalErrors.map((f) => `${f.id}: ${f.message}`).join('; ')}`)
  }
  const events = (await readLog(logPath, { dialect: 'seed' })).events
  const counts = countsOf(events, requests.length, crashes.length)
  const outcomes = outcomesOf(events)
  const finalPressure = pressureOf(events, scenario)
  const finalLog = EventLog.fromEvents(events, { dialect: 'seed' })
  const expectations: ExpectationResult[] = evaluateExpectations({
    expect: scenario.expect, events, violations: check.violations, outcomes, counts, finalPressure,
    finalSurfaceNodes: finalLog.state.surface.nodes.length,
  })
  if (crash !== undefined) expectations.push(durableExpectation(acked, events))
  const fired = world.fired()
  const faults: ReportedFault[] = scenario.faults.map((f) => ({
    id: f.id, kind: f.kind, fired: f.target === 'crash' ? crashes.length : fired.get(f.id) ?? 0,
  }))
  const failed = expectations.some((e) => !e.passed)
  const warnings = sessions.flatMap((s) => s.warnings)
  return {
    ...(warnings.length === 0 ? {} : { warnings }),
    ...head,
    status: failed ? 'failed' : 'passed',
    artifacts,
    counts,
    outcomes,
    finalPressure,
    policySource: check.policySource,
    invariants: scenario.expect.invariants === 'all' ? 'all' : [...scenario.expect.invariants],
    violations: check.violations.map((v) => ({ id: v.id, seq: v.seq, message: v.message })),
    expectations,
    faults,
  }
}

/** Dispatch order over all sessions of the run (a resumed session numbers its requests from 0 again). */
function renumber(requests: readonly CapturedRequest[]): CapturedRequest[] {
  return requests.map((r, index) => ({ ...r, index }))
}

/** The reference meter's pressure at the end of the log (§2), against the window of the route in force. */
function pressureOf(events: readonly LogEvent[], scenario: ResolvedScenario): FinalPressure {
  const tokens = new TokenMeter({ events }, { dialect: 'seed' }).measure().totalTokens
  const log = EventLog.fromEvents(events, { dialect: 'seed' })
  const context = log.state.routeContext?.data
  const contextWindow = context?.contextWindow ?? (context === undefined ? scenario.provider.contextWindow : null)
  return { tokens, ratio: contextWindow === null ? null : tokens / contextWindow, contextWindow }
}

/** §13.4: every event the crashed child acknowledged as durable is in the final log, unchanged in type. */
function durableExpectation(acked: ReadonlyArray<{ seq: number; type: string }>, events: readonly LogEvent[]): ExpectationResult {
  const missing = acked.filter((a) => events[a.seq]?.type !== a.type)
  return {
    name: 'durable',
    passed: missing.length === 0,
    expected: `all ${acked.length} event(s) acknowledged durable before the crash are in the log`,
    actual: missing.length === 0 ? 'all present' : `missing: ${missing.slice(0, 5).map((m) => `seq ${m.seq} ${m.type}`).join(', ')}`,
  }
}
