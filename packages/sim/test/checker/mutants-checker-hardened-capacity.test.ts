/**
 * HARD-8 (hardened `capacitySanity`, issue #19; packages/core/docs/hardened.md "HARD-8") and the checker's own fold of
 * the capacity evidence (`src/checker/hardened-capacity.ts`), every figure written out by hand. Route mock/mock-4k,
 * header without tools (envelope 0, seed dialect). The logs reuse the running example of hardened-capacity.test.ts:
 * turn 1 step 1, a user text of 2000 characters (500 + 4 + 4 = 508), usage 1524 in / 10 out at #5 (factor
 * 1524 / 508 = 3.0; 1534 in all), step 2 opened at #7. It pins:
 * - `statedPromptTokens`: the Anthropic "exceed context limit: N + …" wording with a many-digit N, and a stated 0 is
 *   no evidence;
 * - `CapacityEvidenceModel`: the counted prompt (input + cache read + cache write), an empty estimate or a counted 0
 *   is no observation, the factor is rounded up to tenths and bounded to [1000, 8000], only a
 *   `CONTEXT_WINDOW_EXCEEDED` rejection under a header is evidence, the excess is the first usage strictly above the
 *   window of the route's own latest `request/context`, and `evidenceSeq` is -1 without evidence (also for a route
 *   only a warning record created);
 * - `calibratedPressure`: an estimated baseline scales the whole total (`⌈f · total⌉`), a usage baseline only the delta;
 * - `checkedPermille`: a pressure bracket without a routed target is INV-25's "without a routed target", not a crash;
 * - HARD-8's record and dispatch messages, exactly (absent / present calibration, with and without evidence, a warning
 *   that differs in any one field, a second warning);
 * - the dispatch gate: only the first chunk of an attempt of the open step is a dispatch (not a later chunk, not a
 *   chunk of another step or turn, not one outside a step), and only under a route context of the routed target
 *   (none folded, no routed target, another provider or model: no judgement).
 */
import { type EpochHeader, type EventDataMap, type EventDraft, type LogEvent, type RunManifest, type SessionEvent } from '@compaction-sim/core'
import { describe, expect, it } from 'vitest'
import { checkLog, type CheckReport } from '../../src/checker/run.ts'
import { CapacityEvidenceModel, calibratedPressure, statedPromptTokens } from '../../src/checker/hardened-capacity.ts'
import { reportOf, violationLines } from './support.ts'

const T = 1_700_000_000_000
const route = { provider: 'mock', model: 'mock-4k' }
const H: EpochHeader = { config: { ...route } } as EpochHeader

const manifest: RunManifest = {
  scenario: 'mutants-hardened-capacity', compaction: { hardening: { capacitySanity: true } } as never,
  routes: [{ ...route, contextWindow: 4000 }], faults: [],
}

const ctx = (contextWindow: number, extra: Record<string, unknown> = {}, r: { provider: string; model: string } = route): EventDraft =>
  ({ time: T, type: 'request/context', data: { ...r, contextWindow, ...extra } }) as EventDraft
const chunk = (turn: number, step: number, c: Record<string, unknown>): EventDraft =>
  ({ time: T, type: 'assistant/chunk', data: { turn, step, chunk: c } }) as EventDraft
const stop = { type: 'finish', reason: { kind: 'stop' } }
const user = { time: T, type: 'user/message', data: { id: 'u-1', role: 'user', content: [{ type: 'text', text: 'a'.repeat(2000) }], source: { kind: 'user' } }, surfaceOp: 'append' } as EventDraft
const header = { time: T, type: 'request/header', data: { header: { config: { ...route } }, reason: 'initial' } } as EventDraft

