/**
 * The mock's usage report (§9.3, issue #9): the prompt priced by the fixed heuristic with the route image
 * price, and the cached (and, Anthropic-style, written) part predicted by the configured cache contract
 * (`metrics/contracts.ts`) over the completed requests the mock served. A mock that reports these figures
 * agrees with the report's prediction, so provider-reported and predicted figures can be compared; a
 * deviating mock (`deviation` of the contract) reports something else on purpose and the report shows the gap.
 */
import { blocksPrice, type ContentBlock, type TokenUsage, type ToolSchema } from '@compaction-sim/core'
import { CacheEngine, deviate, resolveCacheContract, type CacheContractSpec, type CachePrediction } from '../metrics/contracts.ts'
import { cacheKeyOf, segmentRequest, type SegmentedRequest } from '../metrics/segments.ts'
import type { DecodedMessage } from './types.ts'

/** The prompt figures of one request, as the mock reports them (after any deviation). */
export interface PromptEstimate {
  /** Σ segment weights (§9.2 `prompt(R)`). */
  promptTokens: number
  /** Cache-read tokens reported. */
  cachedTokens: number
  /** Cache-write tokens reported (Anthropic-style contracts only; else 0). */
  writtenTokens: number
  /** The contract's own prediction (no deviation). */
  prediction: CachePrediction
  /** What `complete` needs to record the request. */
  readonly handle: { index: number; time: number; segmented: SegmentedRequest }
}

/** §9.2 `prompt(R)` of a request, without any cache state (e.g. for an overflow rejection's message). */
export function promptTokensOf(
  messages: readonly DecodedMessage[], tools: readonly ToolSchema[] | undefined, imageTokens: number | undefined,
): number {
  return segmentRequest('', messages, tools, imageTokens).prompt
}

/** Default output tokens of a reply without scripted usage (§9.3): the fixed price of its blocks plus 4. */
export function replyOutputTokens(blocks: readonly ContentBlock[]): number {
  return blocksPrice(blocks) + 4
}

/** The mock's cache: one contract engine over the requests it served, keyed by model (module doc). */
export class PromptCacheModel {
  readonly spec: CacheContractSpec
  private readonly engine: CacheEngine
  private served = 0

  /** `spec` defaults to the plain §9.3 model (G = 1, no TTL, no deviation). */
  constructor(spec: CacheContractSpec = resolveCacheContract()) {
    this.spec = spec
    this.engine = new CacheEngine(spec)
  }

  /** Prices a request and predicts its cache usage at virtual time `time`. */
  estimate(
    model: string,
    messages: readonly DecodedMessage[],
    tools: readonly ToolSchema[] | undefined,
    imageTokens: number | undefined,
    time: number,
  ): PromptEstimate {
    const segmented = segmentRequest(cacheKeyOf('mock', model), messages, tools, imageTokens)
    const handle = { index: this.served++, time, segmented }
    const prediction = this.engine.predict(handle)
    const reported = deviate(prediction, this.spec.deviation)
    return { promptTokens: prediction.prompt, cachedTokens: reported.cached, writtenTokens: reported.written, prediction, handle }
  }

  /** Records the request once its outcome is known: only a completed reply is a cache source (§9.3). */
  complete(estimate: PromptEstimate, completed: boolean): void {
    this.engine.record(estimate.handle, completed)
  }
}

/**
 * The usage the mock reports for a reply without scripted usage: uncached input, cache read, cache write, output,
 * in the serving route's own units (a provider reports what *its* tokenizer counted). The prompt total is
 * `providerPromptTokens`; the contract's cached and written parts are scaled to it by the same factor (floored),
 * so a `heuristic` route — whose count is §9.2 `prompt(R)` exactly — reports the contract's figures unchanged.
 * The output is the reply's blocks as `tokenizer` counts them (`replyOutputTokens` for §2.2 pricing).
 */
export function estimatedUsage(
  estimate: PromptEstimate,
  blocks: readonly ContentBlock[],
  providerPromptTokens: number = estimate.promptTokens,
  tokenizer?: OutputTokenizer,
): TokenUsage {
  const scale = (n: number): number =>
    providerPromptTokens === estimate.promptTokens || estimate.promptTokens === 0
      ? n
      : Math.floor((n * providerPromptTokens) / estimate.promptTokens)
  const cached = scale(estimate.cachedTokens)
  const written = scale(estimate.writtenTokens)
  const usage: TokenUsage = {
    inputTokens: providerPromptTokens - cached - written,
    outputTokens: tokenizer === undefined || tokenizer.name === 'heuristic' ? replyOutputTokens(blocks) : outputTokensOf(tokenizer, blocks),
    cacheReadTokens: cached,
  }
  if (written > 0) usage.cacheWriteTokens = written
  return usage
}

/** What `estimatedUsage` needs of a provider tokenizer to count a reply. */
export interface OutputTokenizer {
  readonly name: string
  textTokens(text: string): number
}

/** Output tokens of a reply as a non-§2.2 tokenizer counts them: its texts, tool names and arguments, plus 4. */
function outputTokensOf(tokenizer: OutputTokenizer, blocks: readonly ContentBlock[]): number {
  let sum = 4
  for (const b of blocks) {
    switch (b.type) {
      case 'text':
      case 'reasoning':
        sum += tokenizer.textTokens(String(b['text']))
        break
      case 'tool-call':
        sum += tokenizer.textTokens(String(b['name'])) + tokenizer.textTokens(String(b['arguments']))
        break
      default:
        sum += tokenizer.textTokens(JSON.stringify(b))
    }
  }
  return sum
}
