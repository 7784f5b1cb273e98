/**
 * Image-offload selection and recording (§6.1, §6.3, §6.4, §6.8): the §6.10 worked example on the
 * running example (Appendix B #28–#31 and #52–#53), partial relief and the refusals.
 */
import { appendixBEvents, appendixBTime } from '@compaction-sim/fixtures'
import { describe, expect, it } from 'vitest'
import { Seq } from '../../src/brand.ts'
import { LogError } from '../../src/errors.ts'
import { encodeEvent } from '../../src/log/codec.ts'
import { EventLog } from '../../src/log/event-log.ts'
import type { SessionEvent } from '../../src/log/events.ts'
import type { ContentBlock, LlmFailure } from '../../src/log/llm.ts'
import { OffloadError, appendOffload, offloadCountOf, selectOffload } from '../../src/offload/select.ts'
import { routePrice } from '../../src/meter/price.ts'
import { assistant, marker, result, user } from '../support/events.ts'

const image = (n: number): ContentBlock => ({
  type: 'image',
  attachment: { attachmentId: `sha256:${n.toString(16).padStart(64, '0')}`, mediaType: 'image/png', bytes: 10, width: 1, height: 1, name: `i${n}.png` },
})

/** The failure of Appendix B #29. */
function failureOf(seq: number, events: SessionEvent[]): LlmFailure {
  const e = events[seq] as SessionEvent<'assistant/chunk'>
  if (e.data.chunk.type !== 'finish' || e.data.chunk.reason.kind !== 'error') throw new Error(`#${seq} is not a failed finish`)
  return e.data.chunk.reason.failure
}

describe('§6.10 worked example (running example, turn 2 and the turn-3 bracket)', () => {
  it('§6.10 steps 2–4: the turn-2 request (#2 #3 #10 #15 #23 #28) with offloadImages 1 selects {28:[0]}, recorded as #30', () => {
    const fixture = appendixBEvents()
    const log = EventLog.fromEvents(fixture.slice(0, 30), { dialect: 'seed' })
    const k = offloadCountOf(failureOf(29, fixture))
    expect(k).toBe(1)
    // The failed request was derived after #28; only the chunk #29 was appended since (§6.3).
    const request = log.deriveNodeMessages()
    expect(request.map((n) => n.seq)).toEqual([2, 3, 10, 15, 23, 28])
    const targets = selectOffload(request, log, k ?? 0)
    expect(targets).toEqual([{ seq: 28, imageIndexes: [0] }])
    const written = appendOffload(log, targets, () => appendixBTime(30))
    expect(written).toEqual(fixture[30])
    expect(encodeEvent(written)).toBe('{"seq":30,"time":1700000000155,"type":"image/offload","data":{"targets":[{"seq":28,"imageIndexes":[0]}]}}')
    expect(Object.isFrozen(targets[0]?.imageIndexes)).toBe(false)
    // §6.10 step 6: #28 drops from 190 to 152 (P_route, image 85).
    const m28 = log.deriveNodeMessages().find((n) => n.seq === 28)?.message
    expect(m28?.content.map((b) => b.type)).toEqual(['text', 'text', 'image'])
    expect(m28 === undefined ? -1 : routePrice(m28, 85)).toBe(152)
  })

  it('§6.8, §7.14: during the turn-3 bracket the region-only selection picks {28:[1]} (index 0 already offloaded at #30)', () => {
    const fixture = appendixBEvents()
    const log = EventLog.fromEvents(fixture.slice(0, 53), { dialect: 'seed' })
    const error = fixture[52] as SessionEvent<'compaction/summary-error'>
    const region = new Set<number>(error.data.shadowedSeqs)
    expect([...region]).toEqual([3, 10, 15, 23, 28, 37, 42])
    const k = offloadCountOf(error.data.failure)
    expect(k).toBe(1)
    const request = log.deriveNodeMessages()
    expect(request.map((n) => n.seq)).toEqual([2, 3, 10, 15, 23, 28, 37, 42, 47, 49])
    const targets = selectOffload(request, log, k ?? 0, region)
    expect(targets).toEqual([{ seq: 28, imageIndexes: [1] }])
    expect(appendOffload(log, targets, () => appendixBTime(53))).toEqual(fixture[53])
    // Nothing is left to offload in the region: not handleable, the bracket fails (§6.8 step 3).
    expect(selectOffload(request, log, 1, region)).toEqual([])
  })

  it('§6.8: nodes outside the region are never selected', () => {
    const fixture = appendixBEvents()
    const log = EventLog.fromEvents(fixture.slice(0, 53), { dialect: 'seed' })
    expect(selectOffload(log.deriveNodeMessages(), log, 5, new Set([3, 10, 42]))).toEqual([])
  })
})

