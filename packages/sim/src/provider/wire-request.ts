/**
 * The HTTP boundary of the mock provider: validates a chat-completions request body and decodes its
 * messages back into protocol blocks. Decoding inverts the core adapter's documented mapping
 * (`openai-wire.ts` in core): strings and text parts → text blocks, `image_url` parts → image blocks
 * (`attachment://` URLs rebuild the full reference; other URLs get a reference naming the URL, with the byte
 * size of a `data:` URL's payload and 0 bytes for a remote URL),
 * `reasoning_content` → one reasoning block first, `tool_calls` → tool-call blocks last, `role:'tool'` →
 * a user message with one tool-result block. Requests from any OpenAI-compatible client are accepted.
 */
import { CallId, type ContentBlock, type ImageAttachmentRef, type JsonObject, type JsonValue, type ToolSchema } from '@compaction-sim/core'
import type { DecodedMessage, MockWire, ParsedRequest } from './types.ts'
import { dataUrlBytes, obj, optNumber, parseJsonBody, PURPOSE_HEADER, purposeOf, str, WireRequestError } from './wire-json.ts'

export { PURPOSE_HEADER, WireRequestError } from './wire-json.ts'

/** The header that carries the session id. */
export const SESSION_HEADER = 'x-session-id'

/** Header names whose values never reach a capture (design §8). */
export const REDACTED_HEADERS: ReadonlySet<string> = new Set([
  'authorization',
  'api-key',
  'x-api-key',
  'proxy-authorization',
  'openai-api-key',
  'cookie',
])

/** Parses the default `attachment://` URL of the core adapter back into the reference; undefined for other URLs. */
export function parseAttachmentUrl(url: string): ImageAttachmentRef | undefined {
  if (!url.startsWith('attachment://')) return undefined
  const rest = url.slice('attachment://'.length)
  const q = rest.indexOf('?')
  const id = decodeURIComponent(q === -1 ? rest : rest.slice(0, q))
  const query = new URLSearchParams(q === -1 ? '' : rest.slice(q + 1))
  const num = (key: string): number => {
    const n = Number(query.get(key) ?? Number.NaN)
    return Number.isSafeInteger(n) && n >= 0 ? n : 0
  }
  const ref: ImageAttachmentRef = {
    attachmentId: id,
    mediaType: query.get('media_type') ?? 'application/octet-stream',
    bytes: num('bytes'),
    width: num('width'),
    height: num('height'),
  }
  const name = query.get('name')
  if (name !== null) ref.name = name
  return ref
}

function imageRef(url: string): ImageAttachmentRef {
  const parsed = parseAttachmentUrl(url)
  if (parsed !== undefined) return parsed
  const data = /^data:([^;,]+)[;,]/.exec(url)
  return {
    attachmentId: url.length > 200 ? `${url.slice(0, 200)}…` : url,
    mediaType: data?.[1] ?? 'application/octet-stream',
    bytes: dataUrlBytes(url) ?? 0,
    width: 0,
    height: 0,
  }
}

function decodeContent(value: JsonValue | undefined, path: string): ContentBlock[] {
  if (value === undefined || value === null) return []
  if (typeof value === 'string') return [{ type: 'text', text: value }]
  if (!Array.isArray(value)) throw new WireRequestError(path, 'expected a string, an array of parts or null')
  return value.map((raw, i) => {
    const part = obj(raw, `${path}[${i}]`)
    const type = str(part['type'], `${path}[${i}].type`)
    switch (type) {
      case 'text':
        return { type: 'text', text: str(part['text'], `${path}[${i}].text`) }
      case 'image_url': {
        const image = part['image_url']
        const url = typeof image === 'string' ? image : str(obj(image, `${path}[${i}].image_url`)['url'], `${path}[${i}].image_url.url`)
        return { type: 'image', attachment: imageRef(url) }
      }
      default:
        throw new WireRequestError(`${path}[${i}].type`, `unsupported part type "${type}"`)
    }
  })
}

function decodeToolCalls(value: JsonValue | undefined, path: string): ContentBlock[] {
  if (value === undefined || value === null) return []
  if (!Array.isArray(value)) throw new WireRequestError(path, 'expected an array')
  return value.map((raw, i) => {
    const call = obj(raw, `${path}[${i}]`)
    const fn = obj(call['function'], `${path}[${i}].function`)
    return {
      type: 'tool-call',
      id: CallId(str(call['id'], `${path}[${i}].id`)),
      name: str(fn['name'], `${path}[${i}].function.name`),
      arguments: str(fn['arguments'], `${path}[${i}].function.arguments`),
    }
  })
}

