/**
 * HARD-5 (hardened `oversizedUserText`, `src/checker/hardened-text.ts`) on small built logs. The rule on gives
 * maxWindowRatio 0.5, so a 1,000-token route context has the bound floor(0.5 × 1000) = 500 and a 4,000-token one
 * 2,000; a text block of n characters is priced ceil(n / 4) + 4 (§2.2): 2,400 characters = 604 tokens, 1,984 =
 * 500, 1,800 = 454. The read-only path of block i of message m is `user-text/<m>.<i>.txt`. Every expectation is
 * written out by hand. It pins:
 * - what a `text/offload` may name: a live `user/message` (not a log-only seq, not another node type), appended
 *   (not a checkpoint), a text block (not out of range, not an image), with each message;
 * - the logged tokens / bound / path messages, the spurious-projection rule against the bound in force (or the
 *   logged bound when the route context has no window);
 * - the dispatch judgement: only above the bound (`>`), once per block, every block of a message, only at the
 *   first chunk of an attempt, no judgement without a window or without any route context;
 * - candidates: only appended user text blocks (not checkpoints, not images), nodes that left the surface are
 *   dropped, summary spans that name other nodes;
 * - the summary judgement on `compaction/summary` and `compaction/summary-error`, with their messages.
 */
import { Seq, type LogEvent, type ImageBlock, type RunManifest, type TextBlock } from '@compaction-sim/core'
import { LogBuilder } from '@compaction-sim/fixtures'
import { describe, expect, it } from 'vitest'
import { checkLog } from '../../src/checker/run.ts'
import { reportOf, violationLines } from './support.ts'

const ROUTE = { provider: 'mock', model: 'mock-1k', contextWindow: 1000 }
const manifest = (route: { provider: string; model: string; contextWindow?: number } = ROUTE): RunManifest =>
  ({ scenario: 'hardened-text-mutants', compaction: { hardening: { oversizedUserText: true } } as never, routes: [route as never], faults: [] })

const text = (value: string): TextBlock => ({ type: 'text', text: value })
/** Prose of exactly `length` characters. */
const filler = (label: string, length: number): string => `${label} `.repeat(Math.ceil(length / (label.length + 1))).slice(0, length)
/** An image block (its structural price is far above 20 tokens). */
const image = (digit: string, name: string): ImageBlock => ({
  type: 'image', attachment: { attachmentId: `sha256:${digit.repeat(64)}`, mediaType: 'image/png', bytes: 48213, width: 1024, height: 768, name },
} as never)
const PASTE = filler('paste', 2400)

/** HARD-5's `id@seq: message` lines; a check that throws fails the test (no internal error is expected). */
async function hard5(events: LogEvent[], route?: { provider: string; model: string; contextWindow?: number }): Promise<string[]> {
  const r = reportOf(await checkLog(events, { dialect: 'seed', manifest: manifest(route) }))
  expect(r.internalErrors).toEqual([])
  return violationLines(r, 'HARD-5')
}

/** A text/offload of block `blockIndex` of `seq` with the given data. */
function offload(b: LogBuilder, seq: number, blockIndex: number, tokens: number, bound: number, path: string): Seq {
  return b.add('text/offload', { seq: Seq(seq), blockIndex, tokens, bound, path } as never)
}

/** Open turn 1 / step 1, then the user message `content` (`m-user-1`), the header and the route context. */
function opening(content: TextBlock[] | Parameters<LogBuilder['user']>[0], route: { provider: string; model: string; contextWindow?: number } = ROUTE): { b: LogBuilder; user: number; context: number } {
  const b = new LogBuilder({ route: route as never })
  b.turnStart()
  b.stepStart()
  const user = b.user(content as never, 'm-user-1')
  b.header('initial')
  const context = b.context()
  return { b, user, context }
}

function finish(b: LogBuilder): { firstChunk: number; events: LogEvent[] } {
  const firstChunk = b.next
  b.reply([text('Done.')], 'm-asst-1')
  b.stepEnd()
  b.turnEnd()
  return { firstChunk, events: b.events }
}

