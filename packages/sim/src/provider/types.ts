/**
 * Vocabulary of the mock provider (design §4 item 4): what a parsed chat request looks like to a reply
 * plan, what a plan can answer (a reply, or a fault with its delivery timing), and what the provider
 * captures per request for the runner's report and `sim check --requests`.
 */
import type { ContentBlock, JsonValue, TokenUsage, ToolSchema } from '@compaction-sim/core'
import type { MockRoute } from './route.ts'

/** The wire dialects the mock speaks (OpenAI chat completions, DeepSeek's variant, Anthropic messages). */
export type MockWire = 'openai' | 'deepseek' | 'anthropic'

/** Call classification, from the model-invisible purpose header (absent = conversation, §8.2). */
export type RequestPurpose = 'conversation' | 'compaction' | 'session-title'

/** A wire message decoded back into protocol blocks (§9.2 segments use exactly `{role, content}`). */
export interface DecodedMessage {
  role: 'system' | 'user' | 'assistant'
  content: ContentBlock[]
}

/** The source of `time` for captures and `created` fields (a virtual clock; never the wall clock). */
export interface ProviderClock {
  /** Current virtual time in milliseconds. */
  now(): number
}

/** Metadata of one model the mock serves (reported by `GET …/models/<id>`). */
export interface MockModel {
  id: string
  contextWindow: number
  /** Route-declared price of one image (§2.3); also used by the mock's prompt estimate. */
  imageTokens?: number
  defaultMaxTokens?: number
  /** Largest `max_tokens` the route accepts (its `maxOutputTokens`), reported as `max_output_tokens`. */
  maxOutputTokens?: number
}

/** One chat-completions request as a reply plan sees it (validated at the HTTP boundary). */
export interface ParsedRequest {
  /** 0-based index among the chat requests this provider received (valid ones only). */
  index: number
  wire: MockWire
  purpose: RequestPurpose
  model: string
  /** The model's metadata when the mock knows it. */
  modelInfo: MockModel | undefined
  /** The provider-world route serving the request (issue #15), when the mock was given routes. */
  route?: MockRoute | undefined
  /** Messages decoded to protocol blocks (tool messages become user messages with one tool-result block). */
  messages: DecodedMessage[]
  tools?: ToolSchema[]
  stream: boolean
  includeUsage: boolean
  maxTokens?: number
  temperature?: number
  stop?: string[]
  reasoningEffort?: string
  sessionId?: string
  /** Which body field carried `maxTokens` (`max_completion_tokens` or `max_tokens`), for the provider's own error text. */
  maxTokensField?: 'max_tokens' | 'max_completion_tokens'
  /**
   * The request body as received (parsed JSON, validated by the wire's parser), for rules that need the wire's
   * own message indexes and fields (strict wire validation, `enforce.ts`). Set by `MockProvider`.
   */
  wireBody?: JsonValue
  /** The prompt as the provider counts it (`CapturedWireRequest.providerPromptTokens`), set before the plan is asked. */
  providerPromptTokens?: number
}

/** Wire finish of a planned reply. Default: `tool-calls` when the reply has a tool call, else `stop`. */
export type PlannedFinish = 'stop' | 'tool-calls' | 'max-tokens'

/** A reply to stream: protocol blocks, optional usage (absent = the mock's estimate, §9.3) and finish. */
export interface PlannedReply {
  blocks: ContentBlock[]
  usage?: TokenUsage
  finish?: PlannedFinish
  /** Largest SSE delta piece of this reply in UTF-16 units (≥ 2; a summarizer's `chunks`). Default: the mock's `deltaChars`. */
  deltaChars?: number
  /** Virtual milliseconds the provider spends before the first byte (a summarizer's latency; the world advances its clock). */
  latencyMs?: number
}

/** An HTTP rejection: status, JSON body and extra headers (e.g. `retry-after-ms`). */
export interface WireRejectionPlan {
  status: number
  body: { [key: string]: JsonValue }
  headers?: Record<string, string>
  /** A raw body sent verbatim instead of `body`, on every wire (fault targeting's `params.body`); `headers` carry its content type. */
  raw?: string
}

/** What a `hang` answers once the caller has given up (fault delivery `after-timeout`): a late reply or rejection nobody reads. */
export type LateAnswer = { kind: 'reply'; reply: PlannedReply } | { kind: 'reject'; rejection: WireRejectionPlan }

