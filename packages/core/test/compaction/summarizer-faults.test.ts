/**
 * Summarizer faults inside a bracket (§13.2, FAULT-20 … FAULT-33): for each, the events written, the surface,
 * the error class (automatic `CompactionError`, manual `ManualCompactionError`), the `compaction/summary-error`
 * record and the pre-step warning. Automatic runs use the Appendix B pre-step of turn 3 step 2 (span {3..42});
 * manual runs use the idle point after turn 2 (span {3..28}).
 */
import { describe, expect, it } from 'vitest'
import { CompactionConvergenceError, CompactionError, ManualCompactionError } from '../../src/compaction/errors.ts'
import type { EventDraft, SessionEvent } from '../../src/log/events.ts'
import type { ContentBlock } from '../../src/log/llm.ts'
import { COMPACTION_INSTRUCTION } from '../../src/constants.ts'
import { expectBracketInvariants } from './support/invariants.ts'
import {
  admission, bench, BETWEEN_TURNS_2_3, failReply, rejectionOf, ROUTE, SHORT_SUMMARY, summaryReply, type Bench,
} from './support/bench.ts'

const SURFACE_3_2 = [2, 3, 10, 15, 23, 28, 37, 42, 47, 49]
const SURFACE_AFTER_TURN_2 = [2, 3, 10, 15, 23, 28, 37]
const FAILED_BRACKET = ['compaction/start', 'compaction/summary-error', 'compaction/end']

function event<T extends SessionEvent['type']>(b: Bench, type: T, k = 0): SessionEvent<T> {
  const found = b.appended().filter((e) => e.type === type)[k]
  if (found === undefined) throw new Error(`no ${type} #${k} was appended`)
  return found as SessionEvent<T>
}

const image: ContentBlock = {
  type: 'image', attachment: { attachmentId: `sha256:${'9'.repeat(64)}`, mediaType: 'image/png', bytes: 10, width: 1, height: 1, name: 'out.png' },
}

