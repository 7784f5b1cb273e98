/**
 * Cancellation (§7.10, §13.7, FAULT-80 … FAULT-84) and Q-15: manual compaction re-checks the caller signal
 * after the summary returned and reports the caller's exact reason after close and flush; agent cancellation
 * is `cancelled`; an automatic bracket whose abort lands after the summary returned still commits.
 */
import { describe, expect, it, vi } from 'vitest'
import { LlmSummarizer, type Summarizer } from '../../src/compaction/summarizer.ts'
import { ManualCompactionError } from '../../src/compaction/errors.ts'
import { resolveCompactionConfig } from '../../src/policy/config.ts'
import type { SessionEvent } from '../../src/log/events.ts'
import { expectBracketInvariants } from './support/invariants.ts'
import { admission, bench, BETWEEN_TURNS_2_3, deferred, rejectionOf, type Bench } from './support/bench.ts'

const SURFACE_AFTER_TURN_2 = [2, 3, 10, 15, 23, 28, 37]

/** The default LLM summarizer of bench `b`, then `after()` once it returned. */
function summarizeThen(b: () => Bench, after: () => void): Summarizer {
  return {
    summarize: async (input, signal) => {
      const inner = new LlmSummarizer({ runtime: b().runtime, log: b().log, policy: resolveCompactionConfig({}), newInstructionId: () => 'instr' })
      const out = await inner.summarize(input, signal)
      after()
      return out
    },
  }
}

describe('§13.7 cancellation', () => {
  it('FAULT-80: compactNow with an already-aborted signal throws the reason synchronously; nothing reserved, measured or written', () => {
    const m = bench({ prefix: BETWEEN_TURNS_2_3 })
    const reason = new Error('already cancelled')
    const a = admission()
    const measure = vi.spyOn(m.meter, 'measure')
    expect(() => m.engine.compactNow({ signal: AbortSignal.abort(reason), admission: a })).toThrow(reason)
    expect([a.reserved, measure.mock.calls.length, m.written().length, m.adapter.requests.length]).toEqual([0, 0, 0, 0])
  })

  it('FAULT-81: the caller aborts after the summary returned (manual) → end{error}, flush, the exact reason; no compaction/summary', async () => {
    const caller = new AbortController()
    const reason = { kind: 'user-stop' } // any value: the exact reason is rethrown
    let flushes = 0
    const m: Bench = bench({
      prefix: BETWEEN_TURNS_2_3,
      engine: { summarizer: summarizeThen(() => m, () => { caller.abort(reason) }), flush: async () => { flushes++ } },
    })
    const a = admission()
    expect(await rejectionOf(m.engine.compactNow({ signal: caller.signal, admission: a }))).toBe(reason)
    expect(m.written()).toEqual(['compaction/start', 'compaction/end'])
    expect((m.appended()[1] as SessionEvent<'compaction/end'>).data).toEqual({ compactionId: 'cmp-1', turn: null, error: '[object Object]' })
    expect(m.log.nodes).toEqual(SURFACE_AFTER_TURN_2)
    expect([flushes, a.released]).toEqual([1, 1])
    expectBracketInvariants(m.log)
  })

  it('FAULT-82: the agent cancels the maintenance reservation during summarization → end{error}, flush, cancelled (cause = agent reason)', async () => {
    const a = admission()
    const agentReason = new Error('agent disposed')
    let flushes = 0
    const m = bench({
      prefix: BETWEEN_TURNS_2_3,
      compaction: [{ kind: 'wait-for-abort', before: () => { a.controller.abort(agentReason) } }],
      engine: { flush: async () => { flushes++ } },
      config: {},
    })
    const err = await rejectionOf(m.engine.compactNow({ signal: new AbortController().signal, sourceCommandId: 'cmd-7', admission: a }))
    expect(err).toBeInstanceOf(ManualCompactionError)
    expect(err).toMatchObject({ code: 'cancelled', cause: agentReason, message: 'cancelled: agent disposed' })
    expect(m.written()).toEqual(['compaction/start', 'compaction/summary-error', 'compaction/end'])
    expect(m.appended().every((e) => (e as SessionEvent<'compaction/start'>).data.sourceCommandId === 'cmd-7')).toBe(true)
    expect([flushes, a.released]).toEqual([1, 1])
    expectBracketInvariants(m.log)
  })

  it('FAULT-83: a turn aborted before the pre-step → no compaction is attempted', async () => {
    const b = bench()
    const resolve = vi.spyOn(b.runtime, 'resolveModelInfo')
    await b.engine.preStep(AbortSignal.abort(new Error('turn aborted')))
    expect([resolve.mock.calls.length, b.written().length, b.warnings.length]).toEqual([0, 0, 0])
  })

  it('FAULT-84: the caller aborts while the manual flush runs → the flush is awaited, then the reason is thrown, then admission is released', async () => {
    const caller = new AbortController()
    const reason = new Error('stop now')
    const flush = deferred()
    const started = deferred()
    const m = bench({
      prefix: BETWEEN_TURNS_2_3,
      engine: { flush: () => { started.resolve(); caller.abort(reason); return flush.promise } },
    })
    const a = admission()
    const outcome = rejectionOf(m.engine.compactNow({ signal: caller.signal, admission: a }))
    await started.promise
    await Promise.resolve()
    expect(a.released).toBe(0)
    flush.resolve()
    expect(await outcome).toBe(reason)
    expect(a.released).toBe(1)
    expect(m.written()).toEqual(['compaction/start', 'compaction/summary', 'user/message', 'compaction/end']) // committed before the abort
    expectBracketInvariants(m.log)
  })

  it('Q-15: an abort landing after the summary returned does not stop an automatic commit', async () => {
    const turn = new AbortController()
    const b: Bench = bench({ engine: { summarizer: summarizeThen(() => b, () => { turn.abort(new Error('late')) }) } })
    const result = await b.engine.compactIfNeeded('pressure', turn.signal)
    expect(result).not.toBeNull()
    expect(b.written()).toEqual(['compaction/start', 'compaction/summary', 'user/message', 'compaction/end'])
    expectBracketInvariants(b.log)
  })

  it('the agent cancelling before the bracket starts writes nothing and reports cancelled (§3.7 step 3a)', async () => {
    const m = bench({ prefix: BETWEEN_TURNS_2_3 })
    const a = admission()
    a.controller.abort(new Error('shutting down'))
    expect(await rejectionOf(m.engine.compactNow({ admission: a }))).toMatchObject({ code: 'cancelled' })
    expect([m.written().length, a.released]).toEqual([0, 1])
  })

  it('compactNow returns null without writing when nothing is compactable (§3.7 step 3c)', async () => {
    const events = bench({ prefix: 4 }).log.events.slice() // turn 1, step 1, system head #2, user #3
    events.push({ seq: 4, time: 1, type: 'step/end', data: { turn: 1, step: 1 } } as SessionEvent)
    events.push({ seq: 5, time: 1, type: 'turn/end', data: { turn: 1, reason: { kind: 'completed' } } } as SessionEvent)
    const m = bench({ events })
    const a = admission()
    expect(await m.engine.compactNow({ admission: a })).toBeNull() // surface [2, 3]: head + newest unit
    expect([m.written().length, a.released]).toEqual([0, 1])
  })
})
