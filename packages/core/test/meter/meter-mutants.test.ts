/**
 * The meter's branches that the spec-number tests of `meter.test.ts` leave unjudged (found by the mutation run,
 * `pnpm mutate`): the pure anchor / measure / envelope rules (§2.5, §2.2, §14.1), every replay error of §2.5 with
 * its code and seq, the provider-side price of an assistant message from its cited chunks, the image price's
 * route rule (§2.3), and the chunked list's edges. Figures are the Appendix B numbers of `meter.test.ts` and
 * §2.2 arithmetic written out by hand.
 */
import { appendixBEvents } from '@compaction-sim/fixtures'
import { describe, expect, it } from 'vitest'
import type { EpochHeader, LogEvent } from '../../src/log/events.ts'
import type { TokenUsage } from '../../src/log/llm.ts'
import { ChunkedList } from '../../src/meter/chunked-list.ts'
import { anchorOf, envelopePrice, measureAgainst, MeterReplayError, TokenMeter } from '../../src/meter/meter.ts'
import { blockPrice, toolsPrice } from '../../src/meter/price.ts'

type Raw = LogEvent & { data: Record<string, unknown>; sourceEventSeqs?: number[]; surfaceOp?: unknown }

/** A deep copy of Appendix B's events up to and including `last`, as editable records. */
function events(last = 66): Raw[] {
  return structuredClone(appendixBEvents().slice(0, last + 1)) as Raw[]
}

const at = (list: Raw[], seq: number): Raw => list[seq] as Raw

/** Measures `list` with a fresh seed meter. */
const measure = (list: Raw[], options: { readOnlyPath?: () => string } = {}) =>
  new TokenMeter({ events: list as LogEvent[] }, { dialect: 'seed', ...options }).measure()

/** The replay error a fresh meter throws for `list` (fails when it throws none, or something else). */
function replayError(list: Raw[]): MeterReplayError {
  try {
    measure(list)
  } catch (err) {
    expect(err).toBeInstanceOf(MeterReplayError)
    return err as MeterReplayError
  }
  throw new Error('expected a MeterReplayError')
}

const header = (model: string, extra: Partial<EpochHeader> = {}): EpochHeader => ({ config: { provider: 'mock', model }, ...extra })
const usage = (u: TokenUsage): TokenUsage => u

describe('anchorOf (§2.5)', () => {
  const h = header('m')
  it('takes the provider usage, cache reads and writes included, when it is at least the estimate', () => {
    const u = usage({ inputTokens: 10, cacheReadTokens: 3, cacheWriteTokens: 2, outputTokens: 1 })
    expect(anchorOf(h, u, 4, 12)).toEqual({ header: h, surfaceTokens: 12, baseline: { kind: 'usage', tokens: 16, usage: u } })
  })

  it('a provider figure exactly equal to the estimate (16 = 4 + 12) is still the usage', () => {
    const u = usage({ inputTokens: 15, outputTokens: 1 })
    expect(anchorOf(h, u, 4, 12).baseline).toEqual({ kind: 'usage', tokens: 16, usage: u })
  })

  it('one token under the estimate, no usage, or no header: the estimate envelope + surface', () => {
    const estimated = { header: h, surfaceTokens: 12, baseline: { kind: 'estimated', tokens: 16 } }
    expect(anchorOf(h, usage({ inputTokens: 14, outputTokens: 1 }), 4, 12)).toEqual(estimated)
    expect(anchorOf(h, undefined, 4, 12)).toEqual(estimated)
    expect(anchorOf(undefined, usage({ inputTokens: 900, outputTokens: 1 }), 4, 12)).toEqual({ header: undefined, surfaceTokens: 12, baseline: { kind: 'estimated', tokens: 16 } })
  })
})

