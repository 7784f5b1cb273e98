/**
 * Command: two `compactNow` calls racing (§13.6 FAULT-70, §11.1): the scheduler decides whether the second
 * starts while the first's summary call is in flight (then it must be `busy` and make no summary call) or
 * after it finished. Interleavings come from fast-check's scheduler, so a failure shrinks to one ordering.
 */
import type { AsyncCommand, Scheduler } from 'fast-check'
import type { SessionDriver } from '../driver.ts'
import type { SessionModel } from '../model.ts'
import { settleModel } from './support.ts'

/**
 * The second call as the scenario format places it (issue #16): during the first's summary call → a `concurrent:`
 * `compact-now` before its first chunk (FAULT-70); after the first finished → a second `manual` compactNow; while
 * the first held the agent before its summary call → no equivalent (in-process only).
 */
function record(d: SessionDriver, overlapping: boolean, occurrence: number, code: string): void {
  if (overlapping) {
    d.trace.concurrent.push({ fault: 'FAULT-70', action: { during: 'summary', occurrence, at: 'before-first-chunk', do: 'compact-now' } })
  } else if (code === 'busy') {
    d.trace.inProcessOnly.push('compactNow racing a reservation before its summary call')
  } else {
    d.trace.manual.push({ kind: 'compactNow', afterTurn: d.log.state.lastTurn })
  }
}

/** Races two manual compactions; exported as a `concurrent:` item when the second overlapped the summary call. */
export class ConcurrentCompactionCommand implements AsyncCommand<SessionModel, SessionDriver> {
  constructor(readonly scheduler: Scheduler) {}
  // A live orphan (FAULT-60/61) would be closed by the turn boundary this command may reach (INV-11, §11.6).
  check(m: Readonly<SessionModel>): boolean { return m.phase === 'idle' && m.turns >= 1 && !m.lockLive }
  async run(m: SessionModel, d: SessionDriver): Promise<void> {
    const s = this.scheduler
    let inFlight = false
    let busyWhileInFlight: boolean | null = null
    let occurrence = 0
    d.duringSummary = async () => {
      inFlight = true
      occurrence = d.summaryCalls
      await s.schedule(Promise.resolve(), 'summary returns')
      inFlight = false
    }
    const requestsBefore = d.requestCount
    const first = d.startCompactNow()
    const second = s.schedule(Promise.resolve(), 'second compactNow').then(() => {
      const overlapping = inFlight
      const at = occurrence
      return d.startCompactNow(false).then((code) => {
        record(d, overlapping, at, code)
        if (overlapping) busyWhileInFlight = code === 'busy'
        return code
      })
    })
    const [a, b] = await s.waitFor(Promise.all([first, second]))
    d.duringSummary = null
    await settleModel(m, d, this.toString(), ['idle'])
    if (busyWhileInFlight === false) throw new Error(`after ${this.toString()}: a compactNow during a live bracket was not busy (FAULT-70)`)
    const summaryCalls = d.requestCount - requestsBefore
    // Each bracket makes at most two summary calls (a FAULT-29 re-prepare adds one, §6.8).
    if (summaryCalls > 4) throw new Error(`after ${this.toString()}: ${summaryCalls} summary calls for two compactNow (${a}, ${b})`)
  }
  toString(): string { return `concurrentCompactNow(${this.scheduler.report().map((r) => r.label).join(' → ')})` }
}
