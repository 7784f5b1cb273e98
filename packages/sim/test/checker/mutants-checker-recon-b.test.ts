/**
 * Pins of the §12.7 request-reconstruction checks (INV-41 … INV-44) found by mutation testing (recon-b):
 * exact messages of INV-41 reason/startsSeries lines (seed and rc.8), INV-42's choice of the dispatch chunk,
 * INV-43 derivation/config/tools/append-extension lines (revision, header, lifecycle and rc.8 boundaries),
 * INV-44 cap (plain and hardened summaryRoom), tools, instruction, head and region lines, and its pairing of
 * captured requests with attempt records (queue order, compaction id, bracket).
 */
import { EventLog, type CapturedRequest, type Dialect, type LogEvent } from '@compaction-sim/core'
import { describe, expect, it } from 'vitest'
import { checkLog } from '../../src/checker/run.ts'
import { appendixBCapture, INSTRUCTION } from './captures.ts'
import { at, editedAppendixB, foreign, reportOf, type AppendixEvent } from './support.ts'

/** Appendix B's manifest with hardened summaryRoom (HARD-2 clamps the summary cap, issue #19). */
const HARD = { scenario: 'appendix-b', compaction: { hardening: { summaryRoom: true } }, pruner: {}, routes: [{ provider: 'mock', model: 'mock-4k', contextWindow: 4000, imageTokens: 85 }], faults: [] } as never

type Report = ReturnType<typeof reportOf>

async function check(events: readonly AppendixEvent[], requests: CapturedRequest[] | undefined, dialect: Dialect = 'seed'): Promise<Report> {
  const opts = requests === undefined ? { dialect } : { dialect, requests }
  return reportOf(await checkLog([...events] as never, opts))
}

const RC8: Dialect = 'dsh-0.1.0-rc.8'
const SERIES_RC8 = [17, 31, 58].map((s) => `INV-41@${s}: expected one of 'initial', 'resume', 'change', got the string "series" (field data.reason)`)
const req = (c: CapturedRequest, over: Record<string, unknown>): CapturedRequest => ({ ...c, ...over }) as CapturedRequest

/** `id@seq: message` of the given invariants' violations. */
const lines = (r: Report, ...ids: string[]): string[] => r.violations.filter((v) => ids.includes(v.id)).map((v) => `${v.id}@${v.seq}: ${v.message}`)

/** The Appendix B capture of `events` with `edit` applied. */
function capture(events: readonly AppendixEvent[], edit: (c: CapturedRequest[]) => void = () => undefined): CapturedRequest[] {
  const c = appendixBCapture(events as unknown as LogEvent[])
  edit(c)
  return c
}
const byRev = (c: CapturedRequest[], L: number): Record<string, unknown> & CapturedRequest => c.find((x) => x.logRevisionAtDispatch === L) as never

/** A conversation request at revision L whose messages are core's derivation of log[0:L]. */
function conversation(events: readonly AppendixEvent[], L: number, index: number): CapturedRequest {
  const messages = EventLog.fromEvents(events.slice(0, L) as unknown as LogEvent[], { dialect: 'seed' }).deriveNodeMessages().map((n) => n.message)
  return { index, logRevisionAtDispatch: L, time: 0, purpose: 'conversation', provider: 'mock', model: 'mock-4k', messages, tools: (byRev(appendixBCapture(events as unknown as LogEvent[]), 6)).tools, outcome: 'stop' } as CapturedRequest
}

const ev = editedAppendixB()
const L43 = 'captured request'
const C44 = 'captured compaction request'

