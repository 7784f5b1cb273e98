/**
 * The cache-reuse and cost report of one scenario (protocol §9.4, issue #9): replays the captured requests
 * through the scenario's cache contract (`contracts.ts`) and reads, from the session log, the §9.4 cause of
 * each divergence, the usage the provider reported, the compaction savings, and the series boundaries. Pure
 * function of the capture and the log: same run → same section.
 *
 * Choices where §9 is silent (documented in the README): `recomputed = prompt − cached − newContent`
 * (writes are processed tokens); `tokensSaved` = Σ over conversation requests of (shadowed − checkpoint
 * weight) of every summary replacement committed before the request (nested compactions telescope);
 * `savedCost` prices those tokens at the cache-read rate (conservatively, as if they had stayed a warm prefix);
 * reported usage is compared on `cached` and on `uncached + written` (the OpenAI and DeepSeek wires fold
 * writes into the prompt).
 */
import {
  assertNever, blocksPrice, EventLog, ROLE_OVERHEAD, type CapturedRequest, type ContentBlock, type Dialect, type LogEvent, type TokenUsage,
} from '@compaction-sim/core'
import type { CacheCauseKind, CacheRequestRow, CacheTotals, RunCache, ScenarioCache, ScenarioReport } from '../report/types.ts'
import { CacheEngine, type CacheContractSpec, type CachePrediction } from './contracts.ts'
import { costOf, PRICE_TABLE_DATE, PRICE_TABLE_VERSION, ratesAt } from './prices.ts'
import { cacheKeyOf, segmentRequest, type SegmentedRequest } from './segments.ts'

/** Inputs of `scenarioCacheOf`. */
export interface CacheReportInput {
  /** The capture, in dispatch order (§1.1). */
  requests: readonly CapturedRequest[]
  /** The final session log. */
  events: readonly LogEvent[]
  dialect: Dialect
  spec: CacheContractSpec
  /** The route image price of a request's provider and model (§9.2), undefined when the route declares none. */
  imageTokens: (provider: string, model: string) => number | undefined
  /** Whether the scenario scripted the usage of the reply logged at `turn`/`step` (then it is not contract usage). */
  scriptedUsage: (turn: number, step: number) => boolean
  /**
   * Provider restarts: from request `index` on, a new mock process served the requests with a cold cache (a
   * §13.4 crash: the child's mock died with it); the requests before it read their usage only below `logLength`
   * (the durable log the child left). Default: none.
   */
  restarts?: ReadonlyArray<{ index: number; logLength: number }>
}

const COMPLETED: ReadonlySet<CapturedRequest['outcome']> = new Set(['stop', 'tool-calls', 'max-tokens'])

/** Rounds a cost to 1e-9 USD so reports stay short and stable. */
function money(x: number): number {
  return Math.round(x * 1e9) / 1e9
}

/** Totals over `rows`. */
export function totalsOf(rows: readonly Pick<CacheRequestRow, 'prompt' | 'cached' | 'uncached'>[]): CacheTotals {
  let prompt = 0
  let cached = 0
  let uncached = 0
  for (const r of rows) {
    prompt += r.prompt
    cached += r.cached
    uncached += r.uncached
  }
  return { requests: rows.length, prompt, cached, uncached, reuseRatio: prompt === 0 ? null : cached / prompt }
}

/**
 * Whether a request completed (§9.3 sources): its capture says so and the log does not disagree — a finish
 * chunk of kind `error`/`aborted` (an in-band rejection) or a `compaction/summary-error` in its window.
 */
function completedOf(events: readonly LogEvent[], request: CapturedRequest, until: number): boolean {
  if (!COMPLETED.has(request.outcome)) return false
  for (let seq = request.logRevisionAtDispatch; seq < until && seq < events.length; seq++) {
    const e = events[seq]
    if (e === undefined) continue
    if (request.purpose === 'compaction' && e.type === 'compaction/summary-error') return false
    if (request.purpose === 'compaction' && e.type === 'compaction/summary') return true
    if (request.purpose === 'conversation' && e.type === 'assistant/chunk') {
      const chunk = (e.data as { chunk: { type: string; reason?: { kind: string } } }).chunk
      if (chunk.type === 'finish') return chunk.reason?.kind !== 'error' && chunk.reason?.kind !== 'aborted'
    }
  }
  return true
}

