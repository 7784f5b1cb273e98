/**
 * Survivors of the mutation run in `src/checker/policy.ts` (issue #18), INV-28 … INV-31, killed on hand-edited
 * Appendix B logs (surface [2, 3, 10, 15, 23, 28, 37, 42, 47, 49] when the checkpoint #55 lands; the call #10 is
 * answered by #15, the call #47 by #49; tail [47, 49] of 1,939 P_route; summary text of #54):
 * - INV-28: a cut before the span that a call crosses;
 * - INV-29: checkpoints outside a bracket, replacements before the summary, explicit regions, the tokens form of
 *   the retained budget without any capacity, the skip of a ratio budget without one, spans off the surface;
 * - INV-30: the summary text copied into each surface type, near-copies that share its length and sampled
 *   characters, reasoning blocks, contentless messages;
 * - INV-31: only successful pressure brackets of the window count (not failed, manual or foreign-id ends), only
 *   pressure brackets are bounded.
 */
import type { RunManifest } from '@compaction-sim/core'
import { describe, expect, it } from 'vitest'
import { appendixB, at, checkedReport, editedAppendixB, reportOf, violationLines } from './support.ts'

type Events = ReturnType<typeof appendixB>
type Ev = Events[number]
type Report = ReturnType<typeof reportOf>

const T = 1_700_000_000_000
const route = { provider: 'mock', model: 'mock-4k' }

/** A manifest for route mock/mock-4k with `compaction` and a context window (none: capacity from request/context). */
function manifest(compaction: RunManifest['compaction'], contextWindow: number | null = 4000, extra: Partial<RunManifest> = {}): RunManifest {
  return { scenario: 'mutants-checker-policy-tail', compaction, routes: contextWindow === null ? [] : [{ ...route, contextWindow }], faults: [], ...extra }
}

const check = checkedReport
const of = violationLines

const cov = (r: Report, id: string) => r.coverage.find((c) => c.id === id)
const ab = editedAppendixB

describe('INV-28: balanced span edges', () => {
  it('a span 15…42 starts between the call #10 and its result #15: the cut before it is reported', async () => {
    const r = await check(ab((e) => { at(e, 55)['surfaceOp'] = { op: 'replace', start: 15, end: 42 } }))
    expect(of(r, 'INV-28')).toEqual(['INV-28@55: the cut before #15 (position 3) has 1 unanswered call crossing it'])
  })
})

describe('INV-29: which checkpoints are judged', () => {
  it('a summary and checkpoint with no bracket open (#51 a foreign record) are not judged, and nothing throws', async () => {
    const r = await check(ab((e) => {
      const s = at(e, 51)
      s.type = 'x/note'
      s.data = {}
      s['ignorable'] = true
    }), manifest({ retainTokens: 1940 }))
    expect(r.internalErrors).toEqual([])
    expect(of(r, 'INV-29')).toEqual([])
  })

  it('a user/message replacing the newest node #49 inside the bracket but before its summary is no checkpoint', async () => {
    const r = await check(ab((e) => {
      const s = at(e, 53)
      s.type = 'user/message'
      s.data = { id: 'm-x', role: 'user', content: [{ type: 'text', text: 'Replaced.' }], source: { kind: 'user' } }
      s['surfaceOp'] = { op: 'replace', start: 49, end: 49 }
    }))
    expect(of(r, 'INV-29').filter((v) => v.startsWith('INV-29@53'))).toEqual([])
  })

  it('an explicit region call (#51 listed) may leave no tail: the span 3…49 is exempt', async () => {
    const r = await check(ab((e) => { at(e, 55)['surfaceOp'] = { op: 'replace', start: 3, end: 49 } }), manifest({}, 4000, { explicitRegionStarts: [51] } as never))
    expect(of(r, 'INV-29')).toEqual([])
    // the same span in the automatic bracket: reported
    const auto = await check(ab((e) => { at(e, 55)['surfaceOp'] = { op: 'replace', start: 3, end: 49 } }), manifest({}))
    expect(of(auto, 'INV-29')).toEqual(['INV-29@55: no node follows the span 3…49: the newest unit must stay verbatim'])
  })

  it('a span whose start is no current node (#5) is not judged, whatever the budget (6,399 of an 8,000 window: more than the whole surface)', async () => {
    const r = await check(ab((e) => { at(e, 55)['surfaceOp'] = { op: 'replace', start: 5, end: 42 } }), manifest({ retainTokens: 6399 }, 8000))
    expect(of(r, 'INV-29')).toEqual([])
    // the same budget on the real span 3…42: the tail 1,939 is short
    expect(of(await check(ab(), manifest({ retainTokens: 6399 }, 8000)), 'INV-29')).toEqual([
      'INV-29@55: the retained tail [47, 49] prices 1939 (P_route) < retainTokens 6399',
    ])
  })
})

