/**
 * Meter branches the other meter tests leave unjudged (second mutation pass): the rc.8 header system prompt
 * folded into the state, `text/offload` re-pricing (also of the node at position 0), a node that projects to
 * null, the HARD-8 window and rejection evidence, non-assembly failures of cited chunks, the rc.8 image price
 * and `toJSON`. Logs are Appendix B prefixes edited by hand; figures are §2.2 arithmetic written out.
 */
import { appendixBEvents } from '@compaction-sim/fixtures'
import { describe, expect, it } from 'vitest'
import type { Dialect, LogEvent } from '../../src/log/events.ts'
import { AssemblyError } from '../../src/log/assembly.ts'
import { MeterReplayError, TokenMeter } from '../../src/meter/meter.ts'

type Raw = LogEvent & { data: Record<string, unknown>; sourceEventSeqs?: number[]; surfaceOp?: unknown }

/** A deep copy of Appendix B's events up to and including `last`, as editable records. */
function events(last: number): Raw[] {
  return structuredClone(appendixBEvents().slice(0, last + 1)) as Raw[]
}

const at = (list: Raw[], seq: number): Raw => list[seq] as Raw
const meterOf = (list: Raw[], dialect: Dialect = 'seed') => new TokenMeter({ events: list as LogEvent[] }, { dialect })

/** The replay error a fresh seed meter throws for `list`. */
function replayError(list: Raw[]): MeterReplayError {
  try {
    meterOf(list).measure()
  } catch (err) {
    expect(err).toBeInstanceOf(MeterReplayError)
    return err as MeterReplayError
  }
  throw new Error('expected a MeterReplayError')
}

/**
 * The placeholder of Appendix B's user text (#3, 45 characters) under the mark below is 209 characters:
 * "[user text moved out of this request because it is larger than this route allows: 45 characters (12 tokens,
 * above the 10-token limit for one block); read-only copy: p. Read it there, in parts, if you need it.]",
 * so the node prices 4 (role) + 4 (block) + ceil(209 / 4) = 61 instead of 20.
 */
const OFFLOADED_USER = 61
const textOffload = (seq: number, target: number): Raw =>
  ({ seq, time: 1, type: 'text/offload', data: { seq: target, blockIndex: 0, tokens: 12, bound: 10, path: 'p' } }) as unknown as Raw

/** A finish chunk of step 1.1 carrying an error `failure`. */
const failedFinish = (seq: number, failure: Record<string, unknown>): Raw =>
  ({ seq, time: 1, type: 'assistant/chunk', data: { turn: 1, step: 1, chunk: { type: 'finish', reason: { kind: 'error', failure } } } }) as unknown as Raw

describe('text/offload re-prices its node (HARD-5)', () => {
  it('the user node #3 (position 1) moves from 20 to the placeholder price', () => {
    const list = events(3)
    list.push(textOffload(4, 3))
    const m = meterOf(list).measure()
    expect(m.nodes).toEqual([{ seq: 2, tokens: 28 }, { seq: 3, tokens: OFFLOADED_USER }])
    expect(m.surfaceTokens).toBe(28 + OFFLOADED_USER)
  })

  it('the node at position 0 is re-priced too', () => {
    const list = events(1)
    list.push({ ...at(events(3), 3), seq: 2 } as Raw)
    list.push(textOffload(3, 2))
    const m = meterOf(list).measure()
    expect(m.nodes).toEqual([{ seq: 2, tokens: OFFLOADED_USER }])
    expect(m.surfaceTokens).toBe(OFFLOADED_USER)
  })
})

describe('a node that projects to null prices 0 (§2.4)', () => {
  it('an assistant message with empty content', () => {
    const list = events(10)
    const msg = at(list, 10)
    ;(msg.data['message'] as { content: unknown[] }).content = []
    delete msg.data['usage']
    delete msg.sourceEventSeqs
    const m = meterOf(list).measure()
    expect(m.nodes).toEqual([{ seq: 2, tokens: 28 }, { seq: 3, tokens: 20 }, { seq: 10, tokens: 0 }])
    // anchor: envelope 46 + step-start surface 0 + 0; delta 48 − 0.
    expect((m as unknown as { toJSON(): unknown }).toJSON()).toMatchObject({ baseline: { kind: 'estimated', tokens: 46 }, surfaceDeltaTokens: 48, totalTokens: 94, surfaceTokens: 48 })
  })
})

