/**
 * §13.1 provider faults on conversation requests, one test per FAULT id: the request-error waterfall of
 * the loop (overflow recovery §3.10, image offload §6.6, generic transient retry §1.4.13) with the real
 * compaction engine behind the scripted adapter. "Same step retry" = no new `step/start`, a
 * `request/header` (`series`, or `change` + `startsSeries`) before the next attempt's chunks, no `llm/retry`.
 */
import { describe, expect, it } from 'vitest'
import { OverflowRecovery } from '../../src/agent/recovery.ts'
import type { ScriptedReply } from '../../src/adapter/scripted.ts'
import { EventLog } from '../../src/log/event-log.ts'
import type { LlmFailure } from '../../src/log/llm.ts'
import { resolveCompactionConfig } from '../../src/policy/config.ts'
import { answer, callRead, fail, image, prompt, say, world, type World, type WorldOptions } from './harness.ts'
import { withEngine } from './engine.ts'

const OVERFLOW: LlmFailure = { message: 'request exceeds the context window', code: 'CONTEXT_WINDOW_EXCEEDED' }
const SUMMARY: ScriptedReply = say('## Primary Request and Intent\n- keep going')
const LONG = 'The helper sums its operands and the test compares the float result exactly. '.repeat(26) // 2,028 chars

/** Turn 1 answered with a long text, so turn 2 has compactable history (head, u1, a1 | u2). */
async function historyThenTurn(options: Omit<WorldOptions, 'conversation'> & { turn2: ScriptedReply[] }): Promise<World> {
  const w = world({ ...options, conversation: [say(LONG), ...options.turn2] })
  await w.agent.runTurn(prompt('Why does the float test fail?'))
  return w
}

/** Events written by the last turn (from its turn/start). */
function lastTurn(w: World): string[] {
  const start = w.ofType('turn/start').at(-1)?.seq ?? 0
  return w.types(start)
}

/** The number of `step/start` events of the last turn. */
function stepsOfLastTurn(w: World): number {
  return lastTurn(w).filter((t) => t === 'step/start').length
}

