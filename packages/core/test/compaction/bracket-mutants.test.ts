/**
 * Bracket behaviour the fault tests leave partly unjudged (survivors of the mutation run, `pnpm mutate`):
 * the §7.5 shrink rule at its boundary, the summarizer output rules (INV-16, INV-18) with the target a
 * `compaction/summary-error` records, the §7.2 entry checks of `runBracket`, the §6.8 offload loop under an
 * aborted signal and over a changed span, the §7.6 revalidation messages and the §7.7 commit checks. Every
 * expected event, price and message is written out by hand; prices follow §2.2 (`ceil(len / 4)` per text, 4 per
 * block, 4 per message).
 */
import { describe, expect, it } from 'vitest'
import { LlmError } from '../../src/adapter/contract.ts'
import { BracketFailure, runBracket, structuredFailure, type BracketEnvironment } from '../../src/compaction/bracket.ts'
import { SummarizerError } from '../../src/compaction/errors.ts'
import type { Summarizer, SummaryInput, SummaryOutput } from '../../src/compaction/summarizer.ts'
import { InvariantError } from '../../src/errors.ts'
import type { EventDraft, SessionEvent } from '../../src/log/events.ts'
import type { ContentBlock, ToolResultMessage } from '../../src/log/llm.ts'
import { harnessReadOnlyPath } from '../../src/offload/projection.ts'
import { RegionError } from '../../src/range/select.ts'
import { expectBracketInvariants } from './support/invariants.ts'
import { admission, bench, BETWEEN_TURNS_2_3, rejectionOf, SHORT_SUMMARY, type Bench } from './support/bench.ts'

const T = 1_700_000_000_000
const COMMITTED = ['compaction/start', 'compaction/summary', 'user/message', 'compaction/end']
const FAILED_BRACKET = ['compaction/start', 'compaction/summary-error', 'compaction/end']

function user(id: string, text: string): EventDraft {
  return { time: T, type: 'user/message', data: { id: id as never, role: 'user', content: [{ type: 'text', text }], source: { kind: 'user' } }, surfaceOp: 'append' }
}

function assistant(id: string, content: ContentBlock[]): EventDraft {
  return {
    time: T, type: 'assistant/message', surfaceOp: 'append',
    data: { turn: 1, step: 1, message: { id: id as never, role: 'assistant', content, source: { kind: 'model', provider: 'mock', model: 'mock-4k' } } },
  }
}

/** Turn 1, step 1 open (no request/header: no routed target), then `drafts`: the surface starts at seq 2. */
function openSession(...drafts: EventDraft[]): SessionEvent[] {
  const all: EventDraft[] = [{ time: T, type: 'turn/start', data: { turn: 1 } }, { time: T, type: 'step/start', data: { turn: 1, step: 1 } }, ...drafts]
  return all.map((d, seq) => ({ ...d, seq }) as SessionEvent)
}

/** A summarizer that always returns `output` (a §8.6 override), recording each input it was given. */
function returning(output: SummaryOutput | (() => SummaryOutput), inputs: SummaryInput[] = []): Summarizer {
  return {
    summarize: async (input) => {
      inputs.push(input)
      return typeof output === 'function' ? output() : output
    },
  }
}

const text = (t: string): { type: 'text'; text: string } => ({ type: 'text', text: t })
const ok = (t = SHORT_SUMMARY): SummaryOutput => ({ summary: [text(t)], provider: 'template', model: 'v1' })

function event<T extends SessionEvent['type']>(b: Bench, type: T, k = 0): SessionEvent<T> {
  const found = b.appended().filter((e) => e.type === type)[k]
  if (found === undefined) throw new Error(`no ${type} #${k} was appended`)
  return found as SessionEvent<T>
}

