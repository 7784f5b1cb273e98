/**
 * Survivors of the mutation run in `src/checker/hardened-policy.ts` (HARD-1, HARD-3, HARD-4, issue #18/#19),
 * killed on hand-edited Appendix B logs and small hand-built ones. Every expectation is written out by hand from
 * `packages/core/docs/hardened.md` and Appendix B's figures (§2.2, §7.14): when the checkpoint #55 (205 tokens:
 * 72 + 120 + 9 + 4) lands, the surface is [#2 28, the span 3…42 1,652 at the route's prices (both images of #28
 * offloaded), #47 14, #49 1,925 (7,650 characters: 1,913 + 4 + 4 + 4)], the envelope is tools 46 and the threshold
 * floor(4,000 × 0.8) = 3,200, so the retained surface is 28 + 14 + 1,925 = 1,967 and the budget
 * 3,200 − 46 − 1,967 − margin = 1,187 − margin. It pins:
 * - HARD-1 on small hand-built logs (one turn; a 400-character user message, 108 tokens, is the surface): the reset at a
 *   `session/end-seed`; transient summary failures (the bracket's last `compaction/summary-error` code, cleared by a
 *   `compaction/start` or a `compaction/summary`) neither count nor reset; only the `compaction/end` of a pressure
 *   bracket counts (explicit regions, in-step and overflow brackets, orphan ends do not), a committed one resets;
 *   only pre-step brackets are gated; the doubled back-off after two failures; growth of exactly
 *   `minGrowthTokens` suffices; a `replaceGeneration` move waives the growth condition;
 * - HARD-3: the exact budget figures, equality at the budget and at `reliefRatio`, HARD-2's `deferredTo` left out
 *   of the retained surface (and ignored when it is not after the span), a bracket without a summary, checkpoints
 *   outside pressure brackets or not from the compactor, broken spans, an unknown capacity (skipped, with reason);
 * - HARD-4: overflow brackets are judged, explicit ones and non-checkpoint replacements are not, equality fails;
 * - the exported `HARDENED_POLICY_CHECKS` judge nothing when created under a faithful spec.
 */
import type { LogEvent, RunManifest } from '@compaction-sim/core'
import { describe, expect, it } from 'vitest'
import { HARDENED_POLICY_CHECKS } from '../../src/checker/hardened-policy.ts'
import { CheckerModel } from '../../src/checker/model.ts'
import { resolveRunInputs } from '../../src/checker/run-inputs.ts'
import { checkLog, type CheckReport } from '../../src/checker/run.ts'
import type { FoldItem, RunContext } from '../../src/checker/types.ts'
import { appendixB, at, editedAppendixB, foreign, reportOf, type AppendixEvent } from './support.ts'

type Compaction = RunManifest['compaction']
type Raw = { type: string; data: Record<string, unknown>; surfaceOp?: unknown }

function manifest(compaction: Compaction, extra: Partial<RunManifest> = {}): RunManifest {
  return { scenario: 'mutants-checker-hardened-policy', compaction, routes: [], faults: [], ...extra }
}

async function report(events: readonly unknown[], compaction: Compaction, extra: Partial<RunManifest> = {}): Promise<CheckReport> {
  return reportOf(await checkLog([...events] as never, { dialect: 'seed', manifest: manifest(compaction, extra) }))
}