describe('§13.1 provider faults on conversation requests', () => {
  it('FAULT-01: a thrown overflow is recovered by an R = 0 bracket in the failing step and retried there', async () => {
    const w = await historyThenTurn({ makeEngine: withEngine(), compaction: [SUMMARY], turn2: [fail(OVERFLOW), say('fixed')] })
    const g0 = w.log.state.surface.replaceGeneration
    const outcome = await w.agent.runTurn(prompt('Fix it.'))
    expect(outcome.reason).toEqual({ kind: 'completed' })
    expect(lastTurn(w)).toEqual([
      'turn/start', 'step/start', 'user/message', 'assistant/chunk',
      'compaction/start', 'compaction/summary', 'user/message', 'compaction/end',
      'request/header', 'assistant/chunk', 'assistant/chunk', 'assistant/chunk', 'assistant/chunk', 'assistant/message',
      'step/end', 'turn/end',
    ])
    expect(w.log.state.surface.replaceGeneration).toBe(g0 + 1)
    expect(w.ofType('request/header').at(-1)?.data.reason).toBe('series')
    expect(w.ofType('llm/retry')).toHaveLength(0)
    expect(stepsOfLastTurn(w)).toBe(1)
    // R = 0 keeps only the newest unit (the entered prompt) after the checkpoint.
    const summary = w.ofType('compaction/summary')[0]
    expect(w.log.event(summary?.data.shadowedSeqs.at(-1) ?? -1)?.type).toBe('assistant/message')
    expect(w.ofType('compaction/start')[0]?.data.turn).toBe(2)
  })

  it('FAULT-01: the overflow counter is 1 after the recovery and deleted by the successful assistant/message', async () => {
    const seen: number[] = []
    const w = await historyThenTurn({ makeEngine: withEngine(), compaction: [SUMMARY], turn2: [fail(OVERFLOW), { ...say('fixed'), before: () => { seen.push(-1) } }] })
    w.log.subscribe((e) => { if (e.type === 'request/header') seen.push(w.agent.overflowRetries) })
    await w.agent.runTurn(prompt('Fix it.'))
    expect(seen).toEqual([1, -1])
    expect(w.agent.overflowRetries).toBe(0)
  })

  it('FAULT-02: an in-band overflow (a finish{kind:error} chunk) is handled exactly like a thrown one', async () => {
    const thrown = await historyThenTurn({ makeEngine: withEngine(), compaction: [SUMMARY], turn2: [fail(OVERFLOW, 'thrown'), say('fixed')] })
    await thrown.agent.runTurn(prompt('Fix it.'))
    const inBand = await historyThenTurn({ makeEngine: withEngine(), compaction: [SUMMARY], turn2: [fail(OVERFLOW, 'in-band'), say('fixed')] })
    await inBand.agent.runTurn(prompt('Fix it.'))
    expect(inBand.log.events).toEqual(thrown.log.events)
  })

  it('FAULT-03: with only the newest unit compactable, no bracket and no retry; the original failure ends the turn', async () => {
    const w = world({ makeEngine: withEngine(), compaction: [SUMMARY], conversation: [fail(OVERFLOW)] })
    const outcome = await w.agent.runTurn(prompt('Only this.'))
    expect(outcome.reason).toEqual({ kind: 'error', error: OVERFLOW })
    expect(w.types().filter((t) => t.startsWith('compaction/'))).toEqual([])
    expect(w.ofType('assistant/chunk')).toHaveLength(1)
    expect(w.adapter.requests.filter((r) => r.purpose === 'compaction')).toHaveLength(0)
  })

  it('FAULT-04: a prune of the oversized newest unit authorises the retry without a bracket', async () => {
    const w = world({
      makeEngine: withEngine({ pruner: true }),
      routes: [{ provider: 'mock', model: 'mock-4k', contextWindow: 100_000 }],
      conversation: [callRead(['c1']), fail(OVERFLOW), say('read it')],
      executeTool: answer(() => 'x'.repeat(20_000)),
    })
    const outcome = await w.agent.runTurn([]) // no entered prompt: head + one tool unit
    expect(outcome.reason).toEqual({ kind: 'completed' })
    const failedAt = w.ofType('assistant/chunk').find((c) => c.data.chunk.type === 'finish' && c.data.chunk.reason.kind === 'error')?.seq ?? -1
    expect(w.types(failedAt)).toEqual([
      'assistant/chunk', 'compaction/prune', 'tool/result', 'request/header', 'assistant/chunk', 'assistant/chunk', 'assistant/chunk',
      'assistant/chunk', 'assistant/message', 'step/end', 'turn/end',
    ])
    expect(w.ofType('compaction/start')).toHaveLength(0)
    expect(w.ofType('request/header').at(-1)?.data.reason).toBe('series')
  })

  it('FAULT-05: prune progress followed by a failed summary still retries, with the "durable surface progress" warning', async () => {
    const w = world({
      makeEngine: withEngine({ pruner: true }),
      routes: [{ provider: 'mock', model: 'mock-4k', contextWindow: 100_000 }],
      conversation: [callRead(['c1']), say(LONG), fail(OVERFLOW), say('recovered')],
      compaction: [fail({ message: 'summarizer backend unavailable', code: 'SERVER' })],
      executeTool: answer(() => 'x'.repeat(20_000)),
    })
    await w.agent.runTurn([])
    const outcome = await w.agent.runTurn(prompt('Go on.'))
    expect(outcome.reason).toEqual({ kind: 'completed' })
    const after = lastTurn(w)
    expect(after.slice(3, 10)).toEqual([
      'assistant/chunk', 'compaction/prune', 'tool/result', 'compaction/start', 'compaction/summary-error', 'compaction/end', 'request/header',
    ])
    expect(w.ofType('compaction/summary-error')[0]?.data.failure.code).toBe('SERVER')
    expect(w.ofType('compaction/end')[0]?.data.error).toContain('summarizer backend unavailable')
    expect(w.warnings).toEqual([expect.stringMatching(/^overflow compaction failed after durable surface progress: .*summarizer backend unavailable.*; retrying from the replacement surface$/)])
    expect(stepsOfLastTurn(w)).toBe(1)
  })

  it('FAULT-06: a failed summary without prune progress delegates; the turn ends with the original overflow failure', async () => {
    const w = await historyThenTurn({
      makeEngine: withEngine(),
      compaction: [fail({ message: 'summarizer backend unavailable', code: 'SERVER' })],
      turn2: [fail(OVERFLOW)],
    })
    const outcome = await w.agent.runTurn(prompt('Fix it.'))
    expect(outcome.reason).toEqual({ kind: 'error', error: OVERFLOW })
    expect(lastTurn(w).slice(3)).toEqual(['assistant/chunk', 'compaction/start', 'compaction/summary-error', 'compaction/end', 'step/end', 'turn/end'])
    expect(w.warnings).toEqual([expect.stringMatching(/^overflow compaction failed: .*summarizer backend unavailable.*; preserving the original request error$/)])
  })

  it('FAULT-07: a second overflow after a recovered one (maxOverflowRetries = 1) delegates without compaction', async () => {
    const second: LlmFailure = { message: 'still too long', code: 'CONTEXT_WINDOW_EXCEEDED' }
    const w = await historyThenTurn({ makeEngine: withEngine(), compaction: [SUMMARY, SUMMARY], turn2: [fail(OVERFLOW), fail(second)] })
    const outcome = await w.agent.runTurn(prompt('Fix it.'))
    expect(outcome.reason).toEqual({ kind: 'error', error: second })
    expect(w.ofType('compaction/start')).toHaveLength(1)
    expect(lastTurn(w).slice(-4)).toEqual(['request/header', 'assistant/chunk', 'step/end', 'turn/end'])
    expect(w.adapter.requests.filter((r) => r.purpose === 'compaction')).toHaveLength(1)
  })

  it('FAULT-08: maxOverflowRetries = 0 disables overflow recovery only; pressure compaction still runs', async () => {
    const config = { maxOverflowRetries: 0 }
    const w = await historyThenTurn({ makeEngine: withEngine(), config, compaction: [SUMMARY], turn2: [fail(OVERFLOW)] })
    const outcome = await w.agent.runTurn(prompt('Fix it.'))
    expect(outcome.reason).toEqual({ kind: 'error', error: OVERFLOW })
    expect(w.ofType('compaction/start')).toHaveLength(0)

    const p = world({
      makeEngine: withEngine(), config, compaction: [SUMMARY],
      conversation: [say(LONG, { inputTokens: 500, outputTokens: 10 }), say(LONG + LONG, { inputTokens: 3300, outputTokens: 10 }), say('ok')],
    })
    await p.agent.runTurn(prompt('one'))
    await p.agent.runTurn(prompt('two'))
    await p.agent.runTurn(prompt('three'))
    const start = p.ofType('compaction/start')[0]
    expect(start?.data.turn).toBe(3)
    expect(p.log.events[(start?.seq ?? 0) - 1]?.type).toBe('turn/start') // pre-step window of step 1
    expect(p.ofType('compaction/end')[0]?.data.error).toBeUndefined()
  })

  it('FAULT-09: on a session without any request/header the overflow listener delegates and never compacts', async () => {
    const log = new EventLog({ dialect: 'seed' })
    let asked = 0
    const recovery = new OverflowRecovery({
      log, policy: resolveCompactionConfig(undefined), warn: () => {},
      engine: { preStep: async () => {}, compactIfNeeded: async () => { asked++; return null }, compactNow: async () => null },
    })
    let delegated = 0
    const decision = await recovery.listener(
      { failure: OVERFLOW, signal: new AbortController().signal, turn: 1, step: 1, provider: 'mock', requestNodes: [] },
      async () => { delegated++; return { kind: 'fail' } },
    )
    expect(decision).toEqual({ kind: 'fail' })
    expect([asked, delegated, recovery.count]).toEqual([0, 1, 0])
  })

  it('FAULT-10: cancellation while recovery runs prevents the retry even though the replacement landed', async () => {
    const controller = new AbortController()
    const w = await historyThenTurn({ makeEngine: withEngine(), compaction: [SUMMARY], turn2: [fail(OVERFLOW), say('never')] })
    w.log.subscribe((e) => { if (e.type === 'compaction/end') controller.abort() })
    const outcome = await w.agent.runTurn(prompt('Fix it.'), controller.signal)
    expect(outcome.reason).toEqual({ kind: 'aborted', reason: { kind: 'user' } })
    expect(lastTurn(w).slice(-6)).toEqual(['compaction/start', 'compaction/summary', 'user/message', 'compaction/end', 'step/end', 'turn/end'])
    expect(w.adapter.remaining('conversation')).toBe(1)
  })

  it('FAULT-11: overflow while a live lock exists: busy before pruning, no prune, no bracket, the original failure stands', async () => {
    let w: World | undefined
    const lockIt = (): void => {
      const log = w?.log
      if (log !== undefined) log.append({ time: 0, type: 'compaction/start', data: { compactionId: 'cmp-foreign' as never, turn: log.state.openTurn } })
    }
    w = world({
      makeEngine: withEngine({ pruner: true }),
      routes: [{ provider: 'mock', model: 'mock-4k', contextWindow: 100_000 }],
      conversation: [callRead(['c1']), { ...fail(OVERFLOW), before: lockIt }],
      executeTool: answer(() => 'x'.repeat(20_000)),
    })
    const outcome = await w.agent.runTurn(prompt('Read it.'))
    expect(outcome.reason).toEqual({ kind: 'error', error: OVERFLOW })
    expect(w.ofType('compaction/prune')).toHaveLength(0)
    expect(w.ofType('compaction/start')).toHaveLength(1) // the foreign one only
    expect(w.warnings).toEqual([expect.stringMatching(/^overflow compaction failed: .*busy.*; preserving the original request error$/)])
  })

  it('FAULT-12: IMAGE_OFFLOAD_REQUIRED with k ≤ eligible offloads the k oldest occurrences and retries in the step', async () => {
    const w = world({
      conversation: [say('seen'), fail({ message: 'too many images', code: 'IMAGE_OFFLOAD_REQUIRED', offloadImages: 2 }), say('ok')],
    })
    await w.agent.runTurn(prompt('first', [image('1', 'a.png')]))
    const outcome = await w.agent.runTurn(prompt('second', [image('2', 'b.png'), image('3', 'c.png')]))
    expect(outcome.reason).toEqual({ kind: 'completed' })
    const [u1, u2] = w.ofType('user/message')
    expect(w.ofType('image/offload').map((e) => e.data.targets)).toEqual([[{ seq: u1?.seq, imageIndexes: [0] }, { seq: u2?.seq, imageIndexes: [0] }]])
    expect(lastTurn(w).slice(3, 6)).toEqual(['assistant/chunk', 'image/offload', 'request/header'])
    expect(w.ofType('llm/retry')).toHaveLength(0)
    expect(stepsOfLastTurn(w)).toBe(1)
    const retried = w.captures.at(-1)?.messages.find((m) => m.id === u2?.data.id)
    expect(retried?.content.map((b) => b.type)).toEqual(['text', 'text', 'image'])
  })

  it('FAULT-13: with fewer eligible occurrences than k, all are offloaded; the repeated rejection is then final', async () => {
    const tooMany: LlmFailure = { message: 'too many images', code: 'IMAGE_OFFLOAD_REQUIRED', offloadImages: 3 }
    const w = world({ conversation: [fail(tooMany), fail(tooMany)] })
    const outcome = await w.agent.runTurn(prompt('look', [image('1', 'a.png'), image('2', 'b.png')]))
    expect(outcome.reason).toEqual({ kind: 'error', error: tooMany })
    expect(w.ofType('image/offload').map((e) => e.data.targets)).toEqual([[{ seq: 3, imageIndexes: [0, 1] }]])
    expect(w.types(6)).toEqual(['assistant/chunk', 'image/offload', 'request/header', 'assistant/chunk', 'step/end', 'turn/end'])
  })

  it('FAULT-14: no eligible occurrence (only assistant images) delegates; the offload failure ends the turn', async () => {
    const failure: LlmFailure = { message: 'too many images', code: 'IMAGE_OFFLOAD_REQUIRED', offloadImages: 1 }
    const w = world({ conversation: [{ kind: 'reply', blocks: [image('9', 'drawn.png')] }, fail(failure)] })
    await w.agent.runTurn(prompt('draw'))
    const outcome = await w.agent.runTurn(prompt('again'))
    expect(outcome.reason).toEqual({ kind: 'error', error: failure })
    expect(w.ofType('image/offload')).toHaveLength(0)
  })

  it.each([
    ['missing', undefined],
    ['zero', 0],
    ['fractional', 1.5],
  ])('FAULT-15: IMAGE_OFFLOAD_REQUIRED with %s offloadImages is not handleable', async (_name, k) => {
    const failure: LlmFailure = k === undefined
      ? { message: 'too many images', code: 'IMAGE_OFFLOAD_REQUIRED' }
      : { message: 'too many images', code: 'IMAGE_OFFLOAD_REQUIRED', offloadImages: k }
    const w = world({ conversation: [fail(failure)] })
    const outcome = await w.agent.runTurn(prompt('look', [image('1', 'a.png')]))
    expect(outcome.reason).toEqual({ kind: 'error', error: failure })
    expect(w.ofType('image/offload')).toHaveLength(0)
    expect(w.ofType('llm/retry')).toHaveLength(0)
  })

  it('FAULT-16: a transient failure is retried by the generic policy with llm/retry + llm/retry-started in the same step', async () => {
    const server: LlmFailure = { message: 'temporary provider outage', code: 'SERVER' }
    const slept: number[] = []
    const w = world({ conversation: [fail(server), fail(server), say('ok')], agent: { sleep: async (ms) => { slept.push(ms) } } })
    const outcome = await w.agent.runTurn(prompt('go'))
    expect(outcome.reason).toEqual({ kind: 'completed' })
    const retries = w.ofType('llm/retry')
    expect(retries.map((r) => [r.data.retry, r.data.delayMs, r.data.failure.code, r.data.policyKey])).toEqual([
      [1, 500, 'SERVER', w.agent.retryPolicy.policyKey], [2, 1000, 'SERVER', w.agent.retryPolicy.policyKey],
    ])
    expect(slept).toEqual([500, 1000])
    expect(w.types(6)).toEqual([
      'assistant/chunk', 'llm/retry', 'llm/retry-started', 'assistant/chunk', 'llm/retry', 'llm/retry-started',
      'assistant/chunk', 'assistant/chunk', 'assistant/chunk', 'assistant/chunk', 'assistant/message', 'step/end', 'turn/end',
    ])
    expect(w.ofType('request/header')).toHaveLength(1) // no epoch change: no header before a transient retry
  })

  it('FAULT-16: the transient budget is per step and provider; exhausted, the failure ends the turn', async () => {
    const w = world({ conversation: [fail({ message: 'rate limited', code: 'RATE_LIMIT' }), fail({ message: 'rate limited', code: 'RATE_LIMIT' })], agent: { retry: { maxRetries: 1 } } })
    const outcome = await w.agent.runTurn(prompt('go'))
    expect(outcome.reason).toEqual({ kind: 'error', error: { message: 'rate limited', code: 'RATE_LIMIT' } })
    expect(w.ofType('llm/retry')).toHaveLength(1)
  })

  it('FAULT-16: its budget is independent of overflow recovery in the same step (INV-35)', async () => {
    const w = await historyThenTurn({
      makeEngine: withEngine(), compaction: [SUMMARY],
      turn2: [fail(OVERFLOW), fail({ message: 'temporary provider outage', code: 'SERVER' }), say('ok')],
    })
    const outcome = await w.agent.runTurn(prompt('Fix it.'))
    expect(outcome.reason).toEqual({ kind: 'completed' })
    expect(lastTurn(w).slice(3, 12)).toEqual([
      'assistant/chunk', 'compaction/start', 'compaction/summary', 'user/message', 'compaction/end', 'request/header',
      'assistant/chunk', 'llm/retry', 'llm/retry-started',
    ])
    expect(w.ofType('llm/retry').map((r) => [r.data.retry, r.data.failure.code])).toEqual([[1, 'SERVER']])
  })

  it('FAULT-17: a middleware that throws around the request is not offered to recovery; the turn ends {kind:"error"}', async () => {
    const w = world({ conversation: [say('never')] })
    w.runtime.use(() => { throw new Error('middleware exploded') })
    const outcome = await w.agent.runTurn(prompt('go'))
    expect(outcome.reason).toEqual({ kind: 'error', error: { message: 'middleware exploded', code: 'UNKNOWN' } })
    expect(w.types(4)).toEqual(['request/header', 'request/context', 'step/end', 'turn/end'])
    expect(w.ofType('assistant/chunk')).toHaveLength(0)
    expect(w.ofType('llm/retry')).toHaveLength(0)
  })
})
