/**
 * Range selection (§4.2) and explicit-region validation (§3.8, §7.2 step 2–4). Both return a positional
 * span over the current surface: membership is the positions `startPosition … endPosition`, so after an
 * earlier replacement `start` can have a higher seq than `end` (§4.3); `shadowedSeqs` is authoritative.
 */
import type { Seq } from '../brand.ts'
import { InvariantError } from '../errors.ts'
import type { EventLog } from '../log/event-log.ts'
import type { Measurement, PricedNode } from '../meter/measurement.ts'
import type { Surface } from '../surface/surface.ts'
import { ToolPairingError, toolPairingBalancedAfter, toolPairingBalancedBefore } from '../surface/tool-pairing.ts'

/** An inclusive positional span of the current surface (§4.3); frozen. */
export interface CompactableRange {
  /** Seq of the node at `startPosition`. */
  readonly start: Seq
  /** Seq of the node at `endPosition`. */
  readonly end: Seq
  /** The nodes of the span in position order (`surface.nodes[startPosition … endPosition]`). */
  readonly shadowedSeqs: readonly Seq[]
  readonly startPosition: number
  readonly endPosition: number
  /**
   * HARD-2 only: the last node of the span before `summaryFit` shrank it (absent when it did not). The nodes after
   * `end` up to it were left on the surface for a later round.
   */
  readonly deferredTo?: Seq
}

/** Closed set of selection failures; `null` (never an error) covers every "nothing to compact" case of §4.2. */
export type RangeSelectionErrorCode =
  | 'METER_SURFACE_MISMATCH' // measurement.nodes do not name the current surface nodes in order (§4.2)

/** Thrown when selection is asked to work on a measurement of a different surface (§4.2 `require`). */
export class RangeSelectionError extends Error {
  override readonly name = 'RangeSelectionError'
  readonly code: RangeSelectionErrorCode
  constructor(code: RangeSelectionErrorCode, message: string) {
    super(message)
    this.code = code
  }
}

/**
 * The §4.2 head position `h`: 1 when the node at position 0 is a `system/message` (the system head,
 * never compacted, D-04, INV-26) in the seed dialect; always 0 in `dsh-0.1.0-rc.8` (§14.1).
 */
export function systemHeadCount(log: EventLog): 0 | 1 {
  if (log.dialect !== 'seed') return 0
  const first = log.nodes[0]
  return first !== undefined && log.event(first)?.type === 'system/message' ? 1 : 0
}

/**
 * §4.2 `selectCompactableRange`: the head-anchored span that leaves a retained tail priced ≥ `retainTokens`
 * (by the measurement's `P_route` node prices), rounded head-ward to a balanced cut. Returns `null` for an
 * empty surface, a system head alone, history wholly inside the budget, or only an open/indivisible unit.
 * Throws `RangeSelectionError` when the measurement's nodes are not the log's surface, and
 * `ToolPairingError` when the surface's pairing balance goes negative (§4.1).
 */
export function selectCompactableRange(
  log: EventLog, measurement: Measurement, retainTokens: number, options: SelectionOptions = {},
): CompactableRange | null {
  if (!Number.isSafeInteger(retainTokens) || retainTokens < 0) {
    throw new InvariantError(`retainTokens must be a non-negative integer, got ${retainTokens}`)
  }
  const priced = measurement.nodes
  if (priced.length === 0) return null
  const surface = log.state.surface
  const nodes = surface.nodes
  assertSameNodes(priced, nodes, measurement.logRevision)
  assertSound(surface)
  const n = priced.length
  const h = systemHeadCount(log)

  // 1. Reserve the recent tail by token budget.
  let acc = 0
  let keep = n
  for (let i = n - 1; i >= h; i--) {
    acc += (priced[i] as { tokens: number }).tokens
    keep = i
    if (acc >= retainTokens) break
  }
  if (keep === h) return null // nothing older than the tail

  // 2. Round the cut towards the head until it is balanced.
  while (keep > h && !toolPairingBalancedBefore(surface, nodes[keep] as Seq)) keep--
  if (keep === h) return null // only an open/indivisible unit remains

  // HARD-6 (hardened `openTurnPrompt`): the open turn's own user prompt is never summarized. When it falls
  // inside the span, the span becomes the older side (history before the prompt) or the newer side (the
  // open turn's work after it, up to the faithful cut), whichever carries more tokens; ties take the older.
  if (options.keepOpenTurnPrompt === true) {
    const p = openTurnPromptPosition(log)
    if (p >= h && p < keep) {
      const beforeOk = p > h && toolPairingBalancedBefore(surface, nodes[p] as Seq)
      const before = beforeOk ? sumTokens(priced, h, p - 1) : -1
      const afterOk = p + 1 < keep && toolPairingBalancedBefore(surface, nodes[p + 1] as Seq)
      const after = afterOk ? sumTokens(priced, p + 1, keep - 1) : -1
      if (before < 0 && after < 0) return null
      return after > before ? fitted(surface, priced, p + 1, keep - 1, options) : fitted(surface, priced, h, p - 1, options)
    }
  }

  return fitted(surface, priced, h, keep - 1, options)
}