describe('§13.2 summarizer faults', () => {
  it('FAULT-20: a SERVER failure records summary-error + end{error}; the pre-step warns, continues, and retries next step; manual → summary', async () => {
    const b = bench({ compaction: [failReply('SERVER'), failReply('SERVER')] })
    await b.engine.preStep()
    expect(b.written()).toEqual(FAILED_BRACKET)
    expect(b.log.nodes).toEqual(SURFACE_3_2)
    expect(event(b, 'compaction/summary-error').data).toEqual({
      compactionId: 'cmp-1', shadowedRange: { start: 3, end: 42 }, shadowedSeqs: [3, 10, 15, 23, 28, 37, 42],
      provider: 'mock', model: 'mock-4k', maxTokens: 8192, failure: { message: 'summary call failed: SERVER', code: 'SERVER' },
    })
    expect(event(b, 'compaction/end').data).toEqual({ compactionId: 'cmp-1', turn: 3, error: 'summary call failed: SERVER' })
    expect(b.warnings).toEqual(['step compaction failed: summary call failed: SERVER; continuing the turn'])
    await b.engine.preStep() // D-18: the next pre-step above threshold opens another bracket
    expect(b.written()).toEqual([...FAILED_BRACKET, ...FAILED_BRACKET])
    expect(b.warnings).toHaveLength(2)
    expectBracketInvariants(b.log)

    const m = bench({ prefix: BETWEEN_TURNS_2_3, compaction: [failReply('SERVER')] })
    const err = await rejectionOf(m.engine.compactNow({ admission: admission() }))
    expect(err).toBeInstanceOf(ManualCompactionError)
    expect(err).toMatchObject({ code: 'summary' })
    expect(m.written()).toEqual(FAILED_BRACKET)
    expect(m.log.nodes).toEqual(SURFACE_AFTER_TURN_2)
    expectBracketInvariants(m.log)
  })

  it('FAULT-21: a TIMEOUT (delivered in-band) behaves like FAULT-20', async () => {
    const b = bench({ compaction: [failReply('TIMEOUT', {}, 'in-band')] })
    const err = await rejectionOf(b.engine.compactIfNeeded('pressure'))
    expect(err).toBeInstanceOf(CompactionError)
    expect(err).toMatchObject({ code: 'summary', closed: true, message: 'summary call failed: TIMEOUT' })
    expect(b.written()).toEqual(FAILED_BRACKET)
    expect(event(b, 'compaction/summary-error').data.failure.code).toBe('TIMEOUT')
    expect(b.log.nodes).toEqual(SURFACE_3_2)
    expectBracketInvariants(b.log)
  })

  it('FAULT-22: an abort of the bracket signal fails the call ABORTED; automatic → error propagates; manual → the caller\'s exact reason', async () => {
    const auto = new AbortController()
    const b = bench({ compaction: [{ kind: 'wait-for-abort', before: () => { auto.abort(new Error('turn aborted')) } }] })
    const err = await rejectionOf(b.engine.compactIfNeeded('pressure', auto.signal))
    expect(err).toMatchObject({ name: 'CompactionError', code: 'summary' })
    expect(b.written()).toEqual(FAILED_BRACKET)
    expect(event(b, 'compaction/summary-error').data.failure.code).toBe('ABORTED')
    expect(b.log.nodes).toEqual(SURFACE_3_2)
    expectBracketInvariants(b.log)

    const caller = new AbortController()
    const reason = new Error('user pressed escape')
    let flushes = 0
    const m = bench({
      prefix: BETWEEN_TURNS_2_3,
      compaction: [{ kind: 'wait-for-abort', before: () => { caller.abort(reason) } }],
      engine: { flush: async () => { flushes++ } },
    })
    const a = admission()
    expect(await rejectionOf(m.engine.compactNow({ signal: caller.signal, admission: a }))).toBe(reason)
    expect(m.written()).toEqual(FAILED_BRACKET)
    expect(event(m, 'compaction/summary-error').data.failure.code).toBe('ABORTED')
    expect([flushes, a.released]).toEqual([1, 1])
    expectBracketInvariants(m.log)
  })

  it('FAULT-23: a max-tokens finish fails with MAX_TOKENS', async () => {
    const b = bench({ compaction: [summaryReply('cut off', { finish: { kind: 'max-tokens' } } as never)] })
    await b.engine.preStep()
    expect(b.written()).toEqual(FAILED_BRACKET)
    expect(event(b, 'compaction/summary-error').data.failure).toEqual({ message: 'summary truncated at the token cap', code: 'MAX_TOKENS' })
    expect(b.warnings).toEqual(['step compaction failed: summary truncated at the token cap; continuing the turn'])
    expectBracketInvariants(b.log)
  })

  it('FAULT-24: an empty or reasoning-only summary fails UNKNOWN ("no text summary content")', async () => {
    for (const blocks of [[], [{ type: 'reasoning', text: 'thinking' }], [{ type: 'text', text: '  \n ' }]] as ContentBlock[][]) {
      const b = bench({ compaction: [{ kind: 'reply', blocks }] })
      const err = await rejectionOf(b.engine.compactIfNeeded('pressure'))
      expect(err).toMatchObject({ code: 'summary', message: 'summarization produced no text summary content' })
      expect(b.written()).toEqual(FAILED_BRACKET)
      expect(event(b, 'compaction/summary-error').data.failure.code).toBe('UNKNOWN')
      expectBracketInvariants(b.log)
    }
  })

  it('FAULT-25: an image in the output, top level or nested in a tool-result block, fails UNSUPPORTED_CONTENT', async () => {
    const nested: ContentBlock = { type: 'tool-result', toolCallId: 'c' as never, content: [{ type: 'text', text: 'x' }, image] }
    for (const blocks of [[{ type: 'text', text: 'ok' }, image], [{ type: 'text', text: 'ok' }, nested]] as ContentBlock[][]) {
      const b = bench({ compaction: [{ kind: 'reply', blocks }] })
      const err = await rejectionOf(b.engine.compactIfNeeded('pressure'))
      expect(err).toMatchObject({ code: 'summary' })
      expect(b.written()).toEqual(FAILED_BRACKET)
      expect(event(b, 'compaction/summary-error').data.failure.code).toBe('UNSUPPORTED_CONTENT')
      expect(b.log.nodes).toEqual(SURFACE_3_2)
      expectBracketInvariants(b.log)
    }
  })

  it('FAULT-26: text plus reasoning and tool-call blocks succeeds; summary holds only the text, rawOutput everything', async () => {
    const blocks: ContentBlock[] = [
      { type: 'reasoning', text: 'private' }, { type: 'text', text: 'Part one.' },
      { type: 'tool-call', id: 'call_x' as never, name: 'read', arguments: '{}' }, { type: 'text', text: 'Part two.' },
    ]
    const b = bench({ compaction: [{ kind: 'reply', blocks }] })
    const result = await b.engine.compactIfNeeded('pressure')
    expect(b.written()).toEqual(['compaction/start', 'compaction/summary', 'user/message', 'compaction/end'])
    const summary = event(b, 'compaction/summary').data
    expect(summary.summary).toEqual([{ type: 'text', text: 'Part one.' }, { type: 'text', text: 'Part two.' }])
    expect(summary.rawOutput).toEqual(blocks)
    expect(summary.llmStreamCall).toBe(true)
    expect(result?.summary).toEqual(summary.summary)
    expect(b.log.nodes).toEqual([2, result?.summarySeq === undefined ? -1 : result.summarySeq + 1, 47, 49])
    expectBracketInvariants(b.log)
  })

  it('FAULT-27: a summary not smaller than the span writes no summary and no summary-error; end{error}; manual → summary', async () => {
    const huge = 'x'.repeat(8000)
    const b = bench({ compaction: [summaryReply(huge)] })
    await b.engine.preStep()
    expect(b.written()).toEqual(['compaction/start', 'compaction/end'])
    const error = event(b, 'compaction/end').data.error
    expect(error).toMatch(/^summary is not smaller than the shadowed content \(\d+ estimated framed tokens >= 1660\)$/)
    expect(b.warnings).toEqual([`step compaction failed: ${error}; continuing the turn`])
    expect(b.log.nodes).toEqual(SURFACE_3_2)
    expectBracketInvariants(b.log)

    const m = bench({ prefix: BETWEEN_TURNS_2_3, compaction: [summaryReply(huge)] })
    expect(await rejectionOf(m.engine.compactNow({ admission: admission() }))).toMatchObject({ name: 'ManualCompactionError', code: 'summary' })
    expect(m.written()).toEqual(['compaction/start', 'compaction/end'])
  })

  it('FAULT-28: a summary call rejected CONTEXT_WINDOW_EXCEEDED fails the bracket; no nested compaction', async () => {
    const b = bench({ compaction: [failReply('CONTEXT_WINDOW_EXCEEDED')] })
    const err = await rejectionOf(b.engine.compactIfNeeded('context-overflow'))
    expect(err).toMatchObject({ name: 'CompactionError', code: 'summary' })
    expect(b.written()).toEqual(FAILED_BRACKET)
    expect(event(b, 'compaction/summary-error').data.failure.code).toBe('CONTEXT_WINDOW_EXCEEDED')
    expect(b.adapter.requests).toHaveLength(1)
    expect(b.log.state.surface.replaceGeneration).toBe(1) // unchanged since #15
    expectBracketInvariants(b.log)
  })

  it('FAULT-29: an IMAGE_OFFLOAD_REQUIRED rejection offloads region images only, re-prepares and commits the re-priced span (manual)', async () => {
    const m = bench({
      prefix: BETWEEN_TURNS_2_3,
      compaction: [failReply('IMAGE_OFFLOAD_REQUIRED', { offloadImages: 3 }), summaryReply()],
    })
    const result = await m.engine.compactNow({ admission: admission() })
    expect(m.written()).toEqual(['compaction/start', 'compaction/summary-error', 'image/offload', 'compaction/summary', 'user/message', 'compaction/end'])
    expect(event(m, 'image/offload').data).toEqual({ targets: [{ seq: 28, imageIndexes: [1] }] }) // partial relief
    expect(result?.shadowedTokenCount).toBe(event(m, 'compaction/summary').data.shadowedTokenCount)
    expect(m.adapter.requests).toHaveLength(2)
    expectBracketInvariants(m.log)
  })

  it('FAULT-30: IMAGE_OFFLOAD_REQUIRED with no eligible image in the region fails the bracket without an offload', async () => {
    const b = bench({ compaction: [failReply('IMAGE_OFFLOAD_REQUIRED', { offloadImages: 1 })] })
    const err = await rejectionOf(b.engine.compactRegion(3, 23)) // region [3, 10, 15, 23]: no images
    expect(err).toMatchObject({ name: 'CompactionError', code: 'summary' })
    expect(b.written()).toEqual(FAILED_BRACKET)
    expect(b.log.offloadedIndexes(28)).toEqual(new Set([0]))
    expectBracketInvariants(b.log)
  })

  it('FAULT-31: no resolvable summary target fails UNKNOWN without provider/model; the agent route is the fallback', async () => {
    const events = plainSession()
    const m = bench({ events })
    const err = await rejectionOf(m.engine.compactNow({ admission: admission() }))
    expect(err).toMatchObject({ name: 'ManualCompactionError', code: 'summary' })
    expect(m.written()).toEqual(FAILED_BRACKET)
    const record = event(m, 'compaction/summary-error').data
    expect(record.failure).toEqual({ message: 'no provider/model available for summarization', code: 'UNKNOWN' })
    expect(['provider', 'model', 'maxTokens'].filter((k) => k in record)).toEqual([])
    expect(m.adapter.requests).toHaveLength(0)
    expectBracketInvariants(m.log)

    const f = bench({ events, engine: { agentRoute: { provider: 'mock', model: 'mock-4k' } } })
    const result = await f.engine.compactNow({ admission: admission() })
    expect(result).not.toBeNull()
    expect(event(f, 'compaction/summary').data).toMatchObject({ provider: 'mock', model: 'mock-4k', maxTokens: 8192 })
  })

  it('FAULT-32: middleware rerouting the summary call is recorded as the dispatched route', async () => {
    const b = bench()
    b.runtime.use((o) => (o.purpose === 'compaction' ? { ...o, model: 'mock-summary' } : o))
    await b.engine.compactIfNeeded('pressure')
    expect(event(b, 'compaction/summary').data).toMatchObject({ provider: 'mock', model: 'mock-summary' })
    expect(b.adapter.requests[0]?.model).toBe('mock-summary')
    expectBracketInvariants(b.log)
  })

  it('FAULT-33: pressure still ≥ threshold after a success → compactionRetries more brackets from the head, then a warning', async () => {
    const config = { thresholdRatio: 0.5 } // threshold 2,000; retained tail 640
    const b = bench({ config, compaction: [summaryReply(), summaryReply('S2.')] })
    await b.engine.preStep()
    const types = ['compaction/start', 'compaction/summary', 'user/message', 'compaction/end']
    expect(b.written()).toEqual([...types, ...types])
    const first = event(b, 'user/message', 0)
    expect(event(b, 'compaction/summary', 1).data.shadowedSeqs).toEqual([first.seq]) // merges the head checkpoint
    expect(b.log.nodes).toEqual([2, event(b, 'user/message', 1).seq, 47, 49])
    expect(b.warnings).toHaveLength(1)
    expect(b.warnings[0]).toMatch(/^step compaction failed: still above threshold after 2 compaction attempts \(\d+ estimated tokens >= threshold 2000\); continuing the turn$/)
    expectBracketInvariants(b.log)

    const direct = bench({ config, compaction: [summaryReply(), summaryReply('S2.')] })
    const err = await rejectionOf(direct.engine.compactIfNeeded('pressure'))
    expect(err).toBeInstanceOf(CompactionConvergenceError)
    expect(err).toMatchObject({ attempts: 2, thresholdTokens: 2000 })
  })

  it('the default summarizer is the §8 LLM summarizer and any Summarizer may replace it (§8.6)', async () => {
    const b = bench({
      engine: { summarizer: { summarize: async () => ({ summary: [{ type: 'text', text: SHORT_SUMMARY }], provider: 'template', model: 'v1' }) } },
    })
    await b.engine.compactIfNeeded('pressure')
    const data = event(b, 'compaction/summary').data
    expect(data).toMatchObject({ provider: 'template', model: 'v1' })
    expect(['rawOutput', 'llmStreamCall', 'maxTokens', 'usage'].filter((k) => k in data)).toEqual([])
    expect(b.adapter.requests).toHaveLength(0)
    expectBracketInvariants(b.log)

    // Without an override the engine asks the model itself with the §8.2 request, closed by the §8.3 instruction.
    const plain = bench()
    await plain.engine.compactIfNeeded('pressure')
    expect(plain.adapter.requests).toHaveLength(1)
    const request = plain.adapter.requests[0] as (typeof plain.adapter.requests)[number]
    expect([request.purpose, request.provider, request.model, request.maxTokens, request.sessionId]).toEqual([
      'compaction', ROUTE.provider, ROUTE.model, 8192, 'session-1',
    ])
    expect(['reasoningEffort', 'temperature', 'stop'].filter((k) => k in request)).toEqual([])
    expect(request.messages[0]?.role).toBe('system')
    const instruction = request.messages.at(-1)
    expect(instruction).toEqual({
      id: 'compaction-instruction-1', role: 'user', content: [{ type: 'text', text: COMPACTION_INSTRUCTION }],
      source: { kind: 'plugin', plugin: 'compaction-instruction' },
    })
    // Appendix A's text as §8.3 describes it, written out here rather than taken from core: length and the eight sections in order.
    expect(COMPACTION_INSTRUCTION).toHaveLength(1767)
    const sections = ['Primary Request and Intent', 'Key Technical Concepts', 'Files and Code', 'Errors and Fixes', 'Pending Jobs',
      'Current Work', 'Next Step', 'Critical Context'].map((title) => COMPACTION_INSTRUCTION.indexOf(`## ${title}`))
    expect(sections.every((at, i) => at >= 0 && (i === 0 || at > (sections[i - 1] as number))), JSON.stringify(sections)).toBe(true)
    expect(COMPACTION_INSTRUCTION).toContain('<compacted-summary>')
    // The summary event records the LLM call the §8 summarizer made (a custom one records none of this).
    const summary = event(plain, 'compaction/summary').data
    expect(summary).toMatchObject({ provider: ROUTE.provider, model: ROUTE.model, maxTokens: 8192 })
    expect(['rawOutput', 'llmStreamCall'].filter((k) => k in summary)).toEqual(['rawOutput', 'llmStreamCall'])
    expectBracketInvariants(plain.log)
  })
})

