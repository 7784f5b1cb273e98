/**
 * Engine and default-summarizer behaviour the fault tests leave partly unjudged (survivors of the mutation
 * run, `pnpm mutate`): the overflow path without a routed target and its prune (§3.6), the engine's own
 * defaults (meter, sinks), the §7.9 first-abort rule with both signals, the manual error texts and a flush that
 * rejects without a reason (§7.11), and the §8 summarizer's request extras and stream failures. Expected
 * events and messages are written out by hand.
 */
import { describe, expect, it } from 'vitest'
import type { LlmRuntime } from '../../src/adapter/runtime.ts'
import type { GenerateOptions } from '../../src/adapter/contract.ts'
import { ManualCompactionError, SummarizerError } from '../../src/compaction/errors.ts'
import { LlmSummarizer, summaryFromChunks, type Summarizer, type SummaryOutput } from '../../src/compaction/summarizer.ts'
import { AssemblyError } from '../../src/log/assembly.ts'
import { EventLog } from '../../src/log/event-log.ts'
import type { EventDraft, SessionEvent } from '../../src/log/events.ts'
import type { StreamChunk } from '../../src/log/llm.ts'
import type { TokenMeter } from '../../src/meter/meter.ts'
import { resolveCompactionConfig } from '../../src/policy/config.ts'
import { expectBracketInvariants } from './support/invariants.ts'
import { admission, bench, BETWEEN_TURNS_2_3, failReply, PRE_STEP_3_2, rejectionOf, SHORT_SUMMARY } from './support/bench.ts'

const T = 1_700_000_000_000
const COMMITTED = ['compaction/start', 'compaction/summary', 'user/message', 'compaction/end']
const FAILED_BRACKET = ['compaction/start', 'compaction/summary-error', 'compaction/end']
const ok: SummaryOutput = { summary: [{ type: 'text', text: SHORT_SUMMARY }], provider: 'template', model: 'v1' }

/** An open turn without any request/header (no routed target): surface [#2 user, #3 assistant]. */
function headerless(): SessionEvent[] {
  const drafts: EventDraft[] = [
    { time: T, type: 'turn/start', data: { turn: 1 } },
    { time: T, type: 'step/start', data: { turn: 1, step: 1 } },
    { time: T, type: 'user/message', data: { id: 'u1' as never, role: 'user', content: [{ type: 'text', text: 'x'.repeat(20_000) }], source: { kind: 'user' } }, surfaceOp: 'append' },
    {
      time: T, type: 'assistant/message', surfaceOp: 'append',
      data: { turn: 1, step: 1, message: { id: 'a1' as never, role: 'assistant', content: [{ type: 'text', text: 'ok' }], source: { kind: 'model', provider: 'mock', model: 'mock-4k' } } },
    },
  ]
  return drafts.map((d, seq) => ({ ...d, seq }) as SessionEvent)
}

describe('automatic entry points (§3.5, §3.6)', () => {
  it('without a routed target neither overflow nor pressure compacts, and nothing is written', async () => {
    const b = bench({ events: headerless(), pruner: true, engine: { summarizer: { summarize: async () => ok } } })
    expect(await b.engine.compactIfNeeded('context-overflow')).toBeNull()
    expect(await b.engine.compactIfNeeded('pressure')).toBeNull()
    expect(b.written()).toEqual([])
  })

  it('overflow prunes before its one attempt (Appendix B #14/#15); without a pruner it does not', async () => {
    // At #13 the newest unit is #10…#13; the region left, [#3], is too small for any checkpoint (§7.5).
    const b = bench({ prefix: 14, pruner: true })
    expect(await rejectionOf(b.engine.compactIfNeeded('context-overflow'))).toMatchObject({ code: 'summary', message: /^summary is not smaller/ })
    expect(b.appended().map((e) => [e.type, e.seq])).toEqual([['compaction/prune', 14], ['tool/result', 15], ['compaction/start', 16], ['compaction/end', 17]])
    const plain = bench({ prefix: 14 })
    expect(await rejectionOf(plain.engine.compactIfNeeded('context-overflow'))).toMatchObject({ code: 'summary' })
    expect(plain.written()).toEqual(['compaction/start', 'compaction/end'])
    expectBracketInvariants(b.log)
  })
})

