/**
 * The §7.14 worked trace: the pre-step of turn 3 step 2 on the Appendix B prefix (#0 … #50) through the real
 * engine — pressure 3,762, no prune, span {3..42}, summary call #1 rejected IMAGE_OFFLOAD_REQUIRED, region-only
 * offload, re-prepare, summary call #2 succeeds — appends exactly the fixture's #51 … #56, byte for byte, and
 * sends the §8.2 request shape twice.
 */
import { APPENDIX_B_COMPACTION_ID, APPENDIX_B_SUMMARY_TEXT, appendixBEvents } from '@compaction-sim/fixtures'
import { describe, expect, it } from 'vitest'
import { COMPACTION_INSTRUCTION } from '../../src/constants.ts'
import { encodeEvent } from '../../src/log/codec.ts'
import { deriveMessages } from '../../src/surface/derive.ts'
import { EventLog } from '../../src/log/event-log.ts'
import type { ScriptedReply } from '../../src/adapter/scripted.ts'
import { expectBracketInvariants } from './support/invariants.ts'
import { bench, PRE_STEP_3_2 } from './support/bench.ts'

const offloadRejection: ScriptedReply = {
  kind: 'fail',
  failure: { message: 'summary request carries more images than the route accepts', code: 'IMAGE_OFFLOAD_REQUIRED', offloadImages: 1 },
}
const summarySuccess: ScriptedReply = {
  kind: 'reply',
  blocks: [{ type: 'reasoning', text: '(hidden)' }, { type: 'text', text: APPENDIX_B_SUMMARY_TEXT }],
  usage: { inputTokens: 400, cacheReadTokens: 1600, outputTokens: 160 },
}

function traceBench(): ReturnType<typeof bench> {
  return bench({
    prefix: PRE_STEP_3_2,
    pruner: true,
    compaction: [offloadRejection, summarySuccess],
    engine: { newCompactionId: () => APPENDIX_B_COMPACTION_ID, newMessageId: () => 'm-ck1' },
  })
}

describe('§7.14 worked trace (FAULT-29 on the running example)', () => {
  it('FAULT-29: appends exactly the fixture events #51 … #56 and returns the result at pressure 2,277', async () => {
    const b = traceBench()
    const result = await b.engine.compactIfNeeded('pressure')
    const fixture = appendixBEvents().slice(51, 57)
    expect(b.appended()).toEqual(fixture)
    expect(b.appended().map(encodeEvent)).toEqual(fixture.map(encodeEvent))
    expect(b.log.nodes).toEqual([2, 55, 47, 49])
    expect(b.log.state.surface.replaceGeneration).toBe(2)
    expect(result).toEqual({
      compactionId: 'cmp-7f3a', startSeq: 51, summarySeq: 54, endSeq: 56,
      summary: [{ type: 'text', text: APPENDIX_B_SUMMARY_TEXT }],
      shadowedRange: { start: 3, end: 42 }, shadowedSeqs: [3, 10, 15, 23, 28, 37, 42], shadowedTokenCount: 1652,
    })
    expect(b.meter.measure().totalTokens).toBe(2277)
    expectBracketInvariants(b.log)
  })

  it('sends the §8.2 request shape on both attempts (INV-44): head, projected region, instruction; tools, cap, purpose', async () => {
    const b = traceBench()
    await b.engine.compactIfNeeded('pressure')
    expect(b.adapter.requests).toHaveLength(2)
    const full = EventLog.fromEvents(appendixBEvents().slice(0, 51), { dialect: 'seed' })
    const header = full.state.header?.header
    for (const [k, request] of b.adapter.requests.entries()) {
      // The request's region is derived from the log at dispatch: attempt 2 sees the #53 offload.
      const at = EventLog.fromEvents(b.log.events.slice(0, k === 0 ? 51 : 54), { dialect: 'seed' })
      const byId = new Map(deriveMessages(at).map((m) => [m.id, m]))
      const ids = ['m-sys', 'm-u1', 'm-a1', 'm-t1', 'm-a2', 'm-u2', 'm-a3', 'm-u3']
      expect(request.messages.slice(0, -1)).toEqual(ids.map((id) => byId.get(id as never)))
      expect(request.messages.at(-1)).toMatchObject({
        role: 'user', content: [{ type: 'text', text: COMPACTION_INSTRUCTION }], source: { kind: 'plugin', plugin: 'compaction-instruction' },
      })
      expect(request).toMatchObject({ provider: 'mock', model: 'mock-4k', maxTokens: 8192, purpose: 'compaction', sessionId: 'session-1', tools: header?.tools })
      expect(Object.keys(request).filter((key) => ['reasoningEffort', 'temperature', 'stop'].includes(key))).toEqual([])
    }
    // The instruction ids are fresh and never drawn from the checkpoint id generator.
    expect(new Set(b.adapter.requests.map((r) => r.messages.at(-1)?.id)).size).toBe(2)
    // #28 in attempt 1 still carries image index 1; in attempt 2 both images are placeholders.
    const types = (k: number): string[] => (b.adapter.requests[k]?.messages.find((m) => m.id === 'm-u2')?.content ?? []).map((c) => c.type)
    expect([types(0), types(1)]).toEqual([['text', 'text', 'image'], ['text', 'text', 'text']])
  })

  it('logs the info line of §3.9 when the pre-step compacts', async () => {
    const b = traceBench()
    await b.engine.preStep()
    expect(b.infos).toEqual(['compaction (step pressure): shadowed 7 nodes (seqs 3-42, ~1652 tokens)'])
    expect(b.warnings).toEqual([])
    expect(b.log.length).toBe(57)
  })
})
