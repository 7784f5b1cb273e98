/**
 * The checker's reference meter (`src/checker/meter.ts`) on small edits of Appendix B, every figure written
 * out by hand from §2.2–§2.5 and the running example of §2.8 (tools 46, nodes #2: 28, #3: 20, #10: 15,
 * #12: 3,012, usage 170 at #10, pressure 3,230 after #13, 1,366 surface after the prune, 1,513 after #26;
 * an Appendix B image block is 202 JSON characters, 55 tokens under the fixed rule). It pins:
 * - the §2.5 anchor: `providerAssistantTokens` from the cited chunks (empty assembly = 0, absent list =
 *   `eventTokens`), only with usage and a header; the estimated baseline otherwise;
 * - the replay errors as the report's `meterTaint` (seq and reason, the first one wins);
 * - §2.3 image pricing: the route price only in the seed dialect and for the folded route, and the re-pricing
 *   of image nodes (top-level, inside tool results, nested beyond the walk's depth bound) when it changes;
 * - nodes that project to null (empty assistant content) and offloads that name no live node.
 */
import type { Dialect, EpochHeader, LogEvent } from '@compaction-sim/core'
import { describe, expect, it } from 'vitest'
import { ReferenceMeter } from '../../src/checker/meter.ts'
import { CheckerModel } from '../../src/checker/model.ts'
import { resolveRunInputs } from '../../src/checker/run-inputs.ts'
import { checkLog } from '../../src/checker/run.ts'
import { appendixB, at, reportOf } from './support.ts'

type Events = ReturnType<typeof appendixB>
type Ev = Events[number]

/** Folds `events` (in order) through a fresh checker model, leniently, as `windowsAfter` does. */
function fold(events: readonly Ev[], dialect: Dialect = 'seed'): CheckerModel {
  const model = new CheckerModel(dialect, resolveRunInputs(null, null, dialect))
  events.forEach((raw, index) => {
    const event = raw as unknown as LogEvent
    model.fold({ index, line: null, seq: event.seq, type: event.type, event, problems: [], duplicate: false, repair: false, tornFinal: false, excerpt: '' }, event)
  })
  return model
}

/** Appendix B events with seq ≤ `last`, edited by `edit` first. */
function prefix(last: number, edit: (e: Events) => void = () => undefined): Events {
  const e = appendixB()
  edit(e)
  return e.filter((x) => x.seq <= last)
}

/** The first image block of Appendix B's seq 28 (202 JSON characters: 55 tokens fixed, the route price else). */
const image = (): Record<string, unknown> => structuredClone((at(appendixB(), 28).data['content'] as Array<Record<string, unknown>>)[1] as Record<string, unknown>)
const ctx = (seq: number, data: Record<string, unknown>): Ev => ({ seq, time: 1700000009000 + seq, type: 'request/context', data } as Ev)
const mockCtx = (seq: number, imageTokens: number): Ev => ctx(seq, { provider: 'mock', model: 'mock-4k', contextWindow: 4000, imageTokens })
const offload = (seq: number, target: number): Ev => ({ seq, time: 1700000009000 + seq, type: 'image/offload', data: { targets: [{ seq: target, imageIndexes: [0] }] } } as Ev)

