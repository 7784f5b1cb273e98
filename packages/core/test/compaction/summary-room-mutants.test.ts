/**
 * HARD-2 helpers (`summary-room.ts`, `docs/hardened.md`) at the edges the engine tests leave unjudged: the route
 * lookup's failure paths, a route without a window, limits that are not positive integers, a prompt overhead
 * without a system head and node prices of seqs that are not nodes. Prices follow §2.2 by hand (`ceil(len / 4)`
 * per text, 4 per block, 4 per message).
 */
import { describe, expect, it } from 'vitest'
import {
  clampSummaryTokens, INSTRUCTION_TOKENS, nodeFixedPrice, resolveSummaryRoute, summaryPromptOverhead, summaryRouteOf,
} from '../../src/compaction/summary-room.ts'
import { EventLog } from '../../src/log/event-log.ts'
import type { EventDraft, SessionEvent } from '../../src/log/events.ts'
import type { LlmModelInfo } from '../../src/log/llm.ts'
import { TokenMeter } from '../../src/meter/meter.ts'
import { harnessReadOnlyPath } from '../../src/offload/projection.ts'
import { resolveCompactionConfig } from '../../src/policy/config.ts'

const T = 1_700_000_000_000

function sessionLog(): EventLog {
  const drafts: EventDraft[] = [
    { time: T, type: 'turn/start', data: { turn: 1 } },
    { time: T, type: 'step/start', data: { turn: 1, step: 1 } },
    { time: T, type: 'user/message', data: { id: 'u1' as never, role: 'user', content: [{ type: 'text', text: 'a'.repeat(40) }], source: { kind: 'user' } }, surfaceOp: 'append' },
  ]
  return EventLog.fromEvents(drafts.map((d, seq) => ({ ...d, seq }) as SessionEvent), { dialect: 'seed' })
}

const info = (extra: Partial<LlmModelInfo> = {}): LlmModelInfo => ({ provider: 'p', id: 'm', name: 'm', ...extra })

describe('resolveSummaryRoute failure paths', () => {
  const log = sessionLog()
  const policy = resolveCompactionConfig({})

  it('no resolvable summary target (no routed target, no agent route, no configured provider): null, nothing noted', async () => {
    const notes: string[] = []
    let lookups = 0
    const runtime = { resolveModelInfo: async (): Promise<LlmModelInfo> => { lookups++; return info() } }
    expect(await resolveSummaryRoute({ log, policy, runtime }, (m) => { notes.push(m) })).toBeNull()
    expect(lookups).toBe(0)
    expect(notes).toEqual([])
  })

  it('the agent route resolves the target; its limits are reported', async () => {
    const runtime = { resolveModelInfo: async (): Promise<LlmModelInfo> => info({ context: { contextWindow: 9000 }, maxOutputTokens: 512 }) }
    const route = await resolveSummaryRoute({ log, policy, runtime, agentRoute: { provider: 'p', model: 'm' } }, () => {})
    expect(route).toStrictEqual({ provider: 'p', model: 'm', configuredMaxTokens: 8192, contextWindow: 9000, maxOutputTokens: 512 })
  })

  it('a failed lookup under a live signal is noted and leaves no route', async () => {
    const notes: string[] = []
    const runtime = { resolveModelInfo: async (): Promise<LlmModelInfo> => { throw new Error('metadata down') } }
    const signal = new AbortController().signal
    const route = await resolveSummaryRoute({ log, policy, runtime, agentRoute: { provider: 'p', model: 'm' }, signal }, (m) => { notes.push(m) })
    expect(route).toBeNull()
    expect(notes).toEqual(['summary route p/m: metadata unavailable (metadata down); no summary room applied'])
  })

  it('a failed lookup after the signal aborted rethrows the failure, noting nothing', async () => {
    const notes: string[] = []
    const failure = new Error('aborted lookup')
    const runtime = { resolveModelInfo: async (): Promise<LlmModelInfo> => { throw failure } }
    const signal = AbortSignal.abort(new Error('stop'))
    const err = await resolveSummaryRoute({ log, policy, runtime, agentRoute: { provider: 'p', model: 'm' }, signal }, (m) => { notes.push(m) })
      .then(() => null, (e: unknown) => e)
    expect(err).toBe(failure)
    expect(notes).toEqual([])
  })
})

describe('clamp and route limits', () => {
  it('a route without a window: the cap is min(configured, output limit), the record has no contextWindow key', () => {
    const route = summaryRouteOf({ provider: 'p', model: 'm', maxTokens: 8192 }, info({ maxOutputTokens: 300 }))
    const clamped = clampSummaryTokens(route, 5000)
    expect(clamped).toStrictEqual({ maxTokens: 300, record: { configuredMaxTokens: 8192, promptTokens: 5000, maxOutputTokens: 300 } })
    expect(Object.keys(clamped.record)).toEqual(['configuredMaxTokens', 'promptTokens', 'maxOutputTokens'])
    const plain = summaryRouteOf({ provider: 'p', model: 'm', maxTokens: 100 }, info())
    expect(clampSummaryTokens(plain, 5000)).toStrictEqual({ maxTokens: 100, record: { promptTokens: 5000 } })
  })

  it('limits that are not positive integers are ignored: fractions, zero, negatives, NaN, strings', () => {
    const target = { provider: 'p', model: 'm', maxTokens: 8192 }
    for (const bad of [1.5, 0, -3, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 53]) {
      expect(summaryRouteOf(target, info({ context: { contextWindow: bad }, maxOutputTokens: bad }))).toStrictEqual({ provider: 'p', model: 'm', configuredMaxTokens: 8192 })
    }
    const strings = info({ context: { contextWindow: '4000' as never }, maxOutputTokens: '600' as never })
    expect(summaryRouteOf(target, strings)).toStrictEqual({ provider: 'p', model: 'm', configuredMaxTokens: 8192 })
    expect(summaryRouteOf(target, info({ context: { contextWindow: 1 }, maxOutputTokens: 1 }))).toStrictEqual({
      provider: 'p', model: 'm', configuredMaxTokens: 8192, contextWindow: 1, maxOutputTokens: 1,
    })
  })
})

describe('prompt overhead and node prices', () => {
  it('without a system head at position 0 only the tools and the instruction count', () => {
    const log = sessionLog()
    const m = new TokenMeter(log, { dialect: 'seed' }).measure()
    expect(m.nodes).toEqual([{ seq: 2, tokens: 18 }]) // u1: 40 chars → 10 + 4 + 4
    expect(summaryPromptOverhead(log, m, undefined)).toBe(INSTRUCTION_TOKENS)
  })

  it('a seq that is not in the log, or an event that is not a message, prices 0; a message its P_fixed', () => {
    const log = sessionLog()
    expect(nodeFixedPrice(log, 99, harnessReadOnlyPath)).toBe(0)
    expect(nodeFixedPrice(log, 0, harnessReadOnlyPath)).toBe(0) // turn/start
    expect(nodeFixedPrice(log, 2, harnessReadOnlyPath)).toBe(18)
  })
})
