/**
 * The summary route's summarizers (issue #15, `provider/summarizers.ts`): `builtin` is the deterministic
 * summary, `fixed` writes exactly n region-derived characters, `ratio` hits floor(ratio × S) framed (§7.5),
 * `script` serves attempt k (the last repeating) with its blocks, finish, chunking and latency, and every
 * kind is capped at `max_tokens` as the route's tokenizer counts it (reasoning included).
 */
import { describe, expect, it } from 'vitest'
import { CallId, COMPACTION_INSTRUCTION } from '@compaction-sim/core'
import { deterministicSummary, framedPrice, regionOf, regionPrice } from '../../src/provider/deterministic-summary.ts'
import {
  BUILTIN_SUMMARIZER, capReply, PRESET_SPECS, REASONING_ONLY_TEXT, summaryFiller, summaryOutcome, summaryReply, type SummarizerSpec,
} from '../../src/provider/summarizers.ts'
import { createTokenizer, type ProviderTokenizer } from '../../src/provider/tokenizers.ts'
import type { DecodedMessage, PlannedReply } from '../../src/provider/types.ts'

const t = (text: string) => ({ type: 'text' as const, text })
const heuristic = createTokenizer('heuristic')
/** A tokenizer that prices one token per UTF-16 unit: the cap must follow the tokenizer it is given. */
const perChar: ProviderTokenizer = { ...heuristic, textTokens: (text) => text.length }

function requestOf(body: DecodedMessage[], maxTokens?: number): { messages: DecodedMessage[]; maxTokens?: number } {
  const messages: DecodedMessage[] = [
    { role: 'system', content: [t('sys')] }, ...body, { role: 'user', content: [t(COMPACTION_INSTRUCTION)] },
  ]
  return maxTokens === undefined ? { messages } : { messages, maxTokens }
}

const regionA: DecodedMessage[] = [
  { role: 'user', content: [t('Fix the flaky test in packages/core/test/log.test.ts; it times out on CI.')] },
  { role: 'assistant', content: [t('Reading it.'), { type: 'tool-call', id: CallId('c1'), name: 'read_file', arguments: '{"path":"a.ts"}' }] },
  { role: 'user', content: [{ type: 'tool-result', toolCallId: CallId('c1'), content: [t(`${'line of code\n'.repeat(200)}Error: timeout`)] }] },
  { role: 'assistant', content: [t('The timeout is 50 ms; raising it to 500 ms.')] },
]
const regionB: DecodedMessage[] = [
  { role: 'user', content: [t('Rename the config key outDir to outputDir everywhere.')] },
  { role: 'assistant', content: [t(`Done: ${'renamed in one more file. '.repeat(80)}`)] },
]

const texts = (reply: PlannedReply, type: string): string[] =>
  reply.blocks.filter((b) => b.type === type).map((b) => String((b as { text?: unknown }).text))

