/**
 * The agent's run queue and its idle admission (§3.7 step 2, §11.2, §11.6): turns run one at a time in
 * arrival order; manual compaction may reserve the agent only while nothing runs or waits. Prompts that
 * arrive during a reservation are accepted and queued; they start only after it is released. The
 * reservation types are the engine's (`IdleAdmission`, `IdleReservation` of compaction/engine.ts).
 */
import type { IdleAdmission, IdleReservation } from '../compaction/engine.ts'

interface Held {
  readonly controller: AbortController
  readonly released: Promise<void>
  readonly resolve: () => void
}

/** The serial turn queue plus the `IdleAdmission` it grants. Every method is synchronous except `run`. */
export class TurnQueue implements IdleAdmission {
  private running = false
  private waiting = 0
  private held: Held | null = null
  private tail: Promise<void> = Promise.resolve()

  /** True while a turn runs or waits (the agent "is running or has waking queued work", §11.2). */
  get busy(): boolean { return this.running || this.waiting > 0 }

  /** True while an idle-maintenance reservation is held. */
  get reserved(): boolean { return this.held !== null }

  tryReserve(): IdleReservation | null {
    if (this.busy || this.held !== null) return null
    let resolve: () => void = () => {}
    const released = new Promise<void>((r) => { resolve = r })
    const held: Held = { controller: new AbortController(), released, resolve }
    this.held = held
    return {
      signal: held.controller.signal,
      release: () => {
        if (this.held !== held) return
        this.held = null
        held.resolve()
      },
    }
  }

  /** Aborts the held reservation's signal with `reason` (the agent cancels maintenance); false when none is held. */
  cancelReservation(reason: unknown): boolean {
    if (this.held === null) return false
    this.held.controller.abort(reason)
    return true
  }

  /**
   * Queues `task` behind every earlier task and behind a held reservation, runs it, and calls `onIdle`
   * when it settles with nothing else waiting. Resolves or rejects with the task's outcome.
   */
  run<T>(task: () => Promise<T>, onIdle: () => void): Promise<T> {
    this.waiting++
    const result = this.tail.then(async () => {
      for (let h = this.held; h !== null; h = this.held) await h.released
      this.waiting--
      this.running = true
      try {
        return await task()
      } finally {
        this.running = false
        if (this.waiting === 0) onIdle()
      }
    })
    this.tail = result.then(() => undefined, () => undefined)
    return result
  }
}