/** A closed two-turn session without any request/header (direct API use): surface [#2, #3, #8, #9]. */
function plainSession(): SessionEvent[] {
  const T = 1_700_000_000_000
  const long = (n: number): string => `note ${n}: ${'lorem ipsum '.repeat(120)}`
  const drafts: EventDraft[] = [
    { time: T, type: 'turn/start', data: { turn: 1 } },
    { time: T, type: 'step/start', data: { turn: 1, step: 1 } },
    { time: T, type: 'user/message', data: { id: 'u1' as never, role: 'user', content: [{ type: 'text', text: long(1) }], source: { kind: 'user' } }, surfaceOp: 'append' },
    { time: T, type: 'assistant/message', data: { turn: 1, step: 1, message: { id: 'a1' as never, role: 'assistant', content: [{ type: 'text', text: long(2) }], source: { kind: 'model', provider: 'mock', model: 'mock-4k' } } }, surfaceOp: 'append' },
    { time: T, type: 'step/end', data: { turn: 1, step: 1 } },
    { time: T, type: 'turn/end', data: { turn: 1, reason: { kind: 'completed' } } },
    { time: T, type: 'turn/start', data: { turn: 2 } },
    { time: T, type: 'step/start', data: { turn: 2, step: 1 } },
    { time: T, type: 'user/message', data: { id: 'u2' as never, role: 'user', content: [{ type: 'text', text: long(3) }], source: { kind: 'user' } }, surfaceOp: 'append' },
    { time: T, type: 'assistant/message', data: { turn: 2, step: 1, message: { id: 'a2' as never, role: 'assistant', content: [{ type: 'text', text: 'done' }], source: { kind: 'model', provider: 'mock', model: 'mock-4k' } } }, surfaceOp: 'append' },
    { time: T, type: 'step/end', data: { turn: 2, step: 1 } },
    { time: T, type: 'turn/end', data: { turn: 2, reason: { kind: 'completed' } } },
  ]
  return drafts.map((d, seq) => ({ ...d, seq }) as SessionEvent)
}
