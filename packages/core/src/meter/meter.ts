/**
 * The token meter of §2: replays a session log into a priced surface and a request-pressure figure.
 * Incremental: it folds only the events appended since its last call (O(new events)); node prices are
 * kept per position and changed only by replacements, offloads and image-price (route) changes.
 * `measure()` is O(1) after catching up; a measurement's `nodes` are materialised on first access.
 */
import { InvariantError } from '../errors.ts'
import { assembleAttempt, AssemblyError } from '../log/assembly.ts'
import type { Dialect, EpochHeader, LogEvent, SessionEvent } from '../log/events.ts'
import type { LlmFailure, StreamChunk, TokenUsage } from '../log/llm.ts'
import { messageContent, SessionState } from '../log/session-state.ts'
import { countImages, harnessReadOnlyPath, type ReadOnlyPathResolver } from '../offload/projection.ts'
import { canonicalHeader, headersEqual } from '../request/header.ts'
import { deriveEventMessage, projectNodeMessage } from '../surface/derive.ts'
import { CapacityEvidenceFold, capacityRouteKey, overflowPromptTokens, usagePromptTokens, type RouteCapacityEvidence } from './calibration.ts'
import { ChunkedList, type ListSnapshot } from './chunked-list.ts'
import type { Baseline, Measurement, PricedNode } from './measurement.ts'
import { blockPrice, ROLE_OVERHEAD, routePrice, textTokens, BLOCK_OVERHEAD, toolsPrice } from './price.ts'

/** Why a replay cannot be metered (§2.5 "Replay errors"); the meter keeps throwing it for the same log. */
export type MeterReplayErrorCode = 'STEP_OPEN' | 'STEP_MISMATCH' | 'OUTSIDE_STEP' | 'CITED_CHUNKS' | 'REPLACE' | 'ASSEMBLY'

/** A log the meter cannot replay (§2.5). */
export class MeterReplayError extends Error {
  override readonly name = 'MeterReplayError'
  readonly code: MeterReplayErrorCode
  readonly seq: number
  constructor(code: MeterReplayErrorCode, seq: number, message: string, options?: ErrorOptions) {
    super(`seq ${seq}: ${message}`, options)
    this.code = code
    this.seq = seq
  }
}

/** Options of a `TokenMeter`. */
export interface TokenMeterOptions {
  dialect: Dialect
  /** Read-only attachment paths used in offload placeholders (§6.5); the harness rule by default. */
  readOnlyPath?: ReadOnlyPathResolver
}

/** A §2.5 anchor: the header it was measured under, the surface tokens it covers, its baseline. */
export interface MeterAnchor {
  readonly header: EpochHeader | undefined
  readonly surfaceTokens: number
  readonly baseline: Baseline
}

/**
 * The §2.5 anchor set by an appended `assistant/message`. `surfaceTokens` is what the message's request covered
 * (the step-start surface plus the provider-side or logged assistant price); the baseline is the provider usage
 * when there is usage and a header and it is at least the estimate `envelopeTokens + surfaceTokens`, else that
 * estimate. Pure: shared by core's `TokenMeter` and the checker's non-throwing reference meter.
 */
export function anchorOf(
  header: EpochHeader | undefined, usage: TokenUsage | undefined, envelopeTokens: number, surfaceTokens: number,
): MeterAnchor {
  const estimated = envelopeTokens + surfaceTokens
  if (usage !== undefined && header !== undefined) {
    const providerTokens = usage.inputTokens + (usage.cacheReadTokens ?? 0) + (usage.cacheWriteTokens ?? 0) + usage.outputTokens
    if (providerTokens >= estimated) return { header, surfaceTokens, baseline: { kind: 'usage', tokens: providerTokens, usage } }
  }
  return { header, surfaceTokens, baseline: { kind: 'estimated', tokens: estimated } }
}

/**
 * §2.5 `measure` against an anchor: the anchor's baseline plus the surface change since it when its header
 * equals `h`; else `none` for an empty prefix without a header; else the estimate `envelope(h) + surfaceTotal`.
 * `envelope` is only called when it is needed. Pure.
 */
export function measureAgainst(
  anchor: MeterAnchor | undefined, h: EpochHeader | undefined, surfaceTotal: number, envelope: (h: EpochHeader | undefined) => number,
): { baseline: Baseline; delta: number } {
  if (anchor !== undefined && sameHeader(anchor.header, h)) return { baseline: anchor.baseline, delta: surfaceTotal - anchor.surfaceTokens }
  if (h === undefined && surfaceTotal === 0) return { baseline: { kind: 'none', tokens: 0 }, delta: 0 }
  return { baseline: { kind: 'estimated', tokens: envelope(h) + surfaceTotal }, delta: 0 }
}

