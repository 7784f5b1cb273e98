/**
 * The Anthropic Messages wire as the HTTP adapter writes and reads it, apart from the streaming state
 * machine: the request body built from protocol messages (§1.2), usage in the disjoint §1.2 buckets, stop
 * reasons, and the status each Anthropic error `type` stands for (§1.2.2). The mock provider of the sim
 * package decodes exactly this request mapping (`provider/anthropic-request.ts`).
 *
 * Request mapping (protocol → wire):
 * - the leading `system` messages (the §9.2 system head) → the top-level `system` field, an array of text
 *   blocks (non-text blocks as a text block holding their JSON); absent when there is no head. A `system`
 *   message later in the history (§1.4.5 rule 2) has no place on this wire (§15 Q-05): it is sent in place as
 *   a `user` turn with the same blocks.
 * - `user` / `assistant` messages → wire messages of the same role with block-array content; **consecutive
 *   messages of one role are merged into one wire message** (blocks in order), because the wire alternates
 *   roles and wants every `tool_result` answering an assistant turn in the next user message.
 * - `text` → `text` (an empty text block is dropped: it is invisible and the wire refuses it); `image` →
 *   `image` with the source of the adapter's `imageSource` (default: `{type:'url', url: attachmentUrl(ref)}`);
 *   assistant `reasoning` → `thinking` `{thinking, signature}` (the block's `signature` when it carries one,
 *   else `''`); assistant `tool-call` → `tool_use` `{id, name, input}` with `input` the parsed arguments when
 *   they are a JSON object, else `{x_raw_arguments: <text>}` (project extension, the mock's own convention);
 *   a `tool-result` in a user message → `tool_result` `{tool_use_id, content, is_error?}` whose content keeps
 *   text and images (other blocks as JSON text).
 * - anything else (reasoning or tool calls outside assistant messages, tool results outside user messages,
 *   blocks of unknown types) → a text block holding the block's JSON, as the OpenAI mapping does.
 * - tools → `[{name, description, input_schema}]`, omitted when empty.
 * - `maxTokens` → `max_tokens`, which this wire requires: absent, the adapter's default is sent (see
 *   `http-anthropic.ts`); `temperature`; `stop` → `stop_sequences`; `stream: true`. `reasoningEffort` has
 *   no field on this wire and is not sent.
 * - `purpose` and `sessionId` travel as the same headers as on the OpenAI wire (`PURPOSE_HEADER`,
 *   `SESSION_HEADER`), never in the body, so a summary body is a byte-identical extension of the
 *   conversation's up to its instruction (§8.2).
 */
import type { ContentBlock, FinishReason, ImageAttachmentRef, Message, TokenUsage, ToolSchema } from '../log/llm.ts'
import type { JsonObject, JsonValue } from '../log/json.ts'
import type { GenerateOptions } from './contract.ts'
import { FailureCode, LlmError } from './contract.ts'
import { count, malformed, record } from './http-common.ts'
import { attachmentUrl } from './openai-wire.ts'

/** The `anthropic-version` header value the adapter sends by default. */
export const ANTHROPIC_VERSION = '2023-06-01'

/** The `max_tokens` sent when neither the call nor the route's metadata sets one (the wire requires it). */
export const ANTHROPIC_DEFAULT_MAX_TOKENS = 4096

/** A text block of the wire. */
export interface AnthropicTextBlock {
  type: 'text'
  text: string
}

/** Where an image block's bytes come from. */
export type AnthropicImageSource =
  | { type: 'url'; url: string }
  | { type: 'base64'; media_type: string; data: string }

/** An image block of the wire. */
export interface AnthropicImageBlock {
  type: 'image'
  source: AnthropicImageSource
}

/** Content of a `tool_result` block. */
export type AnthropicToolResultContent = Array<AnthropicTextBlock | AnthropicImageBlock>

/** One content block of a wire message. */
export type AnthropicBlock =
  | AnthropicTextBlock
  | AnthropicImageBlock
  | { type: 'thinking'; thinking: string; signature: string }
  | { type: 'tool_use'; id: string; name: string; input: JsonObject }
  | { type: 'tool_result'; tool_use_id: string; content: AnthropicToolResultContent; is_error?: true }

/** One wire message (the wire has no system role: the system head is the top-level `system`). */
export interface AnthropicMessage {
  role: 'user' | 'assistant'
  content: AnthropicBlock[]
}

/** One tool of the request. */
export interface AnthropicTool {
  name: string
  description: string
  input_schema: JsonObject
}

/** The request body, with keys in this fixed order (stable bytes). */
export interface AnthropicRequest {
  model: string
  max_tokens: number
  system?: AnthropicTextBlock[]
  messages: AnthropicMessage[]
  tools?: AnthropicTool[]
  temperature?: number
  stop_sequences?: string[]
  stream: true
}

