/**
 * Several sessions per scenario (issue #16, `sessions:`). Every session gets its own world (reply plan, fault
 * counters, request capture: its own transcript, manual actions and faults) behind its own base URL
 * (`<mock>/sessions/<name>/v1`) of the process's one in-process mock, with the scenario's routes and capacities;
 * all sessions run in this process at once, each on its own log.
 *
 * Interleaving is deterministic: a `SessionScheduler` admits one provider request at a time, and only when every
 * session that has not finished is waiting at the mock — so exactly one session runs between two admissions, and
 * which one is decided by virtual time (the session clock each subject reports through `hooks.observeSession`; the
 * count of its admitted requests when it reports none), ties broken by a seeded order of the sessions. No wall
 * clock and no I/O timing can reorder anything: the same seed gives the same interleaving and byte-identical logs.
 * A reply with virtual latency (a scripted summary attempt's `latencyMs`) is waited out: its session queues again
 * at its clock plus the latency, so the other sessions run up to that time while its call (and bracket) is open.
 *
 * Each session's log is judged on its own (manifest, capture, world record: `checkLog`) with the session's
 * expectations. The harness trace adds one cross-session check (INV-45's "no busy caused by" clause, §11.1 lock
 * scope): a session that reported `busy` naming a compaction of another session's log was blocked by a lock that
 * is not its own — a violation of INV-45 in the blocked session.
 *
 * Artifacts: `<slug>.<name>.jsonl`, `.manifest.json`, `.requests.jsonl`, `.world.json` per session.
 */
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { EventLog, type CapturedRequest, type LogEvent, type RunManifest, Seq } from '@compaction-sim/core'
import { checkLog } from '../checker/run.ts'
import type { ExpectationResult, ReportedViolation, ScenarioReport, SessionReport } from '../report/types.ts'
import type { ResolvedSession } from '../scenario/resolve-sessions.ts'
import { faultSpecOf, type ResolvedScenario } from '../scenario/resolve.ts'
import type { SessionView, Subject, SubjectSessionResult } from '../subjects/types.ts'
import { CLOCK_ORIGIN_MS } from '../world/clock.ts'
import { worldPrng } from '../world/prng.ts'
import { writeWorldRecord } from '../world/record-file.ts'
import { joinProviderCounts } from './drift.ts'
import { countsOf, evaluateExpectations, outcomesOf, pinnedToSeed } from './expectations.ts'
import { scenarioTranscript } from './transcript.ts'
import { createWorld, worldRoutes, type World } from './world.ts'
import { writeJsonLines } from './run-scenario.ts'
import { replayOf } from './replay.ts'

/** Origin of the in-process mock; each session answers under `<origin>/sessions/<name>/v1`. */
export const MOCK_ORIGIN = 'http://provider.compaction-sim.test'

/** The base URL session `name` talks to. */
export function sessionBaseUrl(name: string): string {
  return `${MOCK_ORIGIN}/sessions/${name}/v1`
}

/** What `runSessionsScenario` needs of the process's mock mount: serve `provider` under `base` while a run lasts. */
export interface SessionMount {
  /** Serves `handle` under `base`; returns the call that stops it. */
  serve(base: string, handle: (request: Request) => Promise<Response>): () => void
}

/**
 * Admits provider requests one at a time (module doc). `admit` resolves when the request may reach the provider;
 * the session then runs alone until its next request or its end (`finish`).
 */
export class SessionScheduler {
  private readonly running = new Set<string>()
  private readonly waiting = new Map<string, { key: readonly [number, number]; release: () => void }>()
  private readonly rank: ReadonlyMap<string, number>
  private readonly admitted = new Map<string, number>()
  private readonly log: string[] = []

  /** @param names the sessions, all running from the start; `seed` orders ties. */
  constructor(names: readonly string[], seed: number) {
    const stream = worldPrng(seed).fork('sessions')
    const order = names.map((name) => ({ name, draw: stream.float() }))
    order.sort((a, b) => a.draw - b.draw || (a.name < b.name ? -1 : 1))
    this.rank = new Map(order.map((o, i) => [o.name, i]))
    for (const name of names) this.running.add(name)
  }

