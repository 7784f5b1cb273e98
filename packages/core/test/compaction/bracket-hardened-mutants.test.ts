/**
 * Bracket rules the mutation run left unjudged (`pnpm mutate`, issue #18), mostly the hardened profile's checks
 * driven straight through `runBracket` (`docs/hardened.md`): HARD-3's budget with and without `deferredTo` and an
 * envelope, HARD-4 only when asked for, HARD-2's refusal at its boundary and its record, plus the §7.3 re-prepare
 * message, the §7.7 summary-seq check and the INV-16 text-only rule. Every price is worked out by hand (§2.2:
 * `ceil(len / 4)` per text, 4 per block, 4 per message; text-only nodes price the same under `P_route` and
 * `P_fixed`). The framed checkpoint of a summary of n ≤ 4 characters prices 89 + ceil(n / 4) (bracket-mutants).
 */
import { describe, expect, it } from 'vitest'
import { appendixBEvents } from '@compaction-sim/fixtures'
import { BracketFailure, runBracket, type BracketEnvironment, type BracketRequest } from '../../src/compaction/bracket.ts'
import { frameCheckpoint } from '../../src/compaction/checkpoint.ts'
import { SummarizerError } from '../../src/compaction/errors.ts'
import type { Summarizer, SummaryInput, SummaryOutput } from '../../src/compaction/summarizer.ts'
import { INSTRUCTION_TOKENS } from '../../src/compaction/summary-room.ts'
import { EventLog } from '../../src/log/event-log.ts'
import type { EventDraft, SessionEvent } from '../../src/log/events.ts'
import type { ContentBlock } from '../../src/log/llm.ts'
import { TokenMeter } from '../../src/meter/meter.ts'
import { blocksPrice, fixedPrice, ROLE_OVERHEAD, routePrice } from '../../src/meter/price.ts'
import { harnessReadOnlyPath } from '../../src/offload/projection.ts'
import { PRE_STEP_3_2, rejectionOf } from './support/bench.ts'

const T = 1_700_000_000_000
const COMMITTED = ['compaction/start', 'compaction/summary', 'user/message', 'compaction/end']
const text = (t: string): { type: 'text'; text: string } => ({ type: 'text', text: t })
const IMAGE = { type: 'image', attachment: { attachmentId: `sha256:${'7'.repeat(64)}`, mediaType: 'image/png', bytes: 10, width: 1, height: 1, name: 'x.png' } }

function user(id: string, content: unknown[]): EventDraft {
  return { time: T, type: 'user/message', data: { id: id as never, role: 'user', content: content as never, source: { kind: 'user' } }, surfaceOp: 'append' }
}

function assistant(id: string): EventDraft {
  return {
    time: T, type: 'assistant/message', surfaceOp: 'append',
    data: { turn: 1, step: 1, message: { id: id as never, role: 'assistant', content: [text('ok')], source: { kind: 'model', provider: 'mock', model: 'mock-4k' } } },
  }
}

const HEADER: EventDraft = {
  time: T, type: 'request/header',
  data: { header: { config: { provider: 'mock', model: 'mock-4k' }, tools: [{ name: 't', description: 'd', parameters: {} }] }, reason: 'initial' },
}

/**
 * Turn 1 step 1 open, then (after an optional header) u1 (400 chars: 108), a1 ('ok': 9), u2 (200 chars: 58),
 * a2 (9), u3 (120 chars: 38), a3 (9): a 231-token surface without a system head.
 */
function session(withHeader = false): EventLog {
  const drafts: EventDraft[] = [
    { time: T, type: 'turn/start', data: { turn: 1 } }, { time: T, type: 'step/start', data: { turn: 1, step: 1 } },
    ...(withHeader ? [HEADER] : []),
    user('u1', [text('a'.repeat(400))]), assistant('a1'), user('u2', [text('b'.repeat(200))]), assistant('a2'),
    user('u3', [text('c'.repeat(120))]), assistant('a3'),
  ]
  return EventLog.fromEvents(drafts.map((d, seq) => ({ ...d, seq }) as SessionEvent), { dialect: 'seed' })
}

const ok = (t = 'bbbb'): SummaryOutput => ({ summary: [text(t)], provider: 'template', model: 'v1' })

function returning(output: SummaryOutput, inputs: SummaryInput[] = []): Summarizer {
  return { summarize: async (input) => { inputs.push(input); return output } }
}

function env(log: EventLog, summarizer: Summarizer, append?: BracketEnvironment['append']): BracketEnvironment {
  return {
    log, meter: new TokenMeter(log, { dialect: log.dialect }), summarizer, clock: () => T, newCompactionId: () => 'c1', newMessageId: () => 'm-ck',
    append: append ?? ((d) => log.append(d)), readOnlyPath: harnessReadOnlyPath,
  }
}

