/**
 * Provider prompt-cache contracts on top of the §9 model (issue #9). `CacheEngine` replays requests in
 * dispatch order — online in the mock provider (which reports its prediction as usage) and offline in the
 * report (which recomputes it from the capture) — so reported and predicted figures agree unless a provider
 * deviates. Every engine also keeps the §9.3 view (best source, `lcp`) the report's divergence and cause use.
 *
 * - `protocol`: §9.3 exactly — `cached = G·floor(reusable/G)` over completed sources within the TTL
 *   (measured from the source's dispatch); defaults G = 1, no TTL.
 * - `openai`: automatic prefix caching; a prompt below 1,024 tokens caches nothing; hits count in 128-token
 *   increments (`128·floor(reusable/128)`, so at least 1,024); the TTL is idle time (refreshed on hit);
 *   no write metric (`prompt_tokens_details.cached_tokens`).
 * - `anthropic`: entries exist only at breakpoints (explicit, at most 4, or automatic at the last block) of
 *   completed requests whose prefix reaches the model's minimum cacheable length; a breakpoint looks for the
 *   longest live entry at its own boundary or up to 20 segment boundaries before it; a hit refreshes the TTL
 *   (5 min, or 1 h with `long` retention); `written` = the prefix up to the last cacheable breakpoint beyond
 *   the read; usage `cache_creation_input_tokens` / `cache_read_input_tokens`. Segments of §9.2 stand for
 *   content blocks (tools → system → messages is their order).
 * - `deepseek`: on by default, no write metric; prefix units are persisted at the end of each completed
 *   request (its whole prompt) and at the common prefix it was detected to share with an earlier request;
 *   a hit is the longest live unit that is a whole prefix of the request, in 64-token storage units — so a
 *   new shared prefix first hits on the third request that carries it.
 */
import { assertNever } from '@compaction-sim/core'
import type { CacheContractName, CacheDeviation } from '../report/types.ts'
import { DEFAULT_PRICE_ENTRY, priceEntry, type PriceEntry } from './prices.ts'
import { commonPrefix, prefixWeight, type SegmentedRequest } from './segments.ts'

/** `provider.cache` of a scenario as written (every key optional). */
export interface CacheContractConfig {
  contract?: CacheContractName
  /** How the mock deviates when it reports usage (the prediction never deviates). Default `none`. */
  deviation?: CacheDeviation
  /** Retention in virtual ms; null = unlimited. Default: protocol/deepseek null, openai/anthropic 5 min, anthropic `long` 1 h. */
  ttlMs?: number | null
  /** §9.3 `G` of the `protocol` contract. Default 1. */
  granularityTokens?: number
  /** Anthropic-style retention class: `short` (5 min, writes 1.25×) or `long` (1 h, writes 2×). Default `short`. */
  retention?: 'short' | 'long'
  /** Anthropic-style explicit breakpoints (segment indexes, at most 4); absent = automatic at the last segment. */
  breakpoints?: number[]
  /** Price table entry id (`prices.ts`). Default per contract. */
  price?: string
  /** Overrides the price entry's minimum cacheable length (Anthropic-style: 512, 1,024, 2,048, 4,096). */
  minimumCacheableTokens?: number
}

/** The resolved, frozen contract. */
export interface CacheContractSpec {
  readonly contract: CacheContractName
  readonly deviation: CacheDeviation
  readonly ttlMs: number | null
  readonly granularityTokens: number
  readonly retention: 'short' | 'long'
  readonly breakpoints: readonly number[] | null
  readonly price: PriceEntry
  readonly minimumCacheableTokens: number
  /** OpenAI-style: prompts below this many tokens cache nothing. */
  readonly minimumPromptTokens: number
  /** Anthropic-style lookback in segment boundaries. */
  readonly lookbackSegments: number
}

/** A contract configuration that cannot be resolved (names the field). */
export class CacheContractError extends Error {
  override readonly name = 'CacheContractError'
  readonly code = 'CACHE_CONTRACT'
  /** The offending key of `provider.cache`. */
  readonly field: string

  constructor(field: string, message: string) {
    super(`provider.cache.${field}: ${message}`)
    this.field = field
  }
}

const CONFIG_KEYS = new Set([
  'contract', 'deviation', 'ttlMs', 'granularityTokens', 'retention', 'breakpoints', 'price', 'minimumCacheableTokens',
])
const FIVE_MINUTES_MS = 300_000
const ONE_HOUR_MS = 3_600_000
/** Anthropic's limit on explicit breakpoints per request. */
export const ANTHROPIC_BREAKPOINTS_MAX = 4