describe('HARD-8 window evidence of a usage (observeUsage)', () => {
  it('usage 150 + 20 = 170 above the matching route window 100: an excess at #10', () => {
    const list = events(10)
    at(list, 5).data['contextWindow'] = 100
    expect(meterOf(list).capacityEvidence('mock', 'mock-4k').excess).toEqual({ usageSeq: 10, usageTokens: 170, contextWindow: 100 })
  })

  it('a request/context of another provider or another model gives no window', () => {
    for (const [field, value] of [['provider', 'other'], ['model', 'other']] as const) {
      const list = events(10)
      at(list, 5).data['contextWindow'] = 100
      at(list, 5).data[field] = value
      const meter = meterOf(list)
      expect(meter.capacityEvidence('mock', 'mock-4k').excess).toBeUndefined()
      expect(meter.measure().totalTokens).toBe(218)
    }
  })

  it('no request/context at all: no window and no failure', () => {
    const list = events(10)
    list[5] = { ...at(list, 4), seq: 5 } as Raw // the request/context becomes a second identical request/header
    const meter = meterOf(list)
    expect(meter.measure().totalTokens).toBe(218)
    expect(meter.capacityEvidence('mock', 'mock-4k').excess).toBeUndefined()
  })
})

describe('HARD-8 rejection evidence (observeRejection)', () => {
  const overflow = { code: 'CONTEXT_WINDOW_EXCEEDED', message: 'prompt is too long: 500 tokens > 400 maximum' }

  it('a counted window rejection is observed against envelope 46 + surface 48', () => {
    const list = events(5)
    list.push(failedFinish(6, overflow))
    expect(meterOf(list).capacityEvidence('mock', 'mock-4k').calibration).toMatchObject({ seq: 6, source: 'rejection', observedTokens: 500, estimatedTokens: 94 })
  })

  it('a failure that states no count is not observed', () => {
    const list = events(5)
    list.push(failedFinish(6, { ...overflow, code: 'IMAGE_OFFLOAD_REQUIRED' }))
    const meter = meterOf(list)
    expect(meter.capacityEvidence('mock', 'mock-4k').calibration).toBeUndefined()
    expect(meter.capacityEvidence('mock', 'mock-4k')).toEqual({ calibration: undefined, excess: undefined, warned: false })
  })

  it('a counted rejection before any request/header is not observed and does not fail', () => {
    const list = events(3)
    list.push(failedFinish(4, overflow))
    const meter = meterOf(list)
    expect(meter.measure().totalTokens).toBe(48)
    expect(meter.capacityEvidence('mock', 'mock-4k').calibration).toBeUndefined()
  })
})

describe('cited chunks that fail to assemble (§2.5)', () => {
  it('an assembly error is ASSEMBLY with the AssemblyError as its cause', () => {
    const list = events(10)
    at(list, 6).data['chunk'] = { type: 'block-start', index: 0, blockType: 'image' }
    at(list, 10).sourceEventSeqs = [6, 8, 9]
    const err = replayError(list)
    expect(err).toMatchObject({ code: 'ASSEMBLY', seq: 10, message: 'seq 10: block 0 of type image never received a block-end' })
    expect(err.cause).toBeInstanceOf(AssemblyError)
  })

  it('any other failure while assembling is not ASSEMBLY: it is wrapped as REPLACE', () => {
    const list = events(10)
    at(list, 7).data['chunk'] = { type: 'block-end', index: 0, block: null }
    at(list, 10).sourceEventSeqs = [6, 7, 8, 9]
    const err = replayError(list)
    expect(err).toMatchObject({ code: 'REPLACE', seq: 10 })
    expect(err.cause).toBeInstanceOf(TypeError)
  })
})

describe('dsh-0.1.0-rc.8', () => {
  it('the folded header keeps its system prompt: envelope 46 + 5 (system "abcd") + surface 48', () => {
    const list = events(5)
    ;(at(list, 4).data['header'] as { system?: string }).system = 'abcd'
    expect(meterOf(list, 'dsh-0.1.0-rc.8').measure().baseline).toEqual({ kind: 'estimated', tokens: 99 })
  })

  it('sets no route image price (a seed rule)', () => {
    expect(meterOf(events(5), 'dsh-0.1.0-rc.8').imagePrice).toBeUndefined()
  })
})

describe('Measurement.toJSON', () => {
  it('is the plain record, nodes included', () => {
    const m = meterOf(events(5)).measure()
    expect(JSON.parse(JSON.stringify(m))).toEqual({
      logRevision: 6, baseline: { kind: 'estimated', tokens: 94 }, surfaceDeltaTokens: 0, totalTokens: 94, surfaceTokens: 48,
      nodes: [{ seq: 2, tokens: 28 }, { seq: 3, tokens: 20 }],
    })
    expect((m as unknown as { toJSON(): unknown }).toJSON()).toEqual({
      logRevision: 6, baseline: { kind: 'estimated', tokens: 94 }, surfaceDeltaTokens: 0, totalTokens: 94, surfaceTokens: 48,
      nodes: [{ seq: 2, tokens: 28 }, { seq: 3, tokens: 20 }],
    })
  })
})
