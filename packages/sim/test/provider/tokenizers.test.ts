/**
 * Provider tokenizers (issue #15): exact BPE counts of known strings (the library's own `encode`, and values
 * published in OpenAI's tiktoken cookbook), the chat-format rule against the library's `encodeChat`, `dense`
 * on CJK text, `heuristic` equal to §9.2 `prompt(R)`, the per-message cache giving the same counts as no
 * cache (property test, eviction included), and lazy loading of the BPE tables.
 */
import { createRequire } from 'node:module'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { CallId, type ContentBlock, type ToolSchema } from '@compaction-sim/core'
import { fcParams } from '../../../core/test/support/seed.ts'
import { segmentRequest } from '../../src/metrics/segments.ts'
import { promptTokensOf } from '../../src/provider/prompt-cache.ts'
import {
  BpeTokenizer, createTokenizer, denseTextTokens, isEncodingLoaded, MESSAGE_OVERHEAD_TOKENS, REPLY_PRIMING_TOKENS, TOKENIZER_NAMES,
  TOOL_CALL_OVERHEAD_TOKENS,
} from '../../src/provider/tokenizers.ts'
import type { DecodedMessage } from '../../src/provider/types.ts'

const require = createRequire(import.meta.url)
type Chat = Array<{ role: string; content: string }>
interface Lib {
  encode(text: string): number[]
  encodeChat(chat: Chat, model: string): number[]
}

const text = (t: string): ContentBlock => ({ type: 'text', text: t })
const msg = (role: DecodedMessage['role'], ...content: ContentBlock[]): DecodedMessage => ({ role, content })

describe('lazy loading', () => {
  // First in the file: nothing above has counted with a BPE tokenizer yet.
  it('creating tokenizers and counting with heuristic or dense loads no BPE table; the first BPE count loads only its own', () => {
    const loadedModules = (): string[] => Object.keys(require.cache).filter((k) => k.includes('gpt-tokenizer'))
    for (const name of TOKENIZER_NAMES) createTokenizer(name)
    createTokenizer('heuristic').promptTokens([msg('user', text('hello'))], undefined, undefined)
    createTokenizer('dense').promptTokens([msg('user', text('日本語'))], undefined, undefined)
    expect(isEncodingLoaded('o200k_base')).toBe(false)
    expect(isEncodingLoaded('cl100k_base')).toBe(false)
    expect(loadedModules()).toEqual([])
    expect(createTokenizer('cl100k_base').textTokens('hello world')).toBe(2)
    expect(isEncodingLoaded('cl100k_base')).toBe(true)
    expect(isEncodingLoaded('o200k_base')).toBe(false)
    expect(loadedModules().some((k) => k.includes('bpeRanks/cl100k_base'))).toBe(true)
    expect(loadedModules().some((k) => k.includes('bpeRanks/o200k_base'))).toBe(false) // the table, not the small params module
  })
})

/** The library's own entry points, loaded when a test asks (after the lazy-loading test ran). */
const o200k = { encode: (s: string) => lib('o200k').encode(s), encodeChat: (c: Chat, m: string) => lib('o200k').encodeChat(c, m) }
const cl100k = { encode: (s: string) => lib('cl100k').encode(s), encodeChat: (c: Chat, m: string) => lib('cl100k').encodeChat(c, m) }
function lib(name: 'o200k' | 'cl100k'): Lib {
  return (name === 'o200k' ? require('gpt-tokenizer/cjs/encoding/o200k_base') : require('gpt-tokenizer/cjs/encoding/cl100k_base')) as Lib
}

