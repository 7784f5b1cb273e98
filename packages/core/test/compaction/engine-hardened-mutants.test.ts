/**
 * Engine paths of the hardened profile (docs/hardened.md) the rule tests leave partly unjudged (survivors of the
 * mutation run, `pnpm mutate`): HARD-1's back-off message and which errors count as a failure; HARD-2's summary
 * route lookup (agent-route fallback, signals, `deferredTo`, compactNow); HARD-5's projection in the pressure path;
 * HARD-6's kept prompt; HARD-8's calibration without target or evidence and its `request/context` notes at the
 * edges; and the signal and read-only path resolver the engine hands on (§3.5 step 4, §6.5). Every expectation is
 * written out by hand.
 */
import { appendixBTime } from '@compaction-sim/fixtures'
import { describe, expect, it } from 'vitest'
import { CompactionEngine } from '../../src/compaction/engine.ts'
import { SummarizerError } from '../../src/compaction/errors.ts'
import type { SummaryInput, SummaryOutput } from '../../src/compaction/summarizer.ts'
import { resolveCompactionConfig } from '../../src/policy/config.ts'
import { resolvePruneConfig } from '../../src/prune/config.ts'
import type { EventDraft } from '../../src/log/events.ts'
import { assistant, logOf, marker, result, user } from '../support/events.ts'
import type { SessionEvent } from '../../src/log/events.ts'
import { admission, bench, BETWEEN_TURNS_2_3, PRE_STEP_3_2, rejectionOf, ROUTE, SHORT_SUMMARY, summaryReply } from './support/bench.ts'

const T = 1_700_000_000_000
const ok: SummaryOutput = { summary: [{ type: 'text', text: SHORT_SUMMARY }], provider: 'template', model: 'v1' }
const failing = { summarize: async (): Promise<SummaryOutput> => { throw new SummarizerError({ code: 'UNKNOWN', message: 'route down' }, {}) } }
const starts = (b: ReturnType<typeof bench>): number => b.log.events.filter((e) => e.type === 'compaction/start').length
const backoffInfos = (b: ReturnType<typeof bench>): string[] => b.infos.filter((m) => m.includes('hardened back-off'))

describe('HARD-1 back-off (hardening.failureBackoff)', () => {
  it('says why a pre-step is skipped: failures, pre-steps of the wait, growth of minGrowthTokens', async () => {
    const config = { compactionRetries: 0, hardening: { failureBackoff: { baseSteps: 0 } } } // minGrowthTokens 512 by default
    const b = bench({ prefix: PRE_STEP_3_2, config, engine: { summarizer: failing } })
    await b.engine.preStep()
    expect(starts(b)).toBe(1)
    await b.engine.preStep()
    await b.engine.preStep()
    expect(starts(b)).toBe(1)
    expect(backoffInfos(b)).toEqual([
      'compaction (step pressure): hardened back-off after 1 failed attempt(s): pre-step 1 of 0, surface +0 tokens of 512; skipped',
      'compaction (step pressure): hardened back-off after 1 failed attempt(s): pre-step 2 of 0, surface +0 tokens of 512; skipped',
    ])
  })

  it('names a replaceGeneration move when the wait has not elapsed yet', async () => {
    let fail = true
    const switchable = { summarize: async (): Promise<SummaryOutput> => { if (fail) throw new SummarizerError({ code: 'UNKNOWN', message: 'down' }, {}); return ok } }
    const config = { compactionRetries: 0, hardening: { failureBackoff: { minGrowthTokens: 1_000_000, baseSteps: 2, maxSteps: 2 } } }
    const b = bench({ prefix: PRE_STEP_3_2, config, engine: { summarizer: switchable } })
    await b.engine.preStep()
    expect(starts(b)).toBe(1)
    fail = false
    expect(await b.engine.compactIfNeeded('context-overflow')).not.toBeNull() // moves replaceGeneration
    expect(starts(b)).toBe(2)
    await b.engine.preStep() // pre-step 1 of 2: still waiting though the generation moved
    expect(starts(b)).toBe(2)
    const infos = backoffInfos(b)
    expect(infos).toHaveLength(1)
    expect(infos[0]).toMatch(/^compaction \(step pressure\): hardened back-off after 1 failed attempt\(s\): pre-step 1 of 2, surface \+-?\d+ tokens of 1000000, replaceGeneration moved; skipped$/)
  })

  it('a busy pass (a live lock) is not a failure: once the lock is free the next pre-step tries', async () => {
    const config = { compactionRetries: 0, hardening: { failureBackoff: { baseSteps: 0 } } }
    const b = bench({ prefix: PRE_STEP_3_2, config, engine: { summarizer: failing } })
    b.log.append({ time: T, type: 'compaction/start', data: { compactionId: 'cmp-orphan' as never, turn: 3 } })
    await b.engine.preStep()
    expect(b.warnings).toHaveLength(1)
    expect(b.warnings[0]).toMatch(/^step compaction failed: .*cmp-orphan.*; continuing the turn$/)
    b.log.append({ time: T, type: 'compaction/end', data: { compactionId: 'cmp-orphan' as never, turn: 3, error: 'abandoned' } })
    await b.engine.preStep()
    expect(starts(b)).toBe(2) // the orphan and this pass's bracket
    expect(backoffInfos(b)).toEqual([])
  })
})

