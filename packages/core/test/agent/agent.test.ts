/**
 * The loop's own behaviour (§10.4 event order, §1.4.5 system messages, §10.3 headers, §1.4.6 chunks and
 * interrupted messages, §3.7 idle admission), with the scripted adapter and no compaction engine.
 */
import { describe, expect, it } from 'vitest'
import { Agent } from '../../src/agent/agent.ts'
import { AgentConfigError, resolveRetryPolicy } from '../../src/agent/options.ts'
import { EventLog } from '../../src/log/event-log.ts'
import { TOOL_NOT_STARTED } from '../../src/log/lifecycle.ts'
import { withEngine } from './engine.ts'
import { answer, callRead, prompt, READ_TOOL, say, world } from './harness.ts'

describe('Agent step flow (§10.4)', () => {
  it('writes one text turn in the order of §10.4', async () => {
    const w = world({ conversation: [say('hello', { inputTokens: 10, outputTokens: 2 })] })
    const outcome = await w.agent.runTurn(prompt('hi'))
    expect(outcome).toEqual({ turn: 1, steps: 1, reason: { kind: 'completed' } })
    expect(w.types()).toEqual([
      'turn/start', 'step/start', 'system/message', 'user/message', 'request/header', 'request/context',
      'assistant/chunk', 'assistant/chunk', 'assistant/chunk', 'assistant/chunk', 'assistant/chunk', 'assistant/message',
      'step/end', 'turn/end',
    ])
    const message = w.ofType('assistant/message')[0]
    expect(message?.sourceEventSeqs).toEqual([6, 7, 8, 9, 10])
    expect(message?.data.usage).toEqual({ inputTokens: 10, outputTokens: 2 })
    expect(message?.data.message.content).toEqual([{ type: 'text', text: 'hello' }])
    expect(w.ofType('request/header')[0]?.data.reason).toBe('initial')
    expect(w.ofType('request/context')[0]?.data).toEqual({ provider: 'mock', model: 'mock-4k', contextWindow: 4000, imageTokens: 85 })
  })

  it('runs requested tools (parallel calls in order) and continues with a new step without a new header', async () => {
    const w = world({
      conversation: [callRead(['c1', 'c2']), say('done')],
      executeTool: answer((id) => `contents of ${id}`),
    })
    const outcome = await w.agent.runTurn(prompt('read both'))
    expect(outcome.steps).toBe(2)
    const results = w.ofType('tool/result')
    expect(results.map((r) => [r.data.message.source.callId, r.sourceEventSeqs])).toEqual([
      ['c1', [w.ofType('tool/call')[0]?.seq]], ['c2', [w.ofType('tool/call')[1]?.seq]],
    ])
    expect(w.ofType('request/header')).toHaveLength(1) // epoch and header unchanged in step 2 (§10.3)
    expect(w.captures[1]?.messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'user', 'user'])
    expect(w.log.state.surface.balanceAt(w.log.nodes.length)).toBe(0)
  })

  it('records a thrown tool execution as an error result and lets the model continue', async () => {
    const w = world({
      conversation: [callRead(['c1']), say('sorry')],
      executeTool: async () => { throw Object.assign(new Error('no such file'), { code: 'ENOENT' }) },
    })
    await w.agent.runTurn(prompt('read'))
    const r = w.ofType('tool/result')[0]
    expect(r?.data.error).toEqual({ name: 'Error', code: 'ENOENT' })
    expect(r?.data.message.content[0]).toEqual({ type: 'tool-result', toolCallId: 'c1', content: [{ type: 'text', text: 'no such file' }], isError: true })
  })

  it('ends the turn max-tokens and drops tool calls of a max-tokens finish (§1.4.6)', async () => {
    const w = world({
      conversation: [{ kind: 'reply', blocks: [{ type: 'text', text: 'part' }, { type: 'tool-call', id: 'c1' as never, name: 'read', arguments: '{' }], finish: { kind: 'max-tokens' } }],
    })
    const outcome = await w.agent.runTurn(prompt('x'))
    expect(outcome.reason).toEqual({ kind: 'max-tokens' })
    expect(w.ofType('assistant/message')[0]?.data.message.content).toEqual([{ type: 'text', text: 'part' }])
    expect(w.ofType('tool/call')).toHaveLength(0)
  })

  it('ends a turn whose model keeps calling tools after maxSteps with {kind:"blocked"}', async () => {
    const w = world({ conversation: (_o, i) => callRead([`c${i}`]), agent: { limits: { maxSteps: 2 } } })
    const outcome = await w.agent.runTurn(prompt('loop'))
    expect(outcome).toEqual({ turn: 1, steps: 2, reason: { kind: 'blocked' } })
    expect(w.types().slice(-2)).toEqual(['step/end', 'turn/end'])
  })
})