describe('§2.5 anchor: providerAssistantTokens from the cited chunks of #10 (usage 170, header in force)', () => {
  it('cited chunks that assemble to no blocks (only the finish chunk) count 0: 170 + 3,075 − 0 = 3,245 after #13', () => {
    const m = fold(prefix(13, (e) => { at(e, 10)['sourceEventSeqs'] = [9] }))
    expect(m.pressure()).toMatchObject({ totalTokens: 3245, surfaceTokens: 3075, baseline: { kind: 'usage', tokens: 170 } })
    expect(m.meter.taint).toBeNull()
  })

  it('the full attempt assembles to the tool call (15): 3,230, as §2.8', () => {
    expect(fold(prefix(13)).pressure().totalTokens).toBe(3230)
  })

  it('without sourceEventSeqs the logged message\'s own price counts (eventTokens 15): 3,230', () => {
    const m = fold(prefix(13, (e) => { delete at(e, 10)['sourceEventSeqs'] }))
    expect(m.pressure()).toMatchObject({ totalTokens: 3230, baseline: { kind: 'usage', tokens: 170 } })
  })

  it('without usage the anchor is the estimate envelope 46 + S 0 + eventTokens 15 = 61, whatever the chunks assemble to', () => {
    const m = fold(prefix(10, (e) => {
      delete (at(e, 10).data as Record<string, unknown>)['usage']
      at(e, 10)['sourceEventSeqs'] = [9]
    }))
    // surface after #10: 28 + 20 + 15 = 63; delta 63 − 15 = 48
    expect(m.pressure()).toEqual({ totalTokens: 109, surfaceTokens: 63, baseline: { kind: 'estimated', tokens: 61 } })
  })

  it('without a header in force (no #4) usage does not anchor: estimate 0 + S 0 + eventTokens 15', () => {
    const m = fold(prefix(10, (e) => { at(e, 10)['sourceEventSeqs'] = [9] }).filter((x) => x.seq !== 4))
    // context #5 names mock/mock-4k but no header is folded: the fixed image rule, no images anyway
    expect(m.pressure()).toEqual({ totalTokens: 63, surfaceTokens: 63, baseline: { kind: 'estimated', tokens: 15 } })
  })

  it('without usage, citing a non-chunk is no replay error (the chunks are only read for a usage anchor)', () => {
    const m = fold(prefix(10, (e) => {
      delete (at(e, 10).data as Record<string, unknown>)['usage']
      at(e, 10)['sourceEventSeqs'] = [6, 7, 8, 3]
    }))
    expect(m.meter.taint).toBeNull()
  })

  it('with usage but no header, citing a non-chunk is no replay error either', () => {
    const m = fold(prefix(10, (e) => { at(e, 10)['sourceEventSeqs'] = [6, 7, 8, 3] }).filter((x) => x.seq !== 4))
    expect(m.meter.taint).toBeNull()
  })
})

describe('replay errors taint the figure (report field meterTaint, first error wins)', () => {
  it('#10 citing #3 (a user message, not a chunk of the attempt): tainted at 10, the anchor keeps eventTokens', async () => {
    const events = appendixB()
    at(events, 10)['sourceEventSeqs'] = [6, 7, 8, 3]
    expect(reportOf(await checkLog(events, { dialect: 'seed' })).meterTaint)
      .toEqual({ seq: 10, reason: 'assistant/message cites chunks that are not earlier chunks of its step' })
    expect(fold(prefix(13, (e) => { at(e, 10)['sourceEventSeqs'] = [6, 7, 8, 3] })).pressure().totalTokens).toBe(3230)
  })

  it('cited chunks that cannot be assembled (a block-start of type image, its block-end not cited): tainted with the assembly message', async () => {
    const edit = (e: Events): void => {
      ((at(e, 6).data as Record<string, unknown>)['chunk'] as Record<string, unknown>)['blockType'] = 'image'
      at(e, 10)['sourceEventSeqs'] = [6, 8, 9]
    }
    const events = appendixB()
    edit(events)
    expect(reportOf(await checkLog(events, { dialect: 'seed' })).meterTaint)
      .toEqual({ seq: 10, reason: 'the cited chunks cannot be assembled: block 0 of type image never received a block-end' })
    // the anchor keeps eventTokens 15
    expect(fold(prefix(13, edit)).pressure().totalTokens).toBe(3230)
  })

  it('a step/start while step 1.1 is open (its step/end #13 made a foreign ignorable record): tainted at 16', async () => {
    const events = appendixB()
    const e13 = at(events, 13)
    e13.type = 'x/note'
    e13.data = {}
    e13['ignorable'] = true
    expect(reportOf(await checkLog(events, { dialect: 'seed' })).meterTaint).toEqual({ seq: 16, reason: 'step/start while a step is open' })
  })

  it('only the first replay error is kept: step/start at 2 while 1.1 is open, then a mismatched step/end at 13', () => {
    const m = fold(prefix(13, (e) => {
      const s = at(e, 2)
      s.type = 'step/start'
      s.data = { turn: 1, step: 2 }
      delete s['surfaceOp']
    }))
    expect(m.meter.taint).toEqual({ seq: 2, reason: 'step/start while a step is open' })
  })

  it('a valid step/start taints nothing', () => {
    expect(fold(prefix(16)).meter.taint).toBeNull()
  })
})

