/**
 * The §12.0 checker model: ONE streaming fold of the log shared by every check. It keeps the surface,
 * offload marks, header in force, latest route context and series epoch (core's `SessionState`), the
 * reference meter (§2), turn/step state with pending tool calls and the current model-call attempt, the
 * open bracket of the current lifecycle, the last end-seed, the used and ended `compactionId`s, and the
 * pre-step and overflow windows. Checks read it; only `fold` / `skip` change it.
 *
 * Memory: the events of live surface nodes, the chunks of the open step, one entry per route, per offloaded
 * node and per compaction id. Shadowed nodes are dropped when they leave the surface.
 *
 * The fold is lenient where a check reports: a structural violation (a step opened twice, a message outside
 * its step) never stops it; an unresolvable replacement is folded as nothing; a bracket event naming another
 * bracket closes or joins nothing. Every such case is reported by the check that owns the rule.
 */
import {
  assertNever, deriveNodeMessages, harnessReadOnlyPath, isSurfaceType, resolveCompactSpec, resolveTargetPolicy, SessionState, TargetPressureConfigError,
  type CompactSpec, type DerivedMessage, type DeriveSource, type Dialect, type EpochHeader, type LlmFailure, type LogEvent,
  type RouteTarget, type SessionEvent, type StreamChunk, type SurfaceOp, type SurfaceView, type TargetPolicy, type TextOffloadMarks,
} from '@compaction-sim/core'
import { CapacityEvidenceModel } from './hardened-capacity.ts'
import { LiveEvents } from './live-events.ts'
import { ReferenceMeter, type MeterSource, type PressureReading } from './meter.ts'
import type { FoldItem, RunInputs } from './types.ts'

/** The open turn. */
export interface TurnState {
  readonly number: number
  readonly startSeq: number
  /** Highest step number opened in this turn (0 before the first). */
  lastStep: number
  /** The most recent failed finish (`error` or `aborted`) of this turn. */
  lastFailure: { seq: number; failure: LlmFailure } | null
}

/** The open step: pending `tool/call`s, its chunks, and the attempt in progress. */
export interface StepState {
  readonly turn: number
  readonly step: number
  readonly startSeq: number
  /** Call id → seq of a `tool/call` of this step not yet answered by an appended `tool/result`. */
  readonly pendingCalls: Map<string, number>
  /** Seqs of the chunks of the current (or last) attempt, in order (INV-04). */
  attempt: number[]
  /** The chunks of `attempt`, in the same order. */
  attemptChunks: StreamChunk[]
  /** An attempt whose `finish` chunk has not been seen; the next chunk after a finish is a new dispatch. */
  attemptOpen: boolean
}

/** The §12.0 windows: after `step/end` / `turn/start` before `step/start` / `turn/end`; after an overflow failure. */
export interface Window {
  readonly kind: 'pre-step' | 'overflow'
  readonly openSeq: number
  readonly turn: number
  /** The failing step (overflow windows only). */
  readonly step: number | null
  /** The provider failure that opened an overflow window. */
  readonly failure: LlmFailure | null
  /** `replaceGeneration` when the window opened (INV-32). */
  readonly generationAtOpen: number
}

/**
 * How a bracket was entered, read off its placement (§3.4–§3.8, INV-46): `explicit` (listed in the manifest),
 * `manual` (`turn: null`), `pressure` (numeric owner in a pre-step window), `overflow` (in an overflow window),
 * `misplaced` (numeric owner in neither).
 */
export type BracketMode = 'explicit' | 'manual' | 'pressure' | 'overflow' | 'misplaced'

/** The open bracket of the current lifecycle. */
export interface BracketState {
  readonly start: SessionEvent<'compaction/start'>
  readonly mode: BracketMode
  /** `openSeq` of the window the bracket started in, or null. */
  readonly windowSeq: number | null
  /** The bracket's `compaction/summary`, once seen. */
  summary: SessionEvent<'compaction/summary'> | null
  summaries: number
}

/** A positional span resolved on the current surface, or why it does not resolve (§1.5.1). */
export type SpanResolution =
  | { readonly ok: true; readonly startPosition: number; readonly endPosition: number; readonly seqs: readonly number[] }
  | { readonly ok: false; readonly reason: string }

