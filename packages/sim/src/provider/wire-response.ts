/**
 * What the mock writes on the wire: SSE chunk payloads of a reply in the OpenAI chat-completions shape
 * (DeepSeek's usage variant), the non-streaming `chat.completion` body, and the error bodies of §1.2.2.
 *
 * Reply → chunks (each one `data:` event): a first chunk `delta {role:'assistant', content:''}`; per block,
 * in order: `reasoning` → `delta.reasoning_content` pieces, `text` → `delta.content` pieces, `tool-call` →
 * `delta.tool_calls[{index k, id, type, function{name, arguments:''}}]` then `arguments` pieces (k = the
 * call's ordinal in the reply), any other block (image, unknown) → `delta.x_block` (project extension);
 * then `delta {}` with `finish_reason`; then, with `stream_options.include_usage`, `choices: []` + `usage`
 * (every other chunk then carries `usage: null`, as OpenAI does); then `[DONE]`. Pieces are at most
 * `deltaChars` UTF-16 units and never split a surrogate pair.
 *
 * Usage modes of a route (issue #15, `ChunkContext.usageMode`): `reported` is the table above; `omitted`
 * sends no usage object at all (no usage chunk, no `usage` key, none in the JSON body) even when the client
 * asked with `include_usage`; `late` sends it only on the final chunk — the finish chunk carries `usage`, no
 * other chunk has the key and there is no separate usage chunk — whether or not the client asked (the JSON
 * body, a single final object, keeps its `usage`).
 */
import { assertNever, type ContentBlock, type JsonValue, type TokenUsage } from '@compaction-sim/core'
import type { UsageMode } from './enforce.ts'
import type { MockWire, PlannedFinish, PlannedReply, WireRejectionPlan } from './types.ts'

type Obj = { [key: string]: JsonValue }

/** The identity fields every chunk of one response repeats. */
export interface ChunkContext {
  id: string
  /** Unix seconds (from the virtual clock). */
  created: number
  model: string
  includeUsage: boolean
  /** The usage to report (scripted or estimated). */
  usage: TokenUsage
  /** Largest delta piece, in UTF-16 units. */
  deltaChars: number
  /** How the route reports usage (module doc); absent = `reported`. */
  usageMode?: UsageMode
}

/** True when the stream ends with a separate `choices: []` usage chunk (mode `reported` with `include_usage`). */
export function hasUsageChunk(ctx: ChunkContext): boolean {
  return ctx.includeUsage && (ctx.usageMode ?? 'reported') === 'reported'
}

/** Splits `text` into pieces of at most `size` units without splitting a surrogate pair; `[]` for ''. */
export function splitText(text: string, size: number): string[] {
  const out: string[] = []
  let i = 0
  while (i < text.length) {
    let end = Math.min(text.length, i + Math.max(2, size))
    const last = text.charCodeAt(end - 1)
    if (end < text.length && last >= 0xd800 && last <= 0xdbff) end--
    out.push(text.slice(i, end))
    i = end
  }
  return out
}

/** Finish of a reply: the planned one, else `tool-calls` when it has a tool call, else `stop`. */
export function finishOf(reply: PlannedReply): PlannedFinish {
  return reply.finish ?? (reply.blocks.some((b) => b.type === 'tool-call') ? 'tool-calls' : 'stop')
}

const WIRE_FINISH: Record<PlannedFinish, string> = { 'stop': 'stop', 'tool-calls': 'tool_calls', 'max-tokens': 'length' }

/** The wire `usage` object of a dialect; `cacheWriteTokens` folds into the prompt (no wire field). */
export function usageToWire(wire: MockWire, usage: TokenUsage): Obj {
  const cached = usage.cacheReadTokens ?? 0
  const prompt = usage.inputTokens + cached + (usage.cacheWriteTokens ?? 0)
  const out: Obj = { prompt_tokens: prompt, completion_tokens: usage.outputTokens, total_tokens: prompt + usage.outputTokens }
  if (wire === 'deepseek') {
    out['prompt_cache_hit_tokens'] = cached
    out['prompt_cache_miss_tokens'] = prompt - cached
  } else {
    out['prompt_tokens_details'] = { cached_tokens: cached }
  }
  if (usage.reasoningTokens !== undefined) out['completion_tokens_details'] = { reasoning_tokens: usage.reasoningTokens }
  return out
}

function chunk(ctx: ChunkContext, choices: JsonValue[], usage?: Obj): Obj {
  const out: Obj = { id: ctx.id, object: 'chat.completion.chunk', created: ctx.created, model: ctx.model, choices }
  if (usage !== undefined || hasUsageChunk(ctx)) out['usage'] = usage ?? null
  return out
}

function deltaChunk(ctx: ChunkContext, delta: Obj, finish: string | null = null, usage?: Obj): Obj {
  return chunk(ctx, [{ index: 0, delta, logprobs: null, finish_reason: finish }], usage)
}

