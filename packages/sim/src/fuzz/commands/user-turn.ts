/** Command: the user sends a message (text of `size` characters plus `imageCount` images) — a new turn (§1.4.1). */
import type { AsyncCommand } from 'fast-check'
import type { SessionDriver } from '../driver.ts'
import type { SessionModel } from '../model.ts'
import { filler, images, settleModel } from './support.ts'

/** Starts a turn; the agent runs its pre-step and parks on the first conversation request. */
export class UserTurnCommand implements AsyncCommand<SessionModel, SessionDriver> {
  constructor(readonly size: number, readonly imageCount: number) {}
  // A live orphan (FAULT-60/61) would be closed by the turn boundary this command may reach (INV-11, §11.6).
  check(m: Readonly<SessionModel>): boolean { return m.phase === 'idle' && !m.lockLive }
  async run(m: SessionModel, d: SessionDriver): Promise<void> {
    const turn = m.turns + 1
    await d.userTurn([{ type: 'text', text: filler(this.size, `ask${turn}`) }, ...images(this.imageCount, `u${turn}`)])
    await settleModel(m, d, this.toString(), ['awaiting-reply'])
    if (m.turns !== turn) throw new Error(`after ${this.toString()}: turn ${m.turns}, expected ${turn}`)
  }
  toString(): string { return `user(${this.size} chars, ${this.imageCount} img)` }
}
