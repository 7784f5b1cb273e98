/**
 * What the agent loop (§0.2 "AgentLoop", §10.4) is built from: the route it proposes, the tools it offers
 * and runs, the injected clock / id generators / sleep (no wall clock in core), the generic transient-retry
 * policy of §1.4.13 and the loop bounds. Defaults are filled in one explicit step (`resolveRetryPolicy`,
 * `resolveAgentLimits`); nothing deeper in the loop applies a default.
 */
import { FailureCode, TRANSIENT_FAILURE_CODES } from '../adapter/contract.ts'
import { deepFreeze, type JsonValue } from '../log/json.ts'
import type { ContentBlock, MessageSource } from '../log/llm.ts'
import type { CallId } from '../brand.ts'

/** The call configuration the loop proposes for every conversation request (§1.2 `LlmCallConfig`). */
export interface AgentRoute {
  readonly provider: string
  readonly model: string
  readonly reasoningEffort?: string
  readonly temperature?: number
  readonly maxTokens?: number
  readonly stop?: readonly string[]
}

/** One tool call the model requested, as the executor receives it (§1.4.8). */
export interface ToolCallRequest {
  readonly callId: CallId
  readonly name: string
  /** Raw JSON text as the model produced it. */
  readonly arguments: string
}

/** What a tool execution produced: the inner content of its `tool-result` block (§1.4.9). */
export interface ToolOutcome {
  content: ContentBlock[]
  isError?: boolean
  /** Structured error recorded on the `tool/result` event (e.g. `{name: 'ENOENT', code: 'NOT_FOUND'}`). */
  error?: { name: string; code: string }
  /**
   * Metadata kept with the result: logged as `tool/result.meta` (§1.4.9), never projected into a request
   * (the model sees `content` and `isError` only) and carried unchanged by a pruning replacement (INV-06).
   */
  meta?: JsonValue
}

/**
 * Where a step's tool results are logged, in order (`AgentOptions.toolResultOrder`): `null` = sequential
 * dispatch in call order; a permutation of the step's call ids = parallel dispatch answered in that order.
 */
export type ToolResultOrder = (
  calls: readonly ToolCallRequest[], at: { readonly turn: number; readonly step: number },
) => readonly CallId[] | null

/**
 * Queued user input claimed when a step opens (`AgentOptions.steering`): the messages to append for 1-based
 * `step` of `turn` (empty = none).
 */
export type SteeringSource = (turn: number, step: number) => readonly UserInput[]

/**
 * Runs one tool call. May reject: the loop records the rejection as an error result (the model sees it);
 * it never ends the turn. Receives the turn's signal and should settle promptly once it aborts.
 */
export type ToolExecutor = (call: ToolCallRequest, signal: AbortSignal) => Promise<ToolOutcome>

/** Which message the loop is about to write; lets a deterministic id generator keep one counter per kind. */
export type MessageKind = 'system' | 'user' | 'assistant' | 'tool'

/** One message of a turn's entered batch (§1.4.3). `id` and `source` default to a generated id and `{kind:'user'}`. */
export interface UserInput {
  content: ContentBlock[]
  id?: string
  source?: MessageSource
}

/** The generic transient-retry policy as configured (§1.4.13); every key optional. */
export interface RetryPolicyConfig {
  /** Retries per turn, step, provider and policy (the budget). Default 5. */
  maxRetries?: number
  /** Delay before retry 1; retry n waits `delayMs × 2^(n−1)`, capped by `maxDelayMs`. Default 500. */
  delayMs?: number
  /** Cap of the back-off (and of a provider's `providerRetryAfterMs`). Default 10000. */
  maxDelayMs?: number
  /** Failure codes the policy retries; a subset of the transient codes of §1.2.1. Default: all of them. */
  codes?: readonly string[]
}

/** The resolved transient-retry policy; frozen. `policyKey` identifies it on `llm/retry` events. */
export interface RetryPolicySpec {
  readonly maxRetries: number
  readonly delayMs: number
  readonly maxDelayMs: number
  /** Sorted, de-duplicated; never `CONTEXT_WINDOW_EXCEEDED` or `IMAGE_OFFLOAD_REQUIRED` (§3.10, INV-35). */
  readonly codes: readonly string[]
  readonly policyKey: string
}

/** Appendix-A-style defaults of the generic retry policy (a project choice; §1.4.13 fixes no numbers). */
export const RETRY_DEFAULTS = deepFreeze({ maxRetries: 5, delayMs: 500, maxDelayMs: 10000 } as const)

/** Bounds of the loop (AGENTS.md "put a limit on everything"). */
export interface AgentLimits {
  /** Steps per turn; a turn whose model still requests tools after this many steps ends `{kind:'blocked'}`. */
  readonly maxSteps: number
  /**
   * Request attempts per step (offload rounds, overflow and transient retries together); when reached, the
   * last failure is final. Offload rounds terminate on their own; this is a backstop.
   */
  readonly maxAttemptsPerStep: number
}

