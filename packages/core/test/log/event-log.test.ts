/**
 * EventLog append validation (§1.1, §1.5.1, §1.4.9, §6.4): one test per class of refused append, each
 * asserting the typed error, its code, the seq it names, and that nothing entered the log.
 */
import { describe, expect, it } from 'vitest'
import { LogError, type LogErrorCode } from '../../src/errors.ts'
import { EventLog } from '../../src/log/event-log.ts'
import type { EventDraft, LogEvent } from '../../src/log/events.ts'
import { assistant, logOf, marker, replacement, result, user } from '../support/events.ts'


function refused(log: EventLog, draft: EventDraft | LogEvent, code: LogErrorCode, reason: RegExp): LogError {
  const before = { length: log.length, nodes: [...log.nodes] }
  let error: unknown
  try {
    if ('seq' in draft) log.accept(draft)
    else log.append(draft)
  } catch (err) { error = err }
  expect(error).toBeInstanceOf(LogError)
  const e = error as LogError
  expect(e.code).toBe(code)
  expect(e.reason).toMatch(reason)
  expect(log.length).toBe(before.length)
  expect(log.nodes).toEqual(before.nodes)
  return e
}

describe('EventLog append validation', () => {
  it('assigns contiguous seqs and refuses a gap or duplicate (INV-01)', () => {
    const log = logOf(marker('turn/start'), user('a'))
    expect(log.events.map((e) => e.seq)).toEqual([0, 1])
    const gap = refused(log, { seq: 3, time: 0, type: 'turn/end', data: { turn: 1, reason: { kind: 'completed' } } } as LogEvent, 'SEQ', /expected seq 2, found 3/)
    expect(gap.location.seq).toBe(3)
    refused(log, { seq: 1, time: 0, type: 'turn/end', data: { turn: 1, reason: { kind: 'completed' } } } as LogEvent, 'SEQ', /expected seq 2, found 1/)
  })

  it('refuses a replace of a node that is not on the surface (INV-05)', () => {
    const log = logOf(user('a'), marker('turn/start'))
    const e = refused(log, replacement(1, 1, [1]), 'REPLACE', /start 1 is not a current surface node/)
    expect(e.location).toMatchObject({ seq: 2, field: 'surfaceOp.start' })
  })

  it('refuses a reversed positional span, and accepts start > end by seq when positions are ordered (§1.5.2)', () => {
    const log = logOf(user('a'), user('b'), user('c'), user('d'))
    log.append(replacement(1, 2, [1, 2])) // #4 now sits at position 1: surface [0, 4, 3]
    expect(log.nodes).toEqual([0, 4, 3])
    refused(log, replacement(3, 4, [3, 4]), 'REPLACE', /reversed/)
    log.append(replacement(4, 3, [4, 3]))
    expect(log.nodes).toEqual([0, 5])
    expect(log.state.surface.replaceGeneration).toBe(2)
  })

  it('refuses a replace whose provenance misses a shadowed node (§1.5.1 step 3)', () => {
    const log = logOf(user('a'), user('b'), user('c'))
    refused(log, replacement(0, 2, [0, 2]), 'REPLACE', /missing 1/)
  })

  it('refuses a tool/result replacement that changes more than the inner content (§1.4.9, INV-06)', () => {
    const log = logOf(assistant(['c1']), result('c1', 'long output'), marker('turn/start'))
    const good = { ...result('c1', 'short'), surfaceOp: { op: 'replace' as const, start: 1 as never, end: 1 as never }, sourceEventSeqs: [1 as never] }
    const badMeta = { ...good, data: { ...good.data, meta: { extra: true } } }
    refused(log, badMeta, 'REPLACE', /only in message.content\[0\].content/)
    const badError = { ...good, data: { ...good.data, message: { ...good.data.message, content: [{ ...good.data.message.content[0], isError: true }] as typeof good.data.message.content } } }
    refused(log, badError, 'REPLACE', /only in message.content\[0\].content/)
    log.append(good)
    expect(log.nodes).toEqual([0, 3])
  })

  it('refuses a tool/result replacement outside an open turn (§1.3, D-15)', () => {
    const log = logOf(marker('turn/start'), assistant(['c1']), result('c1', 'long output'), marker('turn/end'))
    const prune = { ...result('c1', 'short'), surfaceOp: { op: 'replace' as const, start: 2 as never, end: 2 as never }, sourceEventSeqs: [2 as never] }
    refused(log, prune, 'REPLACE', /needs an open turn/)
  })

  it('appends a metering event and its replacement as a pair, or neither (§2.6, D-15)', () => {
    const log = logOf(marker('turn/start'), assistant(['c1']), result('c1', 'long output'))
    const metering: EventDraft = { time: 0, type: 'compaction/prune', data: { shadowedRange: { start: 2 as never, end: 2 as never }, shadowedSeqs: [2 as never], shadowedTokenCount: 9 } }
    const prune = { ...result('c1', 'short'), surfaceOp: { op: 'replace' as const, start: 2 as never, end: 2 as never }, sourceEventSeqs: [2 as never] }
    const stale = { ...prune, surfaceOp: { op: 'replace' as const, start: 7 as never, end: 7 as never }, sourceEventSeqs: [2 as never] }
    expect(() => log.appendMeteredReplacement(metering, stale)).toThrow(/start 7 is not a current surface node/)
    expect(log.length).toBe(3)
    expect(() => log.appendMeteredReplacement(prune, prune)).toThrow(/metering event must be log-only/)
    const [m, r] = log.appendMeteredReplacement(metering, prune)
    expect([m.seq, r.seq]).toEqual([3, 4])
    expect(log.nodes).toEqual([1, 4])
  })

  it('refuses a tool/result replacement over several nodes or over a non-result', () => {
    const log = logOf(assistant(['c1', 'c2']), result('c1'), result('c2'))
    const span = { ...result('c1', 'x'), surfaceOp: { op: 'replace' as const, start: 1 as never, end: 2 as never }, sourceEventSeqs: [1, 2] as never }
    refused(log, span, 'REPLACE', /exactly one node/)
    const overAssistant = { ...result('c1', 'x'), surfaceOp: { op: 'replace' as const, start: 0 as never, end: 0 as never }, sourceEventSeqs: [0] as never }
    refused(log, overAssistant, 'REPLACE', /must replace a tool\/result node; node 0 is assistant\/message/)
  })

  it('validates image/offload targets (§6.4)', () => {
    const img = { type: 'image' as const, attachment: { attachmentId: 'sha256:' + 'a'.repeat(64), mediaType: 'image/png', bytes: 1, width: 1, height: 1 } }
    const log = logOf(user('a', [img, img]), assistant([]))
    const offload = (targets: Array<{ seq: number; imageIndexes: number[] }>): EventDraft => ({ time: 0, type: 'image/offload', data: { targets: targets as never } })
    refused(log, offload([{ seq: 1, imageIndexes: [0] }]), 'OFFLOAD', /assistant\/message; only user\/message and tool\/result/)
    refused(log, offload([{ seq: 0, imageIndexes: [2] }]), 'OFFLOAD', /out of range: node 0 has 2 image/)
    refused(log, offload([{ seq: 0, imageIndexes: [1, 0] }]), 'OFFLOAD', /strictly increasing/)
    refused(log, offload([{ seq: 0, imageIndexes: [] }]), 'OFFLOAD', /at least one image/)
    refused(log, offload([{ seq: 0, imageIndexes: [0] }, { seq: 0, imageIndexes: [1] }]), 'OFFLOAD', /targeted twice/)
    log.append(offload([{ seq: 0, imageIndexes: [0] }]))
    refused(log, offload([{ seq: 0, imageIndexes: [0] }]), 'OFFLOAD', /already offloaded/)
    expect(log.state.seriesEpoch).toBe(1)
    expect(log.state.surface.replaceGeneration).toBe(0)
  })

  it('freezes accepted events deeply (§1.1 rule 3)', () => {
    const log = logOf(user('a'))
    const e = log.events[0] as { data: { content: Array<{ text: string }> } }
    expect(Object.isFrozen(e)).toBe(true)
    expect(() => { (e.data.content[0] as { text: string }).text = 'b' }).toThrow(TypeError)
  })
})