/** Maps an image reference to the source of its wire block. */
export type AnthropicImageSourceResolver = (ref: ImageAttachmentRef) => AnthropicImageSource

/** The default image source: a URL carrying the whole reference (`attachmentUrl`), which the mock rebuilds. */
export function attachmentImageSource(ref: ImageAttachmentRef): AnthropicImageSource {
  return { type: 'url', url: attachmentUrl(ref) }
}

function asText(block: ContentBlock): AnthropicTextBlock {
  return { type: 'text', text: JSON.stringify(block) }
}

/** A text block; null for empty text (invisible, and refused by the wire). */
function text(value: unknown): AnthropicTextBlock | null {
  const t = String(value)
  return t === '' ? null : { type: 'text', text: t }
}

function image(attachment: unknown, imageSource: AnthropicImageSourceResolver): AnthropicImageBlock {
  return { type: 'image', source: imageSource(attachment as ImageAttachmentRef) }
}

/** Text and images kept, empty text dropped, anything else as JSON text (system and tool-result content). */
function plain(blocks: readonly ContentBlock[], imageSource: AnthropicImageSourceResolver | null): Array<AnthropicTextBlock | AnthropicImageBlock> {
  const out: Array<AnthropicTextBlock | AnthropicImageBlock> = []
  for (const block of blocks) {
    if (block.type === 'text') {
      const t = text(block['text'])
      if (t !== null) out.push(t)
    } else if (block.type === 'image' && imageSource !== null) out.push(image(block['attachment'], imageSource))
    else out.push(asText(block))
  }
  return out
}

/** The `input` of a `tool_use` for raw JSON `args`: the object it parses to, else the raw text under `x_raw_arguments`. */
export function toolInput(args: string): JsonObject {
  try {
    const parsed = JSON.parse(args) as JsonValue
    if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) return parsed
  } catch {
    // not JSON (e.g. arguments cut off at max-tokens): sent raw below so nothing the log holds is lost
  }
  return { x_raw_arguments: args }
}

/** The raw JSON arguments of a `tool_use` `input` (inverse of `toolInput`). */
export function toolArguments(input: JsonObject): string {
  const keys = Object.keys(input)
  const raw = input['x_raw_arguments']
  if (keys.length === 1 && typeof raw === 'string') return raw
  return JSON.stringify(input)
}

function assistantBlock(block: ContentBlock, imageSource: AnthropicImageSourceResolver): AnthropicBlock | null {
  switch (block.type) {
    case 'text': return text(block['text'])
    case 'image': return image(block['attachment'], imageSource)
    case 'reasoning': {
      const signature = (block as Readonly<Record<string, unknown>>)['signature']
      return { type: 'thinking', thinking: String(block['text']), signature: typeof signature === 'string' ? signature : '' }
    }
    case 'tool-call':
      return { type: 'tool_use', id: String(block['id']), name: String(block['name']), input: toolInput(String(block['arguments'])) }
    default: return asText(block)
  }
}

function userBlock(block: ContentBlock, imageSource: AnthropicImageSourceResolver): AnthropicBlock | null {
  switch (block.type) {
    case 'text': return text(block['text'])
    case 'image': return image(block['attachment'], imageSource)
    case 'tool-result': {
      const out: AnthropicBlock = {
        type: 'tool_result',
        tool_use_id: String(block['toolCallId']),
        content: plain(block['content'] as ContentBlock[], imageSource),
      }
      if (block['isError'] === true) out.is_error = true
      return out
    }
    default: return asText(block)
  }
}

/** The top-level `system` blocks and the wire messages of `messages`, per the module's table. */
export function toAnthropicMessages(
  messages: readonly Message[], imageSource: AnthropicImageSourceResolver = attachmentImageSource,
): { system: AnthropicTextBlock[]; messages: AnthropicMessage[] } {
  const system: AnthropicTextBlock[] = []
  const out: AnthropicMessage[] = []
  let head = true
  for (const message of messages) {
    if (message.role === 'system' && head) {
      for (const b of plain(message.content, null)) system.push(b as AnthropicTextBlock)
      continue
    }
    head = false
    const role = message.role === 'assistant' ? 'assistant' : 'user'
    const blocks: AnthropicBlock[] = []
    for (const block of message.content) {
      const b = role === 'assistant' ? assistantBlock(block, imageSource) : userBlock(block, imageSource)
      if (b !== null) blocks.push(b)
    }
    const last = out.at(-1)
    if (last?.role === role) last.content.push(...blocks)
    else out.push({ role, content: blocks })
  }
  return { system, messages: out }
}

