/**
 * Provider tokenizers (issue #15): how the *provider* counts a prompt, independently of the subject's §2
 * meter, so meter/provider drift can emerge. Four counters, each a pure function of the request:
 *
 * - `heuristic` — the §2.2 pricing the meter uses, exactly `promptTokensOf` (§9.2 `prompt(R)`):
 *   Σ (block prices + ROLE_OVERHEAD) over the messages, images at `imageTokens`, plus `price(tools)`.
 * - `dense` — the same structure (BLOCK_OVERHEAD per block, ROLE_OVERHEAD per message, tools as their JSON
 *   text + BLOCK_OVERHEAD), but a text costs one token per CJK code point plus `ceil(rest / 4)`, where a
 *   code point is CJK when its Unicode Script_Extensions include Han, Hiragana, Katakana or Hangul (so
 *   `ー`, `、` and `。` count too) and `rest` is the length in UTF-16 units of everything else. A text
 *   without CJK costs exactly what §2.2 charges, so `dense` equals `heuristic` on such a request.
 * - `o200k_base`, `cl100k_base` — real BPE encodings (`gpt-tokenizer` 3.4.0, pure JS), counted in the
 *   OpenAI chat format: each message costs `MESSAGE_OVERHEAD_TOKENS` (3 framing tokens, `<|im_start|>`,
 *   the role separator and `<|im_end|>`) plus its role's tokens plus its blocks; each request costs
 *   `REPLY_PRIMING_TOKENS` more (`<|im_start|>assistant`). This is the rule of OpenAI's cookbook
 *   (`num_tokens_from_messages`) and gives exactly `encodeChat(...).length` of the library for plain text
 *   messages. Blocks: text and reasoning count their text; a tool call its name and arguments plus
 *   `TOOL_CALL_OVERHEAD_TOKENS`; a tool result the sum of its inner blocks (its message framing covers the
 *   rest); an image `imageTokens` (the route price), or the §2.2 fixed rule when the route has none; any
 *   other block its JSON text. Tools, when present and non-empty, count as one more message holding their
 *   JSON text (providers render them into the system prompt). Special-token text such as `<|endoftext|>`
 *   in a message is ordinary text (as the provider treats user input), never a special token.
 *
 * Laziness: the BPE tables (several MB) load on the first count of a BPE tokenizer, synchronously from
 * the library's encoding-specific entry point (`gpt-tokenizer/cjs/encoding/<name>`); importing this module,
 * `sim --version`, and runs that use only `heuristic`/`dense` never load them.
 *
 * Incremental: a BPE tokenizer caches each message's count under a content key (the route image price and
 * the caller's digest of the message — the mock passes its §9.2 segment digests — or else the role and the
 * JSON of its content), in a bounded LRU map (`MESSAGE_CACHE_ENTRIES_MAX` entries and
 * `MESSAGE_CACHE_KEY_CHARS_MAX` key characters), and the last tools list's count, so a request costs
 * one key per message plus BPE work for the messages it has not seen. `heuristic` and `dense` compute in
 * O(message length) with no cache: that is cheaper than building a key.
 *
 * CONTRACT (issue #15 wave 1): the names, `ProviderTokenizer` and `createTokenizer` are shared by the
 * routes, enforcement, summarizer and drift work.
 */
import { createRequire } from 'node:module'
import {
  assertNever, blockPrice, blocksPrice, BLOCK_OVERHEAD, ROLE_OVERHEAD, textTokens as heuristicTextTokens, toolsPrice,
  type ContentBlock, type ToolSchema,
} from '@compaction-sim/core'
import type { DecodedMessage } from './types.ts'

/** Every provider tokenizer name, in documentation order. */
export const TOKENIZER_NAMES = ['heuristic', 'o200k_base', 'cl100k_base', 'dense'] as const

/** One provider tokenizer name (a closed union). */
export type TokenizerName = (typeof TOKENIZER_NAMES)[number]

/** How the provider counts tokens. Implementations cache per message, so a request costs O(new messages). */
export interface ProviderTokenizer {
  readonly name: TokenizerName
  /**
   * The prompt of one request as the provider counts it (messages, tools, images at `imageTokens` each).
   * `contentKeys`, when given (one per message), must be a collision-resistant digest of each message's role and
   * content — the mock passes its §9.2 segment digests, which it computes anyway — so a cache need not build keys.
   */
  promptTokens(
    messages: readonly DecodedMessage[], tools: readonly ToolSchema[] | undefined, imageTokens: number | undefined,
    contentKeys?: readonly string[],
  ): number
  /** Tokens of one piece of output text (e.g. a summary, to cap it at `max_tokens`). */
  textTokens(text: string): number
}

