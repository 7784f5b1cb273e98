/**
 * The summarizer (§8): the backend's only override point (§8.6) and the default implementation — one
 * direct streaming call through the LLM runtime per attempt, shaped as §8.2 prescribes, its output
 * processed in the order of §8.4. It writes nothing: the bracket records its success or failure.
 */
import type { GenerateOptions } from '../adapter/contract.ts'
import type { LlmRuntime } from '../adapter/runtime.ts'
import { MessageId } from '../brand.ts'
import { COMPACTION_INSTRUCTION } from '../constants.ts'
import { assertNever, errorChain } from '../errors.ts'
import type { EventLog } from '../log/event-log.ts'
import { assembleAttempt, AssemblyError, type AssembledAttempt } from '../log/assembly.ts'
import type { ContentBlock, LlmFailure, Message, StreamChunk, TextBlock, TokenUsage, ToolSchema, UserMessage } from '../log/llm.ts'
import { resolveTargetPolicy, type CompactionPolicySpec, type PolicyFieldsSpec, type RouteTarget } from '../policy/config.ts'
import { routedTarget } from '../policy/pressure.ts'
import { SummarizerError } from './errors.ts'

/** What a summarizer is asked to condense (§7.3, §8.6): the projected region and the replayed prefix around it. */
export interface SummaryInput {
  /** Projected message at surface position 0 when that node is a non-empty `system/message` (outside the region). */
  readonly systemHead?: Message
  /** Tool schemas of the folded `request/header` (absent when none). */
  readonly tools?: readonly ToolSchema[]
  /** Projected messages of the shadowed nodes, in surface order, nulls skipped (offload projection applied). */
  readonly messages: readonly Message[]
  /**
   * Hardened HARD-2 only (`docs/hardened.md`): the cap the request carries instead of `policy.maxTokens`,
   * clamped to the summary route. Absent (always, when faithful): the §8.2 policy value.
   */
  readonly maxTokens?: number
}

/**
 * A summarizer's result (§8.6). `summary` must hold only text blocks, at least one with a non-whitespace
 * character; `llmStreamCall: true` (exactly one runtime stream call produced it) requires `rawOutput`.
 */
export interface SummaryOutput {
  summary: TextBlock[]
  rawOutput?: ContentBlock[]
  llmStreamCall?: true
  /** Route that actually served the summary (after any middleware rerouting, FAULT-32). */
  provider: string
  model: string
  /** Generation cap sent, when one applied. */
  maxTokens?: number
  usage?: TokenUsage
}

/**
 * The summarizer hook (§8.6). A rejection is a summarizer failure: the bracket records it as a
 * `compaction/summary-error` (§7.4); throw `SummarizerError` to carry a structured failure and target.
 */
export interface Summarizer {
  /** Condenses `input`; must forward `signal` to any model call (§7.10). */
  summarize(input: SummaryInput, signal?: AbortSignal): Promise<SummaryOutput>
}

/** Source of the summary request's final instruction message (§1.6, §8.2); it is never logged. */
export const COMPACTION_INSTRUCTION_SOURCE = Object.freeze({ kind: 'plugin', plugin: 'compaction-instruction' } as const)

/** Options of the default §8 summarizer. */
export interface LlmSummarizerOptions {
  runtime: LlmRuntime
  /** The session whose folded header supplies the routed target (§8.1). */
  log: EventLog
  policy: CompactionPolicySpec
  /** The agent's configured route: the §8.1 fallback when the log has no routed target. */
  agentRoute?: RouteTarget
  sessionId?: string
  /** Id of each request's instruction message ("a fresh id", §8.2). */
  newInstructionId: () => string
}

/** The resolved summary call target and its policy cap (§8.1, §8.2). */
export interface SummaryTarget {
  readonly provider: string
  readonly model: string
  readonly maxTokens: number
}

/**
 * §8.1 target resolution: the policy is that of the routed target (else of `agentRoute` when both its fields
 * are non-empty, else the top level); the target is the policy's summarization route when set, else the
 * routed target, else `agentRoute`. Throws `SummarizerError` (code `UNKNOWN`, "no provider/model available
 * for summarization", no target) when none resolves (FAULT-31).
 */
export function resolveSummaryTarget(log: EventLog, spec: CompactionPolicySpec, agentRoute?: RouteTarget): SummaryTarget {
  const routed = routedTarget(log)
  const agent = agentRoute !== undefined && agentRoute.provider !== '' && agentRoute.model !== '' ? agentRoute : null
  const policyTarget = routed ?? agent
  const policy: PolicyFieldsSpec = policyTarget !== null ? resolveTargetPolicy(spec, policyTarget) : spec
  const configured = policy.summarization
  const target = configured.provider !== '' ? configured : routed ?? agent
  if (target === null) {
    throw new SummarizerError({ message: 'no provider/model available for summarization', code: 'UNKNOWN' })
  }
  return Object.freeze({ provider: target.provider, model: target.model, maxTokens: policy.maxTokens })
}

/**
 * The §8.2 request: `[systemHead?] ++ region ++ [instruction]`, the header's tools, the policy `maxTokens`,
 * `purpose: 'compaction'`, the session id and the signal — and no reasoning effort, temperature or stop.
 */