/**
 * HARD-2 (`summaryFit`): the span `from … to`, shrunk from its newer end — its last nodes move back into the
 * retained tail — to the longest prefix that ends on a balanced cut and fits: `Σ P_route + min(capTokens,
 * Σ fixedTokens) ≤ tokensMax`; null when no prefix does. The start never moves (head-anchored, INV-27).
 * Without the option the span as given.
 */
function fitted(surface: Surface, priced: readonly PricedNode[], from: number, to: number, options: SelectionOptions): CompactableRange | null {
  const fit = options.summaryFit
  if (fit === undefined) return spanOf(surface.nodes, from, to)
  let route = 0
  let fixed = 0
  for (let k = from; k <= to; k++) {
    route += (priced[k] as PricedNode).tokens
    fixed += fit.fixedTokens(surface.nodes[k] as Seq)
  }
  let end = to
  while (end >= from && (route + Math.min(fit.capTokens, fixed) > fit.tokensMax || !toolPairingBalancedAfter(surface, surface.nodes[end] as Seq))) {
    route -= (priced[end] as PricedNode).tokens
    fixed -= fit.fixedTokens(surface.nodes[end] as Seq)
    end--
  }
  if (end < from) return null
  const span = spanOf(surface.nodes, from, end)
  return end === to ? span : Object.freeze({ ...span, deferredTo: surface.nodes[to] as Seq })
}

/**
 * HARD-2's bound of a span (`hardening.summaryRoom`, `compaction/summary-room.ts`): the span's node prices plus
 * the room its summary needs, `min(capTokens, Σ fixedTokens)`, must not exceed `tokensMax` (the summary route's
 * window less the prompt outside the region).
 */
export interface SummaryFit {
  readonly tokensMax: number
  /** The cap the summary route accepts: `min(policy.maxTokens, maxOutputTokens)`. */
  readonly capTokens: number
  /** `P_fixed` of a node (the §7.5 price a useful summary must stay below). */
  readonly fixedTokens: (seq: Seq) => number
}

/** Options of `selectCompactableRange` beyond the protocol; every one is off by default (faithful §4.2). */
export interface SelectionOptions {
  /**
   * HARD-6 (`hardening.openTurnPrompt`): never put the open turn's own user prompt into the span; the span is
   * then the side of the prompt (older history, or the open turn's work after it) that carries more tokens.
   */
  readonly keepOpenTurnPrompt?: boolean
  /**
   * HARD-2 (`hardening.summaryRoom`): the bound that makes the span's summary request fit its route; a larger span
   * is shrunk from its newer end to a balanced cut (null when none fits).
   */
  readonly summaryFit?: SummaryFit
}

/**
 * Surface position of the open turn's user prompt: the first appended `user/message` after the open turn's
 * `turn/start` that is still a surface node; -1 between turns or when the prompt is no longer on the surface.
 */
export function openTurnPromptPosition(log: EventLog): number {
  const from = log.state.openTurnStartSeq
  if (from === null) return -1
  for (let seq = from + 1; seq < log.length; seq++) {
    const event = log.event(seq)
    if (event?.type === 'user/message' && 'surfaceOp' in event && event.surfaceOp === 'append') {
      return log.state.surface.position(seq)
    }
  }
  return -1
}

/** Closed set of explicit-region rejections (§3.8), reported in the order of §7.2 steps 2–4. */
export type RegionErrorCode =
  | 'not-a-node' // start or end is not a current surface node
  | 'reversed' // start is positioned after end
  | 'unbalanced-before' // the cut before start has an unanswered call crossing it
  | 'unbalanced-after' // the cut after end has an unanswered call crossing it
  | 'contains-system-head' // the span includes the system head [seed-only] (D-14, INV-26)
  | 'busy' // a live compaction lock exists (§11.1, §11.2)
  | 'no-open-turn' // compactRegion's owner is the open turn and there is none (§11.6)

