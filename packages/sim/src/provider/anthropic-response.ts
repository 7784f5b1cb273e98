/**
 * What the mock writes on the Anthropic messages wire: the SSE events of a reply, the non-streaming
 * `message` body, and errors in Anthropic's envelope `{"type":"error","error":{"type","message"}}`.
 *
 * Reply → events (`event: <type>` + `data: <json>`): `message_start` (the message with empty content and the
 * input side of usage), `ping`, then per block `content_block_start` / `content_block_delta`… /
 * `content_block_stop` — `text` → `text_delta` pieces, `reasoning` → a `thinking` block with `thinking_delta`
 * pieces, `tool-call` → a `tool_use` block with `input_json_delta` pieces of its arguments, any other block →
 * an `x_block` block carrying it (project extension) —, then `message_delta` (`stop_reason`, the full usage)
 * and `message_stop`. Usage: `input_tokens` = uncached input, `cache_read_input_tokens` = cache read,
 * `cache_creation_input_tokens` = cache write (the real API's split; no field is folded into another).
 * Usage modes (`ChunkContext.usageMode`, issue #15): `reported` as above; `late` — `message_start` carries
 * all-zero usage and only `message_delta` the real figures; `omitted` — no `usage` object in any event nor
 * in the JSON body. A non-streaming body under `late` keeps its usage (it is the final and only event).
 */
import { assertNever, type ContentBlock, type JsonValue, type TokenUsage } from '@compaction-sim/core'
import type { UsageMode } from './enforce.ts'
import type { PlannedFinish, PlannedReply, WireRejectionPlan } from './types.ts'
import { finishOf, splitText, type ChunkContext } from './wire-response.ts'

type Obj = { [key: string]: JsonValue }

/** One SSE event of the Anthropic stream. */
export interface AnthropicEvent {
  event: string
  data: Obj
}

const STOP_REASON: Record<PlannedFinish, string> = { 'stop': 'end_turn', 'tool-calls': 'tool_use', 'max-tokens': 'max_tokens' }

/** The Anthropic `usage` object of `usage` (module doc). */
export function anthropicUsage(usage: TokenUsage): Obj {
  return {
    input_tokens: usage.inputTokens,
    cache_creation_input_tokens: usage.cacheWriteTokens ?? 0,
    cache_read_input_tokens: usage.cacheReadTokens ?? 0,
    output_tokens: usage.outputTokens,
  }
}

function messageShell(ctx: ChunkContext, content: JsonValue[], stopReason: string | null, usage: Obj | undefined): Obj {
  const out: Obj = {
    id: ctx.id,
    type: 'message',
    role: 'assistant',
    model: ctx.model,
    content,
    stop_reason: stopReason,
    stop_sequence: null,
  }
  if (usage !== undefined) out['usage'] = usage
  return out
}

/** The usage `message_start` carries per usage mode: the input side, all zeros (`late`), or none (`omitted`). */
function startUsage(ctx: ChunkContext, full: Obj): Obj | undefined {
  const mode: UsageMode = ctx.usageMode ?? 'reported'
  switch (mode) {
    case 'reported':
      return { ...full, output_tokens: 0 }
    case 'late':
      return anthropicUsage({ inputTokens: 0, outputTokens: 0 })
    case 'omitted':
      return undefined
    default:
      return assertNever(mode, 'usage mode')
  }
}

function toolInput(args: string): JsonValue {
  try {
    const parsed = JSON.parse(args) as JsonValue
    if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) return parsed
  } catch {
    // not JSON: the raw string is kept below so the content is not lost
  }
  return { x_raw_arguments: args }
}

/** The events of a whole reply (module doc); `finishIndex` is the index of `message_delta`. */
export function anthropicReplyEvents(reply: PlannedReply, ctx: ChunkContext): { events: AnthropicEvent[]; finishIndex: number } {
  const full = anthropicUsage(ctx.usage)
  const events: AnthropicEvent[] = [
    { event: 'message_start', data: { type: 'message_start', message: messageShell(ctx, [], null, startUsage(ctx, full)) } },
    { event: 'ping', data: { type: 'ping' } },
  ]
  const delta = (index: number, d: Obj): AnthropicEvent => ({
    event: 'content_block_delta',
    data: { type: 'content_block_delta', index, delta: d },
  })
  ;(reply.blocks as ContentBlock[]).forEach((block, index) => {
    const start = (contentBlock: Obj): void => {
      events.push({ event: 'content_block_start', data: { type: 'content_block_start', index, content_block: contentBlock } })
    }
    switch (block.type) {
      case 'text':
        start({ type: 'text', text: '' })
        for (const piece of splitText(String(block['text']), ctx.deltaChars)) events.push(delta(index, { type: 'text_delta', text: piece }))
        break
      case 'reasoning':
        start({ type: 'thinking', thinking: '', signature: '' })
        for (const piece of splitText(String(block['text']), ctx.deltaChars)) {
          events.push(delta(index, { type: 'thinking_delta', thinking: piece }))
        }
        break
      case 'tool-call':
        start({ type: 'tool_use', id: String(block['id']), name: String(block['name']), input: {} })
        for (const piece of splitText(String(block['arguments']), ctx.deltaChars)) {
          events.push(delta(index, { type: 'input_json_delta', partial_json: piece }))
        }
        break
      default:
        start({ type: 'x_block', block: block as unknown as JsonValue })
        break
    }
    events.push({ event: 'content_block_stop', data: { type: 'content_block_stop', index } })
  })
  const finishIndex = events.length
  const finish: Obj = { type: 'message_delta', delta: { stop_reason: STOP_REASON[finishOf(reply)], stop_sequence: null } }
  if (ctx.usageMode !== 'omitted') finish['usage'] = full
  events.push({ event: 'message_delta', data: finish })
  events.push({ event: 'message_stop', data: { type: 'message_stop' } })
  return { events, finishIndex }
}