/** Resolves defaults once (AGENTS.md "Explicit > implicit"). Throws `CacheContractError` for unknown keys or bad values. */
export function resolveCacheContract(config: CacheContractConfig = {}): CacheContractSpec {
  for (const key of Object.keys(config)) if (!CONFIG_KEYS.has(key)) throw new CacheContractError(key, 'unknown key')
  const contract = config.contract ?? 'protocol'
  const retention = config.retention ?? 'short'
  const priceId = config.price ?? DEFAULT_PRICE_ENTRY[contract]
  const price = priceEntry(priceId)
  if (price === undefined) throw new CacheContractError('price', `no entry "${priceId}" in the price table`)
  if (config.granularityTokens !== undefined && contract !== 'protocol') {
    throw new CacheContractError('granularityTokens', `only the protocol contract takes a granularity; ${contract} fixes its own`)
  }
  const breakpoints = config.breakpoints ?? null
  if (breakpoints !== null) {
    if (contract !== 'anthropic') throw new CacheContractError('breakpoints', 'only the anthropic contract has explicit breakpoints')
    if (breakpoints.length === 0 || breakpoints.length > ANTHROPIC_BREAKPOINTS_MAX) {
      throw new CacheContractError('breakpoints', `expected 1 to ${ANTHROPIC_BREAKPOINTS_MAX} segment indexes, got ${breakpoints.length}`)
    }
  }
  let ttlMs: number | null
  let granularityTokens: number
  switch (contract) {
    case 'protocol': ttlMs = null; granularityTokens = config.granularityTokens ?? 1; break
    case 'openai': ttlMs = FIVE_MINUTES_MS; granularityTokens = 128; break
    case 'anthropic': ttlMs = retention === 'long' ? ONE_HOUR_MS : FIVE_MINUTES_MS; granularityTokens = 1; break
    case 'deepseek': ttlMs = null; granularityTokens = 64; break
    default: return assertNever(contract, 'cache contract')
  }
  if (config.ttlMs !== undefined) ttlMs = config.ttlMs
  if (!Number.isSafeInteger(granularityTokens) || granularityTokens < 1) {
    throw new CacheContractError('granularityTokens', 'expected an integer ≥ 1')
  }
  if (ttlMs !== null && (!Number.isSafeInteger(ttlMs) || ttlMs < 0)) {
    throw new CacheContractError('ttlMs', 'expected an integer ≥ 0 or null')
  }
  return Object.freeze({
    contract,
    deviation: config.deviation ?? 'none',
    ttlMs,
    granularityTokens,
    retention,
    breakpoints: breakpoints === null ? null : Object.freeze([...breakpoints]),
    price,
    minimumCacheableTokens: config.minimumCacheableTokens ?? price.minimumCacheableTokens,
    minimumPromptTokens: contract === 'openai' ? 1024 : 0,
    lookbackSegments: 20,
  })
}

/** One request to predict, in dispatch order. */
export interface CacheRequestInput {
  /** Dispatch index (reported as the best source). */
  index: number
  /** Dispatch time on the virtual clock. */
  time: number
  segmented: SegmentedRequest
}

/** The §9.3 view of a request: its best source and divergence. */
export interface ReuseView {
  /** Index of the best source; null when there is no source. */
  source: number | null
  /** `lcp` with the best source; null when there is none. */
  divergence: number | null
  /** `reusable` with the best source (0 without one). */
  reusable: number
}

/** What a contract predicts for one request. */
export interface CachePrediction extends ReuseView {
  prompt: number
  /** Cache-read tokens. */
  cached: number
  /** Cache-write tokens (Anthropic-style only). */
  written: number
  /** `prompt − cached − written`. */
  uncached: number
}

interface Source {
  index: number
  time: number
  request: SegmentedRequest
}

/** Bound on the prefix entries one engine keeps (least recently used are dropped first). */
export const CACHE_ENTRIES_MAX = 200_000
/** Bound on the §9.3 sources one engine keeps (oldest dropped first). */
export const CACHE_SOURCES_MAX = 10_000

/**
 * The stateful cache of one provider under one contract (module doc). `predict` is pure with respect to the
 * state; `record` applies a request after its outcome is known (rejected requests are not sources, §9.3).
 */
export class CacheEngine {
  readonly spec: CacheContractSpec
  private readonly sources: Source[] = []
  /** Prefix chain digest → last write or hit time (openai, anthropic, deepseek units). */
  private readonly entries = new Map<string, number>()

  constructor(spec: CacheContractSpec) {
    this.spec = spec
  }

  private alive(time: number, at: number | undefined): boolean {
    return at !== undefined && (this.spec.ttlMs === null || time - at <= this.spec.ttlMs)
  }

  /** §9.3: the best completed source on the same key within the TTL (largest lcp, then most recent). */
  reuse(request: CacheRequestInput): ReuseView {
    let best: { source: Source; lcp: number } | null = null
    for (const s of this.sources) {
      if (s.request.key !== request.segmented.key) continue
      if (this.spec.ttlMs !== null && request.time - s.time > this.spec.ttlMs) continue
      const lcp = commonPrefix(s.request, request.segmented)
      if (best === null || lcp >= best.lcp) best = { source: s, lcp }
    }
    if (best === null) return { source: null, divergence: null, reusable: 0 }
    return { source: best.source.index, divergence: best.lcp, reusable: prefixWeight(request.segmented, best.lcp) }
  }

