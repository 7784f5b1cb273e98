/**
 * Survivors of the mutation run in `src/checker/policy.ts` (INV-25 … INV-31, issue #18), killed on hand-edited
 * Appendix B logs and small hand-built ones. Every expectation is an `id@seq: message` written out from the spec
 * (§12.3 INV-25, §12.4) and Appendix B's figures (pressure 3,230 at the prune #14 and 3,762 at the bracket #51,
 * surface [2, 3, 10, 15, 23, 28, 37, 42, 47, 49] when the checkpoint #55 lands, tail [47, 49] of 1,939 P_route):
 * - INV-25: the no-target, no-capacity, configuration-error and tainted-meter branches, calibrated figures under
 *   HARD-8, and which prunes start a run (only the first pair of a run of adjacent pairs is measured);
 * - INV-26: rc.8 exemption, assistant/message and tool/result replacements over the head, no head at all;
 * - INV-27: HARD-6's anchor just after the open turn's own prompt (and nothing else), the message without a head,
 *   summaries that are not the bracket's;
 * - INV-28: an unbalanced cut before the span; INV-29: explicit exemption, the tokens form without a capacity,
 *   calibrated tails, spans off the surface; INV-30: which types and blocks are looked at, near-copies of the
 *   summary text; INV-31: which brackets count as successes and which starts are bounded.
 * - unusual neighbours (an opaque line before a tool/result, a plain user/message inside an open bracket, a
 *   pressure bracket without a routed target, whitespace-only and non-text summary blocks) make no hook fail.
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
  return { scenario: 'mutants-checker-policy', compaction, routes: contextWindow === null ? [] : [{ ...route, contextWindow }], faults: [], ...extra }
}

const check = checkedReport
const of = violationLines

const cov = (r: Report, id: string) => r.coverage.find((c) => c.id === id)
const ab = editedAppendixB

describe('INV-25: figures that cannot be judged, or are judged another way', () => {
  it('a prune in a pre-step window without a routed target (header #4 names no provider) is reported with its reason', async () => {
    const r = await check(ab((e) => { ((at(e, 4).data['header'] as Record<string, Record<string, unknown>>)['config'] as Record<string, unknown>)['provider'] = '' }))
    expect(of(r, 'INV-25')).toEqual([
      'INV-25@14: a prune run without a routed target (no request/header): automatic policy does nothing (§3.5 step 1)',
    ])
  })

  it('without a capacity for mock/mock-4k (the only request/context names mock-8k, no manifest) both instances are skipped, not judged', async () => {
    const r = await check(ab((e) => { at(e, 5).data['model'] = 'mock-8k' }))
    expect(of(r, 'INV-25')).toEqual([])
    expect(cov(r, 'INV-25')).toEqual({ id: 'INV-25', status: 'partial', reason: 'no capacity is known for mock/mock-4k (manifest or request/context)', skipped: 2 })
  })

  it('a retained budget of 3,200 = the threshold floor(4,000 × 0.8) is a configuration error: both instances are violations', async () => {
    const r = await check(ab(), manifest({ retainTokens: 3200 }))
    const why = 'retained budget 3200 for mock/mock-4k is not below its threshold 3200 (context window 4000)'
    expect(of(r, 'INV-25')).toEqual([
      `INV-25@14: a prune run, but the pressure check for the route throws a configuration error first: ${why}`,
      `INV-25@51: an automatic pressure bracket, but the pressure check for the route throws a configuration error first: ${why}`,
    ])
  })

  it('a tainted meter (#10 cites the user message #3 as a chunk) skips both instances even below the threshold 3,763', async () => {
    const r = await check(ab((e) => { at(e, 10)['sourceEventSeqs'] = [6, 7, 8, 3] }), manifest({ thresholdRatio: 0.5 }, 7526))
    expect(of(r, 'INV-25')).toEqual([])
    expect(cov(r, 'INV-25')).toEqual({
      id: 'INV-25', status: 'partial', skipped: 2,
      reason: 'the pressure figure is not exact from #10 on (assistant/message cites chunks that are not earlier chunks of its step)',
    })
  })

  it('an explicit region call (#51 listed) is no automatic pressure bracket: only the prune is below 3,763', async () => {
    const r = await check(ab(), manifest({ thresholdRatio: 0.5 }, 7526, { explicitRegionStarts: [51] } as never))
    expect(of(r, 'INV-25')).toEqual(['INV-25@14: a prune run below pressure: totalTokens 3230 < threshold 3763 of mock/mock-4k'])
  })
})

describe('INV-25: which prunes start a run of pairs', () => {
  /** Appendix B up to #13, then `tail` (events numbered from 14). */
  const after13 = (tail: Array<Record<string, unknown>>): Events =>
    [...appendixB().filter((x) => x.seq <= 13), ...tail.map((t, i) => ({ seq: 14 + i, time: T + 14 + i, ...t }) as unknown as Ev)]
  const prune = (seq: number) => ({ type: 'compaction/prune', data: { shadowedRange: { start: seq, end: seq }, shadowedSeqs: [seq], shadowedTokenCount: 3012 } })
  const placeholder = (target: number) => {
    const e15 = at(appendixB(), 15)
    return { type: 'tool/result', data: e15.data, surfaceOp: { op: 'replace', start: target, end: target } }
  }
  const below = manifest({ thresholdRatio: 0.5 }, 7526)

  it('a prune right after a pair continues the run: only its first prune is measured', async () => {
    const r = await check(after13([prune(12), placeholder(12), prune(15), placeholder(15)]), below)
    expect(of(r, 'INV-25')).toEqual(['INV-25@14: a prune run below pressure: totalTokens 3230 < threshold 3763 of mock/mock-4k'])
  })

  it('a foreign record between a prune and its tool/result ends the run: the next prune is measured too', async () => {
    const note = { type: 'x/note', data: {}, ignorable: true }
    const r = await check(after13([prune(12), note, placeholder(12), prune(16), placeholder(16)]), below)
    expect(of(r, 'INV-25').map((v) => v.split(':')[0])).toEqual(['INV-25@14', 'INV-25@17'])
  })

  it('a gap in seq between a prune and its tool/result ends the run too', async () => {
    const events = after13([prune(12), placeholder(12), prune(15), placeholder(15)]).map((e) => (e.seq >= 15 ? { ...e, seq: e.seq + 1 } : e)) as Events
    // #15 missing: the tool/result is #16; the next prune is #17
    const r = await check(events, below)
    expect(of(r, 'INV-25').map((v) => v.split(':')[0])).toEqual(['INV-25@14', 'INV-25@17'])
  })

  it('a prune at seq 3 (right after step 1.1 ends, no header) is measured: lastPairEnd starts below any seq', async () => {
    const events = [
      { seq: 0, time: T, type: 'turn/start', data: { turn: 1 } },
      { seq: 1, time: T + 1, type: 'step/start', data: { turn: 1, step: 1 } },
      { seq: 2, time: T + 2, type: 'step/end', data: { turn: 1, step: 1 } },
      { seq: 3, time: T + 3, ...prune(1) },
    ] as Events
    expect(of(await check(events), 'INV-25')).toEqual([
      'INV-25@3: a prune run without a routed target (no request/header): automatic policy does nothing (§3.5 step 1)',
    ])
  })

  it('a log that opens with a tool/result is judged without an internal error', async () => {
    const r = await check([{ seq: 0, time: T, ...placeholder(0) } as Ev])
    expect(r.internalErrors).toEqual([])
  })
})

