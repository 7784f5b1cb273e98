/**
 * `runScenario` / `runScenarios`: the programmatic API behind `sim run` (design §4 item 6). For each
 * scenario: load and resolve it (a `ScenarioError` makes it `error`), build the world (seeded PRNG, virtual
 * clock, mock provider with the translated faults on the process's one in-process interception), run the subject — for
 * a §13.4 crash fault, first in a child process SIGKILLed at the crash point, then restored in-process —
 * and write `<slug>.jsonl`, `<slug>.manifest.json` (§1.1, found by `sim check` as the log's sibling) and
 * `<slug>.requests.jsonl` into the output folder; then check the log (§12) with the manifest and capture,
 * and evaluate `expect`. Same scenario files + seed → byte-identical report and artifacts.
 *
 * No verdict depends on wall-clock time (issue #18): if the crash child's liveness watchdog fires, or the
 * child dies before its crash point other than by finishing, the scenario is `error` (`errorKind`
 * `watchdog` or `internal`), never a FAIL judged from the half-written log.
 */
import { createHash } from 'node:crypto'
import { mkdir, open, readFile, rm, writeFile } from 'node:fs/promises'
import { isAbsolute, join, relative, resolve as resolvePath, sep } from 'node:path'
import { performance } from 'node:perf_hooks'
import { interceptRoutes, type InterceptRoute } from '../provider/mount-intercept.ts'
import {
  EventLog, LogError, MeterReplayError, Seq, assertNever, type CapturedRequest, type LogEvent, type RunManifest,
  type BasicCompactionConfig, type FaultSpec, type JsonValue,
} from '@compaction-sim/core'
import { checkLog, type CheckReport } from '../checker/run.ts'
import { CheckInputError } from '../checker/run-inputs.ts'
import type { MockProvider } from '../provider/mock-provider.ts'
import {
  RUN_REPORT_SCHEMA_VERSION,
  type ExpectationResult, type ReportedFault, type RunReport, type ScenarioArtifacts, type ScenarioReport, type ScenarioStatus,
} from '../report/types.ts'
import { ScenarioError, type ScenarioIssue } from '../scenario/errors.ts'
import { resolvedTranscriptProbe, type ResolvedProbe } from '../scenario/resolve-probes.ts'
import type { Transcript } from '@compaction-sim/fixtures'
import { retentionOf } from './retention.ts'
import { loadScenario } from '../scenario/load.ts'
import type { Scenario, SummarizerConfig } from '../scenario/types.ts'
import type { SweepProfile } from '../sweep/types.ts'
import { faultSpecOf, resolveScenario, type ResolvedFault, type ResolvedScenario } from '../scenario/resolve.ts'
import { referenceSubject } from '../subjects/reference.ts'
import { missingFeatureReason } from '../subjects/features.ts'
import { MODULE_CRASH_CHILD, SubjectModuleError, subjectModulePath } from '../subjects/module.ts'
import { CLOCK_ORIGIN_MS } from '../world/clock.ts'
import type { Subject, SubjectSessionResult } from '../subjects/types.ts'
import { countsOf, evaluateExpectations, invariantsExpectation, outcomesOf, pinnedToSeed, type ExpectationGaps } from './expectations.ts'
import { scenarioTranscript } from './transcript.ts'
import { timelineOf } from './timeline.ts'
import { driftOf, joinProviderCounts, withProviderLine, withReplayedMeter, type ProviderCountJoin } from './drift.ts'
import { createWorld, faultLabel, unsupportedReason, upstreamsOf, worldRoutes, type WorldCounters } from './world.ts'
import { Cassette, CassetteFileError, CassetteMissError, UpstreamError, cassettePathOf } from '../provider/upstream.ts'
import { readChildCounters } from '../world/crash-counters.ts'
import { trackPending } from './pending-work.ts'
import { isCheckpointEvent } from '../world/crash.ts'
import { plural } from '../plural.ts'
import { DshSubjectMissingError, loadDshSubject } from '../subjects/dsh-loader.ts'
import { differentialOf } from './differential.ts'
import { replayOf } from './replay.ts'
import { runSessionsScenario, type SessionMount } from './sessions.ts'
import { resolveRestarts, resolveSessions, type ResolvedRestart, type ResolvedSession } from '../scenario/resolve-sessions.ts'
import { runCacheOf, scenarioCacheOf } from '../metrics/cache.ts'
import { pathsOf } from '../metrics/paths.ts'
import { WatchdogError, WatchdogScaleError } from '../world/watchdog.ts'
import { writeWorldRecord } from '../world/record-file.ts'

/**
 * The built-in subject a scenario's `subject:` names; `dsh` imports its optional package on first use.
 * @throws DshSubjectMissingError when `dsh` is named and `@compaction-sim/subject-dsh` is not installed (an input error).
 */
async function subjectOfKind(kind: ResolvedScenario['subject']['kind']): Promise<Subject> {
  switch (kind) {
    case 'reference': return referenceSubject
    case 'dsh': return loadDshSubject()
    default: return assertNever(kind, 'subject')
  }
}

