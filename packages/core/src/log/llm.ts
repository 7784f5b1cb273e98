/** LLM vocabulary of §1.2: content blocks, messages, sources, usage, failures and stream chunks. */
import type { CallId, MessageId } from '../brand.ts'
import type { JsonObject, JsonValue } from './json.ts'

/** Plain text. */
export interface TextBlock { type: 'text'; text: string }
/** Model reasoning; never a checkpoint's content. */
export interface ReasoningBlock { type: 'reasoning'; text: string }
/** An input image, by reference to immutable attachment bytes. */
export interface ImageBlock { type: 'image'; attachment: ImageAttachmentRef }
/** A tool call requested by the model; `arguments` is raw JSON text. */
export interface ToolCallBlock { type: 'tool-call'; id: CallId; name: string; arguments: string }
/** The result of one tool call; its `content` may nest images (§6.2). */
export interface ToolResultBlock { type: 'tool-result'; toolCallId: CallId; content: ContentBlock[]; isError?: boolean }
/** A block of a type this protocol does not define: preserved verbatim, priced structurally (§2.2). */
export interface UnknownBlock { type: string; [key: string]: JsonValue }

/** The known content blocks. */
export type KnownContentBlock = TextBlock | ReasoningBlock | ImageBlock | ToolCallBlock | ToolResultBlock
/** Any content block; the union is open (§1.2). Narrow with `isKnownBlock`. */
export type ContentBlock = KnownContentBlock | UnknownBlock

/** Reference to immutable attachment bytes (§1.2). */
export interface ImageAttachmentRef {
  attachmentId: string
  mediaType: string
  bytes: number
  width: number
  height: number
  name?: string
}

/** Who produced a message (§1.2). */
export type MessageSource =
  | { kind: 'user' }
  | ({ kind: 'plugin'; plugin: string } & JsonObject)
  | { kind: 'model'; provider: string; model: string; replayState?: JsonValue }
  | { kind: 'tool'; callId: CallId }

/** A model-visible message (§1.2). */
export interface Message {
  id: MessageId
  role: 'system' | 'user' | 'assistant'
  content: ContentBlock[]
  source: MessageSource
}

/** A system-role message (§1.4.5). */
export interface SystemMessage extends Message { role: 'system' }
/** A user-role message: a prompt, injected context or a checkpoint (§1.4.3, §1.4.4). */
export interface UserMessage extends Message { role: 'user' }
/** A model reply (§1.4.7). */
export interface AssistantMessage extends Message { role: 'assistant'; source: { kind: 'model'; provider: string; model: string; replayState?: JsonValue } }
/** A tool result: a user-role message with exactly one `tool-result` block (§1.2). */
export interface ToolResultMessage extends Message { role: 'user'; source: { kind: 'tool'; callId: CallId }; content: [ToolResultBlock] }

/** Provider usage in disjoint buckets (§1.2). */
export interface TokenUsage {
  inputTokens: number
  outputTokens: number
  cacheReadTokens?: number
  cacheWriteTokens?: number
  reasoningTokens?: number
}

/** A structured provider or runtime failure (§1.2, §1.2.1). */
export interface LlmFailure {
  message: string
  code: string
  status?: number
  providerRetryAfterMs?: number
  requestId?: string
  offloadImages?: number
}

/** Why a model call finished (§1.2). */
export type FinishReason =
  | { kind: 'stop' } | { kind: 'tool-calls' } | { kind: 'max-tokens' }
  | { kind: 'aborted'; failure: LlmFailure } | { kind: 'error'; failure: LlmFailure }

/** One streamed chunk of a model call (§1.2). */
export type StreamChunk =
  | { type: 'block-start'; index: number; blockType: string }
  | { type: 'text-delta'; index: number; text: string }
  | { type: 'reasoning-delta'; index: number; text: string }
  | { type: 'tool-call-delta'; index: number; id: CallId; name?: string; argumentsDelta: string }
  | { type: 'block-end'; index: number; block: ContentBlock }
  | { type: 'usage'; usage: TokenUsage }
  | { type: 'finish'; reason: FinishReason; replayState?: JsonValue }

/** A tool schema as sent to the model; order of a tool list matters (§10.2). */
export interface ToolSchema { name: string; description: string; parameters: JsonObject }

/** Route and sampling configuration of a call (§1.2). */
export interface LlmCallConfig {
  provider: string
  model: string
  reasoningEffort?: string
  temperature?: number
  maxTokens?: number
  stop?: string[]
}

/** Markers for config fields filled from adapter defaults (§1.2). */
export interface LlmCallConfigAdapterDefaults { reasoningEffort?: true; maxTokens?: true }

/** What an adapter reports for one exact route (§1.2). */
export interface LlmModelInfo {
  provider: string
  id: string
  name: string
  context?: { contextWindow: number }
  imageTokens?: number
  defaultMaxTokens?: number
  /**
   * Largest generation cap (`maxTokens`) the route accepts, when the adapter knows it. Not part of §1.2: the
   * hardened profile's HARD-2 (`docs/hardened.md`) clamps the summary request to it; nothing else reads it.
   */
  maxOutputTokens?: number
}

const KNOWN_BLOCK_TYPES: ReadonlySet<string> = new Set(['text', 'reasoning', 'image', 'tool-call', 'tool-result'])

/** True when `block` is one of the five block types this protocol defines. */
export function isKnownBlock(block: ContentBlock): block is KnownContentBlock {
  return KNOWN_BLOCK_TYPES.has(block.type)
}