/** seq 0…7: turn 1 step 1 with usage 1524 / 10 at #5 (factor 3), then step 2 opens at #7. */
function step1(window: number): EventDraft[] {
  return [
    { time: T, type: 'turn/start', data: { turn: 1 } },
    { time: T, type: 'step/start', data: { turn: 1, step: 1 } },
    user,
    header,
    ctx(window),
    {
      time: T, type: 'assistant/message', surfaceOp: 'append',
      data: { turn: 1, step: 1, usage: { inputTokens: 1524, outputTokens: 10 }, message: { id: 'a-1', role: 'assistant', content: [{ type: 'text', text: 'done' }], source: { kind: 'model', ...route } } },
    },
    { time: T, type: 'step/end', data: { turn: 1, step: 1 } },
    { time: T, type: 'step/start', data: { turn: 1, step: 2 } },
  ] as EventDraft[]
}

/** Drafts numbered from seq 0 (no validation beyond the checker's own). */
function eventsOf(drafts: EventDraft[]): LogEvent[] {
  return drafts.map((d, seq) => ({ seq, ...structuredClone(d) })) as LogEvent[]
}

async function reportFor(drafts: EventDraft[]): Promise<CheckReport> {
  return reportOf(await checkLog(eventsOf(drafts), { dialect: 'seed', manifest }))
}

/** HARD-8's violation lines, after asserting that no check failed internally. */
async function hard8(drafts: EventDraft[]): Promise<string[]> {
  const r = await reportFor(drafts)
  expect(r.internalErrors).toEqual([])
  return violationLines(r, 'HARD-8')
}

const NO_FACTOR_AT_8 = 'HARD-8@8: calibration absent for mock/mock-4k, but the logged evidence (#5) implies 3'

/** An assistant/message at `seq` with `usage`, for the evidence model. */
function usageAt(seq: number, usage: Record<string, number>): SessionEvent<'assistant/message'> {
  return {
    seq, time: T, type: 'assistant/message', surfaceOp: 'append',
    data: { turn: 1, step: 1, usage, message: { id: `a-${seq}`, role: 'assistant', content: [{ type: 'text', text: 'done' }], source: { kind: 'model', ...route } } },
  } as unknown as SessionEvent<'assistant/message'>
}
const windowOf = (contextWindow: number, r: { provider: string; model: string } = route): EventDataMap['request/context'] =>
  ({ ...r, contextWindow }) as EventDataMap['request/context']

describe('statedPromptTokens: the counted prompt a window rejection states', () => {
  it('reads the many-digit N of Anthropic "input length and `max_tokens` exceed context limit: N + …"', () => {
    expect(statedPromptTokens('input length and `max_tokens` exceed context limit: 199000 + 4096 > 200000, decrease input length or `max_tokens` and try again')).toBe(199000)
  })

  it('a stated count of 0 is no evidence', () => {
    expect(statedPromptTokens("This model's maximum context length is 4000 tokens. However, your messages resulted in 0 tokens.")).toBeNull()
  })
})