const header: EventDraft<'request/header'> = { time: T, type: 'request/header', data: { header: { config: { provider: 'mock', model: 'mock-4k' } }, reason: 'initial' } }
const context = (contextWindow: number, extra: Record<string, unknown> = {}): EventDraft<'request/context'> =>
  ({ time: T, type: 'request/context', data: { provider: 'mock', model: 'mock-4k', contextWindow, ...extra } })
const withUsage = (d: EventDraft<'assistant/message'>, inputTokens: number): EventDraft<'assistant/message'> =>
  ({ ...d, data: { ...d.data, usage: { inputTokens, outputTokens: 10 } } })

/**
 * Turn 1 step 1 on mock/mock-4k, window 4000 (no excess): the 2000-character user text prices 500 + 4 + 4 = 508; the
 * provider counted `inputTokens` for that request (usage at seq 5).
 */
function step(inputTokens: number, ...more: EventDraft[]): EventDraft[] {
  return [
    marker('turn/start'), marker('step/start'), user('a'.repeat(2000)), header, context(4000),
    withUsage(assistant(['c1']), inputTokens), result('c1', 'b'.repeat(1200)), marker('step/end'), ...more,
  ]
}

describe('HARD-8 request/context notes (hardening.capacitySanity)', () => {
  const on = { hardening: { capacitySanity: true } }

  it('an observed factor of exactly 1 (508 counted for 508 estimated) is no note and no news', () => {
    const b = bench({ events: logOf(...step(508)).events, config: on })
    expect(b.engine.routeContextNotes('mock', 'mock-4k')).toEqual({})
    expect(b.infos).toEqual([])
    expect(b.warnings).toEqual([])
  })

  it('a factor the log carried falls back to 1: no note, and info says 3 → 1', () => {
    const b = bench({ events: logOf(...step(508, context(4000, { calibration: 3 }))).events, config: on })
    expect(b.engine.routeContextNotes('mock', 'mock-4k')).toEqual({})
    expect(b.infos).toEqual(['capacity (hardened HARD-8): calibration of mock/mock-4k 3 → 1 (provider 508 tokens / estimate 508, usage at seq 5)'])
  })

  it('a factor logged for another model is not this route\'s: info says 1 → 3', () => {
    const other = { time: T, type: 'request/context', data: { provider: 'mock', model: 'mock-8k', contextWindow: 8000, calibration: 3 } } as EventDraft<'request/context'>
    const b = bench({ events: logOf(...step(1524, other)).events, config: on })
    expect(b.engine.routeContextNotes('mock', 'mock-4k')).toEqual({ calibration: 3 })
    expect(b.infos).toEqual(['capacity (hardened HARD-8): calibration of mock/mock-4k 1 → 3 (provider 1524 tokens / estimate 508, usage at seq 5)'])
  })

  it('a factor logged for another provider is not this route\'s: info says 1 → 3', () => {
    const other = { time: T, type: 'request/context', data: { provider: 'other', model: 'mock-4k', contextWindow: 4000, calibration: 3 } } as EventDraft<'request/context'>
    const b = bench({ events: logOf(...step(1524, other)).events, config: on })
    expect(b.engine.routeContextNotes('mock', 'mock-4k')).toEqual({ calibration: 3 })
    expect(b.infos).toEqual(['capacity (hardened HARD-8): calibration of mock/mock-4k 1 → 3 (provider 1524 tokens / estimate 508, usage at seq 5)'])
  })

  it('the same factor logged for this route is no news', () => {
    const b = bench({ events: logOf(...step(1524, context(4000, { calibration: 3 }))).events, config: on })
    expect(b.engine.routeContextNotes('mock', 'mock-4k')).toEqual({ calibration: 3 })
    expect(b.infos).toEqual([])
  })

  it('with calibrate: false there is neither a note nor an info line, whatever the evidence', () => {
    const b = bench({ events: logOf(...step(1524)).events, config: { hardening: { capacitySanity: { calibrate: false } } } })
    expect(b.engine.routeContextNotes('mock', 'mock-4k')).toEqual({})
    expect(b.infos).toEqual([])
    const logged = bench({ events: logOf(...step(1524, context(4000, { calibration: 3 }))).events, config: { hardening: { capacitySanity: { calibrate: false } } } })
    expect(logged.engine.routeContextNotes('mock', 'mock-4k')).toEqual({}) // a factor in the log is no reason to report a change
    expect(logged.infos).toEqual([])
  })
})

