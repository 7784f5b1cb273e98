/**
 * The loop's tool-result options (§1.4.8, §1.4.9, §10.4): parallel dispatch answered in a given order
 * (`toolResultOrder`), result metadata (`ToolOutcome.meta`), and steering input claimed at step open
 * (`steering`), with the scripted adapter and no compaction engine.
 */
import { describe, expect, it } from 'vitest'
import { AgentError } from '../../src/agent/agent.ts'
import { CallId } from '../../src/brand.ts'
import { TOOL_NOT_STARTED } from '../../src/log/lifecycle.ts'
import { answer, callRead, prompt, say, world } from './harness.ts'

describe('toolResultOrder: parallel dispatch answered in a given order', () => {
  it('logs every tool/call in call order, then the results in the given order, each citing its call', async () => {
    const executed: string[] = []
    const w = world({
      conversation: [callRead(['c1', 'c2', 'c3']), say('done')],
      executeTool: answer((id) => {
        executed.push(id)
        return `contents of ${id}`
      }),
      agent: { toolResultOrder: () => [CallId('c3'), CallId('c1'), CallId('c2')] },
    })
    await w.agent.runTurn(prompt('read all three'))
    const calls = w.ofType('tool/call')
    const results = w.ofType('tool/result')
    expect(calls.map((c) => c.data.callId)).toEqual(['c1', 'c2', 'c3'])
    expect(results.map((r) => r.data.message.source.callId)).toEqual(['c3', 'c1', 'c2'])
    expect(executed).toEqual(['c3', 'c1', 'c2'])
    const seqOf = (id: string): number | undefined => calls.find((c) => c.data.callId === id)?.seq
    expect(results.map((r) => r.sourceEventSeqs)).toEqual([[seqOf('c3')], [seqOf('c1')], [seqOf('c2')]])
    const step1 = w.types().slice(w.types().indexOf('assistant/message'), w.types().indexOf('step/end') + 1)
    expect(step1).toEqual(['assistant/message', 'tool/call', 'tool/call', 'tool/call', 'tool/result', 'tool/result', 'tool/result', 'step/end'])
    // The model's own call order stays in the assistant message; the next request carries the results as logged.
    const assistant = w.ofType('assistant/message')[0]?.data.message.content.map((b) => b.type === 'tool-call' ? b.id : b.type)
    expect(assistant).toEqual(['c1', 'c2', 'c3'])
    const toolIds = w.captures[1]?.messages.flatMap((m) => m.content.flatMap((b) => b.type === 'tool-result' ? [b.toolCallId] : []))
    expect(toolIds).toEqual(['c3', 'c1', 'c2'])
    expect(w.log.state.surface.balanceAt(w.log.nodes.length)).toBe(0)
  })

  it('keeps sequential call/result pairs when the order callback returns null for a step', async () => {
    const w = world({
      conversation: [callRead(['c1', 'c2']), say('done')],
      agent: { toolResultOrder: () => null },
    })
    await w.agent.runTurn(prompt('go'))
    const step1 = w.types().slice(w.types().indexOf('assistant/message') + 1, w.types().indexOf('step/end'))
    expect(step1).toEqual(['tool/call', 'tool/result', 'tool/call', 'tool/result'])
  })

  it('passes the step position and the calls to the order callback', async () => {
    const seen: unknown[] = []
    const w = world({
      conversation: [callRead(['a']), callRead(['b1', 'b2']), say('done')],
      agent: {
        toolResultOrder: (calls, at) => {
          seen.push({ ...at, calls: calls.map((c) => c.callId) })
          return null
        },
      },
    })
    await w.agent.runTurn(prompt('go'))
    expect(seen).toEqual([{ turn: 1, step: 1, calls: ['a'] }, { turn: 1, step: 2, calls: ['b1', 'b2'] }])
  })

  it('answers dispatched calls still waiting at cancellation with ABORTED results citing their calls', async () => {
    const controller = new AbortController()
    const w = world({
      conversation: [callRead(['c1', 'c2', 'c3'])],
      executeTool: async (call) => {
        controller.abort()
        return { content: [{ type: 'text', text: `ran ${call.callId}` }] }
      },
      agent: { toolResultOrder: () => [CallId('c2'), CallId('c3'), CallId('c1')] },
    })
    const outcome = await w.agent.runTurn(prompt('go'), controller.signal)
    expect(outcome.reason.kind).toBe('aborted')
    const results = w.ofType('tool/result')
    expect(results.map((r) => [r.data.message.source.callId, r.data.error?.code ?? null])).toEqual([
      ['c2', null], ['c3', 'ABORTED'], ['c1', 'ABORTED'],
    ])
    expect(results.every((r) => r.sourceEventSeqs?.length === 1)).toBe(true)
    expect(results.some((r) => r.data.error?.code === TOOL_NOT_STARTED)).toBe(false)
    expect(w.log.state.surface.balanceAt(w.log.nodes.length)).toBe(0)
  })

  it('rejects an order that is not a permutation of the call ids, after closing the turn', async () => {
    const w = world({
      conversation: [callRead(['c1', 'c2'])],
      agent: { toolResultOrder: () => [CallId('c1'), CallId('c1')] },
    })
    const run = w.agent.runTurn(prompt('go'))
    await expect(run).rejects.toBeInstanceOf(AgentError)
    await expect(run).rejects.toMatchObject({ code: 'TOOL_ORDER' })
    expect(w.ofType('tool/call')).toHaveLength(0)
    expect(w.types().slice(-2)).toEqual(['step/end', 'turn/end'])
  })
})