describe('INV-29: the retained budget without a capacity (the only request/context names mock-8k)', () => {
  const noCapacity = (e: Events): void => { at(e, 5).data['model'] = 'mock-8k' }

  it('retainTokens 1,940 needs no capacity: the tail 1,939 is judged and short', async () => {
    const r = await check(ab(noCapacity), manifest({ retainTokens: 1940 }, null))
    expect(of(r, 'INV-29')).toEqual(['INV-29@55: the retained tail [47, 49] prices 1939 (P_route) < retainTokens 1940'])
    expect(cov(r, 'INV-29')).toMatchObject({ status: 'evaluated', skipped: 0 })
  })

  it('a ratio budget cannot be resolved: the checkpoint is skipped with the reason', async () => {
    const r = await check(ab(noCapacity))
    expect(of(r, 'INV-29')).toEqual([])
    expect(cov(r, 'INV-29')).toEqual({ id: 'INV-29', status: 'partial', reason: 'the retained budget of mock/mock-4k is unknown (no-capacity)', skipped: 1 })
  })
})

/** The summary text of #54 (Appendix B's only summary). */
const summaryText = (): string => ((at(appendixB(), 54).data['summary'] as Array<{ text: string }>)[0] as { text: string }).text
const text = (t: string) => [{ type: 'text', text: t }]
/** Appendix B with `extra` appended from seq 67 on. */
const appended = (...extra: Array<Record<string, unknown>>): Events =>
  [...appendixB(), ...extra.map((x, i) => ({ seq: 67 + i, time: T + 67 + i, ...x }) as unknown as Ev)]
const userMsg = (content: unknown) => ({ type: 'user/message', surfaceOp: 'append', data: { id: 'm-copy', role: 'user', content, source: { kind: 'user' } } })
const assistantMsg = (content: unknown) => ({ type: 'assistant/message', surfaceOp: 'append', data: { turn: 3, step: 2, message: { id: 'm-acopy', role: 'assistant', content, source: { kind: 'model', ...route } } } })
const copied = 'INV-30: the raw summary text of #54 appears on the surface outside its checkpoint (a second copy of history)'

