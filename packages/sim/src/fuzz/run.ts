/**
 * One fuzz session, end to end (issue #8): the fault phase (a generated command sequence, the model agreeing
 * with the subject after every command), then the fault-free phase in which the session must converge
 * within a bound — pressure below the threshold or a classified decline, no live orphan, the lock released —
 * then the checker (§12) on the whole log with its manifest and request capture, and path coverage.
 * `runSession` never throws for a finding: the verdict says what broke.
 */
import fc from 'fast-check'
import {
  EventLog, TokenMeter, resolveCompactSpec, resolveCompactionConfig, resolveTargetPolicy, selectCompactableRange, Seq,
  type FaultSpec, type JsonValue, type RunManifest,
} from '@compaction-sim/core'
import { checkLog } from '../checker/run.ts'
import type { Violation } from '../checker/types.ts'
import { pathsOf } from '../metrics/paths.ts'
import type { ReportedPath } from '../report/types.ts'
import { FUZZ_ROUTE, SessionDriver, type DriverOptions, type SessionConfig, type TraceRequest } from './driver.ts'
import { initialModel, type SessionModel } from './model.ts'
import type { FuzzCommand } from './arbitraries.ts'

/** Fault-free turns the convergence phase may run before it judges liveness. */
export const CONVERGENCE_TURNS = 3
/** Actions the convergence phase may take to bring a parked session to idle. */
const SETTLE_ACTIONS = 40

/** What one session found. */
export interface SessionVerdict {
  /** The first model disagreement or subject error of the fault phase (then nothing else is judged). */
  disagreement: string | null
  /** A convergence failure of the fault-free phase (reported as LIVENESS). */
  liveness: string | null
  /** Checker violations on the whole log (§12). */
  violations: Violation[]
  /** Checks that failed internally (bugs in sim). */
  internal: string[]
  paths: ReportedPath[]
  events: number
  driver: SessionDriver
}

/** True when the verdict is a finding. */
export function isFailure(v: SessionVerdict): boolean {
  return v.disagreement !== null || v.liveness !== null || v.violations.length > 0 || v.internal.length > 0
}

/** A one-line description of a failing verdict (INV ids first). */
export function describeFailure(v: SessionVerdict): string {
  if (v.disagreement !== null) return `model disagreement: ${v.disagreement}`
  if (v.violations.length > 0) {
    const ids = [...new Set(v.violations.map((x) => x.id))]
    const first = v.violations[0]
    return `${ids.join(', ')}: ${first === undefined ? '' : `#${first.seq} ${first.message}`}`
  }
  if (v.liveness !== null) return `LIVENESS: ${v.liveness}`
  return `internal: ${v.internal.join('; ')}`
}

/** The per-command checker found a violation (not a model disagreement). */
class CheckerFinding extends Error {
  override readonly name = 'CheckerFinding'
}

/** Options of `runSession`: the driver's (test-only planted hook) plus the per-command checker switch. */
export interface SessionOptions extends Omit<DriverOptions, 'config'> {
  /** Check the log so far after every command that leaves the session idle (default true). */
  checkEvery?: boolean
}

