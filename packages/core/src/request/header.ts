/**
 * Request-header fold, canonical form, equality and the reason/series decision (§10.2, §10.3).
 * Only full snapshots exist; the latest `request/header` in a log prefix is the header in force.
 */
import type { Dialect, EpochHeader, EventDataMap, HeaderReason, LogEvent, SessionEvent } from '../log/events.ts'
import type { LlmCallConfig } from '../log/llm.ts'

/**
 * Canonical form (§10.2): `adapterDefaults` only when a marker is true, `tools` only when non-empty.
 * In the rc.8 dialect a non-empty `system` is kept (D-02); the seed dialect has no system field.
 */
export function canonicalHeader(h: EpochHeader, dialect: Dialect): EpochHeader {
  const out: EpochHeader = { config: h.config }
  const d = h.adapterDefaults
  if (d !== undefined && (d.reasoningEffort === true || d.maxTokens === true)) {
    out.adapterDefaults = {
      ...(d.reasoningEffort === true ? { reasoningEffort: true as const } : {}),
      ...(d.maxTokens === true ? { maxTokens: true as const } : {}),
    }
  }
  if (h.tools !== undefined && h.tools.length > 0) out.tools = h.tools
  if (dialect === 'dsh-0.1.0-rc.8' && h.system !== undefined && h.system !== '') out.system = h.system
  return out
}

/**
 * `foldRequestHeader(prefix, from?)` of §10.2: the canonical header of the LAST `request/header` in
 * `events`, else `from`. Scans backwards; a live session uses `SessionState.header` instead.
 */
export function foldRequestHeader(events: readonly LogEvent[], dialect: Dialect, from?: EpochHeader): EpochHeader | undefined {
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i]
    if (e?.type === 'request/header') return canonicalHeader((e as SessionEvent<'request/header'>).data.header, dialect)
  }
  return from
}

function configsEqual(a: LlmCallConfig, b: LlmCallConfig): boolean {
  if (a.provider !== b.provider || a.model !== b.model || a.reasoningEffort !== b.reasoningEffort) return false
  if (a.temperature !== b.temperature || a.maxTokens !== b.maxTokens) return false
  if (a.stop === undefined || b.stop === undefined) return a.stop === b.stop
  return a.stop.length === b.stop.length && a.stop.every((s, i) => s === b.stop?.[i])
}

/** Header equality of §10.2 (tools compared in order by JSON text; absent ≡ empty; rc.8 also compares system). */
export function headersEqual(a: EpochHeader, b: EpochHeader): boolean {
  if (!configsEqual(a.config, b.config)) return false
  if ((a.adapterDefaults?.reasoningEffort === true) !== (b.adapterDefaults?.reasoningEffort === true)) return false
  if ((a.adapterDefaults?.maxTokens === true) !== (b.adapterDefaults?.maxTokens === true)) return false
  const at = a.tools ?? []
  const bt = b.tools ?? []
  if (at.length !== bt.length) return false
  for (let i = 0; i < at.length; i++) if (JSON.stringify(at[i]) !== JSON.stringify(bt[i])) return false
  return (a.system ?? '') === (b.system ?? '')
}

/** What the loop knows when it is about to dispatch a request (§10.3). */
export interface HeaderDecisionInput {
  /** Canonical header of the request about to be dispatched. */
  header: EpochHeader
  /** `foldRequestHeader(log)`: the header in force, or undefined before the first snapshot. */
  previous: EpochHeader | undefined
  /** Series epoch of the log now. */
  epoch: number
  /** Series epoch at the position of the latest `request/header` (0 when none). */
  epochAtHeader: number
  /** Whether this loop instance has logged a header yet. */
  loggedThisInstance: boolean
  dialect: Dialect
}

/**
 * The `request/header` payload to append before a dispatch, or null when none is due (§10.3).
 * In the rc.8 dialect there is no `series` reason and no `startsSeries` (D-05).
 */
export function decideHeader(input: HeaderDecisionInput): EventDataMap['request/header'] | null {
  const { header, previous, loggedThisInstance, dialect } = input
  const seed = dialect === 'seed'
  const boundary = seed && input.epoch > input.epochAtHeader
  const record = (reason: HeaderReason, startsSeries: boolean): EventDataMap['request/header'] =>
    startsSeries ? { header, reason, startsSeries: true } : { header, reason }
  if (!loggedThisInstance) return record(previous !== undefined ? 'resume' : 'initial', previous !== undefined && boundary)
  if (previous === undefined || !headersEqual(previous, header)) return record('change', boundary)
  if (boundary) return record('series', false)
  return null
}
