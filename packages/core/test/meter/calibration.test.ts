/**
 * Hardened HARD-8 (`hardening.capacitySanity`, docs/hardened.md): the capacity evidence the meter folds (calibration
 * from usage and from window rejections, usage above the reported window), the calibrated pressure and retained
 * budget the engine uses, and the `request/context` notes. Every figure is written out by hand.
 */
import { describe, expect, it } from 'vitest'
import { routeContextRecord } from '../../src/agent/request.ts'
import type { EventDraft } from '../../src/log/events.ts'
import {
  calibratedRetain, calibratedTotal, calibrationPermille, overflowPromptTokens, scaleTokens,
} from '../../src/meter/calibration.ts'
import { TokenMeter } from '../../src/meter/meter.ts'
import { bench } from '../compaction/support/bench.ts'
import { assistant, logOf, marker, result, user } from '../support/events.ts'

const T = 1_700_000_000_000
const header: EventDraft<'request/header'> = { time: T, type: 'request/header', data: { header: { config: { provider: 'mock', model: 'mock-4k' } }, reason: 'initial' } }
const context = (contextWindow: number, extra: Record<string, unknown> = {}): EventDraft<'request/context'> =>
  ({ time: T, type: 'request/context', data: { provider: 'mock', model: 'mock-4k', contextWindow, ...extra } })
const withUsage = (d: EventDraft<'assistant/message'>, inputTokens: number, outputTokens: number): EventDraft<'assistant/message'> =>
  ({ ...d, data: { ...d.data, usage: { inputTokens, outputTokens } } })
const rejection = (message: string, turn = 1, step = 2): EventDraft<'assistant/chunk'> =>
  ({ time: T, type: 'assistant/chunk', data: { turn, step, chunk: { type: 'finish', reason: { kind: 'error', failure: { code: 'CONTEXT_WINDOW_EXCEEDED', message } } } } })

/**
 * Turn 1 step 1 on mock/mock-4k (no tools: envelope 0): the user text of 2000 characters prices 500 + 4 + 4 = 508;
 * the assistant's one `read` call 1 + 1 + 4 + 4 = 10; the result of 1200 characters 300 + 4 + 4 + 4 = 312. The
 * provider counted 1524 prompt tokens for the request (the 508-token surface): a factor of exactly 3.
 */
function denseStep(window: number): EventDraft[] {
  return [
    marker('turn/start'), marker('step/start'), user('a'.repeat(2000)), header, context(window),
    withUsage(assistant(['c1']), 1524, 10), result('c1', 'b'.repeat(1200)), marker('step/end'),
  ]
}

describe('HARD-8 calibration arithmetic', () => {
  it('rounds observed / estimated up to tenths, bounded to [1, 8]', () => {
    expect(calibrationPermille(1524, 508)).toBe(3000) // exactly 3
    expect(calibrationPermille(8760, 2564)).toBe(3500) // 3.4165… → 3.5
    expect(calibrationPermille(1001, 1000)).toBe(1100) // any excess is at least one tenth
    expect(calibrationPermille(900, 1000)).toBe(1000) // over-priced: never scaled down
    expect(calibrationPermille(100_000, 10)).toBe(8000)
    expect(calibrationPermille(500, 0)).toBe(1000)
  })

  it('scales the estimated part only: a usage baseline plus ⌈f · delta⌉, an estimated baseline whole', () => {
    const usage = { baseline: { kind: 'usage' as const, tokens: 1534, usage: { inputTokens: 1524, outputTokens: 10 } }, surfaceDeltaTokens: 820, totalTokens: 2354 }
    expect(calibratedTotal(usage, 3000)).toBe(1534 + 2460)
    expect(calibratedTotal(usage, 1000)).toBe(2354)
    expect(calibratedTotal({ baseline: { kind: 'estimated', tokens: 517 }, surfaceDeltaTokens: 0, totalTokens: 517 }, 2500)).toBe(1293) // ⌈1292.5⌉
    expect(scaleTokens(-5, 1500)).toBe(-7) // a relief is rounded towards zero
    expect(calibratedRetain(640, 3000)).toBe(214) // ⌈213.3⌉: 214 · 3 ≥ 640
    expect(calibratedRetain(640, 1000)).toBe(640)
  })

  it('reads the counted prompt from the OpenAI, DeepSeek and Anthropic window rejections only', () => {
    const of = (message: string, code = 'CONTEXT_WINDOW_EXCEEDED'): number | undefined => overflowPromptTokens({ code, message })
    expect(of("This model's maximum context length is 8000 tokens. However, your messages resulted in 8760 tokens. Please reduce the length of the messages.")).toBe(8760)
    expect(of("This model's maximum context length is 8000 tokens. However, you requested 9000 tokens (8500 in the messages, 500 in the completion). Please reduce the length of the messages or completion.")).toBe(8500)
    expect(of('prompt is too long: 210000 tokens > 200000 maximum')).toBe(210000)
    expect(of('input length and `max_tokens` exceed context limit: 190000 + 20000 > 200000, decrease input length or `max_tokens` and try again')).toBe(190000)
    expect(of('context length exceeded')).toBeUndefined()
    expect(of('your messages resulted in 8760 tokens', 'UNKNOWN')).toBeUndefined()
  })
})

