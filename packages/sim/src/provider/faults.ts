/**
 * Provider faults of §13.1/§13.2 as mock outcomes. A `FaultSpec` (§13, run manifest) with target
 * `conversation` or `compaction` carries its wire behaviour in `params`:
 *
 * - `code`: the canonical code the adapter must report — `CONTEXT_WINDOW_EXCEEDED`, `IMAGE_OFFLOAD_REQUIRED`,
 *   `RATE_LIMIT`, `SERVER`, `TRANSPORT`, `TIMEOUT`, `ABORTED`, `EMPTY_RESPONSE` or `UNKNOWN`;
 * - `delivery`: `thrown` (default: an HTTP rejection, or a reset / hang / empty stream for the codes that
 *   have no status), `before-headers`, `after-headers`, `after-chunks` (with `afterChunks`), or `in-band`
 *   (an SSE `data: {"error":…}` event after `afterChunks`, default 0, data events);
 * - `afterChunks`, `offloadImages` (any JSON, written verbatim: missing / 0 / 1.5 give FAULT-15), `status`
 *   (SERVER: 5xx, default 500; IMAGE_OFFLOAD_REQUIRED: 400 or 413), `retryAfterMs` (RATE_LIMIT), `cut`
 *   (`error` | `close`, how a TRANSPORT stream ends), `times` (consecutive matching requests, default 1);
 * - or `reply` instead of `code`: a summary-content fault (FAULT-23…27) — `max-tokens`, `empty`,
 *   `reasoning-only`, `image`, `nested-image`, `mixed` (text + reasoning + tool call) or `not-smaller`.
 *
 * `when`: `requestIndex` (0-based over all chat requests of the provider, `ParsedRequest.index`), `purpose`, `occurrence`
 * (1-based among requests of that purpose); all given conditions must hold. `eventType` / `afterSeq` are
 * log conditions the runner must translate; the plan refuses them.
 */
import { assertNever, CallId, type FaultSpec, type JsonValue } from '@compaction-sim/core'
import { deterministicSummary } from './deterministic-summary.ts'
import type { ParsedRequest, PlannedOutcome, PlannedReply, ReplyPlan } from './types.ts'
import {
  imageOffloadRejection,
  inBandError,
  overflowRejection,
  rateLimitRejection,
  serverRejection,
  unrecognisedRejection,
} from './wire-response.ts'
import { promptTokensOf } from './prompt-cache.ts'

/** Canonical codes a provider fault can inject. */
export type InjectedCode =
  | 'CONTEXT_WINDOW_EXCEEDED'
  | 'IMAGE_OFFLOAD_REQUIRED'
  | 'RATE_LIMIT'
  | 'SERVER'
  | 'TRANSPORT'
  | 'TIMEOUT'
  | 'ABORTED'
  | 'EMPTY_RESPONSE'
  | 'UNKNOWN'

/** When, relative to the response, a fault is delivered (design §4 item 4). */
export type FaultDelivery = 'thrown' | 'before-headers' | 'after-headers' | 'after-chunks' | 'in-band'

/** Summary-content faults (§13.2). */
export type ReplyVariant = 'max-tokens' | 'empty' | 'reasoning-only' | 'image' | 'nested-image' | 'mixed' | 'not-smaller'

/** A validated fault: a failure with its delivery, or a scripted reply variant. */
export type InjectedFault =
  | {
      kind: 'failure'
      code: InjectedCode
      delivery: FaultDelivery
      afterChunks: number
      offloadImages?: JsonValue
      status?: number
      retryAfterMs?: number
      cut: 'error' | 'close'
    }
  | { kind: 'reply'; variant: ReplyVariant }

/** Bad fault parameters (input error of a scenario; the message names the JSON path). */
export class FaultParamsError extends Error {
  override readonly name = 'FaultParamsError'
  readonly code = 'FAULT_PARAMS'
}

const CODES: ReadonlySet<string> = new Set([
  'CONTEXT_WINDOW_EXCEEDED',
  'IMAGE_OFFLOAD_REQUIRED',
  'RATE_LIMIT',
  'SERVER',
  'TRANSPORT',
  'TIMEOUT',
  'ABORTED',
  'EMPTY_RESPONSE',
  'UNKNOWN',
])
const DELIVERIES: ReadonlySet<string> = new Set(['thrown', 'before-headers', 'after-headers', 'after-chunks', 'in-band'])
const VARIANTS: ReadonlySet<string> = new Set(['max-tokens', 'empty', 'reasoning-only', 'image', 'nested-image', 'mixed', 'not-smaller'])
const PARAM_KEYS: ReadonlySet<string> = new Set([
  'code',
  'delivery',
  'afterChunks',
  'offloadImages',
  'status',
  'retryAfterMs',
  'cut',
  'times',
  'reply',
  'message',
])

function count(value: JsonValue | undefined, path: string, fallback: number): number {
  if (value === undefined) return fallback
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0)
    throw new FaultParamsError(`${path}: expected a non-negative integer, got ${JSON.stringify(value)}`)
  return value
}