describe('ToolOutcome.meta and error (§1.4.9)', () => {
  it('logs meta and the structured error on tool/result; the request carries content and isError only', async () => {
    const w = world({
      conversation: [callRead(['c1']), say('done')],
      executeTool: answer(() => ({
        content: [{ type: 'text', text: 'ENOENT: no such file' }], isError: true,
        error: { name: 'FileNotFoundError', code: 'ENOENT' }, meta: { durationMs: 12, host: 'ci-3' },
      })),
    })
    await w.agent.runTurn(prompt('read'))
    const result = w.ofType('tool/result')[0]
    expect(result?.data.error).toEqual({ name: 'FileNotFoundError', code: 'ENOENT' })
    expect(result?.data.meta).toEqual({ durationMs: 12, host: 'ci-3' })
    const wire = w.captures[1]?.messages.at(-1)
    expect(wire?.content).toEqual([
      { type: 'tool-result', toolCallId: 'c1', content: [{ type: 'text', text: 'ENOENT: no such file' }], isError: true },
    ])
    expect(JSON.stringify(w.captures[1]?.messages)).not.toContain('ci-3')
  })
})

describe('steering: user input claimed at step open (§10.4)', () => {
  it('appends steering input after step/start of the step it is given for, before that step\'s request', async () => {
    const w = world({
      conversation: [callRead(['c1']), say('switching to b.ts')],
      agent: { steering: (_turn, step) => (step === 2 ? [{ content: [{ type: 'text', text: 'actually, read b.ts instead' }] }] : []) },
    })
    await w.agent.runTurn(prompt('read a.ts'))
    const users = w.ofType('user/message')
    expect(users.map((u) => u.data.content)).toEqual([
      [{ type: 'text', text: 'read a.ts' }], [{ type: 'text', text: 'actually, read b.ts instead' }],
    ])
    expect(users[1]?.data.source).toEqual({ kind: 'user' })
    const types = w.types()
    const step2 = types.lastIndexOf('step/start')
    expect(types[step2 + 1]).toBe('user/message')
    const steerSeq = users[1]?.seq ?? -1
    expect(w.log.event(steerSeq - 1)?.type).toBe('step/start')
    // Visible in the very next request, after the tool result, as a user-role message.
    const last = w.captures[1]?.messages.at(-1)
    expect(last?.role).toBe('user')
    expect(last?.content).toEqual([{ type: 'text', text: 'actually, read b.ts instead' }])
    expect(w.captures[0]?.messages.some((m) => JSON.stringify(m).includes('actually'))).toBe(false)
    expect(w.log.state.openTurn).toBeNull()
  })

  it('asks once per step with the open turn and step', async () => {
    const asked: Array<[number, number]> = []
    const w = world({
      conversation: [callRead(['c1']), say('one'), say('two')],
      agent: { steering: (turn, step) => { asked.push([turn, step]); return [] } },
    })
    await w.agent.runTurn(prompt('a'))
    await w.agent.runTurn(prompt('b'))
    expect(asked).toEqual([[1, 1], [1, 2], [2, 1]])
  })
})