describe('measureAgainst (§2.5)', () => {
  const h = header('m')
  const envelope = (x: EpochHeader | undefined): number => (x === undefined ? 0 : 7)
  const anchor = { header: h, surfaceTokens: 10, baseline: { kind: 'estimated', tokens: 17 } } as const
  it('under the anchor\'s header: its baseline and the surface change since it', () => {
    expect(measureAgainst(anchor, header('m'), 25, envelope)).toEqual({ baseline: anchor.baseline, delta: 15 })
  })

  it('an anchor without a header applies only to a measurement without one', () => {
    const bare = { header: undefined, surfaceTokens: 10, baseline: { kind: 'estimated', tokens: 10 } } as const
    expect(measureAgainst(bare, undefined, 25, envelope)).toEqual({ baseline: bare.baseline, delta: 15 })
    expect(measureAgainst(bare, h, 25, envelope)).toEqual({ baseline: { kind: 'estimated', tokens: 32 }, delta: 0 })
    expect(measureAgainst(anchor, undefined, 25, envelope)).toEqual({ baseline: { kind: 'estimated', tokens: 25 }, delta: 0 })
  })

  it('a different header drops the anchor: envelope + surface', () => {
    expect(measureAgainst(anchor, header('other'), 25, envelope)).toEqual({ baseline: { kind: 'estimated', tokens: 32 }, delta: 0 })
  })

  it('none only for an empty surface without a header', () => {
    expect(measureAgainst(undefined, undefined, 0, envelope)).toEqual({ baseline: { kind: 'none', tokens: 0 }, delta: 0 })
    expect(measureAgainst(undefined, undefined, 5, envelope)).toEqual({ baseline: { kind: 'estimated', tokens: 5 }, delta: 0 })
    expect(measureAgainst(undefined, h, 0, envelope)).toEqual({ baseline: { kind: 'estimated', tokens: 7 }, delta: 0 })
  })
})

describe('envelopePrice (§2.2, §14.1)', () => {
  const tools = [{ name: 'r', description: '', parameters: {} }]
  // json(tools) is 47 characters: ceil(47 / 4) + 4 = 16.
  it('prices the tools; rc.8 adds the header system prompt as one text block', () => {
    expect(JSON.stringify(tools).length).toBe(47)
    expect(envelopePrice(header('m', { tools }), 'seed')).toBe(16)
    expect(envelopePrice(header('m', { tools, system: 'abcdefghi' }), 'seed')).toBe(16)
    expect(envelopePrice(header('m', { tools, system: 'abcdefghi' }), 'dsh-0.1.0-rc.8')).toBe(16 + 3 + 4)
    expect(envelopePrice(header('m', { system: 'abcd' }), 'dsh-0.1.0-rc.8')).toBe(5)
    expect(envelopePrice(header('m', { system: '' }), 'dsh-0.1.0-rc.8')).toBe(0)
    expect(envelopePrice(header('m'), 'dsh-0.1.0-rc.8')).toBe(0)
    expect(envelopePrice(undefined, 'dsh-0.1.0-rc.8')).toBe(0)
  })
})

describe('block and tools prices (§2.2)', () => {
  it('reasoning is priced as text; an unknown block by its JSON', () => {
    expect(blockPrice({ type: 'reasoning', text: 'abcde' } as never)).toBe(2 + 4)
    // {"type":"x","v":1} is 18 characters: 4 + ceil(18 / 4) = 9.
    expect(blockPrice({ type: 'x', v: 1 } as never)).toBe(9)
  })

  it('no tools and an empty tool list cost nothing', () => {
    expect(toolsPrice(undefined)).toBe(0)
    expect(toolsPrice([])).toBe(0)
  })
})

