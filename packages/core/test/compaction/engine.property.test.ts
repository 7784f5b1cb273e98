/**
 * Seeded property test of the engine: random sessions (user turns with images, parallel tool calls, huge tool
 * results, random windows and policies, random summarizer outcomes) driven by a minimal loop that calls the
 * pre-step listener before every step, overflow compaction at random steps and manual compaction between
 * turns. Properties: every engine append passes §1 validation (the EventLog would throw otherwise), INV-10 …
 * INV-19 hold on the whole log, tool pairing stays balanced, the lock is free at the end, the pre-step never
 * throws, and the other entry points fail only with the engine's documented error classes.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { LlmRuntime } from '../../src/adapter/runtime.ts'
import { ScriptedAdapter, type ScriptedReply } from '../../src/adapter/scripted.ts'
import { CompactionEngine } from '../../src/compaction/engine.ts'
import { CompactionConvergenceError, CompactionError, ManualCompactionError } from '../../src/compaction/errors.ts'
import { EventLog } from '../../src/log/event-log.ts'
import type { EventDraft } from '../../src/log/events.ts'
import type { ContentBlock, ToolSchema } from '../../src/log/llm.ts'
import { resolveCompactionConfig } from '../../src/policy/config.ts'
import { resolvePruneConfig } from '../../src/prune/config.ts'
import { decideHeader } from '../../src/request/header.ts'
import { fcParams } from '../support/seed.ts'
import { bracketViolations } from './support/invariants.ts'
import { admission } from './support/bench.ts'

type Outcome = 'ok' | 'server' | 'offload1' | 'offload3' | 'huge' | 'empty'
interface StepScript { calls: Array<{ chars: number; images: number }> }
interface TurnScript { userChars: number; userImages: number; steps: StepScript[]; overflowAfterStep: number | null; manualAfter: boolean }
interface Scenario {
  window: number
  thresholdRatio: number
  compactionRetries: number
  pruner: boolean
  inputTokens: number[]
  outcomes: Outcome[]
  turns: TurnScript[]
}

const stepArb: fc.Arbitrary<StepScript> = fc.record({
  calls: fc.array(fc.record({ chars: fc.oneof(fc.integer({ min: 10, max: 400 }), fc.integer({ min: 5000, max: 20_000 })), images: fc.integer({ min: 0, max: 2 }) }), { maxLength: 3 }),
})
const turnArb: fc.Arbitrary<TurnScript> = fc.record({
  userChars: fc.integer({ min: 5, max: 3000 }),
  userImages: fc.integer({ min: 0, max: 2 }),
  steps: fc.array(stepArb, { minLength: 1, maxLength: 4 }),
  overflowAfterStep: fc.option(fc.nat({ max: 3 }), { nil: null }),
  manualAfter: fc.boolean(),
})
const scenarioArb: fc.Arbitrary<Scenario> = fc.record({
  window: fc.integer({ min: 1500, max: 8000 }),
  thresholdRatio: fc.constantFrom(0.5, 0.8),
  compactionRetries: fc.integer({ min: 0, max: 2 }),
  pruner: fc.boolean(),
  inputTokens: fc.array(fc.nat({ max: 6000 }), { minLength: 1, maxLength: 8 }),
  outcomes: fc.array(fc.constantFrom<Outcome>('ok', 'ok', 'ok', 'server', 'offload1', 'offload3', 'huge', 'empty'), { minLength: 1, maxLength: 8 }),
  turns: fc.array(turnArb, { minLength: 1, maxLength: 4 }),
})

const TOOL: ToolSchema = { name: 'read', description: 'Read a file.', parameters: { type: 'object' } }

function image(n: number): ContentBlock {
  return { type: 'image', attachment: { attachmentId: `sha256:${n.toString(16).padStart(64, '0')}`, mediaType: 'image/png', bytes: 100, width: 8, height: 8, name: `img-${n}.png` } }
}

function reply(outcome: Outcome): ScriptedReply {
  switch (outcome) {
    case 'ok': return { kind: 'reply', blocks: [{ type: 'reasoning', text: 'r' }, { type: 'text', text: 'Summary.' }] }
    case 'server': return { kind: 'fail', failure: { message: 'down', code: 'SERVER' } }
    case 'offload1': return { kind: 'fail', failure: { message: 'images', code: 'IMAGE_OFFLOAD_REQUIRED', offloadImages: 1 } }
    case 'offload3': return { kind: 'fail', failure: { message: 'images', code: 'IMAGE_OFFLOAD_REQUIRED', offloadImages: 3 } }
    case 'huge': return { kind: 'reply', blocks: [{ type: 'text', text: 'h'.repeat(60_000) }] }
    case 'empty': return { kind: 'reply', blocks: [] }
  }
}

const EXPECTED_FAILURES = [CompactionError, CompactionConvergenceError, ManualCompactionError]

async function drive(s: Scenario): Promise<{ log: EventLog; unexpected: unknown[]; requests: ScriptedAdapter['requests'] }> {
  const log = new EventLog({ dialect: 'seed' })
  const adapter = new ScriptedAdapter({
    routes: [{ provider: 'mock', model: 'mock-x', contextWindow: s.window, imageTokens: 85 }],
    compaction: (_o, i) => reply(s.outcomes[i % s.outcomes.length] ?? 'ok'),
  })
  const runtime = new LlmRuntime()
  runtime.registerAdapter('mock', adapter)
  let now = 1_700_000_000_000
  let ids = 0
  const engine = new CompactionEngine({
    log, runtime,
    policy: resolveCompactionConfig({ thresholdRatio: s.thresholdRatio, compactionRetries: s.compactionRetries }),
    clock: () => (now += 5),
    newCompactionId: () => `cmp-${++ids}`,
    newMessageId: () => `ck-${++ids}`,
    ...(s.pruner ? { pruner: resolvePruneConfig(undefined) } : {}),
  })
  const unexpected: unknown[] = []
  const guard = async (p: () => Promise<unknown>): Promise<void> => {
    try {
      await p()
    } catch (err) {
      if (!EXPECTED_FAILURES.some((c) => err instanceof c)) unexpected.push(err)
    }
  }
  const append = (d: EventDraft): number => log.append({ ...d, time: (now += 5) } as EventDraft).seq
  let loggedHeader = false
  let usage = 0
  let imageNo = 0
  const header = { config: { provider: 'mock', model: 'mock-x' }, tools: [TOOL] }
  for (const [t, turn] of s.turns.entries()) {
    const n = t + 1
    append({ time: 0, type: 'turn/start', data: { turn: n } })
    for (const [k, step] of turn.steps.entries()) {
      const stepNo = k + 1
      await engine.preStep() // §3.9: never throws
      append({ time: 0, type: 'step/start', data: { turn: n, step: stepNo } })
      if (log.nodes.length === 0) {
        append({ time: 0, type: 'system/message', data: { id: 'sys' as never, role: 'system', content: [{ type: 'text', text: 'You are careful.' }], source: { kind: 'plugin', plugin: 'system-prompt' } }, surfaceOp: 'append' })
      }
      if (k === 0) {
        const content: ContentBlock[] = [{ type: 'text', text: 'u'.repeat(turn.userChars) }]
        for (let i = 0; i < turn.userImages; i++) content.push(image(++imageNo))
        append({ time: 0, type: 'user/message', data: { id: `u-${n}` as never, role: 'user', content, source: { kind: 'user' } }, surfaceOp: 'append' })
      }
      const h = log.state.header
      const decided = decideHeader({ header, previous: h?.header, epoch: log.state.seriesEpoch, epochAtHeader: h?.epochAtHeader ?? 0, loggedThisInstance: loggedHeader, dialect: 'seed' })
      if (decided !== null) append({ time: 0, type: 'request/header', data: decided })
      if (!loggedHeader) append({ time: 0, type: 'request/context', data: { provider: 'mock', model: 'mock-x', contextWindow: s.window, imageTokens: 85 } })
      loggedHeader = true
      const last = k === turn.steps.length - 1
      const calls = last ? [] : step.calls
      const content: ContentBlock[] = calls.length === 0
        ? [{ type: 'text', text: `answer ${n}.${stepNo}` }]
        : calls.map((_c, i) => ({ type: 'tool-call', id: `call-${n}-${stepNo}-${i}` as never, name: 'read', arguments: '{}' }))
      const inputTokens = s.inputTokens[usage++ % s.inputTokens.length] ?? 0
      append({ time: 0, type: 'assistant/message', data: { turn: n, step: stepNo, message: { id: `a-${n}-${stepNo}` as never, role: 'assistant', content, source: { kind: 'model', provider: 'mock', model: 'mock-x' } }, usage: { inputTokens, outputTokens: 10 } }, surfaceOp: 'append' })
      for (const [i, call] of calls.entries()) {
        const callId = `call-${n}-${stepNo}-${i}` as never
        const callSeq = append({ time: 0, type: 'tool/call', data: { turn: n, step: stepNo, callId, name: 'read', arguments: '{}' } })
        const inner: ContentBlock[] = [{ type: 'text', text: 'r'.repeat(call.chars) }]
        for (let j = 0; j < call.images; j++) inner.push(image(++imageNo))
        append({
          time: 0, type: 'tool/result', surfaceOp: 'append', sourceEventSeqs: [callSeq as never],
          data: { turn: n, step: stepNo, message: { id: `t-${callId}` as never, role: 'user', content: [{ type: 'tool-result', toolCallId: callId, content: inner, isError: false }], source: { kind: 'tool', callId } } },
        })
      }
      if (turn.overflowAfterStep === k) await guard(() => engine.compactIfNeeded('context-overflow', new AbortController().signal))
      append({ time: 0, type: 'step/end', data: { turn: n, step: stepNo } })
    }
    append({ time: 0, type: 'turn/end', data: { turn: n, reason: { kind: 'completed' } } })
    if (turn.manualAfter) await guard(() => engine.compactNow({ admission: admission() }))
  }
  return { log, unexpected, requests: adapter.requests }
}

describe('compaction engine properties (seeded)', () => {
  it('random sessions keep §1 validation, INV-10 … INV-19, balanced pairing and a free lock', async () => {
    await fc.assert(fc.asyncProperty(scenarioArb, async (s) => {
      const { log, unexpected, requests } = await drive(s)
      expect(unexpected).toEqual([])
      expect(bracketViolations(log.events)).toEqual([])
      expect(log.state.surface.firstNegativePosition).toBe(-1)
      expect(log.state.lock.state).toBe('free')
      for (const r of requests) expect(r).toMatchObject({ purpose: 'compaction', maxTokens: 8192, tools: [TOOL] })
    }), fcParams({ numRuns: 100 }))
  }, 120_000)
})