describe('summarizers', () => {
  it('builtin answers the deterministic summary; summaryOutcome wraps it in a reply outcome', () => {
    const request = requestOf(regionA)
    expect(summaryReply(BUILTIN_SUMMARIZER, request, 1, heuristic)).toEqual({ blocks: [t(deterministicSummary(request))] })
    const outcome = summaryOutcome(BUILTIN_SUMMARIZER, { ...request, index: 0 } as never, 1, heuristic)
    expect(outcome).toEqual({ kind: 'reply', reply: { blocks: [t(deterministicSummary(request))] } })
  })

  it('fixed writes exactly n characters, derived from the region (two regions differ), starting with a section heading', () => {
    const a = texts(summaryReply({ kind: 'fixed', chars: 5000 }, requestOf(regionA), 1, heuristic), 'text')[0] ?? ''
    const b = texts(summaryReply({ kind: 'fixed', chars: 5000 }, requestOf(regionB), 1, heuristic), 'text')[0] ?? ''
    expect([a.length, b.length]).toEqual([5000, 5000])
    expect(a).not.toBe(b)
    expect(a.startsWith('## Primary Request and Intent')).toBe(true)
    expect(a).toContain('raising it to 500 ms')
    expect(summaryFiller(requestOf(regionA).messages, 1)).toBe('#')
  })

  it('fixed never ends in half a surrogate pair', () => {
    const emoji: DecodedMessage[] = [{ role: 'user', content: [t('😀'.repeat(400))] }]
    const messages = requestOf(emoji).messages
    for (let n = 400; n < 420; n++) {
      const text = summaryFiller(messages, n)
      expect(text.length).toBe(n)
      expect(/[\uD800-\uDBFF]$/.test(text)).toBe(false)
    }
  })

  it.each([0.3, 0.9, 1, 1.1, 2.5])('ratio %s: the framed summary prices floor(ratio × S) of the region price S', (ratio) => {
    const request = requestOf(regionA)
    const source = regionPrice(regionOf(request.messages))
    const text = texts(summaryReply({ kind: 'ratio', ratio }, request, 1, heuristic), 'text')[0] ?? ''
    expect(framedPrice(text)).toBe(Math.floor(ratio * source))
    // The shrink rule (§7.5) refuses framed ≥ S exactly when ratio ≥ 1.
    expect(framedPrice(text) < source).toBe(ratio < 1)
  })

  it('ratio below the frame price yields the one-character summary', () => {
    const request = requestOf([{ role: 'user', content: [t('hi')] }])
    expect(texts(summaryReply({ kind: 'ratio', ratio: 0.01 }, request, 1, heuristic), 'text')).toEqual(['#'])
  })

  it('script serves attempt k in emission order (reasoning, text, images, tool calls); past the last, the last repeats', () => {
    const spec: SummarizerSpec = {
      kind: 'script',
      attempts: [
        { reasoning: 'thinking', text: 'first', images: 2, toolCalls: [{ name: 'noop', arguments: '{}' }] },
        { text: 'second', finish: 'max-tokens', latencyMs: 1500 },
      ],
    }
    const request = requestOf(regionA)
    const first = summaryReply(spec, request, 1, heuristic)
    expect(first.blocks.map((b) => b.type)).toEqual(['reasoning', 'text', 'image', 'image', 'tool-call'])
    expect(first.blocks.at(-1)).toEqual({ type: 'tool-call', id: 'call_summary_1_1', name: 'noop', arguments: '{}' })
    expect(first.finish).toBeUndefined() // the wire default: tool-calls, since it has a call
    expect(summaryReply(spec, request, 2, heuristic)).toEqual({ blocks: [t('second')], finish: 'max-tokens', latencyMs: 1500 })
    expect(summaryReply(spec, request, 7, heuristic)).toEqual(summaryReply(spec, request, 2, heuristic))
  })

  it('script chunks become the reply delta size: ceil(content chars / chunks), at least 2', () => {
    const reply = summaryReply({ kind: 'script', attempts: [{ reasoning: 'r'.repeat(30), text: 't'.repeat(70), chunks: 4 }] }, requestOf(regionA), 1, heuristic)
    expect(reply.deltaChars).toBe(25)
    const tiny = summaryReply({ kind: 'script', attempts: [{ text: 'abc', chunks: 10 }] }, requestOf(regionA), 1, heuristic)
    expect(tiny.deltaChars).toBe(2)
  })

  it('presets: reasoning-only is one reasoning block, tool-call one tool call, builtin the builtin', () => {
    const request = requestOf(regionA)
    expect(summaryReply(PRESET_SPECS['reasoning-only'], request, 1, heuristic)).toEqual({ blocks: [{ type: 'reasoning', text: REASONING_ONLY_TEXT }] })
    expect(summaryReply(PRESET_SPECS['tool-call'], request, 3, heuristic).blocks).toEqual([
      { type: 'tool-call', id: 'call_summary_3_1', name: 'write_checkpoint', arguments: '{"sections":8}' },
    ])
    expect(PRESET_SPECS.builtin).toBe(BUILTIN_SUMMARIZER)
  })
})

describe('the output cap', () => {
  it('a summary over max_tokens is cut at the cap with finish max-tokens; one that fits is returned as is', () => {
    const request = requestOf(regionA, 50)
    const capped = summaryReply(BUILTIN_SUMMARIZER, request, 1, heuristic)
    const full = deterministicSummary(request)
    expect(capped.finish).toBe('max-tokens')
    const text = texts(capped, 'text')[0] ?? ''
    expect(heuristic.textTokens(text)).toBe(50)
    expect(full.startsWith(text)).toBe(true)
    expect(text.length).toBe(200)
    const roomy = { blocks: [t(full)] }
    expect(capReply(roomy, heuristic.textTokens(full), heuristic)).toBe(roomy)
    expect(capReply(roomy, undefined, heuristic)).toBe(roomy)
  })

  it('counts with the route tokenizer it is given', () => {
    expect(capReply({ blocks: [t('abcdefgh')] }, 3, perChar)).toEqual({ blocks: [t('abc')], finish: 'max-tokens' })
    expect(capReply({ blocks: [t('abcdefgh')] }, 3, heuristic)).toEqual({ blocks: [t('abcdefgh')] })
  })

  it('reasoning counts against the cap: a reasoning-heavy attempt that spends it yields max-tokens and no text', () => {
    const spec: SummarizerSpec = { kind: 'script', attempts: [{ reasoning: 'r'.repeat(400), text: 'the summary' }] }
    const reply = summaryReply(spec, requestOf(regionA, 100), 1, heuristic)
    expect(reply).toEqual({ blocks: [{ type: 'reasoning', text: 'r'.repeat(400) }], finish: 'max-tokens' })
    const over = summaryReply(spec, requestOf(regionA, 10), 1, heuristic)
    expect(over).toEqual({ blocks: [{ type: 'reasoning', text: 'r'.repeat(40) }], finish: 'max-tokens' })
  })

  it('a tool call that does not fit is dropped whole; images cost nothing', () => {
    const reply: PlannedReply = {
      blocks: [
        t('abcd'),
        { type: 'image', attachment: { attachmentId: 'a', mediaType: 'image/png', bytes: 1, width: 1, height: 1 } },
        { type: 'tool-call', id: CallId('c'), name: 'noop', arguments: '{"a":1}' },
      ],
    }
    const capped = capReply(reply, 2, heuristic)
    expect(capped.blocks.map((b) => b.type)).toEqual(['text', 'image'])
    expect(capped.finish).toBe('max-tokens')
  })
})
