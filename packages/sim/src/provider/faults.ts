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
 * - `body` (+ `status`, optional `headers`): a raw response answered verbatim (a string as is, JSON otherwise);
 *   `code` is then only the classification expected of the adapter;
 * - `codes`: several codes, the i-th firing answering the i-th (`times` defaults to their number);
 * - `delivery: after-timeout`: the request hangs until the caller's timeout fires, then the answer (the `code`
 *   rejection, or the request's own reply for TIMEOUT/TRANSPORT/ABORTED/EMPTY_RESPONSE) is rendered late, for nobody
 *   to read; the adapter must report TIMEOUT.
 *
 * `when` (fault targeting; all given conditions must hold): `requestIndex` (0-based over all chat requests of the
 * provider, `ParsedRequest.index`, plus the counts carried over a crash), `purpose`, `occurrence` (1-based among the
 * requests of the fault's target that match every other condition), `turn` / `step` / `atVirtualMs` (from the
 * `RequestContext` the world supplies; without one they never match), `route` (the request's `model`),
 * `promptTokensAtLeast` (`ParsedRequest.providerPromptTokens`), `maxTokensAbove` (a request without `max_tokens`
 * never matches) and `hasImages` (any image block, tool results included). A fault with `times` n fires on n
 * consecutive matches. `eventType` / `afterSeq` are log conditions the runner must translate; the plan refuses them.
 * Counting is global: `FaultCounters` is a plain JSON snapshot a plan can start from (`prior`), so a run split
 * across a crash keeps counting where the crashed process stopped.
 */
import { assertNever, CallId, type FaultSpec, type JsonValue } from '@compaction-sim/core'
import { deterministicSummary } from './deterministic-summary.ts'
import type { LateAnswer, ParsedRequest, PlannedOutcome, PlannedReply, ReplyPlan } from './types.ts'
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
export type FaultDelivery = 'thrown' | 'before-headers' | 'after-headers' | 'after-chunks' | 'in-band' | 'after-timeout'

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
      /** A raw HTTP response answered verbatim (`params.body`): status, body text and headers. */
      raw?: { status: number; text: string; headers: Record<string, string> }
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
const DELIVERIES: ReadonlySet<string> = new Set(['thrown', 'before-headers', 'after-headers', 'after-chunks', 'in-band', 'after-timeout'])
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
  'body',
  'headers',
  'codes',
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
  if (p['body'] !== undefined) out.raw = rawResponse(p, id)
  else if (p['headers'] !== undefined) throw new FaultParamsError(`${id}.params.headers: only with a raw body (params.body)`)
  return out
}

function rawResponse(p: Record<string, JsonValue>, id: string): { status: number; text: string; headers: Record<string, string> } {
  const body = p['body']
  const status = p['status']
  if (typeof status !== 'number' || !Number.isSafeInteger(status) || status < 100 || status > 599)
    throw new FaultParamsError(`${id}.params.status: a raw body needs an HTTP status 100…599`)
  const delivery = p['delivery'] ?? 'thrown'
  if (delivery !== 'thrown' && delivery !== 'before-headers' && delivery !== 'after-timeout')
    throw new FaultParamsError(`${id}.params.delivery: a raw body is a whole response (before-headers or after-timeout), not ${String(delivery)}`)
  const headers: Record<string, string> = { 'content-type': typeof body === 'string' ? 'text/plain; charset=utf-8' : 'application/json' }
  const extra = p['headers'] ?? {}
  if (typeof extra !== 'object' || extra === null || Array.isArray(extra))
    throw new FaultParamsError(`${id}.params.headers: expected an object of strings`)
  for (const [name, value] of Object.entries(extra)) {
    if (typeof value !== 'string') throw new FaultParamsError(`${id}.params.headers.${name}: expected a string`)
    headers[name.toLowerCase()] = value
  }
  return { status, text: typeof body === 'string' ? body : JSON.stringify(body), headers }
}

/**
 * The firings of a fault in order: one per code of `params.codes` (firing i answers code i), else the one fault
 * of `parseFaultParams` for every firing. Throws `FaultParamsError`.
 */