/** The end of a request's log window: the next later dispatch revision, the restart cut before a restart, else the log's end. */
function windowEnd(requests: readonly CapturedRequest[], i: number, restarts: ReadonlyArray<{ index: number; logLength: number }>): number {
  const from = requests[i]?.logRevisionAtDispatch ?? 0
  let end = Number.MAX_SAFE_INTEGER
  for (let j = i + 1; j < requests.length; j++) {
    const L = requests[j]?.logRevisionAtDispatch ?? 0
    if (L > from && L < end) end = L
  }
  for (const r of restarts) if (i < r.index && r.logLength < end) end = r.logLength
  return end
}

/** The message id of the surface node at `seq` (the node's own message, or the replacing one). */
function messageIdOf(event: LogEvent | undefined): string | null {
  if (event === undefined) return null
  const data = event.data as { id?: unknown; message?: { id?: unknown } }
  if (typeof data.message?.id === 'string') return data.message.id
  return typeof data.id === 'string' ? data.id : null
}

/** The usage the provider reported for a request and the turn/step of its reply, read from the log in the request's window. */
function reportedOf(
  events: readonly LogEvent[], request: CapturedRequest, until: number,
): { usage: TokenUsage; turn: number | null; step: number | null } | null {
  for (let seq = request.logRevisionAtDispatch; seq < until && seq < events.length; seq++) {
    const e = events[seq]
    if (e === undefined) continue
    if (request.purpose === 'conversation' && e.type === 'assistant/message') {
      const d = e.data as { turn: number; step: number; usage?: TokenUsage }
      return d.usage === undefined ? null : { usage: d.usage, turn: d.turn, step: d.step }
    }
    if (request.purpose === 'compaction' && e.type === 'compaction/summary') {
      const d = e.data as { usage?: TokenUsage }
      return d.usage === undefined ? null : { usage: d.usage, turn: null, step: null }
    }
  }
  return null
}

interface SurfaceChange {
  kind: 'replacement' | 'prune' | 'offload'
  /** The node seq whose position decides (the replacing event, or an offload's earliest target). */
  nodes: number[]
}

/** The surface changes of `events[from, to)` (§9.4 rule 4). */
function changesBetween(events: readonly LogEvent[], from: number, to: number): SurfaceChange[] {
  const out: SurfaceChange[] = []
  for (let seq = Math.max(0, from); seq < to && seq < events.length; seq++) {
    const e = events[seq]
    if (e === undefined) continue
    const replaces = typeof (e as { surfaceOp?: unknown }).surfaceOp === 'object'
    if (replaces && e.type === 'user/message') out.push({ kind: 'replacement', nodes: [seq] })
    else if (replaces && e.type === 'tool/result') out.push({ kind: 'prune', nodes: [seq] })
    else if (e.type === 'image/offload') {
      const targets = (e.data as { targets: Array<{ seq: number }> }).targets
      out.push({ kind: 'offload', nodes: targets.map((t) => t.seq) })
    }
  }
  return out
}

/**
 * The surface after the first L events, folded incrementally: requests come (almost always) in revision order,
 * so each event is folded once; a smaller L than the last one refolds from the start.
 */
class SurfaceCursor {
  private log: EventLog
  private folded = 0

  constructor(private readonly events: readonly LogEvent[], private readonly dialect: Dialect) {
    this.log = new EventLog({ dialect })
  }

  /** The surface of `events[0, L)`. */
  at(L: number): EventLog['state']['surface'] {
    if (L < this.folded) {
      this.log = new EventLog({ dialect: this.dialect })
      this.folded = 0
    }
    for (; this.folded < L && this.folded < this.events.length; this.folded++) {
      const event = this.events[this.folded]
      if (event !== undefined) this.log.accept(event)
    }
    return this.log.state.surface
  }
}

/** §9.4 cause of a request with a source whose divergence is neither 0 nor the source's length (rule 4). */
function surfaceCause(
  events: readonly LogEvent[], cursor: SurfaceCursor, request: CapturedRequest, sourceRevision: number, divergence: number,
): { kind: CacheCauseKind; position: number | null } {
  const changes = changesBetween(events, sourceRevision, request.logRevisionAtDispatch)
  if (changes.length === 0) return { kind: 'none', position: null }
  const surface = cursor.at(request.logRevisionAtDispatch)
  let best: { kind: SurfaceChange['kind']; node: number; position: number } | null = null
  for (const change of changes) {
    for (const node of change.nodes) {
      const position = surface.position(node)
      if (position < 0) continue
      if (best === null || position < best.position) best = { kind: change.kind, node, position }
    }
  }
  if (best === null) return { kind: 'none', position: null }
  const id = messageIdOf(events[best.node])
  const index = request.messages.findIndex((m) => m.id === id)
  return index >= 0 && 1 + index === divergence ? { kind: best.kind, position: best.position } : { kind: 'none', position: null }
}