describe('system/message (§1.4.5)', () => {
  it('appends the head once, a changed prompt at the tail, nothing for an identical prompt', async () => {
    let systemPrompt = 'A'
    const w = world({ conversation: [say('1'), say('2'), say('3')], systemPrompt: () => systemPrompt })
    await w.agent.runTurn(prompt('one'))
    await w.agent.runTurn(prompt('two'))
    systemPrompt = 'B'
    await w.agent.runTurn(prompt('three'))
    const systems = w.ofType('system/message')
    expect(systems.map((s) => s.data.content)).toEqual([[{ type: 'text', text: 'A' }], [{ type: 'text', text: 'B' }]])
    const b = systems[1]
    expect(w.log.events[(b?.seq ?? 0) - 1]?.type).toBe('step/start') // after step/start, before the batch
    expect(w.log.events[(b?.seq ?? 0) + 1]?.type).toBe('user/message')
  })

  it('writes no head for an empty prompt and appends a later non-empty prompt at the tail (rule 6)', async () => {
    let systemPrompt = ''
    const w = world({ conversation: [say('1'), say('2')], systemPrompt: () => systemPrompt })
    await w.agent.runTurn(prompt('one'))
    expect(w.ofType('system/message')).toHaveLength(0)
    systemPrompt = 'now'
    await w.agent.runTurn(prompt('two'))
    const s = w.ofType('system/message')[0]
    expect(w.log.state.surface.position(s?.seq ?? -1)).toBe(2)
  })
})

describe('request/header reasons (§10.3)', () => {
  it('a new loop instance over a log with a header logs resume, then nothing while unchanged', async () => {
    const first = world({ conversation: [say('1')] })
    await first.agent.runTurn(prompt('one'))
    const second = world({ conversation: [callRead(['c1']), say('2')], log: first.log })
    await second.agent.runTurn(prompt('two'))
    const headers = second.ofType('request/header')
    expect(headers.map((h) => h.data.reason)).toEqual(['initial', 'resume'])
    expect(second.ofType('request/context')).toHaveLength(1)
  })

  it('a new instance logs resume even when the tools changed; within an instance a tools or route change logs change', async () => {
    const first = world({ conversation: [say('1')] })
    await first.agent.runTurn(prompt('one'))
    const second = world({ conversation: [say('2'), say('3'), say('4')], log: first.log, tools: [] })
    await second.agent.runTurn(prompt('two'))
    second.agent.setTools([READ_TOOL])
    await second.agent.runTurn(prompt('three'))
    second.agent.setRoute({ provider: 'mock', model: 'mock-4k', temperature: 0.2 })
    await second.agent.runTurn(prompt('four'))
    expect(second.ofType('request/header').map((h) => [h.data.reason, h.data.header.tools?.length, h.data.header.config.temperature])).toEqual([
      ['initial', 1, undefined], ['resume', undefined, undefined], ['change', 1, undefined], ['change', 1, 0.2],
    ])
    expect(second.captures.at(-1)?.temperature).toBe(0.2)
  })
})

describe('cancellation', () => {
  it('keeps the non-blank text of a cancelled stream as an interrupted message and ends the turn aborted', async () => {
    const controller = new AbortController()
    const w = world({
      conversation: [{
        kind: 'chunks', chunks: [
          { type: 'block-start', index: 0, blockType: 'text' }, { type: 'text-delta', index: 0, text: 'partial answer' },
          { type: 'block-start', index: 1, blockType: 'reasoning' }, { type: 'reasoning-delta', index: 1, text: '  ' },
          { type: 'tool-call-delta', index: 2, id: 'c9' as never, name: 'read', argumentsDelta: '{}' },
          { type: 'block-start', index: 3, blockType: 'text' },
        ],
        before: () => {},
      }],
    })
    w.log.subscribe((e) => { if (e.type === 'assistant/chunk' && e.seq === 10) controller.abort() })
    const outcome = await w.agent.runTurn(prompt('go'), controller.signal)
    expect(outcome.reason).toEqual({ kind: 'aborted', reason: { kind: 'user' } })
    const m = w.ofType('assistant/message')[0]
    expect(m?.data.interrupted).toBe(true)
    expect(m?.data.message.content).toEqual([{ type: 'text', text: 'partial answer' }])
    const finish = w.ofType('assistant/chunk').at(-1)?.data.chunk
    expect(finish).toMatchObject({ type: 'finish', reason: { kind: 'aborted', failure: { code: 'ABORTED' } } })
    expect(m?.sourceEventSeqs).toEqual(w.ofType('assistant/chunk').map((c) => c.seq))
    expect(w.types().slice(-2)).toEqual(['step/end', 'turn/end'])
  })

  it('answers calls that never started with synthetic TOOL_NOT_STARTED results once the turn is cancelled', async () => {
    const controller = new AbortController()
    const w = world({
      conversation: [callRead(['c1', 'c2'])],
      executeTool: async (call) => {
        controller.abort()
        return { content: [{ type: 'text', text: `ran ${call.callId}` }] }
      },
    })
    const outcome = await w.agent.runTurn(prompt('go'), controller.signal)
    expect(outcome.reason.kind).toBe('aborted')
    const results = w.ofType('tool/result')
    expect(results.map((r) => r.data.error?.code)).toEqual([undefined, TOOL_NOT_STARTED])
    expect(results[1]?.sourceEventSeqs).toBeUndefined()
    expect(w.ofType('tool/call')).toHaveLength(1)
    expect(w.log.state.surface.balanceAt(w.log.nodes.length)).toBe(0)
  })

  it('FAULT-83: a turn aborted before the pre-step writes only turn/start and turn/end', async () => {
    const controller = new AbortController()
    controller.abort()
    let preSteps = 0
    const w = world({
      conversation: [],
      makeEngine: () => ({ preStep: async () => { preSteps++ }, compactIfNeeded: async () => null, compactNow: async () => null }),
    })
    const outcome = await w.agent.runTurn(prompt('never'), controller.signal)
    expect(outcome.reason.kind).toBe('aborted')
    expect(w.types()).toEqual(['turn/start', 'turn/end'])
    expect(preSteps).toBe(0)
  })
})