describe('BPE counts of known strings', () => {

  it('cl100k_base: the tiktoken cookbook figures ("tiktoken is great!" = [83, 1609, 5963, 374, 2294, 0], 6 tokens)', () => {
    expect(cl100k.encode('tiktoken is great!')).toEqual([83, 1609, 5963, 374, 2294, 0])
    const t = createTokenizer('cl100k_base')
    expect(t.textTokens('tiktoken is great!')).toBe(6)
    expect(t.textTokens('antidisestablishmentarianism')).toBe(6)
    expect(t.textTokens('2 + 2 = 4')).toBe(7)
    expect(t.textTokens('お誕生日おめでとう')).toBe(9)
  })

  it('o200k_base: the tiktoken cookbook figures ("お誕生日おめでとう" = 8 tokens, one fewer than cl100k_base)', () => {
    const t = createTokenizer('o200k_base')
    expect(t.textTokens('antidisestablishmentarianism')).toBe(6)
    expect(o200k.encode('antidisestablishmentarianism')).toEqual([493, 129901, 376, 160388, 21203, 2367])
    expect(t.textTokens('2 + 2 = 4')).toBe(7)
    expect(t.textTokens('お誕生日おめでとう')).toBe(8)
  })

  it('counts equal the library encode length for assorted strings, in both encodings', () => {
    const samples = ['', 'hello world', 'Hello, world!', '  leading spaces', 'const x = { a: [1, 2, 3] }\n', '日本語のテキスト', '안녕하세요', '🙂 emoji']
    for (const s of samples) {
      expect(createTokenizer('o200k_base').textTokens(s), s).toBe(o200k.encode(s).length)
      expect(createTokenizer('cl100k_base').textTokens(s), s).toBe(cl100k.encode(s).length)
    }
  })

  it('special-token text is ordinary text: "<|endoftext|>" counts 7 tokens and does not throw', () => {
    expect(createTokenizer('o200k_base').textTokens('<|endoftext|>')).toBe(7)
    expect(createTokenizer('cl100k_base').textTokens('a <|endoftext|> b')).toBeGreaterThan(3)
  })
})

describe('BPE chat format', () => {
  const chat = [
    { role: 'system' as const, content: 'You are helpful.' },
    { role: 'user' as const, content: 'tiktoken is great!' },
    { role: 'assistant' as const, content: 'お誕生日おめでとう' },
  ]
  const messages = chat.map((m) => msg(m.role, text(m.content)))

  it('plain text messages count exactly what the library encodeChat gives (gpt-4o, gpt-4)', () => {
    expect(createTokenizer('o200k_base').promptTokens(messages, undefined, undefined)).toBe(o200k.encodeChat(chat, 'gpt-4o').length)
    expect(createTokenizer('cl100k_base').promptTokens(messages, undefined, undefined)).toBe(cl100k.encodeChat(chat, 'gpt-4').length)
    // Hand check: 4 + 6 + 8 content tokens, 3 messages × (3 framing + 1 role), 3 priming.
    expect(createTokenizer('o200k_base').promptTokens(messages, undefined, undefined)).toBe(4 + 6 + 8 + 3 * 4 + 3)
  })

  it('tool calls, tool results, images at the route price, unknown blocks and tools follow the documented rule', () => {
    const t = createTokenizer('o200k_base')
    const tools: ToolSchema[] = [{ name: 'read', description: 'Read a file', parameters: { type: 'object' } }]
    const image: ContentBlock = { type: 'image', attachment: { attachmentId: 'a1', mediaType: 'image/png', bytes: 10, width: 1, height: 1 } }
    const call: ContentBlock = { type: 'tool-call', callId: 'c1', name: 'read', arguments: '{"path":"a.txt"}' }
    const result: ContentBlock = { type: 'tool-result', toolCallId: CallId('c1'), content: [text('file body'), image] }
    const unknown: ContentBlock = { type: 'citation', source: 'x' }
    const messages2 = [msg('assistant', call), msg('user', result), msg('user', unknown)]
    const n = (s: string): number => o200k.encode(s).length
    const expected = REPLY_PRIMING_TOKENS
      + (MESSAGE_OVERHEAD_TOKENS + n('system') + n(JSON.stringify(tools)))
      + (MESSAGE_OVERHEAD_TOKENS + n('assistant') + n('read') + n('{"path":"a.txt"}') + TOOL_CALL_OVERHEAD_TOKENS)
      + (MESSAGE_OVERHEAD_TOKENS + n('user') + n('file body') + 85)
      + (MESSAGE_OVERHEAD_TOKENS + n('user') + n(JSON.stringify(unknown)))
    expect(t.promptTokens(messages2, tools, 85)).toBe(expected)
    // Without a route image price the image costs what §2.2 charges for it.
    const fixedImage = promptTokensOf([msg('user', image)], undefined, undefined) - 4
    expect(t.promptTokens(messages2, tools, undefined)).toBe(expected - 85 + fixedImage)
    expect(t.promptTokens([], [], undefined)).toBe(REPLY_PRIMING_TOKENS)
  })
})