/** Appendix B's #15 tool result with its output trimmed: a foreign in-place replacement of a middle region node. */
function foreignPrune(b: Bench): EventDraft<'tool/result'> {
  const original = b.log.event(15) as SessionEvent<'tool/result'>
  const message = original.data.message
  const content = [{ ...message.content[0], content: [{ type: 'text', text: 'trimmed' }] }] as ToolResultMessage['content']
  return {
    time: T, type: 'tool/result', data: { ...original.data, message: { ...message, content } },
    surfaceOp: { op: 'replace', start: 15 as never, end: 15 as never }, sourceEventSeqs: [15 as never],
  }
}

/** A foreign checkpoint replacing `start … end` by one user message. */
function foreignReplace(b: Bench, start: number, end: number): EventDraft<'user/message'> {
  const s = b.log.state.surface
  return {
    time: T, type: 'user/message',
    data: { id: `foreign-${start}` as never, role: 'user', content: [text('foreign summary')], source: { kind: 'plugin', plugin: 'foreign' } },
    surfaceOp: { op: 'replace', start: start as never, end: end as never }, sourceEventSeqs: s.nodes.slice(s.position(start), s.position(end) + 1),
  }
}

const offloadRequired = (): SummarizerError =>
  new SummarizerError({ message: 'too many images', code: 'IMAGE_OFFLOAD_REQUIRED', offloadImages: 1 }, { provider: 'mock', model: 'mock-4k' })

describe('§7.5 shrink rule at its boundary (INV-17)', () => {
  // Frame of a 4-character summary: preamble + "\n\n<compacted-summary>" is 249 + 2 + 19 = 270 chars → 68 + 4;
  // the summary 1 + 4; "</compacted-summary>" (20 chars) 5 + 4; the message 4 — 90 tokens in all.
  // A user message of n characters shadows ceil(n / 4) + 4 + 4 tokens: 328 chars → 90, 332 chars → 91.
  it('a checkpoint priced exactly at the shadowed span fails NOT_SMALLER; one shadowed token more commits', async () => {
    const equal = bench({ events: openSession(user('u1', 'a'.repeat(328)), assistant('a1', [text('ok')])), engine: { summarizer: returning(ok('bbbb')) } })
    const err = await rejectionOf(equal.engine.compactRegion(2, 2))
    expect(err).toMatchObject({
      name: 'CompactionError', code: 'summary', closed: true,
      message: 'summary is not smaller than the shadowed content (90 estimated framed tokens >= 90)',
    })
    expect(equal.written()).toEqual(['compaction/start', 'compaction/end'])

    const larger = bench({ events: openSession(user('u1', 'a'.repeat(332)), assistant('a1', [text('ok')])), engine: { summarizer: returning(ok('bbbb')) } })
    const result = await larger.engine.compactRegion(2, 2)
    expect(result).toMatchObject({ shadowedSeqs: [2], shadowedTokenCount: 91, summary: [text('bbbb')] })
    expect(larger.written()).toEqual(COMMITTED)
    expectBracketInvariants(larger.log)
  })
})