/** Default loop bounds. */
export const AGENT_LIMIT_DEFAULTS: AgentLimits = deepFreeze({ maxSteps: 64, maxAttemptsPerStep: 64 })

/** Closed set of agent configuration failures. */
export type AgentConfigErrorCode =
  | 'INTEGER' // a count or delay is not a non-negative (or positive) safe integer
  | 'RETRY_CODES' // a retry code is not transient, or is one of the two protocol codes (§3.10, INV-35)
  | 'DIALECT' // the loop writes the seed dialect only (system text lives in system/message, D-02)
  | 'UNKNOWN_KEY' // a key the option object does not define

/** A rejected agent configuration; `key` names the offending option. */
export class AgentConfigError extends Error {
  override readonly name = 'AgentConfigError'
  readonly code: AgentConfigErrorCode
  readonly key: string

  constructor(code: AgentConfigErrorCode, key: string, message: string) {
    super(`invalid agent option ${key}: ${message}`)
    this.code = code
    this.key = key
  }
}

const PROTOCOL_CODES: ReadonlySet<string> = new Set([FailureCode.CONTEXT_WINDOW_EXCEEDED, FailureCode.IMAGE_OFFLOAD_REQUIRED])

/**
 * Fills the §1.4.13 retry policy defaults and validates it. Throws `AgentConfigError` for an unknown key, non-integers,
 * a zero `delayMs`, `maxDelayMs < delayMs`, or a code that is not transient — in particular the two
 * protocol codes, which overflow recovery and image offload own (§3.10 last rule, INV-35).
 */
export function resolveRetryPolicy(input: RetryPolicyConfig = {}): RetryPolicySpec {
  knownKeys(input, ['maxRetries', 'delayMs', 'maxDelayMs', 'codes'], 'retry')
  const maxRetries = integer(input.maxRetries ?? RETRY_DEFAULTS.maxRetries, 'retry.maxRetries', 0)
  const delayMs = integer(input.delayMs ?? RETRY_DEFAULTS.delayMs, 'retry.delayMs', 1)
  const maxDelayMs = integer(input.maxDelayMs ?? Math.max(RETRY_DEFAULTS.maxDelayMs, delayMs), 'retry.maxDelayMs', delayMs)
  const codes = [...new Set(input.codes ?? [...TRANSIENT_FAILURE_CODES])].sort()
  for (const code of codes) {
    if (PROTOCOL_CODES.has(code) || !TRANSIENT_FAILURE_CODES.has(code)) {
      const reason = `${code} is not a transient failure code (§1.2.1); the generic policy never retries the protocol codes (§3.10)`
      throw new AgentConfigError('RETRY_CODES', 'retry.codes', reason)
    }
  }
  const policyKey = JSON.stringify(['normal', maxRetries, codes, delayMs, maxDelayMs, 0])
  return deepFreeze({ maxRetries, delayMs, maxDelayMs, codes, policyKey })
}

/** Fills the loop bounds. Throws `AgentConfigError` for an unknown key or a bound that is not a positive safe integer. */
export function resolveAgentLimits(input: Partial<AgentLimits> = {}): AgentLimits {
  knownKeys(input, ['maxSteps', 'maxAttemptsPerStep'], 'limits')
  return deepFreeze({
    maxSteps: integer(input.maxSteps ?? AGENT_LIMIT_DEFAULTS.maxSteps, 'limits.maxSteps', 1),
    maxAttemptsPerStep: integer(input.maxAttemptsPerStep ?? AGENT_LIMIT_DEFAULTS.maxAttemptsPerStep, 'limits.maxAttemptsPerStep', 1),
  })
}

/** The back-off of retry `retry` (1-based): exponential from `delayMs`, at least a provider's retry-after, capped. */
export function retryDelayMs(spec: RetryPolicySpec, retry: number, providerRetryAfterMs: number | undefined): number {
  const exponential = spec.delayMs * 2 ** Math.min(retry - 1, 30)
  const retryAfter = providerRetryAfterMs !== undefined && Number.isFinite(providerRetryAfterMs) ? Math.ceil(providerRetryAfterMs) : 0
  const wanted = Math.max(exponential, retryAfter)
  return Math.min(spec.maxDelayMs, wanted)
}

function integer(value: number, key: string, min: number): number {
  if (!Number.isSafeInteger(value) || value < min) {
    throw new AgentConfigError('INTEGER', key, `must be an integer ≥ ${min}, got ${String(value)}`)
  }
  return value
}

function knownKeys(input: object, allowed: readonly string[], scope: string): void {
  for (const key of Object.keys(input)) {
    if (!allowed.includes(key)) {
      throw new AgentConfigError('UNKNOWN_KEY', `${scope}.${key}`, `is not a known key; allowed: ${allowed.join(', ')}`)
    }
  }
}