/** Runs one session of `commands` under `config` (module doc). */
export async function runSession(
  config: SessionConfig, commands: Iterable<FuzzCommand>, options: SessionOptions = {},
): Promise<SessionVerdict> {
  const { checkEvery = true, ...driverOptions } = options
  const driver = new SessionDriver({ ...driverOptions, config })
  if (checkEvery) {
    // The checker on the log so far after every command, at idle (a log cut mid-turn reads as a torn
    // session, so mid-turn prefixes are judged when the turn ends — still within the command that ends it).
    driver.afterCommand = async (command) => {
      if (driver.phase !== 'idle') return
      const check = await checkLog(driver.log.events, { dialect: 'seed', manifest: manifestOf(driver) })
      if (check.kind === 'report' && check.violations.length > 0) {
        const ids = [...new Set(check.violations.map((v) => v.id))].join(', ')
        const where = check.violations.map((v) => `#${v.seq} ${v.message}`).slice(0, 3).join('; ')
        throw new CheckerFinding(`after ${command}: ${ids}: ${where}`)
      }
    }
  }
  let disagreement: string | null = null
  let stopped: string | null = null
  try {
    await fc.asyncModelRun(() => ({ model: initialModel(), real: driver }), commands)
  } catch (err) {
    // A checker finding stops the run; the whole-log check below reports it with its INV ids.
    if (err instanceof CheckerFinding) stopped = err.message
    else disagreement = err instanceof Error ? err.message : String(err)
  }
  driver.afterCommand = null
  let liveness: string | null = null
  if (disagreement === null && stopped === null) {
    try {
      liveness = await converge(driver)
    } catch (err) {
      disagreement = `convergence phase: ${err instanceof Error ? err.message : String(err)}`
    }
  }
  const events = driver.log.events
  const requests = driver.captures.map((r, index) => ({ ...r, index }))
  const check = await checkLog(events, { dialect: 'seed', manifest: manifestOf(driver), requests })
  const violations = check.kind === 'report' ? check.violations : []
  const internal = check.kind === 'report'
    ? check.internalErrors.map((f) => `${f.id}: ${f.message}`)
    : [`checker input error: ${check.error.message}`]
  const paths = pathsOf(events, {
    compactionRetries: config.policy.compactionRetries ?? 1, thresholdRatio: config.policy.thresholdRatio ?? 0.8,
    explicitRegionStarts: driver.trace.explicitRegionStarts,
  })
  return { disagreement, liveness, violations, internal, paths, events: events.length, driver }
}

/**
 * The fault-free phase: disarm summarizer faults, finish the open turn without faults, run up to
 * `CONVERGENCE_TURNS` plain turns, then judge: no live lock, no open turn, and pressure below the threshold
 * unless the last turn's pre-step declined with a classified warning. Returns the liveness failure or null.
 */
async function converge(d: SessionDriver): Promise<string | null> {
  d.armed.length = 0
  d.appendFaultsArmed = 0
  // A live orphan is released only by a new lifecycle (§11.4): the process restarts where it stands.
  if (d.log.state.lock.state === 'live') d.crash(d.log.length - 1)
  for (let i = 0; i < SETTLE_ACTIONS && d.phase !== 'idle'; i++) {
    if (d.phase === 'awaiting-results') await d.results(d.pendingCalls.map(() => ({ content: [{ type: 'text', text: 'ok' }] })))
    else await d.answer({ kind: 'reply', blocks: [{ type: 'text', text: 'done' }] })
  }
  if (d.phase !== 'idle') return `the open turn did not end within ${SETTLE_ACTIONS} fault-free actions`
  let above = false
  for (let turn = 0; turn < CONVERGENCE_TURNS; turn++) {
    const warned = d.warnings.length
    const turnStart = d.log.length
    await d.userTurn([{ type: 'text', text: 'status?' }])
    if ((d.phase as string) === 'awaiting-reply') await d.answer({ kind: 'reply', blocks: [{ type: 'text', text: 'ok' }] })
    if (d.phase !== 'idle') return `a fault-free turn parked in ${d.phase} after a text reply`
    if (d.error !== null) return `the loop rejected in the fault-free phase: ${String(d.error)}`
    above = pressureRatio(d) >= (d.config.policy.thresholdRatio ?? 0.8)
    if (!above) break
    // A classified decline: nothing compactable (§4.2 selection null, FAULT-45/46), or the pre-step warned (§3.9).
    if (turn === CONVERGENCE_TURNS - 1 && (d.warnings.length > warned || nothingCompactable(d, turnStart))) above = false
  }
  const lock = d.log.state.lock
  if (lock.state === 'live') return `a live compaction lock (bracket ${lock.bracket.compactionId}) outlived the fault-free phase`
  if (d.log.state.openTurn !== null) return `turn ${d.log.state.openTurn} is still open after the fault-free phase`
  if (above) {
    const pct = (pressureRatio(d) * 100).toFixed(1)
    return `pressure ${pct}% stayed ≥ the threshold for ${CONVERGENCE_TURNS} fault-free turns without a classified decline`
  }
  return null
}