/** The SSE data payloads of a whole reply, `[DONE]` last (module table). */
export function replyEvents(wire: MockWire, reply: PlannedReply, ctx: ChunkContext): string[] {
  const out: Obj[] = [deltaChunk(ctx, { role: 'assistant', content: '' })]
  let callOrdinal = 0
  for (const block of reply.blocks) {
    switch (block.type) {
      case 'text':
        for (const piece of splitText(String(block['text']), ctx.deltaChars)) out.push(deltaChunk(ctx, { content: piece }))
        break
      case 'reasoning':
        for (const piece of splitText(String(block['text']), ctx.deltaChars)) out.push(deltaChunk(ctx, { reasoning_content: piece }))
        break
      case 'tool-call': {
        const index = callOrdinal++
        out.push(
          deltaChunk(ctx, {
            tool_calls: [{ index, id: String(block['id']), type: 'function', function: { name: String(block['name']), arguments: '' } }],
          }),
        )
        for (const piece of splitText(String(block['arguments']), ctx.deltaChars))
          out.push(deltaChunk(ctx, { tool_calls: [{ index, function: { arguments: piece } }] }))
        break
      }
      default:
        out.push(deltaChunk(ctx, { x_block: block as unknown as JsonValue }))
        break
    }
  }
  const late = ctx.usageMode === 'late' ? usageToWire(wire, ctx.usage) : undefined
  out.push(deltaChunk(ctx, {}, WIRE_FINISH[finishOf(reply)], late))
  if (hasUsageChunk(ctx)) out.push(chunk(ctx, [], usageToWire(wire, ctx.usage)))
  return [...out.map((o) => JSON.stringify(o)), '[DONE]']
}

/** The non-streaming `chat.completion` body of a reply (text joined; image and unknown blocks are not representable). */
export function completionBody(wire: MockWire, reply: PlannedReply, ctx: ChunkContext): Obj {
  const texts: string[] = []
  const reasoning: string[] = []
  const calls: JsonValue[] = []
  for (const block of reply.blocks as ContentBlock[]) {
    if (block.type === 'text') texts.push(String(block['text']))
    else if (block.type === 'reasoning') reasoning.push(String(block['text']))
    else if (block.type === 'tool-call')
      calls.push({
        id: String(block['id']),
        type: 'function',
        function: { name: String(block['name']), arguments: String(block['arguments']) },
      })
  }
  const message: Obj = { role: 'assistant', content: texts.length === 0 ? null : texts.join('') }
  if (reasoning.length > 0) message['reasoning_content'] = reasoning.join('')
  if (calls.length > 0) message['tool_calls'] = calls
  const body: Obj = {
    id: ctx.id,
    object: 'chat.completion',
    created: ctx.created,
    model: ctx.model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: WIRE_FINISH[finishOf(reply)] }],
  }
  if (ctx.usageMode !== 'omitted') body['usage'] = usageToWire(wire, ctx.usage)
  return body
}

/**
 * The provider's context-length rejection (§1.2.2), HTTP 400, as each wire words it. `completionTokens`
 * absent: the prompt alone was counted — OpenAI `code: context_length_exceeded` "… your messages resulted in
 * N tokens …"; DeepSeek "… you requested N tokens (N in the messages, 0 in the completion) …" with the
 * generic `code: invalid_request_error` (only the message says "maximum context length"); Anthropic
 * `invalid_request_error` "prompt is too long: N tokens > M maximum". `completionTokens` given (the
 * `prompt-plus-max-tokens` rule counted `max_tokens` too): OpenAI and DeepSeek "… you requested P+C tokens
 * (P in the messages, C in the completion) …"; Anthropic keeps "prompt is too long" when the prompt alone
 * exceeds the window, else "input length and `max_tokens` exceed context limit: P + C > M, decrease input
 * length or `max_tokens` and try again" (a message §1.2.2 does not list, so it classifies as `UNKNOWN`).
 */
export function overflowRejection(
  wire: MockWire, contextWindow: number, promptTokens: number, completionTokens?: number,
): WireRejectionPlan {
  if (wire === 'anthropic') {
    // Anthropic: `invalid_request_error` whose message alone names the overflow.
    const message = completionTokens === undefined || promptTokens > contextWindow
      ? `prompt is too long: ${promptTokens} tokens > ${contextWindow} maximum`
      : `input length and \`max_tokens\` exceed context limit: ${promptTokens} + ${completionTokens} > ${contextWindow}, ` +
        'decrease input length or `max_tokens` and try again'
    return { status: 400, body: { type: 'error', error: { type: 'invalid_request_error', message } } }
  }
  const head = `This model's maximum context length is ${contextWindow} tokens.`
  const requested = (completion: number): string =>
    `${head} However, you requested ${promptTokens + completion} tokens ` +
    `(${promptTokens} in the messages, ${completion} in the completion). ` +
    'Please reduce the length of the messages or completion.'
  if (wire === 'deepseek') {
    return {
      status: 400,
      body: {
        error: { message: requested(completionTokens ?? 0), type: 'invalid_request_error', param: null, code: 'invalid_request_error' },
      },
    }
  }
  return {
    status: 400,
    body: {
      error: {
        message: completionTokens === undefined
          ? `${head} However, your messages resulted in ${promptTokens} tokens. Please reduce the length of the messages.`
          : requested(completionTokens),
        type: 'invalid_request_error',
        param: 'messages',
        code: 'context_length_exceeded',
      },
    },
  }
}

