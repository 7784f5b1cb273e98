/**
 * The one dated, versioned price table of the cache and cost report (issue #9). Every price the report
 * uses comes from here, never from logic: a cost is `tokens × rate / 1e6` with the rate of the request's
 * entry at the request's virtual time (DeepSeek-style off-peak windows). Rates are USD per million tokens
 * as the providers' public price pages listed them on `PRICE_TABLE_DATE`; the `nominal/*` entries are
 * round illustrative figures for the plain §9 model (no real provider). Change prices only by adding a new
 * table version and date, so older reports stay explainable by the date they name.
 */
import type { CacheContractName } from '../report/types.ts'

/** Version of this table; bumped with every change of a rate. */
export const PRICE_TABLE_VERSION = 1

/** The day the rates below were taken from the providers' price pages (ISO date). */
export const PRICE_TABLE_DATE = '2025-08-15'

/** A daily UTC window with its own rates (DeepSeek's off-peak discount). `fromMinute` may exceed `toMinute` (wraps midnight). */
export interface PriceWindow {
  /** Start of the window, minutes after 00:00 UTC (inclusive). */
  fromMinute: number
  /** End of the window, minutes after 00:00 UTC (exclusive). */
  toMinute: number
  rates: PriceRates
}

/** USD per million tokens. */
export interface PriceRates {
  /** Uncached input. */
  input: number
  /** Cache read (hit). */
  cacheRead: number
  output: number
}

/** One priced model family. */
export interface PriceEntry {
  /** `provider/model-family`, the id scenarios name in `provider.cache.price`. */
  id: string
  /** The contract whose semantics the entry prices. */
  contract: CacheContractName
  rates: PriceRates
  /**
   * Cache-write price as a multiple of `rates.input`, per retention (Anthropic-style 5 min 1.25×, 1 h 2×).
   * OpenAI-style families charge no write surcharge (1×); DeepSeek has no write metric (1×).
   */
  writeMultiplier: { short: number; long: number }
  /** Anthropic-style minimum cacheable prompt length of the model family, in tokens (0 = none). */
  minimumCacheableTokens: number
  /** Daily windows with other rates (off-peak); empty when the family has one price all day. */
  windows: readonly PriceWindow[]
}

const none = { short: 1, long: 1 }
const anthropicWrites = { short: 1.25, long: 2 }
/** No write surcharge, no minimum, one price all day. */
const flat = { writeMultiplier: none, minimumCacheableTokens: 0, windows: [] }
/** DeepSeek's off-peak window: 16:30–00:30 UTC. */
const OFF_PEAK = { fromMinute: 16 * 60 + 30, toMinute: 30 }

/** Every entry of table version `PRICE_TABLE_VERSION`. */
export const PRICE_ENTRIES: readonly PriceEntry[] = Object.freeze([
  { id: 'nominal/protocol', contract: 'protocol', rates: { input: 1, cacheRead: 0.1, output: 4 }, ...flat },
  { id: 'openai/gpt-4.1', contract: 'openai', rates: { input: 2, cacheRead: 0.5, output: 8 }, ...flat },
  { id: 'openai/gpt-4.1-mini', contract: 'openai', rates: { input: 0.4, cacheRead: 0.1, output: 1.6 }, ...flat },
  { id: 'openai/gpt-4o', contract: 'openai', rates: { input: 2.5, cacheRead: 1.25, output: 10 }, ...flat },
  { id: 'openai/gpt-5', contract: 'openai', rates: { input: 1.25, cacheRead: 0.125, output: 10 }, ...flat },
  {
    id: 'anthropic/claude-sonnet-4', contract: 'anthropic', rates: { input: 3, cacheRead: 0.3, output: 15 },
    writeMultiplier: anthropicWrites, minimumCacheableTokens: 1024, windows: [],
  },
  {
    id: 'anthropic/claude-opus-4.1', contract: 'anthropic', rates: { input: 15, cacheRead: 1.5, output: 75 },
    writeMultiplier: anthropicWrites, minimumCacheableTokens: 1024, windows: [],
  },
  {
    id: 'anthropic/claude-3.5-haiku', contract: 'anthropic', rates: { input: 0.8, cacheRead: 0.08, output: 4 },
    writeMultiplier: anthropicWrites, minimumCacheableTokens: 2048, windows: [],
  },
  {
    id: 'deepseek/deepseek-chat', contract: 'deepseek', rates: { input: 0.27, cacheRead: 0.07, output: 1.1 }, writeMultiplier: none,
    minimumCacheableTokens: 0, windows: [{ ...OFF_PEAK, rates: { input: 0.135, cacheRead: 0.035, output: 0.55 } }],
  },
  {
    id: 'deepseek/deepseek-reasoner', contract: 'deepseek', rates: { input: 0.55, cacheRead: 0.14, output: 2.19 }, writeMultiplier: none,
    minimumCacheableTokens: 0, windows: [{ ...OFF_PEAK, rates: { input: 0.135, cacheRead: 0.035, output: 0.55 } }],
  },
] satisfies PriceEntry[])

/** The entry a contract uses when the scenario names none. */
export const DEFAULT_PRICE_ENTRY: Readonly<Record<CacheContractName, string>> = Object.freeze({
  protocol: 'nominal/protocol',
  openai: 'openai/gpt-4.1',
  anthropic: 'anthropic/claude-sonnet-4',
  deepseek: 'deepseek/deepseek-chat',
})

/** The entry with `id`, or undefined when the table has none. */
export function priceEntry(id: string): PriceEntry | undefined {
  return PRICE_ENTRIES.find((e) => e.id === id)
}

const DAY_MS = 86_400_000

/** The rates of `entry` at virtual time `timeMs` (epoch ms, UTC): a window's when one covers the minute of the day, else the base rates. */
export function ratesAt(entry: PriceEntry, timeMs: number): PriceRates {
  const minute = Math.floor((((timeMs % DAY_MS) + DAY_MS) % DAY_MS) / 60_000)
  for (const w of entry.windows) {
    const inside = w.fromMinute <= w.toMinute
      ? minute >= w.fromMinute && minute < w.toMinute
      : minute >= w.fromMinute || minute < w.toMinute
    if (inside) return w.rates
  }
  return entry.rates
}

/** Token counts of one request to price. */
export interface PricedTokens {
  uncached: number
  cached: number
  written: number
  output: number
}

/** The cost in USD of `tokens` under `entry` at `timeMs`; writes use the multiplier of the retention (`long` = 1 h). */
export function costOf(entry: PriceEntry, timeMs: number, tokens: PricedTokens, longRetention: boolean): number {
  const r = ratesAt(entry, timeMs)
  const write = r.input * (longRetention ? entry.writeMultiplier.long : entry.writeMultiplier.short)
  return (tokens.uncached * r.input + tokens.cached * r.cacheRead + tokens.written * write + tokens.output * r.output) / 1e6
}
