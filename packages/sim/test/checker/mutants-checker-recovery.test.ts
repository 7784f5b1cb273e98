/**
 * The §12.5 recovery checks (`src/checker/recovery.ts`, INV-32 … INV-35) on small continuations of the valid
 * `overflow-recovery` conformance log: turn 1 is #0 … #12, turn 2 opens at #13 (`step/start` 2.1 #14, the prompt
 * m-u2 #15); every log below continues it with the fixtures' `LogBuilder` from #16 on. The overflow failure is
 * written out here (`CONTEXT_WINDOW_EXCEEDED` "request exceeds the context window", as the log's own #16) and
 * every expectation is derived by hand from §3.10 / §12.5. It pins:
 * - INV-32: the message, and that only a chunk of the OPEN step (same turn AND same step) is a retry dispatch;
 * - INV-33: the message and cap, the counter reset at `turn/start` and at `assistant/message` (never elsewhere),
 *   and the "no routed target" skip (coverage `partial` with its reason, no internal failure);
 * - INV-34: aborted turns and crash-repair `interrupted` turn ends are exempt, a plain `interrupted` end is not;
 *   the last failed finish of the TURN (a later step's failure) is the one the turn must end with; a step outside
 *   any turn still reports; the code AND the message must each match; the window does not survive `turn/start`;
 * - INV-35: the message.
 */
import type { LlmFailure, LogEvent, RunManifest } from '@compaction-sim/core'
import { conformanceCases, LogBuilder, removeEvents, validConformanceLogs } from '@compaction-sim/fixtures'
import { describe, expect, it } from 'vitest'
import { checkLog, type CheckReport } from '../../src/checker/run.ts'
import { reportOf, violationLines } from './support.ts'

const BASE = validConformanceLogs().find((l) => l.name === 'overflow-recovery')
if (BASE === undefined) throw new Error('the overflow-recovery conformance log is missing')
const MANIFEST: RunManifest | null = BASE.manifest ?? null

/** The route of the overflow logs (mock-400, the manifest's only route). */
const ROUTE = { provider: 'mock', model: 'mock-400', contextWindow: 400 }
/** The overflow failure of the base log's #16, written out. */
const OVERFLOW: LlmFailure = { code: 'CONTEXT_WINDOW_EXCEEDED', message: 'request exceeds the context window' }
const SERVER: LlmFailure = { code: 'SERVER', message: 'temporary provider outage' }

/** A builder holding the base log's #0 … #15 (turn 2, step 2.1 open after the prompt m-u2). */
function turn2(): LogBuilder {
  const prefix = structuredClone(BASE?.events ?? []).slice(0, 16)
  expect(prefix.slice(12).map((e) => e.type)).toEqual(['turn/end', 'turn/start', 'step/start', 'user/message'])
  return new LogBuilder({ route: ROUTE }).load(prefix)
}

/** A builder holding turn 1 only (#0 … #12, ends with its `turn/end`). */
function turn1(): LogBuilder {
  const prefix = structuredClone(BASE?.events ?? []).slice(0, 13)
  expect(prefix[12]?.type).toBe('turn/end')
  return new LogBuilder({ route: ROUTE }).load(prefix)
}

const say = (t: string): { type: 'text'; text: string } => ({ type: 'text', text: t })

async function check(events: readonly LogEvent[], manifest: RunManifest | null = MANIFEST): Promise<CheckReport> {
  return reportOf(await checkLog([...events], { dialect: 'seed', manifest }))
}

/** Internal failures of one check (a hook that threw). */
const failuresOf = (r: CheckReport, id: string): string[] => r.internalErrors.filter((f) => f.id === id).map((f) => f.message)

describe('INV-32: a same-step retry after an overflow failure needs a replacement since the failure', () => {
  it('INV-32: a retry right after the failure is reported at its first chunk, with the generation', async () => {
    const b = turn2()
    expect(b.fail(OVERFLOW)).toBe(16)
    b.reply([say('Step two moves the data in batches.')], 'm-a2') // chunks #17 … #20, message #21
    b.stepEnd()
    b.turnEnd()
    const r = await check(b.events)
    expect(violationLines(r, 'INV-32')).toEqual([
      'INV-32@17: retry in step 2.1 after the overflow failure #16 without a surface replacement (replaceGeneration still 0)',
    ])
    expect(failuresOf(r, 'INV-32')).toEqual([])
  })

  it('INV-32: a chunk naming another step (2.2) or another turn (1.1) of the open step is no retry dispatch', async () => {
    for (const other of [{ turn: 2, step: 2 }, { turn: 1, step: 1 }]) {
      const b = turn2()
      b.fail(OVERFLOW) // #16
      expect(b.add('assistant/chunk', { ...other, chunk: { type: 'block-start', index: 0, blockType: 'text' } })).toBe(17)
      b.reply([say('Step two moves the data in batches.')], 'm-a2') // chunks #18 … #21: the real retry
      b.stepEnd()
      b.turnEnd()
      const r = await check(b.events)
      expect(violationLines(r, 'INV-32')).toEqual([
        'INV-32@18: retry in step 2.1 after the overflow failure #16 without a surface replacement (replaceGeneration still 0)',
      ])
    }
  })
})

