/**
 * The HTTP boundary of the mock's Anthropic messages wire (`POST …/messages`): validates a request body and
 * decodes it into protocol blocks, so plans, captures and the prompt estimate see the same `ParsedRequest`
 * as for the OpenAI-compatible wires. Mapping: `system` (a string or text blocks) → one system message
 * first; `text` → text, `image` (`source.url` / base64 `source.data`) → image (an `attachment://` URL
 * rebuilds the reference; base64 data gives its decoded byte size, another URL 0 bytes), `thinking` →
 * reasoning, `tool_use` → tool-call (`input` re-serialised as the arguments string), and every `tool_result`
 * → its own user message with one tool-result block (the shape the OpenAI decoding gives `role:'tool'`), in
 * order. `max_tokens` is required, as the real API requires it. Streaming responses carry usage
 * (`message_start` / `message_delta`) unless the route's usage mode says otherwise, so `includeUsage` is true.
 */
import { CallId, type ContentBlock, type ImageAttachmentRef, type JsonObject, type JsonValue, type ToolSchema } from '@compaction-sim/core'
import type { DecodedMessage } from './types.ts'
import { base64Bytes, obj, optNumber, parseJsonBody, PURPOSE_HEADER, purposeOf, str, WireRequestError, type Obj } from './wire-json.ts'
import { parseAttachmentUrl, SESSION_HEADER, type ParsedBody } from './wire-request.ts'




function imageOf(block: Obj, path: string): ImageAttachmentRef {
  const source = obj(block['source'], `${path}.source`)
  const kind = str(source['type'], `${path}.source.type`)
  if (kind === 'url') {
    const url = str(source['url'], `${path}.source.url`)
    const id = url.length > 200 ? `${url.slice(0, 200)}…` : url
    return parseAttachmentUrl(url) ?? { attachmentId: id, mediaType: 'application/octet-stream', bytes: 0, width: 0, height: 0 }
  }
  if (kind === 'base64') {
    const data = str(source['data'], `${path}.source.data`)
    const mediaType = str(source['media_type'], `${path}.source.media_type`)
    return { attachmentId: `base64:${data.slice(0, 32)}`, mediaType, bytes: base64Bytes(data), width: 0, height: 0 }
  }
  throw new WireRequestError(`${path}.source.type`, `unsupported image source "${kind}"`)
}

/** Plain content (text and images) of a string or block list, e.g. a `tool_result`'s `content`. */
function plainContent(value: JsonValue | undefined, path: string): ContentBlock[] {
  if (value === undefined || value === null) return []
  if (typeof value === 'string') return [{ type: 'text', text: value }]
  if (!Array.isArray(value)) throw new WireRequestError(path, 'expected a string or an array of blocks')
  return value.map((raw, i) => {
    const block = obj(raw, `${path}[${i}]`)
    const type = str(block['type'], `${path}[${i}].type`)
    if (type === 'text') return { type: 'text', text: str(block['text'], `${path}[${i}].text`) }
    if (type === 'image') return { type: 'image', attachment: imageOf(block, `${path}[${i}]`) }
    throw new WireRequestError(`${path}[${i}].type`, `unsupported block type "${type}" here`)
  })
}