/** Validates `FaultSpec.params` of a provider fault (module table). Throws `FaultParamsError`; `id` prefixes paths. */
export function parseFaultParams(params: Record<string, JsonValue> | undefined, id = 'fault'): InjectedFault {
  const p = params ?? {}
  for (const key of Object.keys(p)) if (!PARAM_KEYS.has(key)) throw new FaultParamsError(`${id}.params.${key}: unknown parameter`)
  if (p['reply'] !== undefined) {
    const variant = p['reply']
    if (typeof variant !== 'string' || !VARIANTS.has(variant))
      throw new FaultParamsError(`${id}.params.reply: expected one of ${[...VARIANTS].join(', ')}`)
    return { kind: 'reply', variant: variant as ReplyVariant }
  }
  const code = p['code']
  if (typeof code !== 'string' || !CODES.has(code))
    throw new FaultParamsError(`${id}.params.code: expected one of ${[...CODES].join(', ')}, got ${JSON.stringify(code ?? null)}`)
  const delivery = p['delivery'] ?? 'thrown'
  if (typeof delivery !== 'string' || !DELIVERIES.has(delivery))
    throw new FaultParamsError(`${id}.params.delivery: expected one of ${[...DELIVERIES].join(', ')}`)
  const cut = p['cut'] ?? 'error'
  if (cut !== 'error' && cut !== 'close') throw new FaultParamsError(`${id}.params.cut: expected "error" or "close"`)
  const out: InjectedFault = {
    kind: 'failure',
    code: code as InjectedCode,
    delivery: delivery as FaultDelivery,
    afterChunks: count(p['afterChunks'], `${id}.params.afterChunks`, 0),
    cut,
  }
  if (p['offloadImages'] !== undefined) out.offloadImages = p['offloadImages']
  if (p['status'] !== undefined) out.status = count(p['status'], `${id}.params.status`, 0)
  if (p['retryAfterMs'] !== undefined) out.retryAfterMs = count(p['retryAfterMs'], `${id}.params.retryAfterMs`, 0)
  return out
}

const FILLER: PlannedReply = { blocks: [{ type: 'text', text: 'Working on it: reading the files involved before answering.' }] }

function variantReply(variant: ReplyVariant, request: ParsedRequest): PlannedReply {
  const summary = deterministicSummary(request)
  const image = {
    type: 'image',
    attachment: { attachmentId: 'sha256:mock-output-image', mediaType: 'image/png', bytes: 68, width: 1, height: 1 },
  } as const
  switch (variant) {
    case 'max-tokens':
      return { blocks: [{ type: 'text', text: summary.slice(0, Math.ceil(summary.length / 2)) }], finish: 'max-tokens' }
    case 'empty':
      return { blocks: [], finish: 'stop' }
    case 'reasoning-only':
      return { blocks: [{ type: 'reasoning', text: 'Thinking about what to keep.' }], finish: 'stop' }
    case 'image':
      return { blocks: [{ type: 'text', text: summary }, image], finish: 'stop' }
    case 'nested-image':
      return {
        blocks: [
          { type: 'text', text: summary },
          { type: 'tool-result', toolCallId: CallId('call_mock_image'), content: [image] },
        ],
        finish: 'stop',
      }
    case 'mixed':
      return {
        blocks: [
          { type: 'reasoning', text: 'Condensing the region.' },
          { type: 'text', text: summary },
          { type: 'tool-call', id: CallId('call_mock_summary'), name: 'noop', arguments: '{}' },
        ],
        finish: 'stop',
      }
    case 'not-smaller': {
      const all = request.messages
        .flatMap((m) => m.content)
        .map((b) => JSON.stringify(b))
        .join('\n')
      return { blocks: [{ type: 'text', text: `${summary}\n\n${all}\n${all}` }], finish: 'stop' }
    }
    default:
      return assertNever(variant, 'reply variant')
  }
}

/**
 * The outcome of an injected fault for `request`. `reply` is what the request would otherwise get (its
 * first `afterChunks` events are streamed before a mid-stream fault); `promptTokens` fills the overflow message.
 */