describe('selectOffload (§6.3)', () => {
  function mixedLog(): EventLog {
    const log = new EventLog({ dialect: 'seed' })
    log.append(marker('turn/start'))
    const system = { id: 's' as never, role: 'system' as const, content: [{ type: 'text', text: 'sys' }, image(1)], source: { kind: 'plugin' as const, plugin: 'p' } }
    log.append({ time: 0, type: 'system/message', data: system, surfaceOp: 'append' }) // #1
    log.append(user('u1', [image(2), image(3)])) // #2
    const a = assistant(['c1'])
    a.data.message.content.push(image(4))
    log.append(a) // #3
    const r = result('c1')
    const nested: ContentBlock = { type: 'tool-result', toolCallId: 'n' as never, content: [image(6)] }
    r.data.message.content = [{ ...r.data.message.content[0], content: [image(5), { type: 'text', text: 'out' }, nested, image(7)] }]
    log.append(r) // #4
    log.append(user('u2', [image(8)])) // #5
    return log
  }

  it('§6.3: walks request order, depth-first indexes ascending, skipping system and assistant output', () => {
    const log = mixedLog()
    const request = log.deriveNodeMessages()
    expect(request.map((n) => n.seq)).toEqual([1, 2, 3, 4, 5])
    expect(selectOffload(request, log, 1)).toEqual([{ seq: 2, imageIndexes: [0] }])
    expect(selectOffload(request, log, 4)).toEqual([{ seq: 2, imageIndexes: [0, 1] }, { seq: 4, imageIndexes: [0, 1] }])
    expect(selectOffload(request, log, 6)).toEqual([{ seq: 2, imageIndexes: [0, 1] }, { seq: 4, imageIndexes: [0, 1, 2] }, { seq: 5, imageIndexes: [0] }])
  })

  it('§6.3, Q-11: selects all eligible occurrences when fewer than k exist (partial relief)', () => {
    const log = mixedLog()
    const all = selectOffload(log.deriveNodeMessages(), log, 100)
    expect(all.flatMap((t) => t.imageIndexes)).toHaveLength(6)
  })

  it('§6.2: indexes are of the original event message, stable across offloads; offloaded ones are skipped', () => {
    const log = mixedLog()
    appendOffload(log, [{ seq: Seq(2), imageIndexes: [1] }, { seq: Seq(4), imageIndexes: [0, 2] }], () => 1)
    const request = log.deriveNodeMessages()
    expect(selectOffload(request, log, 3)).toEqual([{ seq: 2, imageIndexes: [0] }, { seq: 4, imageIndexes: [1] }, { seq: 5, imageIndexes: [0] }])
    expect(selectOffload(request, log, 2)).toEqual([{ seq: 2, imageIndexes: [0] }, { seq: 4, imageIndexes: [1] }])
  })

  it('§6.3: a request without eligible images yields [] (not handleable)', () => {
    const log = new EventLog({ dialect: 'seed' })
    log.append(user('plain'))
    expect(selectOffload(log.deriveNodeMessages(), log, 1)).toEqual([])
  })

  it('§6.1: refuses a non-positive or non-integer count', () => {
    const log = mixedLog()
    for (const k of [0, -1, 1.5, Number.NaN]) {
      expect(() => selectOffload(log.deriveNodeMessages(), log, k)).toThrow(OffloadError)
    }
    let error: unknown
    try { selectOffload([], log, 0) } catch (err) { error = err }
    expect(error).toMatchObject({ name: 'OffloadError', code: 'COUNT' })
  })

  it('D-06: the rc.8 dialect has no offload path, so nothing is ever selected', () => {
    const log = new EventLog({ dialect: 'dsh-0.1.0-rc.8' })
    log.append(user('u', [image(1)]))
    expect(selectOffload(log.deriveNodeMessages(), log, 1)).toEqual([])
  })
})

describe('offloadCountOf (§6.1)', () => {
  const base: LlmFailure = { message: 'too many images', code: 'IMAGE_OFFLOAD_REQUIRED' }

  it('§6.1: a positive integer offloadImages is handleable', () => {
    expect(offloadCountOf({ ...base, offloadImages: 1 })).toBe(1)
    expect(offloadCountOf({ ...base, offloadImages: 7 })).toBe(7)
  })

  it('§6.1: a missing, non-integer or non-positive count, or another code, is not handleable', () => {
    expect(offloadCountOf(base)).toBeUndefined()
    expect(offloadCountOf({ ...base, offloadImages: 0 })).toBeUndefined()
    expect(offloadCountOf({ ...base, offloadImages: -2 })).toBeUndefined()
    expect(offloadCountOf({ ...base, offloadImages: 1.5 })).toBeUndefined()
    expect(offloadCountOf({ ...base, offloadImages: Number.POSITIVE_INFINITY })).toBeUndefined()
    expect(offloadCountOf({ ...base, offloadImages: '2' as unknown as number })).toBeUndefined()
    expect(offloadCountOf({ ...base, code: 'CONTEXT_WINDOW_EXCEEDED', offloadImages: 1 })).toBeUndefined()
  })
})

describe('appendOffload (§6.4)', () => {
  it('§6.4: the EventLog refuses invalid targets and nothing is written', () => {
    const log = new EventLog({ dialect: 'seed' })
    log.append(user('u', [image(1)]))
    log.append(assistant())
    for (const targets of [[], [{ seq: Seq(1), imageIndexes: [0] }], [{ seq: Seq(0), imageIndexes: [1] }], [{ seq: Seq(0), imageIndexes: [] }]]) {
      expect(() => appendOffload(log, targets, () => 0)).toThrow(LogError)
      expect(log.length).toBe(2)
    }
    appendOffload(log, [{ seq: Seq(0), imageIndexes: [0] }], () => 0)
    expect(() => appendOffload(log, [{ seq: Seq(0), imageIndexes: [0] }], () => 0)).toThrow(/already offloaded/)
    expect(log.length).toBe(3)
  })
})