describe('the pressure loop at exactly the threshold (§3.5 steps 9–11: "below" is strictly less)', () => {
  /** A bench whose meter reads exactly the threshold on every measurement (the real measurement, total replaced). */
  function atThreshold(options: { pruner?: boolean }) {
    const b = bench({ prefix: PRE_STEP_3_2, config: { compactionRetries: 0 }, ...options })
    const threshold = 3200 // the bench route: 4,000-token window × the default 0.8 ratio
    const real = b.meter.measure.bind(b.meter)
    // The measurement keeps its class (getters, methods); only `totalTokens` reads differently.
    b.meter.measure = () => new Proxy(real(), { get: (m, key) => (key === 'totalTokens' ? threshold : Reflect.get(m, key, m)) })
    return b
  }

  it('after the prune a total equal to the threshold still compacts (step 9 stops only strictly below)', async () => {
    const b = atThreshold({ pruner: true })
    const err = await rejectionOf(b.engine.compactIfNeeded('pressure'))
    // The bracket ran, and with the total still at the threshold after it the pass did not converge (step 11).
    expect(b.written().filter((t) => t.startsWith('compaction/') && t !== 'compaction/prune')).toEqual(['compaction/start', 'compaction/summary', 'compaction/end'])
    expect(err).toMatchObject({ name: 'CompactionConvergenceError' })
  })

  it('a bracket leaving the total equal to the threshold has not converged (step 10 returns only strictly below)', async () => {
    const b = atThreshold({})
    const err = await rejectionOf(b.engine.compactIfNeeded('pressure'))
    expect(err).toMatchObject({ name: 'CompactionConvergenceError' })
    expect(b.written()).toEqual(COMMITTED)
  })

})

describe('engine defaults', () => {
  it('without warn and info sinks the pre-step still swallows failures and reports nothing', async () => {
    const failing = bench({ compaction: [failReply('SERVER')], engine: { warn: undefined as never, info: undefined as never } })
    await expect(failing.engine.preStep()).resolves.toBeUndefined()
    expect(failing.written()).toEqual(FAILED_BRACKET)
    expect(failing.warnings).toEqual([])
    const passing = bench({ engine: { warn: undefined as never, info: undefined as never } })
    await expect(passing.engine.preStep()).resolves.toBeUndefined()
    expect(passing.written()).toEqual(COMMITTED)
    expect(passing.infos).toEqual([])
  })

  it('without a shared meter the engine measures the log itself (same pressure, same bracket)', async () => {
    const below = bench({ prefix: 41, engine: { meter: undefined as unknown as TokenMeter } }) // pressure 1,922 < 3,200
    expect(await below.engine.compactIfNeeded('pressure')).toBeNull()
    const above = bench({ prefix: PRE_STEP_3_2, engine: { meter: undefined as unknown as TokenMeter } })
    const result = await above.engine.compactIfNeeded('pressure')
    expect(result?.shadowedSeqs).toEqual([3, 10, 15, 23, 28, 37, 42])
    expect(above.written()).toEqual(COMMITTED)
  })

  it('the default summary instruction ids count up per engine', async () => {
    const b = bench({ compaction: [failReply('SERVER'), { kind: 'reply', blocks: [{ type: 'text', text: SHORT_SUMMARY }] }] })
    await b.engine.preStep()
    await b.engine.preStep()
    expect(b.adapter.requests.map((r) => r.messages.at(-1)?.id)).toEqual(['compaction-instruction-1', 'compaction-instruction-2'])
  })
})