describe('INV-41 reasons and startsSeries', () => {
  it('a non-initial reason on the first header names it as the first header of the log', async () => {
    const r = await check(editedAppendixB((e) => { at(e, 4).data['reason'] = 'change' }), undefined)
    expect(lines(r, 'INV-41')).toEqual(['INV-41@4: reason change, expected initial (the first header of the log)'])
    expect(r.internalErrors).toEqual([])
  })
  it('startsSeries on the initial header is reported', async () => {
    const r = await check(editedAppendixB((e) => { at(e, 4).data['startsSeries'] = true }), undefined)
    expect(lines(r, 'INV-41')).toEqual(['INV-41@4: startsSeries on a initial header (only resume and change carry it)'])
    expect(r.internalErrors).toEqual([])
  })
  it('rc.8: a change reason on an equal header is reported with the rc.8 wording (no series reason there)', async () => {
    const r = await check(editedAppendixB((e) => { for (const s of [17, 31, 58]) at(e, s).data['reason'] = 'change' }), undefined, RC8)
    expect(lines(r, 'INV-41')).toEqual([
      'INV-41@17: reason change, but the header equals the one in force (#4) and the rc.8 dialect logs only changes: nothing is logged (§10.3)',
      'INV-41@31: reason change, but the header equals the one in force (#17) and the rc.8 dialect logs only changes: nothing is logged (§10.3)',
      'INV-41@58: reason change, but the header equals the one in force (#31) and the rc.8 dialect logs only changes: nothing is logged (§10.3)',
    ])
    expect(r.internalErrors).toEqual([])
  })
  it('rc.8: a change header after an epoch advance needs no startsSeries (seed-only rule)', async () => {
    const r = await check(editedAppendixB((e) => { at(e, 17).data['reason'] = 'change'; (at(e, 17).data['header'] as { config: Record<string, unknown> }).config['model'] = 'mock-8k' }), undefined, RC8)
    expect(lines(r, 'INV-41')).toEqual([SERIES_RC8[1], SERIES_RC8[2]])
    expect(r.internalErrors).toEqual([])
  })
  it('seed: startsSeries on a change header without an epoch advance is reported', async () => {
    const events = editedAppendixB((e) => {
      const h = structuredClone(at(e, 4))
      h.seq = 5
      h.time = at(e, 5).time
      h.data['reason'] = 'change'
      h.data['startsSeries'] = true;
      (h.data['header'] as { config: Record<string, unknown> }).config['model'] = 'mock-8k'
      e[5] = h
    })
    const r = await check(events, undefined)
    expect(lines(r, 'INV-41')).toEqual([
      'INV-41@5: startsSeries on a change header although the series epoch did not advance',
      'INV-41@17: reason series, expected change',
      'INV-41@17: the series epoch advanced since #5 (0 → 1) but the change header lacks startsSeries',
    ])
    expect(r.internalErrors).toEqual([])
  })
})

describe('INV-43 reconstruction messages', () => {
  it('a request whose messages differ from the derivation names the first differing message and both lengths', async () => {
    const r = await check(ev, capture(ev, (c) => { byRev(c, 18).messages = byRev(c, 6).messages }))
    expect(lines(r, 'INV-43', 'INV-44')).toEqual([`INV-43@18: ${L43} 1 (revision 18): messages differ from deriveMessages of the log prefix at message 2 (2 sent, 4 derived)`])
    expect(r.internalErrors).toEqual([])
  })
  it('a config key differing from the folded header is reported with both values', async () => {
    const r = await check(ev, capture(ev, (c) => { byRev(c, 18).model = 'mock-8k' }))
    expect(lines(r, 'INV-43', 'INV-44')).toEqual([`INV-43@18: ${L43} 1 (revision 18): model "mock-8k" differs from the folded header's "mock-4k"`])
    expect(r.internalErrors).toEqual([])
  })
  it('tools differing from the folded header are reported', async () => {
    const r = await check(ev, capture(ev, (c) => { delete byRev(c, 18).tools }))
    expect(lines(r, 'INV-43', 'INV-44')).toEqual([`INV-43@18: ${L43} 1 (revision 18): tools differ from the folded header's tools`])
    expect(r.internalErrors).toEqual([])
  })
  it('requests before any header: no config, and the append-extension clause with no header at all', async () => {
    const r = await check(ev, [req(conversation(ev, 3, 0), { logRevisionAtDispatch: 1 }), req(conversation(ev, 2, 1), { messages: [] })])
    expect(lines(r, 'INV-43')).toEqual([
      `INV-43@1: ${L43} 0 (revision 1): messages differ from deriveMessages of the log prefix at message 0 (1 sent, 0 derived)`,
      `INV-43@1: ${L43} 0 (revision 1): no request/header is in force, so its configuration is not recoverable from the log`,
      `INV-43@2: ${L43} 1 (revision 2): no request/header is in force, so its configuration is not recoverable from the log`,
      `INV-43@2: ${L43} 1 (revision 2): no request/header lies since the previous request (revision 1), but its messages are not an append-extension of that request's`,
    ])
    expect(r.internalErrors).toEqual([])
  })
  it('two requests at the same revision are not judged for append-extension', async () => {
    const r = await check(ev, [conversation(ev, 6, 0), req(conversation(ev, 6, 1), { messages: [] })])
    expect(lines(r, 'INV-43')).toEqual([`INV-43@6: ${L43} 1 (revision 6): messages differ from deriveMessages of the log prefix at message 0 (0 sent, 2 derived)`])
    expect(r.internalErrors).toEqual([])
  })
  it('a header at exactly the previous request\'s revision lies between the two', async () => {
    const r = await check(ev, [conversation(ev, 17, 0), req(conversation(ev, 18, 1), { messages: [] })])
    expect(lines(r, 'INV-43')).toEqual([`INV-43@18: ${L43} 1 (revision 18): messages differ from deriveMessages of the log prefix at message 0 (0 sent, 4 derived)`])
    expect(r.internalErrors).toEqual([])
  })
  it('an identical resend (equal length) is an append-extension', async () => {
    const r = await check(ev, [conversation(ev, 6, 0), conversation(ev, 7, 1)])
    expect(lines(r, 'INV-43')).toEqual([])
    expect(r.internalErrors).toEqual([])
  })
  it('a shorter request after the previous one without a header between is not an append-extension', async () => {
    const r = await check(ev, capture(ev, (c) => { byRev(c, 43).messages = byRev(c, 32).messages.slice(0, -1) }))
    expect(lines(r, 'INV-43', 'INV-44')).toEqual([
      `INV-43@43: ${L43} 4 (revision 43): messages differ from deriveMessages of the log prefix at message 5 (5 sent, 8 derived)`,
      `INV-43@43: ${L43} 4 (revision 43): no request/header lies since the previous request (revision 32), but its messages are not an append-extension of that request's`,
    ])
    expect(r.internalErrors).toEqual([])
  })
  it('a request at the end of the log is judged at the last seq', async () => {
    const r = await check(ev, [req(conversation(ev, 67, 0), { messages: [] })])
    expect(lines(r, 'INV-43')).toEqual([`INV-43@66: ${L43} 0 (revision 67): messages differ from deriveMessages of the log prefix at message 0 (0 sent, 5 derived)`])
    expect(r.internalErrors).toEqual([])
  })
  it('seed: a prune between two requests is no boundary of the append-extension clause', async () => {
    const r = await check(ev, [conversation(ev, 13, 0), conversation(ev, 16, 1)])
    expect(lines(r, 'INV-43')).toEqual([`INV-43@16: ${L43} 1 (revision 16): no request/header lies since the previous request (revision 13), but its messages are not an append-extension of that request's`])
    expect(r.internalErrors).toEqual([])
  })
  it('rc.8: requests across the compaction with no replacement generation change are still judged', async () => {
    const r = await check(ev, [conversation(ev, 52, 0), conversation(ev, 55, 1)], RC8)
    expect(lines(r, 'INV-43')).toEqual([
      `INV-43@52: ${L43} 0 (revision 52): messages differ from deriveMessages of the log prefix at message 0 (10 sent, 9 derived)`,
      `INV-43@55: ${L43} 1 (revision 55): messages differ from deriveMessages of the log prefix at message 0 (10 sent, 9 derived)`,
      `INV-43@55: ${L43} 1 (revision 55): no request/header lies since the previous request (revision 52), but its messages are not an append-extension of that request's`,
    ])
    expect(r.internalErrors).toEqual([])
  })
})

