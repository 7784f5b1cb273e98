/**
 * The surface fold of §1.5: the ordered list of node seqs the model currently sees, positional
 * replacement, `replaceGeneration`, and the tool-pairing prefix balances of §4.1. Incremental: an
 * append costs O(1); a one-node replacement (a prune) costs O(1); a span replacement costs
 * O(surface length after the span start).
 */
import type { Seq } from '../brand.ts'
import { InvariantError } from '../errors.ts'
import type { LogEvent, ReplaceOp, SurfaceEvent } from '../log/events.ts'
import { jsonEqual } from '../log/json.ts'
import type { ContentBlock } from '../log/llm.ts'

/** Resolves a seq to its log event (undefined when the seq is not in the log). */
export type EventLookup = (seq: number) => LogEvent | undefined

/** Read-only view of a surface. */
export interface SurfaceView {
  /** Node seqs in position order. */
  readonly nodes: readonly Seq[]
  /** Replacements committed so far (§0.3). */
  readonly replaceGeneration: number
  /** Position of a current node, or -1 when `seq` is not on the surface. */
  position(seq: number): number
  /** True when `seq` was shadowed by a replacement (it never returns, INV-07). */
  isShadowed(seq: number): boolean
}

/** Tool-pairing delta of one surface event (§4.1): calls of an assistant message, −1 for a result. */
export function pairingDelta(event: LogEvent): number {
  switch (event.type) {
    case 'assistant/message': {
      const content = (event.data as { message: { content: ContentBlock[] } }).message.content
      let calls = 0
      for (const b of content) if (b.type === 'tool-call') calls++
      return calls
    }
    case 'tool/result':
      return -1
    default:
      return 0
  }
}

/** The surface fold state (§1.5.1). Mutated only through `append` and `replace`. */
export class Surface implements SurfaceView {
  private readonly order: Seq[] = []
  private readonly positions = new Map<number, number>()
  /** Every seq a replacement took off the surface: one bit per seq (design §6: memory bounded for a 1 GB log). */
  private readonly shadowed = new SeqBits()
  /** balances[k] = Σ delta(nodes[0..k-1]); length = nodes.length + 1 (§4.1). */
  private readonly balances: number[] = [0]
  private generation = 0
  /** Position of the first cut whose balance is negative, or -1 (INV-08). */
  private negativeAt = -1

  get nodes(): readonly Seq[] { return this.order }
  get replaceGeneration(): number { return this.generation }
  /** Position of the first node after which the pairing balance is negative, or -1 (INV-08, §11.4). */
  get firstNegativePosition(): number { return this.negativeAt }

  position(seq: number): number { return this.positions.get(seq) ?? -1 }
  isShadowed(seq: number): boolean { return this.shadowed.has(seq) }

  /** The balance of cut `k` (0 … nodes.length): the sum of deltas before position k. */
  balanceAt(k: number): number {
    const b = this.balances[k]
    if (b === undefined) throw new InvariantError(`cut ${k} is outside the surface (0…${this.order.length})`)
    return b
  }

  /** Appends a node (`surfaceOp: 'append'`). */
  append(seq: Seq, delta: number): void {
    this.positions.set(seq, this.order.length)
    this.order.push(seq)
    const prev = this.balances[this.balances.length - 1] ?? 0
    this.balances.push(prev + delta)
    if (this.negativeAt < 0 && prev + delta < 0) this.negativeAt = this.order.length - 1
  }

  /**
   * Validates a replace op against the current surface (§1.5.1 steps 1–4) and returns how many nodes it shadows,
   * or a reason string when the op is invalid. `event` is the replacing event with its final seq.
   */
  checkReplace(event: SurfaceEvent & { surfaceOp: ReplaceOp }, lookup: EventLookup): { shadowedCount: number } | { reason: string; field: string } {
    const { start, end } = event.surfaceOp
    const i = this.position(start)
    const j = this.position(end)
    if (i < 0) return { reason: `replace start ${start} is not a current surface node${this.isShadowed(start) ? ' (it was shadowed)' : ''}`, field: 'surfaceOp.start' }
    if (j < 0) return { reason: `replace end ${end} is not a current surface node${this.isShadowed(end) ? ' (it was shadowed)' : ''}`, field: 'surfaceOp.end' }
    if (i > j) return { reason: `replace span is reversed: node ${start} is at position ${i}, after node ${end} at position ${j}`, field: 'surfaceOp' }
    const count = j - i + 1
    if (!this.citesEvery(event.sourceEventSeqs ?? [], i, j)) {
      const cited = new Set(event.sourceEventSeqs ?? [])
      const missing = this.order.slice(i, j + 1).filter((s) => !cited.has(s))
      return { reason: `sourceEventSeqs must cite every shadowed node; missing ${missing.join(', ')}`, field: 'sourceEventSeqs' }
    }
    if (event.type === 'tool/result') {
      if (count !== 1) return { reason: `a tool/result replacement shadows exactly one node, this span has ${count}`, field: 'surfaceOp' }
      const old = lookup(start)
      if (old === undefined || old.type !== 'tool/result') return { reason: `a tool/result replacement must replace a tool/result node; node ${start} is ${old?.type ?? 'missing'}`, field: 'surfaceOp.start' }
      if (!jsonEqual(blankToolResultContent(old.data), blankToolResultContent(event.data))) {
        return { reason: `a tool/result replacement may differ from node ${start} only in message.content[0].content (§1.4.9)`, field: 'data' }
      }
    }
    return { shadowedCount: count }
  }