const run = (log: EventLog, summarizer: Summarizer, request: Omit<BracketRequest, 'owner'>): Promise<unknown> =>
  runBracket(env(log, summarizer), { owner: 'current-turn', ...request })

const written = (log: EventLog, from: number): string[] => log.events.slice(from).map((e) => e.type)

function budgetMessage(checkpoint: number, allowed: number): string {
  return `checkpoint over its budget (hardened HARD-3): ${checkpoint} route tokens > ${allowed} (threshold − envelope − retained surface − margin)`
}

describe('HARD-3 checkpoint budget through runBracket', () => {
  // Span 2…3 (u1, a1) shadows 108 + 9 = 117; the 'bbbb' checkpoint prices 90.
  it('no deferredTo: the rest of the surface (u2 … a3, 114) counts; threshold 200 leaves 86 < 90', async () => {
    const log = session()
    const err = await rejectionOf(run(log, returning(ok()), { start: 2, end: 3, hardened: { checkpointBudget: { thresholdTokens: 200, marginTokens: 0, reliefRatio: 0 } } }))
    expect(err).toBeInstanceOf(BracketFailure)
    expect(err).toMatchObject({ code: 'summary', closed: true, message: budgetMessage(90, 86) })
    expect(written(log, 8)).toEqual(['compaction/start', 'compaction/end'])
  })

  it('reliefRatio: the over-budget 90-token checkpoint is kept at 0.77 × 117 = 90.09, refused at 0.76 × 117 = 88.92', async () => {
    const kept = session()
    const result = await run(kept, returning(ok()), { start: 2, end: 3, hardened: { checkpointBudget: { thresholdTokens: 200, marginTokens: 0, reliefRatio: 0.77 } } })
    expect(result).toMatchObject({ shadowedSeqs: [2, 3], shadowedTokenCount: 117 })
    expect(written(kept, 8)).toEqual(COMMITTED)
    const refused = session()
    const err = await rejectionOf(run(refused, returning(ok()), { start: 2, end: 3, hardened: { checkpointBudget: { thresholdTokens: 200, marginTokens: 0, reliefRatio: 0.76 } } }))
    expect(err).toMatchObject({ code: 'summary', closed: true, message: budgetMessage(90, 86) })
  })

  it('deferredTo 5: u2 and a2 (58 + 9 = 67) are left out, only u3 and a3 (47) count; 140 − 47 − margin 4 = 89 < 90', async () => {
    const log = session()
    const hardened = { checkpointBudget: { thresholdTokens: 140, marginTokens: 4, reliefRatio: 0 } }
    const err = await rejectionOf(run(log, returning(ok()), { start: 2, end: 3, deferredTo: 5, hardened }))
    expect(err).toMatchObject({ code: 'summary', closed: true, message: budgetMessage(90, 89) })
  })

  it('deferredTo 5 at the boundary: a budget of exactly 90 admits the 90-token checkpoint', async () => {
    const log = session()
    const hardened = { checkpointBudget: { thresholdTokens: 141, marginTokens: 4, reliefRatio: 0 } }
    const result = await run(log, returning(ok()), { start: 2, end: 3, deferredTo: 5, hardened })
    expect(result).toMatchObject({ shadowedSeqs: [2, 3], shadowedTokenCount: 117 })
    expect(written(log, 8)).toEqual(COMMITTED)
  })

  it('deferredTo on the last node: only a3 (9) is retained; 98 − 9 = 89 < 90', async () => {
    const log = session()
    const err = await rejectionOf(run(log, returning(ok()), { start: 2, end: 3, deferredTo: 6, hardened: { checkpointBudget: { thresholdTokens: 98, marginTokens: 0, reliefRatio: 0 } } }))
    expect(err).toMatchObject({ code: 'summary', message: budgetMessage(90, 89) })
  })

  it('the envelope of the header in force (one tool: 48 JSON chars → 12 + 4 = 16) is taken off the threshold', async () => {
    const log = session(true) // the header is seq 2: the nodes are 3 … 8
    const err = await rejectionOf(run(log, returning(ok()), { start: 3, end: 4, hardened: { checkpointBudget: { thresholdTokens: 200, marginTokens: 0, reliefRatio: 0 } } }))
    expect(err).toMatchObject({ code: 'summary', message: budgetMessage(90, 200 - 16 - 114) })
  })

  it('a span whose start was replaced while the summary ran: the budget reads no missing node and §7.6 reports the change', async () => {
    const log = session()
    const summarizer: Summarizer = {
      summarize: async () => {
        log.append({
          time: T, type: 'user/message', data: { id: 'foreign' as never, role: 'user', content: [text('foreign')], source: { kind: 'plugin', plugin: 'foreign' } },
          surfaceOp: { op: 'replace', start: 2 as never, end: 3 as never }, sourceEventSeqs: [2 as never, 3 as never],
        })
        return ok()
      },
    }
    const err = await rejectionOf(run(log, summarizer, { start: 2, end: 3, hardened: { checkpointBudget: { thresholdTokens: 1_000_000, marginTokens: 0, reliefRatio: 0 } } }))
    expect(err).toMatchObject({ code: 'changed', closed: true })
    expect((err as Error).cause).toMatchObject({ name: 'SurfaceChangedError' })
  })
})

