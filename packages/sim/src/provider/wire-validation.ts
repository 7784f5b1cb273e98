/**
 * Strict wire validation (issue #15, the `pairing` rule of `enforce.ts`): the message-structure checks a real
 * provider runs on a request body before it tokenizes it, each answered with that wire's own HTTP 400 body
 * (not a protocol code; none of them is a row of §1.2.2, so a conforming adapter reports `UNKNOWN`). The
 * checks read the body as received (`ParsedRequest.wireBody`, already validated by the wire's parser), so
 * message indexes are the wire's own. The first violation in message order wins.
 *
 * OpenAI chat completions (`messages.[N]` = the wire index):
 * - an assistant message with `tool_calls` must be followed by one `tool` message per call id before the
 *   next non-tool message (or the end) → "An assistant message with 'tool_calls' must be followed by tool
 *   messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages:
 *   <ids>" (`param: messages.[N].role`, N = the message found instead, or the assistant's when the request ends);
 * - a `tool` message not inside such a run → "Invalid parameter: messages with role 'tool' must be a response
 *   to a preceeding message with 'tool_calls'." (sic, the provider's spelling); inside a run but naming an id
 *   the assistant did not issue → "Invalid parameter: 'tool_call_id' of '<id>' not found in 'tool_calls' of
 *   previous message." (`param: messages.[N].tool_call_id`).
 * - Results out of order are accepted: the wire binds a result to its call by id, not by position.
 * - Chat completions has no reasoning items, so nothing is an orphan reasoning item there.
 *
 * DeepSeek (OpenAI-compatible; `param: null`, `code: invalid_request_error`):
 * - missing results → "An assistant message with 'tool_calls' must be followed by tool messages responding to
 *   each 'tool_call_id'. (insufficient tool messages following tool_calls message)";
 * - a result without its call (or with an id not issued) → "Messages with role 'tool' must be a response to a
 *   preceding message with 'tool_calls'";
 * - thinking mode (the body sets `thinking: {type: 'enabled'}` or a `reasoning_effort`): in a turn (the
 *   messages between two `user` messages) in which the model called a tool, every assistant message must
 *   carry its `reasoning_content` back → "Missing `reasoning_content` field in the assistant message at message
 *   index N. For more information, please refer to https://api-docs.deepseek.com/guides/thinking_mode#tool-calls".
 *   This is DeepSeek's orphan-reasoning rule: reasoning stripped from the tool loop it belongs to.
 * - Results out of order are accepted, as on OpenAI.
 *
 * Anthropic messages (`messages.N` = the index in `messages`, the top-level `system` not counted):
 * - the first message must be a user message → `messages: first message must use the "user" role`;
 * - roles alternate → `messages: roles must alternate between "user" and "assistant", but found multiple
 *   "<role>" roles in a row`. (The first-party API relaxed both rules in 2024 — it merges consecutive turns —
 *   while Bedrock and many Anthropic-compatible gateways keep them; strict mode models the strict servers.)
 * - an assistant message with thinking blocks must start with one → `messages.N.content.0: If an assistant
 *   message contains any thinking blocks, the first block must be \`thinking\` or \`redacted_thinking\`. Found
 *   \`<type>\`.`; and may not end with one (an orphan reasoning item: thinking with nothing it led to) →
 *   `messages.N: The final block in an assistant message cannot be \`thinking\`.`;
 * - every `tool_use` needs a `tool_result` in the next message → `messages.N: \`tool_use\` ids were found
 *   without \`tool_result\` blocks immediately after: <ids>. Each \`tool_use\` block must have a corresponding
 *   \`tool_result\` block in the next message.` (N = the assistant message);
 * - those results must open that message → `messages.N: Did not find K \`tool_result\` block(s) at the
 *   beginning of this message. Messages following \`tool_use\` blocks must begin with a matching number of
 *   \`tool_result\` blocks.` (K = results of the previous message's calls not in the leading run);
 * - a `tool_result` whose id the previous message did not issue → `messages.N.content.M: unexpected
 *   \`tool_use_id\` found in \`tool_result\` blocks: <id>. Each \`tool_result\` block must have a corresponding
 *   \`tool_use\` block in the previous message.`
 * - Results out of order are accepted: the API binds by `tool_use_id`. (Order is enforced by Bedrock's
 *   Converse API, "Expected toolResult blocks at messages.N.content for the following Ids: …", a wire the mock
 *   does not speak.)
 */
