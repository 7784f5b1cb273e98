/**
 * Path coverage (issue #8): which protocol paths a session log reached, as a pure function of its events.
 * Each path has a stable id (an API, like INV ids: never renamed) and a one-line definition citing the §
 * it comes from. The fold is one pass over the log; it never throws on a log the checker would flag — a
 * malformed log just reaches fewer paths. Used per scenario by `sim run` and per run by `sim fuzz`.
 */
import {
  COMPACTION_DEFAULTS, TOOL_NOT_STARTED, TOOL_OUTCOME_UNKNOWN, TokenMeter, type Dialect, type LogEvent, type SessionEvent,
} from '@compaction-sim/core'
import type { ReportedPath } from '../report/types.ts'

/** One protocol path of the coverage table. */
export interface PathDefinition {
  /** Stable kebab-case id. */
  readonly id: string
  /** The spec section(s) the path comes from. */
  readonly section: string
  /** What in the log counts as reaching it. */
  readonly definition: string
}

/** The coverage table, in report order. */
export const PATH_DEFINITIONS: readonly PathDefinition[] = [
  {
    id: 'summary-commit', section: '§7.7',
    definition: 'a bracket with compaction/summary, its checkpoint replacement and an error-free compaction/end',
  },
  { id: 'prune-only-relief', section: '§3.5, §5.4', definition: 'a maintenance pass that landed compaction/prune and opened no bracket' },
  {
    id: 'overflow-recovery-bracket', section: '§3.10, FAULT-01',
    definition: 'a CONTEXT_WINDOW_EXCEEDED attempt, a committed bracket, then a same-step retry',
  },
  {
    id: 'overflow-retry-after-prune', section: '§3.10, FAULT-04/05',
    definition: 'a CONTEXT_WINDOW_EXCEEDED attempt, prune progress and no commit, then a same-step retry',
  },
  { id: 'overflow-declined', section: '§3.10, FAULT-03/06/07', definition: 'a turn ended {kind:error} with CONTEXT_WINDOW_EXCEEDED' },
  { id: 'failed-bracket-close', section: '§7.8', definition: 'a compaction/end carrying error' },
  { id: 'summary-error', section: '§1.4.16, §13.2', definition: 'a compaction/summary-error was logged' },
  { id: 'in-bracket-image-offload', section: '§6.8, FAULT-29', definition: 'an image/offload inside an open compaction bracket' },
  {
    id: 'image-offload-retry', section: '§6.6, FAULT-12/13',
    definition: 'an IMAGE_OFFLOAD_REQUIRED attempt, an image/offload outside a bracket, then a same-step retry',
  },
  {
    id: 'compaction-retries-exhausted', section: '§3.5, FAULT-33',
    definition: 'one maintenance pass committed compactionRetries + 1 brackets and the meter still reads ≥ threshold',
  },
  { id: 'transient-retry', section: '§1.4.13, FAULT-16', definition: 'an llm/retry of the generic retry policy' },
  { id: 'manual-compaction-commit', section: '§3.7', definition: 'a committed bracket with turn null (compactNow)' },
  {
    id: 'explicit-region', section: '§3.8',
    definition: 'a compaction/start of an explicit compactRegion call (manifest explicitRegionStarts)',
  },
  {
    id: 'stale-orphan-ignored', section: '§7.12, §11.4, FAULT-50',
    definition: 'a compaction/start while an unmatched start from before a session/end-seed exists',
  },
  {
    id: 'live-orphan-busy', section: '§7.12, FAULT-60/61',
    definition: 'a step/start or turn/start while an unmatched start of this lifecycle is open',
  },
  {
    id: 'crash-repair', section: '§11.4, FAULT-56',
    definition: 'a repair closer: a TOOL_OUTCOME_UNKNOWN / TOOL_NOT_STARTED result or turn/end interrupted',
  },
  { id: 'restore-end-seed', section: '§11.3', definition: 'a session/end-seed was logged' },
]

/** Inputs the log does not record (from the run manifest, §1.1). */
export interface PathOptions {
  /** §3.1 `compactionRetries` of the run's policy (default: the §3.1 default). */
  compactionRetries?: number
  /** `compaction/start` seqs of explicit `compactRegion` calls (manifest `explicitRegionStarts`). */
  explicitRegionStarts?: readonly number[]
  /** §3.1 `thresholdRatio` (default: the §3.1 default), against the window of the last request/context. */
  thresholdRatio?: number
  /** Log dialect for the meter (default `seed`). */
  dialect?: Dialect
}

interface Bracket { summary: boolean; checkpoint: boolean; turn: number | null }
interface PendingRetry { turn: number; step: number; code: string; pruned: boolean; committed: boolean; offloaded: boolean }

