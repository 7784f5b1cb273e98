/**
 * The event catalog of §1.4 as a closed union, the event envelope of §1.1, and the per-dialect
 * vocabulary tables (§14.1). The tables are the one place that says which types a dialect knows
 * and which of them are surface-eligible.
 */
import type { CallId, CompactionId, Seq } from '../brand.ts'
import type { JsonValue } from './json.ts'
import type {
  AssistantMessage, LlmCallConfig, LlmCallConfigAdapterDefaults, LlmFailure, StreamChunk, SystemMessage,
  TextBlock, ContentBlock, TokenUsage, ToolResultMessage, ToolSchema, UserMessage,
} from './llm.ts'

/** The log dialects: `seed` is protocol.md; `dsh-0.1.0-rc.8` is what the released engine writes (§14). */
export type Dialect = 'seed' | 'dsh-0.1.0-rc.8'
/** Every dialect, in a fixed order (for `--dialect` choices). */
export const DIALECTS: readonly Dialect[] = ['seed', 'dsh-0.1.0-rc.8']

/** How a surface event enters the surface (§1.1). `start`/`end` name nodes by seq, interpreted by position. */
export type SurfaceOp = 'append' | ReplaceOp
/** A positional replacement of the nodes `start` … `end` (§1.5.1). */
export interface ReplaceOp { op: 'replace'; start: Seq; end: Seq }

/** Why a turn ended (§1.4.1). */
export type TurnEndReason =
  | { kind: 'completed' } | { kind: 'blocked' } | { kind: 'max-tokens' }
  | { kind: 'aborted'; reason: { kind: 'user' | 'parent' | 'disposed' | 'hook' | 'legacy'; reason?: string } }
  | { kind: 'error'; error: LlmFailure }
  | { kind: 'interrupted' }

/** The non-history request state (§1.4.10). `system` exists only in the rc.8 dialect (D-02). */
export interface EpochHeader {
  config: LlmCallConfig
  adapterDefaults?: LlmCallConfigAdapterDefaults
  tools?: ToolSchema[]
  system?: string
}

/** Reasons a `request/header` was written (§10.3); `series` is seed-only. */
export type HeaderReason = 'initial' | 'resume' | 'change' | 'series'

/** A positional span named by its first and last node. */
export interface SeqRange { start: Seq; end: Seq }

/** Payload of every event type of §1.4, keyed by type. */
/** HARD-8's record of provider usage above the adapter-reported window (`request/context.capacityWarning`). */
export interface CapacityWarning {
  /** Seq of the `assistant/message` whose usage exceeded the window. */
  usageSeq: number
  /** Its `inputTokens + cacheReadTokens + cacheWriteTokens + outputTokens`. */
  usageTokens: number
  /** The `contextWindow` the route's latest `request/context` reported then. */
  contextWindow: number
}