describe('dense', () => {
  it('prices one token per Han, Hiragana, Katakana and Hangul code point, the rest at ceil(len / 4)', () => {
    expect(denseTextTokens('日本語')).toBe(3)
    expect(denseTextTokens('ひらがなカタカナ')).toBe(8)
    expect(denseTextTokens('안녕하세요')).toBe(5)
    expect(denseTextTokens('東京 is big')).toBe(2 + Math.ceil(' is big'.length / 4))
    // Script_Extensions: the prolonged sound mark and CJK punctuation count as CJK.
    expect(denseTextTokens('コーヒー。')).toBe(5)
    // A Han character outside the BMP is one token (two UTF-16 units).
    expect(denseTextTokens('𠀋a')).toBe(1 + 1)
    expect(denseTextTokens('plain ascii text')).toBe(Math.ceil(16 / 4))
  })

  it('a CJK message costs far more than the heuristic says; a message without CJK costs the same', () => {
    const dense = createTokenizer('dense')
    const heuristic = createTokenizer('heuristic')
    const cjk = [msg('user', text('这是一个很长的中文句子，用来测试密集文字的计数规则。'.repeat(10)))]
    expect(dense.promptTokens(cjk, undefined, undefined)).toBe(25 * 10 + Math.ceil(10 / 4) + 4 + 4) // 25 CJK code points and one fullwidth comma (Common) per copy
    expect(dense.promptTokens(cjk, undefined, undefined)).toBeGreaterThan(3 * heuristic.promptTokens(cjk, undefined, undefined))
  })

  it('equals heuristic on any request without CJK text (property)', () => {
    fc.assert(fc.property(requestArb(fc.string({ unit: 'grapheme-ascii', maxLength: 60 })), ({ messages, tools, imageTokens }) => {
      expect(createTokenizer('dense').promptTokens(messages, tools, imageTokens))
        .toBe(createTokenizer('heuristic').promptTokens(messages, tools, imageTokens))
    }), fcParams({ numRuns: 200 }))
  }, 60_000)
})

describe('heuristic', () => {
  it('equals §9.2 prompt(R) (promptTokensOf) on any request (property)', () => {
    fc.assert(fc.property(requestArb(fc.string({ maxLength: 60 })), ({ messages, tools, imageTokens }) => {
      expect(createTokenizer('heuristic').promptTokens(messages, tools, imageTokens)).toBe(promptTokensOf(messages, tools, imageTokens))
    }), fcParams({ numRuns: 200 }))
  }, 60_000)
})

