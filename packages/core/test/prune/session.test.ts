/**
 * `pruneSession` (§5.4): the §5.5 worked example as a log, the running example's prune (Appendix B
 * #14/#15), the projection input (D-08, INV-39), and one test per refusal (nothing written).
 */
import { appendixBEvents, appendixBTime } from '@compaction-sim/fixtures'
import { describe, expect, it } from 'vitest'
import { Seq } from '../../src/brand.ts'
import { PRUNE_MARKER } from '../../src/constants.ts'
import { LogError } from '../../src/errors.ts'
import { encodeEvent } from '../../src/log/codec.ts'
import { EventLog } from '../../src/log/event-log.ts'
import type { EventDraft, SessionEvent } from '../../src/log/events.ts'
import type { ContentBlock, ImageBlock, ToolResultMessage } from '../../src/log/llm.ts'
import { fixedPrice, routePrice } from '../../src/meter/price.ts'
import { harnessReadOnlyPath, offloadPlaceholder } from '../../src/offload/projection.ts'
import { resolvePruneConfig } from '../../src/prune/config.ts'
import { PruneError, pruneSession, type PruneErrorCode } from '../../src/prune/session.ts'
import { assistant, marker, result } from '../support/events.ts'

const defaults = resolvePruneConfig(undefined)

/** A clock that reads `start`, `start + stepMs`, … on successive calls. */
function steppingClock(start: number, stepMs: number): () => number {
  let now = start
  return () => {
    const t = now
    now += stepMs
    return t
  }
}

const plot: ImageBlock = {
  type: 'image',
  attachment: { attachmentId: `sha256:${'ab'.repeat(32)}`, mediaType: 'image/png', bytes: 48213, width: 1024, height: 768, name: 'plot.png' },
}

const T55 = 1700000900000

/** A seed log whose #70 is the §5.5 tool result (turn 6, step 2, `m-t9`, `call_7`) and whose next seq is 80. */
function workedExampleLog(): EventLog {
  const log = new EventLog({ dialect: 'seed' })
  const filler = (until: number): void => {
    while (log.length < until) log.accept({ seq: Seq(log.length), time: T55, type: 'host/note', data: { n: log.length }, ignorable: true })
  }
  log.append({ time: T55, type: 'turn/start', data: { turn: 6 } })
  log.append({ time: T55, type: 'step/start', data: { turn: 6, step: 2 } })
  filler(68)
  log.append({
    time: T55, type: 'assistant/message',
    data: { turn: 6, step: 2, message: { id: 'm-a9' as never, role: 'assistant', content: [{ type: 'tool-call', id: 'call_7' as never, name: 'plot', arguments: '{}' }], source: { kind: 'model', provider: 'mock', model: 'mock-4k' } } },
    surfaceOp: 'append',
  })
  log.append({ time: T55, type: 'tool/call', data: { turn: 6, step: 2, callId: 'call_7' as never, name: 'plot', arguments: '{}' } })
  const message: ToolResultMessage = {
    id: 'm-t9' as never, role: 'user',
    content: [{
      type: 'tool-result', toolCallId: 'call_7' as never,
      content: [{ type: 'text', text: 'a'.repeat(6000) }, plot, { type: 'text', text: 'b'.repeat(5000) }], isError: false,
    }],
    source: { kind: 'tool', callId: 'call_7' as never },
  }
  const appended = log.append({ time: T55, type: 'tool/result', data: { turn: 6, step: 2, message }, surfaceOp: 'append', sourceEventSeqs: [Seq(69)] })
  expect(appended.seq).toBe(70)
  filler(80)
  return log
}

