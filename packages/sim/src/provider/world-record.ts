/**
 * The world record (issue #21): what the mock provider actually did, written beside the request capture by
 * `sim run` (`<slug>.world.json`) and `sim serve --capture` (`<capture stem>.world.json`), and read by the
 * world-truth checks WORLD-01 … WORLD-06 (`checker/world.ts`, `sim check --world`). Schema:
 * `packages/sim/schema/world-record.schema.json` (validated with ajv when read and before it is written).
 *
 * Per chat request the world served (valid requests only, arrival order): its route, the answer it gave
 * (kind, HTTP status, the error body for a rejection, the cut of an interrupted stream), the failure class
 * that answer implies (§1.2.2, by the core's own `classifyWireRejection`; null when it answered a complete
 * reply), the `offloadImages` it demanded, the usage it reported (null when the wire carried none: the route
 * omits it, or the stream did not ask for it), the input images (attachment ids, request order) and, for a
 * summary call, the text it returned (§8.4: its text blocks, joined). Per route: the true window, the output
 * cap, the image price and the cost prices. Nothing depends on the wall clock: the record is byte-identical
 * across runs of the same scenario and seed.
 */
import { assertNever, classifyWireRejection, type ContentBlock, type JsonValue, type TokenUsage } from '@compaction-sim/core'
import { anthropicErrorEvent, toAnthropicRejection } from './anthropic-response.ts'
import type { CacheContractSpec } from '../metrics/contracts.ts'
import type { MockRoute } from './route.ts'
import type { MockWire, ParsedRequest, PlannedOutcome, PlannedReply, RequestPurpose } from './types.ts'

/** Version of the world record's shape; bumped with every incompatible change. */
export const WORLD_RECORD_SCHEMA_VERSION = 1

/** The record's `kind` tag. */
export const WORLD_RECORD_KIND = 'compaction-sim/world-record'

/** How the usage of an answer reached the client. */
export type UsageDelivery = 'reported' | 'late' | 'omitted' | 'not-requested' | 'none'

/** What the world answered to one request. */
export interface WorldAnswer {
  /** The planned outcome's kind (`PlannedOutcome`). */
  kind: PlannedOutcome['kind']
  /** HTTP status sent; null when none was (a reset before headers, a hang nobody waited out). */
  status: number | null
  /** The error body of a rejection as sent (JSON), or the in-band error event of a cut stream. */
  body?: JsonValue
  /** How an interrupted stream ended. */
  cut?: 'error' | 'close' | 'in-band'
  /** The reply's finish (`reply` outcomes). */
  finish?: 'stop' | 'tool-calls' | 'max-tokens'
}

/** One chat request the world served. */
export interface WorldRequest {
  /** 0-based arrival index among the valid chat requests (the mock's capture index). */
  index: number
  purpose: RequestPurpose
  model: string
  /** The route that served it (its model id), or null when the world had no route for the model. */
  route: string | null
  stream: boolean
  /** Input image attachment ids, in request order (depth-first, §6.2). */
  images: string[]
  answer: WorldAnswer
  /** The §1.2.2 class of the answer; null for a complete reply (success as far as the wire goes). */
  failureClass: string | null
  /** `offloadImages` the answer demanded (an `IMAGE_OFFLOAD_REQUIRED` class), when it stated one. */
  offloadImages?: number
  /** Why a rejection rejected (`RejectionKind`), when the world knows. */
  rejectionKind?: string
  /** The usage the wire carried; null when it carried none. */
  usage: TokenUsage | null
  usageDelivery: UsageDelivery
  /** A summary call's reply text (its text blocks joined, §8.4); absent for other requests and failures. */
  summaryText?: string
  /** The prompt as the route's tokenizer counted it. */
  providerPromptTokens?: number
}

/** One route as the world knows it. */
export interface WorldRoute {
  model: string
  wire: MockWire
  /** The true window; null = the route reports none. */
  contextWindow: number | null
  maxOutputTokens: number | null
  /** Price of one image (§2.3); null = not reported. */
  imageTokens: number | null
  usage: 'reported' | 'omitted' | 'late'
  /** The cost prices of the run's price entry (USD per million tokens). */
  prices: { id: string; input: number; cacheRead: number; output: number }
}

/** The whole record. */
export interface WorldRecord {
  schemaVersion: typeof WORLD_RECORD_SCHEMA_VERSION
  kind: typeof WORLD_RECORD_KIND
  wire: MockWire
  /**
   * Index of the request capture (§1.1) the first world request corresponds to: 0, or the number of requests
   * crashed child processes dispatched before this world existed (their worlds died with them).
   */
  captureOffset: number
  /**
   * The first seq of the log this world served: 0, or the length of the log a crashed child left (the events
   * before it were written while that child's world, not in this record, answered).
   */
  logOffset: number
  routes: WorldRoute[]
  requests: WorldRequest[]
}