/** `id@seq: message` of the HARD-n violations and the HARD-n internal errors (none expected). */
function hard(r: CheckReport, id: string): { lines: string[]; errors: unknown[] } {
  return {
    lines: r.violations.filter((v) => v.id === id).map((v) => `${v.id}@${v.seq}: ${v.message}`),
    errors: r.internalErrors.filter((f) => f.id === id),
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Hand-built HARD-1 logs: one turn (turn 1), seq = index.

const turnStart = (): Raw => ({ type: 'turn/start', data: { turn: 1 } })
const turnEnd = (): Raw => ({ type: 'turn/end', data: { turn: 1, reason: { kind: 'completed' } } })
const stepStart = (step: number): Raw => ({ type: 'step/start', data: { turn: 1, step } })
const stepEnd = (step: number): Raw => ({ type: 'step/end', data: { turn: 1, step } })
/** A user message of `chars` characters: ceil(chars / 4) + 4 + 4 tokens. */
const user = (id: string, chars: number): Raw => ({
  type: 'user/message', data: { id, role: 'user', content: [{ type: 'text', text: 'u'.repeat(chars) }], source: { kind: 'user' } }, surfaceOp: 'append',
})
const start = (id: string): Raw => ({ type: 'compaction/start', data: { compactionId: id, turn: 1 } })
const end = (id: string, error?: string): Raw => ({ type: 'compaction/end', data: { compactionId: id, turn: 1, ...(error === undefined ? {} : { error }) } })
const failedEnd = (id: string): Raw => end(id, 'summary is not smaller than the shadowed content')
/** A summary call failure of the bracket `id` over the user message #2. */
const summaryError = (id: string, code: string): Raw => ({
  type: 'compaction/summary-error',
  data: {
    compactionId: id, shadowedRange: { start: 2, end: 2 }, shadowedSeqs: [2], provider: 'mock', model: 'mock-4k', maxTokens: 8192,
    failure: { message: `summary call failed (${code})`, code },
  },
})
const summary = (id: string): Raw => ({
  type: 'compaction/summary',
  data: {
    compactionId: id, summary: [{ type: 'text', text: 'short' }], shadowedRange: { start: 2, end: 2 }, shadowedSeqs: [2],
    shadowedTokenCount: 108, provider: 'mock', model: 'mock-4k', maxTokens: 8192,
  },
})

/** Numbers the events (seq = index, 5 ms apart). */
function log(...events: Raw[]): Array<Raw & { seq: number; time: number }> {
  return events.map((e, seq) => ({ seq, time: 1_700_000_000_000 + 5 * seq, ...e }))
}

/**
 * #0 turn/start, #1 step/start 1, #2 a 400-character user message (108), #3 step/end 1, then `middle`, closed by
 * the next step and turn/end.
 */
function turn(...middle: Raw[]): Array<Raw & { seq: number; time: number }> {
  const steps = middle.filter((e) => e.type === 'step/start').length
  return log(turnStart(), stepStart(1), user('m-u1', 400), stepEnd(1), ...middle, stepStart(steps + 2), stepEnd(steps + 2), turnEnd())
}

const BACKOFF = { hardening: { failureBackoff: { minGrowthTokens: 0, baseSteps: 1 } } } as Compaction

describe('HARD-1: what counts as a failure, and what resets the count', () => {
  it('a session/end-seed starts a new lifecycle without the back-off; without it the retry is early', async () => {
    // #4/#5 fail; #6 step/start 2 (the failing pre-step's own); #7 step/end; then the retry #8/#9 (0 skipped < 1).
    const early = turn(start('c1'), failedEnd('c1'), stepStart(2), stepEnd(2), start('c2'), failedEnd('c2'))
    expect(hard(await report(early, BACKOFF), 'HARD-1')).toEqual({
      lines: ['HARD-1@8: pressure bracket after 0 skipped pre-step(s) since the failed one ending #5; back-off after 1 consecutive failure(s) is 1'],
      errors: [],
    })
    // The same retry in the pre-step window of a new lifecycle's turn (after #8 end-seed and #9 turn/start).
    const restored = log(
      turnStart(), stepStart(1), user('m-u1', 400), stepEnd(1), start('c1'), failedEnd('c1'), stepStart(2), stepEnd(2), turnEnd(),
      { type: 'session/end-seed', data: {} }, { type: 'turn/start', data: { turn: 2 } }, { type: 'compaction/start', data: { compactionId: 'c2', turn: 2 } },
      { type: 'compaction/end', data: { compactionId: 'c2', turn: 2, error: 'summary is not smaller than the shadowed content' } },
    )
    expect(hard(await report(restored, BACKOFF), 'HARD-1')).toEqual({ lines: [], errors: [] })
  })

  it('a bracket whose last summary failure is transient (SERVER) is no failure: the next pre-step may compact', async () => {
    const transient = turn(start('c1'), summaryError('c1', 'SERVER'), failedEnd('c1'), stepStart(2), stepEnd(2), start('c2'), failedEnd('c2'))
    expect(hard(await report(transient, BACKOFF), 'HARD-1')).toEqual({ lines: [], errors: [] })
    // The same with a permanent code (BAD_REQUEST) is a failure: the retry #9 is early.
    const permanent = turn(start('c1'), summaryError('c1', 'BAD_REQUEST'), failedEnd('c1'), stepStart(2), stepEnd(2), start('c2'), failedEnd('c2'))
    expect(hard(await report(permanent, BACKOFF), 'HARD-1')).toEqual({
      lines: ['HARD-1@9: pressure bracket after 0 skipped pre-step(s) since the failed one ending #6; back-off after 1 consecutive failure(s) is 1'],
      errors: [],
    })
  })

  it('a compaction/summary after a transient failure clears it: the bracket that then fails is a failure', async () => {
    const events = turn(start('c1'), summaryError('c1', 'SERVER'), summary('c1'), failedEnd('c1'), stepStart(2), stepEnd(2), start('c2'), failedEnd('c2'))
    expect(hard(await report(events, BACKOFF), 'HARD-1')).toEqual({
      lines: ['HARD-1@10: pressure bracket after 0 skipped pre-step(s) since the failed one ending #7; back-off after 1 consecutive failure(s) is 1'],
      errors: [],
    })
  })

  it('a compaction/start clears the previous bracket\'s transient failure: a later bracket failing without a summary call counts', async () => {
    // #4 … #6 transient (not counted); #9/#10 fails with no summary call; the retry #13/#14 is early.
    const events = turn(
      start('c1'), summaryError('c1', 'SERVER'), failedEnd('c1'), stepStart(2), stepEnd(2),
      start('c2'), failedEnd('c2'), stepStart(3), stepEnd(3), start('c3'), failedEnd('c3'),
    )
    expect(hard(await report(events, BACKOFF), 'HARD-1')).toEqual({
      lines: ['HARD-1@13: pressure bracket after 0 skipped pre-step(s) since the failed one ending #10; back-off after 1 consecutive failure(s) is 1'],
      errors: [],
    })
  })

  it('a committed pressure bracket resets the count: the bracket after it is not gated by the earlier failure', async () => {
    // baseSteps 4: #4/#5 fails; the committed #8/#9 is early itself (0 < 4); #12/#13 follows a success.
    const events = turn(start('c1'), failedEnd('c1'), stepStart(2), stepEnd(2), start('c2'), end('c2'), stepStart(3), stepEnd(3), start('c3'), end('c3'))
    expect(hard(await report(events, { hardening: { failureBackoff: { minGrowthTokens: 0, baseSteps: 4 } } } as Compaction), 'HARD-1')).toEqual({
      lines: ['HARD-1@8: pressure bracket after 0 skipped pre-step(s) since the failed one ending #5; back-off after 1 consecutive failure(s) is 4'],
      errors: [],
    })
  })

  it('a failed explicit-region bracket is no pressure failure (its end does not arm the back-off)', async () => {
    const events = turn(start('c1'), failedEnd('c1'), stepStart(2), stepEnd(2), start('c2'), failedEnd('c2'))
    expect(hard(await report(events, BACKOFF, { explicitRegionStarts: [4] } as never), 'HARD-1')).toEqual({ lines: [], errors: [] })
  })

  it('an orphan compaction/end (no open bracket) is no pressure bracket end', async () => {
    const events = turn(failedEnd('c0'), stepStart(2), stepEnd(2), start('c2'), failedEnd('c2'))
    expect(hard(await report(events, BACKOFF), 'HARD-1')).toEqual({ lines: [], errors: [] })
  })

  it('two consecutive failures double the back-off; events inside a bracket do not reset the count', async () => {
    // #4/#5 fails (k = 1); #8 … #10 fails again with a summary-error inside (k = 2), itself 0 skipped < 1;
    // #11 step/start 3 (its own), #13 step/start 4 skipped: the retry #15 has 1 skipped < 2.
    const events = turn(
      start('c1'), failedEnd('c1'), stepStart(2), stepEnd(2),
      start('c2'), summaryError('c2', 'BAD_REQUEST'), failedEnd('c2'), stepStart(3), stepEnd(3), stepStart(4), stepEnd(4),
      start('c3'), failedEnd('c3'),
    )
    expect(hard(await report(events, BACKOFF), 'HARD-1')).toEqual({
      lines: [
        'HARD-1@8: pressure bracket after 0 skipped pre-step(s) since the failed one ending #5; back-off after 1 consecutive failure(s) is 1',
        'HARD-1@15: pressure bracket after 1 skipped pre-step(s) since the failed one ending #10; back-off after 2 consecutive failure(s) is 2',
      ],
      errors: [],
    })
  })
})

describe('HARD-1: which brackets are gated, and when the surface changed enough', () => {
  it('a bracket inside a step (no window) and an overflow bracket are not gated', async () => {
    // #4/#5 fails; #6 step/start 2; #7/#8 a bracket inside step 2 (no pre-step window open).
    const inStep = log(turnStart(), stepStart(1), user('m-u1', 400), stepEnd(1), start('c1'), failedEnd('c1'), stepStart(2), start('c2'), failedEnd('c2'), stepEnd(2), turnEnd())
    expect(hard(await report(inStep, BACKOFF), 'HARD-1')).toEqual({ lines: [], errors: [] })
    // #7 a CONTEXT_WINDOW_EXCEEDED finish opens an overflow window for step 2; #8/#9 recovers in it.
    const overflow = log(
      turnStart(), stepStart(1), user('m-u1', 400), stepEnd(1), start('c1'), failedEnd('c1'), stepStart(2),
      { type: 'assistant/chunk', data: { turn: 1, step: 2, chunk: { type: 'finish', reason: { kind: 'error', failure: { message: 'prompt is too long', code: 'CONTEXT_WINDOW_EXCEEDED' } } } } },
      start('c2'), failedEnd('c2'), stepEnd(2), turnEnd(),
    )
    expect(hard(await report(overflow, BACKOFF), 'HARD-1')).toEqual({ lines: [], errors: [] })
  })

  it('growth of exactly minGrowthTokens is enough; one token more is not', async () => {
    // #7 a 400-character message grows the surface by 108 between the failure #5 and the retry #9.
    const events = turn(start('c1'), failedEnd('c1'), stepStart(2), user('m-u2', 400), stepEnd(2), start('c2'), failedEnd('c2'))
    const at = (minGrowthTokens: number): Compaction => ({ hardening: { failureBackoff: { minGrowthTokens, baseSteps: 0 } } }) as Compaction
    expect(hard(await report(events, at(108)), 'HARD-1')).toEqual({ lines: [], errors: [] })
    expect(hard(await report(events, at(109)), 'HARD-1')).toEqual({
      lines: ['HARD-1@9: pressure bracket after the failed one ending #5 with the surface grown by 108 < 109 tokens and replaceGeneration unchanged'],
      errors: [],
    })
  })

  it('a replaceGeneration move waives the growth condition even when the surface shrank', async () => {
    // #7 replaces the 108-token #2 with a 9-token message ("abcd"): the surface shrinks by 99, the generation moves.
    const replace: Raw = {
      type: 'user/message',
      data: { id: 'm-ck', role: 'user', content: [{ type: 'text', text: 'abcd' }], source: { kind: 'plugin', plugin: 'compact', compactionId: 'c9' } },
      surfaceOp: { op: 'replace', start: 2, end: 2 },
    }
    const cfg = { hardening: { failureBackoff: { baseSteps: 0 } } } as Compaction
    const moved = turn(start('c1'), failedEnd('c1'), stepStart(2), replace, stepEnd(2), start('c2'), failedEnd('c2'))
    expect(hard(await report(moved, cfg), 'HARD-1')).toEqual({ lines: [], errors: [] })
    const still = turn(start('c1'), failedEnd('c1'), stepStart(2), stepEnd(2), start('c2'), failedEnd('c2'))
    expect(hard(await report(still, cfg), 'HARD-1')).toEqual({
      lines: ['HARD-1@8: pressure bracket after the failed one ending #5 with the surface grown by 0 < 512 tokens and replaceGeneration unchanged'],
      errors: [],
    })
  })
})

// ---------------------------------------------------------------------------------------------------------------
// HARD-3 / HARD-4 on Appendix B.

const budget = (marginTokens: number, reliefRatio: number): Compaction => ({ hardening: { checkpointBudget: { marginTokens, reliefRatio } } }) as Compaction
const RELIEF = { hardening: { meteredRelief: true } } as Compaction
const OVER_2013 = 'HARD-3@55: checkpoint priced 205 > budget -2013 (threshold 3200 − envelope 46 − retained 1967 − margin 3200)'

/** Appendix B with #55's content one text block of `chars` characters: ceil(chars / 4) + 4 + 4 tokens. */
function checkpointOf(chars: number): AppendixEvent[] {
  return editedAppendixB((e) => { at(e, 55).data['content'] = [{ type: 'text', text: 'w'.repeat(chars) }] })
}

/** Appendix B with #54 carrying a summaryRoom record with `deferredTo`. */
function deferredTo(seq: number): AppendixEvent[] {
  return editedAppendixB((e) => {
    const s = at(e, 54)
    const { usage, ...rest } = s.data
    s.data = { ...rest, summaryRoom: { promptTokens: 1, deferredTo: seq }, usage }
  })
}

describe('HARD-3: the budget figures', () => {
  it('margin 3,200 and no relief: budget 1,187 − 3,200 = −2,013 with the retained 1,967', async () => {
    expect(hard(await report(appendixB(), budget(3200, 0)), 'HARD-3')).toEqual({ lines: [OVER_2013], errors: [] })
  })

  it('a checkpoint priced exactly the budget fits (margin 982: 1,187 − 982 = 205); margin 983 does not', async () => {
    expect(hard(await report(appendixB(), budget(982, 0)), 'HARD-3')).toEqual({ lines: [], errors: [] })
    expect(hard(await report(appendixB(), budget(983, 0)), 'HARD-3')).toEqual({
      lines: ['HARD-3@55: checkpoint priced 205 > budget 204 (threshold 3200 − envelope 46 − retained 1967 − margin 983)'], errors: [],
    })
  })

  it('a checkpoint within the budget is clean even with reliefRatio 0', async () => {
    expect(hard(await report(appendixB(), budget(0, 0)), 'HARD-3')).toEqual({ lines: [], errors: [] })
  })

  it('a checkpoint priced exactly reliefRatio of what it shadows is relief (826 = 0.5 × 1,652)', async () => {
    // 3,272 characters: 818 + 4 + 4 = 826.
    expect(hard(await report(checkpointOf(3272), budget(3200, 0.5)), 'HARD-3')).toEqual({ lines: [], errors: [] })
    // 3,276 characters: 819 + 4 + 4 = 827 > 826.
    expect(hard(await report(checkpointOf(3276), budget(3200, 0.5)), 'HARD-3')).toEqual({
      lines: ['HARD-3@55: checkpoint priced 827 > budget -2013 (threshold 3200 − envelope 46 − retained 1967 − margin 3200)'], errors: [],
    })
  })

  it('the nodes after the span up to summaryRoom.deferredTo are not retained: deferredTo 47 leaves 1,967 − 14 = 1,953', async () => {
    expect(hard(await report(deferredTo(47), budget(3200, 0)), 'HARD-3')).toEqual({
      lines: ['HARD-3@55: checkpoint priced 205 > budget -1999 (threshold 3200 − envelope 46 − retained 1953 − margin 3200)'], errors: [],
    })
    // deferredTo 49: 14 + 1,925 deferred, 28 retained.
    expect(hard(await report(deferredTo(49), budget(3200, 0)), 'HARD-3')).toEqual({
      lines: ['HARD-3@55: checkpoint priced 205 > budget -74 (threshold 3200 − envelope 46 − retained 28 − margin 3200)'], errors: [],
    })
  })

  it('a deferredTo that is not after the span defers nothing (#2 before it: no span 3…2; #42 its own end)', async () => {
    expect(hard(await report(deferredTo(2), budget(3200, 0)), 'HARD-3')).toEqual({ lines: [OVER_2013], errors: [] })
    expect(hard(await report(deferredTo(42), budget(3200, 0)), 'HARD-3')).toEqual({ lines: [OVER_2013], errors: [] })
  })

  it('a pressure bracket without a compaction/summary defers nothing', async () => {
    const events = editedAppendixB((e) => foreign(at(e, 54)))
    expect(hard(await report(events, budget(3200, 0)), 'HARD-3')).toEqual({ lines: [OVER_2013], errors: [] })
  })
})

describe('HARD-3: which checkpoints are judged', () => {
  it('an explicit-region bracket\'s checkpoint is not judged', async () => {
    expect(hard(await report(appendixB(), budget(3200, 0), { explicitRegionStarts: [51] } as never), 'HARD-3')).toEqual({ lines: [], errors: [] })
  })

  it('a replacement that is no compactor checkpoint (a user source) is not judged', async () => {
    const events = editedAppendixB((e) => { at(e, 55).data['source'] = { kind: 'user' } })
    expect(hard(await report(events, budget(3200, 0)), 'HARD-3')).toEqual({ lines: [], errors: [] })
  })

  it('a checkpoint outside any bracket (#51 not a compaction/start) is not judged', async () => {
    const events = editedAppendixB((e) => foreign(at(e, 51)))
    expect(hard(await report(events, budget(3200, 0)), 'HARD-3')).toEqual({ lines: [], errors: [] })
  })

  it('a checkpoint whose span does not resolve (11 is the tool/call) is left to INV-05', async () => {
    const events = editedAppendixB((e) => { at(e, 55)['surfaceOp'] = { op: 'replace', start: 11, end: 42 } })
    expect(hard(await report(events, budget(3200, 0)), 'HARD-3')).toEqual({ lines: [], errors: [] })
  })

  it('without a known capacity (#5 request/context gone, no manifest route) the checkpoint is skipped with the reason', async () => {
    const events = editedAppendixB((e) => foreign(at(e, 5)))
    const r = await report(events, budget(3200, 0))
    expect(hard(r, 'HARD-3')).toEqual({ lines: [], errors: [] })
    expect(r.coverage.find((c) => c.id === 'HARD-3')).toEqual({
      id: 'HARD-3', status: 'partial', reason: 'no threshold is known for the routed target (no-capacity)', skipped: 1,
    })
  })
})

describe('HARD-4: which checkpoints are judged, and the strict comparison', () => {
  const dear = 'HARD-4@55: checkpoint priced 10008 route tokens ≥ the 1652 route tokens of the 7 node(s) it shadows'

  it('an overflow bracket\'s checkpoint is judged (#50 a CONTEXT_WINDOW_EXCEEDED finish of step 3.1, the log cut after #56)', async () => {
    const events = checkpointOf(40_000).slice(0, 57)
    const e50 = at(events, 50)
    e50.type = 'assistant/chunk'
    e50.data = { turn: 3, step: 1, chunk: { type: 'finish', reason: { kind: 'error', failure: { message: 'prompt is too long', code: 'CONTEXT_WINDOW_EXCEEDED' } } } }
    expect(hard(await report(events, RELIEF), 'HARD-4')).toEqual({ lines: [dear], errors: [] })
  })

  it('an explicit-region bracket\'s checkpoint is not judged', async () => {
    expect(hard(await report(checkpointOf(40_000), RELIEF, { explicitRegionStarts: [51] } as never), 'HARD-4')).toEqual({ lines: [], errors: [] })
  })

  it('a replacement that is no compactor checkpoint (a user source) is not judged', async () => {
    const events = checkpointOf(40_000)
    at(events, 55).data['source'] = { kind: 'user' }
    expect(hard(await report(events, RELIEF), 'HARD-4')).toEqual({ lines: [], errors: [] })
  })

  it('a checkpoint priced exactly what it shadows (6,576 characters: 1,644 + 8 = 1,652) gives no relief', async () => {
    expect(hard(await report(checkpointOf(6576), RELIEF), 'HARD-4')).toEqual({
      lines: ['HARD-4@55: checkpoint priced 1652 route tokens ≥ the 1652 route tokens of the 7 node(s) it shadows'], errors: [],
    })
    expect(hard(await report(checkpointOf(6572), RELIEF), 'HARD-4')).toEqual({ lines: [], errors: [] })
  })

  it('a checkpoint whose span does not resolve is left to INV-05', async () => {
    const events = checkpointOf(40_000)
    at(events, 55)['surfaceOp'] = { op: 'replace', start: 11, end: 42 }
    expect(hard(await report(events, RELIEF), 'HARD-4')).toEqual({ lines: [], errors: [] })
  })
})

// ---------------------------------------------------------------------------------------------------------------
// The exported checks, created directly: the rule of the spec they are created under decides.

/** Folds `events` through a model and the `before` hooks of HARDENED_POLICY_CHECKS created under `compaction`. */
function direct(events: readonly unknown[], compaction: Compaction): string[] {
  const inputs = resolveRunInputs(manifest(compaction), null, 'seed')
  const ctx: RunContext = { dialect: 'seed', inputs, requests: null, world: null }
  const model = new CheckerModel('seed', inputs)
  const out: string[] = []
  const hooks = HARDENED_POLICY_CHECKS.map((c) => c.create(ctx, { violation: (seq, message) => out.push(`${c.id}@${seq}: ${message}`), skip: () => undefined }))
  events.forEach((raw, index) => {
    const e = raw as LogEvent
    const item: FoldItem = { index, line: null, seq: e.seq, type: e.type, event: e, problems: [], duplicate: false, repair: false, tornFinal: false, excerpt: '' }
    for (const h of hooks) if (h.types === undefined || h.types.includes(e.type)) h.before?.(e, item, model)
    model.fold(item, e)
  })
  return out
}

describe('HARDENED_POLICY_CHECKS created under a faithful spec judge nothing', () => {
  it('HARD-1, HARD-3, HARD-4 are silent on an early retry and a dear checkpoint; under their rules they report', () => {
    const retry = turn(start('c1'), failedEnd('c1'), stepStart(2), stepEnd(2), start('c2'), failedEnd('c2'))
    expect(direct(retry, {})).toEqual([])
    expect(direct(retry, BACKOFF)).toEqual([
      'HARD-1@8: pressure bracket after 0 skipped pre-step(s) since the failed one ending #5; back-off after 1 consecutive failure(s) is 1',
    ])
    const dear = checkpointOf(40_000)
    expect(direct(dear, {})).toEqual([])
    expect(direct(dear, { hardening: { checkpointBudget: { marginTokens: 0, reliefRatio: 0 }, meteredRelief: true } } as Compaction)).toEqual([
      'HARD-3@55: checkpoint priced 10008 > budget 1187 (threshold 3200 − envelope 46 − retained 1967 − margin 0)',
      'HARD-4@55: checkpoint priced 10008 route tokens ≥ the 1652 route tokens of the 7 node(s) it shadows',
    ])
  })
})
