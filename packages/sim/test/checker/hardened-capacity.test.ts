/**
 * HARD-8 (hardened `capacitySanity`, issue #19) on hand-built logs, and the INV-25 / INV-29 acceptance of calibrated
 * figures under the rule. Route mock/mock-4k, no tools (envelope 0). Turn 1 step 1: the user text of 2000 characters
 * prices 500 + 4 + 4 = 508; the provider counted 1524 prompt tokens for it (factor 1524 / 508 = 3.0 exactly) and
 * 1524 + 10 output = 1534 in all, above the reported window of 1000.
 */
import { EventLog, type EventDraft, type LogEvent, type RunManifest } from '@compaction-sim/core'
import { describe, expect, it } from 'vitest'
import { checkLog } from '../../src/checker/run.ts'
import { statedPromptTokens } from '../../src/checker/hardened-capacity.ts'
import { appendixB, found, reportOf } from './support.ts'

const T = 1_700_000_000_000
const route = { provider: 'mock', model: 'mock-4k' }

function manifest(compaction: RunManifest['compaction']): RunManifest {
  return { scenario: 'hardened-capacity', compaction, routes: [{ ...route, contextWindow: 4000 }], faults: [] }
}
const on = manifest({ hardening: { capacitySanity: true } } as never)
const hard8 = (ids: string[]): string[] => ids.filter((v) => v.startsWith('HARD-8@'))

const ctx = (contextWindow: number, extra: Record<string, unknown> = {}): EventDraft =>
  ({ time: T, type: 'request/context', data: { ...route, contextWindow, ...extra } }) as EventDraft
const chunk = (turn: number, step: number, chunk: Record<string, unknown>): EventDraft =>
  ({ time: T, type: 'assistant/chunk', data: { turn, step, chunk } }) as EventDraft

/** seq 0…8: turn 1 step 1 with usage, then step 2 opens. */
function step1(window: number): EventDraft[] {
  return [
    { time: T, type: 'turn/start', data: { turn: 1 } },
    { time: T, type: 'step/start', data: { turn: 1, step: 1 } },
    { time: T, type: 'user/message', data: { id: 'u-1', role: 'user', content: [{ type: 'text', text: 'a'.repeat(2000) }], source: { kind: 'user' } }, surfaceOp: 'append' },
    { time: T, type: 'request/header', data: { header: { config: { ...route } }, reason: 'initial' } },
    ctx(window),
    {
      time: T, type: 'assistant/message', surfaceOp: 'append',
      data: { turn: 1, step: 1, usage: { inputTokens: 1524, outputTokens: 10 }, message: { id: 'a-1', role: 'assistant', content: [{ type: 'text', text: 'done' }], source: { kind: 'model', ...route } } },
    },
    { time: T, type: 'step/end', data: { turn: 1, step: 1 } },
    { time: T, type: 'step/start', data: { turn: 1, step: 2 } },
  ] as EventDraft[]
}

function eventsOf(drafts: EventDraft[]): LogEvent[] {
  const log = new EventLog({ dialect: 'seed' })
  for (const d of drafts) log.append(d)
  return structuredClone([...log.events]) as LogEvent[]
}

const warning = { usageSeq: 5, usageTokens: 1534, contextWindow: 1000 }