/** The figures a pressure-based check compares (§3.3), or why they are unknown. */
export type PolicyFigures =
  | { readonly kind: 'ok'; readonly policy: TargetPolicy; readonly spec: CompactSpec }
  | { readonly kind: 'no-target' }
  | { readonly kind: 'no-capacity'; readonly route: RouteTarget }
  | { readonly kind: 'config-error'; readonly route: RouteTarget; readonly message: string }

/** The §12.0 model. Feed every item in file order: `fold` for folded items, `skip` for the others. */
export class CheckerModel implements MeterSource, DeriveSource {
  readonly state: SessionState
  readonly meter: ReferenceMeter
  /** HARD-8 capacity evidence per route (usage, window rejections, warnings), folded always; read under the rule only. */
  readonly capacityEvidence = new CapacityEvidenceModel()
  /** Events of the live surface nodes (a table that does not re-allocate as the surface churns; see `LiveEvents`). */
  private readonly live = new LiveEvents()
  private readonly contextByRoute = new Map<string, number | undefined>()
  turn: TurnState | null = null
  step: StepState | null = null
  window: Window | null = null
  bracket: BracketState | null = null
  /** Highest turn number started so far. */
  lastTurnNumber = 0
  /** Number of `session/end-seed`s so far (0 = the first lifecycle). */
  lifecycle = 0
  /** `request/header`s written in the current lifecycle. */
  headersThisLifecycle = 0
  /** The last conversation dispatch (first chunk of an attempt) in this lifecycle, with the series epoch then. */
  lastDispatch: { seq: number; epoch: number } | null = null
  /** Calls requested by assistant messages of the open turn and not yet answered: id → step, `tool/call` seq. */
  readonly openCalls = new Map<string, { step: number; callSeq: number | null }>()
  /** Every `compactionId` a `compaction/start` used, with the seq of its first start; the ids of closed brackets. */
  readonly usedIds = new Map<string, number>()
  readonly endedIds = new Set<string>()
  /** The previous line (folded or not), for adjacency rules (INV-13, INV-20, INV-37). */
  prevItem: FoldItem | null = null
  /**
   * Where a restore resumed the log without appending `session/end-seed` (§11.4), or null: an `interrupted`
   * `turn/end` (only crash repair writes one) or the event right after a manifest crash, when no end-seed
   * follows. Cleared at the next end-seed.
   */
  unsealedRestore: number | null = null
  /** Highest folded seq. */
  lastSeq = -1

  constructor(
    readonly dialect: Dialect,
    readonly inputs: RunInputs,
  ) {
    this.state = new SessionState({ dialect, explicitSeriesHeaders: inputs.explicitSeriesHeaders }, (seq) => this.live.get(seq))
    this.meter = new ReferenceMeter(dialect, this)
  }

  /** Live surface nodes in position order. */
  get nodes(): readonly number[] { return this.state.surface.nodes }
  /** The event of a live surface node (shadowed and log-only events are not kept). */
  event(seq: number): LogEvent | undefined { return this.live.get(seq) }
  /** Offloaded image indexes of a node (§6.4). */
  offloadedIndexes(seq: number): ReadonlySet<number> { return this.state.offloadedIndexes(seq) }
  /** Projected user text blocks of a node (hardened `text/offload`, HARD-5). */
  textOffloads(seq: number): TextOffloadMarks { return this.state.textOffloads(seq) }
  /** Current position of a node, or -1. */
  position(seq: number): number { return this.state.surface.position(seq) }
  /** The header in force (§10.2), canonical. */
  get header(): EpochHeader | undefined { return this.state.header?.header }

  /** `h` of §4.2: 1 when position 0 holds a `system/message` (seed dialect only, §14.1), else 0. */
  headCount(): 0 | 1 {
    if (this.dialect !== 'seed') return 0
    const first = this.nodes[0]
    return first !== undefined && this.live.get(first)?.type === 'system/message' ? 1 : 0
  }