describe('CapacityEvidenceModel: the per-route evidence fold', () => {
  it('without evidence: factor 1000, evidence seq -1, no pending warning', () => {
    const m = new CapacityEvidenceModel()
    expect(m.permille('mock', 'mock-4k')).toBe(1000)
    expect(m.evidenceSeq('mock', 'mock-4k')).toBe(-1)
    expect(m.pendingWarning('mock', 'mock-4k')).toBeNull()
  })

  it('a warning record alone creates no evidence: the route keeps factor 1000 and evidence seq -1', () => {
    const m = new CapacityEvidenceModel()
    m.onContext({ ...route, contextWindow: 1000, capacityWarning: { usageSeq: 5, usageTokens: 1534, contextWindow: 1000 } } as EventDataMap['request/context'])
    expect(m.evidenceSeq('mock', 'mock-4k')).toBe(-1)
    expect(m.permille('mock', 'mock-4k')).toBe(1000)
    expect(m.pendingWarning('mock', 'mock-4k')).toBeNull()
  })

  it('usage 1524 for the 508-token surface: factor 3000, evidence #5; another route has none', () => {
    const m = new CapacityEvidenceModel()
    m.onUsage(usageAt(5, { inputTokens: 1524, outputTokens: 10 }), H, 'seed', 508, windowOf(4000))
    expect(m.permille('mock', 'mock-4k')).toBe(3000)
    expect(m.evidenceSeq('mock', 'mock-4k')).toBe(5)
    expect(m.evidenceSeq('mock', 'other')).toBe(-1)
  })

  it('counts input + cache read + cache write: 100 + 200 + 300 = 600 for a 100-token surface → 6000; 650 in all exceeds 600', () => {
    const m = new CapacityEvidenceModel()
    m.onUsage(usageAt(5, { inputTokens: 100, cacheReadTokens: 200, cacheWriteTokens: 300, outputTokens: 50 }), H, 'seed', 100, windowOf(600))
    expect(m.permille('mock', 'mock-4k')).toBe(6000)
    expect(m.pendingWarning('mock', 'mock-4k')).toEqual({ usageSeq: 5, usageTokens: 650, contextWindow: 600 })
  })

  it('an empty estimate (no surface, no tools) is no observation', () => {
    const m = new CapacityEvidenceModel()
    m.onUsage(usageAt(3, { inputTokens: 100, outputTokens: 10 }), H, 'seed', 0, windowOf(4000))
    expect(m.permille('mock', 'mock-4k')).toBe(1000)
    expect(m.evidenceSeq('mock', 'mock-4k')).toBe(-1)
  })

  it('a counted 0 is no observation: the latest factor (3000 from #5) stays', () => {
    const m = new CapacityEvidenceModel()
    m.onUsage(usageAt(5, { inputTokens: 1524, outputTokens: 10 }), H, 'seed', 508, windowOf(4000))
    m.onUsage(usageAt(9, { inputTokens: 0, outputTokens: 10 }), H, 'seed', 517, windowOf(4000))
    expect(m.permille('mock', 'mock-4k')).toBe(3000)
    expect(m.evidenceSeq('mock', 'mock-4k')).toBe(5)
  })

  it('the factor is never below 1: 300 counted for 1000 estimated → 1000 (not 300); rounding up: 1001 / 1000 → 1100', () => {
    const m = new CapacityEvidenceModel()
    m.onUsage(usageAt(5, { inputTokens: 300, outputTokens: 0 }), H, 'seed', 1000, windowOf(4000))
    expect(m.permille('mock', 'mock-4k')).toBe(1000)
    expect(m.evidenceSeq('mock', 'mock-4k')).toBe(5)
    m.onUsage(usageAt(9, { inputTokens: 1001, outputTokens: 0 }), H, 'seed', 1000, windowOf(4000))
    expect(m.permille('mock', 'mock-4k')).toBe(1100)
  })

  it('only a CONTEXT_WINDOW_EXCEEDED rejection is evidence (a SERVER failure with the same text is not)', () => {
    const m = new CapacityEvidenceModel()
    m.onRejection(9, 'SERVER', 'your messages resulted in 4400 tokens', H, 'seed', 517)
    expect(m.permille('mock', 'mock-4k')).toBe(1000)
    expect(m.evidenceSeq('mock', 'mock-4k')).toBe(-1)
    m.onRejection(11, 'CONTEXT_WINDOW_EXCEEDED', 'your messages resulted in 1551 tokens', H, 'seed', 517) // 1551 / 517 = 3.0
    expect(m.permille('mock', 'mock-4k')).toBe(3000)
    expect(m.evidenceSeq('mock', 'mock-4k')).toBe(11)
  })

  it('a rejection without a folded header is no evidence (and no crash)', () => {
    const m = new CapacityEvidenceModel()
    expect(() => m.onRejection(9, 'CONTEXT_WINDOW_EXCEEDED', 'your messages resulted in 4400 tokens', undefined, 'seed', 517)).not.toThrow()
    expect(m.permille('mock', 'mock-4k')).toBe(1000)
  })

  it('the excess is the first usage strictly above the window: 1534 = window is none, 1610 at #9 is, 2000 at #13 does not replace it', () => {
    const m = new CapacityEvidenceModel()
    m.onUsage(usageAt(5, { inputTokens: 1524, outputTokens: 10 }), H, 'seed', 508, windowOf(1534))
    expect(m.pendingWarning('mock', 'mock-4k')).toBeNull()
    m.onUsage(usageAt(9, { inputTokens: 1600, outputTokens: 10 }), H, 'seed', 517, windowOf(1534))
    m.onUsage(usageAt(13, { inputTokens: 2000, outputTokens: 0 }), H, 'seed', 530, windowOf(1534))
    expect(m.pendingWarning('mock', 'mock-4k')).toEqual({ usageSeq: 9, usageTokens: 1610, contextWindow: 1534 })
  })

  it('the window is the route\'s own: a request/context of another provider or another model is no excess', () => {
    for (const other of [{ provider: 'other', model: 'mock-4k' }, { provider: 'mock', model: 'other' }]) {
      const m = new CapacityEvidenceModel()
      m.onUsage(usageAt(5, { inputTokens: 1524, outputTokens: 10 }), H, 'seed', 508, windowOf(1000, other))
      expect(m.pendingWarning('mock', 'mock-4k')).toBeNull()
      expect(m.pendingWarning(other.provider, other.model)).toBeNull()
    }
  })
})

