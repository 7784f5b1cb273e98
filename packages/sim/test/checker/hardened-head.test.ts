/**
 * HARD-7 (hardened `headRefresh`, issue #19, `src/checker/hardened-head.ts`) and INV-26 on logs the reference loop
 * writes with a prompt that changes every step: under the rule each change replaces the system head; faithful
 * appends a copy at the tail. INV-26 accepts the head replacement only when the manifest turns the rule on.
 */
import {
  Agent, EventLog, LlmRuntime, resolveCompactionConfig, ScriptedAdapter,
  type BasicCompactionConfig, type LogEvent, type MessageKind, type RunManifest,
} from '@compaction-sim/core'
import { describe, expect, it } from 'vitest'
import { checkLog } from '../../src/checker/run.ts'
import { found, reportOf } from './support.ts'

const ROUTE = { provider: 'mock', model: 'mock-4k', contextWindow: 4000, imageTokens: 85 }

function manifest(compaction: RunManifest['compaction']): RunManifest {
  return { scenario: 'hardened-head', compaction, routes: [{ provider: 'mock', model: 'mock-4k', contextWindow: 4000 }], faults: [] }
}

/** Three one-step turns with a clock line in the system prompt; `config` is the loop's compaction config. */
async function session(config: BasicCompactionConfig, prompt?: (n: number) => string): Promise<LogEvent[]> {
  const log = new EventLog({ dialect: 'seed' })
  const runtime = new LlmRuntime()
  runtime.registerAdapter('mock', new ScriptedAdapter({
    routes: [ROUTE], conversation: ['1', '2', '3'].map((t) => ({ kind: 'reply' as const, blocks: [{ type: 'text' as const, text: t }] })),
  }))
  let n = 0
  let time = 1_700_000_000_000
  const counters: Record<MessageKind, number> = { system: 0, user: 0, assistant: 0, tool: 0 }
  const agent = new Agent({
    log, runtime, policy: resolveCompactionConfig(config), route: { provider: 'mock', model: 'mock-4k' },
    systemPrompt: () => prompt?.(n++) ?? `You are a careful coding agent.\nclock: 10:0${n++}`,
    tools: [], executeTool: async () => ({ content: [] }), clock: () => (time += 5),
    newMessageId: (kind) => `m-${kind}-${++counters[kind]}`, newRetryId: () => 'r-1', sleep: async () => {},
  })
  for (const text of ['one', 'two', 'three']) await agent.runTurn({ content: [{ type: 'text', text }] })
  return structuredClone(log.events) as LogEvent[]
}

const systemSeqs = (events: readonly LogEvent[]): number[] => events.filter((e) => e.type === 'system/message').map((e) => e.seq)
const only = (prefix: string, ids: string[]): string[] => ids.filter((v) => v.startsWith(prefix))

describe('HARD-7 — head refresh', () => {
  it('is listed only when headRefresh is on', async () => {
    const events = await session({ hardening: { headRefresh: true } })
    const listed = async (c: RunManifest['compaction']): Promise<boolean> =>
      reportOf(await checkLog(events, { dialect: 'seed', manifest: manifest(c) })).coverage.some((x) => x.id === 'HARD-7')
    expect(await listed({})).toBe(false)
    expect(await listed({ hardening: { openTurnPrompt: true } })).toBe(false)
    expect(await listed({ hardening: { headRefresh: true } })).toBe(true)
    expect(await listed({ profile: 'hardened' })).toBe(true)
  })

  it('passes the hardened loop\'s log: each change replaces exactly the head and cites it (no INV-26 either)', async () => {
    const events = await session({ hardening: { headRefresh: true } })
    expect(systemSeqs(events)).toHaveLength(3)
    const result = await checkLog(events, { dialect: 'seed', manifest: manifest({ hardening: { headRefresh: true } }) })
    expect(reportOf(result).coverage.find((c) => c.id === 'HARD-7')).toMatchObject({ status: 'evaluated' })
    expect(found(result)).toEqual([])
  })

  it('INV-26 still reports the head replacement when the manifest has the rule off', async () => {
    const events = await session({ hardening: { headRefresh: true } })
    const [, second, third] = systemSeqs(events)
    expect(found(await checkLog(events, { dialect: 'seed', manifest: manifest({}) }))).toEqual([`INV-26@${second}`, `INV-26@${third}`])
  })

  it('reports a faithful log (a copy appended at the tail) under the rule, at the first copy', async () => {
    const events = await session({})
    const [, second, third] = systemSeqs(events)
    const result = await checkLog(events, { dialect: 'seed', manifest: manifest({ hardening: { headRefresh: true } }) })
    expect(only('HARD-7@', found(result))).toEqual([`HARD-7@${second}`, `HARD-7@${third}`])
    expect(reportOf(result).violations.find((v) => v.seq === second)?.message).toMatch(/^a system\/message is appended while the surface has the system head #\d+: hardening.headRefresh replaces the head$/)
  })

  it('reports a head replacement whose provenance names more than the replaced head (HARD-7 and INV-26)', async () => {
    const events = await session({ hardening: { headRefresh: true } })
    const [, second] = systemSeqs(events)
    const e = events.find((x) => x.seq === second) as LogEvent & { sourceEventSeqs: number[] }
    const user = events.find((x) => x.type === 'user/message')?.seq as number
    e.sourceEventSeqs = [...e.sourceEventSeqs, user]
    const ids = found(await checkLog(events, { dialect: 'seed', manifest: manifest({ hardening: { headRefresh: true } }) }))
    expect(only('HARD-7@', ids)).toEqual([`HARD-7@${second}`])
    expect(ids).toContain(`INV-26@${second}`)
  })

  it('without a head (empty first prompt) the tail append passes, and a system/message replacing another node is reported', async () => {
    const events = await session({ hardening: { headRefresh: true } }, (n) => (n === 0 ? '' : 'now'))
    const [tail] = systemSeqs(events)
    expect(found(await checkLog(events, { dialect: 'seed', manifest: manifest({ hardening: { headRefresh: true } }) }))).toEqual([])
    // The same log with that tail append turned into a replacement of the first user message (seq 2).
    const user = events.find((x) => x.type === 'user/message') as LogEvent
    const e = events.find((x) => x.seq === tail) as LogEvent & { surfaceOp: unknown; sourceEventSeqs?: number[] }
    e.surfaceOp = { op: 'replace', start: user.seq, end: user.seq }
    e.sourceEventSeqs = [user.seq]
    const result = await checkLog(events, { dialect: 'seed', manifest: manifest({ hardening: { headRefresh: true } }) })
    expect(only('HARD-7@', found(result))).toEqual([`HARD-7@${tail}`])
    expect(reportOf(result).violations.find((v) => v.id === 'HARD-7')?.message).toMatch(/while the surface has no system head/)
  })
})