/** Input image ids of a request, depth-first in request order (§6.2). */
export function imagesOf(messages: ParsedRequest['messages']): string[] {
  const out: string[] = []
  const walk = (blocks: readonly ContentBlock[]): void => {
    for (const b of blocks) {
      if (b.type === 'image') out.push(String((b as { attachment: { attachmentId: string } }).attachment.attachmentId))
      else if (b.type === 'tool-result') walk((b as { content: ContentBlock[] }).content)
    }
  }
  for (const m of messages) walk(m.content)
  return out
}

/** The routes of a provider, as recorded. */
export function worldRoutesOf(routes: Iterable<MockRoute>, cache: CacheContractSpec): WorldRoute[] {
  const r = cache.price.rates
  return [...routes].map((route) => ({
    model: route.model, wire: route.wire, contextWindow: route.contextWindow, maxOutputTokens: route.maxOutputTokens,
    imageTokens: route.imageTokens, usage: route.usage,
    prices: { id: cache.price.id, input: r.input, cacheRead: r.cacheRead, output: r.output },
  }))
}

function finishOf(reply: PlannedReply): 'stop' | 'tool-calls' | 'max-tokens' {
  return reply.finish ?? (reply.blocks.some((b) => b.type === 'tool-call') ? 'tool-calls' : 'stop')
}

function classify(status: number | undefined, body: JsonValue, images: boolean): { code: string; offloadImages?: number } {
  const f = classifyWireRejection({ ...(status === undefined ? {} : { status }), body, text: JSON.stringify(body), requestHasImages: images })
  return f.offloadImages === undefined ? { code: f.code } : { code: f.code, offloadImages: f.offloadImages }
}

/**
 * The record of one request: `outcome` is what the world answered, `usage` the usage its writers would send
 * for a reply (`ChunkContext.usage`), `usageMode` the route's usage mode.
 */
export function worldRequestOf(
  parsed: ParsedRequest, outcome: PlannedOutcome, usage: (reply: PlannedReply) => TokenUsage, usageMode: MockRoute['usage'] | undefined,
): WorldRequest {
  const wire = parsed.wire
  const images = imagesOf(parsed.messages)
  const base = {
    index: parsed.index, purpose: parsed.purpose, model: parsed.model, route: parsed.route?.model ?? null, stream: parsed.stream, images,
    ...(parsed.providerPromptTokens === undefined ? {} : { providerPromptTokens: parsed.providerPromptTokens }),
  }
  const none = { usage: null, usageDelivery: 'none' as const }
  const failed = (answer: WorldAnswer, cls: { code: string; offloadImages?: number }): WorldRequest => ({
    ...base, answer, failureClass: cls.code, ...(cls.offloadImages === undefined ? {} : { offloadImages: cls.offloadImages }),
    ...(outcome.kind === 'reject' && outcome.rejectionKind !== undefined ? { rejectionKind: outcome.rejectionKind } : {}), ...none,
  })
  const hasImages = images.length > 0
  switch (outcome.kind) {
    case 'reply': {
      const reply = outcome.reply
      const mode = usageMode ?? 'reported'
      const delivery: UsageDelivery = mode === 'omitted'
        ? 'omitted'
        : mode === 'late' ? 'late' : wire !== 'anthropic' && parsed.stream && !parsed.includeUsage ? 'not-requested' : 'reported'
      const sent = delivery === 'reported' || delivery === 'late'
      const out: WorldRequest = {
        ...base, answer: { kind: 'reply', status: 200, finish: finishOf(reply) }, failureClass: null,
        usage: sent ? structuredClone(usage(reply)) : null, usageDelivery: delivery,
      }
      if (parsed.purpose === 'compaction') {
        out.summaryText = reply.blocks.filter((b) => b.type === 'text').map((b) => String((b as { text: string }).text)).join('')
      }
      return out
    }
    case 'reject': {
      const r = outcome.rejection
      if (r.raw !== undefined) {
        let body: JsonValue
        try {
          body = JSON.parse(r.raw) as JsonValue
        } catch {
          body = r.raw
        }
        return failed({ kind: 'reject', status: r.status, body }, classify(r.status, body, hasImages))
      }
      const sent = wire === 'anthropic' ? toAnthropicRejection(r) : r
      return failed({ kind: 'reject', status: sent.status, body: sent.body }, classify(sent.status, sent.body, hasImages))
    }
    case 'reset':
      return failed({ kind: 'reset', status: null }, { code: outcome.expectedCode ?? 'TRANSPORT' })
    case 'interrupt': {
      const cut = outcome.cut
      if (cut.kind !== 'in-band') return failed({ kind: 'interrupt', status: 200, cut: cut.kind }, { code: 'TRANSPORT' })
      const body: JsonValue = wire === 'anthropic' ? anthropicErrorEvent(cut.error).data as JsonValue : { error: cut.error }
      return failed({ kind: 'interrupt', status: 200, cut: 'in-band', body }, classify(undefined, body, hasImages))
    }
    case 'empty':
      return failed({ kind: 'empty', status: 200 }, { code: 'EMPTY_RESPONSE' })
    case 'hang':
      // Nobody reads a late answer: the client's own timeout (or abort) decides the class.
      return failed({ kind: 'hang', status: null }, { code: outcome.expectedCode ?? 'TIMEOUT' })
    default:
      return assertNever(outcome, 'planned outcome')
  }
}