// The §5.5 "Events appended" lines, verbatim except that the [shortened: …] texts are expanded.
const SPEC_LINE_80 = String.raw`{"seq":80,"time":1700000900000,"type":"compaction/prune","data":{"shadowedRange":{"start":70,"end":70},"shadowedSeqs":[70],"shadowedTokenCount":2821}}`
const SPEC_LINE_81 = String.raw`{"seq":81,"time":1700000900000,"type":"tool/result","data":{"turn":6,"step":2,"message":{"id":"m-t9","role":"user","content":[{"type":"tool-result","toolCallId":"call_7","content":[{"type":"text","text":"aaaa[shortened: 4096 × a]\n\n[... middle of tool result omitted ...]\n\n"},{"type":"image","attachment":{"attachmentId":"sha256:abababababababababababababababababababababababababababababababab","mediaType":"image/png","bytes":48213,"width":1024,"height":768,"name":"plot.png"}},{"type":"text","text":"bbbb[shortened: 1024 × b]"}],"isError":false}],"source":{"kind":"tool","callId":"call_7"}}},"surfaceOp":{"op":"replace","start":70,"end":70},"sourceEventSeqs":[70]}`
  .replace('aaaa[shortened: 4096 × a]', 'a'.repeat(4096))
  .replace('bbbb[shortened: 1024 × b]', 'b'.repeat(1024))

describe('pruneSession — §5.5 worked example', () => {
  it('§5.5: appends #80 compaction/prune (2,821) and #81 the replacement, exactly the spec lines', () => {
    const log = workedExampleLog()
    const res = pruneSession(log, defaults, () => T55)
    expect(res).toEqual({ pruned: [{ originalSeq: 70, replacementSeq: 81, callId: 'call_7', charsBefore: 11000, charsAfter: 5163 }], charsRemoved: 5837 })
    expect(log.length).toBe(82)
    const e80 = log.event(80) as SessionEvent
    const e81 = log.event(81) as SessionEvent
    expect(encodeEvent(e80)).toBe(SPEC_LINE_80)
    expect(encodeEvent(e81)).toBe(SPEC_LINE_81)
    expect(e80).toEqual(JSON.parse(SPEC_LINE_80))
    expect(e81).toEqual(JSON.parse(SPEC_LINE_81))
    expect(log.nodes).toEqual([68, 81])
  })

  it('§5.5: shadowedTokenCount is P_fixed of the original (1,504 + 55 + 1,254 + 4 + 4); the new node prices P_fixed 1,362 and P_route(85) 1,392', () => {
    const log = workedExampleLog()
    const original = (log.event(70) as SessionEvent<'tool/result'>).data.message
    expect(fixedPrice(original)).toBe(2821)
    expect(routePrice(original, 85)).toBe(2851)
    pruneSession(log, defaults, () => T55)
    const replacement = (log.event(81) as SessionEvent<'tool/result'>).data.message
    expect(fixedPrice(replacement)).toBe(1362)
    expect(routePrice(replacement, 85)).toBe(1392)
  })

  it('§5.4 rule 5: an immediate second pass prunes nothing and writes nothing', () => {
    const log = workedExampleLog()
    pruneSession(log, defaults, () => T55)
    expect(pruneSession(log, defaults, () => T55)).toEqual({ pruned: [], charsRemoved: 0 })
    expect(log.length).toBe(82)
  })
})

describe('pruneSession — Appendix B running example (#14, #15)', () => {
  it('Appendix B #13 → #14/#15: the appended pair equals the fixture (12,000 "L" → 5,163 cp, 3,012, price 1,303)', () => {
    const fixture = appendixBEvents()
    const log = EventLog.fromEvents(fixture.slice(0, 14), { dialect: 'seed' })
    expect(log.event(13)?.type).toBe('step/end')
    expect(log.state.openTurn).toBe(1)
    const res = pruneSession(log, defaults, steppingClock(appendixBTime(14), 5))
    expect(res).toEqual({ pruned: [{ originalSeq: 12, replacementSeq: 15, callId: 'call_1', charsBefore: 12000, charsAfter: 5163 }], charsRemoved: 6837 })
    for (const seq of [14, 15]) {
      const got = log.event(seq) as SessionEvent
      const want = fixture[seq] as SessionEvent
      expect(got).toEqual(want)
      expect(encodeEvent(got)).toBe(encodeEvent(want))
    }
    // §1.4.17 JSON example, verbatim.
    expect(encodeEvent(log.event(14) as SessionEvent)).toBe(
      '{"seq":14,"time":1700000000075,"type":"compaction/prune","data":{"shadowedRange":{"start":12,"end":12},"shadowedSeqs":[12],"shadowedTokenCount":3012}}',
    )
    expect(routePrice((log.event(15) as SessionEvent<'tool/result'>).data.message, 85)).toBe(1303)
    expect(log.nodes).toEqual([2, 3, 10, 15])
    expect(log.state.surface.replaceGeneration).toBe(1)
  })

  it('Appendix B #49: 7,650 code points are not prunable — the turn-3 pre-step pass writes nothing (§7.14)', () => {
    const log = EventLog.fromEvents(appendixBEvents().slice(0, 51), { dialect: 'seed' })
    expect(pruneSession(log, defaults, () => 0)).toEqual({ pruned: [], charsRemoved: 0 })
    expect(log.length).toBe(51)
  })
})