  /** Resolves the positional span `start … end` on the current surface (§1.5.2). */
  span(start: number, end: number): SpanResolution {
    const surface = this.state.surface
    const i = surface.position(start)
    const j = surface.position(end)
    if (i < 0) return { ok: false, reason: `start ${start} is not a current node (${whyNotNode(surface, start)})` }
    if (j < 0) return { ok: false, reason: `end ${end} is not a current node (${whyNotNode(surface, end)})` }
    if (i > j) return { ok: false, reason: `the span is reversed: node ${start} is at position ${i}, after node ${end} at position ${j}` }
    return { ok: true, startPosition: i, endPosition: j, seqs: surface.nodes.slice(i, j + 1) }
  }

  /** The model-visible messages now, with their node seqs (§10.1). */
  derivedNodes(): DerivedMessage[] {
    return deriveNodeMessages(this, harnessReadOnlyPath)
  }

  /** §2.5 `measure` of the folded prefix with the header in force. */
  pressure(): PressureReading {
    return this.meter.measure(this.header)
  }

  /** The routed target (§2.7): the folded header's provider and model, both non-empty; else null. */
  routedTarget(): RouteTarget | null {
    const h = this.header
    if (h === undefined || h.config.provider === '' || h.config.model === '') return null
    return { provider: h.config.provider, model: h.config.model }
  }

  /**
   * Capacity of a route: the manifest's `contextWindow` for it, else the latest `request/context` for that
   * route so far (§12.0 stand-in); undefined when neither gives one.
   */
  capacity(route: RouteTarget): number | undefined {
    const key = routeKeyOf(route.provider, route.model)
    return this.inputs.manifestCapacity.get(key) ?? this.contextByRoute.get(key)
  }

  /** The resolved policy of a route (§3.3). */
  policy(route: RouteTarget): TargetPolicy {
    return resolveTargetPolicy(this.inputs.policy, route)
  }

  /** Threshold and retained budget of the routed target now (§3.3), or why they are unknown. */
  figures(): PolicyFigures {
    const route = this.routedTarget()
    if (route === null) return { kind: 'no-target' }
    const policy = this.policy(route)
    const window = this.capacity(route)
    if (window === undefined) return { kind: 'no-capacity', route }
    try {
      return { kind: 'ok', policy, spec: resolveCompactSpec(policy, window) }
    } catch (error) {
      if (error instanceof TargetPressureConfigError) return { kind: 'config-error', route, message: error.message }
      throw error
    }
  }

  /** Notes a line that is not folded (opaque or duplicate). */
  skip(item: FoldItem): void {
    this.prevItem = item
  }

  /** Folds one validated event (the item's `event`, not a duplicate). */
  fold(item: FoldItem, e: LogEvent): void {
    this.lastSeq = Math.max(this.lastSeq, e.seq)
    const op = 'surfaceOp' in e ? (e.surfaceOp as SurfaceOp | undefined) : undefined
    if (op !== undefined && isSurfaceType(e.type, this.dialect)) this.foldSurface(e, op)
    else this.foldLogOnly(e)
    if (e.type === 'session/end-seed') this.unsealedRestore = null
    else if (this.unsealedRestore === null && resumesWithoutEndSeed(item, this)) this.unsealedRestore = e.seq
    this.prevItem = item
  }

  private foldSurface(e: LogEvent, op: SurfaceOp): void {
    if (op === 'append') {
      if (e.type === 'assistant/message') {
        this.capacityEvidence.onUsage(e as SessionEvent<'assistant/message'>, this.header, this.dialect, this.meter.surfaceTokens, this.state.routeContext?.data)
      }
      this.live.set(e.seq, e)
      this.state.apply(e)
      this.meter.onAppend(e.seq)
    } else {
      const span = this.span(op.start, op.end)
      if (!span.ok) {
        this.meter.markTaint(e.seq, `replacement ${op.start}…${op.end} is not on the surface`)
        return
      }
      this.live.set(e.seq, e)
      this.state.apply(e)
      this.meter.onReplace(e.seq, span.seqs)
      for (const s of span.seqs) this.live.delete(s)
    }
    const ev = e as SessionEvent
    if (ev.type === 'assistant/message') this.onAssistantMessage(ev)
    else if (ev.type === 'tool/result' && op === 'append') this.onToolResult(ev)
  }

