/**
 * Mutation-driven cases for the checker model's restore note (`resumesWithoutEndSeed`, model.ts), the INV-14
 * input and before hooks (bracket.ts) and INV-20's input hook (pruning.ts) (issue #18, branch modpol), on small
 * edits of Appendix B. Every expectation is written out by hand. It pins:
 * - a manifest crash right after #51 and a compaction/start #52 with no session/end-seed: the INV-10 and INV-45
 *   messages name the restore at #52 (the crash path of `resumesWithoutEndSeed`); without the crash, no note;
 * - INV-14's input hook after an opaque compaction/prune #14 (the replacement #15 follows a line without an
 *   event) and its before hook on a plain user/message inside the open bracket before any summary;
 * - INV-20's input hook on a duplicate and on an opaque line right after the prune;
 * - a `text/offload` (hardened HARD-5) re-prices its node: the pressure figure INV-25 prints at a later bracket is
 *   the projected one;
 * - only an `error` finish is capacity evidence (hardened HARD-8): an `aborted` finish whose failure states a
 *   prompt count leaves the INV-25 figure uncalibrated.
 * Every case asserts that no check failed (`internalErrors` is empty).
 */
import { Seq, userTextReadOnlyPath, type RunManifest, type TextBlock } from '@compaction-sim/core'
import { LogBuilder } from '@compaction-sim/fixtures'
import { describe, expect, it } from 'vitest'
import { checkLog, type CheckReport } from '../../src/checker/run.ts'
import { appendixB, at, checkedReport, reportOf, type AppendixEvent } from './support.ts'

/** Every violation of a report as `id@seq: message`. */
const lines = (r: CheckReport): string[] => r.violations.map((v) => `${v.id}@${v.seq}: ${v.message}`)

describe('a manifest crash without session/end-seed: the restore note (§11.4)', () => {
  /** Appendix B #0 … #51 (the pressure bracket cmp-7f3a open at #51), then a manual compaction/start #52. */
  const events = (): AppendixEvent[] => [
    ...appendixB().slice(0, 52),
    { seq: 52, time: 1700000000275, type: 'compaction/start', data: { compactionId: 'cmp-new', turn: null } } as AppendixEvent,
  ]
  const crashAfter51: RunManifest = {
    scenario: 'crash-after-51', compaction: {}, pruner: {},
    routes: [{ provider: 'mock', model: 'mock-4k', contextWindow: 4000 }], faults: [],
    crashes: [{ afterSeq: 51 }] as NonNullable<RunManifest['crashes']>,
  }
  const note = '; a restore resumed the log at #52 without appending session/end-seed (§11.4), so no new lifecycle began'

  it('the first event after the crash (#52) is named in the INV-10 and INV-45 messages', async () => {
    const r = await checkedReport(events(), crashAfter51)
    expect(lines(r)).toEqual([
      `INV-10@52: compaction/start cmp-new while bracket cmp-7f3a (#51) is still open${note}`,
      'INV-11@52: compaction/start of a turn: null bracket occurs while turn 3 is open',
      'INV-19@52: bracket cmp-new (#52) is still open at the end of the log and no crash or close fault explains it',
      `INV-45@52: compaction/start while the lock is live: cmp-7f3a (#51) is unmatched in this lifecycle${note}`,
      'INV-46@52: a manual (turn: null) bracket while turn 3 is open',
    ])
    expect(r.internalErrors).toEqual([])
  })

  it('without the manifest crash the same log carries no note', async () => {
    const r = await checkedReport(events())
    expect(lines(r)).toEqual([
      'INV-10@52: compaction/start cmp-new while bracket cmp-7f3a (#51) is still open',
      'INV-11@52: compaction/start of a turn: null bracket occurs while turn 3 is open',
      'INV-19@52: bracket cmp-new (#52) is still open at the end of the log and no crash or close fault explains it',
      'INV-45@52: compaction/start while the lock is live: cmp-7f3a (#51) is unmatched in this lifecycle',
      'INV-46@52: a manual (turn: null) bracket while turn 3 is open',
    ])
    expect(r.internalErrors).toEqual([])
  })
})

describe('INV-14 hooks next to lines without a summary', () => {
  it('the replacement #15 right after an opaque compaction/prune #14: only INV-02, no check fails', async () => {
    const e = appendixB()
    at(e, 14).data['shadowedSeqs'] = 5
    const r = await checkedReport(e)
    expect(lines(r)).toEqual(['INV-02@14: expected an array, got the number 5 (field data.shadowedSeqs)'])
    expect(r.internalErrors).toEqual([])
  })

  it('a plain user/message #53 inside the open bracket cmp-7f3a, before its summary: no INV-14, no check fails', async () => {
    const e = appendixB()
    const x = at(e, 53)
    x.type = 'user/message'
    x['surfaceOp'] = 'append'
    x.data = { id: 'm-u9', role: 'user', content: [{ type: 'text', text: 'still there?' }], source: { kind: 'user' } }
    const r = await checkedReport(e)
    expect(lines(r)).toEqual([
      'INV-16@54: shadowedTokenCount 1652 differs from Σ P_fixed of the projected messages of [3, 10, 15, 23, 28, 37, 42] = 1660 (§2.6)',
      'INV-40@54: compaction/summary follows summary-error #52; the next bracket event must be image/offload or compaction/end with error',
    ])
    expect(r.internalErrors).toEqual([])
  })
})