describe('HARD-8 — capacity sanity', () => {
  it('is not registered for a faithful run or when only another rule is on', async () => {
    const events = eventsOf([...step1(1000), ctx(1000), chunk(1, 2, { type: 'finish', reason: { kind: 'stop' } })])
    for (const compaction of [{}, { hardening: { openTurnPrompt: true } }]) {
      const result = await checkLog(events, { dialect: 'seed', manifest: manifest(compaction as never) })
      expect(reportOf(result).coverage.some((c) => c.id === 'HARD-8')).toBe(false)
      expect(hard8(found(result))).toEqual([])
    }
  })

  it('passes the record that carries the warning (once) and the factor 3', async () => {
    const events = eventsOf([
      ...step1(1000), ctx(1000, { calibration: 3, capacityWarning: warning }), chunk(1, 2, { type: 'finish', reason: { kind: 'stop' } }),
      ctx(1000, { calibration: 3 }), // a later record of the same route: no second warning, the same factor
    ])
    const result = await checkLog(events, { dialect: 'seed', manifest: on })
    expect(reportOf(result).coverage.find((c) => c.id === 'HARD-8')).toMatchObject({ status: 'evaluated' })
    expect(hard8(found(result))).toEqual([])
  })

  it('flags a missing warning and a missing factor at the record (seq 8) and at the dispatch (seq 9)', async () => {
    const events = eventsOf([...step1(1000), ctx(1000, { imageTokens: 85 }), chunk(1, 2, { type: 'finish', reason: { kind: 'stop' } })])
    const result = await checkLog(events, { dialect: 'seed', manifest: on })
    expect(hard8(found(result))).toEqual(['HARD-8@8', 'HARD-8@8', 'HARD-8@9', 'HARD-8@9'])
  })

  it('flags a second warning, a wrong factor, and a factor under calibrate: false', async () => {
    const twice = eventsOf([...step1(1000), ctx(1000, { calibration: 3, capacityWarning: warning }), ctx(1000, { calibration: 3, capacityWarning: warning })])
    expect(hard8(found(await checkLog(twice, { dialect: 'seed', manifest: on })))).toEqual(['HARD-8@9'])
    const wrong = eventsOf([...step1(4000), ctx(4000, { calibration: 3.1 })]) // 1534 ≤ 4000: no warning is due
    expect(hard8(found(await checkLog(wrong, { dialect: 'seed', manifest: on })))).toEqual(['HARD-8@8'])
    const right = eventsOf([...step1(4000), ctx(4000, { calibration: 3 })])
    expect(hard8(found(await checkLog(right, { dialect: 'seed', manifest: on })))).toEqual([])
    const off = manifest({ hardening: { capacitySanity: { calibrate: false } } } as never)
    expect(hard8(found(await checkLog(right, { dialect: 'seed', manifest: off })))).toEqual(['HARD-8@8'])
  })

  it('recomputes the factor from a window rejection: 4400 counted for the 517-token surface → 8.6, bounded to 8', async () => {
    // After step 1 the surface is 508 + 9 (the assistant's "done": 1 + 4 + 4) = 517.
    const rejected = chunk(1, 2, { type: 'finish', reason: { kind: 'error', failure: { code: 'CONTEXT_WINDOW_EXCEEDED', message: "This model's maximum context length is 4000 tokens. However, your messages resulted in 4400 tokens. Please reduce the length of the messages." } } })
    const events = eventsOf([...step1(4000), ctx(4000, { calibration: 3 }), rejected, ctx(4000, { calibration: 8 })])
    expect(hard8(found(await checkLog(events, { dialect: 'seed', manifest: on })))).toEqual([])
    const stale = eventsOf([...step1(4000), ctx(4000, { calibration: 3 }), rejected, chunk(1, 2, { type: 'finish', reason: { kind: 'stop' } })])
    expect(hard8(found(await checkLog(stale, { dialect: 'seed', manifest: on })))).toEqual(['HARD-8@10']) // dispatched under 3
    expect(statedPromptTokens('(8500 in the messages, 500 in the completion)')).toBe(8500)
    expect(statedPromptTokens('prompt is too long: 210000 tokens > 200000 maximum')).toBe(210000)
    expect(statedPromptTokens('context length exceeded')).toBeNull()
  })

  it('Appendix B under the rule: its usage implies 150 / 94 → 1.6 at seq 9, which its records do not carry', async () => {
    // #9 has usage 150 in for the request of the 94-token prefix: tools 46 + system 28 + user 20.
    const result = await checkLog(appendixB(), { dialect: 'seed', manifest: manifest({ hardening: { capacitySanity: true } } as never) })
    const first = hard8(found(result))[0]
    expect(first).toBeDefined()
    expect(reportOf(result).violations.find((v) => v.id === 'HARD-8')?.message).toContain('implies 1.6')
  })
})

/**
 * seq 0…8 for INV-25 / INV-29, window 4000 (threshold 3200, retain 640). Step 1: user 508, the assistant's read call
 * (1 + 1 + 4 + 4 = 10) with usage 1524 in / 10 out, its result of 1200 characters (300 + 4 + 4 + 4 = 312); then a
 * pressure bracket opens at the pre-step of step 2.
 */