describe('summarizer output rules (INV-16, INV-18) and the recorded target', () => {
  const events = openSession(user('u1', 'a'.repeat(2000)), assistant('a1', [text('ok')]))
  const image = { type: 'image', attachment: { attachmentId: `sha256:${'9'.repeat(64)}`, mediaType: 'image/png', bytes: 10, width: 1, height: 1, name: 'x.png' } }
  const textOnlyFailure = { message: 'the summary must hold text blocks only', code: 'UNSUPPORTED_CONTENT' }
  const routeFailure = { message: 'the summary must name the route that produced it', code: 'UNKNOWN' }
  const cases: Array<[string, unknown, Record<string, unknown>, { message: string; code: string }]> = [
    ['a summary that is not a list', { summary: 'plain', provider: 'p', model: 'm' }, { provider: 'p', model: 'm' }, textOnlyFailure],
    ['an image block', { summary: [text('a'), image], provider: 'p', model: 'm', maxTokens: 7 }, { provider: 'p', model: 'm', maxTokens: 7 }, textOnlyFailure],
    ['a text block without a string', { summary: [{ type: 'text', text: 3 }], provider: 'p', model: 'm' }, { provider: 'p', model: 'm' }, textOnlyFailure],
    ['whitespace only', { summary: [text(' \n'), text('\t')], provider: 'p', model: 'm' }, { provider: 'p', model: 'm' },
      { message: 'summarization produced no text summary content', code: 'UNKNOWN' }],
    ['a stream call without rawOutput', { summary: [text('s')], llmStreamCall: true, provider: 'p', model: 'm' }, { provider: 'p', model: 'm' },
      { message: 'a summary from a runtime stream call must carry its rawOutput (§8.6)', code: 'UNKNOWN' }],
    ['a provider that is not a string', { summary: [text('s')], provider: 5, model: 'm' }, { model: 'm' }, routeFailure],
    ['no model', { summary: [text('s')], provider: 'p' }, { provider: 'p' }, routeFailure],
    ['a model that is not a string', { summary: [text('s')], provider: 'p', model: 7 }, { provider: 'p' }, routeFailure],
  ]
  for (const [what, output, target, failure] of cases) {
    it(`${what}: summary-error with the failure and only the target fields given; end{error}`, async () => {
      const b = bench({ events, engine: { summarizer: returning(output as SummaryOutput) } })
      const err = await rejectionOf(b.engine.compactRegion(2, 2))
      expect(err).toMatchObject({ name: 'CompactionError', code: 'summary', closed: true, message: failure.message })
      expect(b.written()).toEqual(FAILED_BRACKET)
      expect(event(b, 'compaction/summary-error').data).toEqual({ compactionId: 'cmp-1', shadowedRange: { start: 2, end: 2 }, shadowedSeqs: [2], ...target, failure })
      expect(event(b, 'compaction/end').data).toEqual({ compactionId: 'cmp-1', turn: 1, error: failure.message })
      expectBracketInvariants(b.log)
    })
  }

  it('a stream call with its rawOutput commits, recording both; a plain override records neither', async () => {
    const raw = [{ type: 'reasoning', text: 'r' }, text('s')] as ContentBlock[]
    const b = bench({ events, engine: { summarizer: returning({ summary: [text('s')], rawOutput: raw, llmStreamCall: true, provider: 'p', model: 'm', maxTokens: 9 }) } })
    await b.engine.compactRegion(2, 2)
    expect(b.written()).toEqual(COMMITTED)
    const data = event(b, 'compaction/summary').data
    expect(data).toMatchObject({ summary: [text('s')], rawOutput: raw, llmStreamCall: true, provider: 'p', model: 'm', maxTokens: 9 })
    expect(Object.keys(data)).toEqual(['compactionId', 'summary', 'rawOutput', 'llmStreamCall', 'shadowedRange', 'shadowedSeqs', 'shadowedTokenCount', 'provider', 'model', 'maxTokens'])
  })

  it('a rejection that is not a SummarizerError records its failure and no target; an LlmError its failure unchanged', async () => {
    const thrown = Object.assign(new Error('disk gone'), { code: 'EIO', provider: 'x', model: 'y' })
    const b = bench({ events, engine: { summarizer: { summarize: async () => { throw thrown } } } })
    expect(await rejectionOf(b.engine.compactRegion(2, 2))).toMatchObject({ code: 'summary', message: 'disk gone' })
    expect(event(b, 'compaction/summary-error').data).toEqual({
      compactionId: 'cmp-1', shadowedRange: { start: 2, end: 2 }, shadowedSeqs: [2], failure: { message: 'disk gone', code: 'EIO' },
    })
    const failure = { message: 'slow down', code: 'RATE_LIMIT' }
    expect(structuredFailure(new LlmError(failure))).toBe(failure)
    expect(structuredFailure(undefined)).toMatchObject({ code: 'UNKNOWN' })
    expect(structuredFailure('plain text')).toEqual({ message: 'plain text', code: 'UNKNOWN' })
  })
})