describe('idle admission (§3.7, §11.2)', () => {
  it('refuses a reservation while a turn runs or waits and queues a turn behind a held reservation', async () => {
    let release: () => void = () => {}
    const gate = new Promise<void>((r) => { release = r })
    const w = world({ conversation: [{ ...say('1'), before: () => gate }, say('2')] })
    const running = w.agent.runTurn(prompt('one'))
    expect(w.agent.admission.tryReserve()).toBeNull()
    release()
    await running
    const reservation = w.agent.admission.tryReserve()
    expect(reservation).not.toBeNull()
    expect(w.agent.admission.tryReserve()).toBeNull()
    const queued = w.agent.runTurn(prompt('two'))
    await Promise.resolve()
    await Promise.resolve()
    expect(w.log.state.lastTurn).toBe(1)
    reservation?.release()
    await queued
    expect(w.log.state.lastTurn).toBe(2)
  })

  it('cancelMaintenance aborts the held reservation signal', () => {
    const w = world({ conversation: [] })
    const reservation = w.agent.admission.tryReserve()
    expect(w.agent.cancelMaintenance('shutdown')).toBe(true)
    expect(reservation?.signal.aborted).toBe(true)
    expect(reservation?.signal.reason).toBe('shutdown')
  })
})

describe('compactNow passthrough (§3.7)', () => {
  it('compacts between turns through the agent admission and reports busy while a turn runs (FAULT-72)', async () => {
    let release: () => void = () => {}
    const gate = new Promise<void>((r) => { release = r })
    const long = 'The float comparison fails because 0.1 + 0.2 is not exactly 0.3 in binary floating point. '.repeat(30)
    const w = world({
      makeEngine: withEngine(),
      compaction: [say('## Primary Request and Intent\n- fix the float test')],
      conversation: [say(long), say('ok'), { ...say('later'), before: () => gate }],
    })
    await w.agent.runTurn(prompt('one'))
    await w.agent.runTurn(prompt('two'))
    const result = await w.agent.compactNow({ sourceCommandId: 'cmd-1' })
    expect(result?.sourceCommandId).toBe('cmd-1')
    expect(w.ofType('compaction/start')[0]?.data).toEqual({ compactionId: 'cmp-1', sourceCommandId: 'cmd-1', turn: null })
    const running = w.agent.runTurn(prompt('three'))
    await expect(w.agent.compactNow()).rejects.toMatchObject({ name: 'ManualCompactionError', code: 'busy' })
    release()
    await running
  })
})

describe('configuration', () => {
  it('refuses a retry policy that would retry a protocol code (§3.10, INV-35)', () => {
    expect(() => resolveRetryPolicy({ codes: ['CONTEXT_WINDOW_EXCEEDED'] })).toThrow(AgentConfigError)
    expect(resolveRetryPolicy().policyKey).toBe('["normal",5,["EMPTY_RESPONSE","RATE_LIMIT","SERVER","TIMEOUT","TRANSPORT"],500,10000,0]')
  })

  it('refuses the rc.8 dialect and a log with an open turn', async () => {
    const w = world({ conversation: [] })
    expect(() => new Agent({ ...optionsOf(w), log: new EventLog({ dialect: 'dsh-0.1.0-rc.8' }) })).toThrow(AgentConfigError)
    w.log.append({ time: 0, type: 'turn/start', data: { turn: 1 } })
    await expect(w.agent.runTurn(prompt('x'))).rejects.toMatchObject({ code: 'TURN_OPEN' })
  })
})

function optionsOf(w: ReturnType<typeof world>): ConstructorParameters<typeof Agent>[0] {
  return {
    log: w.log, runtime: w.runtime, policy: w.policy, route: { provider: 'mock', model: 'mock-4k' }, systemPrompt: () => '',
    tools: [], executeTool: async () => ({ content: [] }), clock: w.clock, newMessageId: () => 'm', newRetryId: () => 'r', sleep: async () => {},
  }
}