describe('HARD-4 applies only when meteredRelief is on', () => {
  /** Appendix B at pre-step 3.2 on a route that prices images at 1 token (the fixed rule prices them far higher). */
  function cheapImages(): EventLog {
    const events = appendixBEvents().slice(0, PRE_STEP_3_2).map((e) => (e.type === 'request/context' ? { ...e, data: { ...e.data, imageTokens: 1 } } : e))
    return EventLog.fromEvents(events, { dialect: 'seed' })
  }

  /** A summary whose framed price is at least the region's route price (1-token images) and below its P_fixed. */
  const between: Summarizer = {
    summarize: async (input) => {
      const route = input.messages.reduce((sum, m) => sum + routePrice(m, 1), 0)
      const fixed = input.messages.reduce((sum, m) => sum + fixedPrice(m), 0)
      for (let k = 1; ; k++) {
        const summary = [text('w'.repeat(4 * k))]
        const framed = blocksPrice(frameCheckpoint(summary)) + ROLE_OVERHEAD
        if (framed >= route) {
          if (framed >= fixed) throw new Error('test setup: no summary between the two prices')
          return { summary, provider: 'template', model: 'v1' }
        }
      }
    },
  }

  it('a budget-only hardened bracket commits a checkpoint with no metered relief', async () => {
    const log = cheapImages()
    const result = await run(log, between, { start: 3, end: 42, hardened: { checkpointBudget: { thresholdTokens: 1_000_000, marginTokens: 0, reliefRatio: 0 } } })
    expect(result).toMatchObject({ shadowedSeqs: [3, 10, 15, 23, 28, 37, 42] })
    expect(written(log, PRE_STEP_3_2)).toEqual(COMMITTED)
  })

  it('with meteredRelief the same checkpoint fails the bracket', async () => {
    const log = cheapImages()
    const err = await rejectionOf(run(log, between, { start: 3, end: 42, hardened: { meteredRelief: true, checkpointBudget: { thresholdTokens: 1_000_000, marginTokens: 0, reliefRatio: 0 } } }))
    expect(err).toMatchObject({ code: 'summary', message: /^summary gives no metered relief \(hardened HARD-4\)/ })
  })
})

describe('HARD-2 room through runBracket', () => {
  // Span 2…3 with no tools and no system head: promptTokens = INSTRUCTION_TOKENS (450) + 117 = 567.
  const route = (contextWindow: number) => ({ provider: 'p', model: 'm', configuredMaxTokens: 8192, contextWindow })

  it('a window one token above the prompt sends a 1-token cap and records the room with deferredTo', async () => {
    expect(INSTRUCTION_TOKENS).toBe(450)
    const log = session()
    const inputs: SummaryInput[] = []
    await run(log, returning(ok(), inputs), { start: 2, end: 3, summaryRoute: route(568), deferredTo: 5 })
    expect(inputs.map((i) => i.maxTokens)).toEqual([1])
    expect(written(log, 8)).toEqual(COMMITTED)
    const summary = log.event(9) as SessionEvent<'compaction/summary'>
    expect(summary.data.summaryRoom).toStrictEqual({ configuredMaxTokens: 8192, promptTokens: 567, contextWindow: 568, deferredTo: 5 })
  })

  it('without deferredTo the record has none', async () => {
    const log = session()
    await run(log, returning(ok()), { start: 2, end: 3, summaryRoute: route(5000) })
    const summary = log.event(9) as SessionEvent<'compaction/summary'>
    expect(summary.data.summaryRoom).toStrictEqual({ configuredMaxTokens: 8192, promptTokens: 567, contextWindow: 5000 })
  })

  it('a window equal to the prompt is refused before the call, naming the prompt price and the window', async () => {
    const log = session()
    const inputs: SummaryInput[] = []
    const err = await rejectionOf(run(log, returning(ok(), inputs), { start: 2, end: 3, summaryRoute: route(567) }))
    const message = 'summary request does not fit its route (hardened HARD-2): the prompt prices 567 tokens, the window of p/m is 567'
    expect(err).toMatchObject({ code: 'summary', closed: true, message })
    expect(inputs).toEqual([])
    expect(written(log, 8)).toEqual(['compaction/start', 'compaction/summary-error', 'compaction/end'])
    expect((log.event(9) as SessionEvent<'compaction/summary-error'>).data).toStrictEqual({
      compactionId: 'c1', shadowedRange: { start: 2, end: 3 }, shadowedSeqs: [2, 3], provider: 'p', model: 'm',
      summaryRoom: { configuredMaxTokens: 8192, promptTokens: 567, contextWindow: 567 }, failure: { message, code: 'CONTEXT_WINDOW_EXCEEDED' },
    })
  })
})