  /** Waits until session `name`'s request may go on; `virtualMs` is the session's clock now (null: not reported). */
  admit(name: string, virtualMs: number | null): Promise<void> {
    const count = this.admitted.get(name) ?? 0
    return new Promise((release) => {
      this.running.delete(name)
      this.waiting.set(name, { key: [virtualMs ?? count, this.rank.get(name) ?? 0], release })
      this.pump()
    })
  }

  /** Session `name` has ended (its `runSession` settled). */
  finish(name: string): void {
    this.running.delete(name)
    this.pump()
  }

  /** The admissions so far, `<session>@<virtual ms>` in order (for tests: the interleaving itself). */
  trace(): readonly string[] {
    return this.log
  }

  private pump(): void {
    if (this.running.size > 0 || this.waiting.size === 0) return
    let best: [string, readonly [number, number]] | null = null
    for (const [name, w] of this.waiting) {
      if (best === null || w.key[0] < best[1][0] || (w.key[0] === best[1][0] && w.key[1] < best[1][1])) best = [name, w.key]
    }
    if (best === null) return
    const [name] = best
    const entry = this.waiting.get(name)
    this.waiting.delete(name)
    this.running.add(name)
    this.admitted.set(name, (this.admitted.get(name) ?? 0) + 1)
    this.log.push(`${name}@${best[1][0]}`)
    entry?.release()
  }
}

/** One running session of the scenario. */
interface LiveSession {
  readonly spec: ResolvedSession
  readonly world: World
  readonly logPath: string
  readonly artifacts: { log: string; manifest: string; requests: string }
  view: SessionView | null
  /** Virtual latency of this session's replies so far (ms), added to its clock for the scheduler. */
  waitedMs: number
  result: SubjectSessionResult | null
  error: unknown
}

/** Options of `runSessionsScenario`. */
export interface SessionsRunOptions {
  readonly subject: Subject
  readonly seed: number
  readonly outDir: string
  readonly slug: string
  readonly mount: SessionMount
  /** The scenario report's head (file, name, subject, seed, dialect, replay). */
  readonly head: Pick<ScenarioReport, 'file' | 'name' | 'subject' | 'seed' | 'dialect' | 'replay'>
  /** Shown scenario path (the manifests' `scenario`). */
  readonly shown: string
}

