/**
 * Command: the provider rejects the conversation request with CONTEXT_WINDOW_EXCEEDED (FAULT-01 thrown,
 * FAULT-02 in-band). The overflow listener (§3.10) prunes and/or compacts and retries the same step, or
 * delegates and the turn ends with the failure.
 */
import type { AsyncCommand } from 'fast-check'
import type { SessionDriver } from '../driver.ts'
import type { SessionModel } from '../model.ts'
import { settleModel } from './support.ts'

/** Fails the parked request with an overflow. */
export class ProviderOverflowCommand implements AsyncCommand<SessionModel, SessionDriver> {
  constructor(readonly delivery: 'thrown' | 'in-band') {}
  // A live orphan (FAULT-60/61) would be closed by the turn boundary this command may reach (INV-11, §11.6).
  check(m: Readonly<SessionModel>): boolean { return m.phase === 'awaiting-reply' && !m.lockLive }
  async run(m: SessionModel, d: SessionDriver): Promise<void> {
    const failure = { message: 'request exceeds the context window', code: 'CONTEXT_WINDOW_EXCEEDED' }
    await d.answer({ kind: 'fail', failure, delivery: this.delivery })
    await settleModel(m, d, this.toString(), ['awaiting-reply', 'idle'])
  }
  toString(): string { return `overflow(${this.delivery})` }
}
