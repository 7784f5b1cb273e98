/**
 * The incremental fold of a session log: surface (§1.5), offload marks (§6.4), the header in force and
 * series epochs (§10.2, §10.3), the latest route metadata (§1.4.11), turn/step state, the compaction
 * lock (§11.1) and the last end-seed (§11.3). Each event costs O(1) apart from span replacements
 * (O(surface)) and the event's own size; nothing here is O(log length) per event.
 */
import type { Seq } from '../brand.ts'
import { LogError } from '../errors.ts'
import { countImages } from '../offload/projection.ts'
import type { TextOffloadMarks } from '../offload/text.ts'
import { canonicalHeader } from '../request/header.ts'
import { Surface, pairingDelta, type EventLookup } from '../surface/surface.ts'
import type { Dialect, EpochHeader, EventDataMap, HeaderReason, LogEvent, ReplaceOp, SessionEvent, SurfaceEvent, TextOffloadData } from './events.ts'
import type { ContentBlock } from './llm.ts'

/** The header in force and where it was written. */
export interface HeaderInForce {
  seq: Seq
  header: EpochHeader
  reason: HeaderReason
  startsSeries: boolean
  /** Series epoch at the header's position (§10.3 `Eh`). */
  epochAtHeader: number
}

/** An unmatched `compaction/start` (§0.3 "orphan"). */
export interface OpenBracket {
  startSeq: Seq
  compactionId: string
  sourceCommandId?: string
  turn: number | null
}

/** Options of the fold that the log alone cannot supply. */
export interface SessionStateOptions {
  dialect: Dialect
  /** Seqs of `request/header` events written for an explicit new-series request (§1.1 manifest, Q-13). */
  explicitSeriesHeaders?: ReadonlySet<number>
}

/** The fold state. Feed events with `check` then `apply`, in seq order. */
export class SessionState {
  readonly dialect: Dialect
  readonly surface = new Surface()
  private readonly lookup: EventLookup
  private readonly explicitSeriesHeaders: ReadonlySet<number>
  private readonly offloadMarks = new Map<number, Set<number>>()
  private offloads = 0
  private readonly textMarks = new Map<number, Map<number, TextOffloadData>>()
  private explicitSeries = 0
  private length = 0
  private headerNow: HeaderInForce | null = null
  private contextNow: { seq: Seq; data: EventDataMap['request/context'] } | null = null
  private turn: number | null = null
  private turnStart: Seq | null = null
  private step: { turn: number; step: number } | null = null
  private lastTurnNumber = 0
  /** The most recent compaction/start or compaction/end (§11.1 scan target). */
  private lastBracketEvent: SessionEvent<'compaction/start'> | SessionEvent<'compaction/end'> | null = null
  private endSeed: Seq | null = null
  private readonly staleBrackets: OpenBracket[] = []

  constructor(options: SessionStateOptions, lookup: EventLookup) {
    this.dialect = options.dialect
    this.explicitSeriesHeaders = options.explicitSeriesHeaders ?? new Set()
    this.lookup = lookup
  }

  /** Number of events folded. */
  get eventCount(): number { return this.length }
  /** Count of `image/offload` events. */
  get offloadCount(): number { return this.offloads }
  /** Series epoch now: replaceGeneration + offloads + explicit series requests (§0.3, §10.3). */
  get seriesEpoch(): number { return this.surface.replaceGeneration + this.offloads + this.explicitSeries }
  /** The header in force (§10.2), or null before the first snapshot. */
  get header(): HeaderInForce | null { return this.headerNow }
  /** The latest `request/context` record, or null. */
  get routeContext(): { seq: Seq; data: EventDataMap['request/context'] } | null { return this.contextNow }
  /** The open turn number, or null between turns. */
  get openTurn(): number | null { return this.turn }
  /** Seq of the open turn's `turn/start`, or null between turns. */
  get openTurnStartSeq(): Seq | null { return this.turnStart }
  /** The open step, or null. */
  get openStep(): { turn: number; step: number } | null { return this.step }
  /** Seq of the last `session/end-seed`, or null. */
  get lastEndSeed(): Seq | null { return this.endSeed }
  /** Offloaded image indexes of a node (§6.4); empty when none. */
  offloadedIndexes(seq: number): ReadonlySet<number> { return this.offloadMarks.get(seq) ?? EMPTY }
  /** Projected user text blocks of a node (hardened `text/offload`, HARD-5): block index → mark; empty when none. */
  textOffloads(seq: number): TextOffloadMarks { return this.textMarks.get(seq) ?? EMPTY_MARKS }