describe('INV-44 summarizer request shape', () => {
  it('a cap differing from the policy cap is reported', async () => {
    const r = await check(ev, capture(ev, (c) => { byRev(c, 52).maxTokens = 100 }))
    expect(lines(r, 'INV-43', 'INV-44')).toEqual([`INV-44@52: ${C44} 5 (revision 52): maxTokens 100 differs from the policy cap 8192`])
    expect(r.internalErrors).toEqual([])
  })
  it('hardened summaryRoom accepts any integer cap from 1 to the policy cap, and nothing outside', async () => {
    const got: Record<number, string[]> = {}
    for (const mt of [100, 0, 1, 9000, 8192]) {
      const r = reportOf(await checkLog(ev as never, { dialect: 'seed', manifest: HARD, requests: capture(ev, (c) => { byRev(c, 52).maxTokens = mt }) }))
      expect(r.internalErrors).toEqual([])
      got[mt] = lines(r, 'INV-44')
    }
    expect(got).toEqual({
      100: [], 1: [], 8192: [],
      0: [`INV-44@52: ${C44} 5 (revision 52): maxTokens 0 differs from the policy cap 8192`],
      9000: [`INV-44@52: ${C44} 5 (revision 52): maxTokens 9000 differs from the policy cap 8192`],
    })
  })
  it('tools differing from the folded header are reported', async () => {
    const r = await check(ev, capture(ev, (c) => { delete byRev(c, 52).tools }))
    expect(lines(r, 'INV-43', 'INV-44')).toEqual([`INV-44@52: ${C44} 5 (revision 52): tools differ from the folded header's tools`])
    expect(r.internalErrors).toEqual([])
  })
  it('an instruction with the wrong role is reported', async () => {
    const r = await check(ev, capture(ev, (c) => { const m = byRev(c, 52); m.messages = [...m.messages.slice(0, -1), { ...INSTRUCTION, role: 'assistant' } as never] }))
    expect(lines(r, 'INV-43', 'INV-44')).toEqual([`INV-44@52: ${C44} 5 (revision 52): the last message is not the compaction instruction`])
    expect(r.internalErrors).toEqual([])
  })
  it('seed: an instruction with another text is reported', async () => {
    const r = await check(ev, capture(ev, (c) => { const m = byRev(c, 52); m.messages = [...m.messages.slice(0, -1), { ...INSTRUCTION, content: [{ type: 'text', text: 'x' }] } as never] }))
    expect(lines(r, 'INV-43', 'INV-44')).toEqual([`INV-44@52: ${C44} 5 (revision 52): the last message is not the compaction instruction`])
    expect(r.internalErrors).toEqual([])
  })
  it('an empty request: no instruction, no head, and the whole region missing', async () => {
    const r = await check(ev, capture(ev, (c) => { byRev(c, 52).messages = [] }))
    expect(lines(r, 'INV-43', 'INV-44')).toEqual([
      `INV-44@52: ${C44} 5 (revision 52): the last message is not the compaction instruction`,
      `INV-44@52: ${C44} 5 (revision 52): the first message is not the projected system head #2`,
      `INV-44@52: ${C44} 5: the region messages differ from the projected region of #52 at region message 0 (0 sent, 7 expected)`,
    ])
    expect(r.internalErrors).toEqual([])
  })
  it('a wrong first message is reported against the projected head', async () => {
    const r = await check(ev, capture(ev, (c) => { const m = byRev(c, 52); m.messages = [INSTRUCTION, ...m.messages.slice(1)] }))
    expect(lines(r, 'INV-43', 'INV-44')).toEqual([`INV-44@52: ${C44} 5 (revision 52): the first message is not the projected system head #2`])
    expect(r.internalErrors).toEqual([])
  })
  it('without a system head the whole body is the region', async () => {
    const r = await check(editedAppendixB((e) => { foreign(at(e, 2)) }), capture(ev))
    expect(lines(r, 'INV-44')).toEqual([
      `INV-44@52: ${C44} 5: the region messages differ from the projected region of #52 at region message 0 (8 sent, 7 expected)`,
      `INV-44@54: ${C44} 6: the region messages differ from the projected region of #54 at region message 0 (8 sent, 7 expected)`,
    ])
    expect(r.internalErrors).toEqual([])
  })
  it('a region missing a message names the attempt record', async () => {
    const r = await check(ev, capture(ev, (c) => { const m = byRev(c, 54); m.messages = [m.messages[0] as never, ...m.messages.slice(2)] }))
    expect(lines(r, 'INV-43', 'INV-44')).toEqual([`INV-44@54: ${C44} 6: the region messages differ from the projected region of #54 at region message 0 (6 sent, 7 expected)`])
    expect(r.internalErrors).toEqual([])
  })
  it('an attempt record with no shadowed seqs names no record', async () => {
    const r = await check(editedAppendixB((e) => { (at(e, 52).data['shadowedSeqs'] as number[]).length = 0 }), capture(ev))
    expect(lines(r, 'INV-44')).toEqual([`INV-44@52: ${C44} 5: the region messages differ from the projected region at region message 0 (7 sent, 0 expected)`])
    expect(r.internalErrors).toEqual([])
  })
  it('a shadowed seq with no derived message is left out of the region', async () => {
    const r = await check(editedAppendixB((e) => { (at(e, 52).data['shadowedSeqs'] as number[]).push(12) }), capture(ev))
    expect(lines(r, 'INV-44')).toEqual([])
    expect(r.internalErrors).toEqual([])
  })
  it('a compaction request outside a bracket is reported', async () => {
    const r = await check(ev, [...capture(ev), req(byRev(capture(ev), 52), { index: 9, logRevisionAtDispatch: 6 })])
    expect(lines(r, 'INV-44')).toEqual([`INV-44@6: ${C44} 9 (revision 6) was dispatched while no bracket is open`])
    expect(r.internalErrors).toEqual([])
  })
  it('attempt records with no bracket open are not paired', async () => {
    const r = await check(editedAppendixB((e) => { foreign(at(e, 51)) }), capture(ev))
    expect(lines(r, 'INV-44')).toEqual([
      `INV-44@52: ${C44} 5 (revision 52) was dispatched while no bracket is open`,
      `INV-44@54: ${C44} 6 (revision 54) was dispatched while no bracket is open`,
    ])
    expect(r.internalErrors).toEqual([])
  })
  it('requests of one bracket queue up for its attempt records in order', async () => {
    const r = await check(ev, capture(ev, (c) => {
      const bad = req(byRev(c, 52), { index: 10, messages: [byRev(c, 52).messages[0], INSTRUCTION] })
      c.push(bad)
    }))
    expect(lines(r, 'INV-44')).toEqual([`INV-44@52: ${C44} 10: the region messages differ from the projected region of #54 at region message 0 (0 sent, 7 expected)`])
    expect(r.internalErrors).toEqual([])
  })
  it('an attempt record of another compaction id is not paired with the bracket\'s request', async () => {
    const events = editedAppendixB((e) => { at(e, 52).data['compactionId'] = 'other' })
    const r = await check(events, capture(ev, (c) => { const m = byRev(c, 54); m.messages = [m.messages[0] as never, ...m.messages.slice(2)] }))
    expect(lines(r, 'INV-44')).toEqual([])
    expect(r.internalErrors).toEqual([])
  })
  it('without any header the folded tools are empty', async () => {
    const r = await check(editedAppendixB((e) => { for (const s of [4, 17, 31, 58]) foreign(at(e, s)) }), capture(ev))
    expect(lines(r, 'INV-44')).toEqual([
      `INV-44@52: ${C44} 5 (revision 52): tools differ from the folded header's tools`,
      `INV-44@54: ${C44} 6 (revision 54): tools differ from the folded header's tools`,
    ])
    expect(r.internalErrors).toEqual([])
  })
  it('without a request/context the cap is still the policy cap', async () => {
    const r = await check(editedAppendixB((e) => { foreign(at(e, 5)) }), capture(ev, (c) => { byRev(c, 52).maxTokens = 100 }))
    expect(lines(r, 'INV-44')).toEqual([`INV-44@52: ${C44} 5 (revision 52): maxTokens 100 differs from the policy cap 8192`])
    expect(r.internalErrors).toEqual([])
  })
})