/** The events of an empty answer (`EMPTY_RESPONSE`): `message_start` then `message_stop`, no block and no stop reason. */
export function anthropicEmptyEvents(ctx: ChunkContext): AnthropicEvent[] {
  return [
    {
      event: 'message_start',
      data: {
        type: 'message_start',
        message: messageShell(ctx, [], null, startUsage(ctx, anthropicUsage({ ...ctx.usage, outputTokens: 0 }))),
      },
    },
    { event: 'message_stop', data: { type: 'message_stop' } },
  ]
}

/** The non-streaming `message` body of a reply. */
export function anthropicMessageBody(reply: PlannedReply, ctx: ChunkContext): Obj {
  const content: JsonValue[] = (reply.blocks as ContentBlock[]).map((block): JsonValue => {
    switch (block.type) {
      case 'text':
        return { type: 'text', text: String(block['text']) }
      case 'reasoning':
        return { type: 'thinking', thinking: String(block['text']), signature: '' }
      case 'tool-call':
        return { type: 'tool_use', id: String(block['id']), name: String(block['name']), input: toolInput(String(block['arguments'])) }
      default:
        return { type: 'x_block', block: block as unknown as JsonValue }
    }
  })
  return messageShell(ctx, content, STOP_REASON[finishOf(reply)], ctx.usageMode === 'omitted' ? undefined : anthropicUsage(ctx.usage))
}

/** Anthropic's error `type` for an HTTP status (its documented table; other 5xx → `api_error`). */
export function anthropicErrorType(status: number): string {
  switch (status) {
    case 400: return 'invalid_request_error'
    case 401: return 'authentication_error'
    case 402: return 'billing_error'
    case 403: return 'permission_error'
    case 404: return 'not_found_error'
    case 413: return 'request_too_large'
    case 429: return 'rate_limit_error'
    case 504: return 'timeout_error'
    case 529: return 'overloaded_error'
    default: return status >= 500 ? 'api_error' : 'invalid_request_error'
  }
}

/** Error types of the project's own (kept as they are inside the Anthropic envelope). */
const PROJECT_ERROR_TYPES: ReadonlySet<string> = new Set(['image_offload_required', 'mock_internal_error'])

/** The Anthropic error object for `status` from any error object (OpenAI-shaped or already Anthropic). */
export function anthropicError(status: number, error: JsonValue | undefined): Obj {
  const e: Obj = typeof error === 'object' && error !== null && !Array.isArray(error) ? error : {}
  const own = typeof e['type'] === 'string' && PROJECT_ERROR_TYPES.has(e['type'])
  const out: Obj = {
    type: own ? String(e['type']) : anthropicErrorType(status),
    message: typeof e['message'] === 'string' ? e['message'] : 'error',
  }
  if (own) {
    if (e['code'] !== undefined) out['code'] = e['code']
    if (e['offloadImages'] !== undefined) out['offloadImages'] = e['offloadImages']
  }
  return out
}

/**
 * A rejection in Anthropic's envelope: a body already shaped `{"type":"error",…}` is kept; otherwise the
 * OpenAI-shaped `error` is re-typed by status (`anthropicErrorType`), its message kept. Headers are kept.
 */
export function toAnthropicRejection(rejection: WireRejectionPlan): WireRejectionPlan {
  if (rejection.body['type'] === 'error') return rejection
  const body = { type: 'error', error: anthropicError(rejection.status, rejection.body['error']) }
  const status = rejection.status
  return rejection.headers === undefined ? { status, body } : { status, body, headers: rejection.headers }
}

/** The in-band `error` event for an in-band error object (`inBandError` output: the error plus its `status`). */
export function anthropicErrorEvent(error: { [key: string]: JsonValue }): AnthropicEvent {
  const status = typeof error['status'] === 'number' ? error['status'] : 500
  return { event: 'error', data: { type: 'error', error: anthropicError(status, error) } }
}
