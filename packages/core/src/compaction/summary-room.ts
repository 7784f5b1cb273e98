/**
 * HARD-2 (`hardening.summaryRoom`, `docs/hardened.md`): room for the summary call. The §8.2 request carries
 * `maxTokens = policy.maxTokens` whatever the summary route accepts; a route that refuses a cap above its
 * output limit, or counts prompt + `max_tokens` against its window, refuses every such call. Under the rule
 * the engine learns the summary route's limits from its adapter (`LlmModelInfo.context`, `maxOutputTokens`),
 * fits automatic spans so their summary prompt leaves room for a summary, and clamps each request's cap.
 *
 * The summary prompt is priced with the meter's node prices (`P_route`, §2.3: the routed target's image
 * price, offload and prune projections applied), the price the selection and the checker also use:
 *
 *     promptTokens = price(tools) + P_route(system head) + Σ P_route(region nodes) + P(instruction)
 */
import type { LlmRuntime } from '../adapter/runtime.ts'
import { COMPACTION_INSTRUCTION } from '../constants.ts'
import { errorChain } from '../errors.ts'
import type { EventLog } from '../log/event-log.ts'
import type { SummaryRoomRecord } from '../log/events.ts'
import type { LlmModelInfo, ToolSchema } from '../log/llm.ts'
import type { Seq } from '../brand.ts'
import type { Measurement } from '../meter/measurement.ts'
import { BLOCK_OVERHEAD, fixedPrice, ROLE_OVERHEAD, textTokens, toolsPrice } from '../meter/price.ts'
import { imageOffloadProjection, type ReadOnlyPathResolver } from '../offload/projection.ts'
import type { CompactionPolicySpec, RouteTarget } from '../policy/config.ts'
import { systemHeadCount, type SummaryFit } from '../range/select.ts'
import { deriveEventMessage } from '../surface/derive.ts'
import { resolveSummaryTarget } from './summarizer.ts'

/** `P(instruction)`: the §8.2 instruction message at the fixed heuristic (text only: `P_fixed = P_route`). */
export const INSTRUCTION_TOKENS = textTokens(COMPACTION_INSTRUCTION) + BLOCK_OVERHEAD + ROLE_OVERHEAD

/** The summary route's limits as its adapter reports them, and the policy cap they are applied to. */
export interface SummaryRoute {
  readonly provider: string
  readonly model: string
  /** `policy.maxTokens` of the §8.1 resolution (§8.2). */
  readonly configuredMaxTokens: number
  /** `info.context.contextWindow`; absent when the route reports none. */
  readonly contextWindow?: number
  /** `info.maxOutputTokens`; absent when the route reports none (or a value that is not a positive integer). */
  readonly maxOutputTokens?: number
}

/**
 * The summary route of the §8.1 resolution with its reported limits, or null when no target resolves or its
 * metadata cannot be read (the bracket then runs as the protocol says: no clamp, no fit). `note` hears why.
 */
export async function resolveSummaryRoute(
  input: {
    readonly log: EventLog
    readonly policy: CompactionPolicySpec
    readonly agentRoute?: RouteTarget
    readonly runtime: Pick<LlmRuntime, 'resolveModelInfo'>
    readonly signal?: AbortSignal
  },
  note: (message: string) => void,
): Promise<SummaryRoute | null> {
  let target: { provider: string; model: string; maxTokens: number }
  try {
    target = resolveSummaryTarget(input.log, input.policy, input.agentRoute)
  } catch {
    return null // the summarizer reports the unresolvable target itself (FAULT-31)
  }
  let info: LlmModelInfo
  try {
    info = await input.runtime.resolveModelInfo(target.provider, target.model, input.signal)
  } catch (err) {
    if (input.signal?.aborted === true) throw err
    note(`summary route ${target.provider}/${target.model}: metadata unavailable (${errorChain(err)}); no summary room applied`)
    return null
  }
  return summaryRouteOf(target, info)
}

/** The `SummaryRoute` of a resolved target and its metadata (limits that are not positive integers are ignored). */
export function summaryRouteOf(target: { provider: string; model: string; maxTokens: number }, info: LlmModelInfo): SummaryRoute {
  const window = info.context?.contextWindow
  const output = info.maxOutputTokens
  return Object.freeze({
    provider: target.provider,
    model: target.model,
    configuredMaxTokens: target.maxTokens,
    ...(positiveInt(window) ? { contextWindow: window } : {}),
    ...(positiveInt(output) ? { maxOutputTokens: output } : {}),
  })
}

/** The cap of a summary request on `route` before the prompt is known: `min(configured, maxOutputTokens)`. */
export function routeCap(route: SummaryRoute): number {
  return route.maxOutputTokens === undefined ? route.configuredMaxTokens : Math.min(route.configuredMaxTokens, route.maxOutputTokens)
}

/**
 * The clamped cap of a request whose prompt prices `promptTokens`: `min(configured, maxOutputTokens,
 * contextWindow − promptTokens)` over the known limits. Returns `maxTokens ≤ 0` when the prompt alone fills
 * the window (the bracket then refuses the attempt instead of sending it), and the log record.
 */
export function clampSummaryTokens(route: SummaryRoute, promptTokens: number): { maxTokens: number; record: SummaryRoomRecord } {
  let maxTokens = routeCap(route)
  if (route.contextWindow !== undefined) maxTokens = Math.min(maxTokens, route.contextWindow - promptTokens)
  const record: SummaryRoomRecord = {
    ...(maxTokens < route.configuredMaxTokens ? { configuredMaxTokens: route.configuredMaxTokens } : {}),
    promptTokens,
    ...(route.contextWindow === undefined ? {} : { contextWindow: route.contextWindow }),
    ...(route.maxOutputTokens === undefined ? {} : { maxOutputTokens: route.maxOutputTokens }),
  }
  return { maxTokens, record }
}

/** The part of every summary prompt outside the region: tools, the system head (position 0) and the instruction. */
export function summaryPromptOverhead(log: EventLog, measurement: Measurement, tools: readonly ToolSchema[] | undefined): number {
  const head = systemHeadCount(log) === 1 ? (measurement.nodes[0]?.tokens ?? 0) : 0
  return toolsPrice(tools) + head + INSTRUCTION_TOKENS
}

/**
 * HARD-2's selection bound on `route` (`SelectionOptions.summaryFit`): a span's summary prompt
 * (`overheadTokens + Σ P_route(span)`) must leave room for a summary as large as the span itself could usefully
 * be — `min(routeCap, Σ P_fixed(span))`, since a checkpoint not below the span's `P_fixed` fails §7.5 anyway.
 * Undefined when the window is unknown (no fit; the output limit alone still clamps).
 */
export function summaryFitOf(
  route: SummaryRoute, overheadTokens: number, fixedTokens: (seq: Seq) => number,
): SummaryFit | undefined {
  if (route.contextWindow === undefined) return undefined
  return { tokensMax: route.contextWindow - overheadTokens, capTokens: routeCap(route), fixedTokens }
}

/** `P_fixed` of a node's projected message (§2.2 with offload projection, §6.5; 0 when it projects to nothing). */
export function nodeFixedPrice(log: EventLog, seq: number, readOnlyPath: ReadOnlyPathResolver): number {
  const event = log.event(seq)
  const message = event === undefined ? null : deriveEventMessage(event)
  return message === null ? 0 : fixedPrice(imageOffloadProjection(message, log.offloadedIndexes(seq), readOnlyPath))
}

function positiveInt(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value > 0
}
