/**
 * The checker model's seq → event table for live surface nodes: an open-addressing hash table (linear
 * probing, backward-shift deletion) whose slot arrays only ever grow. Why not a `Map`: the live set churns
 * (every replacement deletes a span, appends refill it), and a `Map` re-allocates its backing table as it
 * shrinks and grows. A discarded table that was already promoted to the old generation keeps its slots in
 * the write barrier's remembered set until the next full collection, so every event it still names survives
 * each young collection and is promoted ("nepotism") — measured at about a sixth of `sim check`'s time on a
 * compacting log. This table re-allocates only when the live set outgrows every earlier size, and a deleted
 * slot is cleared at once. Memory: O(largest live surface), never O(log length).
 */
import type { LogEvent } from '@compaction-sim/core'

/** Slots allocated at first (a power of two); the table doubles while more than half full. */
const INITIAL_SLOTS = 64

/** A seq-keyed event table for the live surface. Keys are non-negative safe integers (folded seqs). */
export class LiveEvents {
  /** `keys[i]` is the seq held in slot i, or -1 when the slot is free. */
  private keys = new Float64Array(INITIAL_SLOTS).fill(-1)
  private values: Array<LogEvent | undefined> = emptySlots(INITIAL_SLOTS)
  private mask = INITIAL_SLOTS - 1
  private count = 0

  /** Number of events held. */
  get size(): number { return this.count }

  /** The event of `seq`, or undefined. */
  get(seq: number): LogEvent | undefined {
    const keys = this.keys
    const mask = this.mask
    for (let i = slotOf(seq, mask); ; i = (i + 1) & mask) {
      const k = keys[i] as number
      if (k === seq) return this.values[i]
      if (k === -1) return undefined
    }
  }

  /** Adds or replaces the event of `seq`. */
  set(seq: number, event: LogEvent): void {
    if ((this.count + 1) * 2 > this.keys.length) this.grow()
    const keys = this.keys
    const mask = this.mask
    for (let i = slotOf(seq, mask); ; i = (i + 1) & mask) {
      const k = keys[i] as number
      if (k === seq) {
        this.values[i] = event
        return
      }
      if (k === -1) {
        keys[i] = seq
        this.values[i] = event
        this.count++
        return
      }
    }
  }

  /** Removes the event of `seq` (nothing when absent); the slot stops referencing it at once. */
  delete(seq: number): void {
    const keys = this.keys
    const values = this.values
    const mask = this.mask
    let i = slotOf(seq, mask)
    for (;;) {
      const k = keys[i] as number
      if (k === -1) return
      if (k === seq) break
      i = (i + 1) & mask
    }
    this.count--
    // Backward-shift deletion: move later members of the probe run into the hole so no tombstones are needed.
    for (let j = (i + 1) & mask; ; j = (j + 1) & mask) {
      const k = keys[j] as number
      if (k === -1) break
      const home = slotOf(k, mask)
      // Slot j's member may fill hole i iff its home does not lie cyclically in (i, j].
      const movable = i <= j ? home <= i || home > j : home <= i && home > j
      if (movable) {
        keys[i] = k
        values[i] = values[j]
        i = j
      }
    }
    keys[i] = -1
    values[i] = undefined
  }

  private grow(): void {
    const oldKeys = this.keys
    const oldValues = this.values
    const slots = oldKeys.length * 2
    this.keys = new Float64Array(slots).fill(-1)
    this.values = emptySlots(slots)
    this.mask = slots - 1
    this.count = 0
    for (let i = 0; i < oldKeys.length; i++) {
      const k = oldKeys[i] as number
      if (k !== -1) this.set(k, oldValues[i] as LogEvent)
    }
  }
}

/** `slots` empty value slots (a packed array: filled, never holey). */
function emptySlots(slots: number): Array<LogEvent | undefined> {
  return Array.from({ length: slots }, () => undefined)
}

/** Home slot of a seq: its low bits (seqs arrive in order, so consecutive ones land in consecutive slots). */
function slotOf(seq: number, mask: number): number {
  return seq & mask // ToInt32 reduces any safe integer modulo 2^32 exactly, so the low bits are the seq's own
}
