/** Command: the model answers with text only — the step and the turn end (§10.4). */
import type { AsyncCommand } from 'fast-check'
import type { SessionDriver } from '../driver.ts'
import type { SessionModel } from '../model.ts'
import { filler, settleModel, usageAt } from './support.ts'

/** Ends the turn with a text reply of `size` characters (and a usage report at `usageRatio` of the window, if given). */
export class AssistantTextCommand implements AsyncCommand<SessionModel, SessionDriver> {
  constructor(readonly size: number, readonly usageRatio: number | null) {}
  // A live orphan (FAULT-60/61) would be closed by the turn boundary this command may reach (INV-11, §11.6).
  check(m: Readonly<SessionModel>): boolean { return m.phase === 'awaiting-reply' && !m.lockLive }
  async run(m: SessionModel, d: SessionDriver): Promise<void> {
    const generation = d.log.state.surface.replaceGeneration
    const blocks = [{ type: 'text' as const, text: filler(this.size, 'answer') }]
    await d.answer(this.usageRatio === null ? { kind: 'reply', blocks } : { kind: 'reply', blocks, usage: usageAt(d, this.usageRatio) })
    await settleModel(m, d, this.toString(), ['idle'])
    if (d.log.state.surface.replaceGeneration !== generation) {
      throw new Error(`after ${this.toString()}: a text reply changed replaceGeneration`)
    }
  }
  toString(): string { return `text(${this.size}${this.usageRatio === null ? '' : `, usage ${this.usageRatio}`})` }
}