describe('pruneSession — input is the projection (§5.4 rule 3, D-08, INV-39)', () => {
  function logWithImageResult(dialect: 'seed' | 'dsh-0.1.0-rc.8'): EventLog {
    const log = new EventLog({ dialect })
    log.append(marker('turn/start'))
    log.append(assistant(['c1']))
    const r = result('c1', 'x'.repeat(9000))
    const block = r.data.message.content[0]
    r.data.message.content = [{ ...block, content: [{ type: 'text', text: 'x'.repeat(9000) }, plot] }]
    r.data['meta'] = { tool: 'render' }
    r.data['extra'] = 'kept'
    log.append(r)
    return log
  }

  it('§5.4 rule 3: an offloaded image enters the replacement as its placeholder; the price is of the projection (INV-21)', () => {
    const log = logWithImageResult('seed')
    log.append({ time: 0, type: 'image/offload', data: { targets: [{ seq: Seq(2), imageIndexes: [0] }] } })
    const placeholder = { type: 'text', text: offloadPlaceholder(plot.attachment, harnessReadOnlyPath(plot.attachment)) }
    const res = pruneSession(log, defaults, () => 7)
    expect(res.pruned).toEqual([{ originalSeq: 2, replacementSeq: 5, callId: 'c1', charsBefore: 9000, charsAfter: 5163 }])
    const prune = log.event(4) as SessionEvent<'compaction/prune'>
    const projected: ToolResultMessage = { ...(log.event(2) as SessionEvent<'tool/result'>).data.message }
    projected.content = [{ ...projected.content[0], content: [{ type: 'text', text: 'x'.repeat(9000) }, placeholder] }]
    expect(prune.data.shadowedTokenCount).toBe(fixedPrice(projected))
    const replacement = log.event(5) as SessionEvent<'tool/result'>
    const inner: ContentBlock[] = replacement.data.message.content[0].content
    expect(inner).toEqual([{ type: 'text', text: 'x'.repeat(4096) + PRUNE_MARKER + 'x'.repeat(1024) }, placeholder])
    expect(replacement.data['meta']).toEqual({ tool: 'render' })
    expect(replacement.data['extra']).toBe('kept')
    expect(replacement.time).toBe(7)
    // The placeholder is not measured, so the replacement never becomes prunable (§5.2, INV-23).
    expect(pruneSession(log, defaults, () => 7).pruned).toEqual([])
  })

  it('D-08 rc.8 dialect: the raw event message is pruned and priced (images by the fixed rule)', () => {
    const log = logWithImageResult('dsh-0.1.0-rc.8')
    const original = (log.event(2) as SessionEvent<'tool/result'>).data.message
    pruneSession(log, defaults, () => 7)
    expect((log.event(3) as SessionEvent<'compaction/prune'>).data.shadowedTokenCount).toBe(fixedPrice(original))
    const inner = (log.event(4) as SessionEvent<'tool/result'>).data.message.content[0].content
    expect(inner).toEqual([{ type: 'text', text: 'x'.repeat(4096) + PRUNE_MARKER + 'x'.repeat(1024) }, plot])
  })

  it('§5.4: candidates are the tool-result nodes in surface order; each pair is adjacent and cites its node', () => {
    const log = new EventLog({ dialect: 'seed' })
    log.append(marker('turn/start'))
    log.append(assistant(['c1', 'c2', 'c3']))
    log.append(result('c2', 'b'.repeat(9000)))
    log.append(result('c1', 'small'))
    log.append(result('c3', 'c'.repeat(10000)))
    const res = pruneSession(log, defaults, steppingClock(100, 1))
    expect(res.pruned.map((p) => [p.originalSeq, p.replacementSeq, p.callId])).toEqual([[2, 6, 'c2'], [4, 8, 'c3']])
    expect(res.charsRemoved).toBe(9000 - 5163 + 10000 - 5163)
    expect(log.events.slice(5).map((e) => [e.seq, e.type, e.time])).toEqual([
      [5, 'compaction/prune', 100], [6, 'tool/result', 101], [7, 'compaction/prune', 102], [8, 'tool/result', 103],
    ])
    expect(log.nodes).toEqual([1, 6, 3, 8])
  })
})