/** An explicit `compactRegion` span refused before any event is written (§3.8, §7.2). */
export class RegionError extends Error {
  override readonly name = 'RegionError'
  readonly code: RegionErrorCode
  constructor(code: RegionErrorCode, message: string) {
    super(message)
    this.code = code
  }
}

/**
 * Validates an explicit `compactRegion(start, end)` span against the current log (§3.8) in §7.2 order:
 * span checks (both nodes current, not reversed, balanced before and after, no system head), then the
 * lock, then an open turn. `start`/`end` are seqs; the span is positional, so `start > end` numerically is
 * valid when `start` sits earlier on the surface. Throws `RegionError`; `ToolPairingError` on a corrupt surface.
 */
export function validateExplicitRegion(log: EventLog, start: number, end: number): CompactableRange {
  const surface = log.state.surface
  const i = surface.position(start)
  const j = surface.position(end)
  const shadowedNote = (seq: number): string => (surface.isShadowed(seq) ? ' (it was shadowed)' : '')
  if (i < 0) throw new RegionError('not-a-node', `start seq ${start} not found in surface${shadowedNote(start)}`)
  if (j < 0) throw new RegionError('not-a-node', `end seq ${end} not found in surface${shadowedNote(end)}`)
  if (i > j) throw new RegionError('reversed', `start seq ${start} at position ${i} is after end seq ${end} at position ${j}`)
  if (!toolPairingBalancedBefore(surface, start)) {
    throw new RegionError('unbalanced-before', `the cut before start seq ${start} (position ${i}) is not a balanced boundary`)
  }
  if (!toolPairingBalancedAfter(surface, end)) {
    throw new RegionError('unbalanced-after', `the cut after end seq ${end} (position ${j}) is not a balanced boundary`)
  }
  if (i < systemHeadCount(log)) {
    throw new RegionError('contains-system-head', `the span ${start}…${end} includes the system head at position 0`)
  }
  const lock = log.state.lock
  if (lock.state === 'live') {
    throw new RegionError('busy', `compaction ${lock.bracket.compactionId} (started at seq ${lock.bracket.startSeq}) is still open`)
  }
  if (log.state.openTurn === null) throw new RegionError('no-open-turn', 'no open turn: compactRegion runs inside a turn')
  return spanOf(surface.nodes, i, j)
}

function sumTokens(priced: readonly PricedNode[], from: number, to: number): number {
  let sum = 0
  for (let k = from; k <= to; k++) sum += (priced[k] as PricedNode).tokens
  return sum
}

function spanOf(nodes: readonly Seq[], startPosition: number, endPosition: number): CompactableRange {
  const shadowedSeqs = Object.freeze(nodes.slice(startPosition, endPosition + 1))
  const start = shadowedSeqs[0]
  const end = shadowedSeqs[shadowedSeqs.length - 1]
  if (start === undefined || end === undefined) throw new InvariantError(`empty span ${startPosition}…${endPosition}`)
  return Object.freeze({ start, end, shadowedSeqs, startPosition, endPosition })
}

/** The priced nodes name the surface nodes in order (compared in place: no list of the priced seqs is built). */
function assertSameNodes(priced: readonly PricedNode[], nodes: readonly Seq[], logRevision: number): void {
  const length = Math.max(priced.length, nodes.length)
  for (let k = 0; k < length; k++) {
    if (priced[k]?.seq !== nodes[k]) {
      throw new RangeSelectionError(
        'METER_SURFACE_MISMATCH',
        `meter/surface mismatch at position ${k}: the measurement (log revision ${logRevision}) has node ${priced[k]?.seq ?? 'none'}, ` +
          `the surface has ${nodes[k] ?? 'none'}`,
      )
    }
  }
}

/** §4.1: a negative prefix balance is a corrupt surface, and every selection over it must fail loudly. */
function assertSound(surface: Surface): void {
  const at = surface.firstNegativePosition
  if (at >= 0) {
    const where = `after node ${surface.nodes[at]} at position ${at}`
    throw new ToolPairingError('NEGATIVE_BALANCE', `tool pairing goes negative ${where} (a tool result without an open call)`)
  }
}