describe('HARD-5 in the pressure path (hardening.oversizedUserText)', () => {
  // A 10,000-character paste: its text block prices 2500 + 4 = 2504 > floor(0.5 · 4000) = 2000; no request carried it yet.
  const paste = (): EventDraft[] => [marker('turn/start'), marker('step/start'), user('p'.repeat(10_000)), header, context(4000)]
  const on = { hardening: { oversizedUserText: true } }

  it('projects the paste before measuring, though the pass is below pressure (2508 < 3200)', async () => {
    const b = bench({ events: logOf(...paste()).events, config: on })
    expect(await b.engine.compactIfNeeded('pressure')).toBeNull()
    expect(b.appended().map((e) => [e.type, e.data])).toEqual([
      ['text/offload', { seq: 2, blockIndex: 0, tokens: 2504, bound: 2000, path: expect.stringMatching(/^user-text\/.+\.0\.txt$/) }],
    ])
  })

  it('faithful writes nothing', async () => {
    const b = bench({ events: logOf(...paste()).events })
    expect(await b.engine.compactIfNeeded('pressure')).toBeNull()
    expect(b.written()).toEqual([])
  })

  it('not while a bracket is live: the pass is busy and nothing is written', async () => {
    const orphan: EventDraft = { time: T, type: 'compaction/start', data: { compactionId: 'cmp-orphan' as never, turn: 1 } }
    const b = bench({ events: logOf(...paste(), orphan).events, config: on })
    expect(await rejectionOf(b.engine.compactIfNeeded('pressure'))).toMatchObject({ name: 'CompactionBusyError' })
    expect(b.written()).toEqual([])
  })
})

