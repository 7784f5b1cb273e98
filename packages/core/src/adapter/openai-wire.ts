/**
 * The OpenAI-compatible chat-completions wire as the HTTP adapter writes it (request side): how protocol
 * messages (§1.2) become wire messages, and how the model-invisible call attributes travel as headers
 * (§8.2). The mapping is documented per block type because it is lossy in a few named places; the mock
 * provider of the sim package decodes exactly this mapping.
 *
 * Mapping (protocol → wire):
 * - `system` message → `{role:'system', content}`; `user` → `{role:'user', content}`;
 *   `assistant` → `{role:'assistant', content, reasoning_content?, tool_calls?}`.
 * - `content` is a plain string when the (non tool) blocks are exactly one text block, else an array of
 *   parts (`[]` for no blocks; `null` on an assistant message that only calls tools).
 * - `text` → `{type:'text', text}`; `image` → `{type:'image_url', image_url:{url}}` with the URL of
 *   `attachmentUrl` (below) unless the adapter is given its own resolver (e.g. to data URLs).
 * - assistant `reasoning` blocks → `reasoning_content` (texts joined with `\n\n`, the DeepSeek field);
 *   assistant `tool-call` blocks → `tool_calls[]` `{id, type:'function', function:{name, arguments}}`.
 * - every `tool-result` block → its own `{role:'tool', tool_call_id, content}` message, in place; its
 *   content follows the rule above (images allowed as parts — an extension OpenAI itself would reject).
 *   `isError` has no wire field and is not sent.
 * - `reasoning` outside assistant messages and blocks of unknown types → a text part holding the block's
 *   JSON (the model sees them as text); `tool-call` outside assistant messages likewise.
 * - tools → `[{type:'function', function:{name, description, parameters}}]`, omitted when empty.
 * - `maxTokens` → `max_tokens`; `temperature`, `stop`; `reasoningEffort` → `reasoning_effort`.
 * - `purpose` → header `x-compaction-purpose: <purpose>`; `sessionId` → header `x-session-id`. Neither ever
 *   reaches the body, so a summary request's body is a byte-identical extension of the conversation's (§8.2).
 */
import type { ContentBlock, ImageAttachmentRef, Message, ToolSchema } from '../log/llm.ts'
import type { JsonObject } from '../log/json.ts'
import type { GenerateOptions } from './contract.ts'

/** The header that carries `GenerateOptions.purpose` (model-invisible, §8.2). */
export const PURPOSE_HEADER = 'x-compaction-purpose'
/** The header that carries `GenerateOptions.sessionId`. */
export const SESSION_HEADER = 'x-session-id'
/** URL scheme of `attachmentUrl`. */
export const ATTACHMENT_URL_SCHEME = 'attachment:'

/** The wire dialects this adapter speaks: OpenAI chat completions and DeepSeek's variant (usage fields). */
export type OpenAiWire = 'openai' | 'deepseek'

/** A text part of a wire message. */
export interface WireTextPart {
  type: 'text'
  text: string
}
/** An image part of a wire message. */
export interface WireImagePart {
  type: 'image_url'
  image_url: { url: string }
}
/** One part of a wire message's array content. */
export type WirePart = WireTextPart | WireImagePart
/** Wire message content: a plain string, an array of parts, or null (assistant with tool calls only). */
export type WireContent = string | WirePart[] | null

/** One tool call of an assistant wire message. */
export interface WireToolCall {
  id: string
  type: 'function'
  function: { name: string; arguments: string }
}

/** One chat-completions message. */
export type WireMessage =
  | { role: 'system'; content: WireContent }
  | { role: 'user'; content: WireContent }
  | { role: 'assistant'; content: WireContent; reasoning_content?: string; tool_calls?: WireToolCall[] }
  | { role: 'tool'; tool_call_id: string; content: WireContent }

/** One tool of the request. */
export interface WireTool {
  type: 'function'
  function: { name: string; description: string; parameters: JsonObject }
}

/** The request body, with keys in this fixed order (stable bytes). */
export interface WireChatRequest {
  model: string
  messages: WireMessage[]
  tools?: WireTool[]
  max_tokens?: number
  temperature?: number
  stop?: string[]
  reasoning_effort?: string
  stream: true
  stream_options: { include_usage: true }
}

/** Maps an image reference to the URL sent in an `image_url` part. */
export type ImageUrlResolver = (ref: ImageAttachmentRef) => string

/**
 * The default image URL: `attachment://<encoded attachmentId>?media_type=…&bytes=…&width=…&height=…[&name=…]`.
 * It carries the whole reference, so a mock can rebuild the block exactly; a real provider would need
 * data URLs instead (pass `imageUrl` to the adapter).
 */