/**
 * Hand-built log of hardened-capacity.test.ts (route mock/mock-4k, no tools): step 1.1 is the user text of 2,000
 * characters (508), the assistant's read call (10) with usage 1,524 in / 10 out (factor 1,524 / 508 = 3 exactly)
 * and its result (312); a pressure bracket opens at #8 in the pre-step window of step 1.2. Pressure there: 2,354 by
 * the protocol, 1,534 + ⌈3 · 820⌉ = 3,994 calibrated. The checkpoint #10 shadows #2 and keeps [5, 6] (322 P_route).
 */
function calibrated(): Events {
  const user = { id: 'u-1', role: 'user', content: [{ type: 'text', text: 'a'.repeat(2000) }], source: { kind: 'user' } }
  const call = { id: 'a-1', role: 'assistant', content: [{ type: 'tool-call', id: 'c1', name: 'read', arguments: '{}' }], source: { kind: 'model', ...route } }
  const result = { id: 't-1', role: 'user', content: [{ type: 'tool-result', toolCallId: 'c1', content: [{ type: 'text', text: 'b'.repeat(1200) }], isError: false }], source: { kind: 'tool', callId: 'c1' } }
  const drafts: Array<Record<string, unknown>> = [
    { type: 'turn/start', data: { turn: 1 } },
    { type: 'step/start', data: { turn: 1, step: 1 } },
    { type: 'user/message', data: user, surfaceOp: 'append' },
    { type: 'request/header', data: { header: { config: { ...route } }, reason: 'initial' } },
    { type: 'request/context', data: { ...route, contextWindow: 4000 } },
    { type: 'assistant/message', surfaceOp: 'append', data: { turn: 1, step: 1, usage: { inputTokens: 1524, outputTokens: 10 }, message: call } },
    { type: 'tool/result', surfaceOp: 'append', data: { turn: 1, step: 1, message: result } },
    { type: 'step/end', data: { turn: 1, step: 1 } },
    { type: 'compaction/start', data: { compactionId: 'cmp-1', turn: 1 } },
    { type: 'compaction/summary', data: { compactionId: 'cmp-1', summary: [{ type: 'text', text: 'short' }], shadowedRange: { start: 2, end: 2 }, shadowedSeqs: [2], shadowedTokenCount: 508, provider: 'mock', model: 'mock-4k' } },
    { type: 'user/message', surfaceOp: { op: 'replace', start: 2, end: 2 }, sourceEventSeqs: [8, 9, 2], data: { id: 'm-ck1', role: 'user', content: [{ type: 'text', text: 'short' }], source: { kind: 'plugin', plugin: 'compact', compactionId: 'cmp-1' } } },
    { type: 'compaction/end', data: { compactionId: 'cmp-1', turn: 1 } },
  ]
  return drafts.map((d, seq) => ({ seq, time: T + seq, ...d }) as unknown as Ev)
}

