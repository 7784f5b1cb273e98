/**
 * The checker's dispatcher (`src/checker/dispatch.ts`), its request cursor (`requests.ts`) and the shared helpers
 * (`support.ts`), through their exported API with small hand-made checks, items and models. Every expectation is
 * written out by hand from the documented contract. It pins:
 * - a throwing `create`, `input`, `before` or `end` hook disables its check and is recorded as
 *   `<where>: <Name>: <message>` ("at seq N" during an item, "at the end of the log" otherwise; a non-Error
 *   value is rendered with `String`); a disabled check's hooks do not run again;
 * - a throwing model fold is recorded under `model` as `fold of seq N failed: …`, the item returns false and
 *   no `after` hook runs;
 * - input problems are reported under their owning id, at their own seq (0 included) or at the item's seq when
 *   negative; a problem for an id with no live check is dropped;
 * - the per-id violation bound (1000 kept, the rest counted in `suppressed`, summed over ids);
 * - the excerpt a violation gets (explicit, the current item's when the seq matches, else none);
 * - coverage: `evaluated` with no skip, `partial` with the first skip reason and the skip count;
 * - `RequestCursor` hands requests out by dispatch revision, then dispatch index;
 * - `seqList`, `blockText`, `isCheckpointSource`, `isCheckpointEvent`, `summaryBefore`, `hardenedRuleOn`.
 */
import type { CapturedRequest, ContentBlock, LogEvent, MessageSource } from '@compaction-sim/core'
import { describe, expect, it } from 'vitest'
import { Dispatcher } from '../../src/checker/dispatch.ts'
import type { CheckerModel } from '../../src/checker/model.ts'
import { RequestCursor } from '../../src/checker/requests.ts'
import { blockText, hardenedRuleOn, isCheckpointEvent, isCheckpointSource, seqList, summaryBefore } from '../../src/checker/support.ts'
import type { CheckHooks, CheckId, FoldItem, InputProblem, InvariantCheck, Reporter, RunContext } from '../../src/checker/types.ts'

type Check = InvariantCheck<CheckerModel>

const CTX = {} as RunContext

function check(id: string, create: (report: Reporter) => CheckHooks<CheckerModel>): Check {
  return { id: id as CheckId, family: 'log-surface', statement: id, create: (_ctx, report) => create(report) }
}

function item(seq: number, opts: { problems?: InputProblem[]; event?: boolean } = {}): FoldItem {
  const event = opts.event === false ? null : ({ seq, type: 'user/message' } as unknown as LogEvent)
  return {
    index: seq, line: null, seq, type: 'user/message', event, problems: opts.problems ?? [], duplicate: false,
    repair: false, tornFinal: false, excerpt: `excerpt ${seq}`,
  }
}

function model(foldThrows = false): CheckerModel {
  return {
    skip: () => undefined,
    fold: () => { if (foldThrows) throw new Error('fold broke') },
  } as unknown as CheckerModel
}

describe('a throwing hook disables its check and is recorded as an internal failure', () => {
  it('create: recorded at the end of the log, the check then runs nothing', () => {
    const d = new Dispatcher([check('INV-01', () => { throw new Error('no hooks') })], CTX)
    expect(d.internalFailures).toEqual([{ id: 'INV-01', message: 'at the end of the log: Error: no hooks' }])
  })

  it('input: recorded at the seq of the item, and the input hook is not called again', () => {
    let calls = 0
    const d = new Dispatcher([check('INV-02', () => ({
      input: () => { calls++; throw new TypeError('bad input') },
    }))], CTX)
    const m = model()
    expect(d.item(item(3), m)).toBe(true)
    expect(d.item(item(4), m)).toBe(true)
    expect(calls).toBe(1)
    expect(d.internalFailures).toEqual([{ id: 'INV-02', message: 'at seq 3: TypeError: bad input' }])
  })

  it('before: a non-Error throw is rendered with String, and the hook is not called again', () => {
    let calls = 0
    const d = new Dispatcher([check('INV-03', () => ({
      before: () => { calls++; throw 'plain string' },
    }))], CTX)
    const m = model()
    d.item(item(5), m)
    d.item(item(6), m)
    expect(calls).toBe(1)
    expect(d.internalFailures).toEqual([{ id: 'INV-03', message: 'at seq 5: plain string' }])
  })

  it('end: recorded at the end of the log', () => {
    const d = new Dispatcher([check('INV-04', () => ({ end: () => { throw new RangeError('late') } }))], CTX)
    d.item(item(0), model())
    d.end(model())
    expect(d.internalFailures).toEqual([{ id: 'INV-04', message: 'at the end of the log: RangeError: late' }])
  })

  it('a model fold that throws is recorded under model, the item returns false and no after hook runs', () => {
    let after = 0
    const d = new Dispatcher([check('INV-05', () => ({ after: () => { after++ } }))], CTX)
    expect(d.item(item(2), model(true))).toBe(false)
    expect(after).toBe(0)
    expect(d.internalFailures).toEqual([{ id: 'model', message: 'fold of seq 2 failed: Error: fold broke' }])
  })
})