/**
 * The provider's rejection of a `max_tokens` above the model's output cap, HTTP 400, as each wire words it:
 * OpenAI `param: <field>`, `code: invalid_value`, "<field> is too large: N. This model supports at most M
 * completion tokens, whereas you provided N." (`field` = the body field that carried it); DeepSeek "Invalid
 * max_tokens value, the valid range of max_tokens is [1, M]" (`code: invalid_request_error`); Anthropic
 * `invalid_request_error` "max_tokens: N > M, which is the maximum allowed number of output tokens for <model>".
 * None of them is a row of §1.2.2: a conforming adapter reports `UNKNOWN`.
 */
export function maxOutputRejection(
  wire: MockWire, model: string, maxTokens: number, maxOutputTokens: number, field: 'max_tokens' | 'max_completion_tokens' = 'max_tokens',
): WireRejectionPlan {
  switch (wire) {
    case 'anthropic': {
      const message = `max_tokens: ${maxTokens} > ${maxOutputTokens}, which is the maximum allowed number of output tokens for ${model}`
      return { status: 400, body: { type: 'error', error: { type: 'invalid_request_error', message } } }
    }
    case 'deepseek': {
      const message = `Invalid max_tokens value, the valid range of max_tokens is [1, ${maxOutputTokens}]`
      return { status: 400, body: { error: { message, type: 'invalid_request_error', param: null, code: 'invalid_request_error' } } }
    }
    case 'openai': {
      const message = `${field} is too large: ${maxTokens}. This model supports at most ${maxOutputTokens} completion tokens, ` +
        `whereas you provided ${maxTokens}.`
      return { status: 400, body: { error: { message, type: 'invalid_request_error', param: field, code: 'invalid_value' } } }
    }
    default:
      return assertNever(wire, 'wire')
  }
}

/**
 * The project mock's image-budget rejection (§1.2.2): HTTP 400 (or `status`, e.g. 413) with
 * `{"error":{"type":"image_offload_required","code":"IMAGE_OFFLOAD_REQUIRED","message":…,"offloadImages":k}}`.
 * `offloadImages` is written verbatim (absent when undefined) so that invalid counts can be injected (FAULT-15).
 * `reason` replaces the message's opening clause (e.g. which image limit the request broke).
 */
export function imageOffloadRejection(offloadImages: JsonValue | undefined, status = 400, reason?: string): WireRejectionPlan {
  const head = reason ?? 'The request carries more images than this route accepts'
  const error: Obj = {
    message: `${head}; remove ${JSON.stringify(offloadImages ?? null)} image(s) and retry.`,
    type: 'image_offload_required',
    code: 'IMAGE_OFFLOAD_REQUIRED',
  }
  if (offloadImages !== undefined) error['offloadImages'] = offloadImages
  return { status, body: { error } }
}

/** HTTP 429 with the provider's rate-limit body (Anthropic: `rate_limit_error`) and, when given, `retry-after-ms`. */
export function rateLimitRejection(wire: MockWire, retryAfterMs?: number): WireRejectionPlan {
  const body: Obj =
    wire === 'anthropic'
      ? { type: 'error', error: { type: 'rate_limit_error', message: 'Number of request tokens has exceeded your per-minute rate limit.' } }
      : wire === 'deepseek'
      ? { error: { message: 'Rate Limit Reached', type: 'rate_limit_reached_error', param: null, code: 'rate_limit_reached_error' } }
      : {
          error: {
            message: 'Rate limit reached for requests. Please try again later.',
            type: 'requests',
            param: null,
            code: 'rate_limit_exceeded',
          },
        }
  return retryAfterMs === undefined ? { status: 429, body } : { status: 429, body, headers: { 'retry-after-ms': String(retryAfterMs) } }
}

/** A 5xx server error (default 500). */
export function serverRejection(status = 500): WireRejectionPlan {
  return {
    status,
    body: {
      error: {
        message: 'The server had an error while processing your request. Sorry about that!',
        type: 'server_error',
        param: null,
        code: null,
      },
    },
  }
}

/** A rejection no row of §1.2.2 recognises (→ `UNKNOWN`): HTTP 400 with an unrelated invalid-request body. */
export function unrecognisedRejection(message = 'Invalid value for parameter.'): WireRejectionPlan {
  return { status: 400, body: { error: { message, type: 'invalid_request_error', param: null, code: 'invalid_value' } } }
}

/** The in-band error object of a rejection: its `error` with the status added, for `data: {"error":…}` events. */
export function inBandError(rejection: WireRejectionPlan): Obj {
  const error = rejection.body['error']
  const base: Obj = typeof error === 'object' && error !== null && !Array.isArray(error) ? { ...error } : { message: 'error' }
  return { ...base, status: rejection.status }
}