describe('INV-33: overflow-recovered retries since the last assistant message stay within maxOverflowRetries', () => {
  it('INV-33: the retry under maxOverflowRetries 0 is reported with its number, the cap and the route', async () => {
    const c = conformanceCases().find((x) => x.name === 'retry-with-zero-budget')
    if (c === undefined) throw new Error('the retry-with-zero-budget case is missing')
    const r = await check(c.events, c.manifest ?? null)
    expect(violationLines(r, 'INV-33')).toEqual([
      'INV-33@22: overflow-recovered retry number 1 since the last assistant message exceeds maxOverflowRetries 0 of mock/mock-400',
    ])
  })

  it('INV-33: turn/start resets the count: one retry in turn 2 (no assistant message) and one in turn 3 stay within 1', async () => {
    const b = turn2()
    b.fail(OVERFLOW) // #16
    expect(b.fail(OVERFLOW)).toBe(17) // retry 1 of turn 2 fails again
    b.stepEnd()
    b.turnEnd({ kind: 'error', error: OVERFLOW }) // #19
    expect(b.turnStart()).toBe(20)
    b.stepStart()
    b.user('Try once more.', 'm-u3')
    expect(b.fail(OVERFLOW)).toBe(23)
    expect(b.reply([say('Step two moves the data in batches.')], 'm-a3')).toBe(28) // retry #24 … #27
    b.stepEnd()
    b.turnEnd()
    const r = await check(b.events)
    expect(violationLines(r, 'INV-33')).toEqual([])
    expect(failuresOf(r, 'INV-33')).toEqual([])
    // The same retries with turn 3 dispatching a second time after its failure: number 2 in turn 3.
    const again = turn2()
    again.load(b.events.slice(16, 24))
    expect(again.fail(OVERFLOW)).toBe(24)
    again.reply([say('Step two moves the data in batches.')], 'm-a3') // retry #25 …
    again.stepEnd()
    again.turnEnd()
    expect(violationLines(await check(again.events), 'INV-33')).toEqual([
      'INV-33@25: overflow-recovered retry number 2 since the last assistant message exceeds maxOverflowRetries 1 of mock/mock-400',
    ])
  })

  it('INV-33: an assistant/message resets the count: one retry in step 2.1 and one in step 2.2 stay within 1', async () => {
    const b = turn2()
    b.fail(OVERFLOW) // #16
    expect(b.reply([say('Step two moves the data in batches.')], 'm-a2')).toBe(21) // retry #17 … #20
    b.stepEnd()
    expect(b.stepStart()).toBe(23)
    expect(b.fail(OVERFLOW)).toBe(24)
    expect(b.reply([say('Step three checks the counts.')], 'm-a3')).toBe(29) // retry #25 … #28
    b.stepEnd()
    b.turnEnd()
    const r = await check(b.events)
    expect(violationLines(r, 'INV-33')).toEqual([])
    expect(failuresOf(r, 'INV-33')).toEqual([])
  })

  it('INV-33: a retry with no routed target (no request/header) is skipped with its reason, not judged', async () => {
    const events = BASE.events
    expect([events[4]?.type, events[21]?.type, events[22]?.type]).toEqual(['request/header', 'request/header', 'assistant/chunk'])
    const headerless = removeEvents(events, [4, 21]) // the retry's first chunk is now #20
    const r = await check(headerless)
    expect(violationLines(r, 'INV-33')).toEqual([])
    expect(failuresOf(r, 'INV-33')).toEqual([])
    expect(r.coverage.find((c) => c.id === 'INV-33')).toEqual({
      id: 'INV-33', status: 'partial', reason: 'no routed target: maxOverflowRetries cannot be resolved', skipped: 1,
    })
  })
})