/** Savings of committed summary replacements: (seq of the checkpoint, shadowed − checkpoint weight). */
function replacementSavings(events: readonly LogEvent[], imageTokens: number | undefined): Array<{ seq: number; tokens: number }> {
  const shadowed = new Map<number, number>()
  const out: Array<{ seq: number; tokens: number }> = []
  for (const e of events) {
    if (e.type === 'compaction/summary') shadowed.set(e.seq, (e.data as { shadowedTokenCount: number }).shadowedTokenCount)
    if (e.type !== 'user/message' || typeof (e as { surfaceOp?: unknown }).surfaceOp !== 'object') continue
    const sources = (e as { sourceEventSeqs?: readonly number[] }).sourceEventSeqs ?? []
    const summary = sources.map((s) => shadowed.get(s)).find((t) => t !== undefined)
    if (summary === undefined) continue
    const content = (e.data as { content: ContentBlock[] }).content
    out.push({ seq: e.seq, tokens: summary - (blocksPrice(content, imageTokens) + ROLE_OVERHEAD) })
  }
  return out
}

/** The `cache` section of one scenario (module doc). */
export function scenarioCacheOf(input: CacheReportInput): ScenarioCache {
  const { requests, events, spec } = input
  const restarts = input.restarts ?? []
  const cursor = new SurfaceCursor(events, input.dialect)
  let engine = new CacheEngine(spec)
  let seen = new Map<string, Set<string>>()
  const segmented: SegmentedRequest[] = []
  const rows: CacheRequestRow[] = []
  let recomputedByCompaction = 0
  let recomputeCost = 0
  let summaryCost = 0
  let mismatches = 0
  let scriptedUsage = 0
  let lastCompletedKey: string | null = null
  const byIndex = new Map<number, CapturedRequest>()
  for (const [i, request] of requests.entries()) {
    if (restarts.some((r) => r.index === i)) {
      engine = new CacheEngine(spec)
      seen = new Map()
      lastCompletedKey = null
    }
    const key = cacheKeyOf(request.provider, request.model)
    const seg = segmentRequest(key, request.messages, request.tools, input.imageTokens(request.provider, request.model))
    segmented.push(seg)
    byIndex.set(request.index, request)
    const next = windowEnd(requests, i, restarts)
    const completed = completedOf(events, request, next)
    const predicted: CachePrediction = engine.predict({ index: request.index, time: request.time, segmented: seg })
    // §9.4 cause.
    let cause: { kind: CacheCauseKind; position: number | null }
    const source = predicted.source === null ? undefined : byIndex.get(predicted.source)
    if (predicted.source === null || predicted.divergence === null || source === undefined) {
      cause = { kind: lastCompletedKey !== null && lastCompletedKey !== key ? 'route-change' : 'none', position: null }
    } else if (predicted.divergence === segmented[requests.indexOf(source)]?.chain.length) {
      cause = { kind: 'none', position: null }
    } else if (predicted.divergence === 0) {
      cause = { kind: 'tools-change', position: null }
    } else {
      cause = surfaceCause(events, cursor, request, source.logRevisionAtDispatch, predicted.divergence)
    }
    // §9.4 new content and recomputation.
    const known = seen.get(key) ?? new Set<string>()
    let newContent = 0
    for (let s = predicted.divergence ?? 0; s < seg.digests.length; s++) {
      if (!known.has(seg.digests[s] ?? '')) newContent += seg.weights[s] ?? 0
    }
    const recomputed = predicted.prompt - predicted.cached - newContent
    const reported = reportedOf(events, request, next)
    const output = reported?.usage.outputTokens ?? 0
    const tokens = { uncached: predicted.uncached, cached: predicted.cached, written: predicted.written, output }
    const cost = money(costOf(spec.price, request.time, tokens, spec.retention === 'long'))
    const row: CacheRequestRow = {
      index: request.index,
      purpose: request.purpose,
      cacheKey: `${request.provider}/${request.model}`,
      rejected: !completed,
      prompt: predicted.prompt,
      cached: predicted.cached,
      uncached: predicted.uncached,
      written: predicted.written,
      divergence: predicted.divergence,
      source: predicted.source,
      cause: cause.position === null ? cause.kind : `${cause.kind}@${cause.position}`,
      causeKind: cause.kind,
      recomputed,
      output,
      cost,
    }
    if (reported !== null) {
      const u = reported.usage
      row.reported = { cached: u.cacheReadTokens ?? 0, uncached: u.inputTokens, written: u.cacheWriteTokens ?? 0 }
      const scripted = reported.turn !== null && reported.step !== null && input.scriptedUsage(reported.turn, reported.step)
      if (scripted) {
        row.scripted = true
        scriptedUsage++
      } else if (
        row.reported.cached !== row.cached || row.reported.uncached + row.reported.written !== row.uncached + row.written
      ) {
        row.mismatch = true
        mismatches++
      }
    }
    rows.push(row)
    if (request.purpose === 'compaction') summaryCost += cost
    switch (cause.kind) {
      case 'replacement':
      case 'prune':
      case 'offload': {
        recomputedByCompaction += recomputed
        const r = ratesAt(spec.price, request.time)
        recomputeCost += (recomputed * (r.input - r.cacheRead)) / 1e6
        break
      }
      case 'none':
      case 'tools-change':
      case 'route-change':
        break
      default:
        assertNever(cause.kind, 'cache cause')
    }
    engine.record({ index: request.index, time: request.time, segmented: seg }, completed)
    if (completed) {
      for (const d of seg.digests) known.add(d)
      seen.set(key, known)
      lastCompletedKey = key
    }
  }
  const first = requests[0]
  const savings = replacementSavings(events, first === undefined ? undefined : input.imageTokens(first.provider, first.model))
  let tokensSaved = 0
  let savedCost = 0
  for (const request of requests) {
    if (request.purpose !== 'conversation') continue
    let saved = 0
    for (const s of savings) if (s.seq < request.logRevisionAtDispatch) saved += s.tokens
    tokensSaved += saved
    savedCost += (saved * ratesAt(spec.price, request.time).cacheRead) / 1e6
  }
  const seriesBoundaries = events.filter((e) => e.type === 'request/header' && (e.data as { reason: string }).reason === 'series').length
  return {
    contract: spec.contract,
    deviation: spec.deviation,
    granularityTokens: spec.granularityTokens,
    ttlMs: spec.ttlMs,
    price: { tableVersion: PRICE_TABLE_VERSION, tableDate: PRICE_TABLE_DATE, entry: spec.price.id, currency: 'USD' },
    requests: rows,
    overall: totalsOf(rows),
    conversation: totalsOf(rows.filter((r) => r.purpose === 'conversation')),
    compaction: totalsOf(rows.filter((r) => r.purpose === 'compaction')),
    seriesBoundaries,
    recomputedByCompaction,
    summaryCost: money(summaryCost),
    tokensSaved,
    savedCost: money(savedCost),
    recomputeCost: money(recomputeCost),
    netSaving: money(savedCost - summaryCost - recomputeCost),
    mismatches,
    scriptedUsage,
  }
}

/** Run-level totals over the scenarios that carry a `cache` section; undefined when none does. */
export function runCacheOf(scenarios: readonly ScenarioReport[]): RunCache | undefined {
  const withCache = scenarios.filter((s) => s.cache !== undefined)
  if (withCache.length === 0) return undefined
  const rows = withCache.flatMap((s) => s.cache?.requests ?? [])
  let cost = 0
  let netSaving = 0
  let mismatches = 0
  for (const s of withCache) {
    for (const r of s.cache?.requests ?? []) cost += r.cost
    netSaving += s.cache?.netSaving ?? 0
    mismatches += s.cache?.mismatches ?? 0
  }
  return {
    scenarios: withCache.length,
    overall: totalsOf(rows),
    cost: money(cost),
    netSaving: money(netSaving),
    mismatches,
    mismatchedScenarios: withCache.filter((s) => (s.cache?.mismatches ?? 0) > 0).map((s) => s.file),
    price: { tableVersion: PRICE_TABLE_VERSION, tableDate: PRICE_TABLE_DATE },
  }
}
