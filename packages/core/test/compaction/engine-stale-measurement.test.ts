/**
 * §3.5 step 4 and §11.1: the faithful pressure path selects on the log as it is when it selects. A foreign append
 * (a user message; no lock is taken yet) may land in any microtask after the pressure check's capacity lookup
 * resolves: before the check's own re-measure, or after it, while the check's result travels back to the engine
 * (one microtask; the selection follows synchronously).
 * Before the fix the second case selected on the check's stale measurement and threw
 * `RangeSelectionError: meter/surface mismatch at position 10`. Every expectation is written out by hand.
 */
import { appendixBTime } from '@compaction-sim/fixtures'
import { describe, expect, it } from 'vitest'
import type { EventDraft } from '../../src/log/events.ts'
import { bench, PRE_STEP_3_2, summaryReply } from './support/bench.ts'

type Bench = ReturnType<typeof bench>

/** Appends a user message, as an agent would between the pressure check and the selection. */
function late(b: Bench): void {
  b.log.append({
    time: appendixBTime(b.log.length), type: 'user/message', surfaceOp: 'append',
    data: { id: 'u-late' as never, role: 'user', content: [{ type: 'text', text: 'also check math.ts' }], source: { kind: 'user' } },
  } as EventDraft)
}

/** Resolves after `ticks` further microtasks once `p` has settled. */
function after<T>(p: Promise<T>, ticks: number): Promise<unknown> {
  let q: Promise<unknown> = p
  for (let k = 0; k < ticks; k++) q = q.then(() => undefined)
  return q
}

describe('the faithful pressure path measures again when the log moved after the pressure check', () => {
  // 0: before the check's re-measure (§3.5 step 4 cont.); 1: after it, before the engine selects. Two ticks later
  // the range is selected and the bracket opened: an append then is the §7 surface change, not this rule.
  for (const ticks of [0, 1]) {
    it(`a user message appended ${ticks} microtask(s) after the capacity lookup resolves is part of the selection`, async () => {
      const b = bench({ prefix: PRE_STEP_3_2, compaction: [summaryReply()] })
      const real = b.runtime.resolveModelInfo.bind(b.runtime)
      let lookups = 0
      b.runtime.resolveModelInfo = (provider, model, signal) => {
        const answer = real(provider, model, signal)
        if (++lookups === 1) void after(answer, ticks).then(() => { late(b) })
        return answer
      }
      const r = await b.engine.compactIfNeeded('pressure')
      expect(lookups).toBe(1)
      expect(r?.shadowedSeqs).toEqual([3, 10, 15, 23, 28, 37, 42])
      expect(b.written()).toEqual(['user/message', 'compaction/start', 'compaction/summary', 'user/message', 'compaction/end'])
    })
  }
})