describe('§2.3 image price', () => {
  it('is the request/context\'s imageTokens for the folded route (85 after #5)', () => {
    expect(fold(prefix(4)).meter.imagePrice).toBeUndefined()
    expect(fold(prefix(5)).meter.imagePrice).toBe(85)
  })

  it('is undefined when the context names another provider or another model', () => {
    const other = fold([...prefix(4), ctx(5, { provider: 'other', model: 'mock-4k', contextWindow: 4000, imageTokens: 85 })])
    expect(other.meter.imagePrice).toBeUndefined()
    const otherModel = fold([...prefix(4), ctx(5, { provider: 'mock', model: 'mock-8k', contextWindow: 4000, imageTokens: 85 })])
    expect(otherModel.meter.imagePrice).toBeUndefined()
  })

  it('a route mismatch prices an image-only message by the fixed rule: 55 + 4 = 59 (surface 28 + 20 + 59)', () => {
    const img = (seq: number): Ev => ({ seq, time: 1700000009000 + seq, type: 'user/message', data: { id: 'm-img', role: 'user', content: [image()], source: { kind: 'user' } }, surfaceOp: 'append' } as Ev)
    const m = fold([...prefix(4), ctx(5, { provider: 'other', model: 'mock-4k', contextWindow: 4000, imageTokens: 85 }), img(6)])
    expect(m.meter.surfaceTokens).toBe(107)
    const same = fold([...prefix(4), ctx(5, { provider: 'mock', model: 'mock-4k', contextWindow: 4000, imageTokens: 85 }), img(6)])
    expect(same.meter.surfaceTokens).toBe(137) // 28 + 20 + 85 + 4
  })

  it('is always undefined in the rc.8 dialect (images use the fixed rule, §14.1)', () => {
    const events: Ev[] = [
      { seq: 0, time: 1, type: 'turn/start', data: { turn: 1 } },
      { seq: 1, time: 2, type: 'step/start', data: { turn: 1, step: 1 } },
      { seq: 2, time: 3, type: 'user/message', data: { id: 'm-u', role: 'user', content: [image()], source: { kind: 'user' } }, surfaceOp: 'append' },
      { seq: 3, time: 4, type: 'request/header', data: { header: { config: { provider: 'mock', model: 'mock-4k' } }, reason: 'initial' } },
      { seq: 4, time: 5, type: 'request/context', data: { provider: 'mock', model: 'mock-4k', contextWindow: 4000, imageTokens: 85 } },
    ] as Ev[]
    const m = fold(events, 'dsh-0.1.0-rc.8')
    expect(m.meter.imagePrice).toBeUndefined()
    expect(m.meter.surfaceTokens).toBe(59)
    // the same log in the seed dialect: the route price 85 + 4
    expect(fold(events).meter.surfaceTokens).toBe(89)
  })
})