/** `envelopePrice(h)` (§2.2; rc.8 adds the header-carried system prompt, §14.1 "Metering"). */
export function envelopePrice(h: EpochHeader | undefined, dialect: Dialect): number {
  if (h === undefined) return 0
  const system = dialect === 'dsh-0.1.0-rc.8' && h.system !== undefined && h.system !== '' ? textTokens(h.system) + BLOCK_OVERHEAD : 0
  return system + toolsPrice(h.tools)
}

/** An incremental token meter over a growing event list (an `EventLog`'s `events`, or any array). */
export class TokenMeter {
  readonly dialect: Dialect
  private readonly source: { readonly events: readonly LogEvent[] }
  private readonly readOnlyPath: ReadOnlyPathResolver
  private readonly state: SessionState
  private processed = 0
  /** Priced nodes in position order; snapshots share chunks copy-on-write. */
  private readonly prices = new ChunkedList<PricedNode>()
  private surfaceTotal = 0
  /** Nodes whose original message holds images: re-priced when the image price changes. */
  private readonly imageNodes = new Set<number>()
  private imagePriceNow: number | undefined
  private stepSurface = 0
  private anchor: MeterAnchor | undefined
  private step: { turn: number; step: number } | null = null
  private failure: MeterReplayError | undefined
  /** HARD-8 capacity evidence (`calibration.ts`); folded always, read only by the hardened engine. */
  private readonly capacity = new CapacityEvidenceFold()

  constructor(source: { readonly events: readonly LogEvent[] }, options: TokenMeterOptions) {
    this.source = source
    this.dialect = options.dialect
    this.readOnlyPath = options.readOnlyPath ?? harnessReadOnlyPath
    this.state = new SessionState({ dialect: options.dialect }, (seq) => this.source.events[seq])
  }

  /** The route image price in force (§2.3), after catching up. */
  get imagePrice(): number | undefined {
    this.catchUp()
    return this.imagePriceNow
  }

  /** HARD-8: what the log says about a route's capacity and pricing (`calibration.ts`), after catching up. */
  capacityEvidence(provider: string, model: string): RouteCapacityEvidence {
    this.catchUp()
    return this.capacity.evidence(provider, model)
  }

  /**
   * Measures the log as it stands (§2.5 `measure`). `headerOverride` prices a proposed header instead
   * of the folded one (an anchor survives only if it equals the anchor's header). Throws
   * `MeterReplayError` for a log it cannot replay, and keeps throwing it.
   */
  measure(headerOverride?: EpochHeader): Measurement {
    this.catchUp()
    const h = headerOverride !== undefined ? canonicalHeader(headerOverride, this.dialect) : this.state.header?.header
    const { baseline, delta } = measureAgainst(this.anchor, h, this.surfaceTotal, (x) => envelopePrice(x, this.dialect))
    return new MeasurementSnapshot(this.processed, baseline, delta, this.surfaceTotal, this.prices.snapshot())
  }

  /** Folds every event appended since the last call. */
  private catchUp(): void {
    if (this.failure !== undefined) throw this.failure
    const events = this.source.events
    while (this.processed < events.length) {
      const e = events[this.processed] as LogEvent
      try {
        this.fold(e)
      } catch (err) {
        this.failure = err instanceof MeterReplayError ? err : new MeterReplayError('REPLACE', e.seq, String(err), { cause: err })
        throw this.failure
      }
      this.processed++
    }
  }

