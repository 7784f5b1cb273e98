/**
 * The checker's reference token meter (§2.3–§2.5), folded alongside the checker model. It reuses core's
 * pure pricing (`routePrice`, `fixedPrice`, `blockPrice`, `envelopePrice`, `assembleAttempt`, the offload
 * projection) and core's §2.5 anchor and measure rules (`anchorOf`, `measureAgainst`), but it is not core's
 * `TokenMeter`, for two reasons: that meter reads events by seq from the whole log (`source.events[seq]`,
 * cited chunks included), which would hold every event in memory, while this one sees only the live surface
 * and the open step's chunks (design §6); and it never throws: a prefix the §2.5 replay rules reject (a step
 * opened twice, a message outside its step, bad cited chunks) *taints* the anchor-based figure from that seq
 * on, so checks that need `totalTokens` report "not evaluated" instead of judging a wrong number. Node prices
 * (`P_route`, `P_fixed`) do not depend on anchors and stay exact. Memory: one price per live surface node.
 */
import {
  anchorOf, assembleAttempt, blockPrice, countImages, envelopePrice, fixedPrice, harnessReadOnlyPath, measureAgainst, projectNodeMessage,
  messageContent, ROLE_OVERHEAD, routePrice, deriveEventMessage,
  type Baseline, type ContentBlock, type Dialect, type EpochHeader, type EventDataMap, type LogEvent, type Message, type MeterAnchor,
  type ReadOnlyPathResolver, type TextOffloadMarks,
  type SessionEvent, type StreamChunk,
} from '@compaction-sim/core'

/** What the meter reads from the checker model: live node events and offload marks. */
export interface MeterSource {
  event(seq: number): LogEvent | undefined
  offloadedIndexes(seq: number): ReadonlySet<number>
  /** Projected user text blocks (hardened `text/offload`, HARD-5). */
  textOffloads?(seq: number): TextOffloadMarks
}

/** A measurement of the folded prefix (§2.5 `measure`), without the per-node list. */
export interface PressureReading {
  readonly totalTokens: number
  readonly surfaceTokens: number
  readonly baseline: Baseline
}

/** Where the anchor-based figure stopped being trustworthy (the first §2.5 replay error). */
export interface MeterTaint {
  readonly seq: number
  readonly reason: string
}

/** The §2 reference meter over the checker's live surface. Call the `on*` methods in seq order. */
export class ReferenceMeter {
  private readonly prices = new Map<number, number>()
  private readonly imageNodes = new Set<number>()
  private total = 0
  private imagePriceNow: number | undefined
  private stepSurface = 0
  private anchor: MeterAnchor | undefined
  private taintNow: MeterTaint | null = null
  /** `envelopePrice` of the last header priced (by identity: the model hands the same object until a new header). */
  private envelopeOf: { header: EpochHeader | undefined; tokens: number } = { header: undefined, tokens: 0 }

  constructor(
    private readonly dialect: Dialect,
    private readonly source: MeterSource,
    private readonly readOnlyPath: ReadOnlyPathResolver = harnessReadOnlyPath,
  ) {}

  /** `surfaceTokens` (§2.4): Σ `P_route` of the live nodes. */
  get surfaceTokens(): number { return this.total }
  /** The route image price in force (§2.3); always undefined in the rc.8 dialect. */
  get imagePrice(): number | undefined { return this.imagePriceNow }
  /** The first replay error, or null while the anchor-based figure is exact. */
  get taint(): MeterTaint | null { return this.taintNow }

  /** The projected message of a live node (§1.7, §6.5), or null. */
  projected(seq: number): Message | null {
    const event = this.source.event(seq)
    if (event === undefined) return null
    const m = deriveEventMessage(event)
    if (m === null) return null
    return projectNodeMessage(m, seq, this.source, this.readOnlyPath)
  }

  /** `P_route` of a live node as the meter holds it (0 for a node it does not know). */
  routePriceOf(seq: number): number { return this.prices.get(seq) ?? 0 }

  /** `P_fixed` of a live node's projected message (0 when it projects to null): the unit of logged shadow prices (§2.6). */
  fixedPriceOf(seq: number): number {
    const m = this.projected(seq)
    return m === null ? 0 : fixedPrice(m)
  }

  /** Prices a node that was just appended (its event is already in the source). */
  onAppend(seq: number): void {
    const tokens = this.price(seq)
    this.prices.set(seq, tokens)
    this.total += tokens
    this.noteImages(seq)
  }

  /** Prices a replacement node and removes the shadowed ones. */
  onReplace(seq: number, shadowed: readonly number[]): void {
    for (const s of shadowed) {
      this.total -= this.prices.get(s) ?? 0
      this.prices.delete(s)
      this.imageNodes.delete(s)
    }
    this.onAppend(seq)
  }

