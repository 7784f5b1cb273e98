/**
 * Command: a §13.4 crash at a point of the last turn (or a later manual bracket), or mid-turn, in-process: the log is
 * truncated after the chosen event and restored (§11.4) — repair closers, `session/end-seed` — and the
 * session continues with a fresh agent and engine. Real child-process crashes are `sim run`'s crash scenarios.
 */
import type { AsyncCommand } from 'fast-check'
import type { LogEvent, SessionEvent } from '@compaction-sim/core'
import type { SessionDriver } from '../driver.ts'
import type { SessionModel } from '../model.ts'
import { settleModel } from './support.ts'

/** The §13.4 crash points: FAULT-50…56 (`checkpoint` = a bracket's replacement `user/message`). */
export const CRASH_POINTS = [
  'compaction/start', 'compaction/summary-error', 'image/offload', 'compaction/summary', 'checkpoint', 'compaction/prune',
  'compaction/end', 'tool/call',
] as const

function pointOf(e: LogEvent): string {
  return e.type === 'user/message' && typeof (e as SessionEvent).surfaceOp === 'object' ? 'checkpoint' : e.type
}

/**
 * At idle: crashes after the `pick`-th (cycled) crash-point event since the last `turn/start` (a no-op when there
 * is none); mid-turn: after the last event (FAULT-56).
 */
export class CrashRestoreCommand implements AsyncCommand<SessionModel, SessionDriver> {
  constructor(readonly pick: number) {}
  check(m: Readonly<SessionModel>): boolean { return m.turns >= 1 && m.crashes < 2 }
  async run(m: SessionModel, d: SessionDriver): Promise<void> {
    const events = d.log.events
    const from = events.findLastIndex((e) => e.type === 'turn/start')
    const candidates = events.slice(from).filter((e) => (CRASH_POINTS as readonly string[]).includes(pointOf(e)))
    // Mid-turn (FAULT-56): the process dies where it stands, after the last durable event.
    const chosen = m.phase === 'idle' ? candidates[this.pick % Math.max(1, candidates.length)] : events.at(-1)
    if (chosen === undefined) return
    d.crash(chosen.seq)
    m.crashes++
    await settleModel(m, d, `${this.toString()} at #${chosen.seq} ${pointOf(chosen)}`, ['idle'])
    const last = d.log.events.at(-1)
    if (last?.type !== 'session/end-seed') throw new Error(`after ${this.toString()}: restore did not end with session/end-seed`)
  }
  toString(): string { return `crash(${this.pick})` }
}
