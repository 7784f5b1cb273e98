/**
 * The LLM runtime (§1.2.1, §2.7): adapter failures — thrown or in-band — reach consumers as a terminal
 * finish chunk; cancellation becomes `aborted`; capacity is validated; middleware may reroute (FAULT-32).
 */
import { describe, expect, it } from 'vitest'
import { LlmError, FailureCode } from '../../src/adapter/contract.ts'
import { LlmRuntime } from '../../src/adapter/runtime.ts'
import { ScriptedAdapter, replyChunks } from '../../src/adapter/scripted.ts'
import { errorChain } from '../../src/errors.ts'
import type { StreamChunk } from '../../src/log/llm.ts'

const route = { provider: 'mock', model: 'mock-4k', contextWindow: 4000, imageTokens: 85 }
const base = { provider: 'mock', model: 'mock-4k', messages: [] }

async function collect(chunks: AsyncIterable<StreamChunk>): Promise<StreamChunk[]> {
  const out: StreamChunk[] = []
  for await (const c of chunks) out.push(c)
  return out
}

describe('LlmRuntime', () => {
  it('streams scripted replies in the Appendix B chunk shape', async () => {
    const runtime = new LlmRuntime()
    runtime.registerAdapter('mock', new ScriptedAdapter({ routes: [route], conversation: [{ kind: 'reply', blocks: [{ type: 'text', text: 'hi' }], usage: { inputTokens: 1, outputTokens: 1 } }] }))
    const chunks = await collect(runtime.stream(base).chunks)
    expect(chunks.map((c) => c.type)).toEqual(['block-start', 'text-delta', 'block-end', 'usage', 'finish'])
    expect(chunks).toEqual(replyChunks([{ type: 'text', text: 'hi' }], { inputTokens: 1, outputTokens: 1 }))
  })

  it('normalises a thrown and an in-band failure to the same terminal finish (FAULT-01, FAULT-02)', async () => {
    const failure = { message: 'too long', code: FailureCode.CONTEXT_WINDOW_EXCEEDED }
    const runtime = new LlmRuntime()
    runtime.registerAdapter('mock', new ScriptedAdapter({ routes: [route], conversation: [{ kind: 'fail', failure }, { kind: 'fail', failure, delivery: 'in-band' }] }))
    const thrown = await collect(runtime.stream(base).chunks)
    const inBand = await collect(runtime.stream(base).chunks)
    expect(thrown).toEqual([{ type: 'finish', reason: { kind: 'error', failure } }])
    expect(inBand).toEqual(thrown)
  })

  it('reports an in-band failure to onFinish even when the consumer stops reading at the finish chunk', async () => {
    const failure = { message: 'too long', code: FailureCode.CONTEXT_WINDOW_EXCEEDED }
    const finished: string[] = []
    const runtime = new LlmRuntime({ onFinish: (_options, reason) => { finished.push(reason.kind) } })
    runtime.registerAdapter('mock', new ScriptedAdapter({
      routes: [route],
      conversation: [{ kind: 'fail', failure, delivery: 'in-band' }, { kind: 'reply', blocks: [{ type: 'text', text: 'hi' }] }],
    }))
    for (let i = 0; i < 2; i++) {
      for await (const c of runtime.stream(base).chunks) if (c.type === 'finish') break
    }
    expect(finished).toEqual(['error', 'stop'])
  })

  it('turns an abort into an aborted finish with code ABORTED', async () => {
    const runtime = new LlmRuntime()
    runtime.registerAdapter('mock', new ScriptedAdapter({ routes: [route], conversation: [{ kind: 'wait-for-abort' }] }))
    const controller = new AbortController()
    const pending = collect(runtime.stream({ ...base, signal: controller.signal }).chunks)
    controller.abort(new Error('user stop'))
    const chunks = await pending
    expect(chunks).toHaveLength(1)
    expect(chunks[0]).toMatchObject({ type: 'finish', reason: { kind: 'aborted', failure: { code: 'ABORTED' } } })
  })

  it('reports NO_ADAPTER as a finish, and validates capacity (§2.7, FAULT-41)', async () => {
    const runtime = new LlmRuntime()
    expect(await collect(runtime.stream(base).chunks)).toEqual([{ type: 'finish', reason: { kind: 'error', failure: { message: 'no adapter owns mock/mock-4k', code: 'NO_ADAPTER' } } }])
    runtime.registerAdapter('mock', new ScriptedAdapter({ routes: [{ ...route, contextWindow: 0 }, { provider: 'mock', model: 'none' }] }))
    await expect(runtime.resolveModelInfo('mock', 'mock-4k')).rejects.toMatchObject({ code: 'INVALID_MODEL_CONTEXT' })
    expect((await runtime.resolveModelInfo('mock', 'none')).context).toBeUndefined()
    await expect(runtime.resolveModelInfo('other', 'x')).rejects.toBeInstanceOf(LlmError)
  })

  it('lets middleware reroute a call and reports the dispatched route (FAULT-32)', async () => {
    const runtime = new LlmRuntime()
    const adapter = new ScriptedAdapter({ routes: [route], compaction: [{ kind: 'reply', blocks: [{ type: 'text', text: 's' }] }] })
    runtime.registerAdapter('mock', adapter)
    runtime.use((o) => (o.purpose === 'compaction' ? { ...o, model: 'mock-summary' } : o))
    const call = runtime.stream({ ...base, purpose: 'compaction' })
    await collect(call.chunks)
    expect([call.provider, call.model]).toEqual(['mock', 'mock-summary'])
    expect(adapter.requests[0]?.model).toBe('mock-summary')
  })
})

describe('errorChain (§7.8)', () => {
  it('joins causes, skips repeats, brackets aggregates, renders non-errors', () => {
    expect(errorChain(new Error('outer', { cause: new Error('inner') }))).toBe('outer: inner')
    expect(errorChain(new Error('outer: inner', { cause: new Error('inner') }))).toBe('outer: inner')
    expect(errorChain(new AggregateError([new Error('a'), 'b'], 'both'))).toBe('both [a; b]')
    expect(errorChain({ message: 'plain' })).toBe('plain')
    expect(errorChain(42)).toBe('42')
    const unnamed = new TypeError('')
    expect(errorChain(unnamed)).toBe('TypeError')
  })
})