describe('replay errors (§2.5): code, seq and message', () => {
  it('keeps throwing the very same error', () => {
    const list = events(13)
    at(list, 13).data = { turn: 1, step: 2 }
    const meter = new TokenMeter({ events: list as LogEvent[] }, { dialect: 'seed' })
    let first: unknown
    try { meter.measure() } catch (err) { first = err }
    expect(first).toBeInstanceOf(MeterReplayError)
    expect(() => meter.measure()).toThrow(first as Error)
    let second: unknown
    try { meter.measure() } catch (err) { second = err }
    expect(second).toBe(first)
    expect((first as Error).name).toBe('MeterReplayError')
  })

  it('step/end of another step, of another turn, or with no open step: STEP_MISMATCH', () => {
    const otherStep = events(13)
    at(otherStep, 13).data = { turn: 1, step: 2 }
    expect(replayError(otherStep)).toMatchObject({ code: 'STEP_MISMATCH', seq: 13, message: 'seq 13: step/end 1.2 does not match the open step' })
    const otherTurn = events(13)
    at(otherTurn, 13).data = { turn: 2, step: 1 }
    expect(replayError(otherTurn)).toMatchObject({ code: 'STEP_MISMATCH', seq: 13, message: 'seq 13: step/end 2.1 does not match the open step' })
    const none = events(13)
    none.push({ ...at(none, 13), seq: 14 } as Raw)
    expect(replayError(none)).toMatchObject({ code: 'STEP_MISMATCH', seq: 14, message: 'seq 14: step/end 1.1 does not match the open step' })
  })

  it('step/start inside an open step: STEP_OPEN', () => {
    const list = events(1)
    list.push({ ...at(list, 1), seq: 2, data: { turn: 1, step: 2 } } as Raw)
    expect(replayError(list)).toMatchObject({ code: 'STEP_OPEN', seq: 2 })
  })

  it('an assistant message of another step or turn than the open one: OUTSIDE_STEP', () => {
    for (const [turn, step] of [[1, 2], [2, 1]] as const) {
      const list = events(10)
      at(list, 10).data['turn'] = turn
      at(list, 10).data['step'] = step
      expect(replayError(list)).toMatchObject({ code: 'OUTSIDE_STEP', seq: 10, message: `seq 10: assistant/message of step ${turn}.${step} outside its open step` })
    }
  })

  it('a replacement whose start is not a node, or whose end precedes its start: REPLACE', () => {
    const missing = events(15)
    at(missing, 15).surfaceOp = { op: 'replace', start: 999, end: 12 }
    expect(replayError(missing)).toMatchObject({ code: 'REPLACE', seq: 15, message: 'seq 15: replacement range 999…12 is not on the surface' })
    const reversed = events(15)
    at(reversed, 15).surfaceOp = { op: 'replace', start: 12, end: 10 }
    expect(replayError(reversed)).toMatchObject({ code: 'REPLACE', seq: 15, message: 'seq 15: replacement range 12…10 is not on the surface' })
  })

  it('a replacement at position 0 is on the surface', () => {
    const list = events(15)
    at(list, 15).surfaceOp = { op: 'replace', start: 2, end: 2 }
    at(list, 15).sourceEventSeqs = [2]
    expect(measure(list).nodes.map((n) => n.seq)).toEqual([15, 3, 10, 12])
  })

  it('any other failure of a fold is wrapped as REPLACE, with the failure as its cause', () => {
    const list = events(12)
    list.push({ ...at(list, 3), seq: 999 } as Raw)
    const err = replayError(list)
    expect(err).toMatchObject({ code: 'REPLACE', seq: 999 })
    expect(err.message).toContain('surface node 999 is not in the log')
    expect(err.cause).toBeInstanceOf(Error)
  })

  it('cited chunks that are repeated, later, or not chunks: CITED_CHUNKS', () => {
    const cases: Array<[number[], string]> = [
      [[6, 6, 7, 8, 9], 'cited seq 6 is not an earlier, distinct assistant/chunk'],
      [[6, 7, 8, 11], 'cited seq 11 is not an earlier, distinct assistant/chunk'],
      [[-1, 6, 7, 8, 9], 'cited seq -1 is not an earlier, distinct assistant/chunk'],
      [[5, 6, 7, 8, 9], 'cited seq 5 is not an earlier, distinct assistant/chunk'],
    ]
    for (const [cited, message] of cases) {
      const list = events(11)
      // Seq 11 made a chunk of step 1.1, so citing it tests "earlier" on its own.
      list[11] = { ...at(list, 9), seq: 11 } as Raw
      at(list, 10).sourceEventSeqs = cited
      expect(replayError(list)).toMatchObject({ code: 'CITED_CHUNKS', seq: 10, message: `seq 10: ${message}` })
    }
  })

  it('an earlier chunk of another step, or of another turn: CITED_CHUNKS', () => {
    const otherStep = events(23)
    at(otherStep, 23).sourceEventSeqs = [6, 7, 8, 9]
    expect(replayError(otherStep)).toMatchObject({ code: 'CITED_CHUNKS', seq: 23, message: 'seq 23: cited chunk 6 belongs to step 1.1, not 1.2' })
    const otherTurn = events(37)
    at(otherTurn, 37).sourceEventSeqs = [6, 7, 8, 9]
    expect(replayError(otherTurn)).toMatchObject({ code: 'CITED_CHUNKS', seq: 37, message: 'seq 37: cited chunk 6 belongs to step 1.1, not 2.1' })
  })

  it('cited chunks that do not assemble: ASSEMBLY', () => {
    const list = events(10)
    at(list, 6).data['chunk'] = { type: 'block-start', index: 0, blockType: 'image' }
    at(list, 10).sourceEventSeqs = [6, 8, 9]
    expect(replayError(list)).toMatchObject({ code: 'ASSEMBLY', seq: 10, message: 'seq 10: block 0 of type image never received a block-end' })
  })
})