describe('input problems are reported under their owning id', () => {
  it('at their own seq (0 included), at the item seq when negative, and dropped for an id with no check', () => {
    const d = new Dispatcher([check('INV-01', () => ({}))], CTX)
    const problems = [
      { id: 'INV-01', seq: -1, message: 'negative' },
      { id: 'INV-01', seq: 0, message: 'zero' },
      { id: 'INV-02', seq: 7, message: 'nobody' },
    ] as unknown as InputProblem[]
    expect(d.item(item(7, { problems, event: false }), model())).toBe(true)
    expect(d.violations).toStrictEqual([
      { id: 'INV-01', seq: 7, message: 'negative', excerpt: 'excerpt 7' },
      { id: 'INV-01', seq: 0, message: 'zero' },
    ])
    expect(d.internalFailures).toEqual([])
  })
})

describe('violations: the per-id bound and the excerpt', () => {
  function flood(n: number): (report: Reporter) => CheckHooks<CheckerModel> {
    return (report) => ({ end: () => { for (let i = 0; i < n; i++) report.violation(i, 'v') } })
  }

  it('1000 kept per id, the rest suppressed, the suppressed count summed over ids', () => {
    const d = new Dispatcher([check('INV-01', flood(1000)), check('INV-02', flood(1002)), check('INV-03', flood(1001))], CTX)
    d.end(model())
    expect(d.violations.length).toBe(3000)
    expect(d.violations.filter((v) => v.id === 'INV-02').length).toBe(1000)
    expect(d.suppressed).toBe(3)
  })

  it('explicit excerpt, the current item excerpt when the seq matches, else no excerpt', () => {
    const d = new Dispatcher([check('INV-01', (report) => ({
      after: (_e, it) => {
        report.violation(it.seq, 'here')
        report.violation(it.seq - 1, 'earlier')
        report.violation(it.seq - 1, 'given', 'my excerpt')
      },
      end: () => report.violation(4, 'at end'),
    }))], CTX)
    d.item(item(4), model())
    d.end(model())
    expect(d.violations).toStrictEqual([
      { id: 'INV-01', seq: 4, message: 'here', excerpt: 'excerpt 4' },
      { id: 'INV-01', seq: 3, message: 'earlier' },
      { id: 'INV-01', seq: 3, message: 'given', excerpt: 'my excerpt' },
      { id: 'INV-01', seq: 4, message: 'at end' },
    ])
  })
})

describe('coverage', () => {
  it('evaluated with no skip; partial with the first skip reason and the count', () => {
    const checks = [
      check('INV-01', () => ({})),
      check('INV-02', (report) => ({ end: () => { report.skip(1, 'first reason'); report.skip(2, 'second reason') } })),
    ]
    const d = new Dispatcher(checks, CTX)
    d.end(model())
    expect(d.coverageOf(checks)).toEqual([
      { id: 'INV-01', status: 'evaluated', reason: '', skipped: 0 },
      { id: 'INV-02', status: 'partial', reason: 'first reason', skipped: 2 },
    ])
  })
})