describe('INV-43 append-extension spans one lifecycle', () => {
  it('a request after an end-seed is not judged against the previous lifecycle\'s request', async () => {
    const events = editedAppendixB((e) => { e.push({ seq: 67, time: at(e, 66).time, type: 'session/end-seed', data: {} } as AppendixEvent) })
    const r = await check(events, [conversation(ev, 59, 0), req(conversation(ev, 59, 1), { logRevisionAtDispatch: 68, messages: [] })])
    expect(lines(r, 'INV-43')).toEqual([`INV-43@67: ${L43} 1 (revision 68): messages differ from deriveMessages of the log prefix at message 0 (0 sent, 5 derived)`])
    expect(r.internalErrors).toEqual([])
  })
})

describe('INV-44 pairing across brackets', () => {
  it('a request left unpaired in one bracket is not paired with a later bracket\'s attempt record', async () => {
    const events = editedAppendixB((e) => {
      for (const [from, seq] of [[51, 67], [52, 68], [56, 69]] as const) {
        const x = structuredClone(at(e, from))
        x.seq = seq
        x.time = at(e, 66).time
        x.data['compactionId'] = 'c2'
        e.push(x)
      }
    })
    const r = await check(events, capture(ev, (c) => { c.push(req(byRev(c, 54), { index: 20, messages: [byRev(c, 54).messages[0], INSTRUCTION] })) }))
    expect(lines(r, 'INV-44')).toEqual([])
    expect(r.internalErrors).toEqual([])
  })
})

describe('INV-42 judges only the dispatch chunk of the open step', () => {
  const inv42 = async (edit: (e: AppendixEvent[]) => void): Promise<{ v: string[]; ie: unknown }> => {
    const r = await check(editedAppendixB((e) => { foreign(at(e, 17)); edit(e) }), undefined)
    return { v: lines(r, 'INV-42'), ie: r.internalErrors }
  }
  it('a chunk with no step open', async () => {
    expect(await inv42((e) => { foreign(at(e, 16)) })).toEqual({ v: ['INV-42@29: dispatch after a series boundary (epoch 0 at dispatch #6, 1 now) without a request/header recording it'], ie: [] })
  })
  it('a chunk of another turn', async () => {
    expect(await inv42((e) => { at(e, 18).data['turn'] = 9 })).toEqual({ v: ['INV-42@19: dispatch after a series boundary (epoch 0 at dispatch #6, 1 now) without a request/header recording it'], ie: [] })
  })
  it('a chunk of another step', async () => {
    expect(await inv42((e) => { at(e, 18).data['step'] = 9 })).toEqual({ v: ['INV-42@19: dispatch after a series boundary (epoch 0 at dispatch #6, 1 now) without a request/header recording it'], ie: [] })
  })
})
