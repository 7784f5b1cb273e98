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

  /** Removes `deleteCount` elements at `start`, inserts `items`, and returns the removed ones. O(n). */
  splice(start: number, deleteCount: number, ...items: T[]): T[] {
    const all = this.toArray()
    const removed = all.splice(start, deleteCount, ...items)
    this.epoch++
    this.listEpoch = this.epoch
    this.chunks = []
    this.chunkEpochs = []
    for (let i = 0; i < all.length; i += CHUNK) {
      this.chunks.push(all.slice(i, i + CHUNK))
      this.chunkEpochs.push(this.epoch)
    }
    this.size = all.length
    return removed
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

function flatten<T>(chunks: readonly T[][], length: number): T[] {
  const out: T[] = []
  for (const chunk of chunks) {
    for (const v of chunk) {
      if (out.length === length) return out
      out.push(v)
    }
  }
  return out
}
