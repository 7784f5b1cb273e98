/**
 * Progress of `sim sweep` on stderr (issue #10): on a TTY (and not under CI) one live line — cells done/total,
 * failures so far, ETA — redrawn at most every `intervalMs` and cleared at the end; under CI one plain line per
 * finished cell; otherwise nothing. Wall-clock time is read here only, never by the sweep itself.
 */
import type { TextSink } from '../cli/output.ts'
import type { SweepCell } from './types.ts'

/** How progress is shown. */
export type ProgressMode = 'live' | 'lines' | 'off'

/** Options of `createProgress`. */
export interface ProgressOptions {
  mode: ProgressMode
  stderr: TextSink
  /** Milliseconds since an arbitrary origin (`performance.now`); injectable for tests. */
  now: () => number
  /** Minimum time between two redraws of the live line. */
  intervalMs?: number
}

/** A progress display. */
export interface Progress {
  /** One cell finished (`done` of `total`). */
  cell(cell: SweepCell, done: number, total: number): void
  /** Clears the live line (call once, before the final output). */
  finish(): void
}

/** The mode for a terminal: live on a TTY outside CI, one line per cell under CI, else off. */
export function progressMode(isTTY: boolean, ci: boolean): ProgressMode {
  if (ci) return 'lines'
  return isTTY ? 'live' : 'off'
}

/** Creates the display for `options.mode`. */
export function createProgress(options: ProgressOptions): Progress {
  const started = options.now()
  const interval = options.intervalMs ?? 100
  let lastDraw = Number.NEGATIVE_INFINITY
  let failures = 0
  let drawn = false
  return {
    cell(cell, done, total) {
      const m = cell.metrics
      if (m !== undefined && (m.violations > 0 || m.runsNotPassed > 0)) failures++
      if (options.mode === 'lines') {
        const summary = m === undefined ? '' : ` compactions=${m.compactions} overflow=${m.overflowIncidents} violations=${m.violations}`
        options.stderr.write(`[${done}/${total}] ${cell.id}${summary}\n`)
        return
      }
      if (options.mode !== 'live') return
      const now = options.now()
      if (now - lastDraw < interval && done < total) return
      lastDraw = now
      const elapsed = now - started
      const eta = done === 0 ? '?' : `${Math.ceil(((elapsed / done) * (total - done)) / 1000)}s`
      options.stderr.write(`\r\x1b[2Ksweep: ${done}/${total} cells, ${failures} with failures, ETA ${eta}`)
      drawn = true
    },
    finish() {
      if (drawn) options.stderr.write('\r\x1b[2K')
      drawn = false
    },
  }
}