  /** The lock state of §11.1: the latest unmatched start and whether it is live. */
  get lock(): { state: 'free' } | { state: 'live' | 'stale'; bracket: OpenBracket } {
    const u = this.lastBracketEvent
    if (u === null || u.type !== 'compaction/start') return { state: 'free' }
    const bracket = bracketOf(u)
    return { state: this.endSeed !== null && this.endSeed > u.seq ? 'stale' : 'live', bracket }
  }

  /** Every unmatched start: stale orphans of earlier lifecycles, then the current one when open. */
  get openBrackets(): Array<OpenBracket & { live: boolean }> {
    const out = this.staleBrackets.map((b) => ({ ...b, live: false }))
    const lock = this.lock
    if (lock.state === 'live') out.push({ ...lock.bracket, live: true })
    return out
  }

  /**
   * Validates `event` as the next event against the §1 rules that need the log so far: contiguous seq
   * (INV-01), replace spans and coverage (§1.5.1, INV-05/06), offload targets (§6.4). Returns the error
   * instead of throwing so callers can add location facts. `pendingLogOnly` counts log-only events that
   * are validated but not yet applied ahead of this one (a metering event before its replacement).
   */
  check(event: LogEvent, pendingLogOnly = 0): LogError | undefined {
    const at = { seq: event.seq }
    if (event.seq !== this.length + pendingLogOnly) return new LogError('SEQ', `expected seq ${this.length}, found ${event.seq}`, { ...at, field: 'seq' })
    if ('surfaceOp' in event && typeof event.surfaceOp === 'object') {
      const result = this.surface.checkReplace(event as SurfaceEvent & { surfaceOp: ReplaceOp }, this.lookup)
      if ('reason' in result) return new LogError('REPLACE', result.reason, { ...at, field: result.field })
      // §1.3: a tool-result replacement is turn work (a prune outside a turn is refused, D-15).
      if (event.type === 'tool/result' && this.turn === null) return new LogError('REPLACE', 'a tool/result replacement needs an open turn', { ...at, field: 'surfaceOp' })
    }
    if (event.type === 'image/offload') return this.checkOffload(event as SessionEvent<'image/offload'>)
    if (event.type === 'text/offload') return this.checkTextOffload(event as SessionEvent<'text/offload'>)
    return undefined
  }

  /** A `text/offload` names a current `user/message` node's text block that is not yet projected (HARD-5). */
  private checkTextOffload(event: SessionEvent<'text/offload'>): LogError | undefined {
    const { seq, blockIndex } = event.data
    const fail = (reason: string, field: string): LogError => new LogError('OFFLOAD', reason, { seq: event.seq, field })
    if (this.surface.position(seq) < 0) return fail(`node ${seq} is not a current surface node`, 'data.seq')
    const node = this.lookup(seq)
    if (node === undefined || node.type !== 'user/message') return fail(`node ${seq} is ${node?.type ?? 'missing'}; only user/message text can be offloaded`, 'data.seq')
    const block = messageContent(node)[blockIndex]
    if (block === undefined || block.type !== 'text') return fail(`block ${blockIndex} of node ${seq} is ${block === undefined ? 'out of range' : `a ${block.type} block`}, not text`, 'data.blockIndex')
    if (this.textOffloads(seq).has(blockIndex)) return fail(`text block ${blockIndex} of node ${seq} is already offloaded`, 'data.blockIndex')
    return undefined
  }

  private checkOffload(event: SessionEvent<'image/offload'>): LogError | undefined {
    const seen = new Set<number>()
    let total = 0
    for (const [k, target] of event.data.targets.entries()) {
      const field = `data.targets[${k}]`
      const fail = (reason: string, f = field): LogError => new LogError('OFFLOAD', reason, { seq: event.seq, field: f })
      if (seen.has(target.seq)) return fail(`node ${target.seq} is targeted twice`)
      seen.add(target.seq)
      if (this.surface.position(target.seq) < 0) return fail(`node ${target.seq} is not a current surface node`)
      const node = this.lookup(target.seq)
      if (node === undefined || (node.type !== 'user/message' && node.type !== 'tool/result')) {
        return fail(`node ${target.seq} is ${node?.type ?? 'missing'}; only user/message and tool/result images can be offloaded`)
      }
      const images = countImages(messageContent(node))
      const already = this.offloadedIndexes(target.seq)
      let prev = -1
      for (const idx of target.imageIndexes) {
        if (idx <= prev) return fail(`imageIndexes must be strictly increasing`, `${field}.imageIndexes`)
        prev = idx
        if (idx >= images) return fail(`image index ${idx} is out of range: node ${target.seq} has ${images} ${images === 1 ? 'image' : 'images'}`, `${field}.imageIndexes`)
        if (already.has(idx)) return fail(`image ${idx} of node ${target.seq} is already offloaded`, `${field}.imageIndexes`)
      }
      total += target.imageIndexes.length
    }
    if (total === 0) return new LogError('OFFLOAD', 'an image/offload must name at least one image', { seq: event.seq, field: 'data.targets' })
    return undefined
  }