export function attachmentUrl(ref: ImageAttachmentRef): string {
  const query = new URLSearchParams({
    media_type: ref.mediaType,
    bytes: String(ref.bytes),
    width: String(ref.width),
    height: String(ref.height),
  })
  if (ref.name !== undefined) query.set('name', ref.name)
  return `${ATTACHMENT_URL_SCHEME}//${encodeURIComponent(ref.attachmentId)}?${query.toString()}`
}

function asTextPart(block: ContentBlock): WireTextPart {
  return { type: 'text', text: block.type === 'text' ? String(block['text']) : JSON.stringify(block) }
}

function part(block: ContentBlock, imageUrl: ImageUrlResolver): WirePart {
  if (block.type === 'image') return { type: 'image_url', image_url: { url: imageUrl(block['attachment'] as ImageAttachmentRef) } }
  return asTextPart(block)
}

function content(blocks: readonly ContentBlock[], imageUrl: ImageUrlResolver): WireContent {
  const only = blocks[0]
  if (blocks.length === 1 && only !== undefined && only.type === 'text') return String(only['text'])
  return blocks.map((b) => part(b, imageUrl))
}

function assistantMessage(message: Message, imageUrl: ImageUrlResolver): WireMessage {
  const reasoning: string[] = []
  const calls: WireToolCall[] = []
  const rest: ContentBlock[] = []
  for (const block of message.content) {
    if (block.type === 'reasoning') reasoning.push(String(block['text']))
    else if (block.type === 'tool-call')
      calls.push({
        id: String(block['id']),
        type: 'function',
        function: { name: String(block['name']), arguments: String(block['arguments']) },
      })
    else rest.push(block)
  }
  const out: WireMessage = { role: 'assistant', content: rest.length === 0 && calls.length > 0 ? null : content(rest, imageUrl) }
  if (reasoning.length > 0) out.reasoning_content = reasoning.join('\n\n')
  if (calls.length > 0) out.tool_calls = calls
  return out
}

/** Maps protocol messages to wire messages per the module's table; tool results split out in place. */
export function toWireMessages(messages: readonly Message[], imageUrl: ImageUrlResolver = attachmentUrl): WireMessage[] {
  const out: WireMessage[] = []
  for (const message of messages) {
    if (message.role === 'assistant') {
      out.push(assistantMessage(message, imageUrl))
      continue
    }
    if (message.role === 'system') {
      out.push({ role: 'system', content: content(message.content, imageUrl) })
      continue
    }
    let run: ContentBlock[] = []
    const flush = (): void => {
      if (run.length > 0) out.push({ role: 'user', content: content(run, imageUrl) })
      run = []
    }
    for (const block of message.content) {
      if (block.type !== 'tool-result') {
        run.push(block)
        continue
      }
      flush()
      out.push({ role: 'tool', tool_call_id: String(block['toolCallId']), content: content(block['content'] as ContentBlock[], imageUrl) })
    }
    if (message.content.length === 0) out.push({ role: 'user', content: [] })
    flush()
  }
  return out
}

/** Maps tool schemas to wire tools; undefined when there are none (the field is then omitted). */
export function toWireTools(tools: readonly ToolSchema[] | undefined): WireTool[] | undefined {
  if (tools === undefined || tools.length === 0) return undefined
  return tools.map((t) => ({ type: 'function', function: { name: t.name, description: t.description, parameters: t.parameters } }))
}

/** The wire body of one streaming call (keys in the fixed order of `WireChatRequest`). */
export function toWireRequest(options: GenerateOptions, imageUrl: ImageUrlResolver = attachmentUrl): WireChatRequest {
  const body: Partial<WireChatRequest> & Pick<WireChatRequest, 'model' | 'messages'> = {
    model: options.model,
    messages: toWireMessages(options.messages, imageUrl),
  }
  const tools = toWireTools(options.tools)
  if (tools !== undefined) body.tools = tools
  if (options.maxTokens !== undefined) body.max_tokens = options.maxTokens
  if (options.temperature !== undefined) body.temperature = options.temperature
  if (options.stop !== undefined) body.stop = options.stop
  if (options.reasoningEffort !== undefined) body.reasoning_effort = options.reasoningEffort
  return { ...body, stream: true, stream_options: { include_usage: true } }
}

/** True when any message carries an image block at any depth (the 413 row of §1.2.2 needs it). */
export function hasImages(messages: readonly Message[]): boolean {
  const visit = (blocks: readonly ContentBlock[]): boolean =>
    blocks.some(
      (b) => b.type === 'image' || (b.type === 'tool-result' && Array.isArray(b['content']) && visit(b['content'] as ContentBlock[])),
    )
  return messages.some((m) => visit(m.content))
}