describe('HARD-8 evidence in the meter', () => {
  it('learns 3 from usage (1524 counted for a 508-token request) and the first usage above the reported window', () => {
    const log = logOf(...denseStep(1000))
    const meter = new TokenMeter(log, { dialect: 'seed' })
    const e = meter.capacityEvidence('mock', 'mock-4k')
    expect(e.calibration).toEqual({ seq: 5, source: 'usage', observedTokens: 1524, estimatedTokens: 508, permille: 3000 })
    expect(e.excess).toEqual({ usageSeq: 5, usageTokens: 1534, contextWindow: 1000 })
    expect(e.warned).toBe(false)
    expect(meter.capacityEvidence('mock', 'other')).toEqual({ calibration: undefined, excess: undefined, warned: false })
    // faithful figures are untouched: usage 1534, delta 508 + 312 (surface 830 − anchor 10)
    expect(meter.measure().totalTokens).toBe(2354)
  })

  it('learns from a window rejection that states the counted prompt, against the 830-token surface it was built from', () => {
    const log = logOf(...denseStep(4000), marker('step/start', 1, 2),
      rejection("This model's maximum context length is 4000 tokens. However, your messages resulted in 4400 tokens. Please reduce the length of the messages."))
    const e = new TokenMeter(log, { dialect: 'seed' }).capacityEvidence('mock', 'mock-4k')
    expect(e.calibration).toEqual({ seq: 9, source: 'rejection', observedTokens: 4400, estimatedTokens: 830, permille: 5400 }) // 5.30… → 5.4
    expect(e.excess).toBeUndefined() // 1534 ≤ 4000
  })

  it('a request/context carrying capacityWarning marks the route as warned', () => {
    const warning = { usageSeq: 5, usageTokens: 1534, contextWindow: 1000 }
    const log = logOf(...denseStep(1000), context(1000, { calibration: 3, capacityWarning: warning }))
    expect(new TokenMeter(log, { dialect: 'seed' }).capacityEvidence('mock', 'mock-4k').warned).toBe(true)
  })
})

describe('HARD-8 in the engine (window 4000: threshold 3200, retain 640)', () => {
  const events = (): EventDraft[] => denseStep(4000)
  const on = { hardening: { capacitySanity: true } }

  it('faithful: 2354 < 3200, nothing is compacted', async () => {
    const b = bench({ events: logOf(...events()).events })
    expect(await b.engine.compactIfNeeded('pressure')).toBeNull()
    expect(b.written()).toEqual([])
    expect(b.engine.routeContextNotes('mock', 'mock-4k')).toEqual({})
  })

  it('hardened: 1534 + 3 · 820 = 3994 ≥ 3200; the tail budget ⌈640 / 3⌉ = 214 keeps the call and its result, the user text is summarized', async () => {
    const b = bench({ events: logOf(...events()).events, config: on })
    const r = await b.engine.compactIfNeeded('pressure')
    expect(r?.shadowedSeqs).toEqual([2])
    expect(b.written()).toContain('compaction/summary')
  })

  it('hardened with calibrate: false: warns only, the pressure figures are the protocol\'s', async () => {
    const b = bench({ events: logOf(...events()).events, config: { hardening: { capacitySanity: { calibrate: false } } } })
    expect(await b.engine.compactIfNeeded('pressure')).toBeNull()
    expect(b.engine.routeContextNotes('mock', 'mock-4k')).toEqual({})
  })

  it('notes: the factor, and the warning once per route (the log says when it was written)', () => {
    const b = bench({ events: logOf(...denseStep(1000)).events, config: on })
    const warning = { usageSeq: 5, usageTokens: 1534, contextWindow: 1000 }
    expect(b.engine.routeContextNotes('mock', 'mock-4k')).toEqual({ calibration: 3, capacityWarning: warning })
    expect(b.warnings).toEqual(['capacity (hardened HARD-8): provider usage of 1534 tokens at seq 5 exceeds the context window 1000 the adapter reports for mock/mock-4k; the reported capacity looks wrong'])
    expect(b.infos).toEqual(['capacity (hardened HARD-8): calibration of mock/mock-4k 1 → 3 (provider 1524 tokens / estimate 508, usage at seq 5)'])
    b.log.append(context(1000, { calibration: 3, capacityWarning: warning }))
    expect(b.engine.routeContextNotes('mock', 'mock-4k')).toEqual({ calibration: 3 })
    expect(b.warnings).toHaveLength(1)
    expect(b.infos).toHaveLength(1) // the logged factor is current: no news
  })
})

describe('HARD-8 request/context records', () => {
  const info = { provider: 'mock', id: 'mock-4k', name: 'mock-4k', context: { contextWindow: 4000 } }
  const route = { provider: 'mock', model: 'mock-4k' }

  it('without notes the record is the protocol\'s (written only on a change)', () => {
    const log = logOf(context(4000))
    expect(routeContextRecord(log, route, info)).toBeNull()
    expect(routeContextRecord(log, route, info, {})).toBeNull()
  })

  it('a changed factor is a new record; the warning always is; an unchanged factor is not', () => {
    const log = logOf(context(4000))
    expect(routeContextRecord(log, route, info, { calibration: 3 })).toEqual({ provider: 'mock', model: 'mock-4k', contextWindow: 4000, calibration: 3 })
    log.append(context(4000, { calibration: 3 }))
    expect(routeContextRecord(log, route, info, { calibration: 3 })).toBeNull()
    const warning = { usageSeq: 0, usageTokens: 5000, contextWindow: 4000 }
    expect(routeContextRecord(log, route, info, { calibration: 3, capacityWarning: warning }))
      .toEqual({ provider: 'mock', model: 'mock-4k', contextWindow: 4000, calibration: 3, capacityWarning: warning })
    expect(routeContextRecord(log, route, info, {})).toEqual({ provider: 'mock', model: 'mock-4k', contextWindow: 4000 }) // back to 1
  })
})