/** How a started (status 200) stream is cut short. */
export type StreamCut =
  | { kind: 'error' } // the body errors (socket destroyed on a real server): TRANSPORT
  | { kind: 'close' } // the body ends cleanly without a finish or `[DONE]`: TRANSPORT
  | { kind: 'in-band'; error: { [key: string]: JsonValue } } // `data: {"error":{…}}`, then the body ends

/**
 * What the provider does with one request. Delivery timing is part of the outcome (style rule 13):
 * `reject` answers with an error status; `reset` fails before headers (a network error); `interrupt`
 * sends status 200 and `afterChunks` SSE data events of `reply` (0 = right after the headers), then `cut`;
 * `hang` never answers (before headers, or after `afterChunks` events) until the client gives up (its
 * timeout or abort); `empty` is a 200 stream with no choice at all, only `[DONE]`. `interrupt` and
 * `hang` never send the finish chunk: `afterChunks` is clamped below the reply's finish event.
 */
export type PlannedOutcome = (
  | { kind: 'reply'; reply: PlannedReply }
  | { kind: 'reject'; rejection: WireRejectionPlan }
  | { kind: 'reset' }
  | { kind: 'interrupt'; reply: PlannedReply; afterChunks: number; cut: StreamCut }
  | { kind: 'hang'; reply?: PlannedReply; afterChunks?: number; late?: LateAnswer }
  | { kind: 'empty' }
) & {
  /** The canonical code (§1.2.2) a conforming adapter reports for this outcome; copied into the capture. */
  expectedCode?: string
  /** Why a `reject` outcome rejects (`RejectionKind`); copied into the capture as `rejectionKind`. */
  rejectionKind?: RejectionKind
}

/**
 * Why the mock rejected a request (issue #15), for `expect.rejections`: the route's window (`window`, prompt or
 * prompt + max_tokens), strict wire validation (`pairing`: tool call/result pairing and order, role
 * alternation, orphan reasoning), image limits (`images`), `max_tokens` above the route's cap (`max-output`),
 * or a declared fault (`fault`, `provider/faults.ts`).
 */
export type RejectionKind = 'window' | 'pairing' | 'images' | 'max-output' | 'fault'

/** Decides the outcome of each chat request, in arrival order. Must be deterministic. */
export interface ReplyPlan {
  /** The outcome of `request`; consumes whatever the plan serves in order. */
  next(request: ParsedRequest): PlannedOutcome
  /** The reply `next` would serve for `request`, without consuming it (used for partial streams of faults). */
  peek?(request: ParsedRequest): PlannedReply | undefined
  /**
   * Told of a request the provider answered without asking the plan (its own enforcement): nothing is consumed, but
   * fault targeting counts it, so `occurrence` and `requestIndex` count every request the provider received.
   */
  observe?(request: ParsedRequest): void
  /**
   * Awaited before `next` for a request the provider will ask the plan about (issue #20): the one asynchronous
   * step of a plan, where an upstream summarizer in record mode fetches the reply `next` then serves.
   */
  prepare?(request: ParsedRequest): Promise<void>
}

/** One captured chat request (headers redacted). The runner adds `logRevisionAtDispatch` (§1.1). */
export interface CapturedWireRequest {
  index: number
  /** Virtual time of arrival. */
  time: number
  wire: MockWire
  method: string
  path: string
  /** Lower-cased header names, sorted; secrets replaced by `[redacted]`. */
  headers: Record<string, string>
  purpose: RequestPurpose
  model: string
  reasoningEffort?: string
  temperature?: number
  maxTokens?: number
  stop?: string[]
  messages: DecodedMessage[]
  tools?: ToolSchema[]
  /** The body as received (parsed JSON). */
  body: JsonValue
  /** The kind of the planned outcome. */
  outcome: PlannedOutcome['kind']
  /** The prompt as the provider counted it (the route's tokenizer; the §9.2 heuristic without routes). */
  providerPromptTokens?: number
  /** The canonical code (§1.2.2) a conforming adapter derives from this outcome, when it is a failure. */
  expectedFailureCode?: string
  /**
   * Why a `reject` outcome rejected (set by whoever planned it: `fault` for a declared fault, the enforcement
   * rules for the others); absent for other outcomes, and for a rejection nobody classified.
   */
  rejectionKind?: RejectionKind
}

/** A request the mock refused before planning (bad JSON, unknown route …), for diagnosis. */
export interface RefusedWireRequest {
  time: number
  method: string
  path: string
  status: number
  reason: string
}