import { assertNever, type JsonValue } from '@compaction-sim/core'
import type { MockWire, WireRejectionPlan } from './types.ts'

type Obj = { [key: string]: JsonValue }

function record(value: JsonValue | undefined): Obj | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? value : undefined
}

function list(value: JsonValue | undefined): JsonValue[] {
  return Array.isArray(value) ? value : []
}

function openAiError(message: string, param: string | null, code: string | null): WireRejectionPlan {
  return { status: 400, body: { error: { message, type: 'invalid_request_error', param, code } } }
}

function anthropicError(message: string): WireRejectionPlan {
  return { status: 400, body: { type: 'error', error: { type: 'invalid_request_error', message } } }
}

/** The call ids of an OpenAI-wire assistant message (empty for any other message). */
function toolCallIds(m: Obj): string[] {
  if (m['role'] !== 'assistant') return []
  return list(m['tool_calls']).flatMap((c) => {
    const id = record(c)?.['id']
    return typeof id === 'string' ? [id] : []
  })
}

/** The OpenAI / DeepSeek tool-pairing checks (module doc). */
function chatPairing(wire: 'openai' | 'deepseek', messages: readonly JsonValue[]): WireRejectionPlan | null {
  let open: { index: number; ids: string[]; answered: Set<string> } | undefined
  const missing = (at: number): WireRejectionPlan | null => {
    if (open === undefined) return null
    const left = open.ids.filter((id) => !open?.answered.has(id))
    if (left.length === 0) return null
    const prefix = "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'."
    return wire === 'deepseek'
      ? openAiError(`${prefix} (insufficient tool messages following tool_calls message)`, null, 'invalid_request_error')
      : openAiError(
        `${prefix} The following tool_call_ids did not have response messages: ${left.join(', ')}`, `messages.[${at}].role`, null,
      )
  }
  const orphan = (at: number): WireRejectionPlan =>
    wire === 'deepseek'
      ? openAiError("Messages with role 'tool' must be a response to a preceding message with 'tool_calls'", null, 'invalid_request_error')
      : openAiError(
        "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.",
        `messages.[${at}].role`,
        null,
      )
  for (let i = 0; i < messages.length; i++) {
    const m = record(messages[i]) ?? {}
    if (m['role'] === 'tool') {
      const id = String(m['tool_call_id'])
      if (open === undefined) return orphan(i)
      if (!open.ids.includes(id)) {
        if (wire === 'deepseek') return orphan(i)
        return openAiError(
          `Invalid parameter: 'tool_call_id' of '${id}' not found in 'tool_calls' of previous message.`,
          `messages.[${i}].tool_call_id`,
          null,
        )
      }
      open.answered.add(id)
      continue
    }
    const unanswered = missing(i)
    if (unanswered !== null) return unanswered
    const ids = toolCallIds(m)
    open = ids.length === 0 ? undefined : { index: i, ids, answered: new Set() }
  }
  return open === undefined ? null : missing(open.index)
}

/** True when a DeepSeek body asks for thinking mode explicitly (module doc). */
function deepseekThinking(body: Obj): boolean {
  return record(body['thinking'])?.['type'] === 'enabled' || typeof body['reasoning_effort'] === 'string'
}

/** DeepSeek's thinking-mode rule: reasoning must come back in every assistant message of a tool-using turn. */
function deepseekReasoning(messages: readonly JsonValue[]): WireRejectionPlan | null {
  let turn: number[] = []
  let calledTools = false
  const check = (): WireRejectionPlan | null => {
    if (!calledTools) return null
    for (const i of turn) {
      if (typeof record(messages[i])?.['reasoning_content'] !== 'string') {
        return openAiError(
          `Missing \`reasoning_content\` field in the assistant message at message index ${i}. ` +
            'For more information, please refer to https://api-docs.deepseek.com/guides/thinking_mode#tool-calls',
          null,
          'invalid_request_error',
        )
      }
    }
    return null
  }
  for (let i = 0; i < messages.length; i++) {
    const m = record(messages[i]) ?? {}
    if (m['role'] === 'user') {
      const failed = check()
      if (failed !== null) return failed
      turn = []
      calledTools = false
    } else if (m['role'] === 'assistant') {
      turn.push(i)
      if (toolCallIds(m).length > 0) calledTools = true
    }
  }
  return check()
}