/** BPE chat format: framing tokens of one message besides its role (`<|im_start|>`, separator, `<|im_end|>`). */
export const MESSAGE_OVERHEAD_TOKENS = 3
/** BPE chat format: tokens that prime the reply (`<|im_start|>assistant`), once per request. */
export const REPLY_PRIMING_TOKENS = 3
/** BPE chat format: framing of one tool call besides its name and arguments (a fixed stand-in; providers do not publish it). */
export const TOOL_CALL_OVERHEAD_TOKENS = 3
/** Bound on cached message counts per BPE tokenizer (least recently used evicted first). */
export const MESSAGE_CACHE_ENTRIES_MAX = 4096
/** Bound on the total key length (UTF-16 units) a BPE tokenizer's message cache holds. */
export const MESSAGE_CACHE_KEY_CHARS_MAX = 32 * 1024 * 1024

/** The tokenizer called `name`. A BPE tokenizer loads its table on its first count (module doc). */
export function createTokenizer(name: TokenizerName): ProviderTokenizer {
  switch (name) {
    case 'heuristic': return {
      name,
      promptTokens: (messages, tools, imageTokens) => {
        let sum = toolsPrice(tools)
        for (const m of messages) sum += blocksPrice(m.content, imageTokens) + ROLE_OVERHEAD
        return sum
      },
      textTokens: heuristicTextTokens,
    }
    case 'dense': return {
      name,
      promptTokens: (messages, tools, imageTokens) => {
        let sum = tools === undefined || tools.length === 0 ? 0 : denseTextTokens(JSON.stringify(tools)) + BLOCK_OVERHEAD
        for (const m of messages) {
          for (const b of m.content) sum += denseBlockTokens(b, imageTokens)
          sum += ROLE_OVERHEAD
        }
        return sum
      },
      textTokens: denseTextTokens,
    }
    case 'o200k_base':
    case 'cl100k_base':
      return new BpeTokenizer(name)
    default:
      return assertNever(name, 'tokenizer')
  }
}

/** True when `text` holds at least one code point `dense` counts as CJK. */
const CJK_ANY = /[\p{scx=Han}\p{scx=Hiragana}\p{scx=Katakana}\p{scx=Hangul}]/u
const CJK_ALL = /[\p{scx=Han}\p{scx=Hiragana}\p{scx=Katakana}\p{scx=Hangul}]/gu

/** `dense` price of a text: one per CJK code point + `ceil(other UTF-16 units / 4)` (module doc). */
export function denseTextTokens(text: string): number {
  if (!CJK_ANY.test(text)) return heuristicTextTokens(text)
  let cjk = 0
  let cjkUnits = 0
  for (const m of text.matchAll(CJK_ALL)) {
    cjk++
    cjkUnits += m[0].length
  }
  return cjk + Math.ceil((text.length - cjkUnits) / 4)
}

/** §2.2's block structure with `dense` text prices (module doc). */
function denseBlockTokens(block: ContentBlock, imageTokens: number | undefined): number {
  switch (block.type) {
    case 'text':
    case 'reasoning':
      return denseTextTokens(String(block['text'])) + BLOCK_OVERHEAD
    case 'tool-call':
      return denseTextTokens(String(block['name'])) + denseTextTokens(String(block['arguments'])) + BLOCK_OVERHEAD
    case 'tool-result': {
      let sum = BLOCK_OVERHEAD
      for (const inner of block['content'] as ContentBlock[]) sum += denseBlockTokens(inner, imageTokens)
      return sum
    }
    case 'image':
      return imageTokens ?? BLOCK_OVERHEAD + denseTextTokens(JSON.stringify(block))
    default:
      return BLOCK_OVERHEAD + denseTextTokens(JSON.stringify(block))
  }
}

/** What this module uses of a `gpt-tokenizer` encoding entry point. */
interface BpeEncoding {
  countTokens(text: string, options: { disallowedSpecial: Set<string> }): number
}

/** Special-token text counts as ordinary text (an empty disallow set and no allow set). */
const AS_TEXT = { disallowedSpecial: new Set<string>() }

const loaded = new Map<string, BpeEncoding>()

/** The library's encoding-specific entry point, loaded on first use and shared by every tokenizer of that name. */
function encodingOf(name: 'o200k_base' | 'cl100k_base'): BpeEncoding {
  let encoding = loaded.get(name)
  if (encoding === undefined) {
    const require = createRequire(import.meta.url)
    try {
      encoding = (name === 'o200k_base'
        ? require('gpt-tokenizer/cjs/encoding/o200k_base')
        : require('gpt-tokenizer/cjs/encoding/cl100k_base')) as BpeEncoding
    } catch (err) {
      // gpt-tokenizer is an optional peer (its tables are ~50 MB): only BPE routes need it.
      throw new Error(`tokenizer ${name} needs the optional peer gpt-tokenizer: npm i -D gpt-tokenizer@3.4.0`, { cause: err })
    }
    loaded.set(name, encoding)
  }
  return encoding
}

