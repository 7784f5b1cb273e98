/**
 * The mock's usage estimate (§9.3): the prompt priced by the fixed heuristic with the route image price,
 * and the cached part predicted by the longest common segment prefix with an earlier completed request on
 * the same model (granularity 1, no TTL). A mock that reports these figures agrees with the harness's
 * cache-reuse prediction, so provider-reported and predicted figures can be compared (§9.3).
 */
import { blocksPrice, ROLE_OVERHEAD, toolsPrice, type ContentBlock, type TokenUsage, type ToolSchema } from '@compaction-sim/core'
import type { DecodedMessage } from './types.ts'

interface Segments {
  keys: string[]
  weights: number[]
}

function segmentsOf(
  messages: readonly DecodedMessage[],
  tools: readonly ToolSchema[] | undefined,
  imageTokens: number | undefined,
): Segments {
  const keys = [JSON.stringify(tools ?? [])]
  const weights = [toolsPrice(tools)]
  for (const m of messages) {
    keys.push(JSON.stringify({ role: m.role, content: m.content }))
    weights.push(blocksPrice(m.content, imageTokens) + ROLE_OVERHEAD)
  }
  return { keys, weights }
}

/** The prompt figures of one request. */
export interface PromptEstimate {
  /** Σ segment weights (§9.2 `prompt(R)`). */
  promptTokens: number
  /** Predicted cache read (§9.3 `cached(R)`). */
  cachedTokens: number
}

/** Default output tokens of a reply without scripted usage (§9.3): the fixed price of its blocks plus 4. */
export function replyOutputTokens(blocks: readonly ContentBlock[]): number {
  return blocksPrice(blocks) + 4
}

/**
 * Prefix-cache model over completed requests, keyed by model. Bounded: only the `sourcesMax` most recent
 * completed requests of a model are kept as cache sources (the best source is almost always the latest).
 */
export class PromptCacheModel {
  private readonly sources = new Map<string, Segments[]>()
  private readonly sourcesMax: number

  constructor(sourcesMax = 32) {
    this.sourcesMax = sourcesMax
  }

  /** Prices a request and predicts its cached prefix against the completed sources of its model. */
  estimate(
    model: string,
    messages: readonly DecodedMessage[],
    tools: readonly ToolSchema[] | undefined,
    imageTokens: number | undefined,
  ): PromptEstimate {
    const seg = segmentsOf(messages, tools, imageTokens)
    let prompt = 0
    for (const w of seg.weights) prompt += w
    let cached = 0
    for (const source of this.sources.get(model) ?? []) {
      let reusable = 0
      const n = Math.min(source.keys.length, seg.keys.length)
      for (let i = 0; i < n && source.keys[i] === seg.keys[i]; i++) reusable += seg.weights[i] ?? 0
      if (reusable > cached) cached = reusable
    }
    return { promptTokens: prompt, cachedTokens: cached }
  }

  /** Records a completed request (finish stop / tool-calls / max-tokens) as a cache source. */
  complete(
    model: string,
    messages: readonly DecodedMessage[],
    tools: readonly ToolSchema[] | undefined,
    imageTokens: number | undefined,
  ): void {
    const list = this.sources.get(model) ?? []
    list.push(segmentsOf(messages, tools, imageTokens))
    if (list.length > this.sourcesMax) list.shift()
    this.sources.set(model, list)
  }
}

/** The usage the mock reports for a reply without scripted usage: uncached input, cache read, output. */
export function estimatedUsage(estimate: PromptEstimate, blocks: readonly ContentBlock[]): TokenUsage {
  return {
    inputTokens: estimate.promptTokens - estimate.cachedTokens,
    outputTokens: replyOutputTokens(blocks),
    cacheReadTokens: estimate.cachedTokens,
  }
}