  /** The longest prefix length k whose chain entry is live, scanning `from` down to `to` (0 when none). */
  private longestLive(seg: SegmentedRequest, time: number, from: number, to: number): number {
    for (let k = from; k >= Math.max(1, to); k--) if (this.alive(time, this.entries.get(seg.chain[k - 1] ?? ''))) return k
    return 0
  }

  /** Breakpoint segment indexes of `seg` (Anthropic-style): explicit ones inside the request, else the last segment. */
  private breakpointsOf(seg: SegmentedRequest): number[] {
    const n = seg.chain.length
    if (this.spec.breakpoints === null) return n === 0 ? [] : [n - 1]
    return [...new Set(this.spec.breakpoints.filter((b) => b >= 0 && b < n))].sort((a, b) => a - b)
  }

  /** The contract's prediction for `request` against the current state. */
  predict(request: CacheRequestInput): CachePrediction {
    const view = this.reuse(request)
    const seg = request.segmented
    const { prompt } = seg
    const n = seg.chain.length
    let cached = 0
    let written = 0
    const contract = this.spec.contract
    switch (contract) {
      case 'protocol': {
        const g = this.spec.granularityTokens
        cached = g * Math.floor(view.reusable / g)
        break
      }
      case 'openai': {
        if (prompt < this.spec.minimumPromptTokens) break
        const reusable = prefixWeight(seg, this.longestLive(seg, request.time, n, 1))
        const hit = 128 * Math.floor(reusable / 128)
        cached = hit >= this.spec.minimumPromptTokens ? hit : 0
        break
      }
      case 'anthropic': {
        const cacheable = this.breakpointsOf(seg).filter((b) => prefixWeight(seg, b + 1) >= this.spec.minimumCacheableTokens)
        for (const b of cacheable) {
          const k = this.longestLive(seg, request.time, b + 1, b + 1 - this.spec.lookbackSegments)
          cached = Math.max(cached, prefixWeight(seg, k))
        }
        const last = cacheable.at(-1)
        if (last !== undefined) written = Math.max(0, prefixWeight(seg, last + 1) - cached)
        break
      }
      case 'deepseek': {
        const k = this.longestLive(seg, request.time, n, 1)
        cached = 64 * Math.floor(prefixWeight(seg, k) / 64)
        break
      }
      default:
        return assertNever(contract, 'cache contract')
    }
    return { ...view, prompt, cached, written, uncached: prompt - cached - written }
  }

  private touch(digest: string | undefined, time: number): void {
    if (digest === undefined) return
    this.entries.delete(digest)
    this.entries.set(digest, time)
    if (this.entries.size > CACHE_ENTRIES_MAX) {
      const oldest = this.entries.keys().next()
      if (oldest.done !== true) this.entries.delete(oldest.value)
    }
  }

  /**
   * Applies a request whose outcome is known: a completed one (finish stop | tool-calls | max-tokens) becomes
   * a §9.3 source and writes the contract's entries (refreshing the ones it hit); a rejected or failed one
   * changes nothing (§9.3 "rejected requests are not sources").
   */
  record(request: CacheRequestInput, completed: boolean): void {
    if (!completed) return
    const seg = request.segmented
    const n = seg.chain.length
    const t = request.time
    const contract = this.spec.contract
    switch (contract) {
      case 'protocol':
        break
      case 'openai': {
        // Idle TTL: every prefix of the request is now warm (hit or written).
        for (const digest of seg.chain) this.touch(digest, t)
        break
      }
      case 'anthropic': {
        for (const b of this.breakpointsOf(seg)) {
          if (prefixWeight(seg, b + 1) < this.spec.minimumCacheableTokens) continue // below the minimum: neither read nor written
          const k = this.longestLive(seg, t, b + 1, b + 1 - this.spec.lookbackSegments)
          if (k > 0) this.touch(seg.chain[k - 1], t) // a hit refreshes its entry
          this.touch(seg.chain[b], t)
        }
        break
      }
      case 'deepseek': {
        const detected = this.reuse(request).divergence
        if (detected !== null && detected > 0 && detected < n) this.touch(seg.chain[detected - 1], t)
        this.touch(seg.chain[n - 1], t)
        break
      }
      default:
        assertNever(contract, 'cache contract')
    }
    this.sources.push({ index: request.index, time: t, request: seg })
    if (this.sources.length > CACHE_SOURCES_MAX) this.sources.shift()
  }
}

/** The usage a deviating provider reports instead of `prediction` (`none` = the prediction itself). */
export function deviate(prediction: CachePrediction, deviation: CacheDeviation): { cached: number; written: number; uncached: number } {
  switch (deviation) {
    case 'none':
      return { cached: prediction.cached, written: prediction.written, uncached: prediction.uncached }
    case 'none-cached':
      return { cached: 0, written: 0, uncached: prediction.prompt }
    case 'half-cached': {
      const cached = Math.floor(prediction.cached / 2)
      return { cached, written: prediction.written, uncached: prediction.prompt - cached - prediction.written }
    }
    default:
      return assertNever(deviation, 'cache deviation')
  }
}
