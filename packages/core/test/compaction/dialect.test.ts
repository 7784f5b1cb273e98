/**
 * The engine over a `dsh-0.1.0-rc.8` log (§14.1): no `compaction/summary-error` (D-07), no `image/offload`
 * (D-06), spans start at position 0 (h = 0, D-04); the bracket itself is unchanged.
 */
import { describe, expect, it } from 'vitest'
import type { EventDraft, SessionEvent } from '../../src/log/events.ts'
import { expectBracketInvariants } from './support/invariants.ts'
import { bench, failReply, rejectionOf, summaryReply } from './support/bench.ts'

const T = 1_700_000_000_000
const long = (n: number): string => `rc8 note ${n}: ${'lorem ipsum dolor '.repeat(80)}`

/** An rc.8 log inside turn 1 (step 2 closed): surface [#2 user, #5 assistant, #8 user, #9 assistant]. */
function rc8Session(): SessionEvent[] {
  const user = (id: string, text: string): EventDraft => ({ time: T, type: 'user/message', data: { id: id as never, role: 'user', content: [{ type: 'text', text }], source: { kind: 'user' } }, surfaceOp: 'append' })
  const assistant = (id: string, step: number, text: string): EventDraft => ({
    time: T, type: 'assistant/message', surfaceOp: 'append',
    data: { turn: 1, step, message: { id: id as never, role: 'assistant', content: [{ type: 'text', text }], source: { kind: 'model', provider: 'mock', model: 'mock-4k' } } },
  })
  const drafts: EventDraft[] = [
    { time: T, type: 'turn/start', data: { turn: 1 } },
    { time: T, type: 'step/start', data: { turn: 1, step: 1 } },
    user('u1', long(1)),
    { time: T, type: 'request/header', data: { header: { config: { provider: 'mock', model: 'mock-4k' }, system: 'You are terse.' }, reason: 'initial' } },
    { time: T, type: 'request/context', data: { provider: 'mock', model: 'mock-4k', contextWindow: 4000 } },
    assistant('a1', 1, long(2)),
    { time: T, type: 'step/end', data: { turn: 1, step: 1 } },
    { time: T, type: 'step/start', data: { turn: 1, step: 2 } },
    user('u2', long(3)),
    assistant('a2', 2, 'ok'),
    { time: T, type: 'step/end', data: { turn: 1, step: 2 } },
  ]
  return drafts.map((d, seq) => ({ ...d, seq }) as SessionEvent)
}

describe('rc.8 dialect (§14.1)', () => {
  it('D-07: a failed summary writes only start and end{error}', async () => {
    for (const reply of [failReply('SERVER'), failReply('IMAGE_OFFLOAD_REQUIRED', { offloadImages: 1 })]) {
      const b = bench({ events: rc8Session(), dialect: 'dsh-0.1.0-rc.8', compaction: [reply] })
      expect(await rejectionOf(b.engine.compactIfNeeded('context-overflow'))).toMatchObject({ name: 'CompactionError', code: 'summary' })
      expect(b.written()).toEqual(['compaction/start', 'compaction/end'])
      // The end records the summarizer's own failure (nothing else failed on the way, §7.8).
      expect(b.appended()[1]?.data).toEqual({ compactionId: 'cmp-1', turn: 1, error: `summary call failed: ${reply.kind === 'fail' ? reply.failure.code : ''}` })
      expectBracketInvariants(b.log)
    }
  })

  it('D-04: the span starts at position 0 (no system head); the commit is the usual bracket', async () => {
    const b = bench({ events: rc8Session(), dialect: 'dsh-0.1.0-rc.8', compaction: [summaryReply()] })
    const result = await b.engine.compactIfNeeded('context-overflow')
    expect(result?.shadowedSeqs).toEqual([2, 5, 8])
    expect(b.written()).toEqual(['compaction/start', 'compaction/summary', 'user/message', 'compaction/end'])
    expect(b.log.nodes).toEqual([13, 9])
    expect(b.adapter.requests[0]?.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'user'])
    expectBracketInvariants(b.log)
  })
})