/** One wire message → one or more decoded messages (each `tool_result` on its own). */
function decodeMessage(raw: JsonValue, i: number): DecodedMessage[] {
  const path = `$.messages[${i}]`
  const m = obj(raw, path)
  const role = str(m['role'], `${path}.role`)
  if (role !== 'user' && role !== 'assistant') throw new WireRequestError(`${path}.role`, `expected "user" or "assistant", got "${role}"`)
  const content = m['content']
  if (typeof content === 'string') return [{ role, content: [{ type: 'text', text: content }] }]
  if (!Array.isArray(content)) throw new WireRequestError(`${path}.content`, 'expected a string or an array of blocks')
  const out: DecodedMessage[] = []
  let current: ContentBlock[] = []
  const flush = (): void => {
    if (current.length > 0) out.push({ role, content: current })
    current = []
  }
  content.forEach((rawBlock, j) => {
    const bpath = `${path}.content[${j}]`
    const block = obj(rawBlock, bpath)
    const type = str(block['type'], `${bpath}.type`)
    switch (type) {
      case 'text':
        current.push({ type: 'text', text: str(block['text'], `${bpath}.text`) })
        break
      case 'image':
        current.push({ type: 'image', attachment: imageOf(block, bpath) })
        break
      case 'thinking':
        current.push({ type: 'reasoning', text: str(block['thinking'], `${bpath}.thinking`) })
        break
      case 'tool_use':
        current.push({
          type: 'tool-call',
          id: CallId(str(block['id'], `${bpath}.id`)),
          name: str(block['name'], `${bpath}.name`),
          arguments: JSON.stringify(obj(block['input'], `${bpath}.input`)),
        })
        break
      case 'tool_result': {
        if (role !== 'user') throw new WireRequestError(`${bpath}.type`, 'a tool_result belongs in a user message')
        flush()
        const result: ContentBlock = {
          type: 'tool-result',
          toolCallId: CallId(str(block['tool_use_id'], `${bpath}.tool_use_id`)),
          content: plainContent(block['content'], `${bpath}.content`),
        }
        if (block['is_error'] === true) result['isError'] = true
        out.push({ role: 'user', content: [result] })
        break
      }
      default:
        throw new WireRequestError(`${bpath}.type`, `unsupported block type "${type}"`)
    }
  })
  flush()
  return out
}

function decodeSystem(value: JsonValue | undefined): DecodedMessage[] {
  if (value === undefined || value === null) return []
  const content = plainContent(value, '$.system')
  return content.length === 0 ? [] : [{ role: 'system', content }]
}

function decodeTools(value: JsonValue | undefined): ToolSchema[] | undefined {
  if (value === undefined || value === null) return undefined
  if (!Array.isArray(value)) throw new WireRequestError('$.tools', 'expected an array')
  return value.map((raw, i) => {
    const tool = obj(raw, `$.tools[${i}]`)
    const parameters: JsonObject = tool['input_schema'] === undefined ? {} : obj(tool['input_schema'], `$.tools[${i}].input_schema`)
    return {
      name: str(tool['name'], `$.tools[${i}].name`),
      description: typeof tool['description'] === 'string' ? tool['description'] : '',
      parameters,
    }
  })
}


/** Validates and decodes an Anthropic messages body (text) with its headers (module doc). Throws `WireRequestError`. */
export function parseAnthropicRequest(text: string, headers: Headers): ParsedBody {
  const json = parseJsonBody(text)
  const body = obj(json, '$')
  if (!Array.isArray(body['messages'])) throw new WireRequestError('$.messages', 'expected an array')
  const maxTokens = optNumber(body['max_tokens'], '$.max_tokens')
  if (maxTokens === undefined) throw new WireRequestError('$.max_tokens', 'required (a positive integer)')
  const out: ParsedBody = {
    wire: 'anthropic',
    purpose: purposeOf(headers.get(PURPOSE_HEADER)),
    model: str(body['model'], '$.model'),
    messages: [...decodeSystem(body['system']), ...body['messages'].flatMap((m, i) => decodeMessage(m, i))],
    stream: body['stream'] === true,
    includeUsage: true,
    maxTokens,
    body: json,
  }
  const tools = decodeTools(body['tools'])
  if (tools !== undefined) out.tools = tools
  const temperature = optNumber(body['temperature'], '$.temperature')
  if (temperature !== undefined) out.temperature = temperature
  const stop = body['stop_sequences']
  if (Array.isArray(stop)) out.stop = stop.map((s, i) => str(s, `$.stop_sequences[${i}]`))
  else if (stop !== undefined && stop !== null) throw new WireRequestError('$.stop_sequences', 'expected an array of strings')
  const session = headers.get(SESSION_HEADER)
  if (session !== null) out.sessionId = session
  return out
}
