/**
 * Survivors of the mutation run (`pnpm mutate`, issue #18) in compaction/bracket.ts and compaction/summarizer.ts
 * that the other bracket and summarizer tests leave unjudged: HARD-3's reliefRatio at exact equality, an empty
 * tools list in the summarizer input, a whole-surface §7.6 change that keeps every price, and the §8.4 output
 * processing's key set, its non-assembly errors and the tool-result-only descent of the image search.
 * Prices follow §2.2 (`ceil(len / 4)` per text, 4 per block, 4 per message), worked out by hand.
 */
import { describe, expect, it } from 'vitest'
import { BracketFailure, runBracket, type BracketEnvironment, type BracketRequest } from '../../src/compaction/bracket.ts'
import { SummarizerError } from '../../src/compaction/errors.ts'
import { containsImage, summaryFromChunks, type Summarizer, type SummaryInput, type SummaryOutput } from '../../src/compaction/summarizer.ts'
import { InvariantError } from '../../src/errors.ts'
import { EventLog } from '../../src/log/event-log.ts'
import type { EventDraft, SessionEvent } from '../../src/log/events.ts'
import type { ContentBlock, StreamChunk } from '../../src/log/llm.ts'
import { TokenMeter } from '../../src/meter/meter.ts'
import { harnessReadOnlyPath } from '../../src/offload/projection.ts'
import { rejectionOf } from './support/bench.ts'

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

/**
 * Turn 1 step 1 open, then (after an optional header) u1 (400 chars: 108), a1 ('ok': 9), u2 (200 chars: 58),
 * a2 (9), u3 (120 chars: 38), a3 (9): a 231-token surface without a system head.
 */
function session(header?: EventDraft): EventLog {
  const drafts: EventDraft[] = [
    { time: T, type: 'turn/start', data: { turn: 1 } }, { time: T, type: 'step/start', data: { turn: 1, step: 1 } },
    ...(header === undefined ? [] : [header]),
    user('u1', [text('a'.repeat(400))]), assistant('a1'), user('u2', [text('b'.repeat(200))]), assistant('a2'),
    user('u3', [text('c'.repeat(120))]), assistant('a3'),
  ]
  return EventLog.fromEvents(drafts.map((d, seq) => ({ ...d, seq }) as SessionEvent), { dialect: 'seed' })
}

const ok = (t = 'bbbb'): SummaryOutput => ({ summary: [text(t)], provider: 'template', model: 'v1' })

function returning(output: SummaryOutput, inputs: SummaryInput[] = []): Summarizer {
  return { summarize: async (input) => { inputs.push(input); return output } }
}

function env(log: EventLog, summarizer: Summarizer): BracketEnvironment {
  return {
    log, meter: new TokenMeter(log, { dialect: log.dialect }), summarizer, clock: () => T, newCompactionId: () => 'c1', newMessageId: () => 'm-ck',
    append: (d) => log.append(d), readOnlyPath: harnessReadOnlyPath,
  }
}

const run = (log: EventLog, summarizer: Summarizer, request: Omit<BracketRequest, 'owner'>): Promise<unknown> =>
  runBracket(env(log, summarizer), { owner: 'current-turn', ...request })

const written = (log: EventLog, from: number): string[] => log.events.slice(from).map((e) => e.type)

describe('HARD-3 reliefRatio at exact equality', () => {
  it('a 90-token checkpoint over its 86-token budget is kept when it is exactly reliefRatio × 117 (90 / 117)', async () => {
    // Span 2…3 (u1, a1) shadows 108 + 9 = 117; the 'bbbb' checkpoint prices 90; rest 114, threshold 200 → allowed 86.
    const reliefRatio = 90 / 117
    expect(reliefRatio * 117).toBe(90)
    const log = session()
    const result = await run(log, returning(ok()), { start: 2, end: 3, hardened: { checkpointBudget: { thresholdTokens: 200, marginTokens: 0, reliefRatio } } })
    expect(result).toMatchObject({ shadowedSeqs: [2, 3], shadowedTokenCount: 117, summarySeq: 9, endSeq: 11 })
    expect(written(log, 8)).toEqual(COMMITTED)
  })
})