describe('summarizer input (§7.3, §8.6)', () => {
  it('nodes that project to nothing are skipped; an empty tool list and an empty system head are left out', async () => {
    const system: EventDraft = {
      time: T, type: 'system/message', surfaceOp: 'append',
      data: { id: 'sys' as never, role: 'system', content: [], source: { kind: 'plugin', plugin: 'system-prompt' } },
    }
    const header: EventDraft = { time: T, type: 'request/header', data: { header: { config: { provider: 'mock', model: 'mock-4k' }, tools: [] }, reason: 'initial' } }
    const events = openSession(system, header, user('u1', 'a'.repeat(2000)), assistant('a1', []), user('u2', 'b'.repeat(400)), assistant('a2', [text('ok')]))
    const inputs: SummaryInput[] = []
    const b = bench({ events, engine: { summarizer: returning(ok(), inputs) } })
    expect(b.log.nodes).toEqual([2, 4, 5, 6, 7])
    const result = await b.engine.compactRegion(4, 6)
    expect(result.shadowedSeqs).toEqual([4, 5, 6])
    // u1: 500 + 4 + 4; a1 (no blocks) is not priced; u2: 100 + 4 + 4.
    expect(result.shadowedTokenCount).toBe(616)
    expect(inputs).toHaveLength(1)
    const input = inputs[0] as SummaryInput
    expect(Object.keys(input)).toEqual(['messages'])
    expect(input.messages.map((m) => m.id)).toEqual(['u1', 'u2'])
    expect(input.messages).toHaveLength(2)
  })

  it('a non-empty system head and the header tools are passed along', async () => {
    const inputs: SummaryInput[] = []
    const b = bench({ engine: { summarizer: returning(ok(), inputs) } })
    await b.engine.compactRegion(3, 42)
    const input = inputs[0] as SummaryInput
    expect(Object.keys(input)).toEqual(['systemHead', 'tools', 'messages'])
    expect(input.systemHead?.id).toBe('m-sys')
    expect(input.tools?.map((t) => t.name)).toEqual(b.log.state.header?.header.tools?.map((t) => t.name))
    expect(input.messages.map((m) => m.id)).toEqual(['m-u1', 'm-a1', 'm-t1', 'm-a2', 'm-u2', 'm-a3', 'm-u3'])
  })
})