function pressureStep(): EventDraft[] {
  return [
    { time: T, type: 'turn/start', data: { turn: 1 } },
    { time: T, type: 'step/start', data: { turn: 1, step: 1 } },
    { time: T, type: 'user/message', data: { id: 'u-1', role: 'user', content: [{ type: 'text', text: 'a'.repeat(2000) }], source: { kind: 'user' } }, surfaceOp: 'append' },
    { time: T, type: 'request/header', data: { header: { config: { ...route } }, reason: 'initial' } },
    ctx(4000),
    {
      time: T, type: 'assistant/message', surfaceOp: 'append',
      data: { turn: 1, step: 1, usage: { inputTokens: 1524, outputTokens: 10 }, message: { id: 'a-1', role: 'assistant', content: [{ type: 'tool-call', id: 'c1', name: 'read', arguments: '{}' }], source: { kind: 'model', ...route } } },
    },
    {
      time: T, type: 'tool/result', surfaceOp: 'append',
      data: { turn: 1, step: 1, message: { id: 't-1', role: 'user', content: [{ type: 'tool-result', toolCallId: 'c1', content: [{ type: 'text', text: 'b'.repeat(1200) }], isError: false }], source: { kind: 'tool', callId: 'c1' } } },
    },
    { time: T, type: 'step/end', data: { turn: 1, step: 1 } },
    { time: T, type: 'compaction/start', data: { compactionId: 'cmp-1', turn: 1 } },
  ] as EventDraft[]
}

describe('INV-25 under HARD-8: a pressure bracket opened by the calibrated figure', () => {
  // Window 4000: threshold 3200. Step 1: user 508, the assistant's read call (1 + 1 + 4 + 4 = 10) with usage 1524 in /
  // 10 out, its result of 1200 characters (300 + 4 + 4 + 4 = 312). Pre-step of step 2: usage 1534 + delta 820 = 2354
  // by the protocol; calibrated ×3: 1534 + 2460 = 3994.
  const drafts = pressureStep
  const inv25 = (ids: string[]): string[] => ids.filter((v) => v.startsWith('INV-25@'))

  it('is below pressure by the protocol (faithful manifest: INV-25 at seq 8)', async () => {
    expect(inv25(found(await checkLog(eventsOf(drafts()), { dialect: 'seed', manifest: manifest({}) })))).toEqual(['INV-25@8'])
  })

  it('is above the threshold by the calibrated figure under capacitySanity, and only with calibrate', async () => {
    expect(inv25(found(await checkLog(eventsOf(drafts()), { dialect: 'seed', manifest: on })))).toEqual([])
    const off = manifest({ hardening: { capacitySanity: { calibrate: false } } } as never)
    expect(inv25(found(await checkLog(eventsOf(drafts()), { dialect: 'seed', manifest: off })))).toEqual(['INV-25@8'])
  })
})

describe('INV-29 under HARD-8: the retained tail counted at the calibration factor', () => {
  // The bracket above summarizes the user text (seq 2) and keeps the call and its result: 10 + 312 = 322 < 640, but
  // 322 · 3 = 966 ≥ 640 with the factor (the engine's budget is ⌈640 / 3⌉ = 214).
  const bracket = (): EventDraft[] => [
    ...pressureStep(),
    {
      time: T, type: 'compaction/summary',
      data: { compactionId: 'cmp-1', summary: [{ type: 'text', text: 'short' }], shadowedRange: { start: 2, end: 2 }, shadowedSeqs: [2], shadowedTokenCount: 508, provider: 'mock', model: 'mock-4k' },
    },
    {
      time: T, type: 'user/message', surfaceOp: { op: 'replace', start: 2, end: 2 }, sourceEventSeqs: [8, 9, 2],
      data: { id: 'm-ck1', role: 'user', content: [{ type: 'text', text: 'short' }], source: { kind: 'plugin', plugin: 'compact', compactionId: 'cmp-1' } },
    },
    { time: T, type: 'compaction/end', data: { compactionId: 'cmp-1', turn: 1 } },
  ] as EventDraft[]
  const inv29 = (ids: string[]): string[] => ids.filter((v) => v.startsWith('INV-29@'))

  it('is short of retainTokens by the protocol (INV-29 at the checkpoint, seq 10)', async () => {
    expect(inv29(found(await checkLog(eventsOf(bracket()), { dialect: 'seed', manifest: manifest({}) })))).toEqual(['INV-29@10'])
  })

  it('covers retainTokens at the factor under capacitySanity (and not with calibrate: false)', async () => {
    expect(inv29(found(await checkLog(eventsOf(bracket()), { dialect: 'seed', manifest: on })))).toEqual([])
    const off = manifest({ hardening: { capacitySanity: { calibrate: false } } } as never)
    expect(inv29(found(await checkLog(eventsOf(bracket()), { dialect: 'seed', manifest: off })))).toEqual(['INV-29@10'])
  })
})