/** Base URL the in-process mock answers under (intercepted in-process; nothing leaves the process). */
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
  /** The subject to run instead of the reference core (e.g. a user module, `subjects/module.ts`). */
  subject?: Subject
  /**
   * Runs every scenario under each of these subjects in order (`sim run --subject reference,dsh`), overriding
   * `subject` and the scenarios' own; with two or more, the report gets a `differential` section (issue #7).
   */
  subjects?: readonly Subject[]
  /**
   * Policy settings that replace the scenario's own before it is resolved (issue #10, `sim sweep`): the §3.2
   * checks then apply to the combination, and the run manifest records it, so the checker judges the log by it.
   */
  policyOverride?: PolicyOverride
  /**
   * Called with each scenario's report as soon as it is final, in report order (`sim run` streams its output
   * from here). `done` counts the reports so far, `total` the reports the run will have (files × subjects).
   * Must not throw; the report it gets is the one `runScenarios` returns (do not mutate it beyond `replay`).
   */
  onScenario?: (scenario: ScenarioReport, done: number, total: number) => void
  /**
   * Stop running after this many scenarios failed or errored (`sim run --bail n`, n ≥ 1). The scenarios not
   * run are still reported, as `skipped` with a `not run: …` reason, so the report lists every file.
   */
  bailAfter?: number
  /**
   * Record mode of upstream summarizers (issue #20, `sim run --record`): compaction requests the scenario's
   * cassette lacks are forwarded to the upstream and stored in `<scenario>.cassette.json`. Default false: replay
   * only, and a missing entry is an input error naming the request; nothing reaches the network.
   */
  record?: boolean
  /** The environment an upstream API key is read from when recording (default `process.env`). */
  env?: Readonly<Record<string, string | undefined>>
}

/** One sweep cell's policy (issue #10): each set field replaces the scenario's value; `retainRatio` drops `retainTokens`. */
export interface PolicyOverride {
  thresholdRatio?: number
  retainRatio?: number
  /** `false` unloads the pruner; `true` loads the scenario's own pruner config, or `{}` (§5.1 defaults) when it has none. */
  pruner?: boolean
  /** The routed model's context window (`provider.contextWindow`). */
  contextWindow?: number
  /** The summary route's summarizer (issue #20: a sweep over `summarizer:` definitions). */
  summarizer?: SummarizerConfig
  /**
   * The policy profile (issue #19: a sweep's `profile` axis): `faithful` or `hardened` sets `policy.profile`, a
   * rule's config key sets `profile: faithful` with that one rule on; either way the scenario's own `hardening`
   * is dropped, so the cell runs exactly the profile it names.
   */
  profile?: SweepProfile
}

/** `raw` with `override` applied (a copy; `raw` is not modified). */
export function applyPolicyOverride(raw: Scenario, override: PolicyOverride): Scenario {
  const doc = structuredClone(raw)
  const policy = { ...doc.policy }
  if (override.thresholdRatio !== undefined) policy.thresholdRatio = override.thresholdRatio
  if (override.retainRatio !== undefined) {
    policy.retainRatio = override.retainRatio
    delete policy.retainTokens
  }
  if (override.profile !== undefined) {
    delete policy.hardening
    if (override.profile === 'faithful' || override.profile === 'hardened') policy.profile = override.profile
    else {
      policy.profile = 'faithful'
      policy.hardening = { [override.profile]: true }
    }
  }
  doc.policy = policy
  if (override.pruner === false) doc.pruner = false
  if (override.pruner === true) doc.pruner = doc.pruner === undefined || doc.pruner === false ? {} : doc.pruner
  if (override.contextWindow !== undefined) {
    // With routes the window belongs to a route (the shorthand's key is refused there): the conversation route's.
    const routes = doc.provider.routes
    const conversation = routes?.find((r) => r.model === doc.provider.conversation) ?? routes?.[0]
    if (routes === undefined || conversation === undefined) doc.provider = { ...doc.provider, contextWindow: override.contextWindow }
    else conversation.contextWindow = override.contextWindow
  }
  if (override.summarizer !== undefined) {
    // The summary route: the one `provider.summary` names, else the first route, else the single-route shorthand.
    const routes = doc.provider.routes
    const target = routes?.find((r) => r.model === doc.provider.summary) ?? routes?.[0]
    if (routes === undefined || target === undefined) doc.provider = { ...doc.provider, summarizer: structuredClone(override.summarizer) }
    else target.summarizer = structuredClone(override.summarizer)
  }
  return doc
}

/** The version of sim written into reports. */
export const TOOL_VERSION = '0.1.0'

/**
 * The one in-process interception of the process, dispatching to the provider of the scenario that runs now, and
 * (`serve`, issue #16) to each session of a several-session scenario under its own base URL.
 */
class MockMount implements SessionMount {
  private stop: (() => void) | null = null
  private users = 0
  /** The routes the interception matches; `interceptRoutes` reads this array on every request, so `serve` extends it. */
  private readonly routes: InterceptRoute[] = []
  current: MockProvider | null = null
  /** Base URLs requests may pass through to (the upstream summarizers being recorded, issue #20); empty otherwise. */
  passthrough: readonly string[] = []

  open(): void {
    if (this.users++ > 0) return
    const handle = async (request: Request): Promise<Response> => {
      const provider = this.current
      if (provider === null) return new Response('no scenario is running', { status: 503 })
      return provider.handle(request)
    }
    this.routes.splice(0, this.routes.length, ...routesUnder(MOCK_BASE_URL, handle))
    this.stop = interceptRoutes(this.routes, (url) => this.passthrough.some((base) => url.href.startsWith(`${base}/`)))
  }