/** Runs every session of a several-session scenario at once and judges each log (module doc). */
export async function runSessionsScenario(scenario: ResolvedScenario, sessions: readonly ResolvedSession[], options: SessionsRunOptions): Promise<ScenarioReport> {
  const { subject, seed } = options
  const scheduler = new SessionScheduler(sessions.map((s) => s.name), seed)
  const live: LiveSession[] = []
  for (const spec of sessions) {
    const transcript = await scenarioTranscript(spec.scenario, seed)
    const world = createWorld({ scenario: spec.scenario, transcript, now: () => CLOCK_ORIGIN_MS })
    const stem = `${options.slug}.${spec.name}`
    const artifacts = { log: `${stem}.jsonl`, manifest: `${stem}.manifest.json`, requests: `${stem}.requests.jsonl` }
    live.push({ spec, world, logPath: join(options.outDir, artifacts.log), artifacts, view: null, waitedMs: 0, result: null, error: null })
  }
  // A session's virtual time: its own clock, plus the latency its world's replies took (waited out below).
  const now = (s: LiveSession): number | null => (s.view === null ? null : s.view.now() - s.view.originMs + s.waitedMs)
  const stops = live.map((s) => options.mount.serve(sessionBaseUrl(s.spec.name), async (request) => {
    await scheduler.admit(s.spec.name, now(s))
    const before = s.world.latencyMs()
    const response = await s.world.provider.handle(request)
    const latency = s.world.latencyMs() - before
    if (latency > 0) {
      // A slow reply (a scripted summary attempt's latencyMs): the answer arrives only once every other session has
      // run up to that virtual time — meanwhile this session waits with its call in flight (a live bracket, for a summary).
      s.waitedMs += latency
      await scheduler.admit(s.spec.name, now(s))
    }
    return response
  }))
  const joins = live.map((s) => joinProviderCounts(s.world.provider))
  try {
    await Promise.all(live.map(async (s, i) => {
      const transcript = await scenarioTranscript(s.spec.scenario, seed)
      const hooks = {
        ...s.world.hooks,
        observeSession: (view: SessionView): void => {
          s.view = view
          s.world.hooks.observeSession?.(view)
        },
      }
      try {
        s.result = await subject.runSession({
          scenario: s.spec.scenario, transcript, logPath: s.logPath, baseUrl: sessionBaseUrl(s.spec.name), seed: sessionSeed(seed, i),
          hooks, onRequest: joins[i]?.onRequest ?? (() => {}),
        })
      } catch (err) {
        s.error = err
      } finally {
        scheduler.finish(s.spec.name)
      }
    }))
  } finally {
    for (const stop of stops) stop()
  }
  const failed = live.find((s) => s.error !== null)
  if (failed !== undefined) throw failed.error
  const judged: SessionReport[] = []
  const ownStarts = new Map<string, Map<string, number>>()
  const eventsOf = new Map<string, readonly LogEvent[]>()
  for (const [i, s] of live.entries()) {
    const report = await judgeSession(s, joins[i]?.annotate(s.result?.requests ?? []) ?? [], options)
    judged.push(report.session)
    eventsOf.set(s.spec.name, report.events)
    ownStarts.set(s.spec.name, startsOf(report.events))
  }
  // The harness trace: a busy naming another session's bracket is a lock of the wrong scope (INV-45).
  for (const [i, s] of live.entries()) {
    const session = judged[i]
    if (session === undefined) continue
    const scope = lockScopeViolations(s.spec.name, s.result?.warnings ?? [], ownStarts, eventsOf.get(s.spec.name)?.length ?? 0)
    if (scope.length === 0) continue
    session.violations.push(...scope)
    const invariants = session.expectations.find((e) => e.name === 'invariants')
    if (invariants !== undefined && selects(s.spec.scenario, 'INV-45')) {
      invariants.actual = `${invariants.passed ? '' : `${invariants.actual}; `}INV-45 (lock scope, harness trace) in session ${s.spec.name}`
      invariants.passed = false
    }
    if (selects(s.spec.scenario, 'INV-45')) session.status = 'failed'
  }
  const warnings = judged.flatMap((s) => (s.warnings ?? []).map((w) => `session ${s.name}: ${w}`))
  return {
    ...(warnings.length === 0 ? {} : { warnings }),
    ...options.head,
    status: judged.some((s) => s.status === 'failed') ? 'failed' : 'passed',
    policySource: 'manifest',
    invariants: scenario.expect.invariants === 'all' ? 'all' : [...scenario.expect.invariants],
    violations: judged.flatMap((s) => s.violations.map((v) => ({ ...v, message: `session ${s.name}: ${v.message}` }))),
    expectations: judged.flatMap((s) => s.expectations.map((e) => ({ ...e, name: `${s.name}.${e.name}` }))),
    faults: judged.flatMap((s) => s.faults.map((f) => ({ ...f, id: `${s.name}.${f.id}` }))),
    sessions: judged,
  }
}

/** The seed of session `index`: the run's seed for the first, a derived one for the others (their ids must differ). */
export function sessionSeed(seed: number, index: number): number {
  return index === 0 ? seed : Number.parseInt(worldPrng(seed).fork(`session-${index}`).hex(8), 16)
}

/** True when the scenario's `expect.invariants` judges `id`. */
function selects(scenario: ResolvedScenario, id: string): boolean {
  const wanted = scenario.expect.invariants
  return wanted === 'all' || wanted.some((w) => w === id)
}

/** `compactionId` → seq of every `compaction/start` of `events`. */
function startsOf(events: readonly LogEvent[]): Map<string, number> {
  const out = new Map<string, number>()
  for (const e of events) {
    if (e.type !== 'compaction/start') continue
    const id = (e.data as { compactionId?: unknown }).compactionId
    if (typeof id === 'string') out.set(id, e.seq)
  }
  return out
}

/** A busy refusal as the core words it: `compaction <id> (started at seq <n>) is still open`. */
const BUSY_NAMING = /compaction (\S+) \(started at seq (\d+)\) is still open/

/**
 * INV-45 (harness trace, §11.1 lock scope): each warning of session `name` that reports busy because of a compaction
 * that is not in its own log but in another session's. Reported at the session log's last seq.
 */