describe('HARD-2 summary route lookup (hardening.summaryRoom)', () => {
  const ROOM = { hardening: { summaryRoom: true } }
  /** The 3,600-token route of hardened-room.test.ts: span 3 … 23 (P_route 1,439 + 524 of tools, head and instruction) fits, 3 … 28 (3,676) does not. */
  const narrow = [{ ...ROUTE, contextWindow: 3600 }]
  const summaryOf = (b: ReturnType<typeof bench>): SessionEvent<'compaction/summary'> | undefined =>
    b.appended().find((e): e is SessionEvent<'compaction/summary'> => e.type === 'compaction/summary')

  it('overflow records the faithful span end it deferred to (deferredTo 42)', async () => {
    const b = bench({ prefix: PRE_STEP_3_2, config: ROOM, routes: narrow, compaction: [summaryReply()] })
    await b.engine.compactIfNeeded('context-overflow')
    const summary = summaryOf(b)
    expect(summary?.data.shadowedSeqs).toEqual([3, 10, 15, 23])
    expect(summary?.data.maxTokens).toBe(3600 - 1963)
    expect(summary?.data.summaryRoom).toEqual({ configuredMaxTokens: 8192, promptTokens: 1963, contextWindow: 3600, deferredTo: 42 })
  })

  it('compactNow applies the room: the span shrinks to 3 … 23 and records deferredTo 28 (the faithful idle span\'s end)', async () => {
    const b = bench({ prefix: BETWEEN_TURNS_2_3, config: ROOM, routes: narrow, compaction: [summaryReply()] })
    const r = await b.engine.compactNow({ admission: admission() })
    expect(r?.shadowedSeqs).toEqual([3, 10, 15, 23])
    const summary = summaryOf(b)
    expect(summary?.data.maxTokens).toBe(3600 - 1963)
    expect(summary?.data.summaryRoom).toEqual({ configuredMaxTokens: 8192, promptTokens: 1963, contextWindow: 3600, deferredTo: 28 })
  })

  it('compactNow on a roomy route clamps the cap and records the room without deferredTo', async () => {
    const b = bench({ prefix: BETWEEN_TURNS_2_3, config: ROOM, compaction: [summaryReply()] })
    await b.engine.compactNow({ admission: admission() })
    const summary = summaryOf(b)
    const room = summary?.data.summaryRoom
    expect(room).toMatchObject({ configuredMaxTokens: 8192, contextWindow: 4000 })
    expect(room !== undefined && 'deferredTo' in room).toBe(false)
    expect(summary?.data.maxTokens).toBe(4000 - (room?.promptTokens ?? Number.NaN))
  })

  it('faithful compactNow looks nothing up and records no room', async () => {
    const b = bench({ prefix: BETWEEN_TURNS_2_3, compaction: [summaryReply()] })
    let lookups = 0
    const real = b.runtime.resolveModelInfo.bind(b.runtime)
    b.runtime.resolveModelInfo = async (provider, model, signal) => { lookups++; return real(provider, model, signal) }
    await b.engine.compactNow({ admission: admission() })
    expect(lookups).toBe(0)
    const summary = summaryOf(b)
    expect(summary?.data.maxTokens).toBe(8192)
    expect(summary !== undefined && 'summaryRoom' in summary.data).toBe(false)
  })

  it('compactNow: the agent cancelling during the lookup is `cancelled`, nothing written (lookup answers)', async () => {
    const b = bench({ prefix: BETWEEN_TURNS_2_3, config: ROOM, compaction: [summaryReply()] })
    const a = admission()
    const real = b.runtime.resolveModelInfo.bind(b.runtime)
    b.runtime.resolveModelInfo = async (provider, model, signal) => {
      a.controller.abort(new Error('agent needs the session'))
      return real(provider, model, signal)
    }
    const err = await rejectionOf(b.engine.compactNow({ admission: a }))
    expect(err).toMatchObject({ name: 'ManualCompactionError', code: 'cancelled', message: 'cancelled: agent needs the session' })
    expect(b.written()).toEqual([])
    expect([a.reserved, a.released]).toEqual([1, 1])
  })

  it('compactNow: the agent cancelling during the lookup is `cancelled` when the lookup rejects too', async () => {
    const b = bench({ prefix: BETWEEN_TURNS_2_3, config: ROOM, compaction: [summaryReply()] })
    const a = admission()
    b.runtime.resolveModelInfo = async () => {
      a.controller.abort(new Error('agent needs the session'))
      throw new Error('lookup aborted')
    }
    const err = await rejectionOf(b.engine.compactNow({ admission: a }))
    expect(err).toMatchObject({ name: 'ManualCompactionError', code: 'cancelled', message: 'cancelled: agent needs the session' })
    expect(b.written()).toEqual([])
  })

  it('compactRegion passes its signal to the lookup: aborted there, the lookup error is thrown and nothing is written', async () => {
    const b = bench({ prefix: PRE_STEP_3_2, config: ROOM, compaction: [summaryReply()] })
    const controller = new AbortController()
    b.runtime.resolveModelInfo = async () => {
      controller.abort(new Error('caller gave up'))
      throw new Error('lookup aborted')
    }
    const nodes = b.log.state.surface.nodes
    const err = await rejectionOf(b.engine.compactRegion(nodes[1] as number, nodes[4] as number, controller.signal))
    expect(err).toMatchObject({ message: 'lookup aborted' })
    expect(b.written()).toEqual([])
    expect(b.infos).toEqual([])
  })
})

