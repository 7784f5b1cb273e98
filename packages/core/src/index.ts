/**
 * @compaction-sim/core — the reference implementation of the DSH context-compaction protocol.
 * The append-only log is the only source of truth; surface, derived messages and the header in
 * force are pure folds of it (§1, §10, §11). This entry re-exports by name only.
 */
export { Seq, CallId, CompactionId, MessageId, type Branded } from './brand.ts'
export { assertNever, InvariantError, LogError, type LogErrorCode, type LogErrorLocation } from './errors.ts'
export type { JsonValue, JsonObject } from './log/json.ts'
export { jsonEqual, deepFreeze } from './log/json.ts'
export type {
  TextBlock, ReasoningBlock, ImageBlock, ToolCallBlock, ToolResultBlock, UnknownBlock, KnownContentBlock, ContentBlock,
  ImageAttachmentRef, MessageSource, Message, SystemMessage, UserMessage, AssistantMessage, ToolResultMessage,
  TokenUsage, LlmFailure, FinishReason, StreamChunk, ToolSchema, LlmCallConfig, LlmCallConfigAdapterDefaults, LlmModelInfo,
} from './log/llm.ts'
export { isKnownBlock } from './log/llm.ts'
export type {
  Dialect, SurfaceOp, ReplaceOp, TurnEndReason, EpochHeader, HeaderReason, SeqRange, EventDataMap, CompactionSummaryData, SummaryRoomRecord,
  OffloadTarget, TextOffloadData, EventType, SurfaceEventType, SessionEvent, SurfaceEvent, ForeignEvent, LogEvent, EventDraft,
  DialectVocabulary, SessionHeaderRecord, CapacityWarning,
} from './log/events.ts'
export { DIALECTS, EVENT_TYPES, vocabulary, isSurfaceType, isEventOfType, isSurfaceEvent } from './log/events.ts'
export { EventLog, withLocation, type EventLogOptions } from './log/event-log.ts'
export { SessionState, messageContent, type HeaderInForce, type OpenBracket, type SessionStateOptions } from './log/session-state.ts'
export { summarizeSession, type SessionSummary } from './log/summary.ts'
export {
  isRepairCloser, repairRunBefore, repairClosers,
  TOOL_NOT_STARTED, TOOL_OUTCOME_UNKNOWN, TOOL_NOT_STARTED_TEXT, TOOL_OUTCOME_UNKNOWN_TEXT,
} from './log/lifecycle.ts'
export { Surface, pairingDelta, type SurfaceView, type EventLookup } from './surface/surface.ts'
export { toolPairingBalancedBefore, toolPairingBalancedAfter, balancedCuts, ToolPairingError } from './surface/tool-pairing.ts'
export { deriveEventMessage, deriveMessages, deriveNodeMessages, projectNodeMessage, type DeriveSource, type DerivedMessage } from './surface/derive.ts'
export {
  userTextReadOnlyPath, oversizedTextBound, textOffloadPlaceholder, isTextOffloadPlaceholder, textOffloadProjection, oversizedTextBlocks,
  type TextOffloadMarks, type OversizedText,
} from './offload/text.ts'
export {
  countImages, imageOccurrences, imageOffloadProjection, offloadPlaceholder, isOffloadPlaceholder, harnessReadOnlyPath,
  type ReadOnlyPathResolver,
} from './offload/projection.ts'
export { canonicalHeader, headersEqual, decideHeader, foldRequestHeader, type HeaderDecisionInput } from './request/header.ts'
export { PRUNE_MARKER, CHECKPOINT_PREAMBLE, CHECKPOINT_OPEN_TAG, CHECKPOINT_CLOSE_TAG, COMPACTION_INSTRUCTION } from './constants.ts'
export { loadSessionLog, type LoadedSessionLog } from './log/load.ts'
export { validateEvent, checkLossless, type ValidateOptions } from './log/validate.ts'
export {
  encodeEvent, encodeHeaderRecord, decodeLine, expandPackedRow, isPackedChunkRow, isHeaderRecord,
  type PackedChunkRow,
} from './log/codec.ts'
export {
  readLog, readLogLines, readLogLineBatches, streamLogEvents, parseLogText, isZstdPath, hasZstdMagic,
  type ReadLogOptions, type ReadLogResult, type TornTail, type LogLine, type LogStreamItem,
} from './log/reader.ts'
export { JsonlLogStore, type JsonlLogStoreOptions, type OpenedLogStore } from './log/store.ts'
export { assembleAttempt, AssemblyError, type AssembledAttempt } from './log/assembly.ts'
export {
  TokenMeter, MeterReplayError, envelopePrice, anchorOf, measureAgainst, type MeterAnchor, type MeterReplayErrorCode, type TokenMeterOptions,
} from './meter/meter.ts'
export type { Baseline, Measurement, PricedNode } from './meter/measurement.ts'
export {
  CALIBRATION_SCALE, CALIBRATION_MIN_PERMILLE, CALIBRATION_MAX_PERMILLE, CALIBRATION_STEP_PERMILLE, calibrationPermille, calibrationValue, calibratedTotal,
  calibratedRetain, scaleTokens, usagePromptTokens, overflowPromptTokens, capacityRouteKey,
  type CalibrationObservation, type CapacityExcess, type RouteCapacityEvidence,
} from './meter/calibration.ts'
export { CHARS_PER_TOKEN, BLOCK_OVERHEAD, ROLE_OVERHEAD, textTokens, blockPrice, blocksPrice, fixedPrice, routePrice, toolsPrice } from './meter/price.ts'
export type { FaultSpec, RunManifest, CapturedRequest } from './log/manifest.ts'
export {
  COMPACTION_DEFAULTS, resolveCompactionConfig, resolveTargetPolicy, resolveCompactSpec, routeKey, compactionConfigRule,
  CompactionConfigError, TargetPressureConfigError,
  type CompactionTrigger, type BasicCompactionConfig, type ModelPolicyConfig, type RetentionSpec, type SummarizationRouteSpec,
  type PolicyFieldsSpec, type ModelPolicySpec, type CompactionPolicySpec, type RouteTarget, type TargetPolicy, type CompactSpec,
  type CompactionConfigErrorCode, type TargetPressureConfigErrorCode,
} from './policy/config.ts'
export {
  HARDENING_RULES, HARDENING_DEFAULTS, FAITHFUL_HARDENING, hardId, hardeningOf, anyHardening, resolveHardening, HardeningConfigError,
  type PolicyProfile, type HardeningRule, type HardeningConfig, type HardeningSpec, type FailureBackoffConfig,
  type CheckpointBudgetConfig, type OversizedUserTextConfig, type CapacitySanityConfig,
} from './policy/hardening.ts'
export {
  evaluatePressure, routedTarget, CompactionBusyError, ModelContextError, PressureWarningGate,
  type PressureInput, type PressureDecision,
} from './policy/pressure.ts'
export {
  selectCompactableRange, openTurnPromptPosition, validateExplicitRegion, systemHeadCount, RangeSelectionError, RegionError,
  type CompactableRange, type SelectionOptions, type RangeSelectionErrorCode, type RegionErrorCode,
} from './range/select.ts'
export { PRUNE_DEFAULTS, resolvePruneConfig, PruneConfigError, type ToolResultPruneConfig, type PruneSpec, type PruneConfigErrorCode } from './prune/config.ts'
export { isMeasuredTextBlock, measuredChars, pruneContent } from './prune/content.ts'
export { pruneSession, PruneError, type PrunedEntry, type PruneResult, type PruneSessionOptions, type PruneErrorCode } from './prune/session.ts'
export {
  IMAGE_OFFLOAD_REQUIRED, offloadCountOf, selectOffload, appendOffload, OffloadError,
  type RequestNode, type OffloadErrorCode,
} from './offload/select.ts'
export { errorChain } from './errors.ts'
export { FailureCode, TRANSIENT_FAILURE_CODES, LlmError, type GenerateOptions, type LlmAdapter } from './adapter/contract.ts'
export { LlmRuntime, failureOf, type StreamMiddleware, type RuntimeCall, type LlmRuntimeHooks } from './adapter/runtime.ts'
export {
  ScriptedAdapter, ScriptExhaustedError, replyChunks,
  type ScriptedReply, type ReplySource, type ScriptedRoute, type ScriptedAdapterOptions,
} from './adapter/scripted.ts'
export {
  Agent, AgentError, interruptedContent,
  type AgentOptions, type TurnOutcome, type AgentErrorCode, type ConversationCapture,
} from './agent/agent.ts'
export { TurnQueue } from './agent/admission.ts'
export type { AgentCompactionEngine } from './agent/compaction-port.ts'
export {
  RETRY_DEFAULTS, AGENT_LIMIT_DEFAULTS, AgentConfigError, resolveRetryPolicy, resolveAgentLimits, retryDelayMs,
  type AgentRoute, type ToolCallRequest, type ToolOutcome, type ToolExecutor, type MessageKind, type UserInput,
  type ToolResultOrder, type SteeringSource,
  type RetryPolicyConfig, type RetryPolicySpec, type AgentLimits, type AgentConfigErrorCode,
} from './agent/options.ts'
export {
  runRequestErrorWaterfall, OverflowRecovery, imageOffloadListener, TransientRetry,
  type RequestErrorContext, type RequestErrorDecision, type RequestErrorListener, type OverflowRecoveryOptions,
  type TransientRetryOptions,
} from './agent/recovery.ts'
export { restoreSession, RestoreError, type RestoreErrorCode, type RestoreOptions, type RestoredSession } from './agent/restore.ts'
export {
  CompactionEngine, type CompactionEngineOptions, type IdleAdmission, type IdleReservation, type RouteContextNotes,
} from './compaction/engine.ts'
export { BracketFailure, type CompactionResult, type BracketFailureCode } from './compaction/bracket.ts'
export { compactCheckpointSource, isCompactCheckpointSource, frameCheckpoint, type CompactCheckpointSource } from './compaction/checkpoint.ts'
export {
  ManualCompactionError, CompactionError, SummarizerError, SurfaceChangedError, SummaryNotSmallerError,
  CompactionConvergenceError, BracketOwnerError, type ManualCompactionErrorCode, type CompactionErrorCode,
} from './compaction/errors.ts'
export {
  COMPACTION_INSTRUCTION_SOURCE, LlmSummarizer, resolveSummaryTarget, summaryRequest,
  type Summarizer, type SummaryInput, type SummaryOutput, type LlmSummarizerOptions, type SummaryTarget,
} from './compaction/summarizer.ts'
export {
  INSTRUCTION_TOKENS, clampSummaryTokens, nodeFixedPrice, resolveSummaryRoute, routeCap, summaryFitOf,
  summaryPromptOverhead, summaryRouteOf, type SummaryRoute,
} from './compaction/summary-room.ts'
export {
  HttpAdapterConfigError, type StaticModelInfo, type ModelMetadataSource, type HttpAdapterConfigErrorCode,
} from './adapter/http-common.ts'
export {
  OpenAiCompatibleAdapter, resolveOpenAiAdapterOptions, usageFromWire, type OpenAiAdapterOptions, type OpenAiAdapterSpec,
} from './adapter/http-openai.ts'
export {
  PURPOSE_HEADER, SESSION_HEADER, ATTACHMENT_URL_SCHEME, attachmentUrl, toWireMessages, toWireTools, toWireRequest,
  type OpenAiWire, type WireChatRequest, type WireMessage, type WireTool, type ImageUrlResolver,
} from './adapter/openai-wire.ts'
export {
  AnthropicMessagesAdapter, resolveAnthropicAdapterOptions, type AnthropicAdapterOptions, type AnthropicAdapterSpec,
} from './adapter/http-anthropic.ts'
export {
  ANTHROPIC_VERSION, ANTHROPIC_DEFAULT_MAX_TOKENS, attachmentImageSource, toAnthropicMessages, toAnthropicTools, toAnthropicRequest,
  anthropicUsage, anthropicFinish, anthropicErrorStatus,
  type AnthropicRequest, type AnthropicMessage, type AnthropicBlock, type AnthropicTool, type AnthropicImageSource,
  type AnthropicImageSourceResolver,
} from './adapter/anthropic-wire.ts'
export { SseParser, SseParseError, type SseEvent } from './adapter/sse-parser.ts'
export { classifyWireRejection, retryAfterMsOf, type WireRejection } from './adapter/wire-rejection.ts'