describe('§7.3 summarizer input: tools', () => {
  it('a header in force with an empty tools list gives the input no tools key', async () => {
    const header: EventDraft = {
      time: T, type: 'request/header', data: { header: { config: { provider: 'mock', model: 'mock-4k' }, tools: [] }, reason: 'initial' },
    }
    const log = session(header) // the header is seq 2: the nodes are 3 … 8
    const inputs: SummaryInput[] = []
    await run(log, returning(ok(), inputs), { start: 3, end: 4 })
    expect(inputs).toHaveLength(1)
    expect(Object.keys(inputs[0] as SummaryInput)).toEqual(['messages'])
    expect(written(log, 9)).toEqual(COMMITTED)
  })

  it('a header with one tool hands that list on', async () => {
    const tool = { name: 't', description: 'd', parameters: {} }
    const header: EventDraft = {
      time: T, type: 'request/header', data: { header: { config: { provider: 'mock', model: 'mock-4k' }, tools: [tool] }, reason: 'initial' },
    }
    const log = session(header)
    const inputs: SummaryInput[] = []
    await run(log, returning(ok(), inputs), { start: 3, end: 4 })
    expect(Object.keys(inputs[0] as SummaryInput)).toEqual(['tools', 'messages'])
    expect(inputs[0]?.tools).toEqual([tool])
  })
})

describe('§7.6 whole-surface revalidation compares seqs, not only prices', () => {
  it('a node after the span replaced by a node of the same price (9 tokens) fails changed, naming both nodes', async () => {
    const log = session()
    const summarizer: Summarizer = {
      summarize: async () => {
        // a3 ('ok', 9 tokens) at seq 7 replaced by a foreign user message 'no': 4 + 4 + ceil(2 / 4) = 9 tokens.
        log.append({
          time: T, type: 'user/message', data: { id: 'foreign' as never, role: 'user', content: [text('no')], source: { kind: 'plugin', plugin: 'foreign' } },
          surfaceOp: { op: 'replace', start: 7 as never, end: 7 as never }, sourceEventSeqs: [7 as never],
        })
        return ok()
      },
    }
    const err = await rejectionOf(run(log, summarizer, { start: 2, end: 3 }))
    expect(err).toBeInstanceOf(BracketFailure)
    expect(err).toMatchObject({
      code: 'changed', closed: true,
      message: 'the surface changed while the summary was prepared: at position 5 expected node 7 (9 tokens), found node 9 (9 tokens)',
    })
    expect(written(log, 8)).toEqual(['compaction/start', 'user/message', 'compaction/end'])
    expect(log.nodes).toEqual([2, 3, 4, 5, 6, 9])
  })
})

describe('summaryFromChunks (§8.4): keys and errors', () => {
  const start: StreamChunk = { type: 'block-start', index: 0, blockType: 'text' }
  const end: StreamChunk = { type: 'block-end', index: 0, block: { type: 'text', text: 'sum' } }
  const stop: StreamChunk = { type: 'finish', reason: { kind: 'stop' } }

  it('without a usage chunk (and without a cap) the output has no usage or maxTokens key', () => {
    const output = summaryFromChunks([start, end, stop], { provider: 'p', model: 'm' })
    expect(output).toStrictEqual({
      summary: [{ type: 'text', text: 'sum' }], rawOutput: [{ type: 'text', text: 'sum' }], llmStreamCall: true, provider: 'p', model: 'm',
    })
    expect(Object.keys(output)).toEqual(['summary', 'rawOutput', 'llmStreamCall', 'provider', 'model'])
  })

  it('an error that is not an AssemblyError (a block-end without its block) is rethrown as it is', () => {
    const broken = { type: 'block-end', index: 0 } as unknown as StreamChunk
    let error: unknown
    try {
      summaryFromChunks([start, broken, stop], { provider: 'p', model: 'm' })
    } catch (err) {
      error = err
    }
    expect(error).toBeInstanceOf(TypeError)
    expect(error).not.toBeInstanceOf(SummarizerError)
  })
})

describe('summaryFromChunks (§8.4): a finish reason outside the union', () => {
  it('is an invariant failure naming the reason, even after a good text block', () => {
    const chunks = [
      { type: 'block-start', index: 0, blockType: 'text' }, { type: 'block-end', index: 0, block: { type: 'text', text: 'sum' } },
      { type: 'finish', reason: { kind: 'paused' } },
    ] as unknown as StreamChunk[]
    let error: unknown
    try {
      summaryFromChunks(chunks, { provider: 'p', model: 'm' })
    } catch (err) {
      error = err
    }
    expect(error).toBeInstanceOf(InvariantError)
    expect((error as Error).message).toBe('unexpected finish reason: {"kind":"paused"}')
  })
})

describe('containsImage (§8.4 step 3) descends into tool-result blocks only', () => {
  it('an image inside the content array of a block that is not a tool result is not found', () => {
    const custom = { type: 'x-container', content: [IMAGE] } as unknown as ContentBlock
    expect(containsImage([custom])).toBe(false)
    expect(containsImage([text('a'), custom])).toBe(false)
  })

  it('the same image inside a tool result is found', () => {
    const nested = { type: 'tool-result', toolCallId: 'c', content: [IMAGE], isError: false } as unknown as ContentBlock
    expect(containsImage([nested])).toBe(true)
  })
})