  /**
   * True when `cited` names every node at positions `i … j`: one mark per position in a byte array (off the
   * JS heap), not a `Set` of the citations plus a copy of the span, which for a region of more than 16Ki nodes
   * are large-object allocations (see `containerProblem` in log/validate.ts).
   */
  private citesEvery(cited: readonly number[], i: number, j: number): boolean {
    const count = j - i + 1
    if (cited.length < count) return false
    const marks = new Uint8Array(count)
    let marked = 0
    for (let k = 0; k < cited.length; k++) {
      const p = this.positions.get(cited[k] as number)
      if (p === undefined || p < i || p > j || marks[p - i] === 1) continue
      marks[p - i] = 1
      marked++
    }
    return marked === count
  }

  /**
   * Applies a validated replacement: `seq` takes the positions of `start`…`end` (§1.5.1 step 5). Returns the
   * number of nodes it shadowed. The span is closed up in place (no spliced-out copy of a long region).
   */
  replace(seq: Seq, op: ReplaceOp, delta: number, deltaOf: (seq: number) => number): number {
    const i = this.position(op.start)
    const j = this.position(op.end)
    if (i < 0 || j < i) throw new InvariantError(`replace ${op.start}…${op.end} was not validated`)
    const order = this.order
    const count = j - i + 1
    for (let k = i; k <= j; k++) {
      const s = order[k] as number
      this.positions.delete(s)
      this.shadowed.add(s)
    }
    const oneForOne = count === 1 && deltaOf(order[i] as number) === delta
    order[i] = seq
    if (count > 1) {
      order.copyWithin(i + 1, j + 1)
      order.length -= count - 1
    }
    this.generation++
    if (oneForOne) {
      // A one-for-one replacement with the same pairing delta (every prune): positions and balances stand.
      this.positions.set(seq, i)
      return count
    }
    for (let k = i; k < this.order.length; k++) this.positions.set(this.order[k] as number, k)
    this.balances.length = i + 1
    for (let k = i; k < this.order.length; k++) {
      this.balances.push((this.balances[k] as number) + deltaOf(this.order[k] as number))
    }
    this.negativeAt = -1
    for (let k = 1; k < this.balances.length; k++) {
      if ((this.balances[k] as number) < 0) { this.negativeAt = k - 1; break }
    }
    return count
  }
}

/** Seqs per chunk of `SeqBits` (a power of two): 1,024 seqs in 128 bytes. */
const BITS_PER_CHUNK = 1024

/**
 * A set of seqs stored as one bit per seq, in fixed-size chunks created on first use. Shadowed seqs are dense
 * (a replacement shadows runs of surface nodes), so this holds a million-event log's shadowed nodes in a few
 * hundred KiB where a `Set` of numbers needs tens of MiB; a chunk per stray seq bounds the sparse worst case.
 */
class SeqBits {
  private readonly chunks = new Map<number, Uint32Array>()

  add(seq: number): void {
    const key = Math.floor(seq / BITS_PER_CHUNK)
    let chunk = this.chunks.get(key)
    if (chunk === undefined) this.chunks.set(key, chunk = new Uint32Array(BITS_PER_CHUNK / 32))
    const bit = seq - key * BITS_PER_CHUNK
    chunk[bit >>> 5] = (chunk[bit >>> 5] as number) | (1 << (bit & 31))
  }

  has(seq: number): boolean {
    if (!Number.isInteger(seq)) return false
    const key = Math.floor(seq / BITS_PER_CHUNK)
    const chunk = this.chunks.get(key)
    if (chunk === undefined) return false
    const bit = seq - key * BITS_PER_CHUNK
    return ((chunk[bit >>> 5] as number) & (1 << (bit & 31))) !== 0
  }
}

function blankToolResultContent(data: unknown): unknown {
  const d = data as { message?: { content?: Array<Record<string, unknown>> } }
  const first = d.message?.content?.[0]
  if (d.message === undefined || first === undefined) return data
  return { ...d, message: { ...d.message, content: [{ ...first, content: null }, ...(d.message.content ?? []).slice(1)] } }
}