describe('HARD-5 — what a text/offload may name', () => {
  it('refuses a seq that is not a live surface node, and a live node that is no user/message', async () => {
    const { b, context } = opening([text(PASTE)])
    const o1 = offload(b, context, 0, 604, 500, 'user-text/m-user-1.0.txt')
    const { firstChunk, events } = finish(b)
    expect(await hard5(events)).toEqual([
      `HARD-5@${o1}: text/offload names #${context}, which is not a live surface node, not a live user/message`,
      `HARD-5@${firstChunk}: the conversation request dispatched here carries text block 0 of user/message #2 (604 tokens > bound 500) without a text/offload before it`,
    ])

    const two = opening([text('abcd')])
    two.b.reply([text('Done.')], 'm-asst-1')
    const asst = two.b.last
    const o2 = offload(two.b, asst, 0, 6, 500, 'user-text/m-asst-1.0.txt')
    two.b.stepEnd()
    two.b.turnEnd()
    expect(await hard5(two.b.events)).toEqual([`HARD-5@${o2}: text/offload names #${asst}, which is assistant/message, not a live user/message`])
  })

  it('refuses a checkpoint (a replacement user/message)', async () => {
    const b = new LogBuilder({ route: ROUTE })
    b.header('initial')
    b.context()
    const u1 = b.user('abcd', 'm-user-1')
    b.user('efgh', 'm-user-2')
    const { checkpoint } = b.compact({ compactionId: 'cmp-1', turn: null, shadowed: [Seq(u1)], summaryText: PASTE })
    const o = offload(b, checkpoint, 1, 604, 500, 'user-text/ck-cmp-1.1.txt')
    expect(await hard5(b.events)).toEqual([`HARD-5@${o}: text/offload names #${checkpoint}, a checkpoint (a replacement), not user-authored text`])
  })

  it('refuses a block index out of range and an image block', async () => {
    const { b, user } = opening([text(PASTE), image('a', 'shot.png')])
    const o1 = offload(b, user, 5, 604, 500, 'user-text/m-user-1.5.txt')
    const o2 = offload(b, user, 1, 604, 500, 'user-text/m-user-1.1.txt')
    const o3 = offload(b, user, 0, 604, 500, 'user-text/m-user-1.0.txt')
    expect(o3).toBe(o2 + 1)
    const { events } = finish(b)
    expect(await hard5(events)).toEqual([
      `HARD-5@${o1}: text/offload names block 5 of #${user}, which is out of range, not text`,
      `HARD-5@${o2}: text/offload names block 1 of #${user}, which is a image block, not text`,
    ])
  })
})

describe('HARD-5 — the logged figures of a text/offload', () => {
  it('reports a wrong tokens figure and a wrong path, with their messages', async () => {
    const { b, user } = opening([text(PASTE)])
    const o = offload(b, user, 0, 9, 500, 'user-text/other.0.txt')
    const { events } = finish(b)
    expect(await hard5(events)).toEqual([
      `HARD-5@${o}: text/offload logs 9 tokens for block 0 of #${user}, whose price is 604`,
      `HARD-5@${o}: text/offload path "user-text/other.0.txt" is not the read-only path "user-text/m-user-1.0.txt" of the block`,
    ])
  })

  it('reports a logged bound that is not the one in force, and judges spuriousness against the bound in force', async () => {
    const { b, user } = opening([text(filler('paste', 1800))]) // 454 tokens: above the logged 400, not above 500
    const o = offload(b, user, 0, 454, 400, 'user-text/m-user-1.0.txt')
    const { events } = finish(b)
    expect(await hard5(events)).toEqual([
      `HARD-5@${o}: text/offload logs bound 400; the route context in force gives 500`,
      `HARD-5@${o}: spurious text/offload: block 0 of #${user} is 454 tokens, not above the bound 500`,
    ])
  })

  it('judges against the logged bound when the route context has no window', async () => {
    const route = { provider: 'mock', model: 'mock-nw' }
    const { b, user } = opening([text(PASTE)], route)
    const o = offload(b, user, 0, 604, 700, 'user-text/m-user-1.0.txt')
    const { events } = finish(b)
    expect(await hard5(events, route)).toEqual([`HARD-5@${o}: spurious text/offload: block 0 of #${user} is 604 tokens, not above the bound 700`])
  })
})

