/**
 * What a harness writes next to a log (§1.1): the run manifest (what the checker needs that the log
 * does not hold) and the request capture (every request that reached a mock adapter), and the fault
 * declaration of §13.
 */
import type { Seq } from '../brand.ts'
import type { JsonValue } from './json.ts'
import type { Message, ToolSchema } from './llm.ts'

/** One injected fault (§13). */
export interface FaultSpec {
  id: string
  /** One of the FAULT-nn kinds of §13, e.g. `FAULT-01`. */
  kind: string
  target: 'conversation' | 'compaction' | 'append' | 'flush' | 'crash' | 'concurrent' | 'config' | 'signal'
  when: { requestIndex?: number; purpose?: 'conversation' | 'compaction'; eventType?: string; afterSeq?: number; occurrence?: number }
  params?: Record<string, JsonValue>
}

/** The run manifest of §1.1 (`<log>.manifest.json` or `run-manifest.json`). */
export interface RunManifest {
  scenario: string
  /** `BasicCompactionConfig` as configured, before defaults (§3.1). */
  compaction: Record<string, JsonValue>
  /** `ToolResultPruneConfig` (§5.1); absent when the pruner is not loaded. */
  pruner?: Record<string, JsonValue>
  routes: Array<{ provider: string; model: string; contextWindow?: number; imageTokens?: number }>
  faults: FaultSpec[]
  crashes?: Array<{ afterSeq: Seq }>
  explicitRegionStarts?: Seq[]
  explicitSeriesHeaders?: Seq[]
}

/** One line of the request capture file (§1.1), in dispatch order. */
export interface CapturedRequest {
  index: number
  logRevisionAtDispatch: number
  time: number
  purpose: 'conversation' | 'compaction'
  provider: string
  model: string
  reasoningEffort?: string
  temperature?: number
  maxTokens?: number
  stop?: string[]
  messages: Message[]
  tools?: ToolSchema[]
  outcome: 'stop' | 'tool-calls' | 'max-tokens' | 'error' | 'aborted'
  failureCode?: string
  /**
   * The subject meter's §2.5 `totalTokens` when the request was dispatched (issue #15 drift); absent when
   * nobody measured it (e.g. a dsh-dialect log). Not read by the checker.
   */
  meterTokensAtDispatch?: number
  /**
   * The prompt as the provider counted it (its route's tokenizer), joined from the mock's own capture
   * (issue #15 drift); absent when the request never reached the mock in this process. Not read by the checker.
   */
  providerPromptTokens?: number
}