describe('calibratedPressure: the calibrated §2.5 figure', () => {
  it('an estimated baseline scales the whole total: ⌈3 · 1000⌉ = 3000, ⌈1.5 · 1001⌉ = 1502', () => {
    expect(calibratedPressure({ totalTokens: 1000, baseline: { kind: 'estimated', tokens: 1000 } }, 3000)).toBe(3000)
    expect(calibratedPressure({ totalTokens: 1001, baseline: { kind: 'estimated', tokens: 1001 } }, 1500)).toBe(1502)
  })

  it('a usage baseline scales only the delta: 1534 + ⌈3 · 820⌉ = 3994', () => {
    expect(calibratedPressure({ totalTokens: 2354, baseline: { kind: 'usage', tokens: 1534 } }, 3000)).toBe(3994)
  })
})

describe('checkedPermille: no routed target under calibrate', () => {
  it('a pressure bracket without a request/header is INV-25\'s "without a routed target", not an internal failure', async () => {
    const r = await reportFor([
      { time: T, type: 'turn/start', data: { turn: 1 } },
      { time: T, type: 'step/start', data: { turn: 1, step: 1 } },
      user,
      { time: T, type: 'assistant/message', surfaceOp: 'append', data: { turn: 1, step: 1, message: { id: 'a-1', role: 'assistant', content: [{ type: 'text', text: 'done' }], source: { kind: 'model', ...route } } } },
      { time: T, type: 'step/end', data: { turn: 1, step: 1 } },
      { time: T, type: 'compaction/start', data: { compactionId: 'cmp-1', turn: 1 } },
    ] as EventDraft[])
    expect(r.internalErrors).toEqual([])
    expect(violationLines(r, 'INV-25')).toEqual(['INV-25@5: an automatic pressure bracket without a routed target (no request/header): automatic policy does nothing (§3.5 step 1)'])
  })
})

