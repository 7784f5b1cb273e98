/**
 * Seeded property test of the loop with the real engine (issue 4 "Done when"). Properties, for random
 * sessions — user turns (some with images), tool calls incl. parallel calls, huge results (some with
 * images), conversation faults (overflow, image offload with random k, transient), summary faults, random
 * windows, image prices and policies, with and without the pruner:
 *
 * 1. every turn resolves: the loop never writes an event the validating EventLog rejects (§1), and the
 *    whole log replays through a fresh EventLog;
 * 2. the final surface has balanced tool pairing: never negative (INV-08), balance 0 at the end;
 * 3. no live compaction lock at quiescence (INV-19) and no turn left open;
 * 4. the §10.5 reconstruction theorem holds for every captured conversation request (INV-43);
 * 5. no `llm/retry` for a protocol code (INV-35).
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { ScriptedReply } from '../../src/adapter/scripted.ts'
import type { BasicCompactionConfig } from '../../src/policy/config.ts'
import type { ContentBlock, LlmFailure, TokenUsage } from '../../src/log/llm.ts'
import { EventLog } from '../../src/log/event-log.ts'
import type { ToolResultPruneConfig } from '../../src/prune/config.ts'
import { fcParams } from '../support/seed.ts'
import { withEngine } from './engine.ts'
import { image, world, type World } from './harness.ts'
import { reconstructionViolations } from './reconstruction.ts'

type Fault =
  | { kind: 'overflow' }
  | { kind: 'offload'; k: number }
  | { kind: 'transient'; code: 'SERVER' | 'RATE_LIMIT' | 'TIMEOUT' | 'TRANSPORT' | 'EMPTY_RESPONSE' }

interface ToolPlan { size: number; images: number }
interface StepPlan {
  faults: Fault[]
  reply: { kind: 'text'; size: number } | { kind: 'tools'; calls: ToolPlan[] }
  usage: TokenUsage | null
}
interface TurnPlan { text: number; images: number; steps: StepPlan[] }
interface SessionPlan {
  window: number
  imageTokens: number | null
  config: BasicCompactionConfig
  pruner: ToolResultPruneConfig | null
  summaryFails: boolean[]
  turns: TurnPlan[]
}

const faultArb: fc.Arbitrary<Fault> = fc.oneof(
  fc.constant<Fault>({ kind: 'overflow' }),
  fc.integer({ min: 1, max: 3 }).map((k): Fault => ({ kind: 'offload', k })),
  fc.constantFrom('SERVER', 'RATE_LIMIT', 'TIMEOUT', 'TRANSPORT', 'EMPTY_RESPONSE').map((code): Fault => ({ kind: 'transient', code })),
)
const sizeArb = fc.oneof({ weight: 4, arbitrary: fc.integer({ min: 1, max: 800 }) }, { weight: 1, arbitrary: fc.integer({ min: 4000, max: 30_000 }) })
const stepArb: fc.Arbitrary<StepPlan> = fc.record({
  faults: fc.array(faultArb, { maxLength: 2 }),
  reply: fc.oneof(
    fc.record({ kind: fc.constant('text' as const), size: fc.integer({ min: 1, max: 3000 }) }),
    fc.record({ kind: fc.constant('tools' as const), calls: fc.array(fc.record({ size: sizeArb, images: fc.integer({ min: 0, max: 2 }) }), { minLength: 1, maxLength: 3 }) }),
  ),
  usage: fc.option(fc.record({ inputTokens: fc.integer({ min: 0, max: 6000 }), outputTokens: fc.integer({ min: 0, max: 400 }) }), { nil: null }),
})
const configArb: fc.Arbitrary<BasicCompactionConfig> = fc.record({
  thresholdRatio: fc.integer({ min: 50, max: 95 }).map((p) => p / 100),
  retainShare: fc.integer({ min: 5, max: 60 }),
  compactionRetries: fc.integer({ min: 0, max: 2 }),
  maxOverflowRetries: fc.integer({ min: 0, max: 2 }),
}).map(({ thresholdRatio, retainShare, compactionRetries, maxOverflowRetries }) => ({
  thresholdRatio, retainRatio: Math.floor(thresholdRatio * retainShare) / 100, compactionRetries, maxOverflowRetries,
}))
const prunerArb: fc.Arbitrary<ToolResultPruneConfig | null> = fc.option(
  fc.record({ headChars: fc.integer({ min: 0, max: 2000 }), tailChars: fc.integer({ min: 0, max: 1000 }), slack: fc.integer({ min: 0, max: 6000 }) })
    .map(({ headChars, tailChars, slack }) => ({ headChars, tailChars, thresholdChars: headChars + tailChars + 43 + slack })),
  { nil: null },
)
const planArb: fc.Arbitrary<SessionPlan> = fc.record({
  window: fc.integer({ min: 800, max: 12_000 }),
  imageTokens: fc.option(fc.integer({ min: 1, max: 400 }), { nil: null }),
  config: configArb,
  pruner: prunerArb,
  summaryFails: fc.array(fc.boolean(), { maxLength: 6 }),
  turns: fc.array(fc.record({ text: fc.integer({ min: 1, max: 1500 }), images: fc.integer({ min: 0, max: 2 }), steps: fc.array(stepArb, { minLength: 1, maxLength: 3 }) }), { minLength: 1, maxLength: 5 }),
})

const filler = (n: number, seed: string): string => `${seed} `.repeat(Math.ceil(n / (seed.length + 1))).slice(0, n)
const images = (n: number, tag: string): ContentBlock[] => Array.from({ length: n }, (_, i) => image(String((tag.length + i) % 10), `${tag}-${i}.png`))

function failureOf(fault: Fault): LlmFailure {
  switch (fault.kind) {
    case 'overflow': return { message: 'request exceeds the context window', code: 'CONTEXT_WINDOW_EXCEEDED' }
    case 'offload': return { message: 'too many images', code: 'IMAGE_OFFLOAD_REQUIRED', offloadImages: fault.k }
    case 'transient': return { message: 'transient provider failure', code: fault.code }
  }
}

/** Drives `plan` through the loop; the adapter answers by (turn, step, attempt) read from the log. */
async function drive(plan: SessionPlan): Promise<World> {
  const attempts = new Map<string, number>()
  let w: World | undefined
  let summaries = 0
  const conversation = (): ScriptedReply => {
    const open = w?.log.state.openStep
    if (open === null || open === undefined) throw new Error('a conversation request outside a step')
    const key = `${open.turn}/${open.step}`
    const attempt = attempts.get(key) ?? 0
    attempts.set(key, attempt + 1)
    const step = plan.turns[open.turn - 1]?.steps[open.step - 1]
    const usage = step?.usage ?? undefined
    if (step === undefined) return { kind: 'reply', blocks: [{ type: 'text', text: 'done' }] }
    const fault = step.faults[attempt]
    if (fault !== undefined) return { kind: 'fail', failure: failureOf(fault), delivery: attempt % 2 === 0 ? 'thrown' : 'in-band' }
    const blocks: ContentBlock[] = step.reply.kind === 'text'
      ? [{ type: 'text', text: filler(step.reply.size, 'answer') }]
      : step.reply.calls.map((_, k) => ({ type: 'tool-call', id: `c${key}-${k}` as never, name: 'read', arguments: JSON.stringify({ path: `f${k}.ts` }) }))
    return usage !== undefined ? { kind: 'reply', blocks, usage } : { kind: 'reply', blocks }
  }
  w = world({
    routes: [{ provider: 'mock', model: 'mock-4k', contextWindow: plan.window, ...(plan.imageTokens !== null ? { imageTokens: plan.imageTokens } : {}) }],
    config: plan.config,
    makeEngine: withEngine(plan.pruner !== null ? { pruner: plan.pruner } : {}),
    conversation,
    compaction: () => plan.summaryFails[summaries++] === true
      ? { kind: 'fail', failure: { message: 'summarizer unavailable', code: 'SERVER' } }
      : { kind: 'reply', blocks: [{ type: 'text', text: '## Primary Request and Intent\n- continue' }] },
    executeTool: async (call) => {
      const [turn, step, k] = call.callId.slice(1).split(/[/-]/).map(Number)
      const stepPlan = plan.turns[(turn ?? 1) - 1]?.steps[(step ?? 1) - 1]
      const tool = stepPlan?.reply.kind === 'tools' ? stepPlan.reply.calls[k ?? 0] : undefined
      return { content: [{ type: 'text', text: filler(tool?.size ?? 1, 'out') }, ...images(tool?.images ?? 0, call.callId)] }
    },
  })
  for (const [t, turn] of plan.turns.entries()) {
    await w.agent.runTurn({ content: [{ type: 'text', text: filler(turn.text, 'ask') }, ...images(turn.images, `u${t}`)] })
  }
  return w
}

describe('agent loop properties', () => {
  it('random sessions never produce a rejected event and end with balanced tool pairing', async () => {
    await fc.assert(fc.asyncProperty(planArb, async (plan) => {
      const w = await drive(plan)
      const log = w.log
      expect(() => EventLog.fromEvents(log.events, { dialect: 'seed' })).not.toThrow()
      expect(log.state.surface.firstNegativePosition).toBe(-1)
      expect(log.state.surface.balanceAt(log.nodes.length)).toBe(0)
      expect(log.state.openTurn).toBeNull()
      expect(log.state.lock.state).toBe('free')
      expect(log.state.lastTurn).toBe(plan.turns.length)
      expect(reconstructionViolations(log.events, w.captures)).toEqual([])
      expect(w.ofType('llm/retry').filter((r) => ['CONTEXT_WINDOW_EXCEEDED', 'IMAGE_OFFLOAD_REQUIRED'].includes(r.data.failure.code))).toEqual([])
    }), fcParams({ numRuns: 60 }))
  }, 60_000)
})