describe('§7.2 entry checks of runBracket', () => {
  function env(b: Bench, summarizer: Summarizer): BracketEnvironment {
    let ids = 0
    return {
      log: b.log, meter: b.meter, summarizer, clock: () => T, newCompactionId: () => `direct-${++ids}`, newMessageId: () => 'm-direct',
      append: (d) => b.log.append(d), readOnlyPath: harnessReadOnlyPath,
    }
  }

  it('a null owner with an already-aborted signal rejects with its reason and writes nothing', async () => {
    const b = bench({ prefix: BETWEEN_TURNS_2_3 })
    const reason = new Error('too late')
    const err = await rejectionOf(runBracket(env(b, returning(ok())), { start: 3, end: 28, owner: null, signal: AbortSignal.abort(reason) }))
    expect(err).toBe(reason)
    expect(b.written()).toEqual([])
  })

  it('the turn owner is not stopped by an already-aborted signal: an automatic bracket commits (Q-15)', async () => {
    const b = bench()
    const result = await runBracket(env(b, returning(ok())), { start: 3, end: 42, owner: 'current-turn', signal: AbortSignal.abort(new Error('x')) })
    expect(result).toMatchObject({ compactionId: 'direct-1', startSeq: 51, summarySeq: 52, endSeq: 54 })
    expect(b.written()).toEqual(COMMITTED)
  })

  it('an empty compaction id is an invariant error before anything is written', async () => {
    const b = bench({ engine: { newCompactionId: () => '' } })
    const err = await rejectionOf(b.engine.compactRegion(3, 42))
    expect(err).toBeInstanceOf(InvariantError)
    expect((err as Error).message).toContain('newCompactionId() returned an empty id')
    expect(b.written()).toEqual([])
  })

  it('no open turn: a RegionError that says so', async () => {
    const b = bench({ prefix: BETWEEN_TURNS_2_3 })
    const err = await rejectionOf(b.engine.compactRegion(3, 28))
    expect(err).toEqual(new RegionError('no-open-turn', 'no open turn: an automatic or explicit-region compaction runs inside a turn'))
  })

  it('a null owner without any signal runs between turns and commits, its end naming no turn', async () => {
    const b = bench({ prefix: BETWEEN_TURNS_2_3 })
    const result = await runBracket(env(b, returning(ok())), { start: 3, end: 28, owner: null })
    expect(result).toMatchObject({ compactionId: 'direct-1', shadowedSeqs: [3, 10, 15, 23, 28] })
    expect(b.written()).toEqual(COMMITTED)
    expect(event(b, 'compaction/end').data).toEqual({ compactionId: 'direct-1', turn: null })
    expectBracketInvariants(b.log)
  })

  it('§7.10: a null owner whose signal aborts while the summary runs fails as cancelled after closing the bracket', async () => {
    const b = bench({ prefix: BETWEEN_TURNS_2_3 })
    const controller = new AbortController()
    const reason = new Error('caller gave up')
    const summarizer: Summarizer = { summarize: async () => { controller.abort(reason); return ok() } }
    const err = await rejectionOf(runBracket(env(b, summarizer), { start: 3, end: 28, owner: null, signal: controller.signal }))
    expect(err).toBeInstanceOf(BracketFailure)
    expect(err).toMatchObject({ code: 'cancelled', compactionId: 'direct-1', closed: true, message: 'caller gave up' })
    expect((err as Error).cause).toBe(reason)
    expect(b.written()).toEqual(['compaction/start', 'compaction/end'])
    expect(event(b, 'compaction/end').data).toEqual({ compactionId: 'direct-1', turn: null, error: 'caller gave up' })
  })

  it('a failure that closed cleanly has no original; a failed close names both errors', () => {
    const cause = new Error('summary failed')
    const closed = new BracketFailure('summary', 'c1', true, cause)
    expect(closed).toMatchObject({ name: 'BracketFailure', code: 'summary', compactionId: 'c1', closed: true, message: 'summary failed', cause })
    expect(closed.original).toBeUndefined()
    const orphan = new BracketFailure('commit', 'c2', false, new Error('disk'), cause)
    expect(orphan).toMatchObject({ code: 'commit', closed: false, message: 'failed to close compaction c2: disk (after: summary failed)', original: cause })
  })
})