export interface EventDataMap {
  'turn/start': { turn: number }
  'turn/end': { turn: number; reason: TurnEndReason }
  'step/start': { turn: number; step: number }
  'step/end': { turn: number; step: number }
  'system/message': SystemMessage
  'user/message': UserMessage
  'assistant/chunk': { turn: number; step: number; chunk: StreamChunk }
  'assistant/message': { turn: number; step: number; message: AssistantMessage; usage?: TokenUsage; interrupted?: true }
  'tool/call': { turn: number; step: number; callId: CallId; name: string; arguments: string }
  'tool/result': {
    turn: number; step: number; message: ToolResultMessage; error?: { name: string; code: string }; meta?: JsonValue
    [extra: string]: JsonValue | ToolResultMessage | undefined
  }
  'request/header': { header: EpochHeader; reason: HeaderReason; startsSeries?: true }
  'request/context': {
    provider: string; model: string; contextWindow?: number; imageTokens?: number
    /** Hardened HARD-8 only (`hardening.capacitySanity`, docs/hardened.md): the route's calibration factor when above 1. */
    calibration?: number
    /** Hardened HARD-8 only: the first usage above the reported window of this route, written once per route. */
    capacityWarning?: CapacityWarning
  }
  'session/end-seed': Record<string, never>
  'llm/retry': {
    retryId: string; turn: number; step: number; provider: string; mode: 'normal' | 'always'
    policyKey: string; retry: number; maxRetries?: number; delayMs: number; failure: LlmFailure
  }
  'llm/retry-started': { retryId: string; turn: number; step: number; retry: number }
  'compaction/start': { compactionId: CompactionId; sourceCommandId?: string; turn: number | null }
  'compaction/summary': CompactionSummaryData
  'compaction/summary-error': {
    compactionId: CompactionId; sourceCommandId?: string; shadowedRange: SeqRange; shadowedSeqs: Seq[]
    failure: LlmFailure; provider?: string; model?: string; maxTokens?: number
    /** Hardened HARD-2 only (`docs/hardened.md`): the room the request was fitted to. */
    summaryRoom?: SummaryRoomRecord
  }
  'compaction/prune': { shadowedRange: SeqRange; shadowedSeqs: [Seq]; shadowedTokenCount: number }
  'compaction/end': { compactionId: CompactionId; sourceCommandId?: string; turn: number | null; error?: string }
  'image/offload': { targets: OffloadTarget[] }
  'text/offload': TextOffloadData
}

/** `compaction/summary` payload (§1.4.15). */
export interface CompactionSummaryData {
  compactionId: CompactionId
  sourceCommandId?: string
  summary: TextBlock[]
  shadowedRange: SeqRange
  shadowedSeqs: Seq[]
  shadowedTokenCount: number
  provider: string
  model: string
  maxTokens?: number
  /** Hardened HARD-2 only (`docs/hardened.md`): the room the request was fitted to. Never in a faithful log. */
  summaryRoom?: SummaryRoomRecord
  usage?: TokenUsage
  rawOutput?: ContentBlock[]
  llmStreamCall?: true
}

/**
 * The hardened profile's HARD-2 record of a summary request (not §1.4): the priced summary prompt
 * (`P_route`: tools + system head + region + instruction) and the summary route's reported limits the cap was
 * clamped to. `configuredMaxTokens` (the policy's `maxTokens`) is present only when the sent cap is smaller.
 */
export interface SummaryRoomRecord {
  configuredMaxTokens?: number
  promptTokens: number
  contextWindow?: number
  maxOutputTokens?: number
  /**
   * The last node of the span the policy selected, when HARD-2 shrank it to fit the summary route: the nodes after
   * `shadowedRange.end` up to this seq stay on the surface for a later round, and HARD-3's budget does not count
   * them as retained (`packages/core/docs/hardened.md`). Absent when the span was not shrunk.
   */
  deferredTo?: Seq
}

/** One node's offloaded image indexes (§1.4.19). */
export interface OffloadTarget { seq: Seq; imageIndexes: number[] }

/**
 * One oversized user text block moved out of every later request (hardened `oversizedUserText`, HARD-5;
 * `packages/core/docs/hardened.md`). Log-only, seed-only, written only when the rule is on: a faithful log
 * never holds it. `tokens` is the block's structural price (§2.2), `bound` the limit it exceeded
 * (`floor(maxWindowRatio × contextWindow)`), `path` the read-only handle of the full text.
 */
export interface TextOffloadData { seq: Seq; blockIndex: number; tokens: number; bound: number; path: string }

/** Every event type this protocol defines. */
export type EventType = keyof EventDataMap

/** Every event type, in catalog order. */
export const EVENT_TYPES: readonly EventType[] = [
  'turn/start', 'turn/end', 'step/start', 'step/end', 'system/message', 'user/message', 'assistant/chunk',
  'assistant/message', 'tool/call', 'tool/result', 'request/header', 'request/context', 'session/end-seed',
  'llm/retry', 'llm/retry-started', 'compaction/start', 'compaction/summary', 'compaction/summary-error',
  'compaction/prune', 'compaction/end', 'image/offload', 'text/offload',
]

