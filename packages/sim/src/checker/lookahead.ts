/**
 * Bounded lookahead for the §12.0 repair-run and torn-final facts. A repair run is the maximal run of
 * repair closers (synthetic `TOOL_NOT_STARTED` / `TOOL_OUTCOME_UNKNOWN` results, `step/end`, an
 * `interrupted` `turn/end`) immediately before a `session/end-seed`; an event is torn-final when the next
 * event starts a repair run or is an end-seed, or when it is the last event and the manifest records a crash
 * right after it. Items are held back only while a run of closers is open, plus the one event before it.
 */
import { isRepairCloser } from '@compaction-sim/core'
import type { FoldItem } from './types.ts'

/**
 * Closers held back at most (then released as ordinary events). Crash repair writes one closer per open
 * tool call plus two, so a real run is far shorter; the bound keeps a pathological log in bounded memory.
 */
export const REPAIR_RUN_ITEMS_MAX = 4096

/** Buffers items until their repair-run and torn-final flags are known, then passes them on in order. */
export class RepairLookahead {
  private prev: FoldItem | null = null
  private run: FoldItem[] = []

  constructor(private readonly emit: (item: FoldItem) => void) {}

  /** Takes the next item in file order. */
  push(item: FoldItem): void {
    if (isCloser(item)) {
      this.run.push(item)
      if (this.run.length > REPAIR_RUN_ITEMS_MAX) this.release(false)
      return
    }
    if (isEndSeed(item)) {
      if (this.prev !== null) this.prev.tornFinal = true
      this.release(true)
      this.prev = item
      return
    }
    this.release(false)
    this.prev = item
  }

  /** Flushes everything at the end of the log; `crashAfter` says whether the manifest records a crash after a seq. */
  end(crashAfter: (seq: number) => boolean): void {
    const last = this.run.length > 0 ? this.run[this.run.length - 1] : this.prev
    if (last !== undefined && last !== null && crashAfter(last.seq)) last.tornFinal = true
    this.release(false)
  }

  private release(repair: boolean): void {
    if (this.prev !== null) this.emit(this.prev)
    this.prev = null
    const run = this.run
    if (run.length === 0) return // the common case: nothing held back, nothing to allocate
    this.run = []
    for (const item of run) {
      item.repair = repair
      this.emit(item)
    }
  }
}

function isCloser(item: FoldItem): boolean {
  return item.event !== null && !item.duplicate && isRepairCloser(item.event)
}

function isEndSeed(item: FoldItem): boolean {
  return item.event !== null && !item.duplicate && item.type === 'session/end-seed'
}