describe('§6.8 in-bracket offload', () => {
  it('an offload request after the bracket signal aborted fails the bracket without offloading', async () => {
    const controller = new AbortController()
    let calls = 0
    const summarizer: Summarizer = {
      summarize: async () => {
        calls++
        if (calls > 1) return ok()
        controller.abort(new Error('turn aborted'))
        throw offloadRequired()
      },
    }
    const b = bench({ engine: { summarizer } })
    const err = await rejectionOf(b.engine.compactRegion(3, 42, controller.signal))
    expect(err).toMatchObject({ name: 'CompactionError', code: 'summary', message: 'too many images' })
    expect(b.written()).toEqual(FAILED_BRACKET)
    expect(calls).toBe(1)
    expect(b.log.offloadedIndexes(28)).toEqual(new Set([0]))
  })

  it('re-preparing after an offload finds a middle node replaced → changed, naming the nodes found', async () => {
    let calls = 0
    const summarizer: Summarizer = {
      summarize: async () => {
        if (++calls > 1) return ok()
        b.log.append(foreignPrune(b))
        throw offloadRequired()
      },
    }
    const b: Bench = bench({ engine: { summarizer } })
    const err = await rejectionOf(b.engine.compactRegion(3, 42))
    expect(err).toMatchObject({
      name: 'CompactionError', code: 'changed', closed: true,
      message: 'the selected span 3…42 changed: expected nodes [3, 10, 15, 23, 28, 37, 42], found [3, 10, 52, 23, 28, 37, 42]',
    })
    expect((err as Error).cause).toMatchObject({ name: 'SurfaceChangedError', code: 'SURFACE_CHANGED' })
    expect(b.written()).toEqual(['compaction/start', 'tool/result', 'compaction/summary-error', 'image/offload', 'compaction/end'])
    expect(calls).toBe(1)
  })

  it('re-preparing after an offload finds the first node shadowed → changed, found nothing', async () => {
    let calls = 0
    const summarizer: Summarizer = {
      summarize: async () => {
        if (++calls > 1) return ok()
        b.log.append(foreignReplace(b, 3, 10))
        throw offloadRequired()
      },
    }
    const b: Bench = bench({ engine: { summarizer } })
    const err = await rejectionOf(b.engine.compactRegion(3, 42))
    expect(err).toMatchObject({ code: 'changed', message: 'the selected span 3…42 changed: expected nodes [3, 10, 15, 23, 28, 37, 42], found []' })
  })

  it('re-preparing after an offload finds the span shorter → changed, naming what is there now', async () => {
    let calls = 0
    const summarizer: Summarizer = {
      summarize: async () => {
        if (++calls > 1) return ok()
        b.log.append(foreignReplace(b, 10, 15))
        throw offloadRequired()
      },
    }
    const b: Bench = bench({ engine: { summarizer } })
    const err = await rejectionOf(b.engine.compactRegion(3, 42))
    expect(err).toMatchObject({ code: 'changed', message: 'the selected span 3…42 changed: expected nodes [3, 10, 15, 23, 28, 37, 42], found [3, 52, 23, 28, 37, 42]' })
  })

  it('a manual bracket re-prepares past a foreign append after its span and commits the offloaded span', async () => {
    let calls = 0
    const summarizer: Summarizer = {
      summarize: async () => {
        if (++calls > 1) return ok()
        m.log.append(user('late', 'queued context'))
        throw offloadRequired()
      },
    }
    const m: Bench = bench({ prefix: BETWEEN_TURNS_2_3, engine: { summarizer } })
    const result = await m.engine.compactNow({ admission: admission() })
    expect(result?.shadowedSeqs).toEqual([3, 10, 15, 23, 28])
    expect(m.written()).toEqual(['compaction/start', 'user/message', 'compaction/summary-error', 'image/offload', ...COMMITTED.slice(1)])
    expect(event(m, 'image/offload').data).toEqual({ targets: [{ seq: 28, imageIndexes: [1] }] })
    expect(calls).toBe(2)
    expectBracketInvariants(m.log)
  })
})

