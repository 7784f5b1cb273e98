/**
 * Provider tokenizers (issue #15): how the *provider* counts a prompt, independently of the subject's §2
 * meter, so meter/provider drift can emerge. `heuristic` is the §2.2 pricing the meter uses; `o200k_base`
 * and `cl100k_base` are real BPE encodings; `dense` prices about one token per CJK character.
 *
 * CONTRACT (issue #15 wave 1): the names and `ProviderTokenizer` are shared by the routes, enforcement,
 * summarizer and drift work; the BPE implementations are filled in by the tokenizer work.
 */
import type { ToolSchema } from '@compaction-sim/core'
import { promptTokensOf } from './prompt-cache.ts'
import type { DecodedMessage } from './types.ts'

/** Every provider tokenizer name, in documentation order. */
export const TOKENIZER_NAMES = ['heuristic', 'o200k_base', 'cl100k_base', 'dense'] as const

/** One provider tokenizer name (a closed union). */
export type TokenizerName = (typeof TOKENIZER_NAMES)[number]

/** How the provider counts tokens. Implementations cache per message, so a request costs O(new messages). */
export interface ProviderTokenizer {
  readonly name: TokenizerName
  /** The prompt of one request as the provider counts it (messages, tools, images at `imageTokens` each). */
  promptTokens(messages: readonly DecodedMessage[], tools: readonly ToolSchema[] | undefined, imageTokens: number | undefined): number
  /** Tokens of one piece of output text (e.g. a summary, to cap it at `max_tokens`). */
  textTokens(text: string): number
}

/** The tokenizer called `name`. */
export function createTokenizer(name: TokenizerName): ProviderTokenizer {
  // Wave-1 stub: every name counts like the heuristic until the tokenizer work lands.
  return {
    name,
    promptTokens: (messages, tools, imageTokens) => promptTokensOf(messages, tools, imageTokens),
    textTokens: (text) => Math.ceil(text.length / 4),
  }
}