export function faultOutcome(
  fault: InjectedFault,
  request: ParsedRequest,
  reply: PlannedReply | undefined,
  promptTokens: number,
): PlannedOutcome {
  if (fault.kind === 'reply') return { kind: 'reply', reply: variantReply(fault.variant, request) }
  const partial = reply ?? FILLER
  const rejection = (): PlannedOutcome => {
    switch (fault.code) {
      case 'CONTEXT_WINDOW_EXCEEDED':
        return {
          kind: 'reject',
          rejection: overflowRejection(request.wire, request.modelInfo?.contextWindow ?? Math.max(1, promptTokens - 1), promptTokens),
        }
      case 'IMAGE_OFFLOAD_REQUIRED':
        return { kind: 'reject', rejection: imageOffloadRejection(fault.offloadImages, fault.status ?? 400) }
      case 'RATE_LIMIT':
        return { kind: 'reject', rejection: rateLimitRejection(request.wire, fault.retryAfterMs) }
      case 'SERVER':
        return { kind: 'reject', rejection: serverRejection(fault.status ?? 500) }
      case 'UNKNOWN':
        return { kind: 'reject', rejection: unrecognisedRejection() }
      case 'TRANSPORT':
        return { kind: 'reset' }
      case 'TIMEOUT':
      case 'ABORTED':
        return { kind: 'hang' }
      case 'EMPTY_RESPONSE':
        return { kind: 'empty' }
      default:
        return assertNever(fault.code, 'injected code')
    }
  }
  const afterChunks = fault.delivery === 'after-headers' ? 0 : fault.afterChunks
  const midStream = (): PlannedOutcome => {
    switch (fault.code) {
      case 'TRANSPORT':
        return { kind: 'interrupt', reply: partial, afterChunks, cut: { kind: fault.cut } }
      case 'TIMEOUT':
      case 'ABORTED':
        return { kind: 'hang', reply: partial, afterChunks }
      case 'EMPTY_RESPONSE':
        return { kind: 'empty' }
      default: {
        const before = rejection()
        if (before.kind !== 'reject') return before
        return { kind: 'interrupt', reply: partial, afterChunks, cut: { kind: 'in-band', error: inBandError(before.rejection) } }
      }
    }
  }
  const outcome = fault.delivery === 'thrown' || fault.delivery === 'before-headers' ? rejection() : midStream()
  // `expect.rejections` counts a rejection a declared fault injected as kind `fault`, whatever its code.
  return { ...outcome, expectedCode: expectedCode(fault), ...(outcome.kind === 'reject' ? { rejectionKind: 'fault' as const } : {}) }
}

function expectedCode(fault: Extract<InjectedFault, { kind: 'failure' }>): string {
  if (fault.code !== 'IMAGE_OFFLOAD_REQUIRED' || fault.status !== 413) return fault.code
  const k = fault.offloadImages
  return typeof k === 'number' && Number.isSafeInteger(k) && k > 0 ? fault.code : 'UNKNOWN'
}

interface ArmedFault {
  spec: FaultSpec
  fault: InjectedFault
  times: number
  fired: number
}

/**
 * Layers scheduled provider faults over a base plan (module table). A firing fault answers instead of the
 * base plan, which is not consumed (the retry gets the reply the failed request would have had). Faults of
 * other targets (append, crash, …) are ignored: the runner owns them. Throws `FaultParamsError` for bad params.
 */
export class FaultInjectingPlan implements ReplyPlan {
  private readonly base: ReplyPlan
  private readonly armed: ArmedFault[]
  private readonly counts = new Map<string, number>()
  /** `[faultId, requestIndex]` of every firing, in order (for the report). */
  readonly fired: Array<[string, number]> = []

  constructor(base: ReplyPlan, faults: readonly FaultSpec[]) {
    this.base = base
    this.armed = faults
      .filter((f) => f.target === 'conversation' || f.target === 'compaction')
      .map((spec) => {
        if (spec.when.eventType !== undefined || spec.when.afterSeq !== undefined) {
          throw new FaultParamsError(`${spec.id}.when: eventType/afterSeq are log conditions; translate them to requestIndex/occurrence`)
        }
        return {
          spec,
          fault: parseFaultParams(spec.params, spec.id),
          times: count(spec.params?.['times'], `${spec.id}.params.times`, 1),
          fired: 0,
        }
      })
  }

  /** The base plan's reply, unchanged. */
  peek(request: ParsedRequest): PlannedReply | undefined {
    return this.base.peek?.(request)
  }

  /** A firing fault's outcome, else the base plan's. Session-title calls are never faulted. */
  next(request: ParsedRequest): PlannedOutcome {
    if (request.purpose === 'session-title') return this.base.next(request)
    const purpose = request.purpose
    const occurrence = (this.counts.get(purpose) ?? 0) + 1
    this.counts.set(purpose, occurrence)
    const hit = this.armed.find((a) => a.fired < a.times && matches(a.spec, purpose, request.index, occurrence, a.fired))
    if (hit === undefined) return this.base.next(request)
    hit.fired++
    this.fired.push([hit.spec.id, request.index])
    const promptTokens = promptTokensOf(request.messages, request.tools, request.modelInfo?.imageTokens)
    return faultOutcome(hit.fault, request, this.base.peek?.(request), promptTokens)
  }
}

function matches(
  spec: FaultSpec,
  purpose: 'conversation' | 'compaction',
  requestIndex: number,
  occurrence: number,
  fired: number,
): boolean {
  if (spec.target !== purpose) return false
  const when = spec.when
  if (when.purpose !== undefined && when.purpose !== purpose) return false
  // A repeating fault (times > 1) fires on the consecutive requests that follow its first match.
  if (when.requestIndex !== undefined && requestIndex !== when.requestIndex + fired) return false
  if (when.occurrence !== undefined && occurrence !== when.occurrence + fired) return false
  return true
}