describe('rules the fault tests leave unjudged (second mutation pass)', () => {
  it('FAULT-30: an offload request over a region without images is not retried; the summary-error keeps offloadImages', async () => {
    const b = bench({ events: openSession(user('u1', 'a'.repeat(2000)), assistant('a1', [text('ok')])), engine: { summarizer: { summarize: async () => { throw offloadRequired() } } } })
    const err = await rejectionOf(b.engine.compactRegion(2, 2))
    expect(err).toMatchObject({ name: 'CompactionError', code: 'summary', closed: true, message: 'too many images' })
    expect(b.written()).toEqual(FAILED_BRACKET)
    expect(event(b, 'compaction/summary-error').data.failure).toEqual({ message: 'too many images', code: 'IMAGE_OFFLOAD_REQUIRED', offloadImages: 1 })
    expect(event(b, 'compaction/end').data).toEqual({ compactionId: 'cmp-1', turn: 1, error: 'too many images' })
  })

  it('§7.3: without a system head at position 0 the summarizer input has no systemHead (and no tools without a header)', async () => {
    const inputs: SummaryInput[] = []
    const events = openSession(user('u1', 'a'.repeat(400)), assistant('a1', [text('ok')]), user('u2', 'b'.repeat(2000)), assistant('a2', [text('ok')]))
    const b = bench({ events, engine: { summarizer: returning(ok(), inputs) } })
    expect(b.log.nodes).toEqual([2, 3, 4, 5])
    await b.engine.compactRegion(4, 4)
    expect(inputs).toHaveLength(1)
    expect(Object.keys(inputs[0] as SummaryInput)).toEqual(['messages'])
    expect((inputs[0] as SummaryInput).messages.map((m) => m.id)).toEqual(['u2'])
  })

  it('§7.6 whole-surface: a surface append at the tail while the summary runs fails changed, naming the new node', async () => {
    const summarizer: Summarizer = { summarize: async () => { b.log.append(user('late', 'queued context')); return ok() } }
    const b: Bench = bench({ engine: { summarizer } })
    expect(b.log.nodes).toHaveLength(10)
    const err = await rejectionOf(b.engine.compactRegion(3, 42))
    expect(err).toMatchObject({ name: 'CompactionError', code: 'changed', closed: true })
    expect((err as Error).message).toMatch(/^the surface changed while the summary was prepared: at position 10 expected nothing, found node 52 \(\d+ tokens\)$/)
    expect(b.written()).toEqual(['compaction/start', 'user/message', 'compaction/end'])
  })

  it('§7.6 selected-span: a span whose start was shadowed meanwhile fails changed with the §7.2 reason as cause', async () => {
    const summarizer: Summarizer = { summarize: async () => { m.log.append(foreignReplace(m, 3, 10)); return ok() } }
    const m: Bench = bench({ prefix: BETWEEN_TURNS_2_3, engine: { summarizer } })
    const err = await rejectionOf(m.engine.compactNow({ admission: admission() }))
    expect(err).toMatchObject({
      name: 'ManualCompactionError', code: 'changed',
      message: 'changed: the selected span 3…28 changed: start seq 3 not found in surface (it was shadowed)',
    })
    const changed = (err as Error).cause as Error
    expect(changed).toMatchObject({ name: 'SurfaceChangedError', code: 'SURFACE_CHANGED' })
    expect(changed.cause).toBeInstanceOf(RegionError)
    expect(changed.cause).toMatchObject({ code: 'not-a-node' })
    expect(m.written()).toEqual(['compaction/start', 'user/message', 'compaction/end'])
  })

  it('§7.7 owner pre-validation: a turn that ended while its bracket summarized is a commit failure; nothing is replaced', async () => {
    const turnEnd: EventDraft = { time: T, type: 'turn/end', data: { turn: 3, reason: { kind: 'completed' } } }
    const summarizer: Summarizer = { summarize: async () => { b.log.append(turnEnd); return ok() } }
    const b: Bench = bench({ engine: { summarizer } })
    const before = [...b.log.nodes]
    const err = await rejectionOf(b.engine.compactRegion(3, 42))
    expect(err).toMatchObject({ name: 'CompactionError', code: 'commit', message: 'compaction cmp-1 is owned by turn 3, but the open turn is null' })
    expect((err as Error).cause).toMatchObject({ name: 'BracketOwnerError', code: 'OWNER' })
    expect(b.log.nodes).toEqual(before)
    // §7.8: the one close attempt records the error (the validator does not forbid an end after the turn ended).
    expect(b.written()).toEqual(['compaction/start', 'turn/end', 'compaction/end'])
    expect(err).toMatchObject({ closed: true })
  })

  it('§8.4 step 5: one blank text block beside a non-blank one is a valid summary', async () => {
    const b = bench({ events: openSession(user('u1', 'a'.repeat(2000)), assistant('a1', [text('ok')])), engine: { summarizer: returning({ summary: [text(' '), text('kept')], provider: 'p', model: 'm' }) } })
    const result = await b.engine.compactRegion(2, 2)
    expect(result.summary).toEqual([text(' '), text('kept')])
    expect(b.written()).toEqual(COMMITTED)
  })
})