/** The surface-eligible types (§1.3). */
export type SurfaceEventType = 'system/message' | 'user/message' | 'assistant/message' | 'tool/result'

/** One immutable log record of a known type (§1.1). */
export type SessionEvent<T extends EventType = EventType> = T extends EventType ? {
  seq: Seq
  time: number
  type: T
  data: EventDataMap[T]
  surfaceOp?: SurfaceOp
  sourceEventSeqs?: Seq[]
  ignorable?: true
} : never

/** A surface event: `surfaceOp` is always present (INV-03). */
export type SurfaceEvent<T extends SurfaceEventType = SurfaceEventType> = SessionEvent<T> & { surfaceOp: SurfaceOp }

/**
 * A log-only record of a type the protocol does not define but the dialect or the user declared
 * known, or one marked `ignorable` (§1.1 rule 4, §1.4.20). It never affects the surface.
 */
export interface ForeignEvent {
  seq: Seq
  time: number
  type: string
  data: { [key: string]: JsonValue }
  ignorable?: true
}

/** Anything a log line may hold after decoding: a protocol event or a tolerated foreign record. */
export type LogEvent = SessionEvent | ForeignEvent

/** An event before the log assigns its seq. */
export type EventDraft<T extends EventType = EventType> = T extends EventType ? Omit<SessionEvent<T>, 'seq'> : never

/** Per-dialect vocabulary (§14.1). */
export interface DialectVocabulary {
  readonly dialect: Dialect
  /** Protocol event types this dialect writes. */
  readonly eventTypes: ReadonlySet<EventType>
  /** Surface-eligible types in this dialect (INV-03). */
  readonly surfaceTypes: ReadonlySet<EventType>
  /** Foreign log-only types this dialect is known to write without `ignorable` (INV-02). */
  readonly foreignTypes: ReadonlySet<string>
}

const SEED_ONLY: ReadonlySet<EventType> = new Set(['system/message', 'compaction/summary-error', 'image/offload', 'text/offload'])

const VOCABULARIES: Record<Dialect, DialectVocabulary> = {
  seed: {
    dialect: 'seed',
    eventTypes: new Set(EVENT_TYPES),
    surfaceTypes: new Set(['system/message', 'user/message', 'assistant/message', 'tool/result']),
    foreignTypes: new Set(),
  },
  'dsh-0.1.0-rc.8': {
    dialect: 'dsh-0.1.0-rc.8',
    eventTypes: new Set(EVENT_TYPES.filter((t) => !SEED_ONLY.has(t))),
    surfaceTypes: new Set(['user/message', 'assistant/message', 'tool/result']),
    foreignTypes: new Set(['agent/inbox/spliced']),
  },
}

/** The vocabulary of `dialect`. */
export function vocabulary(dialect: Dialect): DialectVocabulary {
  return VOCABULARIES[dialect]
}

/** True for types that are surface-eligible in `dialect` (§1.3, §14.1). */
export function isSurfaceType(type: string, dialect: Dialect): type is SurfaceEventType {
  return VOCABULARIES[dialect].surfaceTypes.has(type as EventType)
}

/** True when `event` is a protocol event of the given type. */
export function isEventOfType<T extends EventType>(event: LogEvent | undefined, type: T): event is SessionEvent<T> {
  return event !== undefined && event.type === type
}

/** True when `event` is a surface event (it carries a `surfaceOp`, INV-03). */
export function isSurfaceEvent(event: LogEvent): event is SurfaceEvent {
  return 'surfaceOp' in event && event.surfaceOp !== undefined
}

/** The optional first line of a harness JSONL log: storage metadata, not an event (§1.1). */
export interface SessionHeaderRecord {
  type: 'session'
  version: number
  id: string
  createdAt: number
  [key: string]: JsonValue
}