describe('INV-20: the line after compaction/prune #14 is no event', () => {
  it('a duplicate of #14 right after it: reported at the prune, no check fails', async () => {
    const e = appendixB()
    const i = e.findIndex((x) => x.seq === 14)
    e.splice(i + 1, 0, structuredClone(e[i] as AppendixEvent))
    const r = await checkedReport(e)
    expect(lines(r)).toEqual([
      'INV-20@14: the event after compaction/prune #14 is compaction/prune, not the tool/result replacement of node 12 citing [12]',
      'INV-01@15: event line 15 holds seq 14 (a duplicate or out-of-order seq); the k-th event must hold seq k',
    ])
    expect(r.internalErrors).toEqual([])
  })

  it('an opaque #15 (its message is the number 5): reported as the event after the prune, no check fails', async () => {
    const e = appendixB()
    at(e, 15).data['message'] = 5
    const r = await checkedReport(e)
    expect(lines(r)).toEqual([
      'INV-02@15: expected an object, got the number 5 (field data.message)',
      'INV-20@15: the event after compaction/prune #14 is tool/result, not the tool/result replacement of node 12 citing [12]',
      'INV-41@17: reason series, but the header equals the one in force (#4) and no series boundary happened since: nothing is logged (§10.3)',
      'INV-40@52: shadowedSeqs [3, 10, 15, 23, 28, 37, 42] are not the nodes of the span 3…42 ([3, 10, 12, 23, 28, 37, 42])',
      'INV-16@54: shadowedSeqs name [15], which are not current surface nodes',
      'INV-05@55: sourceEventSeqs must cite every node of the span [3, 10, 12, 23, 28, 37, 42]; missing [12]',
      'INV-14@55: the fold shadows [3, 10, 12, 23, 28, 37, 42] but the summary (#54) names shadowedSeqs [3, 10, 15, 23, 28, 37, 42]',
    ])
    expect(r.internalErrors).toEqual([])
  })
})

describe('text/offload re-prices the projected node (HARD-5, the pressure figure of INV-25)', () => {
  const ROUTE = { provider: 'mock', model: 'mock-1k', contextWindow: 1000 }
  const ON: RunManifest = {
    scenario: 'hardened-text', compaction: { hardening: { oversizedUserText: true } } as never, routes: [ROUTE], faults: [],
  }
  const text = (value: string): TextBlock => ({ type: 'text', text: value })

  it('a pressure bracket after the offload of a 2400-character paste (604 tokens) sees 79 tokens, not 620', async () => {
    const b = new LogBuilder({ route: ROUTE })
    b.turnStart()
    b.stepStart()
    const user = b.user([text('paste '.repeat(400))], 'm-user-1')
    b.header('initial')
    b.context()
    b.add('text/offload', { seq: Seq(user), blockIndex: 0, tokens: 604, bound: 500, path: userTextReadOnlyPath('m-user-1', 0) } as never)
    b.reply([text('Read the paste.')], 'm-asst-1')
    b.stepEnd()
    const start = b.add('compaction/start', { compactionId: 'cmp-1', turn: 1 } as never)
    expect(start).toBe(12)
    const r = reportOf(await checkLog(b.events, { dialect: 'seed', manifest: ON }))
    expect(lines(r)).toEqual([
      'INV-19@12: bracket cmp-1 (#12) is still open at the end of the log and no crash or close fault explains it',
      'INV-25@12: an automatic pressure bracket below pressure: totalTokens 79 < threshold 800 of mock/mock-1k',
    ])
    expect(r.internalErrors).toEqual([])
  })
})

describe('an aborted finish is no capacity rejection (HARD-8 calibration)', () => {
  const ROUTE = { provider: 'mock', model: 'mock-1k', contextWindow: 1000 }
  const ON: RunManifest = {
    scenario: 'hardened-capacity', compaction: { hardening: { capacitySanity: true } } as never, routes: [ROUTE], faults: [],
  }

  it('an aborted finish stating 900 prompt tokens: the bracket after step/end still sees 158 tokens, uncalibrated', async () => {
    const b = new LogBuilder({ route: ROUTE })
    b.turnStart()
    b.stepStart()
    b.user([{ type: 'text', text: 'hello '.repeat(100) }], 'm-user-1')
    b.header('initial')
    b.context()
    const failure = { code: 'CONTEXT_WINDOW_EXCEEDED', message: 'your messages resulted in 900 tokens' }
    expect(b.add('assistant/chunk', { turn: 1, step: 1, chunk: { type: 'finish', reason: { kind: 'aborted', failure } } } as never)).toBe(5)
    b.stepEnd()
    expect(b.add('compaction/start', { compactionId: 'cmp-1', turn: 1 } as never)).toBe(7)
    const r = reportOf(await checkLog(b.events, { dialect: 'seed', manifest: ON }))
    expect(lines(r)).toEqual([
      'INV-19@7: bracket cmp-1 (#7) is still open at the end of the log and no crash or close fault explains it',
      'INV-25@7: an automatic pressure bracket below pressure: totalTokens 158 < threshold 800 of mock/mock-1k',
    ])
    expect(r.internalErrors).toEqual([])
  })
})