/**
 * True when §4.2 selection found no compactable range under the session's retention budget (§3.3) where the
 * turn starting at `from` ran its first pre-step: the log up to its first request (`request/header` or chunk).
 */
function nothingCompactable(d: SessionDriver, from: number): boolean {
  const spec = resolveCompactSpec(resolveTargetPolicy(resolveCompactionConfig(d.config.policy), FUZZ_ROUTE), d.config.contextWindow)
  const header = d.log.events.findIndex((e, i) => i >= from && (e.type === 'request/header' || e.type === 'assistant/chunk'))
  const events = header === -1 ? d.log.events : d.log.events.slice(0, header)
  const measurement = new TokenMeter({ events }, { dialect: 'seed' }).measure()
  return selectCompactableRange(EventLog.fromEvents(events, { dialect: 'seed' }), measurement, spec.retainTokens) === null
}

/** The reference meter's pressure (§2.5) as a fraction of the window. */
export function pressureRatio(d: SessionDriver): number {
  return new TokenMeter({ events: d.log.events }, { dialect: 'seed' }).measure().totalTokens / d.config.contextWindow
}

/** The run manifest (§1.1) of a driven session: policy, pruner, route, the faults that fired, crashes, regions. */
export function manifestOf(d: SessionDriver): RunManifest {
  const c = d.config
  const manifest: RunManifest = {
    scenario: 'sim fuzz',
    compaction: structuredClone(c.policy) as Record<string, JsonValue>,
    routes: [{
      provider: FUZZ_ROUTE.provider, model: FUZZ_ROUTE.model, contextWindow: c.contextWindow,
      ...(c.imageTokens === null ? {} : { imageTokens: c.imageTokens }),
    }],
    faults: [
      ...d.trace.requests.flatMap((r) => faultSpecsOf(r)),
      ...d.trace.appendFaults.map((kind, i): FaultSpec => ({
        id: `append-${i + 1}`, kind, target: 'append', when: { eventType: 'compaction/end', occurrence: i + 1 },
      })),
    ],
  }
  if (c.pruner !== null) manifest.pruner = structuredClone(c.pruner) as unknown as Record<string, JsonValue>
  if (d.trace.crashes.length > 0) manifest.crashes = d.trace.crashes.map((s) => ({ afterSeq: Seq(s) }))
  if (d.trace.explicitRegionStarts.length > 0) manifest.explicitRegionStarts = d.trace.explicitRegionStarts.map((s) => Seq(s))
  return manifest
}

/** The §13 fault spec of one request that fired a fault (none for a plain reply or summary). */
export function faultSpecsOf(r: TraceRequest): FaultSpec[] {
  const when = { requestIndex: r.index }
  if (r.purpose === 'compaction') {
    return r.fault === null ? [] : [{ id: `f${r.index}`, kind: r.fault, target: 'compaction', when: { ...when, purpose: 'compaction' } }]
  }
  const a = r.answer
  if (a.kind !== 'fail') return []
  const code = a.failure.code
  const overflow = a.delivery === 'in-band' ? 'FAULT-02' : 'FAULT-01'
  const kind = code === 'CONTEXT_WINDOW_EXCEEDED' ? overflow : code === 'IMAGE_OFFLOAD_REQUIRED' ? 'FAULT-12' : 'FAULT-16'
  const params: Record<string, JsonValue> = { code }
  if (a.failure.offloadImages !== undefined) params['offloadImages'] = a.failure.offloadImages
  return [{ id: `f${r.index}`, kind, target: 'conversation', when: { ...when, purpose: 'conversation' }, params }]
}

/** A fresh model (re-exported for tests that drive commands by hand). */
export function freshModel(): SessionModel {
  return initialModel()
}
