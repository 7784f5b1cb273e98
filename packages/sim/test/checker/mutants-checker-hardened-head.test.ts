/**
 * HARD-7 (hardened `headRefresh`, `src/checker/hardened-head.ts`) and the head-refresh exemption of INV-26, on a
 * log the reference loop writes with a prompt that changes every turn, edited by hand. The log (three one-step
 * turns, headRefresh on): #2 is the first system head; #15 replaces #2 citing [2]; #16 is turn 2's user prompt;
 * #22 its reply; #27 replaces #15 citing [15]; #28 is turn 3's prompt. Every expectation is written out by hand.
 * It pins:
 * - the rc.8 dialect exempts HARD-7 (§14.1), with its reason;
 * - a head refresh replaces exactly the head (start and end) and cites exactly [head]: a span that only starts
 *   or only ends at the head, a replacement of another node citing the head, a citation of another event and a second citation are not
 *   refreshes, and the message names the span and the citations;
 * - the INV-26 exemption is for a `system/message` only: a `user/message` replacing exactly the head and citing
 *   it is still a replacement that shadows the head.
 */
import {
  Agent, EventLog, LlmRuntime, resolveCompactionConfig, ScriptedAdapter, type LogEvent, type MessageKind, type RunManifest,
} from '@compaction-sim/core'
import { describe, expect, it } from 'vitest'
import { checkLog } from '../../src/checker/run.ts'
import { reportOf } from './support.ts'

const ROUTE = { provider: 'mock', model: 'mock-4k', contextWindow: 4000, imageTokens: 85 }

const MANIFEST: RunManifest = {
  scenario: 'hardened-head-mutants', compaction: { hardening: { headRefresh: true } },
  routes: [{ provider: 'mock', model: 'mock-4k', contextWindow: 4000 }], faults: [],
}

type Editable = LogEvent & { surfaceOp?: unknown; sourceEventSeqs?: number[] }

/** Three one-step turns under headRefresh, the prompt's clock line changing every turn. */
async function session(): Promise<Editable[]> {
  const log = new EventLog({ dialect: 'seed' })
  const runtime = new LlmRuntime()
  runtime.registerAdapter('mock', new ScriptedAdapter({
    routes: [ROUTE], conversation: ['1', '2', '3'].map((t) => ({ kind: 'reply' as const, blocks: [{ type: 'text' as const, text: t }] })),
  }))
  let n = 0
  let time = 1_700_000_000_000
  const counters: Record<MessageKind, number> = { system: 0, user: 0, assistant: 0, tool: 0 }
  const agent = new Agent({
    log, runtime, policy: resolveCompactionConfig({ hardening: { headRefresh: true } }), route: { provider: 'mock', model: 'mock-4k' },
    systemPrompt: () => `You are a careful coding agent.\nclock: 10:0${n++}`,
    tools: [], executeTool: async () => ({ content: [] }), clock: () => (time += 5),
    newMessageId: (kind) => `m-${kind}-${++counters[kind]}`, newRetryId: () => 'r-1', sleep: async () => {},
  })
  for (const text of ['one', 'two', 'three']) await agent.runTurn({ content: [{ type: 'text', text }] })
  return structuredClone(log.events) as Editable[]
}

const edited = async (edit: (byseq: (seq: number) => Editable) => void): Promise<Editable[]> => {
  const events = await session()
  edit((seq) => events.find((e) => e.seq === seq) as Editable)
  return events
}

const lines = async (events: Editable[], id: string): Promise<string[]> =>
  reportOf(await checkLog(events, { dialect: 'seed', manifest: MANIFEST })).violations.filter((v) => v.id === id).map((v) => `${v.id}@${v.seq}: ${v.message}`)

describe('HARD-7 — head refresh, mutant boundaries', () => {
  it('the log as written has the layout the cases below edit, and passes', async () => {
    const events = await session()
    const system = events.filter((e) => e.type === 'system/message').map((e) => [e.seq, e.surfaceOp, e.sourceEventSeqs])
    expect(system).toEqual([[2, 'append', undefined], [15, { op: 'replace', start: 2, end: 2 }, [2]], [27, { op: 'replace', start: 15, end: 15 }, [15]]])
    expect(events.filter((e) => e.type === 'user/message').map((e) => e.seq)).toEqual([3, 16, 28])
    expect(await lines(events, 'HARD-7')).toEqual([])
  })

  it('is not applicable in the rc.8 dialect (no system head, §14.1)', async () => {
    const result = reportOf(await checkLog(await session(), { dialect: 'dsh-0.1.0-rc.8', manifest: MANIFEST }))
    expect(result.coverage.find((c) => c.id === 'HARD-7')).toEqual({
      id: 'HARD-7', status: 'not-applicable', reason: 'the rc.8 dialect has no system head (§14.1)', skipped: 0,
    })
  })

  it('a span that starts at the head but ends past it is no refresh, and the message names span and citations', async () => {
    const events = await edited((at) => { at(27).surfaceOp = { op: 'replace', start: 15, end: 16 } })
    expect(await lines(events, 'HARD-7')).toEqual([
      'HARD-7@27: a system/message replaces 15…16 citing [15]: the head refresh replaces exactly the head #15 and cites [15]',
    ])
  })

  it('a span that ends at the head but starts elsewhere is no refresh', async () => {
    const events = await edited((at) => { at(27).surfaceOp = { op: 'replace', start: 3, end: 15 } })
    expect(await lines(events, 'HARD-7')).toEqual([
      'HARD-7@27: a system/message replaces 3…15 citing [15]: the head refresh replaces exactly the head #15 and cites [15]',
    ])
  })

  it('a replacement of another node that cites the head is no refresh', async () => {
    const events = await edited((at) => { at(27).surfaceOp = { op: 'replace', start: 16, end: 16 } })
    expect(await lines(events, 'HARD-7')).toEqual([
      'HARD-7@27: a system/message replaces 16…16 citing [15]: the head refresh replaces exactly the head #15 and cites [15]',
    ])
  })

  it('a refresh that cites the head and another event is no refresh', async () => {
    const events = await edited((at) => { at(27).sourceEventSeqs = [15, 16] })
    expect(await lines(events, 'HARD-7')).toEqual([
      'HARD-7@27: a system/message replaces 15…15 citing [15, 16]: the head refresh replaces exactly the head #15 and cites [15]',
    ])
  })

  it('a replacement of exactly the head that cites another event is no refresh', async () => {
    const events = await edited((at) => { at(27).sourceEventSeqs = [16] })
    expect(await lines(events, 'HARD-7')).toEqual([
      'HARD-7@27: a system/message replaces 15…15 citing [16]: the head refresh replaces exactly the head #15 and cites [15]',
    ])
  })

  it('a replacement of exactly the head with no citations is no refresh, and cites [] in the message', async () => {
    const absent = await edited((at) => { delete at(27).sourceEventSeqs })
    const line = 'HARD-7@27: a system/message replaces 15…15 citing []: the head refresh replaces exactly the head #15 and cites [15]'
    expect(await lines(absent, 'HARD-7')).toEqual([line])
  })

  it('INV-26 still judges a user/message that replaces exactly the head and cites it', async () => {
    // Turn 2's prompt #16 replaces the head #15 instead of being appended.
    const events = await edited((at) => {
      at(16).surfaceOp = { op: 'replace', start: 15, end: 15 }
      at(16).sourceEventSeqs = [15]
    })
    expect(await lines(events, 'INV-26')).toEqual(['INV-26@16: replacement 15…15 shadows the system head #15 at position 0'])
  })
})
