/**
 * Command: `compactRegion(start, end)` (§3.8) right before the next step's pre-step — as a scenario's
 * `manual: compactRegion` runs. Positions are 0-based surface positions, negative from the end.
 */
import type { AsyncCommand } from 'fast-check'
import type { SessionDriver } from '../driver.ts'
import type { SessionModel } from '../model.ts'
import { assertAgrees } from '../model.ts'

/** Queues the region; it runs when the pending tool batch returns (`ToolResultsCommand`). */
export class CompactRegionCommand implements AsyncCommand<SessionModel, SessionDriver> {
  constructor(readonly start: number, readonly end: number) {}
  check(m: Readonly<SessionModel>): boolean { return m.phase === 'awaiting-results' }
  async run(m: SessionModel, d: SessionDriver): Promise<void> {
    d.queueRegion(this.start, this.end)
    assertAgrees(m, d, this.toString())
  }
  toString(): string { return `compactRegion(${this.start}, ${this.end})` }
}