describe('HARD-8: the record and dispatch messages', () => {
  it('an unwritten warning and a missing factor, at the record (#8) and at the dispatch (#9)', async () => {
    expect(await hard8([...step1(1000), ctx(1000), chunk(1, 2, stop)])).toEqual([
      'HARD-8@8: usage of 1534 tokens #5 exceeds the reported window 1000 of mock/mock-4k, but this request/context does not carry that capacityWarning',
      NO_FACTOR_AT_8,
      'HARD-8@9: request dispatched for mock/mock-4k before the capacityWarning for the usage #5 was written',
      'HARD-8@9: request dispatched for mock/mock-4k under calibration absent, but the logged evidence implies 3',
    ])
  })

  it('a factor 2 without evidence: "implies none (factor 1)" at the record (#4) and at the dispatch (#5)', async () => {
    expect(await hard8([
      { time: T, type: 'turn/start', data: { turn: 1 } },
      { time: T, type: 'step/start', data: { turn: 1, step: 1 } },
      user,
      header,
      ctx(4000, { calibration: 2 }),
      chunk(1, 1, stop),
    ] as EventDraft[])).toEqual([
      'HARD-8@4: calibration 2 for mock/mock-4k, but the logged evidence implies none (factor 1)',
      'HARD-8@5: request dispatched for mock/mock-4k under calibration 2, but the logged evidence implies none (factor 1)',
    ])
  })

  it('a warning that differs from the excess in usageSeq, usageTokens or contextWindow is not that warning', async () => {
    for (const warning of [
      { usageSeq: 4, usageTokens: 1534, contextWindow: 1000 },
      { usageSeq: 5, usageTokens: 1533, contextWindow: 1000 },
      { usageSeq: 5, usageTokens: 1534, contextWindow: 4000 },
    ]) {
      expect(await hard8([...step1(1000), ctx(1000, { calibration: 3, capacityWarning: warning })]), JSON.stringify(warning)).toEqual([
        'HARD-8@8: usage of 1534 tokens #5 exceeds the reported window 1000 of mock/mock-4k, but this request/context does not carry that capacityWarning',
      ])
    }
  })

  it('a second warning of the route is flagged once per record', async () => {
    const warning = { usageSeq: 5, usageTokens: 1534, contextWindow: 1000 }
    expect(await hard8([...step1(1000), ctx(1000, { calibration: 3, capacityWarning: warning }), ctx(1000, { calibration: 3, capacityWarning: warning })])).toEqual([
      'HARD-8@9: capacityWarning for mock/mock-4k without unwarned usage above its reported window (once per route)',
    ])
  })
})

describe('HARD-8: which chunk is a dispatch', () => {
  it('only the first chunk of an attempt (#9), not its finish (#10)', async () => {
    expect(await hard8([...step1(4000), ctx(4000), chunk(1, 2, { type: 'block-start', index: 0, blockType: 'text' }), chunk(1, 2, stop)])).toEqual([
      NO_FACTOR_AT_8,
      'HARD-8@9: request dispatched for mock/mock-4k under calibration absent, but the logged evidence implies 3',
    ])
  })

  it('a chunk of another step (turn 1 step 5) or of another turn (turn 2 step 2) is no dispatch of the open step', async () => {
    expect(await hard8([...step1(4000), ctx(4000), chunk(1, 5, stop)])).toEqual([NO_FACTOR_AT_8])
    expect(await hard8([...step1(4000), ctx(4000), chunk(2, 2, stop)])).toEqual([NO_FACTOR_AT_8])
  })

  it('a chunk while no step is open is no dispatch', async () => {
    // #0…#6 of step1 (step 1 ended at #6), the record at #7, a chunk at #8.
    expect(await hard8([...step1(4000).slice(0, 7), ctx(4000), chunk(1, 1, stop)])).toEqual([
      'HARD-8@7: calibration absent for mock/mock-4k, but the logged evidence (#5) implies 3',
    ])
  })

  it('a dispatch before any request/context, or without a routed target, is not judged', async () => {
    const open = [
      { time: T, type: 'turn/start', data: { turn: 1 } },
      { time: T, type: 'step/start', data: { turn: 1, step: 1 } },
      user,
    ] as EventDraft[]
    expect(await hard8([...open, header, chunk(1, 1, stop)])).toEqual([])
    expect(await hard8([...open, ctx(4000), chunk(1, 1, stop)])).toEqual([])
  })

  it('a dispatch under the record of another provider or another model is not judged against the routed target', async () => {
    // The routed target mock/mock-4k implies 3 from #5; the record in force (#8) is another route's (factor 1 there).
    expect(await hard8([...step1(4000), ctx(4000, {}, { provider: 'other', model: 'mock-4k' }), chunk(1, 2, stop)])).toEqual([])
    expect(await hard8([...step1(4000), ctx(4000, {}, { provider: 'mock', model: 'other' }), chunk(1, 2, stop)])).toEqual([])
  })
})