  serve(base: string, handle: (request: Request) => Promise<Response>): () => void {
    const added = routesUnder(base, handle)
    this.routes.push(...added)
    return () => {
      for (const route of added) {
        const i = this.routes.indexOf(route)
        if (i >= 0) this.routes.splice(i, 1)
      }
    }
  }

  close(): void {
    if (--this.users > 0) return
    this.stop?.()
    this.stop = null
  }
}

/** The four routes of one provider under `base` (chat completions, the anthropic messages wire, model metadata). */
function routesUnder(base: string, handle: (request: Request) => Promise<Response>): InterceptRoute[] {
  return [
    { method: 'POST', base, path: '/chat/completions', handle },
    { method: 'POST', base, path: '/messages', handle }, // the anthropic wire
    { method: 'GET', base, path: '/models/:id', handle },
    { method: 'GET', base, path: '/models', handle },
  ]
}

const mount = new MockMount()

/** The shape of the crash harness's API (`world/crash.ts`, owned by the crash harness). */
interface CrashHarness {
  runCrashingSession(options: {
    scenarioFile: string
    seed: number
    logPath: string
    crashPoint: { afterEvent: string; occurrence: number }
    resume?: boolean
    childEntry?: string
    childArgs?: string[]
    capturePath?: string
    countersPath?: string
    priorCounters?: unknown
  }): Promise<{
    killed: boolean
    durableAcked: Array<{ seq: number; type: string }>
    exitCode: number | null
    stderr: string
    error: string | null
    watchdog: { awaited: string; waitedMs: number } | null
  }>
  /** The crashed child's request capture (§1.1) up to the crash point, in dispatch order. */
  readChildCapture(path: string, durableEvents: number | null): Promise<CapturedRequest[]>
}

/** The crash harness when it is built, else null (crash scenarios are then skipped). */
async function crashHarness(): Promise<CrashHarness | null> {
  try {
    const mod = await import('../world/crash.ts') as Partial<CrashHarness>
    return typeof mod.runCrashingSession === 'function' && typeof mod.readChildCapture === 'function' ? mod as CrashHarness : null
  } catch {
    return null // world/crash.ts does not exist yet: crash scenarios are skipped with a reason
  }
}

/** The one-line command that reproduces a scenario's run. */
export function replayCommand(file: string, seed: number): string {
  const quoted = /^[\w./-]+$/.test(file) ? file : `'${file.replaceAll("'", "'\\''")}'`
  return `pnpm sim run ${quoted} --seed ${seed}`
}

/** The subject's §14 expectation gaps for `scenario`, as an `ExpectationInputs` fragment. */
function gapsOf(subject: Subject, scenario: ResolvedScenario): { gaps?: ExpectationGaps } {
  const gaps = subject.expectationGaps?.(scenario) ?? null
  return gaps === null ? {} : { gaps }
}

/**
 * Writes one JSON line per item, in batches of about 1 MiB: a long session's capture holds every request's full
 * prompt, so the whole file as one string can exceed V8's string limit (`RangeError: Invalid string length`).
 */
export async function writeJsonLines(path: string, items: readonly unknown[]): Promise<void> {
  const handle = await open(path, 'w')
  try {
    let batch: string[] = []
    let size = 0
    for (const item of items) {
      const line = `${JSON.stringify(item)}\n`
      batch.push(line)
      size += line.length
      if (size >= 1 << 20) {
        await handle.write(batch.join(''))
        batch = []
        size = 0
      }
    }
    if (batch.length > 0) await handle.write(batch.join(''))
  } finally {
    await handle.close()
  }
}