describe('INV-25 / INV-29 with a calibrated figure (HARD-8 capacitySanity, factor ×3)', () => {
  it('INV-25: 3,994 calibrated is still below the threshold 4,000 of a 5,000-token window: the message names the factor', async () => {
    const r = await check(calibrated(), manifest({ hardening: { capacitySanity: true } } as never, 5000))
    expect(of(r, 'INV-25')).toEqual([
      'INV-25@8: an automatic pressure bracket below pressure: totalTokens 3994 (calibrated ×3, hardened HARD-8) < threshold 4000 of mock/mock-4k',
    ])
  })

  it('INV-29: the tail 322 counts 966 at ×3, one short of retainTokens 967 (and 966 is kept)', async () => {
    const short = await check(calibrated(), manifest({ retainTokens: 967, hardening: { capacitySanity: true } } as never))
    expect(of(short, 'INV-29')).toEqual([
      'INV-29@10: the retained tail [5, 6] prices 322 (P_route) at calibration ×3 (hardened HARD-8) < retainTokens 967',
    ])
    const kept = await check(calibrated(), manifest({ retainTokens: 966, hardening: { capacitySanity: true } } as never))
    expect(of(kept, 'INV-29')).toEqual([])
  })
})

describe('INV-26: the system head', () => {
  it('does not apply in the rc.8 dialect (no system head, §14.1)', async () => {
    const events = [
      { seq: 0, time: T, type: 'turn/start', data: { turn: 1 } },
      { seq: 1, time: T + 1, type: 'step/start', data: { turn: 1, step: 1 } },
      { seq: 2, time: T + 2, type: 'user/message', data: { id: 'm-u', role: 'user', content: [{ type: 'text', text: 'hi' }], source: { kind: 'user' } }, surfaceOp: 'append' },
    ] as Events
    expect(cov(await check(events, undefined, 'dsh-0.1.0-rc.8'), 'INV-26')).toEqual({
      id: 'INV-26', status: 'not-applicable', reason: 'the rc.8 dialect has no system head (§14.1)', skipped: 0,
    })
  })

  it('an assistant/message replacing the head (#23 replaces 2…2) is reported', async () => {
    const r = await check(ab((e) => { at(e, 23)['surfaceOp'] = { op: 'replace', start: 2, end: 2 } }))
    expect(of(r, 'INV-26')).toEqual(['INV-26@23: replacement 2…2 shadows the system head #2 at position 0'])
  })

  it('a tool/result replacing a span from the head (#15 replaces 2…12) is reported', async () => {
    const r = await check(ab((e) => { at(e, 15)['surfaceOp'] = { op: 'replace', start: 2, end: 12 } }))
    expect(of(r, 'INV-26')).toEqual(['INV-26@15: replacement 2…12 shadows the system head #2 at position 0'])
  })

  it('without a system head (#2 a user message) a span from position 0 is not INV-26\'s business', async () => {
    const r = await check(ab((e) => {
      const s = at(e, 2)
      s.type = 'user/message'
      s.data = { ...s.data, role: 'user', source: { kind: 'user' } }
      at(e, 55)['surfaceOp'] = { op: 'replace', start: 2, end: 42 }
    }))
    expect(of(r, 'INV-26')).toEqual([])
  })
})

