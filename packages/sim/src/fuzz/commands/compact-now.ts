/** Command: `compactNow` while idle (§3.7): a manual bracket, or a classified `ManualCompactionError`. */
import type { AsyncCommand } from 'fast-check'
import type { SessionDriver } from '../driver.ts'
import type { SessionModel } from '../model.ts'
import { settleModel } from './support.ts'

/** Runs one manual compaction after the last turn. */
export class CompactNowCommand implements AsyncCommand<SessionModel, SessionDriver> {
  check(m: Readonly<SessionModel>): boolean { return m.phase === 'idle' && m.turns >= 1 }
  async run(m: SessionModel, d: SessionDriver): Promise<void> {
    const generation = d.log.state.surface.replaceGeneration
    const live = m.lockLive
    const fired = d.appendFaultsFired
    const result = await d.compactNow()
    await settleModel(m, d, this.toString(), ['idle'])
    // FAULT-60: while a live orphan holds the lock every entry point is busy; otherwise never.
    if (live && result !== 'busy') throw new Error(`after ${this.toString()}: ${result} while a live orphan holds the lock (FAULT-60)`)
    if (!live && result === 'busy') throw new Error(`after ${this.toString()}: busy at idle with no live bracket`)
    // A failed compaction leaves the surface as it was — except FAULT-60, whose checkpoint landed before the end was refused.
    if (result !== 'ok' && d.appendFaultsFired === fired && d.log.state.surface.replaceGeneration !== generation) {
      throw new Error(`after ${this.toString()}: failed (${result}) but the surface changed`)
    }
  }
  toString(): string { return 'compactNow()' }
}