/** Decodes wire messages to protocol blocks (module table). Throws `WireRequestError`. */
export function decodeMessages(value: JsonValue | undefined): DecodedMessage[] {
  if (!Array.isArray(value)) throw new WireRequestError('$.messages', 'expected an array')
  return value.map((raw, i): DecodedMessage => {
    const path = `$.messages[${i}]`
    const m = obj(raw, path)
    const role = str(m['role'], `${path}.role`)
    switch (role) {
      case 'system':
      case 'developer':
        return { role: 'system', content: decodeContent(m['content'], `${path}.content`) }
      case 'user':
        return { role: 'user', content: decodeContent(m['content'], `${path}.content`) }
      case 'assistant': {
        const content: ContentBlock[] = []
        if (typeof m['reasoning_content'] === 'string') content.push({ type: 'reasoning', text: m['reasoning_content'] })
        content.push(...decodeContent(m['content'], `${path}.content`), ...decodeToolCalls(m['tool_calls'], `${path}.tool_calls`))
        return { role: 'assistant', content }
      }
      case 'tool': {
        const toolCallId = CallId(str(m['tool_call_id'], `${path}.tool_call_id`))
        return { role: 'user', content: [{ type: 'tool-result', toolCallId, content: decodeContent(m['content'], `${path}.content`) }] }
      }
      default:
        throw new WireRequestError(`${path}.role`, `unsupported role "${role}"`)
    }
  })
}

function decodeTools(value: JsonValue | undefined): ToolSchema[] | undefined {
  if (value === undefined || value === null) return undefined
  if (!Array.isArray(value)) throw new WireRequestError('$.tools', 'expected an array')
  return value.map((raw, i) => {
    const fn = obj(obj(raw, `$.tools[${i}]`)['function'], `$.tools[${i}].function`)
    const parameters: JsonObject = fn['parameters'] === undefined ? {} : obj(fn['parameters'], `$.tools[${i}].function.parameters`)
    return {
      name: str(fn['name'], `$.tools[${i}].function.name`),
      description: typeof fn['description'] === 'string' ? fn['description'] : '',
      parameters,
    }
  })
}


/** Lower-cased, sorted headers with secret values replaced by `[redacted]`. */
export function redactedHeaders(headers: Headers): Record<string, string> {
  const entries: Array<[string, string]> = []
  headers.forEach((value, name) => {
    const key = name.toLowerCase()
    entries.push([key, REDACTED_HEADERS.has(key) ? '[redacted]' : value])
  })
  entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
  return Object.fromEntries(entries)
}

/** A parsed request before the provider numbers it and looks up its model. */
export type ParsedBody = Omit<ParsedRequest, 'index' | 'modelInfo'> & { body: JsonValue }

/** Validates and decodes a chat-completions body (text) with its headers. Throws `WireRequestError`. */
export function parseChatRequest(wire: MockWire, text: string, headers: Headers): ParsedBody {
  const json = parseJsonBody(text)
  const body = obj(json, '$')
  const options = body['stream_options']
  const includeUsage = typeof options === 'object' && options !== null && !Array.isArray(options) && options['include_usage'] === true
  const out: ParsedBody = {
    wire,
    purpose: purposeOf(headers.get(PURPOSE_HEADER)),
    model: str(body['model'], '$.model'),
    messages: decodeMessages(body['messages']),
    stream: body['stream'] === true,
    includeUsage,
    body: json,
  }
  const tools = decodeTools(body['tools'])
  if (tools !== undefined) out.tools = tools
  const completionCap = optNumber(body['max_completion_tokens'], '$.max_completion_tokens')
  const maxTokens = completionCap ?? optNumber(body['max_tokens'], '$.max_tokens')
  if (maxTokens !== undefined) {
    out.maxTokens = maxTokens
    out.maxTokensField = completionCap === undefined ? 'max_tokens' : 'max_completion_tokens'
  }
  const temperature = optNumber(body['temperature'], '$.temperature')
  if (temperature !== undefined) out.temperature = temperature
  const stop = body['stop']
  if (typeof stop === 'string') out.stop = [stop]
  else if (Array.isArray(stop)) out.stop = stop.map((s, i) => str(s, `$.stop[${i}]`))
  if (typeof body['reasoning_effort'] === 'string') out.reasoningEffort = body['reasoning_effort']
  const session = headers.get(SESSION_HEADER)
  if (session !== null) out.sessionId = session
  return out
}
