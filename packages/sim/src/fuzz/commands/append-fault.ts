/**
 * Command: arms a storage fault on the next `compaction/end` append (§13.5 FAULT-60 on a successful bracket,
 * FAULT-61 on a failed one): the bracket stays open as a **live** orphan (§7.12) and every later entry point
 * of this lifecycle must report busy, until a crash and restore makes it stale (§11.4). In-process only.
 */
import type { AsyncCommand } from 'fast-check'
import type { SessionDriver } from '../driver.ts'
import type { SessionModel } from '../model.ts'
import { assertAgrees } from '../model.ts'

/** Arms one `compaction/end` rejection. */
export class AppendFaultCommand implements AsyncCommand<SessionModel, SessionDriver> {
  check(m: Readonly<SessionModel>): boolean { return m.appendArmed === 0 && !m.lockLive }
  async run(m: SessionModel, d: SessionDriver): Promise<void> {
    d.appendFaultsArmed++
    d.trace.inProcessOnly.push('append fault')
    m.appendArmed = d.appendFaultsArmed
    assertAgrees(m, d, this.toString())
  }
  toString(): string { return 'rejectNextEnd()' }
}