/** Whether the BPE table of `name` has been loaded in this process (for the lazy-load tests). */
export function isEncodingLoaded(name: 'o200k_base' | 'cl100k_base'): boolean {
  return loaded.has(name)
}

/** Options of a BPE tokenizer (tests shrink the cache bounds or turn the cache off). */
export interface BpeTokenizerOptions {
  /** Cache message counts (default true). */
  cache?: boolean
  entriesMax?: number
  keyCharsMax?: number
}

/** A BPE tokenizer in the chat format, with the per-message cache (module doc). */
export class BpeTokenizer implements ProviderTokenizer {
  readonly name: 'o200k_base' | 'cl100k_base'
  private encoding: BpeEncoding | null = null
  private readonly cached: boolean
  private readonly entriesMax: number
  private readonly keyCharsMax: number
  private readonly messages = new Map<string, number>()
  private keyChars = 0
  private toolsKey: string | null = null
  private toolsCount = 0
  private readonly roles = new Map<string, number>()

  constructor(name: 'o200k_base' | 'cl100k_base', options: BpeTokenizerOptions = {}) {
    this.name = name
    this.cached = options.cache ?? true
    this.entriesMax = options.entriesMax ?? MESSAGE_CACHE_ENTRIES_MAX
    this.keyCharsMax = options.keyCharsMax ?? MESSAGE_CACHE_KEY_CHARS_MAX
  }

  /** Cached message counts right now (for the cache tests). */
  get cacheEntries(): number {
    return this.messages.size
  }

  textTokens(text: string): number {
    if (text === '') return 0
    this.encoding ??= encodingOf(this.name)
    return this.encoding.countTokens(text, AS_TEXT)
  }

  promptTokens(
    messages: readonly DecodedMessage[], tools: readonly ToolSchema[] | undefined, imageTokens: number | undefined,
    contentKeys?: readonly string[],
  ): number {
    let sum = REPLY_PRIMING_TOKENS + this.toolsTokens(tools)
    const keyed = contentKeys !== undefined && contentKeys.length === messages.length
    messages.forEach((m, i) => {
      sum += this.messageTokens(m, imageTokens, keyed ? `#${contentKeys[i] ?? ''}` : null)
    })
    return sum
  }

  private toolsTokens(tools: readonly ToolSchema[] | undefined): number {
    if (tools === undefined || tools.length === 0) return 0
    const key = JSON.stringify(tools)
    if (key !== this.toolsKey || !this.cached) {
      this.toolsCount = MESSAGE_OVERHEAD_TOKENS + this.roleTokens('system') + this.textTokens(key)
      this.toolsKey = key
    }
    return this.toolsCount
  }

  private roleTokens(role: string): number {
    let n = this.roles.get(role)
    if (n === undefined) {
      n = this.textTokens(role)
      this.roles.set(role, n)
    }
    return n
  }

  private messageTokens(message: DecodedMessage, imageTokens: number | undefined, digest: string | null): number {
    if (!this.cached) return this.countMessage(message, imageTokens)
    // A given digest (`#…`) and a built key (`role\0json`) never collide: a role never starts with `#`.
    const key = `${imageTokens ?? '-'}\u0000${digest ?? `${message.role}\u0000${JSON.stringify(message.content)}`}`
    const hit = this.messages.get(key)
    if (hit !== undefined) {
      // Least recently used order: a hit moves to the end.
      this.messages.delete(key)
      this.messages.set(key, hit)
      return hit
    }
    const count = this.countMessage(message, imageTokens)
    if (key.length <= this.keyCharsMax) {
      this.messages.set(key, count)
      this.keyChars += key.length
      for (const oldest of this.messages.keys()) {
        if (this.messages.size <= this.entriesMax && this.keyChars <= this.keyCharsMax) break
        this.messages.delete(oldest)
        this.keyChars -= oldest.length
      }
    }
    return count
  }

  private countMessage(message: DecodedMessage, imageTokens: number | undefined): number {
    let sum = MESSAGE_OVERHEAD_TOKENS + this.roleTokens(message.role)
    for (const b of message.content) sum += this.blockTokens(b, imageTokens)
    return sum
  }

  private blockTokens(block: ContentBlock, imageTokens: number | undefined): number {
    switch (block.type) {
      case 'text':
      case 'reasoning':
        return this.textTokens(String(block['text']))
      case 'tool-call':
        return this.textTokens(String(block['name'])) + this.textTokens(String(block['arguments'])) + TOOL_CALL_OVERHEAD_TOKENS
      case 'tool-result': {
        let sum = 0
        for (const inner of block['content'] as ContentBlock[]) sum += this.blockTokens(inner, imageTokens)
        return sum
      }
      case 'image':
        return imageTokens ?? blockPrice(block)
      default:
        return this.textTokens(JSON.stringify(block))
    }
  }
}