describe('HARD-6 in the engine (hardening.openTurnPrompt)', () => {
  // At pre-step 3.2 turn 3 is open (#40 turn/start) and its prompt is #42, the last node of the faithful span 3 … 42.
  it('pressure: faithful shadows the open turn\'s prompt #42; hardened keeps it (the older side 3 … 37)', async () => {
    const faithful = bench({ prefix: PRE_STEP_3_2, engine: { summarizer: { summarize: async () => ok } } })
    expect((await faithful.engine.compactIfNeeded('pressure'))?.shadowedSeqs).toEqual([3, 10, 15, 23, 28, 37, 42])
    const b = bench({ prefix: PRE_STEP_3_2, config: { hardening: { openTurnPrompt: true } }, engine: { summarizer: { summarize: async () => ok } } })
    expect((await b.engine.compactIfNeeded('pressure'))?.shadowedSeqs).toEqual([3, 10, 15, 23, 28, 37])
  })

  it('overflow recovery keeps it too', async () => {
    const b = bench({ prefix: PRE_STEP_3_2, config: { hardening: { openTurnPrompt: true } }, engine: { summarizer: { summarize: async () => ok } } })
    expect((await b.engine.compactIfNeeded('context-overflow'))?.shadowedSeqs).toEqual([3, 10, 15, 23, 28, 37])
  })
})

/** One closed turn without any request/header (no routed target): surface [#2 user (2000 chars), #3 assistant]. */
function headerlessIdle(): EventDraft[] {
  const reply: EventDraft<'assistant/message'> = {
    time: T, type: 'assistant/message', surfaceOp: 'append',
    data: { turn: 1, step: 1, message: { id: 'a1' as never, role: 'assistant', content: [{ type: 'text', text: 'ok' }], source: { kind: 'model', provider: 'mock', model: 'mock-4k' } } },
  }
  return [marker('turn/start'), marker('step/start'), user('h'.repeat(2000)), reply, marker('step/end'), marker('turn/end')]
}

describe('hardened rules on a log without a request/header', () => {
  it('HARD-2: compactNow falls back to the agent route for the summary route, with no tools in the prompt', async () => {
    const agentRoute = { provider: 'mock', model: 'mock-4k' }
    const b = bench({ events: logOf(...headerlessIdle()).events, config: { hardening: { summaryRoom: true } }, engine: { agentRoute } })
    const r = await b.engine.compactNow({ admission: admission() })
    expect(r?.shadowedSeqs).toEqual([2])
    const summary = b.appended().find((e): e is SessionEvent<'compaction/summary'> => e.type === 'compaction/summary')
    expect(summary?.data).toMatchObject({ provider: 'mock', model: 'mock-4k' })
    expect(summary?.data.summaryRoom).toMatchObject({ configuredMaxTokens: 8192, contextWindow: 4000 })
  })

  it('HARD-8: without a routed target pressure has nothing to calibrate and compacts nothing', async () => {
    const b = bench({ events: logOf(...headerlessIdle()).events, config: { hardening: { capacitySanity: true } } })
    expect(await b.engine.compactIfNeeded('pressure')).toBeNull()
    expect(b.written()).toEqual([])
  })

  it('HARD-8: before any request/context a route has no notes', () => {
    const b = bench({ events: logOf(...headerlessIdle()).events, config: { hardening: { capacitySanity: true } } })
    expect(b.engine.routeContextNotes('mock', 'mock-4k')).toEqual({})
    expect(b.infos).toEqual([])
    expect(b.warnings).toEqual([])
  })

  it('HARD-8: a routed target without any evidence is not scaled (no usage, no rejection)', async () => {
    const events = [marker('turn/start'), marker('step/start'), user('q'.repeat(2000)), header, context(4000)]
    const b = bench({ events: logOf(...events).events, config: { hardening: { capacitySanity: true } } })
    expect(b.meter.capacityEvidence('mock', 'mock-4k').calibration).toBeUndefined()
    expect(await b.engine.compactIfNeeded('pressure')).toBeNull() // 508 < 3200
    expect(b.written()).toEqual([])
  })
})