/** The content blocks of an Anthropic message (a string content is one text block). */
function blocksOf(m: Obj): Obj[] {
  const content = m['content']
  if (typeof content === 'string') return [{ type: 'text', text: content }]
  return list(content).flatMap((b) => {
    const r = record(b)
    return r === undefined ? [] : [r]
  })
}

function isThinking(b: Obj | undefined): boolean {
  return b?.['type'] === 'thinking' || b?.['type'] === 'redacted_thinking'
}

/** The Anthropic role, thinking and tool-pairing checks (module doc). */
function anthropicPairing(messages: readonly JsonValue[]): WireRejectionPlan | null {
  const roles = messages.map((m) => String(record(m)?.['role']))
  if (roles.length > 0 && roles[0] !== 'user') return anthropicError('messages: first message must use the "user" role')
  for (let i = 1; i < roles.length; i++) {
    if (roles[i] === roles[i - 1]) {
      const role = String(roles[i])
      return anthropicError(`messages: roles must alternate between "user" and "assistant", but found multiple "${role}" roles in a row`)
    }
  }
  let issued: string[] = []
  for (let i = 0; i < messages.length; i++) {
    const blocks = blocksOf(record(messages[i]) ?? {})
    if (roles[i] === 'assistant') {
      const first = blocks[0]
      if (blocks.some(isThinking) && !isThinking(first)) {
        return anthropicError(
          `messages.${i}.content.0: If an assistant message contains any thinking blocks, the first block must be ` +
            `\`thinking\` or \`redacted_thinking\`. Found \`${String(first?.['type'])}\`.`,
        )
      }
      if (blocks.length > 0 && isThinking(blocks.at(-1))) {
        return anthropicError(`messages.${i}: The final block in an assistant message cannot be \`thinking\`.`)
      }
      issued = blocks.flatMap((b) => (b['type'] === 'tool_use' ? [String(b['id'])] : []))
      continue
    }
    const results = blocks.map((b, j) => ({ j, id: b['type'] === 'tool_result' ? String(b['tool_use_id']) : undefined }))
    const answered = new Set(results.flatMap((r) => (r.id === undefined ? [] : [r.id])))
    const left = issued.filter((id) => !answered.has(id))
    if (left.length > 0) return unansweredToolUse(i - 1, left)
    const stray = results.find((r) => r.id !== undefined && !issued.includes(r.id))
    if (stray?.id !== undefined) {
      return anthropicError(
        `messages.${i}.content.${stray.j}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${stray.id}. ` +
          'Each `tool_result` block must have a corresponding `tool_use` block in the previous message.',
      )
    }
    const leadEnd = results.findIndex((r) => r.id === undefined)
    const leading = new Set(results.slice(0, leadEnd === -1 ? results.length : leadEnd).map((r) => r.id))
    const late = issued.filter((id) => !leading.has(id)).length
    if (late > 0) {
      return anthropicError(
        `messages.${i}: Did not find ${late} \`tool_result\` block(s) at the beginning of this message. ` +
          'Messages following `tool_use` blocks must begin with a matching number of `tool_result` blocks.',
      )
    }
    issued = []
  }
  return issued.length > 0 ? unansweredToolUse(messages.length - 1, issued) : null
}

function unansweredToolUse(index: number, ids: readonly string[]): WireRejectionPlan {
  return anthropicError(
    `messages.${index}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${ids.join(', ')}. ` +
      'Each `tool_use` block must have a corresponding `tool_result` block in the next message.',
  )
}

/**
 * The strict-validation rejection `wire` answers `body` with (module doc), or null when the body passes.
 * `body` is the request body as received; a body without a `messages` array passes (the parser refuses it first).
 */
export function strictValidationRejection(wire: MockWire, body: JsonValue): WireRejectionPlan | null {
  const top = record(body) ?? {}
  const messages = list(top['messages'])
  switch (wire) {
    case 'openai':
      return chatPairing(wire, messages)
    case 'deepseek':
      return chatPairing(wire, messages) ?? (deepseekThinking(top) ? deepseekReasoning(messages) : null)
    case 'anthropic':
      return anthropicPairing(messages)
    default:
      return assertNever(wire, 'wire')
  }
}