describe('per-message cache', () => {
  it('a growing session gives the same counts with and without the cache, and a repeated request hits it', () => {
    const cached = new BpeTokenizer('o200k_base')
    const plain = new BpeTokenizer('o200k_base', { cache: false })
    const messages: DecodedMessage[] = [msg('system', text('You are a coding agent.'))]
    for (let turn = 0; turn < 30; turn++) {
      messages.push(msg('user', text(`turn ${turn}: please look at file ${turn}.ts`)))
      expect(cached.promptTokens(messages, undefined, undefined)).toBe(plain.promptTokens(messages, undefined, undefined))
      messages.push(msg('assistant', text(`done with ${turn}`)))
    }
    expect(cached.cacheEntries).toBe(messages.length - 1)
    expect(plain.cacheEntries).toBe(0)
  })

  it('keeps its bounds: entries and key characters', () => {
    const t = new BpeTokenizer('cl100k_base', { entriesMax: 3, keyCharsMax: 200 })
    const messages = Array.from({ length: 10 }, (_, i) => msg('user', text(`message ${i}`)))
    t.promptTokens(messages, undefined, undefined)
    expect(t.cacheEntries).toBe(3)
    const big = new BpeTokenizer('cl100k_base', { keyCharsMax: 100 })
    big.promptTokens([msg('user', text('x'.repeat(500))), msg('user', text('y'))], undefined, undefined)
    expect(big.cacheEntries).toBe(1) // the oversized message is counted but not kept
  })

  it('cached and uncached counts agree over any request sequence, with eviction (property)', () => {
    const content = fc.oneof(fc.string({ maxLength: 40 }), fc.constantFrom('日本語', '<|endoftext|>', '  ', 'fn main() {}'))
    fc.assert(fc.property(
      fc.array(requestArb(content), { minLength: 1, maxLength: 8 }),
      fc.constantFrom<'o200k_base' | 'cl100k_base'>('o200k_base', 'cl100k_base'),
      fc.integer({ min: 1, max: 6 }),
      (requests, name, entriesMax) => {
        const cached = new BpeTokenizer(name, { entriesMax, keyCharsMax: 2_000 })
        const digested = new BpeTokenizer(name, { entriesMax })
        const plain = new BpeTokenizer(name, { cache: false })
        // Each request repeats the previous one's messages (a session), so the cache is hit and evicted.
        let history: DecodedMessage[] = []
        for (const r of requests) {
          history = [...history, ...r.messages]
          const expected = plain.promptTokens(history, r.tools, r.imageTokens)
          expect(cached.promptTokens(history, r.tools, r.imageTokens)).toBe(expected)
          expect(cached.cacheEntries).toBeLessThanOrEqual(entriesMax)
          // Keyed by the §9.2 segment digests, as the mock calls it.
          const digests = segmentRequest('', history, r.tools, r.imageTokens).digests.slice(1)
          expect(digested.promptTokens(history, r.tools, r.imageTokens, digests)).toBe(expected)
        }
      },
    ), fcParams({ numRuns: 150 }))
  }, 120_000)
})

/** A request: 0–5 messages of text, reasoning, tool calls, tool results (with images) and unknown blocks. */
function requestArb(str: fc.Arbitrary<string>): fc.Arbitrary<{ messages: DecodedMessage[]; tools: ToolSchema[] | undefined; imageTokens: number | undefined }> {
  const image = fc.record({ attachmentId: str, mediaType: fc.constant('image/png'), bytes: fc.nat(), width: fc.nat(), height: fc.nat() })
    .map((attachment): ContentBlock => ({ type: 'image', attachment }))
  const leaf = fc.oneof(
    str.map((t): ContentBlock => ({ type: 'text', text: t })),
    str.map((t): ContentBlock => ({ type: 'reasoning', text: t })),
    fc.tuple(str, str).map(([name, args]): ContentBlock => ({ type: 'tool-call', callId: 'c', name, arguments: args })),
    image,
    str.map((t): ContentBlock => ({ type: 'note', text: t })),
  )
  const block = fc.oneof(leaf, fc.array(leaf, { maxLength: 3 }).map((content): ContentBlock => ({ type: 'tool-result', toolCallId: CallId('c'), content })))
  const message = fc.record({
    role: fc.constantFrom<DecodedMessage['role']>('system', 'user', 'assistant'),
    content: fc.array(block, { maxLength: 3 }),
  })
  const tools = fc.option(fc.array(fc.record({ name: str, description: str, parameters: fc.constant({ type: 'object' }) }), { maxLength: 2 }), { nil: undefined })
  return fc.record({
    messages: fc.array(message, { maxLength: 5 }),
    tools,
    imageTokens: fc.option(fc.integer({ min: 1, max: 2000 }), { nil: undefined }),
  })
}
