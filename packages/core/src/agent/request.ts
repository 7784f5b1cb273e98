/**
 * Request assembly from the log (§10): the effective call configuration after adapter defaults, the
 * canonical header and its `request/header` decision (§10.3), the `request/context` record (§1.4.11), and
 * the conversation `GenerateOptions` whose messages are `deriveMessages(log)` at dispatch (§10.1, §10.5).
 */
import type { GenerateOptions } from '../adapter/contract.ts'
import type { EventLog } from '../log/event-log.ts'
import type { EpochHeader, EventDataMap } from '../log/events.ts'
import type { LlmCallConfig, LlmCallConfigAdapterDefaults, LlmModelInfo, ToolSchema } from '../log/llm.ts'
import { canonicalHeader, decideHeader } from '../request/header.ts'
import type { DerivedMessage } from '../surface/derive.ts'
import type { RouteContextNotes } from '../compaction/engine.ts'
import type { AgentRoute } from './options.ts'

/**
 * The effective config of a proposed route (§1.4.10 "effective config after adapter defaults"): the route's
 * own fields in `LlmCallConfig` key order; a `maxTokens` the route leaves open is filled from the adapter's
 * `defaultMaxTokens` and marked in `adapterDefaults`. Absent fields stay absent (canonical form, §10.2).
 */
export function effectiveConfig(
  route: AgentRoute, info: LlmModelInfo,
): { config: LlmCallConfig; adapterDefaults?: LlmCallConfigAdapterDefaults } {
  const config: LlmCallConfig = { provider: route.provider, model: route.model }
  if (route.reasoningEffort !== undefined) config.reasoningEffort = route.reasoningEffort
  if (route.temperature !== undefined) config.temperature = route.temperature
  if (route.maxTokens !== undefined) config.maxTokens = route.maxTokens
  else if (info.defaultMaxTokens !== undefined) config.maxTokens = info.defaultMaxTokens
  if (route.stop !== undefined) config.stop = [...route.stop]
  if (route.maxTokens === undefined && info.defaultMaxTokens !== undefined) return { config, adapterDefaults: { maxTokens: true } }
  return { config }
}

/** The canonical seed-dialect header of a request (§10.2): config, adapter-default markers, tools (absent when empty). */
export function requestHeader(route: AgentRoute, info: LlmModelInfo, tools: readonly ToolSchema[]): EpochHeader {
  const { config, adapterDefaults } = effectiveConfig(route, info)
  const header: EpochHeader = { config }
  if (adapterDefaults !== undefined) header.adapterDefaults = adapterDefaults
  if (tools.length > 0) header.tools = [...tools]
  return canonicalHeader(header, 'seed')
}

/** The `request/header` payload due before this dispatch (§10.3), or null when none is due. */
export function headerRecord(log: EventLog, header: EpochHeader, loggedThisInstance: boolean): EventDataMap['request/header'] | null {
  const inForce = log.state.header
  return decideHeader({
    header,
    previous: inForce?.header,
    epoch: log.state.seriesEpoch,
    epochAtHeader: inForce?.epochAtHeader ?? 0,
    loggedThisInstance,
    dialect: log.dialect,
  })
}

/**
 * The `request/context` record for this request when the route metadata differs from the latest record
 * (§1.4.11), else null. A route without advertised capacity is recorded without `contextWindow`.
 */
export function routeContextRecord(
  log: EventLog, route: AgentRoute, info: LlmModelInfo, notes: RouteContextNotes = {},
): EventDataMap['request/context'] | null {
  const next: EventDataMap['request/context'] = { provider: route.provider, model: route.model }
  if (info.context !== undefined) next.contextWindow = info.context.contextWindow
  if (info.imageTokens !== undefined) next.imageTokens = info.imageTokens
  // Hardened HARD-8 only (the engine's notes are `{}` otherwise): a changed factor, or a warning, is a new record.
  if (notes.calibration !== undefined) next.calibration = notes.calibration
  if (notes.capacityWarning !== undefined) next.capacityWarning = { ...notes.capacityWarning }
  const prev = log.state.routeContext?.data
  const same = prev !== undefined && prev.provider === next.provider && prev.model === next.model &&
    prev.contextWindow === next.contextWindow && prev.imageTokens === next.imageTokens &&
    prev.calibration === next.calibration && next.capacityWarning === undefined
  return same ? null : next
}

/**
 * The conversation request (§1.2 `GenerateOptions`, §8.2 "purpose absent on conversation requests"): the
 * header's config and tools and the derived messages, exactly — so the §10.5 reconstruction holds by
 * construction.
 */
export function conversationRequest(
  header: EpochHeader, nodes: readonly DerivedMessage[], signal: AbortSignal, sessionId: string | undefined,
): GenerateOptions {
  const options: GenerateOptions = { ...header.config, messages: nodes.map((n) => n.message), signal }
  if (header.tools !== undefined) options.tools = header.tools
  if (sessionId !== undefined) options.sessionId = sessionId
  return options
}
