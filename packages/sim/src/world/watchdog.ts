/**
 * Liveness watchdogs (issue #18): the only wall-clock bounds sim has. Time inside a run is virtual, so no
 * verdict may depend on how fast the machine is; a watchdog exists only so that a child process that hangs
 * cannot hang the run for ever. Every watchdog is generous (minutes), starts from the moment the awaited
 * party said it is ready (not from spawn), is multiplied by `SIM_WATCHDOG_SCALE` for slow machines, and
 * when it fires the scenario ends as `error` with `errorKind: 'watchdog'` — never as a FAIL and never by
 * judging a half-written log.
 */

/** The environment variable that multiplies every watchdog bound (a positive number; default 1). */
export const WATCHDOG_SCALE_ENV = 'SIM_WATCHDOG_SCALE'

/** Largest accepted scale: beyond it the bound would overflow a Node timer anyway. */
export const WATCHDOG_SCALE_MAX = 1000

/** Node's timers fire at once for delays above 2^31 − 1 ms; scaled bounds are clamped to it. */
const TIMER_MS_MAX = 2 ** 31 - 1

/** `SIM_WATCHDOG_SCALE` is not a number in (0, WATCHDOG_SCALE_MAX]: an input error (exit 2). */
export class WatchdogScaleError extends Error {
  override readonly name = 'WatchdogScaleError'
  readonly code = 'WATCHDOG_SCALE' as const
}

/**
 * A watchdog fired: the awaited party showed no sign of life within the bound. The message is
 * `watchdog: waited <n> s for <awaited>`. Not a verdict on the subject: the scenario's status is `error`.
 */
export class WatchdogError extends Error {
  override readonly name = 'WatchdogError'
  readonly code = 'WATCHDOG' as const
  /** What the watchdog waited for, as a phrase ("the crash child to become ready"). */
  readonly awaited: string
  /** The (scaled) bound that elapsed, in ms. */
  readonly waitedMs: number

  constructor(awaited: string, waitedMs: number, options?: ErrorOptions) {
    super(watchdogMessage(awaited, waitedMs), options)
    this.awaited = awaited
    this.waitedMs = waitedMs
  }
}

/** `watchdog: waited <n> s for <awaited>` — the one wording of a fired watchdog (seconds, to the ms). */
export function watchdogMessage(awaited: string, waitedMs: number): string {
  const seconds = Math.round(waitedMs) / 1000
  return `watchdog: waited ${seconds} s for ${awaited}`
}

/**
 * The scale factor from `env` (`SIM_WATCHDOG_SCALE`; unset or empty = 1). Throws `WatchdogScaleError`
 * naming the variable and value when it is not a finite number in (0, WATCHDOG_SCALE_MAX].
 */
export function watchdogScale(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env[WATCHDOG_SCALE_ENV]
  if (raw === undefined || raw.trim() === '') return 1
  const value = Number(raw)
  if (!Number.isFinite(value) || value <= 0 || value > WATCHDOG_SCALE_MAX) {
    throw new WatchdogScaleError(`${WATCHDOG_SCALE_ENV}=${JSON.stringify(raw)}: expected a number > 0 and ≤ ${WATCHDOG_SCALE_MAX}`)
  }
  return value
}

/** `baseMs` × the scale from `env`, rounded up and clamped to what a Node timer can wait. Throws like `watchdogScale`. */
export function scaledWatchdogMs(baseMs: number, env: NodeJS.ProcessEnv = process.env): number {
  return Math.min(TIMER_MS_MAX, Math.ceil(baseMs * watchdogScale(env)))
}