export function lockScopeViolations(
  name: string, warnings: readonly string[], starts: ReadonlyMap<string, ReadonlyMap<string, number>>, events: number,
): ReportedViolation[] {
  const own = starts.get(name) ?? new Map<string, number>()
  const out: ReportedViolation[] = []
  for (const warning of warnings) {
    if (!/\bbusy\b/.test(warning)) continue
    const id = BUSY_NAMING.exec(warning)?.[1]
    if (id === undefined || own.has(id)) continue
    const holder = [...starts].find(([other, ids]) => other !== name && ids.has(id))
    if (holder === undefined) continue
    out.push({
      id: 'INV-45', seq: Math.max(0, events - 1),
      message: `lock scope (harness trace): session ${name} reported busy because of compaction ${id}, a bracket of session ${holder[0]} ` +
        `(its seq ${holder[1].get(id) ?? -1}); the lock is the session's own log (§11.1), another session's bracket never blocks it — "${warning}"`,
    })
  }
  return out
}

/** Writes one session's manifest, capture and world record, checks its log and evaluates its expectations. */
async function judgeSession(
  s: LiveSession, annotated: CapturedRequest[], options: SessionsRunOptions,
): Promise<{ session: SessionReport; events: readonly LogEvent[] }> {
  const scenario = s.spec.scenario
  const result = s.result
  const requests = annotated.map((r, index) => ({ ...r, index }))
  const manifest: RunManifest = {
    scenario: `${options.shown}#${s.spec.name}`,
    compaction: structuredClone(scenario.policyConfig) as RunManifest['compaction'],
    routes: worldRoutes(scenario),
    faults: scenario.faults.map(faultSpecOf),
  }
  if (scenario.prunerConfig !== null) manifest.pruner = structuredClone(scenario.prunerConfig) as NonNullable<RunManifest['pruner']>
  const regionStarts = result?.explicitRegionStarts ?? []
  if (regionStarts.length > 0) manifest.explicitRegionStarts = regionStarts.map((x) => Seq(x))
  await writeFile(join(options.outDir, s.artifacts.manifest), `${JSON.stringify(manifest, null, 2)}\n`)
  await writeJsonLines(join(options.outDir, s.artifacts.requests), requests)
  const worldRecord = s.world.provider.worldRecord(0, 0)
  await writeWorldRecord(join(options.outDir, `${options.slug}.${s.spec.name}.world.json`), worldRecord)
  const check = await checkLog(s.logPath, { dialect: 'seed', manifest, requests, world: worldRecord })
  if (check.kind === 'input-error') throw check.error
  if (check.internalErrors.length > 0) {
    throw new Error(`the checker failed internally on session ${s.spec.name}: ${check.internalErrors.map((f) => `${f.id}: ${f.message}`).join('; ')}`)
  }
  const violations: ReportedViolation[] = check.violations.map((v) => ({ id: v.id, seq: v.seq, message: v.message }))
  const fired = s.world.fired()
  const faults = scenario.faults.map((f) => ({ id: f.id, kind: f.kind, fired: fired.get(f.id) ?? 0 }))
  const warnings = result?.warnings ?? []
  const base = { name: s.spec.name, artifacts: s.artifacts, ...(warnings.length === 0 ? {} : { warnings: [...warnings] }) }
  const replay = await replayOf(s.logPath, 'seed', scenario)
  if (replay.kind === 'unreplayable') {
    const expectations: ExpectationResult[] = [{
      name: 'replay', passed: false, expected: 'the log replays (core reader and §2.5 meter)', actual: replay.error.message,
    }]
    return { session: { ...base, status: 'failed', violations, expectations, faults }, events: [] }
  }
  const { events, finalPressure } = replay
  const counts = countsOf(events, requests.length, 0)
  const outcomes = outcomesOf(events)
  const finalLog = EventLog.fromEvents(events, { dialect: 'seed' })
  const expectations = evaluateExpectations({
    expect: scenario.expect, events, violations: check.violations, outcomes, counts, finalPressure, dialect: 'seed', warnings,
    wire: s.world.provider.captured, requests, finalSurfaceNodes: finalLog.state.surface.nodes.length,
  })
  for (const miss of s.world.unfired()) {
    if (miss.fault.optional) continue
    expectations.push({ name: `faults.${miss.fault.id}`, passed: false, expected: 'fires at least once (or `optional: true`)', actual: miss.message })
  }
  const judged = pinnedToSeed(expectations, scenario, options.seed)
  return {
    session: { ...base, status: judged.some((e) => !e.passed) ? 'failed' : 'passed', counts, outcomes, finalPressure, violations, expectations: judged, faults },
    events,
  }
}