describe('HARD-5 — the conversation request', () => {
  it('reports each oversized text block once, with its message, and nothing at or below the bound', async () => {
    const { b, user } = opening([text(PASTE), text(filler('long', 2000)), text(filler('edge', 1984)), text('abcd')])
    const { firstChunk, events } = finish(b)
    expect(await hard5(events)).toEqual([
      `HARD-5@${firstChunk}: the conversation request dispatched here carries text block 0 of user/message #${user} (604 tokens > bound 500) without a text/offload before it`,
      `HARD-5@${firstChunk}: the conversation request dispatched here carries text block 1 of user/message #${user} (504 tokens > bound 500) without a text/offload before it`,
    ])
  })

  it('judges no request when the route context has no window, or when there is no route context', async () => {
    const route = { provider: 'mock', model: 'mock-nw' }
    expect(await hard5(finish(opening([text(PASTE)], route).b).events, route)).toEqual([])
    const b = new LogBuilder({ route: ROUTE })
    b.turnStart()
    b.stepStart()
    b.user([text(PASTE)], 'm-user-1')
    b.header('initial')
    expect(await hard5(finish(b).events)).toEqual([])
  })

  it('judges only the first chunk of an attempt (a later, smaller route context does not re-judge the stream)', async () => {
    const route = { provider: 'mock', model: 'mock-1k', contextWindow: 4000 }
    const { b } = opening([text(PASTE)], route)
    const chunks: Seq[] = []
    const chunk = (c: unknown): void => { chunks.push(b.add('assistant/chunk', { turn: 1, step: 1, chunk: c } as never)) }
    chunk({ type: 'block-start', index: 0, blockType: 'text' })
    b.add('request/context', { provider: 'mock', model: 'mock-1k', contextWindow: 1000 })
    chunk({ type: 'text-delta', index: 0, text: 'Done.' })
    chunk({ type: 'block-end', index: 0, block: text('Done.') })
    chunk({ type: 'finish', reason: { kind: 'stop' } })
    expect(await hard5(b.events, route)).toEqual([])
  })

  it('ignores a chunk before any dispatch (no step open)', async () => {
    const b = new LogBuilder({ route: ROUTE })
    b.header('initial')
    b.context()
    b.add('assistant/chunk', { turn: 1, step: 1, chunk: { type: 'finish', reason: { kind: 'stop' } } } as never)
    expect(await hard5(b.events)).toEqual([])
  })

  it('does not count image blocks of a user message as text', async () => {
    const route = { provider: 'mock', model: 'mock-40', contextWindow: 40 } // bound 20; the image block prices far above it
    const { b } = opening([image('a', 'shot.png')], route)
    expect(await hard5(finish(b).events, route)).toEqual([])
  })

  it('does not count a checkpoint\'s text, and drops a message that left the surface', async () => {
    const b = new LogBuilder({ route: { provider: 'mock', model: 'mock-1k', contextWindow: 4000 } })
    b.header('initial')
    b.context() // bound 2000: the 604-token paste is judged fine by the summary
    const u1 = b.user([text(PASTE)], 'm-user-1')
    b.user('efgh', 'm-user-2')
    b.compact({ compactionId: 'cmp-1', turn: null, shadowed: [Seq(u1)], summaryText: PASTE })
    b.add('request/context', { provider: 'mock', model: 'mock-1k', contextWindow: 1000 }) // bound 500
    b.turnStart()
    b.stepStart()
    expect(await hard5(finish(b).events)).toEqual([])
  })
})

describe('HARD-5 — the summary request', () => {
  it('reports an oversized block of the span of compaction/summary and compaction/summary-error', async () => {
    for (const error of [false, true]) {
      const b = new LogBuilder({ route: ROUTE })
      b.header('initial')
      b.context()
      const user = b.user([text(PASTE)], 'm-user-1')
      b.user('abcd', 'm-user-2')
      let at: Seq
      if (error) {
        b.start('cmp-1', null)
        at = b.summaryError('cmp-1', [Seq(user)], { message: 'server error', code: 'SERVER' })
        b.end('cmp-1', null, { error: 'server error' })
      } else {
        at = b.compact({ compactionId: 'cmp-1', turn: null, shadowed: [Seq(user)], summaryText: 'S.' }).summary
      }
      const type = error ? 'compaction/summary-error' : 'compaction/summary'
      expect(await hard5(b.events)).toEqual([
        `HARD-5@${at}: the summary request of this ${type} carries text block 0 of user/message #${user} (604 tokens > bound 500) without a text/offload before it`,
      ])
    }
  })

  it('passes a span whose nodes carry no text block', async () => {
    const b = new LogBuilder({ route: ROUTE })
    b.header('initial')
    b.context()
    const u1 = b.user([image('a', 'shot.png')], 'm-user-1')
    b.user('abcd', 'm-user-2')
    b.compact({ compactionId: 'cmp-1', turn: null, shadowed: [Seq(u1)], summaryText: 'S.' })
    expect(await hard5(b.events)).toEqual([])
  })
})