  private onAssistantMessage(e: SessionEvent<'assistant/message'>): void {
    const step = this.step
    const inStep = step !== null && step.turn === e.data.turn && step.step === e.data.step
    if (!inStep) this.meter.markTaint(e.seq, `assistant/message of step ${e.data.turn}.${e.data.step} outside its open step`)
    let cited: readonly StreamChunk[] | 'invalid' | undefined
    const list = e.sourceEventSeqs
    if (list !== undefined) cited = inStep ? citedChunks(list, step) : 'invalid'
    this.meter.onAssistantMessage(e, this.header, cited)
    for (const b of e.data.message.content) {
      if (b.type === 'tool-call' && typeof b['id'] === 'string') this.openCalls.set(b['id'], { step: e.data.step, callSeq: null })
    }
  }

  private onToolResult(e: SessionEvent<'tool/result'>): void {
    const callId = e.data.message.source.callId
    this.step?.pendingCalls.delete(callId)
    this.openCalls.delete(callId)
  }

  private foldLogOnly(e: LogEvent): void {
    this.state.apply(e)
    const ev = e as SessionEvent
    switch (ev.type) {
      case 'turn/start':
        this.turn = { number: ev.data.turn, startSeq: ev.seq, lastStep: 0, lastFailure: null }
        this.step = null
        this.openCalls.clear()
        this.lastTurnNumber = Math.max(this.lastTurnNumber, ev.data.turn)
        this.window = this.preStepWindow(ev.seq)
        return
      case 'turn/end':
        this.turn = null
        this.step = null
        this.window = null
        this.openCalls.clear()
        return
      case 'step/start':
        this.meter.onStepStart(ev.seq, this.step === null)
        this.step = { turn: ev.data.turn, step: ev.data.step, startSeq: ev.seq, pendingCalls: new Map(), attempt: [], attemptChunks: [], attemptOpen: false }
        if (this.turn !== null && this.turn.number === ev.data.turn) this.turn.lastStep = Math.max(this.turn.lastStep, ev.data.step)
        this.window = null
        return
      case 'step/end': {
        const s = this.step
        if (s === null || s.turn !== ev.data.turn || s.step !== ev.data.step) this.meter.markTaint(ev.seq, `step/end ${ev.data.turn}.${ev.data.step} does not match the open step`)
        this.step = null
        this.window = this.preStepWindow(ev.seq)
        return
      }
      case 'assistant/chunk':
        this.onChunk(ev)
        return
      case 'tool/call': {
        const s = this.step
        if (s !== null && s.turn === ev.data.turn && s.step === ev.data.step) s.pendingCalls.set(ev.data.callId, ev.seq)
        const open = this.openCalls.get(ev.data.callId)
        if (open !== undefined) open.callSeq = ev.seq
        return
      }
      case 'request/header':
        this.headersThisLifecycle++
        this.meter.onRoute(this.header, this.state.routeContext?.data)
        return
      case 'request/context':
        this.contextByRoute.set(routeKeyOf(ev.data.provider, ev.data.model), ev.data.contextWindow)
        this.capacityEvidence.onContext(ev.data)
        this.meter.onRoute(this.header, ev.data)
        return
      case 'session/end-seed':
        this.lifecycle++
        this.bracket = null
        this.headersThisLifecycle = 0
        this.lastDispatch = null
        return
      case 'compaction/start':
        this.bracket = { start: ev, mode: this.modeOf(ev), windowSeq: this.window?.openSeq ?? null, summary: null, summaries: 0 }
        if (!this.usedIds.has(ev.data.compactionId)) this.usedIds.set(ev.data.compactionId, ev.seq)
        return
      case 'compaction/summary': {
        const b = this.bracket
        if (b !== null && b.start.data.compactionId === ev.data.compactionId) {
          b.summary = ev
          b.summaries++
        }
        return
      }
      case 'compaction/end': {
        const b = this.bracket
        if (b !== null) {
          this.endedIds.add(b.start.data.compactionId)
          this.bracket = null
        }
        return
      }
      case 'image/offload':
        this.meter.onOffload(ev.data.targets.map((t) => t.seq))
        return
      case 'text/offload':
        this.meter.onOffload([ev.data.seq])
        return
      default:
        return // other log-only events (llm/retry, summary-error, prune, foreign types) change nothing here
    }
  }