/** Per-path counts for one log, every path of `PATH_DEFINITIONS` listed (0 = not reached), in table order. */
export function pathsOf(events: Iterable<LogEvent>, options: PathOptions = {}): ReportedPath[] {
  const counts = new Map<string, number>(PATH_DEFINITIONS.map((p) => [p.id, 0]))
  const hit = (id: string): void => { counts.set(id, (counts.get(id) ?? 0) + 1) }
  const retries = options.compactionRetries ?? COMPACTION_DEFAULTS.compactionRetries
  const explicit = new Set(options.explicitRegionStarts ?? [])
  const ratio = options.thresholdRatio ?? COMPACTION_DEFAULTS.thresholdRatio
  const seen: LogEvent[] = []
  const meter = new TokenMeter({ events: seen }, { dialect: options.dialect ?? 'seed' })
  let contextWindow: number | null = null
  const aboveThreshold = (): boolean => {
    if (contextWindow === null) return false
    try {
      return meter.measure().totalTokens >= ratio * contextWindow
    } catch {
      return false // a log the meter cannot replay (MeterReplayError): the checker reports it; no path
    }
  }
  const open = new Map<string, Bracket>()
  let stale = 0
  let pass = { prunes: 0, starts: 0, commits: 0 }
  let pending: PendingRetry | null = null
  const endPass = (): void => {
    if (pass.prunes > 0 && pass.starts === 0) hit('prune-only-relief')
    if (pass.commits >= retries + 1 && aboveThreshold()) hit('compaction-retries-exhausted')
    pass = { prunes: 0, starts: 0, commits: 0 }
  }
  for (const event of events) {
    const e = event as SessionEvent
    switch (e.type) {
      case 'request/context':
        contextWindow = e.data.contextWindow ?? null
        break
      case 'compaction/start':
        if (stale > 0) hit('stale-orphan-ignored')
        if (explicit.has(e.seq)) hit('explicit-region')
        open.set(e.data.compactionId, { summary: false, checkpoint: false, turn: e.data.turn })
        pass.starts++
        break
      case 'compaction/summary': {
        const b = open.get(e.data.compactionId)
        if (b !== undefined) b.summary = true
        break
      }
      case 'compaction/summary-error':
        hit('summary-error')
        break
      case 'compaction/prune':
        pass.prunes++
        if (pending !== null) pending.pruned = true
        break
      case 'image/offload':
        if (open.size > 0) hit('in-bracket-image-offload')
        else if (pending !== null) pending.offloaded = true
        break
      case 'user/message':
        if (typeof e.surfaceOp === 'object') {
          for (const b of open.values()) if (b.summary) b.checkpoint = true
        } else endPass()
        break
      case 'compaction/end': {
        const b = open.get(e.data.compactionId)
        open.delete(e.data.compactionId)
        if (e.data.error !== undefined) {
          hit('failed-bracket-close')
          break
        }
        if (b?.summary === true && b.checkpoint) {
          hit('summary-commit')
          pass.commits++
          if (pending !== null) pending.committed = true
          if (b.turn === null) hit('manual-compaction-commit')
        }
        break
      }
      case 'llm/retry':
        hit('transient-retry')
        break
      case 'session/end-seed':
        hit('restore-end-seed')
        stale += open.size
        open.clear()
        endPass()
        break
      case 'tool/result': {
        const code = e.data.error?.code
        if (code === TOOL_OUTCOME_UNKNOWN || code === TOOL_NOT_STARTED) hit('crash-repair')
        if (typeof e.surfaceOp !== 'object') endPass()
        break
      }
      case 'turn/end':
        endPass()
        pending = null
        if (e.data.reason.kind === 'interrupted') hit('crash-repair')
        if (e.data.reason.kind === 'error' && e.data.reason.error.code === 'CONTEXT_WINDOW_EXCEEDED') hit('overflow-declined')
        break
      case 'turn/start':
      case 'step/start':
        endPass()
        if (open.size > 0) hit('live-orphan-busy')
        if (e.type === 'step/start') pending = null
        break
      case 'assistant/chunk': {
        endPass()
        const { turn, step, chunk } = e.data
        if (pending !== null && pending.turn === turn && pending.step === step) {
          if (pending.code === 'CONTEXT_WINDOW_EXCEEDED' && pending.committed) hit('overflow-recovery-bracket')
          else if (pending.code === 'CONTEXT_WINDOW_EXCEEDED' && pending.pruned) hit('overflow-retry-after-prune')
          else if (pending.code === 'IMAGE_OFFLOAD_REQUIRED' && pending.offloaded) hit('image-offload-retry')
          pending = null
        }
        if (chunk.type === 'finish' && chunk.reason.kind === 'error') {
          pending = { turn, step, code: chunk.reason.failure.code, pruned: false, committed: false, offloaded: false }
        }
        break
      }
      default:
        break
    }
    seen.push(event)
  }
  endPass()
  return PATH_DEFINITIONS.map((p) => ({ path: p.id, reached: counts.get(p.id) ?? 0 }))
}

/** Sums per-log path counts into one table (every path listed, in table order). */
export function sumPaths(tables: Iterable<readonly ReportedPath[]>): ReportedPath[] {
  const total = new Map<string, number>(PATH_DEFINITIONS.map((p) => [p.id, 0]))
  for (const table of tables) for (const p of table) total.set(p.path, (total.get(p.path) ?? 0) + p.reached)
  return [...total].map(([path, reached]) => ({ path, reached }))
}
