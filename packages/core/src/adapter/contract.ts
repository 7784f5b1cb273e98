/**
 * The adapter contract (§1.2, §2.7, §8): what an LLM adapter reports for a route, how it streams, and how
 * it fails. Adapters throw `LlmError` with a canonical code (§1.2.1); the runtime turns every adapter
 * failure into a terminal `finish` chunk, so consumers never see a thrown adapter exception.
 */
import type { LlmCallConfig, LlmFailure, LlmModelInfo, Message, StreamChunk, ToolSchema } from '../log/llm.ts'

/** Canonical failure codes (§1.2.1, Appendix A). */
export const FailureCode = {
  CONTEXT_WINDOW_EXCEEDED: 'CONTEXT_WINDOW_EXCEEDED',
  IMAGE_OFFLOAD_REQUIRED: 'IMAGE_OFFLOAD_REQUIRED',
  UNSUPPORTED_CONTENT: 'UNSUPPORTED_CONTENT',
  MAX_TOKENS: 'MAX_TOKENS',
  ABORTED: 'ABORTED',
  RATE_LIMIT: 'RATE_LIMIT',
  SERVER: 'SERVER',
  TIMEOUT: 'TIMEOUT',
  TRANSPORT: 'TRANSPORT',
  EMPTY_RESPONSE: 'EMPTY_RESPONSE',
  INVALID_MODEL_CONTEXT: 'INVALID_MODEL_CONTEXT',
  NO_ADAPTER: 'NO_ADAPTER',
  UNKNOWN: 'UNKNOWN',
} as const

/** One canonical failure code. */
export type FailureCode = typeof FailureCode[keyof typeof FailureCode]

/** The transient codes the generic retry policy handles (§1.2.1); never the two protocol codes (§3.10). */
export const TRANSIENT_FAILURE_CODES: ReadonlySet<string> = new Set([
  FailureCode.RATE_LIMIT, FailureCode.SERVER, FailureCode.TIMEOUT, FailureCode.TRANSPORT, FailureCode.EMPTY_RESPONSE,
])

/** A request as given to an adapter (§1.2 `GenerateOptions`); system messages travel inside `messages`. */
export interface GenerateOptions extends LlmCallConfig {
  messages: Message[]
  tools?: ToolSchema[]
  sessionId?: string
  /** Model-invisible classification of auxiliary calls; absent on conversation requests (§8.2). */
  purpose?: 'compaction' | 'session-title'
  signal?: AbortSignal
}

/** An LLM adapter: owns routes, reports their metadata, streams calls (§0.2). */
export interface LlmAdapter {
  /**
   * Metadata of one exact route (§2.7); `provider` and `id` echo the inputs. `context` absent means the
   * capacity is unknown. Asked again on every pressure check.
   */
  resolveModel(provider: string, model: string, signal?: AbortSignal): Promise<LlmModelInfo>
  /** Streams one call. Failures are thrown as `LlmError` (during the call or while iterating). */
  stream(options: GenerateOptions): AsyncIterable<StreamChunk>
}

/** A structured LLM failure thrown by adapters and the runtime; `failure` is what gets logged. */
export class LlmError extends Error {
  override readonly name = 'LlmError'
  readonly failure: LlmFailure

  constructor(failure: LlmFailure, options?: ErrorOptions) {
    super(failure.message, options)
    this.failure = failure
  }

  /** The canonical code (§1.2.1). */
  get code(): string { return this.failure.code }
}