describe('the anchor prices the assistant message from its cited chunks (§2.5)', () => {
  // Appendix B #10: step 1.1 starts on an empty surface (seq 1); the cited tool call prices 15; usage 150 + 20 = 170;
  // the surface after #10 is 28 + 20 + 15 = 63, so the pressure is 170 + (63 − 15) = 218.
  it('a logged message longer than the streamed one: the anchor covers the streamed price', () => {
    const list = events(10)
    const call = ((at(list, 10).data['message'] as { content: Array<Record<string, unknown>> }).content[0]) as Record<string, unknown>
    call['arguments'] = `${String(call['arguments'])}${'x'.repeat(40)}` // +10 tokens logged
    const m = measure(list)
    expect(m.surfaceTokens).toBe(73)
    expect(m.baseline).toMatchObject({ kind: 'usage', tokens: 170 })
    expect(m.surfaceDeltaTokens).toBe(58)
    expect(m.totalTokens).toBe(228)
  })

  it('no cited chunks: the logged price', () => {
    const list = events(10)
    delete at(list, 10).sourceEventSeqs
    const m = measure(list)
    expect(m.surfaceDeltaTokens).toBe(48)
    expect(m.totalTokens).toBe(218)
  })

  it('cited chunks without a block price 0, not the role overhead', () => {
    const list = events(10)
    at(list, 10).sourceEventSeqs = [8, 9]
    const m = measure(list)
    expect(m.surfaceDeltaTokens).toBe(63)
    expect(m.totalTokens).toBe(233)
  })

  it('without usage the logged price (25) anchors an estimate 46 + 25', () => {
    const list = events(10)
    delete at(list, 10).data['usage']
    const call = ((at(list, 10).data['message'] as { content: Array<Record<string, unknown>> }).content[0]) as Record<string, unknown>
    call['arguments'] = `${String(call['arguments'])}${'x'.repeat(40)}`
    expect(measure(list)).toMatchObject({ baseline: { kind: 'estimated', tokens: 71 }, surfaceDeltaTokens: 48, totalTokens: 119 })
  })

  it('without a header the logged price anchors an estimate of the surface alone', () => {
    const list = events(10)
    list[4] = { ...at(list, 5), seq: 4, data: { provider: 'mock', model: 'mock-4k' } } as Raw // no request/header in the log
    const call = ((at(list, 10).data['message'] as { content: Array<Record<string, unknown>> }).content[0]) as Record<string, unknown>
    call['arguments'] = `${String(call['arguments'])}${'x'.repeat(40)}`
    expect(measure(list)).toMatchObject({ baseline: { kind: 'estimated', tokens: 25 }, surfaceDeltaTokens: 48, totalTokens: 73 })
  })

  it('a header override prices the proposed header: the anchor drops, envelope(override) + surface', () => {
    const meter = new TokenMeter({ events: events(13) as LogEvent[] }, { dialect: 'seed' })
    expect(meter.measure(header('other'))).toMatchObject({ baseline: { kind: 'estimated', tokens: 3075 }, surfaceDeltaTokens: 0, totalTokens: 3075 })
  })

  it('with no assistant message yet: the estimate envelope 46 + surface 48', () => {
    expect(measure(events(5))).toMatchObject({ baseline: { kind: 'estimated', tokens: 94 }, totalTokens: 94 })
  })
})