  /** Re-prices the targets of an `image/offload` (§6.7). */
  onOffload(seqs: readonly number[]): void {
    for (const s of seqs) this.reprice(s)
  }

  /** Refreshes the image price after a `request/header` or `request/context` (§2.3). */
  onRoute(header: EpochHeader | undefined, context: EventDataMap['request/context'] | undefined): void {
    const next = this.dialect === 'seed' && context?.imageTokens !== undefined && header !== undefined &&
      context.provider === header.config.provider && context.model === header.config.model ? context.imageTokens : undefined
    if (next === this.imagePriceNow) return
    this.imagePriceNow = next
    for (const s of this.imageNodes) this.reprice(s)
  }

  /** `S` is sampled at `step/start` (§2.5); `valid` is false for a step opened while another is open (a replay error). */
  onStepStart(seq: number, valid: boolean): void {
    if (!valid) this.markTaint(seq, 'step/start while a step is open')
    this.stepSurface = this.total
  }

  /** Records a §2.5 replay error the model detected (step/end mismatch, message outside its step, bad replacement). */
  markTaint(seq: number, reason: string): void {
    this.taintNow ??= { seq, reason }
  }

  /**
   * Sets the anchor on an appended `assistant/message` (§2.5). `cited` are the chunks its `sourceEventSeqs` name,
   * `'invalid'` when they are not earlier chunks of its step (a replay error), undefined when the list is absent.
   */
  onAssistantMessage(e: SessionEvent<'assistant/message'>, header: EpochHeader | undefined, cited: readonly StreamChunk[] | 'invalid' | undefined): void {
    const eventTokens = this.prices.get(e.seq) ?? 0
    const usage = e.data.usage
    const assistantTokens = usage !== undefined && header !== undefined ? this.providerAssistantTokens(e.seq, eventTokens, cited) : eventTokens
    this.anchor = anchorOf(header, usage, this.envelope(header), this.stepSurface + assistantTokens)
  }

  /** §2.5 `measure(session)` with the header in force `h`. */
  measure(h: EpochHeader | undefined): PressureReading {
    const { baseline, delta } = measureAgainst(this.anchor, h, this.total, (x) => this.envelope(x))
    return { totalTokens: Math.max(0, baseline.tokens + delta), surfaceTokens: this.total, baseline }
  }

  /** `envelopePrice(h)` (§2.2), recomputed only when the header object changes (it is priced on every anchor). */
  private envelope(h: EpochHeader | undefined): number {
    const cached = this.envelopeOf
    if (cached.header === h) return cached.tokens
    const tokens = envelopePrice(h, this.dialect)
    this.envelopeOf = { header: h, tokens }
    return tokens
  }

  private providerAssistantTokens(seq: number, eventTokens: number, cited: readonly StreamChunk[] | 'invalid' | undefined): number {
    if (cited === undefined) return eventTokens
    if (cited === 'invalid') {
      this.markTaint(seq, 'assistant/message cites chunks that are not earlier chunks of its step')
      return eventTokens
    }
    let blocks
    try {
      blocks = assembleAttempt(cited).blocks
    } catch (error) {
      this.markTaint(seq, `the cited chunks cannot be assembled: ${error instanceof Error ? error.message : String(error)}`)
      return eventTokens
    }
    if (blocks.length === 0) return 0
    let sum = ROLE_OVERHEAD
    for (const b of blocks) sum += blockPrice(b, this.imagePriceNow)
    return sum
  }

  private price(seq: number): number {
    const m = this.projected(seq)
    return m === null ? 0 : routePrice(m, this.imagePriceNow)
  }

  private noteImages(seq: number): void {
    const event = this.source.event(seq)
    if (event !== undefined && hasImage(messageContent(event), 0)) this.imageNodes.add(seq)
  }

  private reprice(seq: number): void {
    const old = this.prices.get(seq)
    if (old === undefined) return
    const tokens = this.price(seq)
    this.prices.set(seq, tokens)
    this.total += tokens - old
  }
}

/**
 * True when `countImages(content) > 0` (§6.2's depth-first walk), without allocating: it runs for every
 * appended node. Nesting beyond `NESTED_RESULTS_MAX` tool results falls back to core's `countImages`.
 */
function hasImage(content: readonly ContentBlock[], depth: number): boolean {
  if (depth > NESTED_RESULTS_MAX) return countImages(content) > 0
  for (let i = 0; i < content.length; i++) {
    const b = content[i] as ContentBlock
    if (b.type === 'image') return true
    if (b.type === 'tool-result') {
      const inner: unknown = b['content']
      if (Array.isArray(inner) && hasImage(inner as ContentBlock[], depth + 1)) return true
    }
  }
  return false
}

/** Nested tool results `hasImage` recurses through before it hands the rest to `countImages`. */
const NESTED_RESULTS_MAX = 64
