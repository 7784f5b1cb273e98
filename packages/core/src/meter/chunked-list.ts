/**
 * An append-friendly list with cheap immutable snapshots, for the meter's per-node prices. Elements
 * live in fixed-size chunks; a snapshot freezes the current chunks (O(chunk count)), and a later
 * point update copies only the chunk it touches (copy-on-write). Pushes never disturb a snapshot
 * (it remembers its length); a splice rebuilds the list (O(n); only span replacements splice).
 */

const CHUNK = 256

/** A frozen view of the first `length` elements at the time `snapshot()` was called. */
export interface ListSnapshot<T> {
  readonly length: number
  toArray(): T[]
}

/** The mutable list. Only the last chunk may be partial. */
export class ChunkedList<T> {
  private chunks: T[][] = []
  /** Epoch at which each chunk was last copied; a chunk is writable only in the current epoch. */
  private chunkEpochs: number[] = []
  private listEpoch = 0
  private epoch = 0
  private size = 0

  /** Number of elements. */
  get length(): number { return this.size }

  /** The element at `index` (undefined outside 0 … length − 1). */
  at(index: number): T | undefined {
    return this.chunks[Math.floor(index / CHUNK)]?.[index % CHUNK]
  }

  /** Appends `value`. */
  push(value: T): void {
    const last = this.chunks[this.chunks.length - 1]
    if (last === undefined || last.length === CHUNK) {
      this.ownList()
      this.chunks.push([value])
      this.chunkEpochs.push(this.epoch)
    } else {
      last.push(value) // beyond every snapshot's length: invisible to them
    }
    this.size++
  }

  /** Replaces the element at `index` (copying its chunk if a snapshot shares it). */
  set(index: number, value: T): void {
    if (index < 0 || index >= this.size) throw new RangeError(`index ${index} outside 0…${this.size - 1}`)
    const ci = Math.floor(index / CHUNK)
    this.ownList()
    if (this.chunkEpochs[ci] !== this.epoch) {
      this.chunks[ci] = (this.chunks[ci] as T[]).slice()
      this.chunkEpochs[ci] = this.epoch
    }
    ;(this.chunks[ci] as T[])[index % CHUNK] = value
  }

  /** Removes `deleteCount` elements at `start`, inserts `items`, and returns the removed ones (as `Array#splice`). O(n). */
  splice(start: number, deleteCount: number, ...items: T[]): T[] {
    const removed: T[] = []
    this.spliceVisiting(start, deleteCount, items, (v) => removed.push(v))
    return removed
  }

  /**
   * `splice` that hands each removed element to `visit` (in order) instead of returning a list, and never
   * copies the whole list: a flat copy of a long list (or of a long removed span) is a large-object allocation
   * in V8, which costs far more per element than chunk-sized arrays.
   */
  spliceVisiting(start: number, deleteCount: number, items: readonly T[], visit: (removed: T) => void): void {
    const size = this.size
    const from = start < 0 ? Math.max(size + start, 0) : Math.min(start, size)
    const cut = Math.min(Math.max(deleteCount, 0), size - from)
    const old = this.chunks
    // Chunks wholly before `from` are kept (shared: a later `set` copies them); the rest is rebuilt in
    // chunk-sized pieces from the old elements, `items` and the elements after the removed span.
    const kept = Math.floor(from / CHUNK)
    const chunks: T[][] = old.slice(0, kept)
    const epochs: number[] = this.chunkEpochs.slice(0, kept)
    const rest: T[] = []
    for (let k = kept * CHUNK; k < from; k++) rest.push((old[Math.floor(k / CHUNK)] as T[])[k % CHUNK] as T)
    for (const v of items) rest.push(v)
    for (let k = from; k < from + cut; k++) visit((old[Math.floor(k / CHUNK)] as T[])[k % CHUNK] as T)
    for (let k = from + cut; k < size; k++) rest.push((old[Math.floor(k / CHUNK)] as T[])[k % CHUNK] as T)
    this.epoch++
    for (let k = 0; k < rest.length; k += CHUNK) {
      chunks.push(rest.slice(k, k + CHUNK))
      epochs.push(this.epoch)
    }
    this.listEpoch = this.epoch
    this.chunks = chunks
    this.chunkEpochs = epochs
    this.size = size - cut + items.length
  }

  /** An immutable view of the current elements; O(chunk count). */
  snapshot(): ListSnapshot<T> {
    const chunks = this.chunks
    const length = this.size
    this.epoch++ // every current chunk (and the chunk list) is now shared
    return { length, toArray: () => flatten(chunks, length) }
  }

  /** A copy of all elements, in order. */
  toArray(): T[] {
    return flatten(this.chunks, this.size)
  }

  private ownList(): void {
    if (this.listEpoch !== this.epoch) {
      this.chunks = this.chunks.slice()
      this.chunkEpochs = this.chunkEpochs.slice()
      this.listEpoch = this.epoch
    }
  }
}

/** The first `length` elements, in one exactly sized array (a pushed array regrows, and each regrowth of a long one is a large-object allocation). */
function flatten<T>(chunks: readonly T[][], length: number): T[] {
  const out = Array.from<T>({ length })
  let k = 0
  for (const chunk of chunks) {
    for (let x = 0; x < chunk.length && k < length; x++) out[k++] = chunk[x] as T
    if (k === length) break
  }
  return out
}