describe('cancellation reaches the pressure path\'s capacity lookup (§3.5 step 4)', () => {
  it('the caller\'s signal is handed to resolveModelInfo; without one none is', async () => {
    const b = bench({ prefix: PRE_STEP_3_2, engine: { summarizer: { summarize: async () => ok } } })
    const seen: (AbortSignal | undefined)[] = []
    const real = b.runtime.resolveModelInfo.bind(b.runtime)
    b.runtime.resolveModelInfo = async (provider, model, signal) => { seen.push(signal); return real(provider, model, signal) }
    const controller = new AbortController()
    await b.engine.compactIfNeeded('pressure', controller.signal)
    expect(seen).toEqual([controller.signal])
    const plain = bench({ prefix: PRE_STEP_3_2 })
    const none: (AbortSignal | undefined)[] = []
    plain.runtime.resolveModelInfo = async (provider, model, signal) => { none.push(signal); return real(provider, model, signal) }
    expect(await plain.engine.compactIfNeeded('context-overflow')).not.toBeNull() // overflow looks nothing up
    expect(none).toEqual([])
  })

  it('a caller abort during the lookup fails the pass with the lookup\'s error; nothing is written', async () => {
    const b = bench({ prefix: PRE_STEP_3_2 })
    const controller = new AbortController()
    b.runtime.resolveModelInfo = async (_provider, _model, signal) => {
      controller.abort(new Error('caller gave up'))
      if (signal?.aborted === true) throw new Error('lookup aborted')
      return { provider: 'mock', id: 'mock-4k', name: 'mock-4k', context: { contextWindow: 4000 }, imageTokens: 85 }
    }
    expect(await rejectionOf(b.engine.compactIfNeeded('pressure', controller.signal))).toMatchObject({ message: 'lookup aborted' })
    expect(b.written()).toEqual([])
  })
})

describe('the engine\'s read-only path resolver (§6.5)', () => {
  /** An engine over the bench's log that builds its own meter; its summarizer keeps the summary input. */
  function engineWith(b: ReturnType<typeof bench>, seen: { input: string }, readOnlyPath?: () => string): CompactionEngine {
    return new CompactionEngine({
      log: b.log, runtime: b.runtime, policy: resolveCompactionConfig({ compactionRetries: 0 }),
      clock: () => appendixBTime(b.log.length), newCompactionId: () => 'cmp-1', newMessageId: () => 'm-ck1',
      summarizer: { summarize: async (input: SummaryInput) => { seen.input = JSON.stringify(input.messages); return ok } },
      ...(readOnlyPath === undefined ? {} : { readOnlyPath }),
    })
  }

  it('names the offloaded screenshot of #28 by the configured resolver in the summary input, and its meter prices that', async () => {
    // #30 offloaded the screenshot of #28, which lies in the pressure span 3 … 42.
    const custom = bench({ prefix: PRE_STEP_3_2 })
    const seen = { input: '' }
    const r = await engineWith(custom, seen, () => 'x.png').compactIfNeeded('pressure')
    expect(r?.shadowedSeqs).toContain(28)
    expect(seen.input).toContain('x.png')
    expect(seen.input).not.toContain('attachments/')
    const harness = bench({ prefix: PRE_STEP_3_2 })
    const plain = { input: '' }
    const h = await engineWith(harness, plain).compactIfNeeded('pressure')
    expect(plain.input).toContain('attachments/')
    // 'x.png' is shorter than the harness path 'attachments/<12 hex>.<subtype>': the placeholder prices less.
    expect(r?.shadowedTokenCount).toBeLessThan(h?.shadowedTokenCount ?? 0)
  })
})

describe('HARD-2: the pressure path measures again after the summary route lookup', () => {
  /** A user message that lands while the lookup is in flight (a foreign append; the lock is not taken yet). */
  const late = (b: ReturnType<typeof bench>): void => {
    b.log.append({
      time: appendixBTime(b.log.length), type: 'user/message', surfaceOp: 'append',
      data: { id: 'u-late' as never, role: 'user', content: [{ type: 'text', text: 'also check math.ts' }], source: { kind: 'user' } },
    } as EventDraft)
  }

  for (const answer of ['answers', 'fails'] as const) {
    it(`a node appended during the lookup is in the selection's measurement (the lookup ${answer})`, async () => {
      const b = bench({ prefix: PRE_STEP_3_2, config: { hardening: { summaryRoom: true } }, compaction: [summaryReply()] })
      let lookups = 0
      const real = b.runtime.resolveModelInfo.bind(b.runtime)
      b.runtime.resolveModelInfo = async (provider, model, signal) => {
        if (++lookups === 2) { // the first is the pressure check's capacity lookup, the second HARD-2's
          late(b)
          if (answer === 'fails') throw new Error('metadata down')
        }
        return real(provider, model, signal)
      }
      const r = await b.engine.compactIfNeeded('pressure')
      expect(r?.shadowedSeqs).toEqual([3, 10, 15, 23, 28, 37, 42])
      expect(b.written()).toEqual(['user/message', 'compaction/start', 'compaction/summary', 'user/message', 'compaction/end'])
    })
  }
})