describe('§7.3 re-prepare after an offload: the nodes found', () => {
  /** u1 (2), a1 (3), u2 (4), a2 (5), u3 with an image (6), a3 (7); span 2…7 is the whole surface. */
  function imageSession(): EventLog {
    const drafts: EventDraft[] = [
      { time: T, type: 'turn/start', data: { turn: 1 } }, { time: T, type: 'step/start', data: { turn: 1, step: 1 } },
      user('u1', [text('a'.repeat(400))]), assistant('a1'), user('u2', [text('b'.repeat(200))]), assistant('a2'),
      user('u3', [text('see'), IMAGE]), assistant('a3'),
    ]
    return EventLog.fromEvents(drafts.map((d, seq) => ({ ...d, seq }) as SessionEvent), { dialect: 'seed' })
  }

  function replacingThenOffload(log: EventLog, start: number, end: number, sources: number[]): Summarizer {
    let calls = 0
    return {
      summarize: async () => {
        if (++calls > 1) return ok()
        log.append({
          time: T, type: 'user/message', data: { id: 'foreign' as never, role: 'user', content: [text('foreign')], source: { kind: 'plugin', plugin: 'foreign' } },
          surfaceOp: { op: 'replace', start: start as never, end: end as never }, sourceEventSeqs: sources as never,
        })
        throw new SummarizerError({ message: 'too many images', code: 'IMAGE_OFFLOAD_REQUIRED', offloadImages: 1 }, { provider: 'mock', model: 'mock-4k' })
      },
    }
  }

  it('a span at position 0 with a middle node replaced names every node now there', async () => {
    const log = imageSession()
    const err = await rejectionOf(run(log, replacingThenOffload(log, 3, 4, [3, 4]), { start: 2, end: 7 }))
    // seq 8 start, 9 the foreign checkpoint, 10 summary-error, 11 image/offload
    expect(err).toMatchObject({ code: 'changed', message: 'the selected span 2…7 changed: expected nodes [2, 3, 4, 5, 6, 7], found [2, 9, 5, 6, 7]' })
    expect(written(log, 8)).toEqual(['compaction/start', 'user/message', 'compaction/summary-error', 'image/offload', 'compaction/end'])
  })

  it('a span whose start was shadowed and whose end is the last node finds nothing', async () => {
    const log = imageSession()
    const err = await rejectionOf(run(log, replacingThenOffload(log, 2, 3, [2, 3]), { start: 2, end: 7 }))
    expect(err).toMatchObject({ code: 'changed', message: 'the selected span 2…7 changed: expected nodes [2, 3, 4, 5, 6, 7], found []' })
  })
})

describe('§7.7 and INV-16 checks', () => {
  it('a summary append that lands at another seq than pre-validated is an invariant failure of the commit', async () => {
    const log = session()
    const append = (d: EventDraft): SessionEvent => {
      const e = log.append(d)
      return d.type === 'compaction/summary' ? ({ ...e, seq: e.seq + 100 } as SessionEvent) : e
    }
    const err = await rejectionOf(runBracket(env(log, returning(ok()), append), { start: 2, end: 3, owner: 'current-turn' }))
    expect(err).toBeInstanceOf(BracketFailure)
    const failure = err as BracketFailure
    expect(failure.code).toBe('commit')
    const decisive = failure.original ?? failure.cause
    expect(decisive).toMatchObject({ name: 'InvariantError' })
    expect((decisive as Error).message).toContain('compaction/summary landed at seq 109, expected 9')
    expect(written(log, 8).slice(0, 2)).toEqual(['compaction/start', 'compaction/summary'])
  })

  it('a block that is not text fails UNSUPPORTED_CONTENT even when it carries a text string', async () => {
    const log = session()
    const output = { summary: [{ type: 'image', text: 'hidden' } as unknown as ContentBlock], provider: 'p', model: 'm' } as unknown as SummaryOutput
    const err = await rejectionOf(run(log, returning(output), { start: 2, end: 3 }))
    expect(err).toMatchObject({ code: 'summary', message: 'the summary must hold text blocks only' })
    expect((log.event(9) as SessionEvent<'compaction/summary-error'>).data.failure).toEqual({ message: 'the summary must hold text blocks only', code: 'UNSUPPORTED_CONTENT' })
  })
})