describe('manual compaction (§3.7, §7.9 – §7.11)', () => {
  it('the agent aborting first, then the caller → cancelled with the agent\'s reason', async () => {
    const a = admission()
    const caller = new AbortController()
    const agentReason = new Error('agent disposed')
    const summarizer: Summarizer = {
      summarize: async () => {
        a.controller.abort(agentReason)
        caller.abort(new Error('user stop'))
        return ok
      },
    }
    const m = bench({ prefix: BETWEEN_TURNS_2_3, engine: { summarizer } })
    const err = await rejectionOf(m.engine.compactNow({ signal: caller.signal, admission: a }))
    expect(err).toBeInstanceOf(ManualCompactionError)
    expect(err).toMatchObject({ code: 'cancelled', message: 'cancelled: agent disposed', cause: agentReason })
    expect(m.written()).toEqual(['compaction/start', 'compaction/end'])
    expect(a.released).toBe(1)
    expectBracketInvariants(m.log)
  })

  it('the caller aborting first, then the agent → the caller\'s exact reason', async () => {
    const a = admission()
    const caller = new AbortController()
    const reason = new Error('user stop')
    const summarizer: Summarizer = {
      summarize: async () => {
        caller.abort(reason)
        a.controller.abort(new Error('agent disposed'))
        return ok
      },
    }
    const m = bench({ prefix: BETWEEN_TURNS_2_3, engine: { summarizer } })
    expect(await rejectionOf(m.engine.compactNow({ signal: caller.signal, admission: a }))).toBe(reason)
    expect(m.written()).toEqual(['compaction/start', 'compaction/end'])
  })

  it('a failed manual bracket names its class before the failure', async () => {
    const m = bench({ prefix: BETWEEN_TURNS_2_3, compaction: [failReply('SERVER')] })
    const err = await rejectionOf(m.engine.compactNow({ admission: admission() }))
    expect(err).toMatchObject({ name: 'ManualCompactionError', code: 'summary', message: 'summary: summary call failed: SERVER' })
    expect((err as Error).cause).toMatchObject({ name: 'SummarizerError', code: 'SERVER' })
  })

  it('a flush that rejects without a reason is still a persistence failure', async () => {
    const m = bench({ prefix: BETWEEN_TURNS_2_3, engine: { flush: () => Promise.reject(undefined) } })
    const err = await rejectionOf(m.engine.compactNow({ admission: admission() }))
    expect(err).toMatchObject({ name: 'ManualCompactionError', code: 'persistence', message: 'persistence: compaction committed but the flush failed: flush failed' })
    expect((err as Error).cause).toMatchObject({ message: 'flush failed' })
    expect(m.written()).toEqual(COMMITTED)
  })

  it('§7.9: the agent cancels while the caller signal stays quiet → cancelled with the agent reason as cause', async () => {
    const a = admission()
    const reason = new Error('agent woke up')
    const summarizer: Summarizer = { summarize: async () => { a.controller.abort(reason); return ok } }
    const m = bench({ prefix: BETWEEN_TURNS_2_3, engine: { summarizer } })
    const err = await rejectionOf(m.engine.compactNow({ signal: new AbortController().signal, admission: a }))
    expect(err).toMatchObject({ name: 'ManualCompactionError', code: 'cancelled', message: 'cancelled: agent woke up' })
    expect((err as Error).cause).toBe(reason)
    expect(a.released).toBe(1)
  })

  it('the busy refusal of the admission says why', async () => {
    const m = bench({ prefix: BETWEEN_TURNS_2_3 })
    const err = await rejectionOf(m.engine.compactNow({ admission: admission(true) }))
    expect(err).toMatchObject({ code: 'busy', message: 'busy: the agent is running or has queued work' })
  })
})

