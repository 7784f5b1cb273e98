/**
 * Canonical segmentation of a request (§9.2): `[TOOLS, M_0, …, M_{k−1}]` with their weights, and a prefix
 * chain — `chain[i]` is a digest of the cache key and segments 0…i — so two requests share a prefix of
 * length k exactly when their chains agree at k − 1 (string equality of segments, §9.3; sha-256 stands in
 * for the bytes so an entry of a prefix-keyed cache is one short string).
 */
import { createHash } from 'node:crypto'
import { blocksPrice, ROLE_OVERHEAD, toolsPrice, type ContentBlock, type ToolSchema } from '@compaction-sim/core'

/** A message as the cache sees it: role and projected content (ids and sources are not part of the bytes, §9.2). */
export interface SegmentMessage {
  role: string
  content: readonly ContentBlock[]
}

/** One request in the cache model's terms. */
export interface SegmentedRequest {
  /** §9.2 `cacheKey`: provider + NUL + model. */
  key: string
  /** Per segment: its weight in tokens (TOOLS at `price(tools)`, messages at `P_route`). */
  weights: number[]
  /** Per segment: digest of the cache key and every segment up to and including it. */
  chain: string[]
  /** Per segment: digest of the segment alone (for §9.4 new-content detection). */
  digests: string[]
  /** §9.2 `prompt(R)`. */
  prompt: number
}

/** §9.2 `cacheKey(R)`. */
export function cacheKeyOf(provider: string, model: string): string {
  return `${provider}\u0000${model}`
}

/** Segments a request (§9.2); `imageTokens` is the route image price. */
export function segmentRequest(
  key: string,
  messages: readonly SegmentMessage[],
  tools: readonly ToolSchema[] | undefined,
  imageTokens: number | undefined,
): SegmentedRequest {
  const texts = [JSON.stringify(tools ?? [])]
  const weights = [toolsPrice(tools)]
  for (const m of messages) {
    texts.push(JSON.stringify({ role: m.role, content: m.content }))
    weights.push(blocksPrice(m.content, imageTokens) + ROLE_OVERHEAD)
  }
  const chain: string[] = []
  const digests: string[] = []
  let previous = createHash('sha256').update(key).digest('hex')
  for (const text of texts) {
    const digest = createHash('sha256').update(text).digest('hex')
    previous = createHash('sha256').update(previous).update('\u0000').update(digest).digest('hex')
    chain.push(previous)
    digests.push(digest)
  }
  let prompt = 0
  for (const w of weights) prompt += w
  return { key, weights, chain, digests, prompt }
}

/** Σ weights of the first `length` segments. */
export function prefixWeight(request: SegmentedRequest, length: number): number {
  let sum = 0
  for (let i = 0; i < length && i < request.weights.length; i++) sum += request.weights[i] ?? 0
  return sum
}

/** §9.3 `lcp(A, B)` for two segmented requests (0 when the keys differ). */
export function commonPrefix(a: SegmentedRequest, b: SegmentedRequest): number {
  if (a.key !== b.key) return 0
  // chain[i] digests the whole prefix 0…i, so equality is monotone: binary search for the last equal index.
  let lo = 0
  let hi = Math.min(a.chain.length, b.chain.length)
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1
    if (a.chain[mid - 1] === b.chain[mid - 1]) lo = mid
    else hi = mid - 1
  }
  return lo
}
