/** Command: a transient provider failure (FAULT-16): the generic retry policy logs `llm/retry` and retries (§1.4.13). */
import type { AsyncCommand } from 'fast-check'
import type { SessionDriver } from '../driver.ts'
import type { SessionModel } from '../model.ts'
import { settleModel } from './support.ts'

/** The transient codes of §1.2.1 the mock can deliver. */
export type TransientCode = 'SERVER' | 'RATE_LIMIT' | 'TRANSPORT'

/** Fails the parked request with a transient code. */
export class TransientFailureCommand implements AsyncCommand<SessionModel, SessionDriver> {
  constructor(readonly code: TransientCode) {}
  // A live orphan (FAULT-60/61) would be closed by the turn boundary this command may reach (INV-11, §11.6).
  check(m: Readonly<SessionModel>): boolean { return m.phase === 'awaiting-reply' && !m.lockLive }
  async run(m: SessionModel, d: SessionDriver): Promise<void> {
    const generation = d.log.state.surface.replaceGeneration
    await d.answer({ kind: 'fail', failure: { message: 'transient provider failure', code: this.code }, delivery: 'thrown' })
    await settleModel(m, d, this.toString(), ['awaiting-reply', 'idle'])
    // INV-35: compaction and offload ignore transient failures.
    if (d.log.state.surface.replaceGeneration !== generation) throw new Error(`after ${this.toString()}: a transient failure compacted`)
  }
  toString(): string { return `transient(${this.code})` }
}