  private fold(e: LogEvent): void {
    const surfaceOp = 'surfaceOp' in e ? e.surfaceOp : undefined
    if (surfaceOp !== undefined && surfaceOp !== 'append') {
      const i = this.state.surface.position(surfaceOp.start)
      const j = this.state.surface.position(surfaceOp.end)
      if (i < 0 || j < i) throw new MeterReplayError('REPLACE', e.seq, `replacement range ${surfaceOp.start}…${surfaceOp.end} is not on the surface`)
      this.state.apply(e)
      const tokens = this.nodePrice(e.seq)
      const replacement = Object.freeze({ seq: e.seq, tokens })
      if (i === j) {
        this.surfaceTotal -= (this.prices.at(i) as PricedNode).tokens
        this.prices.set(i, replacement)
      } else this.prices.spliceVisiting(i, j - i + 1, [replacement], (r) => { this.surfaceTotal -= r.tokens })
      this.surfaceTotal += tokens
      this.noteImages(e)
      return
    }
    if (surfaceOp === 'append') {
      if (e.type === 'assistant/message') {
        this.checkInStep(e as SessionEvent<'assistant/message'>)
        this.observeUsage(e as SessionEvent<'assistant/message'>)
      }
      this.state.apply(e)
      const tokens = this.nodePrice(e.seq)
      this.prices.push(Object.freeze({ seq: e.seq, tokens }))
      this.surfaceTotal += tokens
      this.noteImages(e)
      if (e.type === 'assistant/message') this.anchorOn(e as SessionEvent<'assistant/message'>, tokens)
      return
    }
    this.state.apply(e)
    const ev = e as SessionEvent
    switch (ev.type) {
      case 'step/start':
        if (this.step !== null) throw new MeterReplayError('STEP_OPEN', e.seq, `step/start while step ${this.step.turn}.${this.step.step} is open`)
        this.step = { turn: ev.data.turn, step: ev.data.step }
        this.stepSurface = this.surfaceTotal
        return
      case 'step/end':
        if (this.step === null || this.step.turn !== ev.data.turn || this.step.step !== ev.data.step) {
          throw new MeterReplayError('STEP_MISMATCH', e.seq, `step/end ${ev.data.turn}.${ev.data.step} does not match the open step`)
        }
        this.step = null
        return
      case 'image/offload':
        for (const t of ev.data.targets) this.reprice(t.seq)
        return
      case 'text/offload':
        this.reprice(ev.data.seq)
        return
      case 'request/context':
        if (ev.data.capacityWarning !== undefined) this.capacity.warned(capacityRouteKey(ev.data.provider, ev.data.model))
        this.refreshImagePrice()
        return
      case 'request/header':
        this.refreshImagePrice()
        return
      case 'assistant/chunk':
        if (ev.data.chunk.type === 'finish' && ev.data.chunk.reason.kind === 'error') this.observeRejection(e.seq, ev.data.chunk.reason.failure)
        return
      default:
        return
    }
  }

  /**
   * HARD-8 evidence of an `assistant/message` about to be appended (the surface is still the request's): its usage
   * against the estimate `envelopePrice(H) + surfaceTokens`, and against the route's reported window.
   */
  private observeUsage(e: SessionEvent<'assistant/message'>): void {
    const usage = e.data.usage
    const h = this.state.header?.header
    if (usage === undefined || h === undefined) return
    const key = capacityRouteKey(h.config.provider, h.config.model)
    const prompt = usagePromptTokens(usage)
    this.capacity.observe(key, e.seq, 'usage', prompt, envelopePrice(h, this.dialect) + this.surfaceTotal)
    const ctx = this.state.routeContext?.data
    const window = ctx !== undefined && ctx.provider === h.config.provider && ctx.model === h.config.model ? ctx.contextWindow : undefined
    this.capacity.usage(key, e.seq, prompt + usage.outputTokens, window)
  }

  /** HARD-8 evidence of a failed attempt: a window rejection that states the counted prompt (`overflowPromptTokens`). */
  private observeRejection(seq: number, failure: LlmFailure): void {
    const counted = overflowPromptTokens(failure)
    const h = this.state.header?.header
    if (counted === undefined || h === undefined) return
    this.capacity.observe(capacityRouteKey(h.config.provider, h.config.model), seq, 'rejection', counted, envelopePrice(h, this.dialect) + this.surfaceTotal)
  }

  private checkInStep(e: SessionEvent<'assistant/message'>): void {
    if (this.step === null || this.step.turn !== e.data.turn || this.step.step !== e.data.step) {
      throw new MeterReplayError('OUTSIDE_STEP', e.seq, `assistant/message of step ${e.data.turn}.${e.data.step} outside its open step`)
    }
  }

  /** §2.5: on each assistant/message, set the anchor. */
  private anchorOn(e: SessionEvent<'assistant/message'>, eventTokens: number): void {
    const H = this.state.header?.header
    const usage = e.data.usage
    const assistantTokens = usage !== undefined && H !== undefined ? this.providerAssistantTokens(e, eventTokens) : eventTokens
    this.anchor = anchorOf(H, usage, envelopePrice(H, this.dialect), this.stepSurface + assistantTokens)
  }