  private onChunk(e: SessionEvent<'assistant/chunk'>): void {
    const s = this.step
    if (s === null || s.turn !== e.data.turn || s.step !== e.data.step) return
    if (!s.attemptOpen) {
      s.attemptOpen = true
      s.attempt = []
      s.attemptChunks = []
      this.lastDispatch = { seq: e.seq, epoch: this.state.seriesEpoch }
      if (this.window?.kind === 'overflow' && this.window.step === s.step) this.window = null
    }
    s.attempt.push(e.seq)
    s.attemptChunks.push(e.data.chunk)
    const chunk = e.data.chunk
    if (chunk.type !== 'finish') return
    s.attemptOpen = false
    const reason = chunk.reason
    if (reason.kind !== 'error' && reason.kind !== 'aborted') return
    if (reason.kind === 'error') {
      this.capacityEvidence.onRejection(e.seq, reason.failure.code, reason.failure.message, this.header, this.dialect, this.meter.surfaceTokens)
    }
    if (this.turn !== null) this.turn.lastFailure = { seq: e.seq, failure: reason.failure }
    if (reason.kind === 'error' && reason.failure.code === 'CONTEXT_WINDOW_EXCEEDED') {
      this.window = {
        kind: 'overflow', openSeq: e.seq, turn: e.data.turn, step: e.data.step, failure: reason.failure,
        generationAtOpen: this.state.surface.replaceGeneration,
      }
    }
  }

  private preStepWindow(seq: number): Window | null {
    const turn = this.turn
    if (turn === null) return null
    return { kind: 'pre-step', openSeq: seq, turn: turn.number, step: null, failure: null, generationAtOpen: this.state.surface.replaceGeneration }
  }

  private modeOf(e: SessionEvent<'compaction/start'>): BracketMode {
    if (this.inputs.explicitRegionStarts.has(e.seq)) return 'explicit'
    if (e.data.turn === null) return 'manual'
    const kind = this.window?.kind
    switch (kind) {
      case 'pre-step': return 'pressure'
      case 'overflow': return 'overflow'
      case undefined: return 'misplaced'
      default: return assertNever(kind, 'window kind')
    }
  }
}

/**
 * The chunks an assistant message cites, taken from its step's current attempt (§2.5): the attempt itself
 * when the list names exactly its chunks (the normal case, O(n)), else looked up one by one; `'invalid'`
 * when a cited seq is not a chunk of that attempt (older attempts are not kept: such a citation breaks
 * INV-04 and taints the pressure figure instead of being priced).
 */
function citedChunks(list: readonly number[], step: StepState): readonly StreamChunk[] | 'invalid' {
  const seqs = step.attempt
  if (list.length === seqs.length && list.every((s, i) => s === seqs[i])) return step.attemptChunks
  const out: StreamChunk[] = []
  for (const s of list) {
    const i = seqs.indexOf(s)
    if (i < 0) return 'invalid'
    out.push(step.attemptChunks[i] as StreamChunk)
  }
  return out
}

/** Why `seq` is not a current node (for span messages). */
function whyNotNode(surface: SurfaceView, seq: number): string {
  return surface.isShadowed(seq) ? `node ${seq} was shadowed` : `seq ${seq} is not a surface node`
}

/** The key of a route in capacity maps (`provider\u0000model`). */
export function routeKeyOf(provider: string, model: string): string {
  return `${provider}\u0000${model}`
}

/**
 * True when `item` shows a restore that appended no `session/end-seed` (§11.4): an `interrupted` `turn/end`
 * outside a repair run (crash repair is its only writer, and a repair run ends at an end-seed), or the first
 * event after a crash the manifest records that is neither a repair closer nor an end-seed.
 */
export function resumesWithoutEndSeed(item: FoldItem, m: CheckerModel): boolean {
  const e = item.event
  if (e === null || item.duplicate || item.repair || e.type === 'session/end-seed') return false
  if (e.type === 'turn/end' && (e as SessionEvent<'turn/end'>).data.reason.kind === 'interrupted') return true
  const prev = m.prevItem
  return prev !== null && m.inputs.crashes.has(prev.seq)
}