describe('INV-34: an unrecovered overflow window leaves the original failure as the turn\'s error', () => {
  /** Turn 2 failing at #16, `step/end` 2.1 at #17, then `turn/end` with `reason` at #18. */
  const unrecovered = (reason: Parameters<LogBuilder['turnEnd']>[0]): LogBuilder => {
    const b = turn2()
    b.fail(OVERFLOW)
    b.stepEnd()
    expect(b.turnEnd(reason)).toBe(18)
    return b
  }

  it('INV-34: an aborted turn end is exempt', async () => {
    const r = await check(unrecovered({ kind: 'aborted', reason: { kind: 'user' } }).events)
    expect(violationLines(r, 'INV-34')).toEqual([])
    expect(failuresOf(r, 'INV-34')).toEqual([])
  })

  it('INV-34: the crash-repair interrupted turn end (before session/end-seed) is exempt; a plain interrupted one is not', async () => {
    const plain = unrecovered({ kind: 'interrupted' })
    expect(violationLines(await check(plain.events), 'INV-34')).toEqual([
      'INV-34@18: the overflow failure #16 was not recovered, but the turn ends interrupted instead of {kind:\'error\'} with it',
    ])
    const repaired = unrecovered({ kind: 'interrupted' })
    expect(repaired.add('session/end-seed', {})).toBe(19)
    const r = await check(repaired.events)
    expect(violationLines(r, 'INV-34')).toEqual([])
    expect(failuresOf(r, 'INV-34')).toEqual([])
  })

  it('INV-34: the turn must end with the original overflow failure, not the summarizer\'s SERVER one', async () => {
    expect(violationLines(await check(unrecovered({ kind: 'error', error: SERVER }).events), 'INV-34')).toEqual([
      'INV-34@18: the turn ends with error SERVER "temporary provider outage", not the last failed finish\'s ' +
      'CONTEXT_WINDOW_EXCEEDED "request exceeds the context window"',
    ])
    expect(violationLines(await check(unrecovered({ kind: 'error', error: { ...OVERFLOW } }).events), 'INV-34')).toEqual([])
  })

  it('INV-34: the code and the message must each match (one differing is enough)', async () => {
    const otherMessage = { code: 'CONTEXT_WINDOW_EXCEEDED', message: 'prompt is too long' }
    expect(violationLines(await check(unrecovered({ kind: 'error', error: otherMessage }).events), 'INV-34')).toEqual([
      'INV-34@18: the turn ends with error CONTEXT_WINDOW_EXCEEDED "prompt is too long", not the last failed finish\'s ' +
      'CONTEXT_WINDOW_EXCEEDED "request exceeds the context window"',
    ])
    const otherCode = { code: 'SERVER', message: 'request exceeds the context window' }
    expect(violationLines(await check(unrecovered({ kind: 'error', error: otherCode }).events), 'INV-34')).toEqual([
      'INV-34@18: the turn ends with error SERVER "request exceeds the context window", not the last failed finish\'s ' +
      'CONTEXT_WINDOW_EXCEEDED "request exceeds the context window"',
    ])
  })

  it('INV-34: a later step\'s failure is the turn\'s last failed finish: ending with it is clean', async () => {
    const b = turn2()
    b.fail(OVERFLOW) // #16: the window is not recovered
    b.stepEnd()
    expect(b.stepStart()).toBe(18)
    expect(b.fail(SERVER)).toBe(19)
    b.stepEnd()
    expect(b.turnEnd({ kind: 'error', error: SERVER })).toBe(21)
    const r = await check(b.events)
    expect(violationLines(r, 'INV-34')).toEqual([])
    expect(failuresOf(r, 'INV-34')).toEqual([])
  })

  it('INV-34: an overflow in a step opened outside any turn is still reported at the turn/end', async () => {
    const b = turn1()
    expect(b.add('step/start', { turn: 2, step: 1 })).toBe(13)
    b.user('Continue with the next part of the plan.', 'm-u2')
    expect(b.add('assistant/chunk', { turn: 2, step: 1, chunk: { type: 'finish', reason: { kind: 'error', failure: OVERFLOW } } })).toBe(15)
    expect(b.add('turn/end', { turn: 2, reason: { kind: 'completed' } })).toBe(16)
    const r = await check(b.events)
    expect(failuresOf(r, 'INV-34')).toEqual([])
    expect(violationLines(r, 'INV-34')).toEqual([
      'INV-34@16: the overflow failure #15 was not recovered, but the turn ends completed instead of {kind:\'error\'} with it',
    ])
  })

  it('INV-34: an unrecovered window of a turn left open does not carry over into the next turn/start', async () => {
    const b = turn2()
    b.fail(OVERFLOW) // #16
    b.stepEnd() // #17; turn 2 never ends
    expect(b.turnStart(3)).toBe(18)
    b.stepStart(1)
    b.user('Start over.', 'm-u3')
    b.reply([say('Step two moves the data in batches.')], 'm-a3')
    b.stepEnd()
    expect(b.turnEnd()).toBe(27)
    const r = await check(b.events)
    expect(violationLines(r, 'INV-34')).toEqual([])
    expect(failuresOf(r, 'INV-34')).toEqual([])
  })
})

describe('INV-35: the generic retry policy never retries the protocol codes', () => {
  it('INV-35: an llm/retry for CONTEXT_WINDOW_EXCEEDED is reported with its code', async () => {
    const c = conformanceCases().find((x) => x.name === 'generic-retry-on-overflow')
    if (c === undefined) throw new Error('the generic-retry-on-overflow case is missing')
    const r = await check(c.events, c.manifest ?? null)
    expect(violationLines(r, 'INV-35')).toEqual([
      'INV-35@17: llm/retry for CONTEXT_WINDOW_EXCEEDED: overflow recovery and image offload never use the generic retry budget',
    ])
  })
})