/** A runtime double whose one stream call is recorded and whose chunks come from `chunks` (a §8 summarizer's only dependency). */
function fakeRuntime(chunks: () => AsyncGenerator<StreamChunk>, maxTokens: number | undefined, seen: GenerateOptions[]): LlmRuntime {
  return {
    stream: (options: GenerateOptions) => {
      seen.push(options)
      return { provider: 'served', model: 'served-model', options: maxTokens === undefined ? { ...options, maxTokens: undefined } : { ...options, maxTokens }, chunks: chunks() }
    },
  } as unknown as LlmRuntime
}

describe('the §8 summarizer', () => {
  const log = new EventLog({ dialect: 'seed' })
  const policy = resolveCompactionConfig({})
  const input = { messages: [{ id: 'u' as never, role: 'user' as const, content: [{ type: 'text' as const, text: 'hi' }], source: { kind: 'user' as const } }] }
  const stop: StreamChunk[] = [
    { type: 'block-start', index: 0, blockType: 'text' }, { type: 'block-end', index: 0, block: { type: 'text', text: 'sum' } },
    { type: 'finish', reason: { kind: 'stop' } },
  ]
  async function* from(list: StreamChunk[]): AsyncGenerator<StreamChunk> { yield* list }

  it('forwards the session id and the signal only when given; records the dispatched route and cap', async () => {
    const seen: GenerateOptions[] = []
    const signal = new AbortController().signal
    const withExtras = new LlmSummarizer({ runtime: fakeRuntime(() => from(stop), 12, seen), log, policy, agentRoute: { provider: 'p', model: 'm' }, sessionId: 's-1', newInstructionId: () => 'i' })
    expect(await withExtras.summarize(input, signal)).toMatchObject({ provider: 'served', model: 'served-model', maxTokens: 12 })
    expect([seen[0]?.sessionId, seen[0]?.signal]).toEqual(['s-1', signal])
    const bare = new LlmSummarizer({ runtime: fakeRuntime(() => from(stop), undefined, seen), log, policy, agentRoute: { provider: 'p', model: 'm' }, newInstructionId: () => 'i' })
    const out = await bare.summarize(input)
    expect('maxTokens' in out).toBe(false)
    expect(['sessionId', 'signal'].filter((k) => k in (seen[1] as object))).toEqual([])
  })

  it('a stream that throws is an UNKNOWN summarizer failure on the dispatched route, caused by the thrown error', async () => {
    const boom = new Error('hook exploded')
    async function* throwing(): AsyncGenerator<StreamChunk> { yield* []; throw boom }
    const summarizer = new LlmSummarizer({ runtime: fakeRuntime(throwing, 12, []), log, policy, agentRoute: { provider: 'p', model: 'm' }, newInstructionId: () => 'i' })
    const err = await rejectionOf(summarizer.summarize(input))
    expect(err).toBeInstanceOf(SummarizerError)
    expect(err).toMatchObject({ failure: { message: 'hook exploded', code: 'UNKNOWN' }, provider: 'served', model: 'served-model', maxTokens: 12, cause: boom })
  })

  it('an aborted finish is that failure unchanged; a tool-calls finish still yields the text summary; assembly errors are the cause', () => {
    const route = { provider: 'p', model: 'm' }
    const failure = { message: 'aborted by caller', code: 'ABORTED' }
    try {
      summaryFromChunks([{ type: 'finish', reason: { kind: 'aborted', failure } }], route)
      expect.unreachable()
    } catch (err) {
      expect((err as SummarizerError).failure).toBe(failure)
    }
    const toolCalls = [...stop.slice(0, 2), { type: 'finish', reason: { kind: 'tool-calls' } }] as StreamChunk[]
    expect(summaryFromChunks(toolCalls, route).summary).toEqual([{ type: 'text', text: 'sum' }])
    try {
      summaryFromChunks([{ type: 'block-start', index: 0, blockType: 'image' }, { type: 'finish', reason: { kind: 'stop' } }], route)
      expect.unreachable()
    } catch (err) {
      expect((err as Error).cause).toBeInstanceOf(AssemblyError)
    }
  })
})