describe('§2.4 re-pricing image nodes when the image price changes (85 → 100)', () => {
  it('#28 (text 47 chars + two images): 190 → 220, so pressure 1,513 + 190 = 1,703 → 1,733', () => {
    const before = fold(prefix(28))
    expect(before.pressure().totalTokens).toBe(1703)
    const after = fold([...prefix(28), mockCtx(29, 100)])
    expect(after.pressure().totalTokens).toBe(1733)
  })

  it('a user message holding only an image: 89 → 104', () => {
    const edit = (e: Events): void => { at(e, 28).data['content'] = [image()] }
    expect(fold(prefix(28, edit)).pressure().totalTokens).toBe(1602)
    expect(fold([...prefix(28, edit), mockCtx(29, 100)]).pressure().totalTokens).toBe(1617)
  })

  it('an image inside a tool result (#12 = one tool-result block holding one image): 93 → 108', () => {
    const edit = (e: Events): void => {
      (at(e, 12).data['message'] as Record<string, unknown>)['content'] = [{ type: 'tool-result', toolCallId: 'call_1', content: [image()] }]
    }
    // 170 + (28 + 20 + 15 + 93) − 15
    expect(fold(prefix(12, edit)).pressure().totalTokens).toBe(311)
    expect(fold([...prefix(12, edit), mockCtx(13, 100)]).pressure().totalTokens).toBe(326)
  })

  it('an image under 70 nested tool results (beyond the walk\'s depth bound 64): +15 as well', () => {
    let content: unknown[] = [image()]
    for (let i = 0; i < 70; i++) content = [{ type: 'tool-result', toolCallId: 'call_1', content }]
    const edit = (e: Events): void => { (at(e, 12).data['message'] as Record<string, unknown>)['content'] = content }
    // 170 + (28 + 20 + 15 + (85 + 70·4 + 4)) − 15 = 170 + 432 − 15
    expect(fold(prefix(12, edit)).pressure().totalTokens).toBe(587)
    expect(fold([...prefix(12, edit), mockCtx(13, 100)]).pressure().totalTokens).toBe(602)
  })

  it('a tool result with text only is not re-priced (3,075 surface either way)', () => {
    expect(fold([...prefix(12), mockCtx(13, 100)]).meter.surfaceTokens).toBe(3075)
  })
})

describe('nodes the meter does not know or that project to null', () => {
  it('an image/offload naming a shadowed node (#12 after the prune) leaves the surface at 1,366', () => {
    const m = fold([...prefix(15), offload(16, 12)])
    expect(m.meter.surfaceTokens).toBe(1366)
    expect(m.pressure().totalTokens).toBe(1521)
  })

  it('an assistant message with no content projects to null and costs 0, offloaded or not', () => {
    const edit = (e: Events): void => { ((at(e, 10).data['message'] as Record<string, unknown>))['content'] = [] }
    const m = fold(prefix(10, edit))
    expect(m.meter.projected(10)).toBeNull()
    expect(m.meter.routePriceOf(10)).toBe(0)
    expect(m.meter.fixedPriceOf(10)).toBe(0)
    // surface 28 + 20 + 0; anchor S 0 + the cited tool call 15, usage 170
    expect(m.pressure().totalTokens).toBe(203)
    const off = fold([...prefix(10, edit), offload(11, 10)])
    expect(off.meter.projected(10)).toBeNull()
    expect(off.meter.fixedPriceOf(10)).toBe(0)
    expect(off.meter.surfaceTokens).toBe(48)
  })

  it('a seq that is no live node projects to null and has fixed price 0', () => {
    const m = fold(prefix(15))
    expect(m.meter.projected(12)).toBeNull()
    expect(m.meter.fixedPriceOf(12)).toBe(0)
    expect(m.meter.projected(999)).toBeNull()
    expect(m.meter.fixedPriceOf(999)).toBe(0)
  })
})

describe('ReferenceMeter.measure with and without a header', () => {
  it('an estimate under a header, then without one: envelope 0 for no header', () => {
    const user = { seq: 3, time: 1, type: 'user/message', data: { id: 'm', role: 'user', content: [{ type: 'text', text: 'abcd' }], source: { kind: 'user' } }, surfaceOp: 'append' } as unknown as LogEvent
    const meter = new ReferenceMeter('seed', { event: (s) => (s === 3 ? user : undefined), offloadedIndexes: () => new Set<number>() })
    meter.onAppend(3)
    const header = (at(appendixB(), 4).data['header']) as unknown as EpochHeader
    // "abcd" = 1 + 4 + 4 = 9; tools 46
    expect(meter.measure(header)).toEqual({ totalTokens: 55, surfaceTokens: 9, baseline: { kind: 'estimated', tokens: 55 } })
    expect(meter.measure(undefined)).toEqual({ totalTokens: 9, surfaceTokens: 9, baseline: { kind: 'estimated', tokens: 9 } })
  })
})