  /** Folds a validated event into the state. The event must already be in the lookup. */
  apply(event: LogEvent): void {
    this.length++
    if ('surfaceOp' in event && event.surfaceOp !== undefined) {
      const delta = pairingDelta(event)
      if (event.surfaceOp === 'append') this.surface.append(event.seq, delta)
      else this.surface.replace(event.seq, event.surfaceOp, delta, (s) => pairingDeltaOf(this.lookup, s))
      return
    }
    const e = event as SessionEvent
    switch (e.type) {
      case 'turn/start':
        this.turn = e.data.turn
        this.turnStart = e.seq
        this.lastTurnNumber = e.data.turn
        this.step = null
        return
      case 'turn/end':
        this.turn = null
        this.turnStart = null
        this.step = null
        return
      case 'step/start':
        this.step = { turn: e.data.turn, step: e.data.step }
        return
      case 'step/end':
        this.step = null
        return
      case 'request/header': {
        if (this.explicitSeriesHeaders.has(e.seq)) this.explicitSeries++
        this.headerNow = {
          seq: e.seq,
          header: canonicalHeader(e.data.header, this.dialect),
          reason: e.data.reason,
          startsSeries: e.data.startsSeries === true,
          epochAtHeader: this.seriesEpoch,
        }
        return
      }
      case 'request/context':
        this.contextNow = { seq: e.seq, data: e.data }
        return
      case 'session/end-seed': {
        const lock = this.lock
        if (lock.state === 'live') this.staleBrackets.push(lock.bracket)
        this.endSeed = e.seq
        return
      }
      case 'compaction/start':
      case 'compaction/end':
        this.lastBracketEvent = e
        return
      case 'image/offload':
        this.offloads++
        for (const t of e.data.targets) {
          let set = this.offloadMarks.get(t.seq)
          if (set === undefined) this.offloadMarks.set(t.seq, set = new Set())
          for (const i of t.imageIndexes) set.add(i)
        }
        return
      case 'text/offload': {
        let marks = this.textMarks.get(e.data.seq)
        if (marks === undefined) this.textMarks.set(e.data.seq, marks = new Map())
        marks.set(e.data.blockIndex, e.data)
        return
      }
      case 'assistant/chunk': case 'tool/call': case 'llm/retry': case 'llm/retry-started':
      case 'compaction/summary': case 'compaction/summary-error': case 'compaction/prune':
      case 'system/message': case 'user/message': case 'assistant/message': case 'tool/result':
        return
      default:
        return // foreign log-only records never change the fold (§1.4.20)
    }
  }

  /** The highest turn number started so far (0 before the first turn). */
  get lastTurn(): number { return this.lastTurnNumber }
}

const EMPTY: ReadonlySet<number> = new Set()
const EMPTY_MARKS: TextOffloadMarks = new Map()

function bracketOf(e: SessionEvent<'compaction/start'>): OpenBracket {
  const b: OpenBracket = { startSeq: e.seq, compactionId: e.data.compactionId, turn: e.data.turn }
  if (e.data.sourceCommandId !== undefined) b.sourceCommandId = e.data.sourceCommandId
  return b
}

function pairingDeltaOf(lookup: EventLookup, seq: number): number {
  const e = lookup(seq)
  return e === undefined ? 0 : pairingDelta(e)
}

/** The message content of a surface event. */
export function messageContent(event: LogEvent): ContentBlock[] {
  switch (event.type) {
    case 'assistant/message':
    case 'tool/result':
      return (event.data as { message: { content: ContentBlock[] } }).message.content
    case 'system/message':
    case 'user/message':
      return (event.data as { content: ContentBlock[] }).content
    default:
      return []
  }
}