/** Appendix B with #2 a user message: no system head, h = 0. */
const headless = (e: Events): void => {
  const s = at(e, 2)
  s.type = 'user/message'
  s.data = { ...s.data, role: 'user', source: { kind: 'user' } }
}
const openPrompt = manifest({ hardening: { openTurnPrompt: true } } as never)
/** Sets the first shadowed seq of the summary #54 (the rest of the log unchanged). */
const firstShadowed = (seqs: number[]) => (e: Events): void => { at(e, 54).data['shadowedSeqs'] = seqs }

describe('INV-27: head-anchored spans, and HARD-6\'s anchor after the open turn\'s prompt', () => {
  it('without a system head the span must start at position 0: #3 at position 1 is reported, naming the surface start', async () => {
    expect(of(await check(ab(headless)), 'INV-27')).toEqual([
      'INV-27@55: the span starts at #3 (position 1), not at position 0, the first node after the surface start',
    ])
  })

  it('an empty shadowedSeqs names no first node: nothing for INV-27 to judge', async () => {
    expect(of(await check(ab(firstShadowed([]))), 'INV-27')).toEqual([])
  })

  it('a summary with another compactionId is not the bracket\'s: INV-27 and INV-29 do not judge its checkpoint', async () => {
    const edit = (e: Events): void => {
      at(e, 54).data['compactionId'] = 'cmp-other'
      at(e, 54).data['shadowedSeqs'] = [10]
    }
    const r = await check(ab(edit), manifest({ retainTokens: 1940 }))
    expect(of(r, 'INV-27')).toEqual([])
    expect(of(r, 'INV-29')).toEqual([])
  })

  it('HARD-6 on: a span starting at #47, right after the open turn\'s prompt #42, is accepted', async () => {
    expect(of(await check(ab(firstShadowed([47])), openPrompt), 'INV-27')).toEqual([])
  })

  it('HARD-6 off: the same span is reported', async () => {
    expect(of(await check(ab(firstShadowed([47])), manifest({})), 'INV-27')).toEqual([
      'INV-27@55: the span starts at #47 (position 8), not at position 1, the first node after the system head',
    ])
  })

  it('HARD-6 on: a span starting at #49 (after the call #47), at #42 (the prompt itself) or at the head #2 is reported', async () => {
    const msg = (seq: number, pos: number) => `INV-27@55: the span starts at #${seq} (position ${pos}), not at position 1, the first node after the system head`
    expect(of(await check(ab(firstShadowed([49])), openPrompt), 'INV-27')).toEqual([msg(49, 9)])
    expect(of(await check(ab(firstShadowed([42])), openPrompt), 'INV-27')).toEqual([msg(42, 7)])
    expect(of(await check(ab(firstShadowed([2])), openPrompt), 'INV-27')).toEqual([msg(2, 0)])
  })

  it('HARD-6 on: the node before the span must be a user/message append: an appended assistant message #42 is no prompt', async () => {
    const r = await check(ab((e) => {
      firstShadowed([47])(e)
      const p = at(e, 42)
      p.type = 'assistant/message'
      p.data = { turn: 3, step: 1, message: { id: 'm-a0', role: 'assistant', content: [{ type: 'text', text: 'Opening math.ts.' }], source: { kind: 'model', ...route } } }
    }), openPrompt)
    expect(of(r, 'INV-27')).toEqual(['INV-27@55: the span starts at #47 (position 8), not at position 1, the first node after the system head'])
  })

  it('HARD-6 on: a user/message that replaces (#42 replaces 37…37) is no appended prompt either', async () => {
    const r = await check(ab((e) => {
      firstShadowed([47])(e)
      at(e, 42)['surfaceOp'] = { op: 'replace', start: 37, end: 37 }
    }), openPrompt)
    // surface [2, 3, 10, 15, 23, 28, 42, 47, 49]: #47 at position 7
    expect(of(r, 'INV-27')).toEqual(['INV-27@55: the span starts at #47 (position 7), not at position 1, the first node after the system head'])
  })

  it('HARD-6 on: a manual bracket between turns has no open turn: a span after the first user message #3 is reported', async () => {
    const events = [
      ...appendixB().filter((x) => x.seq <= 25),
      { seq: 26, time: T + 26, type: 'compaction/start', data: { compactionId: 'cmp-m', turn: null } },
      { seq: 27, time: T + 27, type: 'compaction/summary', data: { compactionId: 'cmp-m', summary: [{ type: 'text', text: 'The test reads math.spec.ts.' }], shadowedRange: { start: 10, end: 15 }, shadowedSeqs: [10, 15], shadowedTokenCount: 30, provider: 'mock', model: 'mock-4k' } },
      { seq: 28, time: T + 28, type: 'user/message', surfaceOp: { op: 'replace', start: 10, end: 15 }, sourceEventSeqs: [26, 27, 10, 15], data: { id: 'm-ck', role: 'user', content: [{ type: 'text', text: 'The test reads math.spec.ts.' }], source: { kind: 'plugin', plugin: 'compact', compactionId: 'cmp-m' } } },
      { seq: 29, time: T + 29, type: 'compaction/end', data: { compactionId: 'cmp-m', turn: null } },
    ] as Events
    expect(of(await check(events, openPrompt), 'INV-27')).toEqual([
      'INV-27@28: the span starts at #10 (position 2), not at position 1, the first node after the system head',
    ])
  })

  it('HARD-6 on: the prompt is searched from the open turn\'s turn/start on, not from a user message just before it', async () => {
    const u = (seq: number, id: string, text: string) => ({ seq, time: T + seq, type: 'user/message', surfaceOp: 'append', data: { id, role: 'user', content: [{ type: 'text', text }], source: { kind: 'user' } } })
    const events = [
      ...appendixB().filter((x) => x.seq <= 39),
      u(40, 'm-x', 'One more thing before the next turn.'),
      { seq: 41, time: T + 41, type: 'turn/start', data: { turn: 3 } },
      { seq: 42, time: T + 42, type: 'step/start', data: { turn: 3, step: 1 } },
      u(43, 'm-u3', 'Open math.ts.'),
      { seq: 44, time: T + 44, type: 'assistant/message', surfaceOp: 'append', data: { turn: 3, step: 1, message: { id: 'm-a4', role: 'assistant', content: [{ type: 'text', text: 'It defines add().' }], source: { kind: 'model', ...route } } } },
      { seq: 45, time: T + 45, type: 'step/end', data: { turn: 3, step: 1 } },
      { seq: 46, time: T + 46, type: 'compaction/start', data: { compactionId: 'cmp-9', turn: 3 } },
      { seq: 47, time: T + 47, type: 'compaction/summary', data: { compactionId: 'cmp-9', summary: [{ type: 'text', text: 'add() only.' }], shadowedRange: { start: 44, end: 44 }, shadowedSeqs: [44], shadowedTokenCount: 20, provider: 'mock', model: 'mock-4k' } },
      { seq: 48, time: T + 48, type: 'user/message', surfaceOp: { op: 'replace', start: 44, end: 44 }, sourceEventSeqs: [46, 47, 44], data: { id: 'm-ck', role: 'user', content: [{ type: 'text', text: 'add() only.' }], source: { kind: 'plugin', plugin: 'compact', compactionId: 'cmp-9' } } },
    ] as Events
    expect(of(await check(events, openPrompt), 'INV-27')).toEqual([])
    // the same log with HARD-6 off: #44 sits at position 9 (surface 2, 3, 10, 15, 23, 28, 37, 40, 43, 44)
    expect(of(await check(events, manifest({})), 'INV-27')).toEqual([
      'INV-27@48: the span starts at #44 (position 9), not at position 1, the first node after the system head',
    ])
  })

  it('HARD-6 on: a seq missing inside the open turn (#41 dropped) is no internal error', async () => {
    const r = await check(ab((e) => { firstShadowed([47])(e); e.splice(e.findIndex((x) => x.seq === 41), 1) }), openPrompt)
    expect(r.internalErrors).toEqual([])
  })
})