  private providerAssistantTokens(e: SessionEvent<'assistant/message'>, eventTokens: number): number {
    const cited = e.sourceEventSeqs
    if (cited === undefined) return eventTokens
    const chunks: StreamChunk[] = []
    const seen = new Set<number>()
    for (const s of cited) {
      const c = this.source.events[s]
      if (seen.has(s) || s >= e.seq || c?.type !== 'assistant/chunk') {
        throw new MeterReplayError('CITED_CHUNKS', e.seq, `cited seq ${s} is not an earlier, distinct assistant/chunk`)
      }
      seen.add(s)
      const data = (c as SessionEvent<'assistant/chunk'>).data
      if (data.turn !== e.data.turn || data.step !== e.data.step) {
        throw new MeterReplayError('CITED_CHUNKS', e.seq, `cited chunk ${s} belongs to step ${data.turn}.${data.step}, not ${e.data.turn}.${e.data.step}`)
      }
      chunks.push(data.chunk)
    }
    let blocks
    try {
      blocks = assembleAttempt(chunks).blocks
    } catch (err) {
      if (err instanceof AssemblyError) throw new MeterReplayError('ASSEMBLY', e.seq, err.message, { cause: err })
      throw err
    }
    if (blocks.length === 0) return 0
    let sum = ROLE_OVERHEAD
    for (const b of blocks) sum += blockPrice(b, this.imagePriceNow)
    return sum
  }

  /** `P_route` of a node's projected message (0 when it projects to null, §2.4). */
  private nodePrice(seq: number): number {
    const event = this.source.events[seq]
    if (event === undefined) throw new InvariantError(`surface node ${seq} is not in the log`)
    const m = deriveEventMessage(event)
    if (m === null) return 0
    return routePrice(projectNodeMessage(m, seq, this.state, this.readOnlyPath), this.imagePriceNow)
  }

  private noteImages(e: LogEvent): void {
    if (countImages(messageContent(e)) > 0) this.imageNodes.add(e.seq)
  }

  private reprice(seq: number): void {
    const p = this.state.surface.position(seq)
    if (p < 0) return
    const old = this.prices.at(p) as PricedNode
    const tokens = this.nodePrice(seq)
    if (tokens === old.tokens) return
    this.prices.set(p, Object.freeze({ seq: old.seq, tokens }))
    this.surfaceTotal += tokens - old.tokens
  }

  /** §2.3: the image price applies only while the latest request/context matches the folded route. */
  private refreshImagePrice(): void {
    const ctx = this.state.routeContext?.data
    const h = this.state.header?.header
    const next = this.dialect === 'seed' && ctx?.imageTokens !== undefined && h !== undefined &&
      ctx.provider === h.config.provider && ctx.model === h.config.model ? ctx.imageTokens : undefined
    if (next === this.imagePriceNow) return
    this.imagePriceNow = next
    for (const seq of this.imageNodes) this.reprice(seq)
  }

}

function sameHeader(a: EpochHeader | undefined, b: EpochHeader | undefined): boolean {
  if (a === undefined || b === undefined) return a === b
  return headersEqual(a, b)
}

/** A detached measurement; `nodes` is copied out of the shared price array on first access. */
class MeasurementSnapshot implements Measurement {
  readonly logRevision: number
  readonly baseline: Baseline
  readonly surfaceDeltaTokens: number
  readonly totalTokens: number
  readonly surfaceTokens: number
  readonly #source: ListSnapshot<PricedNode>
  #materialised: readonly PricedNode[] | undefined

  constructor(logRevision: number, baseline: Baseline, delta: number, surfaceTokens: number, source: ListSnapshot<PricedNode>) {
    this.logRevision = logRevision
    this.baseline = baseline
    this.surfaceDeltaTokens = delta
    this.totalTokens = Math.max(0, baseline.tokens + delta)
    this.surfaceTokens = surfaceTokens
    this.#source = source
    Object.freeze(baseline)
  }

  get nodes(): readonly PricedNode[] {
    this.#materialised ??= Object.freeze(this.#source.toArray())
    return this.#materialised
  }

  /** Plain JSON form (nodes included). */
  toJSON(): Omit<Measurement, never> {
    return { logRevision: this.logRevision, baseline: this.baseline, surfaceDeltaTokens: this.surfaceDeltaTokens, totalTokens: this.totalTokens, surfaceTokens: this.surfaceTokens, nodes: this.nodes }
  }
}
