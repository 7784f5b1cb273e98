/**
 * Command: the provider rejects with IMAGE_OFFLOAD_REQUIRED(n) (FAULT-12…15): the k oldest eligible user and
 * tool-result images are offloaded (§6) and the step retried, or the failure delegates and the turn ends.
 */
import type { AsyncCommand } from 'fast-check'
import type { SessionDriver } from '../driver.ts'
import type { SessionModel } from '../model.ts'
import { settleModel } from './support.ts'

/** Fails the parked request asking to offload `n` images. */
export class ImageOffloadRequiredCommand implements AsyncCommand<SessionModel, SessionDriver> {
  constructor(readonly n: number) {}
  // A live orphan (FAULT-60/61) would be closed by the turn boundary this command may reach (INV-11, §11.6).
  check(m: Readonly<SessionModel>): boolean { return m.phase === 'awaiting-reply' && !m.lockLive }
  async run(m: SessionModel, d: SessionDriver): Promise<void> {
    const offloads = d.log.state.offloadCount
    const failure = { message: 'too many images', code: 'IMAGE_OFFLOAD_REQUIRED', offloadImages: this.n }
    await d.answer({ kind: 'fail', failure, delivery: 'thrown' })
    await settleModel(m, d, this.toString(), ['awaiting-reply', 'idle'])
    // §6.6: a retry happens only after an offload landed; a final failure only when none could.
    if (m.phase === 'awaiting-reply' && d.log.state.offloadCount === offloads) {
      throw new Error(`after ${this.toString()}: retried without an offload`)
    }
  }
  toString(): string { return `IMAGE_OFFLOAD_REQUIRED(${this.n})` }
}