export function parseFaultSchedule(params: Record<string, JsonValue> | undefined, id = 'fault'): InjectedFault[] {
  const codes = params?.['codes']
  if (codes === undefined) return [parseFaultParams(params, id)]
  if (!Array.isArray(codes) || codes.length === 0) throw new FaultParamsError(`${id}.params.codes: expected a non-empty array of codes`)
  if (params?.['code'] !== undefined) throw new FaultParamsError(`${id}.params.codes: give code or codes, not both`)
  const { codes: _codes, ...rest } = params ?? {}
  return codes.map((code, i) => parseFaultParams({ ...rest, code }, `${id}.codes[${i}]`))
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
  const raw = fault.raw
  const rejection = (): PlannedOutcome => {
    if (raw !== undefined) return { kind: 'reject', rejection: { status: raw.status, body: {}, headers: raw.headers, raw: raw.text } }
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
  if (fault.delivery === 'after-timeout') {
    // The caller's timeout fires first; what the provider then sends nobody reads (a conforming caller reports TIMEOUT).
    const answer = rejection()
    const late: LateAnswer = answer.kind === 'reject' ? { kind: 'reject', rejection: answer.rejection } : { kind: 'reply', reply: partial }
    return { kind: 'hang', late, expectedCode: 'TIMEOUT' }
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

/** Request selectors of fault targeting beyond the §13 `FaultSpec.when` keys (module doc). */
export interface FaultTargeting {
  turn?: number
  step?: number
  route?: string
  promptTokensAtLeast?: number
  maxTokensAbove?: number
  hasImages?: boolean
  atVirtualMs?: number
}

/** A §13 `FaultSpec` whose `when` may also carry fault targeting's selectors (a plain `FaultSpec` is one). */
export type TargetedFaultSpec = Omit<FaultSpec, 'when'> & { when: FaultSpec['when'] & FaultTargeting }

/** Where a request stands in the session, as the world knows it; null = unknown (such selectors then never match). */
export interface RequestContext {
  /** 1-based turn of the session. */
  turn: number | null
  /** 1-based step within the turn: the transcript step whose reply the request asks for. */
  step: number | null
  /** Virtual ms since the run's clock origin. */
  virtualMs: number | null
}

/** One fault's counts: requests of its target seen, per condition and all together, firings, and the first missed chance. */
export interface FaultCounter {
  /** Requests of the fault's target (purpose). */
  target: number
  /** Requests of the target matching each selector, by `when` key. */
  conditions: Record<string, number>
  /** Requests of the target matching every selector (what `occurrence` counts). */
  seen: number
  fired: number
  /** The first request at which the fault was due but could not fire, and what answered it instead. */
  missed?: { requestIndex: number; by: string }
}

/** A plan's counts as plain JSON (module doc): carried over a crash by the runner. */
export interface FaultCounters {
  /** Requests seen so far (the base of the next `requestIndex`). */
  requests: number
  /** Requests by purpose. */
  purposes: { conversation: number; compaction: number }
  /** By fault id. */
  faults: Record<string, FaultCounter>
}

/** Options of `FaultInjectingPlan`. */
export interface FaultPlanOptions {
  /** The session position of a request (turn, step, virtual time); without it `turn`/`step`/`atVirtualMs` never match. */
  context?: (request: ParsedRequest) => RequestContext
  /** Counts to continue from (a run resumed after a crash). */
  prior?: FaultCounters
}

interface ArmedFault {
  spec: TargetedFaultSpec
  schedule: InjectedFault[]
  times: number
}

const NO_CONTEXT: RequestContext = { turn: null, step: null, virtualMs: null }

/** Fresh counts for `specs` (every counter zero). */
export function emptyFaultCounters(specs: readonly TargetedFaultSpec[] = []): FaultCounters {
  const faults: Record<string, FaultCounter> = {}
  for (const spec of specs) faults[spec.id] = { target: 0, conditions: {}, seen: 0, fired: 0 }
  return { requests: 0, purposes: { conversation: 0, compaction: 0 }, faults }
}

/**
 * Layers scheduled provider faults over a base plan (module table). A firing fault answers instead of the
 * base plan, which is not consumed (the retry gets the reply the failed request would have had). Faults of
 * other targets (append, crash, …) are ignored: the runner owns them. Throws `FaultParamsError` for bad params.
 */
export class FaultInjectingPlan implements ReplyPlan {
  private readonly base: ReplyPlan
  private readonly armed: ArmedFault[]
  private readonly context: (request: ParsedRequest) => RequestContext
  private readonly indexBase: number
  private readonly state: FaultCounters
  /** `[faultId, requestIndex]` of every firing of this plan, in order (for the report; `counters()` adds the prior ones). */
  readonly fired: Array<[string, number]> = []

  constructor(base: ReplyPlan, faults: readonly TargetedFaultSpec[], options: FaultPlanOptions = {}) {
    this.base = base
    this.armed = faults
      .filter((f) => f.target === 'conversation' || f.target === 'compaction')
      .map((spec) => {
        if (spec.when.eventType !== undefined || spec.when.afterSeq !== undefined) {
          throw new FaultParamsError(`${spec.id}.when: eventType/afterSeq are log conditions; translate them to requestIndex/occurrence`)
        }
        const schedule = parseFaultSchedule(spec.params, spec.id)
        const times = count(spec.params?.['times'], `${spec.id}.params.times`, schedule.length)
        if (schedule.length > 1 && times !== schedule.length) {
          throw new FaultParamsError(`${spec.id}.params.times: must equal the number of codes (${schedule.length})`)
        }
        return { spec, schedule, times }
      })
    this.context = options.context ?? (() => NO_CONTEXT)
    const fresh = emptyFaultCounters(this.armed.map((a) => a.spec))
    const prior = options.prior === undefined ? fresh : structuredClone(options.prior)
    for (const [id, counter] of Object.entries(fresh.faults)) prior.faults[id] ??= counter
    this.state = prior
    this.indexBase = prior.requests
  }

  /** A JSON snapshot of the counts so far, the prior ones included. */
  counters(): FaultCounters {
    return structuredClone(this.state)
  }

  /** The base plan's reply, unchanged. */
  peek(request: ParsedRequest): PlannedReply | undefined {
    return this.base.peek?.(request)
  }

  /** Counts a request the provider answered itself: a fault due on it misses (`FaultCounter.missed`). */
  observe(request: ParsedRequest): void {
    if (request.purpose === 'session-title') return
    this.take(request, 'the provider\'s own enforcement')
  }

  /** A firing fault's outcome, else the base plan's. Session-title calls are never faulted. */
  next(request: ParsedRequest): PlannedOutcome {
    if (request.purpose === 'session-title') return this.base.next(request)
    const hit = this.take(request, null)
    if (hit === undefined) return this.base.next(request)
    const counter = this.counter(hit.spec.id)
    const fault = hit.schedule[Math.min(counter.fired, hit.schedule.length - 1)] ?? hit.schedule[0]
    counter.fired++
    this.fired.push([hit.spec.id, this.indexBase + request.index])
    if (fault === undefined) return this.base.next(request)
    const promptTokens = promptTokensOf(request.messages, request.tools, request.modelInfo?.imageTokens)
    return faultOutcome(fault, request, this.base.peek?.(request), promptTokens)
  }

  private counter(id: string): FaultCounter {
    const existing = this.state.faults[id]
    if (existing !== undefined) return existing
    const fresh: FaultCounter = { target: 0, conditions: {}, seen: 0, fired: 0 }
    this.state.faults[id] = fresh
    return fresh
  }

  /** Counts `request` for every fault and returns the one due on it (`answeredBy` non-null: none may fire). */
  private take(request: ParsedRequest, answeredBy: string | null): ArmedFault | undefined {
    const purpose = request.purpose === 'compaction' ? 'compaction' : 'conversation'
    const index = this.indexBase + request.index
    this.state.requests = Math.max(this.state.requests, index + 1)
    this.state.purposes[purpose]++
    const context = this.context(request)
    let hit: ArmedFault | undefined
    for (const armed of this.armed) {
      const spec = armed.spec
      if (spec.target !== purpose || (spec.when.purpose !== undefined && spec.when.purpose !== purpose)) continue
      const counter = this.counter(spec.id)
      counter.target++
      const failing = failedConditions(spec.when, request, context)
      for (const key of SELECTOR_KEYS) {
        if (spec.when[key] !== undefined && !failing.includes(key)) counter.conditions[key] = (counter.conditions[key] ?? 0) + 1
      }
      if (failing.length > 0) continue
      counter.seen++
      if (counter.fired >= armed.times) continue
      // A repeating fault (times > 1) fires on the consecutive matches that follow its first one.
      const due = spec.when.requestIndex !== undefined
        ? index === spec.when.requestIndex + counter.fired
        : counter.seen === (spec.when.occurrence ?? 1) + counter.fired
      if (!due) continue
      if (answeredBy === null && hit === undefined) {
        hit = armed
        continue
      }
      counter.missed ??= { requestIndex: index, by: answeredBy ?? `fault ${hit?.spec.id ?? '?'}` }
    }
    return hit
  }
}

/** The selector keys of `FaultTargeting`, in the order messages list them. */
export const SELECTOR_KEYS = ['turn', 'step', 'route', 'promptTokensAtLeast', 'maxTokensAbove', 'hasImages', 'atVirtualMs'] as const

/** The selectors of `when` that `request` fails (empty = it matches all of them). */
function failedConditions(when: TargetedFaultSpec['when'], request: ParsedRequest, context: RequestContext): string[] {
  const failed: string[] = []
  const check = (key: (typeof SELECTOR_KEYS)[number], ok: (wanted: never) => boolean): void => {
    const wanted = when[key]
    if (wanted !== undefined && !ok(wanted as never)) failed.push(key)
  }
  check('turn', (turn: number) => context.turn === turn)
  check('step', (step: number) => context.step === step)
  check('route', (model: string) => request.model === model)
  check('promptTokensAtLeast', (n: number) => request.providerPromptTokens !== undefined && request.providerPromptTokens >= n)
  check('maxTokensAbove', (n: number) => request.maxTokens !== undefined && request.maxTokens > n)
  check('hasImages', (wanted: boolean) => hasImage(request) === wanted)
  check('atVirtualMs', (ms: number) => context.virtualMs !== null && context.virtualMs >= ms)
  return failed
}

/** True when any message block of `request`, or any block nested in a tool result, is an image. */
function hasImage(request: ParsedRequest): boolean {
  const isImage = (block: unknown): boolean => {
    if (typeof block !== 'object' || block === null) return false
    const b = block as { type?: unknown; content?: unknown }
    if (b.type === 'image') return true
    return Array.isArray(b.content) && b.content.some(isImage)
  }
  return request.messages.some((m) => m.content.some(isImage))
}