describe('INV-30: the summary text outside its checkpoint', () => {
  it('is reported in an appended system, user and assistant message', async () => {
    const system = { type: 'system/message', surfaceOp: 'append', data: { id: 'm-scopy', role: 'system', content: text(summaryText()), source: { kind: 'plugin', plugin: 'x' } } }
    const r = await check(appended(system, userMsg(text(summaryText())), assistantMsg(text(summaryText()))))
    expect(of(r, 'INV-30')).toEqual([67, 68, 69].map((s) => copied.replace('INV-30:', `INV-30@${s}:`)))
  })

  it('is reported in a tool/result, whose text sits inside its one tool-result block (nested results too)', async () => {
    // a tool/result message holds exactly one tool-result block (INV-02), so the copy can only be nested
    const result = (content: unknown) => ({ type: 'tool-result', toolCallId: 'call_2', content })
    const tool = (content: unknown) => ({ type: 'tool/result', surfaceOp: 'append', data: { turn: 3, step: 2, message: { id: 'm-tcopy', role: 'user', content: [content], source: { kind: 'tool', callId: 'call_2' } } } })
    expect(of(await check(appended(tool(result(text(summaryText()))))), 'INV-30')).toEqual([copied.replace('INV-30:', 'INV-30@67:')])
    expect(of(await check(appended(tool(result([{ type: 'text', text: 'Read.' }, result(text(summaryText()))])))), 'INV-30')).toEqual([copied.replace('INV-30:', 'INV-30@67:')])
    expect(of(await check(appended(tool(result([{ type: 'text', text: 'Read.' }, result(text('Nothing else.'))])))), 'INV-30')).toEqual([])
  })

  it('a near-copy (same length, same first and every sampled character, the second one changed) is no copy', async () => {
    const s = summaryText()
    expect(s.length).toBeGreaterThan(16) // index 1 is then never sampled: samples are at ⌊k·n/8⌋ (k < 8) and n − 1
    const near = `${s[0] ?? ''}${s[1] === 'a' ? 'b' : 'a'}${s.slice(2)}`
    expect(of(await check(appended(userMsg(text(near)))), 'INV-30')).toEqual([])
    expect(of(await check(appended(userMsg(text(s)))), 'INV-30')).toEqual([copied.replace('INV-30:', 'INV-30@67:')])
  })

  it('a reasoning block carrying the text is not looked at (text blocks only)', async () => {
    const r = await check(appended(assistantMsg([{ type: 'reasoning', text: summaryText() }, { type: 'text', text: 'Done.' }])))
    expect(of(r, 'INV-30')).toEqual([])
  })

  it('an assistant message with no content (no derived message) after the summary throws nothing', async () => {
    const r = await check(appended(assistantMsg([])))
    expect(r.internalErrors).toEqual([])
    expect(of(r, 'INV-30')).toEqual([])
  })
})

describe('INV-31: successes per pre-step window (compactionRetries 0: bound 1), in the window of step 3.1\'s end #50', () => {
  const once = manifest({ compactionRetries: 0 })
  const start = (id: string, turn: number | null = 3) => ({ type: 'compaction/start', data: { compactionId: id, turn } })
  const end = (id: string, turn: number | null = 3, error?: string) => ({ type: 'compaction/end', data: { compactionId: id, turn, ...(error === undefined ? {} : { error }) } })
  /** Appendix B up to #50, then `tail` from #51. */
  const after50 = (...tail: Array<Record<string, unknown>>): Events =>
    [...appendixB().filter((x) => x.seq <= 50), ...tail.map((t, i) => ({ seq: 51 + i, time: T + 51 + i, ...t }) as unknown as Ev)]
  const bound = 'a pressure bracket opens after 1 successful ones in the pre-step window #50; the bound is compactionRetries + 1 = 1'

  it('a successful pressure bracket reaches the bound: the next pressure bracket is reported', async () => {
    expect(of(await check(after50(start('cmp-a'), end('cmp-a'), start('cmp-b'), end('cmp-b')), once), 'INV-31')).toEqual([`INV-31@53: ${bound}`])
  })

  it('a failed one (end with error) is no success', async () => {
    expect(of(await check(after50(start('cmp-a'), end('cmp-a', 3, 'summary failed'), start('cmp-b'), end('cmp-b')), once), 'INV-31')).toEqual([])
  })

  it('a manual one (turn null) is no pressure success, and a manual bracket after the bound is not bounded', async () => {
    expect(of(await check(after50(start('cmp-m', null), end('cmp-m', null), start('cmp-b'), end('cmp-b')), once), 'INV-31')).toEqual([])
    expect(of(await check(after50(start('cmp-a'), end('cmp-a'), start('cmp-m', null), end('cmp-m', null)), once), 'INV-31')).toEqual([])
  })

  it('an end naming another compactionId is no success of the open bracket', async () => {
    expect(of(await check(after50(start('cmp-a'), end('cmp-x'), start('cmp-b'), end('cmp-b')), once), 'INV-31')).toEqual([])
  })

  it('an end with no bracket open throws nothing and counts nothing', async () => {
    const r = await check(after50(end('cmp-x'), start('cmp-b'), end('cmp-b')), once)
    expect(r.internalErrors).toEqual([])
    expect(of(r, 'INV-31')).toEqual([])
  })
})
