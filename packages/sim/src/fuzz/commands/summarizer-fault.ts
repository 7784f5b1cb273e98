/** Command: arms a §13.2 summarizer fault for the next compaction request (FAULT-20, 21, 23…29). */
import type { AsyncCommand } from 'fast-check'
import type { SessionDriver, SummaryFault } from '../driver.ts'
import type { SessionModel } from '../model.ts'
import { assertAgrees } from '../model.ts'

/** Arms `fault`; it fires on the next summary call, whichever entry point makes it. */
export class SummarizerFaultCommand implements AsyncCommand<SessionModel, SessionDriver> {
  constructor(readonly fault: SummaryFault) {}
  check(m: Readonly<SessionModel>): boolean { return m.armed.length < 3 }
  async run(m: SessionModel, d: SessionDriver): Promise<void> {
    d.armed.push(this.fault)
    m.armed = [...d.armed]
    assertAgrees(m, d, this.toString())
  }
  toString(): string { return `arm(${this.fault})` }
}
