/**
 * The virtual clock of a simulated run: no wall clock is ever read (AGENTS.md "Determinism"). Like the
 * fixtures' `eventClock`, a reading is the time of the event about to be appended — `originMs +
 * stepMs × (log length + readings at this length)` — so a metering event and its replacement, prepared
 * together before either is appended, get consecutive times. `sleep` advances virtual time by the
 * requested milliseconds and resolves on the next turn of the event loop (never a timer).
 */

/** Default origin of a run's clock: 2023-11-14T22:13:20Z, the protocol's examples' epoch. */
export const CLOCK_ORIGIN_MS = 1_700_000_000_000

/** Default virtual milliseconds per event. */
export const CLOCK_STEP_MS = 5

/** Options of `VirtualClock`. */
export interface VirtualClockOptions {
  /** Length of the log the clock times (read at every call); the clock restarts its per-length counter when it changes. */
  length: () => number
  originMs?: number
  stepMs?: number
  /** Virtual time already elapsed beyond the per-event steps (a restored session starts after its log's last time). */
  offsetMs?: number
}

/** A virtual clock bound to one log's length (module doc). */
export class VirtualClock {
  private readonly length: () => number
  private readonly originMs: number
  private readonly stepMs: number
  private lastLength = -1
  private readings = 0
  private sleptMs = 0

  constructor(options: VirtualClockOptions) {
    this.length = options.length
    this.originMs = options.originMs ?? CLOCK_ORIGIN_MS
    this.stepMs = options.stepMs ?? CLOCK_STEP_MS
    this.sleptMs = options.offsetMs ?? 0
    this.now = this.now.bind(this)
    this.peek = this.peek.bind(this)
    this.sleep = this.sleep.bind(this)
  }

  /** The time of the next event; each call at an unchanged log length advances by one step. */
  now(): number {
    const length = this.length()
    if (length !== this.lastLength) {
      this.lastLength = length
      this.readings = 0
    }
    return this.originMs + this.sleptMs + this.stepMs * (length + this.readings++)
  }

  /** What `now` would answer, without advancing (for captures and the provider's `created`). */
  peek(): number {
    const length = this.length()
    const readings = length === this.lastLength ? this.readings : 0
    return this.originMs + this.sleptMs + this.stepMs * (length + readings)
  }

  /** Virtual sleep: adds `ms` to the clock and resolves on the next macrotask; rejects with the signal's reason once aborted. */
  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted === true) return Promise.reject(signal.reason)
    this.sleptMs += Math.max(0, Math.ceil(ms))
    return new Promise((resolve, reject) => {
      setImmediate(() => {
        if (signal?.aborted === true) reject(signal.reason)
        else resolve()
      })
    })
  }
}