describe('pruneSession — refusals write nothing', () => {
  function refused(log: EventLog, code: PruneErrorCode, reason: RegExp): PruneError {
    const length = log.length
    const nodes = [...log.nodes]
    let error: unknown
    try { pruneSession(log, defaults, () => 0) } catch (err) { error = err }
    expect(error).toBeInstanceOf(PruneError)
    const e = error as PruneError
    expect(e.name).toBe('PruneError')
    expect(e.code).toBe(code)
    expect(e.message).toMatch(reason)
    expect(log.length).toBe(length)
    expect(log.nodes).toEqual(nodes)
    return e
  }

  it('§5.4 rule 4, D-15: a prune outside a turn is refused before any compaction/prune is written', () => {
    const log = new EventLog({ dialect: 'seed' })
    log.append(marker('turn/start'))
    log.append(assistant(['c1']))
    log.append(result('c1', 'z'.repeat(9000)))
    log.append(marker('turn/end'))
    const e = refused(log, 'NO_OPEN_TURN', /needs an open turn/)
    expect(e.result).toEqual({ pruned: [], charsRemoved: 0 })
    expect(log.events.some((ev) => ev.type === 'compaction/prune')).toBe(false)
  })

  it('INV-24, §3.6: a prune inside a live compaction bracket is refused', () => {
    const log = new EventLog({ dialect: 'seed' })
    log.append(marker('turn/start'))
    log.append(assistant(['c1']))
    log.append(result('c1', 'z'.repeat(9000)))
    log.append({ time: 0, type: 'compaction/start', data: { compactionId: 'cmp-1' as never, turn: 1 } })
    refused(log, 'LOCKED', /live compaction bracket/)
  })

  it('§5.4 rule 4: if the Session refuses a pair, pruneSession throws and earlier pairs stay durable', () => {
    class FailingSecondPair extends EventLog {
      private calls = 0
      override appendMeteredReplacement(metering: EventDraft, replacement: EventDraft): [SessionEvent, SessionEvent] {
        this.calls++
        if (this.calls === 2) throw new LogError('IO', 'storage refused the write')
        return super.appendMeteredReplacement(metering, replacement)
      }
    }
    const log = new FailingSecondPair({ dialect: 'seed' })
    log.append(marker('turn/start'))
    log.append(assistant(['c1', 'c2']))
    log.append(result('c1', 'a'.repeat(9000)))
    log.append(result('c2', 'b'.repeat(9000)))
    let error: unknown
    try { pruneSession(log, defaults, () => 0) } catch (err) { error = err }
    expect(error).toBeInstanceOf(PruneError)
    const e = error as PruneError
    expect(e.code).toBe('REJECTED')
    expect(e.cause).toBeInstanceOf(LogError)
    expect(e.result.pruned.map((p) => p.originalSeq)).toEqual([2])
    expect(log.length).toBe(6)
    expect(log.nodes).toEqual([1, 5, 3])
  })
})
