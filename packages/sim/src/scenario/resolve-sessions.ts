/**
 * Issue #16: the `sessions:` and `restart:` keys of a scenario, resolved beside `resolveScenario` (which
 * ignores both, so a one-session scenario resolves exactly as before).
 *
 * - `sessions:` — each session is the scenario with its own `transcript`, `faults`, `manual` and `expect`
 *   where it gives them, resolved with `resolveScenario`; a problem in a session's own key is reported under
 *   `/sessions/<i>/…`. Names are unique; crash faults and `restart:` are refused in a several-session scenario
 *   (a crash kills the whole process, which every session shares).
 * - `restart:` — clean stop points in order: `afterTurn` points ascend and lie before the transcript's last
 *   turn; `inBracket` points ascend (they count `compaction/start` events over the whole log).
 */
import { ScenarioError, type ScenarioIssue } from './errors.ts'
import { resolveScenario, type ResolvedScenario, type ScenarioSource } from './resolve.ts'
import type { RestartPoint, Scenario, SessionConfig } from './types.ts'

/** One resolved session of a several-session scenario. */
export interface ResolvedSession {
  /** The session's name (unique in the scenario). */
  readonly name: string
  /** The scenario as this session runs it (its own transcript, faults, manual actions and expectations). */
  readonly scenario: ResolvedScenario
}

/** One resolved clean stop point (`restart:`). */
export type ResolvedRestart =
  | { readonly kind: 'afterTurn'; readonly turn: number }
  | { readonly kind: 'inBracket'; readonly occurrence: number }

/** The keys a session may give itself; a resolve problem under one of them belongs to the session. */
const SESSION_KEYS = ['transcript', 'faults', 'manual', 'expect'] as const

/** The scenario `raw` as session `s` runs it: its own keys replace the scenario's; `sessions` and `restart` dropped. */
export function sessionDocument(raw: Scenario, s: SessionConfig): Scenario {
  const doc: Scenario = structuredClone(raw)
  delete doc.sessions
  delete doc.restart
  if (s.transcript !== undefined) doc.transcript = structuredClone(s.transcript)
  if (s.faults !== undefined) doc.faults = structuredClone(s.faults)
  if (s.manual !== undefined) doc.manual = structuredClone(s.manual)
  if (s.expect !== undefined) doc.expect = structuredClone(s.expect)
  return doc
}

/**
 * The sessions of `raw` (empty when it has no `sessions:` key).
 * @throws ScenarioError listing every problem: duplicate names, crash faults, `restart:` beside `sessions:`, and each
 *   session's own resolve problems (paths under `/sessions/<i>` for the keys the session gave).
 */
export function resolveSessions(raw: Scenario, source: ScenarioSource): ResolvedSession[] {
  const configs = raw.sessions ?? []
  if (configs.length === 0) return []
  const issues: ScenarioIssue[] = []
  if (raw.restart !== undefined) {
    issues.push({ code: 'SEMANTIC', path: '/restart', reason: 'a several-session scenario cannot declare restart: yet (write the restart in a one-session scenario)' })
  }
  const seen = new Map<string, number>()
  const out: ResolvedSession[] = []
  configs.forEach((config, i) => {
    const first = seen.get(config.name)
    if (first !== undefined) issues.push({ code: 'SEMANTIC', path: `/sessions/${i}/name`, reason: `session name ${config.name} is also session ${first}'s` })
    else seen.set(config.name, i)
    try {
      const scenario = resolveScenario(sessionDocument(raw, config), source)
      scenario.faults.forEach((fault, k) => {
        if (fault.target !== 'crash') return
        const path = config.faults === undefined ? `/faults/${k}/kind` : `/sessions/${i}/faults/${k}/kind`
        issues.push({ code: 'SEMANTIC', path, reason: `${fault.kind} is a crash fault: a crash kills the process every session shares; several sessions cannot declare one` })
      })
      out.push({ name: config.name, scenario })
    } catch (err) {
      if (!(err instanceof ScenarioError)) throw err
      for (const issue of err.issues) issues.push({ ...issue, path: sessionPath(config, i, issue.path) })
    }
  })
  if (issues.length > 0) throw new ScenarioError(source.file, dedupe(issues))
  return out
}

/** `path` of a session's resolve problem: under `/sessions/<i>` when it lies in a key the session gave itself. */
function sessionPath(config: SessionConfig, i: number, path: string): string {
  const key = SESSION_KEYS.find((k) => path === `/${k}` || path.startsWith(`/${k}/`))
  return key !== undefined && config[key] !== undefined ? `/sessions/${i}${path}` : path
}

/** `issues` without repeats (a scenario-level problem is found once per session that inherits it). */
function dedupe(issues: readonly ScenarioIssue[]): ScenarioIssue[] {
  const seen = new Set<string>()
  return issues.filter((issue) => {
    const key = `${issue.code} ${issue.path} ${issue.reason}`
    if (seen.has(key)) return false
    seen.add(key)
    return true
  })
}

/**
 * The stop points of `raw.restart` (empty without the key); `scenario` is `raw` resolved.
 * @throws ScenarioError for a point with both or neither key, descending or repeated points, an `afterTurn`
 *   at or past the transcript's last turn (nothing would be left to resume), or crash faults beside it.
 */
export function resolveRestarts(raw: Scenario, scenario: ResolvedScenario): ResolvedRestart[] {
  const points: readonly RestartPoint[] = raw.restart ?? []
  const issues: ScenarioIssue[] = []
  const transcript = scenario.transcript
  const turnCount = transcript.kind === 'generate' ? transcript.turns : transcript.kind === 'inline' ? transcript.transcript.turns.length : null
  const out: ResolvedRestart[] = []
  let lastTurn = 0
  let lastBracket = 0
  points.forEach((point, i) => {
    const path = `/restart/${i}`
    if (point.afterTurn !== undefined && point.inBracket === undefined) {
      if (point.afterTurn <= lastTurn) issues.push({ code: 'SEMANTIC', path: `${path}/afterTurn`, reason: `afterTurn ${point.afterTurn} does not follow the previous afterTurn ${lastTurn}` })
      if (turnCount !== null && point.afterTurn >= turnCount) {
        issues.push({ code: 'SEMANTIC', path: `${path}/afterTurn`, reason: `afterTurn ${point.afterTurn} leaves no turn to resume: the transcript has ${turnCount} turn(s)` })
      }
      lastTurn = point.afterTurn
      out.push({ kind: 'afterTurn', turn: point.afterTurn })
    } else if (point.inBracket !== undefined && point.afterTurn === undefined) {
      if (point.inBracket <= lastBracket) issues.push({ code: 'SEMANTIC', path: `${path}/inBracket`, reason: `inBracket ${point.inBracket} does not follow the previous inBracket ${lastBracket}` })
      lastBracket = point.inBracket
      out.push({ kind: 'inBracket', occurrence: point.inBracket })
    } else {
      issues.push({ code: 'SEMANTIC', path, reason: 'a restart point gives exactly one of afterTurn and inBracket' })
    }
  })
  if (points.length > 0) {
    scenario.faults.forEach((fault, k) => {
      if (fault.target === 'crash') issues.push({ code: 'SEMANTIC', path: `/faults/${k}/kind`, reason: `${fault.kind} is a crash fault; a scenario with restart: stops cleanly instead (declare one or the other)` })
    })
  }
  if (issues.length > 0) throw new ScenarioError(scenario.file, issues)
  return out
}