describe('RequestCursor', () => {
  it('hands requests out by dispatch revision, then by dispatch index', () => {
    const r = (name: string, rev: number, index: number): CapturedRequest =>
      ({ name, logRevisionAtDispatch: rev, index }) as unknown as CapturedRequest
    const cursor = new RequestCursor([r('A', 2, 0), r('B', 1, 2), r('C', 1, 1), r('D', 0, 3), r('E', 1, 4)])
    const names = (list: CapturedRequest[]): string[] => list.map((x) => (x as unknown as { name: string }).name)
    expect(names(cursor.upTo(1))).toEqual(['D', 'C', 'B', 'E'])
    expect(names(cursor.rest())).toEqual(['A'])
  })
})

describe('support helpers', () => {
  it('seqList cuts after max entries and says how many more', () => {
    expect(seqList([1, 2, 3, 4], 2)).toBe('[1, 2, … 2 more]')
    expect(seqList([1, 2], 2)).toBe('[1, 2]')
  })

  it('blockText reads the text of text and reasoning blocks only', () => {
    expect(blockText({ type: 'text', text: 'a' } as ContentBlock)).toBe('a')
    expect(blockText({ type: 'reasoning', text: 'r' } as unknown as ContentBlock)).toBe('r')
    expect(blockText({ type: 'image', text: 'x' } as unknown as ContentBlock)).toBeUndefined()
    expect(blockText({ type: 'text', text: 5 } as unknown as ContentBlock)).toBeUndefined()
    expect(blockText(undefined)).toBeUndefined()
  })

  it('a checkpoint source is a plugin source of plugin compact; a checkpoint event is a user/message with one', () => {
    const compact = { kind: 'plugin', plugin: 'compact' } as unknown as MessageSource
    expect(isCheckpointSource(compact)).toBe(true)
    expect(isCheckpointSource({ kind: 'user', plugin: 'compact' } as unknown as MessageSource)).toBe(false)
    expect(isCheckpointEvent({ type: 'user/message', seq: 1, data: { source: compact } } as unknown as LogEvent)).toBe(true)
    expect(isCheckpointEvent({ type: 'assistant/message', seq: 1, data: { source: compact } } as unknown as LogEvent)).toBe(false)
  })

  it('summaryBefore: the folded compaction/summary right before a user/message replacement, else null', () => {
    const summary = { type: 'compaction/summary', seq: 4 } as unknown as LogEvent
    const prev = (over: Partial<FoldItem>): CheckerModel =>
      ({ prevItem: { ...item(4), type: 'compaction/summary', event: summary, ...over } }) as unknown as CheckerModel
    const ok = prev({})
    const replacement = { type: 'user/message', seq: 5, surfaceOp: {} } as unknown as LogEvent
    expect(summaryBefore(replacement, ok)).toBe(summary)
    expect(summaryBefore({ type: 'assistant/message', seq: 5, surfaceOp: {} } as unknown as LogEvent, ok)).toBeNull()
    expect(summaryBefore({ type: 'user/message', seq: 5 } as unknown as LogEvent, ok)).toBeNull()
    expect(summaryBefore({ type: 'user/message', seq: 5, surfaceOp: 'x' } as unknown as LogEvent, ok)).toBeNull()
    expect(summaryBefore({ type: 'user/message', seq: 6, surfaceOp: {} } as unknown as LogEvent, ok)).toBeNull()
    expect(summaryBefore(replacement, { prevItem: null } as unknown as CheckerModel)).toBeNull()
    expect(summaryBefore(replacement, prev({ duplicate: true }))).toBeNull()
    expect(summaryBefore(replacement, prev({ event: null }))).toBeNull()
    expect(summaryBefore(replacement, prev({ event: { type: 'user/message', seq: 4 } as unknown as LogEvent }))).toBeNull()
  })

  it('hardenedRuleOn: applies when the rule is on, else not applicable naming the faithful behaviour', () => {
    const on = hardenedRuleOn('summaryRoom', 'faithful §8.2 cap')
    const ctx = (hardening: unknown): RunContext => ({ inputs: { policy: { hardening } } }) as unknown as RunContext
    expect(on(ctx({ summaryRoom: {} }))).toEqual({ kind: 'applies' })
    expect(on(ctx({ summaryRoom: null }))).toEqual({
      kind: 'not-applicable', reason: 'hardening.summaryRoom is off for this run (faithful §8.2 cap)',
    })
  })
})