/** Maps tool schemas to wire tools; undefined when there are none (the field is then omitted). */
export function toAnthropicTools(tools: readonly ToolSchema[] | undefined): AnthropicTool[] | undefined {
  if (tools === undefined || tools.length === 0) return undefined
  return tools.map((t) => ({ name: t.name, description: t.description, input_schema: t.parameters }))
}

/** The wire body of one streaming call (keys in the fixed order of `AnthropicRequest`); `maxTokens` is the call's cap or the default. */
export function toAnthropicRequest(
  options: GenerateOptions, defaultMaxTokens: number, imageSource: AnthropicImageSourceResolver = attachmentImageSource,
): AnthropicRequest {
  const { system, messages } = toAnthropicMessages(options.messages, imageSource)
  const body: Omit<AnthropicRequest, 'messages' | 'stream'> & Partial<AnthropicRequest> = {
    model: options.model,
    max_tokens: options.maxTokens ?? defaultMaxTokens,
  }
  if (system.length > 0) body.system = system
  body.messages = messages
  const tools = toAnthropicTools(options.tools)
  if (tools !== undefined) body.tools = tools
  if (options.temperature !== undefined) body.temperature = options.temperature
  if (options.stop !== undefined) body.stop_sequences = options.stop
  return { ...body, messages, stream: true }
}

/**
 * Usage in disjoint buckets from the wire's usage fields (its buckets are already disjoint):
 * `input_tokens` → `inputTokens` (uncached input), `output_tokens` → `outputTokens`,
 * `cache_read_input_tokens` → `cacheReadTokens`, `cache_creation_input_tokens` → `cacheWriteTokens`; each
 * cache bucket present exactly when the wire sends a number for it. Undefined when either count is missing
 * (usage not reported); throws `LlmError(UNKNOWN)` when a present field is not a token count.
 */
export function anthropicUsage(usage: Readonly<Record<string, unknown>>): TokenUsage | undefined {
  const field = (name: string): number | undefined => {
    const value = usage[name]
    if (value === undefined || value === null) return undefined
    const n = count(value)
    if (n === undefined) throw malformed(`usage.${name} is not a token count`)
    return n
  }
  const input = field('input_tokens')
  const output = field('output_tokens')
  const read = field('cache_read_input_tokens')
  const write = field('cache_creation_input_tokens')
  if (input === undefined || output === undefined) return undefined
  const out: TokenUsage = { inputTokens: input, outputTokens: output }
  if (read !== undefined) out.cacheReadTokens = read
  if (write !== undefined) out.cacheWriteTokens = write
  return out
}

/** Merges a later (cumulative) usage object over an earlier one, field by field; null fields do not erase. */
export function mergeUsage(base: Record<string, unknown>, later: unknown): Record<string, unknown> {
  const u = record(later)
  if (u === undefined) return base
  const out = { ...base }
  for (const [k, v] of Object.entries(u)) if (v !== null && v !== undefined) out[k] = v
  return out
}

/**
 * The finish of a `stop_reason`: `end_turn`, `stop_sequence` → `stop`; `tool_use` → `tool-calls`;
 * `max_tokens` and `model_context_window_exceeded` (output cut off by the window) → `max-tokens`. Any
 * other reason (`refusal`, `pause_turn`, …) throws `LlmError(UNKNOWN)` naming it.
 */
export function anthropicFinish(reason: string): FinishReason {
  switch (reason) {
    case 'end_turn':
    case 'stop_sequence':
      return { kind: 'stop' }
    case 'tool_use':
      return { kind: 'tool-calls' }
    case 'max_tokens':
    case 'model_context_window_exceeded':
      return { kind: 'max-tokens' }
    default:
      throw new LlmError({ message: `provider finished with "${reason}"`, code: FailureCode.UNKNOWN })
  }
}

/**
 * The HTTP status an Anthropic error `type` stands for (the wire's documented table), so an in-band
 * `error` event — which carries no status — is classified like the HTTP response it replaces (§1.2.2):
 * `overloaded_error` 529, `api_error` 500, `timeout_error` 504, `rate_limit_error` 429, `request_too_large`
 * 413, `invalid_request_error` 400, … Undefined for a type outside the table (e.g. the project mock's own).
 */
export function anthropicErrorStatus(type: unknown): number | undefined {
  switch (type) {
    case 'invalid_request_error': return 400
    case 'authentication_error': return 401
    case 'billing_error': return 402
    case 'permission_error': return 403
    case 'not_found_error': return 404
    case 'request_too_large': return 413
    case 'rate_limit_error': return 429
    case 'api_error': return 500
    case 'timeout_error': return 504
    case 'overloaded_error': return 529
    default: return undefined
  }
}