describe('the pruner prices its input with the engine\'s read-only path resolver (§5.4 rule 3, §6.5)', () => {
  const plot = { type: 'image', attachment: { attachmentId: `sha256:${'ab'.repeat(32)}`, mediaType: 'image/png', bytes: 48213, width: 1024, height: 768 } }
  /** Turn 1, step 2 open: a 4,000-character prompt, a `c1` result of 9,000 characters plus an image that #7 offloaded. */
  function imageResult(promptChars = 4000): EventDraft[] {
    const r = result('c1', 'x')
    const block = r.data.message.content[0] as unknown as Record<string, unknown>
    r.data.message.content = [{ ...block, content: [{ type: 'text', text: 'x'.repeat(9000) }, plot] }] as never
    const offload = { time: T, type: 'image/offload', data: { targets: [{ seq: 6, imageIndexes: [0] }] } } as EventDraft
    return [marker('turn/start'), marker('step/start'), user('u'.repeat(promptChars)), header, context(4000), assistant(['c1']), r, offload, marker('step/end'), marker('step/start', 1, 2)]
  }
  const LONG_PATH = `read-only/${'p'.repeat(400)}.png` // 414 characters; the harness path attachments/abababababab.png has 28

  async function prunedTokens(trigger: 'pressure' | 'context-overflow', readOnlyPath?: () => string): Promise<number | undefined> {
    const b = bench({ events: logOf(...imageResult()).events })
    const engine = new CompactionEngine({
      log: b.log, runtime: b.runtime, policy: resolveCompactionConfig({ compactionRetries: 0 }), pruner: resolvePruneConfig(undefined),
      clock: () => appendixBTime(b.log.length), newCompactionId: () => 'cmp-1', newMessageId: () => 'm-ck1',
      summarizer: { summarize: async () => ok }, ...(readOnlyPath === undefined ? {} : { readOnlyPath }),
    })
    await engine.compactIfNeeded(trigger)
    const prune = b.appended().find((e): e is SessionEvent<'compaction/prune'> => e.type === 'compaction/prune')
    expect(prune?.data.shadowedSeqs).toEqual([6])
    return prune?.data.shadowedTokenCount
  }

  for (const trigger of ['pressure', 'context-overflow'] as const) {
    it(`${trigger}: the pruned node's price counts the placeholder with the configured path (386 more characters ≈ 97 tokens)`, async () => {
      const harness = await prunedTokens(trigger) ?? Number.NaN
      const custom = await prunedTokens(trigger, () => LONG_PATH) ?? Number.NaN
      // 386 more characters in one text block: ⌈(c + 386) / 4⌉ − ⌈c / 4⌉ is 96 or 97.
      expect(custom - harness).toBeGreaterThanOrEqual(96)
      expect(custom - harness).toBeLessThanOrEqual(97)
    })
  }

  it('the engine\'s own meter prices the surface with the same resolver (no pruner: below the threshold with the harness path, at or above it with ~97 tokens more)', async () => {
    // A 3,200-character prompt: 200 tokens less than above, so the harness-priced surface is below the threshold 3200.
    const run = async (readOnlyPath?: () => string): Promise<string[]> => {
      const b = bench({ events: logOf(...imageResult(3200)).events })
      const engine = new CompactionEngine({
        log: b.log, runtime: b.runtime, policy: resolveCompactionConfig({ compactionRetries: 0 }),
        clock: () => appendixBTime(b.log.length), newCompactionId: () => 'cmp-1', newMessageId: () => 'm-ck1',
        summarizer: { summarize: async () => ok }, ...(readOnlyPath === undefined ? {} : { readOnlyPath }),
      })
      await engine.compactIfNeeded('pressure').catch(() => null)
      return b.written()
    }
    expect(await run()).toEqual([])
    expect(await run(() => LONG_PATH)).toContain('compaction/start')
  })
})