describe('INV-25, INV-27, INV-29, INV-30: unusual neighbours are judged, and no hook fails', () => {
  it('INV-25: a tool/result right after an opaque line (#14 with a string shadowedTokenCount) is not a prune pair', async () => {
    const r = await check(ab((e) => { at(e, 14).data['shadowedTokenCount'] = 'x' }))
    expect(of(r, 'INV-02')).toEqual(['INV-02@14: expected a non-negative number, got the string "x" (field data.shadowedTokenCount)'])
    expect(of(r, 'INV-25')).toEqual([])
    expect(r.internalErrors).toEqual([])
  })

  it('INV-27: a plain user/message inside the open bracket, before its summary (#53 replaced), is not a checkpoint', async () => {
    const r = await check(ab((e) => {
      const x = at(e, 53)
      x.type = 'user/message'
      x.data = { id: 'm-x', role: 'user', content: [{ type: 'text', text: 'hi' }], source: { kind: 'user' } }
      x['surfaceOp'] = 'append'
    }))
    expect(of(r, 'INV-27')).toEqual([])
    expect(r.internalErrors).toEqual([])
  })

  it('INV-29: a pressure bracket without a routed target (every header names no provider) leaves the tail unjudged', async () => {
    const r = await check(ab((e) => {
      for (const s of [4, 17, 31]) ((at(e, s).data['header'] as Record<string, unknown>)['config'] as Record<string, unknown>)['provider'] = ''
    }))
    expect(of(r, 'INV-25')).toEqual([
      'INV-25@14: a prune run without a routed target (no request/header): automatic policy does nothing (§3.5 step 1)',
      'INV-25@51: an automatic pressure bracket without a routed target (no request/header): automatic policy does nothing (§3.5 step 1)',
    ])
    expect(of(r, 'INV-29')).toEqual([])
    expect(r.internalErrors).toEqual([])
  })

  it('INV-30: a whitespace-only summary block is not remembered, so the same whitespace on the surface is no copy', async () => {
    const r = await check(ab((e) => {
      ;(at(e, 54).data['summary'] as Array<Record<string, unknown>>).push({ type: 'text', text: '  \n ' })
      ;(at(e, 64).data['message'] as { content: Array<Record<string, unknown>> }).content[0]!['text'] = '  \n '
    }))
    expect(of(r, 'INV-30')).toEqual([])
    expect(r.internalErrors).toEqual([])
  })

  it('INV-30: a summary holding a non-text block (INV-16, folded as written) is judged without failing', async () => {
    const r = await check(ab((e) => { (at(e, 54).data['summary'] as Array<Record<string, unknown>>)[0]!['type'] = 'image' }))
    expect(of(r, 'INV-16')).toEqual([
      'INV-16@54: expected \'text\', got the string "image" (field data.summary[0].type)',
      'INV-16@54: summary holds a block that is not text',
    ])
    expect(of(r, 'INV-30')).toEqual([])
    expect(r.internalErrors).toEqual([])
  })
})