/** A file-name stem for the scenario's artifacts: its path without `scenarios/` and `.yaml`, `/` → `--`. */
export function slugOf(file: string): string {
  const stem = file.replaceAll('\\', '/').replace(/^(\.\/)?scenarios\//, '').replace(/\.ya?ml$/i, '')
  return stem.replace(/^\/+/, '').replaceAll('/', '--').replace(/[^A-Za-z0-9._-]/g, '_') || 'scenario'
}

/** The artifact stem of each of `files`, in order: `slugOf` its path, a repeated stem numbered `-2`, `-3`, … */
export function slugsOf(files: readonly string[], cwd?: string): string[] {
  const seen = new Map<string, number>()
  return files.map((file) => {
    const slug = slugOf(displayPath(file, cwd))
    const n = seen.get(slug) ?? 0
    seen.set(slug, n + 1)
    return n > 0 ? `${slug}-${n + 1}` : slug
  })
}

/** Runs every scenario in order and assembles the `RunReport`; the mock is mounted once for all of them. */
export async function runScenarios(files: readonly string[], options: RunOptions): Promise<RunReport> {
  const started = performance.now()
  await mkdir(options.outDir, { recursive: true })
  const scenarios: ScenarioReport[] = []
  mount.open()
  try {
    const subjects = options.subjects ?? []
    const total = files.length * Math.max(1, subjects.length)
    let problems = 0
    const finish = (report: ScenarioReport): void => {
      scenarios.push(report)
      if (report.status === 'failed' || report.status === 'error') problems++
      options.onScenario?.(report, scenarios.length, total)
    }
    const bailed = (): boolean => options.bailAfter !== undefined && problems >= options.bailAfter
    const stems = slugsOf(files, options.cwd)
    for (const [k, file] of files.entries()) {
      const slug = stems[k] ?? slugOf(displayPath(file, options.cwd))
      const runs = subjects.length === 0 ? [options] : subjects.map((subject) => ({ ...options, subject }))
      // Several subjects: the first keeps the plain artifact names, the others get `--<subject>`.
      for (const [i, runOptions] of runs.entries()) {
        const runSlug = i === 0 ? slug : `${slug}--${runOptions.subject?.name ?? 'reference'}`
        finish(bailed() ? await notRun(file, runSlug, runOptions, problems) : await runOne(file, runSlug, runOptions))
      }
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
  if ((options.subjects?.length ?? 0) >= 2) {
    report.differential = await differentialOf(scenarios, options.outDir, options.subjects?.map((s) => s.name) ?? [])
  }
  const cache = runCacheOf(scenarios)
  if (cache !== undefined) report.cache = cache
  if (options.timings === true) report.timings = { ms: Math.round(performance.now() - started) }
  return report
}

/**
 * Runs one scenario (mounting the mock for just this run). See the module doc.
 * @param slug the stem of its artifacts (default `slugOf` its path; `runScenarios` numbers repeated stems).
 */
export async function runScenario(file: string, options: RunOptions, slug?: string): Promise<ScenarioReport> {
  await mkdir(options.outDir, { recursive: true })
  mount.open()
  try {
    return await runOne(file, slug ?? slugOf(displayPath(file, options.cwd)), options)
  } finally {
    mount.close()
  }
}

/** Deterministic id of a run: a hash of the seed override and the scenario list. */
export function runIdOf(files: readonly string[], seed: number | null): string {
  const hash = createHash('sha256').update(JSON.stringify({ seed, files })).digest('hex').slice(0, 10)
  return `run-${seed ?? 'own'}-${hash}`
}

/** Deterministic id of a `sim run --seeds` run: a hash of the seeds and the scenario list. */
export function seedsRunIdOf(files: readonly string[], seeds: readonly number[]): string {
  const hash = createHash('sha256').update(JSON.stringify({ seeds, files })).digest('hex').slice(0, 10)
  return `run-seeds-${hash}`
}

/** `file` as reports show it: POSIX, relative to `cwd` when inside it. */
export function displayPath(file: string, cwd = process.cwd()): string {
  const rel = isAbsolute(file) ? relative(cwd, file) : file
  const shown = rel.startsWith('..') ? file : rel
  return shown.split(sep).join('/')
}

/**
 * The report of a scenario `--bail` left out: `skipped`, with its name and seed when the file loads (else the
 * slug and the override seed), and a reason naming the bail.
 */
async function notRun(file: string, slug: string, options: RunOptions, problems: number): Promise<ScenarioReport> {
  const shown = displayPath(file, options.cwd)
  let name = slug
  let seed = options.seed ?? 0
  try {
    const raw = await loadScenario(file)
    name = raw.name
    seed = options.seed ?? raw.seed
  } catch {
    // an unloadable file is not run either; the slug and the override seed stand in for its name and seed
  }
  const bail = options.bailAfter ?? 1
  return {
    file: shown, name, subject: options.subject?.name ?? 'reference', seed, dialect: 'seed', status: 'skipped',
    skipReason: `not run: --bail ${bail} stopped the run after ${problems === 1 ? '1 failure' : `${problems} failures`}`,
    violations: [], expectations: [], faults: [], replay: replayCommand(shown, seed),
  }
}

async function runOne(file: string, slug: string, options: RunOptions): Promise<ScenarioReport> {
  const started = performance.now()
  const shown = displayPath(file, options.cwd)
  const base = { file: shown, name: slug, subject: options.subject?.name ?? 'reference', seed: options.seed ?? 0, dialect: 'seed' as const }
  let report: ScenarioReport
  try {
    const raw = await loadScenario(file)
    const override = options.policyOverride
    const doc = override === undefined ? raw : applyPolicyOverride(raw, override)
    const scenario = resolveScenario(doc, { file })
    const shape = { sessions: resolveSessions(doc, { file }), restarts: resolveRestarts(doc, scenario) }
    report = await runResolved(scenario, shown, slug, options, shape)
  } catch (err) {
    // A missing or malformed `@compaction-sim/subject-dsh` (for `subject: dsh`) is the user's install to fix: an input error.
    const input = err instanceof ScenarioError || err instanceof CheckInputError || err instanceof WatchdogScaleError
      || err instanceof DshSubjectMissingError || err instanceof SubjectModuleError
      || err instanceof CassetteMissError || err instanceof UpstreamError || err instanceof CassetteFileError
    const watchdog = err instanceof WatchdogError
    const internal = !input && !watchdog
    const message = err instanceof Error ? (internal ? `${err.name}: ${err.message}` : err.message) : String(err)
    report = {
      ...base,
      status: 'error',
      error: message,
      errorKind: watchdog ? 'watchdog' : internal ? 'internal' : 'input',
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

/** What a scenario's `sessions:` and `restart:` keys resolved to (both empty for a plain one-session scenario). */
interface RunShapeSpec {
  sessions: readonly ResolvedSession[]
  restarts: readonly ResolvedRestart[]
}

async function runResolved(
  scenario: ResolvedScenario, shown: string, slug: string, options: RunOptions, shape: RunShapeSpec = { sessions: [], restarts: [] },
): Promise<ScenarioReport> {
  const seed = options.seed ?? scenario.seed
  const subject = options.subject ?? await subjectOfKind(scenario.subject.kind)
  // The dialect of the log the subject writes (the dsh subject writes dsh-0.1.0-rc.8, §14.1).
  const logDialect = subject.dialect ?? 'seed'
  const head = {
    file: shown, name: scenario.name, subject: subject.name, seed, dialect: scenario.dialect === 'seed' ? logDialect : scenario.dialect,
    replay: replayCommand(shown, seed),
  }
  const skip = (reason: string): ScenarioReport => ({
    ...head, status: 'skipped', skipReason: reason, violations: [], expectations: [], faults: [],
  })
  const subjectSkip = subject.skipReason?.(scenario) ?? null
  if (subjectSkip !== null) return skip(subjectSkip)
  if (scenario.dialect !== 'seed') return skip(`the reference subject writes the seed dialect only, not ${scenario.dialect} (§14)`)
  const unsupported = unsupportedReason(scenario)
  if (unsupported !== null) return skip(unsupported)
  const runShape = { sessions: shape.sessions.length, restarts: shape.restarts.length }
  const lacking = missingFeatureReason(scenario, subject, undefined, runShape)
  if (lacking !== null) return skip(lacking)
  if (shape.sessions.length > 0) {
    for (const session of shape.sessions) {
      const reason = subject.skipReason?.(session.scenario) ?? missingFeatureReason(session.scenario, subject, await scenarioTranscript(session.scenario, seed), runShape)
      if (reason !== null) return skip(`session ${session.name}: ${reason}`)
    }
    return runSessionsScenario(scenario, shape.sessions, { subject, seed, outDir: options.outDir, slug, mount, head, shown })
  }
  const subjectModule = subject === referenceSubject ? null : subjectModulePath(subject)
  const crashFaults = scenario.faults.filter((f) => f.target === 'crash')
  const crash = crashFaults[0]
  const harness = crash === undefined ? null : await crashHarness()
  if (crash !== undefined && harness === null) return skip('crash harness not built (packages/sim/src/world/crash.ts)')
  if (crash !== undefined && subject !== referenceSubject && subjectModule === null) {
    return skip(`a crash scenario runs the subject in a child process: subject ${subject.name} must be loaded as module:<path>`)
  }
  const transcript = await scenarioTranscript(scenario, seed)
  const probes = probesOf(scenario, transcript)
  const lackingForTranscript = missingFeatureReason(scenario, subject, transcript)
  if (lackingForTranscript !== null) return skip(lackingForTranscript)
  const artifacts = { log: `${slug}.jsonl`, manifest: `${slug}.manifest.json`, requests: `${slug}.requests.jsonl` }
  const logPath = join(options.outDir, artifacts.log)
  const sessions: SubjectSessionResult[] = []
  // Issue #15 drift: each session's requests get the provider's count from the mock's capture (run/drift.ts).
  const joins: ProviderCountJoin[] = []
  const joined = (): ProviderCountJoin => {
    const join = joinProviderCounts(world.provider)
    joins.push(join)
    return join
  }
  const crashes: Array<{ afterSeq: number }> = []
  let acked: Array<{ seq: number; type: string }> = []
  // The crashed children's requests come first: they dispatched them before the resumed session existed (§13.4).
  const childRequests: CapturedRequest[] = []
  // Where each crashed child's requests end in the capture (its provider's cache died with it).
  const restarts: Array<{ index: number; logLength: number }> = []
  // Crash faults whose crash point was never reached, with why (fault targeting: they fail the scenario).
  const unreached: Array<{ fault: ResolvedFault; message: string }> = []
  const crashFired = new Map<string, number>()
  // Issue #16: the log length at each clean stop, null for a stop point the session never reached.
  const stopped: Array<number | null> = []
  let prior: WorldCounters | undefined
  let resume = false
  if (harness !== null) {
    // Crash faults run in declaration order, each in its own child; the next one resumes the log the last one left.
    for (const fault of crashFaults) {
      const point = fault.when.afterEvent ?? 'turn/end'
      // A crash point's occurrence counts over the whole log: matching events already durable come first.
      const already = resume ? await matchingDurableEvents(logPath, point) : 0
      const occurrence = fault.when.occurrence - already
      if (occurrence < 1) {
        unreached.push({ fault, message: `${faultLabel(fault)} never reached its crash point: the log had ${plural(already, `${point} event`)} before this crash could run (its occurrence counts the whole log)` })
        continue
      }
      const capturePath = `${logPath}.child-requests.jsonl`
      const countersPath = `${logPath}.child-counters.jsonl`
      await rm(capturePath, { force: true })
      await rm(countersPath, { force: true })
      const result = await harness.runCrashingSession({
        scenarioFile: resolvePath(scenario.file), seed, logPath, crashPoint: { afterEvent: point, occurrence }, resume,
        ...(subjectModule === null ? {} : { childEntry: MODULE_CRASH_CHILD, childArgs: [subjectModule] }), capturePath, countersPath,
        ...(prior === undefined ? {} : { priorCounters: prior }),
      })
      // Issue #18: a watchdog or a child that died on its own leaves a log no verdict may be drawn from.
      if (result.watchdog !== null) throw new WatchdogError(result.watchdog.awaited, result.watchdog.waitedMs)
      if (!result.killed && result.exitCode !== 0) {
        const tail = result.stderr.trim().split('\n').slice(-5).join('\n')
        throw new Error(`crash child failed: ${result.error ?? `exit code ${result.exitCode}`}${tail === '' ? '' : `\n${tail}`}`)
      }
      acked = [...acked, ...result.durableAcked]
      const last = result.durableAcked.at(-1)
      const durableEvents = result.killed && last !== undefined ? last.seq + 1 : null
      childRequests.push(...await harness.readChildCapture(capturePath, durableEvents))
      prior = await readChildCounters(countersPath, durableEvents) ?? prior
      await rm(capturePath, { force: true })
      await rm(countersPath, { force: true })
      resume = true
      if (result.killed && last !== undefined) {
        crashes.push({ afterSeq: last.seq })
        restarts.push({ index: childRequests.length, logLength: last.seq + 1 })
        crashFired.set(fault.id, 1)
      } else {
        const seen = result.durableAcked.filter((a) => a.type === point).length
        const counted = point === 'checkpoint' ? '' : `, ${plural(seen, `${point} event`)} among them`
        unreached.push({ fault, message: `${faultLabel(fault)} never reached its crash point: the session ended after ${plural(result.durableAcked.length, 'durable event')}${counted}` })
        break // the session has finished: no later crash point can be reached either
      }
    }
    for (const fault of crashFaults) {
      if (!crashFired.has(fault.id) && !unreached.some((u) => u.fault === fault)) {
        unreached.push({ fault, message: `${faultLabel(fault)} never reached its crash point: the session ended before an earlier crash fault's continuation` })
      }
    }
  }
  // The provider's clock only stamps its own wire captures and `created` fields, which no artifact holds.
  // Issue #20: upstream summarizers answer from the scenario's cassette (and fill it in record mode).
  const upstreams = upstreamsOf(scenario)
  const record = options.record === true
  const cassette = upstreams.length === 0 ? undefined : await Cassette.load(cassettePathOf(scenario.file), record)
  const world = createWorld({
    scenario, transcript, now: () => CLOCK_ORIGIN_MS, ...(prior === undefined ? {} : { prior }),
    ...(cassette === undefined ? {} : { cassette }), ...(options.env === undefined ? {} : { env: options.env }),
  })
  world.countEarlierRequests(childRequests) // summary attempts continue after a restore (issue #15)
  mount.current = world.provider
  // Issue #16: a session that can never settle (a subject or provider call nobody answers, no timer left) is named by
  // the CLI's settle guard (exit 3) instead of Node's silent exit 13.
  const settled = trackPending(() => `scenario ${shown} [${subject.name} seed=${seed}]: the subject's session, ${world.activity()}`
    + ` (replay: ${head.replay})`)
  mount.passthrough = record ? upstreams.map((u) => u.url) : []
  try {
    const session = { scenario, transcript, logPath, baseUrl: MOCK_BASE_URL, seed, hooks: world.hooks }
    // Issue #16: each clean stop ends a lifecycle through the subject's API; the next one restores the log in this process.
    for (const point of shape.restarts) {
      const lifecycle = await subject.runSession({ ...session, onRequest: joined().onRequest, ...(resume ? { resume: true } : {}), stop: point })
      sessions.push(lifecycle)
      stopped.push(lifecycle.stoppedAt?.events ?? null)
      if (lifecycle.stoppedAt === undefined) break // the session ran to its end: nothing is left to restore
      resume = true
    }
    if (stopped.every((s) => s !== null)) {
      const last = { ...session, onRequest: joined().onRequest }
      sessions.push(await subject.runSession(resume ? { ...last, resume: true } : last))
    }
  } finally {
    settled()
    mount.current = null
    mount.passthrough = []
  }
  // What was recorded is kept even when a later request failed: the next --record run fetches only the rest.
  if (record) await cassette?.save()
  const upstreamFailure = world.provider.internalErrors.find(
    (e) => e instanceof CassetteMissError || e instanceof UpstreamError || e instanceof CassetteFileError,
  )
  if (upstreamFailure !== undefined) throw upstreamFailure
  let requests = renumber([...childRequests, ...sessions.flatMap((s, i) => joins[i]?.annotate(s.requests) ?? s.requests)])
  const manifest: RunManifest = {
    scenario: shown,
    // FAULT-43: the engine refused the configuration, so none is installed — the checker judges a run without one.
    compaction: (scenario.configError === null ? structuredClone(scenario.policyConfig) : { auto: false }) as RunManifest['compaction'],
    routes: worldRoutes(scenario),
    faults: scenario.faults.map((f) => (f.kind === 'FAULT-43' && scenario.configError !== null
      ? withRefusedConfig(faultSpecOf(f), scenario.policyConfig, scenario.configError)
      : faultSpecOf(f))),
  }
  if (scenario.prunerConfig !== null) manifest.pruner = structuredClone(scenario.prunerConfig) as NonNullable<RunManifest['pruner']>
  if (crashes.length > 0) manifest.crashes = crashes.map((c) => ({ afterSeq: Seq(c.afterSeq) }))
  const regionStarts = sessions.flatMap((s) => s.explicitRegionStarts)
  if (regionStarts.length > 0) manifest.explicitRegionStarts = regionStarts.map((s) => Seq(s))
  await writeFile(join(options.outDir, artifacts.manifest), `${JSON.stringify(manifest, null, 2)}\n`)
  await writeJsonLines(join(options.outDir, artifacts.requests), requests)
  // Issue #21: what the world did, beside the capture; the crashed children's requests precede it in the capture.
  // The crash children's log prefix (killed or not) was served by their own worlds, which this record does not hold.
  const worldRecord = world.provider.worldRecord(childRequests.length, resume ? (acked.at(-1)?.seq ?? -1) + 1 : 0)
  await writeWorldRecord(join(options.outDir, `${slug}.world.json`), worldRecord)

  const check = await checkLog(logPath, { dialect: logDialect, manifest, requests, world: worldRecord })
  if (check.kind === 'input-error') throw check.error
  if (check.internalErrors.length > 0) {
    throw new Error(`the checker failed internally: ${check.internalErrors.map((f) => `${f.id}: ${f.message}`).join('; ')}`)
  }
  // Issue #21 (totality): a log the core reader or the reference meter cannot replay gets the checker's verdict, not an error.
  const replay = await replayOf(logPath, logDialect, scenario)
  if (replay.kind === 'unreplayable') {
    return unreplayableReport(head, artifacts, check, scenario, replay.error, [...world.unfired(), ...unreached], (f) =>
      f.target === 'crash' ? crashFired.get(f.id) ?? 0 : world.fired().get(f.id) ?? 0)
  }
  const { events, finalPressure } = replay
  const counts = countsOf(events, requests.length, crashes.length)
  const outcomes = outcomesOf(events)
  // The timeline replays the seed meter; a dsh-dialect log has none (it is optional in the report).
  let timeline = logDialect === 'seed'
    ? timelineOf(events, requests, { policy: scenario.policy, contextWindow: scenario.provider.contextWindow })
    : undefined
  // Issue #15: a subject that did not record its meter at dispatch gets the §2.5 replay of its log (seed logs only).
  const [metered, filled] = withReplayedMeter(requests, timeline)
  requests = metered
  if (filled) await writeJsonLines(join(options.outDir, artifacts.requests), requests)
  const drift = world.provider.spec.routes.size > 0 ? driftOf(requests) : undefined
  if (drift !== undefined && timeline !== undefined) timeline = withProviderLine(timeline, requests)
  const finalLog = EventLog.fromEvents(events, { dialect: logDialect })
  const retention = retentionOf(events, probes, logDialect)
  const expectations: ExpectationResult[] = evaluateExpectations({
    expect: scenario.expect, events, violations: check.violations, outcomes, counts, finalPressure,
    dialect: logDialect, warnings: sessions.flatMap((s) => s.warnings), wire: world.provider.captured, requests,
    // D-02: an rc.8 surface has no system head; count it as the seed surface would hold it.
    finalSurfaceNodes: finalLog.state.surface.nodes.length + (logDialect !== 'seed' && transcript.systemPrompt !== '' ? 1 : 0),
    ...gapsOf(subject, scenario),
  })
  if (crash !== undefined) expectations.push(durableExpectation(acked, events))
  shape.restarts.forEach((point, i) => { expectations.push(restartExpectation(point, i, stopped[i])) })
  const fired = world.fired()
  const faults: ReportedFault[] = scenario.faults.map((f) => ({
    id: f.id, kind: f.kind, fired: f.target === 'crash' ? crashFired.get(f.id) ?? 0 : fired.get(f.id) ?? 0,
  }))
  // Fault targeting: a declared fault that never fired (a crash point never reached) fails the scenario, unless optional.
  for (const miss of [...world.unfired(), ...unreached]) {
    if (miss.fault.optional) continue
    expectations.push({ name: `faults.${miss.fault.id}`, passed: false, expected: 'fires at least once (or `optional: true`)', actual: miss.message })
  }
  // Issue #16: a `concurrent:` item whose point never came fails the scenario (its warning says where it was due).
  for (const index of world.concurrentNotRun()) {
    const why = sessions.flatMap((x) => x.warnings).find((w) => w.startsWith(`concurrent[${index}] `) && w.includes(' never ran: '))
    expectations.push({ name: `concurrent[${index}]`, passed: false, expected: 'runs at its point', actual: why ?? 'the subject never reported running it' })
  }
  // Issue #21: a scenario whose expectations describe its own seed's transcript judges only its invariants under another.
  const judged = pinnedToSeed(expectations, scenario, seed)
  const failed = judged.some((e) => !e.passed)
  const warnings = sessions.flatMap((s) => s.warnings)
  // Issue #9: prompt-cache reuse and cost under the scenario's contract, compared with the usage the mock reported.
  const routeImageTokens = new Map(worldRoutes(scenario).map((r) => [`${r.provider}/${r.model}`, r.imageTokens]))
  const cache = scenarioCacheOf({
    requests, events, dialect: logDialect, spec: scenario.provider.cache,
    imageTokens: (provider, model) => routeImageTokens.get(`${provider}/${model}`),
    scriptedUsage: (turn, step) => transcript.turns[turn - 1]?.steps[step - 1]?.reply.usage !== undefined,
    // The crashed child's mock died with it: the resumed session's provider starts with a cold cache.
    ...(restarts.length === 0 ? {} : { restarts }),
  })
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
    expectations: judged,
    faults,
    ...(timeline === undefined ? {} : { timeline }),
    paths: pathsOf(events, {
      compactionRetries: scenario.policy.compactionRetries, thresholdRatio: scenario.policy.thresholdRatio, explicitRegionStarts: regionStarts,
      dialect: logDialect,
    }),
    cache,
    ...(drift === undefined ? {} : { drift }),
    ...(retention === undefined ? {} : { retention }),
  }
}

/**
 * The probes a run scores (issue #20): the scenario's own, then those the transcript plants.
 * @throws ScenarioError when a scenario probe repeats the id of a planted one.
 */
function probesOf(scenario: ResolvedScenario, transcript: Transcript): ResolvedProbe[] {
  const planted = (transcript.probes ?? []).map(resolvedTranscriptProbe)
  const ids = new Set(planted.map((p) => p.id))
  const issues: ScenarioIssue[] = []
  scenario.probes.forEach((p, i) => {
    if (ids.has(p.id)) issues.push({ code: 'SEMANTIC', path: `/probes/${i}/id`, reason: `repeats the id ${JSON.stringify(p.id)} of a probe the transcript plants` })
  })
  if (issues.length > 0) throw new ScenarioError(scenario.file, issues)
  return [...scenario.probes, ...planted]
}

/** Dispatch order over all sessions of the run (a resumed session numbers its requests from 0 again). */
function renumber(requests: readonly CapturedRequest[]): CapturedRequest[] {
  return requests.map((r, index) => ({ ...r, index }))
}

/**
 * The report of a scenario whose log core cannot replay: failed, with the checker's violations, the
 * invariants expectation and one `replay` expectation naming where the replay stopped; the other
 * expectations need the replayed log and are not evaluated. A log the checker finds no violation in while
 * core cannot replay it is a gap in the checker: that stays an internal error (exit 3).
 */
function unreplayableReport(
  head: Pick<ScenarioReport, 'file' | 'name' | 'subject' | 'seed' | 'dialect' | 'replay'>, artifacts: ScenarioArtifacts,
  check: Pick<CheckReport, 'policySource' | 'violations'>,
  scenario: ResolvedScenario, error: LogError | MeterReplayError, unfired: ReadonlyArray<{ fault: ResolvedFault; message: string }>,
  firedOf: (f: ResolvedFault) => number,
): ScenarioReport {
  // No file path in the text: the report stays the same wherever the artifacts go.
  const at = error instanceof LogError ? error.location : null
  const where = error instanceof MeterReplayError
    ? `the reference meter stops at seq ${error.seq}`
    : `core's log reader rejects ${at?.line === undefined ? 'the log' : `line ${at.line} of the log`}${at?.field === undefined ? '' : ` (field ${at.field})`}`
  const reason = error instanceof MeterReplayError ? error.message.replace(/^seq \d+: /, '') : (error as LogError).reason
  if (check.violations.length === 0) {
    throw new Error(`the checker found no violation in a log core cannot replay (${where}: ${reason})`, { cause: error })
  }
  const expectations: ExpectationResult[] = [invariantsExpectation(scenario.expect, check.violations)]
  expectations.push({
    name: 'replay', passed: false, expected: 'the log replays (core reader and §2.5 meter); the other expectations need it',
    actual: `${where}: ${reason} — the other expectations are not evaluated`,
  })
  for (const miss of unfired) {
    if (miss.fault.optional) continue
    expectations.push({ name: `faults.${miss.fault.id}`, passed: false, expected: 'fires at least once (or `optional: true`)', actual: miss.message })
  }
  return {
    ...head,
    status: 'failed',
    artifacts,
    policySource: check.policySource,
    invariants: scenario.expect.invariants === 'all' ? 'all' : [...scenario.expect.invariants],
    violations: check.violations.map((v) => ({ id: v.id, seq: v.seq, message: v.message })),
    expectations,
    faults: scenario.faults.map((f) => ({ id: f.id, kind: f.kind, fired: firedOf(f) })),
  }
}

/** Durable events of `logPath` matching crash point `point` (a §1.4 type, or `checkpoint`); a torn last line is not one. */
async function matchingDurableEvents(logPath: string, point: string): Promise<number> {
  const text = await readFile(logPath, 'utf8')
  let n = 0
  for (const line of text.split('\n')) {
    if (line === '') continue
    let event: { type?: unknown }
    try {
      event = JSON.parse(line) as { type?: unknown }
    } catch {
      continue // a torn tail line: not durable
    }
    if (typeof event.type !== 'string') continue
    if (point === 'checkpoint' ? isCheckpointEvent(event as { type: string }) : event.type === point) n++
  }
  return n
}

/** Issue #16: clean stop point `i` was reached (`at`: the log's length then; null or undefined: never reached). */
function restartExpectation(point: ResolvedRestart, i: number, at: number | null | undefined): ExpectationResult {
  const where = point.kind === 'afterTurn' ? `after turn ${point.turn}` : `inside the bracket of compaction/start #${point.occurrence}`
  return {
    name: `restart[${i}]`,
    passed: at !== null && at !== undefined,
    expected: `the session stops cleanly ${where}, then a new lifecycle restores the log (§11.4)`,
    actual: at === null ? 'never reached: the session ended before it' : at === undefined ? 'not run: an earlier stop point was never reached' : `stopped with ${plural(at, 'event')} in the log`,
  }
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

/** A FAULT-43 manifest entry with the configuration the engine refused and the §3.2 error (the manifest keeps only a valid `compaction`). */
function withRefusedConfig(spec: FaultSpec, config: Readonly<BasicCompactionConfig>, error: string): FaultSpec {
  return { ...spec, params: { ...spec.params, config: structuredClone(config) as JsonValue, error } }
}
