/**
 * Command: a foreign writer appends during a manual compaction (§13.6): a log-only event (FAULT-78, tolerated;
 * an ignorable foreign type, since no protocol log-only type is valid outside a turn) or a surface
 * `user/message` outside the span (FAULT-77, tolerated in manual mode: it stays after the checkpoint). The
 * scheduler places the append before, during or after the summary call.
 */
import type { AsyncCommand, Scheduler } from 'fast-check'
import type { EventDraft } from '@compaction-sim/core'
import type { SessionDriver } from '../driver.ts'
import type { SessionModel } from '../model.ts'
import { settleModel } from './support.ts'

/** What the foreign writer appends. */
export type ForeignKind = 'log-only' | 'surface'

/** Races a foreign append with a manual compaction; exported as a `concurrent:` item when it landed during the summary call. */
export class ForeignAppendCommand implements AsyncCommand<SessionModel, SessionDriver> {
  constructor(readonly kind: ForeignKind, readonly scheduler: Scheduler) {}
  // A live orphan (FAULT-60/61) would be closed by the turn boundary this command may reach (INV-11, §11.6).
  check(m: Readonly<SessionModel>): boolean { return m.phase === 'idle' && m.turns >= 1 && !m.lockLive }
  async run(m: SessionModel, d: SessionDriver): Promise<void> {
    const s = this.scheduler
    let inFlight = false
    let occurrence = 0
    d.duringSummary = async () => {
      inFlight = true
      occurrence = d.summaryCalls
      await s.schedule(Promise.resolve(), 'summary returns')
      inFlight = false
    }
    const manual = d.startCompactNow()
    const foreign = s.schedule(Promise.resolve(), `foreign ${this.kind}`).then(() => {
      const draft = this.draft(d)
      // Issue #16: during the summary call it is a `concurrent:` item (before the first chunk); otherwise in-process only.
      if (inFlight) {
        const action = { during: 'summary', occurrence, at: 'before-first-chunk', do: this.kind === 'surface' ? 'append-surface' : 'append-log-only' } as const
        d.trace.concurrent.push({ fault: this.kind === 'surface' ? 'FAULT-77' : 'FAULT-78', action })
      } else {
        d.trace.inProcessOnly.push(`foreign ${draft.type} outside a summary call`)
      }
      d.foreignAppend(draft)
      return draft
    })
    const [code] = await s.waitFor(Promise.all([manual, foreign]))
    d.duringSummary = null
    await settleModel(m, d, this.toString(), ['idle'])
    if (code === 'changed') throw new Error(`after ${this.toString()}: a manual bracket treated a tolerated foreign append as drift`)
  }
  private draft(d: SessionDriver): EventDraft {
    const time = (d.log.events.at(-1)?.time ?? 0) + 1
    if (this.kind === 'log-only') {
      // A foreign plugin's ignorable log-only event (§1.3, §14.1): outside a turn no protocol type is log-only-valid.
      return { time, type: 'inbox/note', data: { text: 'a note from another writer' }, ignorable: true } as unknown as EventDraft
    }
    return {
      time, type: 'user/message', surfaceOp: 'append',
      data: {
        id: `m-foreign-${d.log.length}` as never, role: 'user', source: { kind: 'user' },
        content: [{ type: 'text', text: 'queued context' }],
      },
    }
  }
  toString(): string { return `foreignAppend(${this.kind}; ${this.scheduler.report().map((r) => r.label).join(' → ')})` }
}