/**
 * #28 after the offload of its first image (#30) prices 152 under the route: 4 (role) + 16 (text) + 47 (placeholder)
 * + 85 (image). Each of its images prices 55 by the fixed rule (130 = 4 + 16 + 2 × 55, §2.8), so without the route
 * price it is 152 − 85 + 55 = 122.
 */
const FIXED_28_AFTER_OFFLOAD = 122
/** A 400-character read-only path instead of `attachments/<12 hex>.png` (28): the placeholder grows 372 characters, 93 tokens. */
const ROUTE_28_LONG_PATH = 152 + 93

describe('the route image price (§2.3)', () => {
  it('is the request/context price while it matches the folded route', () => {
    const meter = new TokenMeter({ events: events(5) as LogEvent[] }, { dialect: 'seed' })
    expect(meter.imagePrice).toBe(85)
  })

  it('a request/context before any request/header sets no price and does not fail', () => {
    const list = events(3)
    list.push({ ...events(5)[5], seq: 4 } as Raw)
    const meter = new TokenMeter({ events: list as LogEvent[] }, { dialect: 'seed' })
    expect(meter.imagePrice).toBeUndefined()
    expect(meter.measure().totalTokens).toBe(48)
  })

  it('a header of another model or provider drops the price and re-prices the image node already on the surface', () => {
    for (const config of [{ provider: 'mock', model: 'other' }, { provider: 'other', model: 'mock-4k' }]) {
      const list = events(31)
      ;(at(list, 31).data['header'] as EpochHeader).config = config
      const meter = new TokenMeter({ events: list as LogEvent[] }, { dialect: 'seed' })
      expect(meter.imagePrice).toBeUndefined()
      expect(meter.measure().nodes.find((n) => n.seq === 28)?.tokens).toBe(FIXED_28_AFTER_OFFLOAD)
    }
  })

  it('a shadowed image node is not re-priced', () => {
    const list = events(58)
    ;(at(list, 58).data['header'] as EpochHeader).config = { provider: 'mock', model: 'other' }
    expect(measure(list).nodes.map((n) => n.seq)).toEqual([2, 55, 47, 49])
  })

  it('the offload placeholder uses the given read-only path', () => {
    const m = measure(events(31), { readOnlyPath: () => 'p'.repeat(400) })
    expect(m.nodes.find((n) => n.seq === 28)?.tokens).toBe(ROUTE_28_LONG_PATH)
  })
})

describe('ChunkedList edges', () => {
  it('at outside the list is undefined', () => {
    const list = new ChunkedList<number>()
    expect(list.at(0)).toBeUndefined()
    expect(list.at(300)).toBeUndefined()
  })

  it('set outside 0 … length − 1 throws a RangeError naming the bounds', () => {
    const list = new ChunkedList<number>()
    for (const v of [1, 2, 3]) list.push(v)
    expect(() => list.set(3, 9)).toThrow(new RangeError('index 3 outside 0…2'))
    expect(() => list.set(-1, 9)).toThrow(new RangeError('index -1 outside 0…2'))
    list.set(2, 9)
    expect(list.toArray()).toEqual([1, 2, 9])
  })

  it('a negative splice start counts from the end, clamped at 0', () => {
    const list = new ChunkedList<number>()
    for (const v of [1, 2, 3, 4]) list.push(v)
    expect(list.splice(-3, 2, 7)).toEqual([2, 3])
    expect(list.toArray()).toEqual([1, 7, 4])
    expect(list.splice(-10, 1)).toEqual([1])
    expect(list.toArray()).toEqual([7, 4])
  })
})