export function summaryRequest(
  input: SummaryInput,
  target: SummaryTarget,
  instructionId: string,
  extra: { sessionId?: string; signal?: AbortSignal } = {},
): GenerateOptions {
  const instruction: UserMessage = {
    id: MessageId(instructionId),
    role: 'user',
    content: [{ type: 'text', text: COMPACTION_INSTRUCTION }],
    source: { ...COMPACTION_INSTRUCTION_SOURCE },
  }
  const messages: Message[] = []
  if (input.systemHead !== undefined) messages.push(input.systemHead)
  messages.push(...input.messages, instruction)
  const options: GenerateOptions = {
    provider: target.provider, model: target.model, maxTokens: target.maxTokens, messages, purpose: 'compaction',
  }
  if (input.tools !== undefined && input.tools.length > 0) options.tools = [...input.tools]
  if (extra.sessionId !== undefined) options.sessionId = extra.sessionId
  if (extra.signal !== undefined) options.signal = extra.signal
  return options
}

/**
 * §8.4 output processing of one assembled attempt, in order: error/aborted finish → that failure unchanged;
 * `max-tokens` → `MAX_TOKENS`; an image at any depth → `UNSUPPORTED_CONTENT`; the text blocks become the
 * summary; no non-whitespace text → `UNKNOWN`. `route` is the call as dispatched. Throws `SummarizerError`.
 */
export function summaryFromChunks(
  chunks: readonly StreamChunk[], route: { provider: string; model: string; maxTokens?: number },
): SummaryOutput {
  const fail = (failure: LlmFailure): never => { throw new SummarizerError(failure, route) }
  let attempt: AssembledAttempt
  try {
    attempt = assembleAttempt(chunks)
  } catch (err) {
    if (!(err instanceof AssemblyError)) throw err
    throw new SummarizerError({ message: `summary stream cannot be assembled: ${err.message}`, code: 'UNKNOWN' }, route, { cause: err })
  }
  switch (attempt.finish.kind) {
    case 'error':
    case 'aborted':
      return fail(attempt.finish.failure)
    case 'max-tokens':
      return fail({ message: 'summary truncated at the token cap', code: 'MAX_TOKENS' })
    case 'stop':
    case 'tool-calls':
      break
    default:
      return assertNever(attempt.finish, 'finish reason')
  }
  if (containsImage(attempt.blocks)) {
    return fail({ message: 'summarization returned image content, which a checkpoint cannot carry', code: 'UNSUPPORTED_CONTENT' })
  }
  const summary = textOnly(attempt.blocks)
  if (!summary.some((b) => b.text.trim() !== '')) {
    return fail({ message: 'summarization produced no text summary content', code: 'UNKNOWN' })
  }
  const output: SummaryOutput = { summary, rawOutput: attempt.blocks, llmStreamCall: true, provider: route.provider, model: route.model }
  if (route.maxTokens !== undefined) output.maxTokens = route.maxTokens
  if (attempt.usage !== undefined) output.usage = attempt.usage
  return output
}

/** The text blocks of `blocks` as plain `{type, text}` blocks, in order (§8.4 step 4). */
export function textOnly(blocks: readonly ContentBlock[]): TextBlock[] {
  const out: TextBlock[] = []
  for (const b of blocks) if (b.type === 'text') out.push({ type: 'text', text: String(b['text']) })
  return out
}

/** True when any image block occurs at any depth, including inside tool-result blocks (§8.4 step 3). */
export function containsImage(blocks: readonly ContentBlock[]): boolean {
  const stack: ContentBlock[] = [...blocks]
  while (stack.length > 0) {
    const b = stack.pop() as ContentBlock
    if (b.type === 'image') return true
    if (b.type === 'tool-result' && Array.isArray(b['content'])) stack.push(...(b['content'] as ContentBlock[]))
  }
  return false
}

/**
 * The default summarizer of §8: resolves the target (§8.1), makes exactly one `runtime.stream` call with the
 * §8.2 request, and processes the output (§8.4). The route recorded is the one dispatched (FAULT-32).
 * Every failure — unresolvable target, terminal failure, output rule, middleware exception — rejects with
 * a `SummarizerError` or the thrown error itself.
 */
export class LlmSummarizer implements Summarizer {
  private readonly options: LlmSummarizerOptions

  constructor(options: LlmSummarizerOptions) {
    this.options = options
  }

  /** One summary attempt (§8); forwards `signal` to the runtime call (§7.10). */
  async summarize(input: SummaryInput, signal?: AbortSignal): Promise<SummaryOutput> {
    const { runtime, log, policy, agentRoute, sessionId } = this.options
    const target = resolveSummaryTarget(log, policy, agentRoute)
    const extra: { sessionId?: string; signal?: AbortSignal } = {}
    if (sessionId !== undefined) extra.sessionId = sessionId
    if (signal !== undefined) extra.signal = signal
    const capped = input.maxTokens === undefined ? target : { ...target, maxTokens: input.maxTokens } // HARD-2 clamp
    const call = runtime.stream(summaryRequest(input, capped, this.options.newInstructionId(), extra))
    const route: { provider: string; model: string; maxTokens?: number } = { provider: call.provider, model: call.model }
    if (call.options.maxTokens !== undefined) route.maxTokens = call.options.maxTokens
    const chunks: StreamChunk[] = []
    try {
      for await (const chunk of call.chunks) chunks.push(chunk)
    } catch (err) {
      // The runtime turns adapter failures into a finish chunk; anything thrown here is a runtime bug or hook.
      throw new SummarizerError({ message: errorChain(err), code: 'UNKNOWN' }, route, { cause: err })
    }
    return summaryFromChunks(chunks, route)
  }
}
