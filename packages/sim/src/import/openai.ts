/**
 * OpenAI formats (issue #20): `openai-chat`, Chat Completions message arrays (or a request body `{messages,
 * tools}`), and `openai-responses`, Responses API item lists (an array of input/output items, or a body
 * `{instructions, input, output, tools}`); the Responses item reader also serves Codex rollouts.
 *
 * Chat: `system`/`developer` → system prompt; `user` text and `image_url` parts; `assistant` content,
 * `reasoning_content` (as reasoning), `tool_calls` (and the legacy `function_call`); `tool` (and legacy
 * `function`) results. Responses: `message` items (and bare `{role, content}`), `function_call`,
 * `function_call_output`, `custom_tool_call(_output)`, `local_shell_call`, `reasoning` (readable content or
 * summary). Audio, files, refusals' metadata and hosted-tool items are dropped (reported).
 */
import type { ContentBlock, JsonObject, ToolSchema } from '@compaction-sim/core'
import { imageFromUrl } from './image.ts'
import { Fields, isObj, type Obj } from './input.ts'
import { SessionBuilder, toolCall } from './session.ts'

const CHAT_ROLES = ['system', 'developer', 'user', 'assistant', 'tool', 'function'] as const

/** Reads an `openai-chat` document. */
export function readOpenAiChat(doc: unknown, b: SessionBuilder): void {
  const f = new Fields()
  let messages: unknown[]
  let base = ''
  if (Array.isArray(doc)) {
    messages = doc
  } else {
    const body = f.obj(doc, '', 'an array of Chat Completions messages, or a request body {messages, tools}')
    messages = f.arr(body['messages'], '/messages', 'an array of messages {role, content}')
    base = '/messages'
    b.setTools(openAiTools(f, b, body['tools'], '/tools'))
  }
  let legacy = 0
  let legacyCall: string | null = null
  messages.forEach((raw, i) => {
    const p = `${base}/${i}`
    const where = f.where(p)
    const message = f.obj(raw, p, 'a message object {role, content}')
    const role = f.str(message['role'], `${p}/role`, `one of ${CHAT_ROLES.join(', ')}`)
    switch (role) {
      case 'system':
      case 'developer':
        b.push({ kind: 'system', text: chatText(f, b, message['content'], p), where })
        return
      case 'user':
        b.push({ kind: 'user', blocks: chatParts(f, b, message['content'], p), where })
        return
      case 'assistant': {
        const blocks: ContentBlock[] = []
        const reasoning = f.optStr(message['reasoning_content'], `${p}/reasoning_content`, 'a string')
        if (reasoning !== undefined && reasoning !== '') blocks.push({ type: 'reasoning', text: reasoning })
        if (message['content'] !== undefined && message['content'] !== null) blocks.push(...chatParts(f, b, message['content'], p))
        const refusal = f.optStr(message['refusal'], `${p}/refusal`, 'a string')
        if (refusal !== undefined) blocks.push({ type: 'text', text: refusal })
        if (message['tool_calls'] !== undefined && message['tool_calls'] !== null) {
          f.arr(message['tool_calls'], `${p}/tool_calls`, 'an array of tool calls').forEach((rawCall, c) => {
            const cp = `${p}/tool_calls/${c}`
            const call = f.obj(rawCall, cp, 'a tool call {id, type: function, function: {name, arguments}}')
            const id = f.str(call['id'], `${cp}/id`, 'the tool call id (a string)')
            const fn = f.obj(call['function'], `${cp}/function`, 'an object {name, arguments}')
            const name = f.str(fn['name'], `${cp}/function/name`, 'the function name (a string)')
            blocks.push(toolCall(id, name, f.optStr(fn['arguments'], `${cp}/function/arguments`, 'the arguments as JSON text') ?? '{}'))
          })
        }
        if (isObj(message['function_call'])) {
          const fn = message['function_call']
          legacyCall = `function-call-${++legacy}`
          const name = f.str(fn['name'], `${p}/function_call/name`, 'the function name (a string)')
          blocks.push(toolCall(legacyCall, name, f.optStr(fn['arguments'], `${p}/function_call/arguments`, 'the arguments as JSON text') ?? '{}'))
        }
        if (message['audio'] !== undefined && message['audio'] !== null) b.drop(where, 'audio', 'audio output is not part of the transcript model')
        b.push({ kind: 'assistant', blocks, where })
        return
      }
      case 'tool': {
        const callId = f.str(message['tool_call_id'], `${p}/tool_call_id`, 'the id of the tool call it answers')
        b.push({ kind: 'tool-result', callId, content: chatParts(f, b, message['content'], p), isError: false, where })
        return
      }
      case 'function': {
        if (legacyCall === null) {
          b.drop(where, 'function message', 'no legacy function_call precedes it')
          return
        }
        b.push({ kind: 'tool-result', callId: legacyCall, content: chatParts(f, b, message['content'], p), isError: false, where })
        legacyCall = null
        return
      }
      default:
        f.fail(`${p}/role`, `must be one of ${CHAT_ROLES.join(', ')} (got ${JSON.stringify(role)})`)
    }
  })
}

/** Plain text of a system/developer message (string or text parts). */
function chatText(f: Fields, b: SessionBuilder, content: unknown, p: string): string {
  return chatParts(f, b, content, p).flatMap((block) => (block.type === 'text' ? [String(block['text'])] : [])).join('\n')
}

/** A Chat message's content: a string, or parts (`text`, `image_url`; others dropped). */
function chatParts(f: Fields, b: SessionBuilder, content: unknown, p: string): ContentBlock[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }]
  if (content === null || content === undefined) return []
  const parts = f.arr(content, `${p}/content`, 'a string or an array of content parts')
  const out: ContentBlock[] = []
  parts.forEach((raw, i) => {
    const pp = `${p}/content/${i}`
    const part = f.obj(raw, pp, 'a content part object {type, …}')
    const type = f.str(part['type'], `${pp}/type`, 'the part type (text, image_url, …)')
    switch (type) {
      case 'text':
        out.push({ type: 'text', text: f.str(part['text'], `${pp}/text`, 'the text of a text part') })
        return
      case 'refusal':
        out.push({ type: 'text', text: f.str(part['refusal'], `${pp}/refusal`, 'the refusal text') })
        return
      case 'image_url': {
        const image = f.obj(part['image_url'], `${pp}/image_url`, 'an object {url, detail}')
        const { block, unknownSize } = imageFromUrl(f.str(image['url'], `${pp}/image_url/url`, 'the image URL (https: or data:)'))
        if (unknownSize) b.drop(f.where(pp), 'image bytes', 'the image is a URL: its reference is kept with size 0')
        out.push(block)
        return
      }
      default:
        b.drop(f.where(pp), `${type} part`, 'the transcript model carries text and images only')
    }
  })
  return out
}

/** Function tools of Chat (`{type: function, function: {…}}`) or Responses (`{type: function, name, …}`) bodies. */
export function openAiTools(f: Fields, b: SessionBuilder, tools: unknown, path: string): ToolSchema[] {
  if (tools === undefined || tools === null) return []
  return f.arr(tools, path, 'an array of tool definitions').flatMap((raw, i) => {
    const p = `${path}/${i}`
    const tool = f.obj(raw, p, 'a tool definition')
    const fn = isObj(tool['function']) ? tool['function'] : tool
    const fp = isObj(tool['function']) ? `${p}/function` : p
    if (tool['type'] !== 'function' && tool['type'] !== 'custom') {
      b.drop(f.where(p), `${String(tool['type'])} tool`, 'a hosted tool: not a client tool the transcript can call')
      return []
    }
    const name = f.str(fn['name'], `${fp}/name`, 'the tool name (a string)')
    const parameters = isObj(fn['parameters']) ? fn['parameters'] as JsonObject : { type: 'object' }
    return [{ name, description: typeof fn['description'] === 'string' ? fn['description'] : '', parameters }]
  })
}

/** Reads an `openai-responses` document. */
export function readOpenAiResponses(doc: unknown, b: SessionBuilder): void {
  const f = new Fields()
  if (Array.isArray(doc)) {
    doc.forEach((raw, i) => responsesItem(f, b, raw, `/${i}`))
    return
  }
  const body = f.obj(doc, '', 'an array of Responses API items, or a body {instructions, input, output, tools}')
  const instructions = f.optStr(body['instructions'], '/instructions', 'a string')
  if (instructions !== undefined) b.push({ kind: 'system', text: instructions, where: '/instructions' })
  b.setTools(openAiTools(f, b, body['tools'], '/tools'))
  if (typeof body['input'] === 'string') b.push({ kind: 'user', blocks: [{ type: 'text', text: body['input'] }], where: '/input' })
  else if (body['input'] !== undefined) f.arr(body['input'], '/input', 'a string or an array of items').forEach((raw, i) => responsesItem(f, b, raw, `/input/${i}`))
  if (body['output'] !== undefined) f.arr(body['output'], '/output', 'an array of output items').forEach((raw, i) => responsesItem(f, b, raw, `/output/${i}`))
  if (body['input'] === undefined && body['output'] === undefined) f.fail('/input', 'is missing: give input (and output) items')
}

/** One Responses item at `p` (an array element, or a Codex `response_item` payload). */
export function responsesItem(f: Fields, b: SessionBuilder, raw: unknown, p: string): void {
  const where = f.where(p)
  const item = f.obj(raw, p, 'a Responses item object {type, …}')
  const type = item['type'] === undefined && 'role' in item ? 'message'
    : f.str(item['type'], `${p}/type`, 'the item type (message, function_call, function_call_output, reasoning, …)')
  switch (type) {
    case 'message': {
      const role = f.str(item['role'], `${p}/role`, 'user, assistant, system or developer')
      const blocks = responsesContent(f, b, item['content'], p)
      if (role === 'system' || role === 'developer') {
        b.push({ kind: 'system', text: blocks.flatMap((x) => (x.type === 'text' ? [String(x['text'])] : [])).join('\n'), where })
      } else if (role === 'user') {
        b.push({ kind: 'user', blocks, where })
      } else if (role === 'assistant') {
        b.push({ kind: 'assistant', blocks, where })
      } else {
        f.fail(`${p}/role`, `must be user, assistant, system or developer (got ${JSON.stringify(role)})`)
      }
      return
    }
    case 'function_call':
    case 'custom_tool_call': {
      const callId = f.str(item['call_id'], `${p}/call_id`, 'the call id (a string)')
      const name = f.str(item['name'], `${p}/name`, 'the tool name (a string)')
      const args = type === 'function_call'
        ? f.optStr(item['arguments'], `${p}/arguments`, 'the arguments as JSON text') ?? '{}'
        : JSON.stringify({ input: f.str(item['input'], `${p}/input`, 'the tool input (a string)') })
      b.push({ kind: 'assistant', blocks: [toolCall(callId, name, args)], where })
      return
    }
    case 'local_shell_call': {
      const callId = f.str(item['call_id'], `${p}/call_id`, 'the call id (a string)')
      const action = f.obj(item['action'], `${p}/action`, 'the shell action object')
      b.push({ kind: 'assistant', blocks: [toolCall(callId, 'local_shell', JSON.stringify(action))], where })
      return
    }
    case 'function_call_output':
    case 'custom_tool_call_output':
    case 'local_shell_call_output': {
      const callId = f.str(item['call_id'], `${p}/call_id`, 'the id of the call it answers')
      const output = item['output']
      let content: ContentBlock[]
      if (typeof output === 'string') content = [{ type: 'text', text: output }]
      else if (Array.isArray(output)) content = responsesContent(f, b, output, p, 'output')
      else if (isObj(output) && typeof output['content'] === 'string') content = [{ type: 'text', text: output['content'] }]
      else f.fail(`${p}/output`, `must be the output text or an array of content parts (got ${output === null ? 'null' : typeof output})`)
      const failed = isObj(output) && isObj(output['metadata']) && typeof output['metadata']['exit_code'] === 'number' && output['metadata']['exit_code'] !== 0
      b.push({ kind: 'tool-result', callId, content, isError: failed, where })
      return
    }
    case 'reasoning': {
      const texts: string[] = []
      if (Array.isArray(item['content'])) {
        f.arr(item['content'], `${p}/content`, 'an array').forEach((raw2, i) => {
          const part = f.obj(raw2, `${p}/content/${i}`, 'a reasoning content part {type: reasoning_text, text}')
          texts.push(f.str(part['text'], `${p}/content/${i}/text`, 'the reasoning text'))
        })
      }
      if (texts.length === 0 && item['summary'] !== undefined) {
        f.arr(item['summary'], `${p}/summary`, 'an array of summary parts').forEach((raw2, i) => {
          const part = f.obj(raw2, `${p}/summary/${i}`, 'a summary part {type: summary_text, text}')
          texts.push(f.str(part['text'], `${p}/summary/${i}/text`, 'the summary text'))
        })
      }
      if (typeof item['encrypted_content'] === 'string') b.drop(where, 'encrypted reasoning', 'encrypted_content is opaque; only the readable text is kept')
      if (texts.length > 0) b.push({ kind: 'assistant', blocks: [{ type: 'reasoning', text: texts.join('\n\n') }], where })
      return
    }
    default:
      b.drop(where, `${type} item`, 'a hosted-tool or bookkeeping item: not part of the transcript model')
  }
}

/** Content parts of a Responses message or output: `input_text`/`output_text`/`text`, `input_image`, `refusal`. */
function responsesContent(f: Fields, b: SessionBuilder, content: unknown, p: string, key = 'content'): ContentBlock[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }]
  const parts = f.arr(content, `${p}/${key}`, 'a string or an array of content parts')
  const out: ContentBlock[] = []
  parts.forEach((raw, i) => {
    const pp = `${p}/${key}/${i}`
    const part: Obj = f.obj(raw, pp, 'a content part object {type, …}')
    const type = f.str(part['type'], `${pp}/type`, 'the part type (input_text, output_text, input_image, …)')
    switch (type) {
      case 'input_text':
      case 'output_text':
      case 'text':
        out.push({ type: 'text', text: f.str(part['text'], `${pp}/text`, 'the text of the part') })
        return
      case 'refusal':
        out.push({ type: 'text', text: f.str(part['refusal'], `${pp}/refusal`, 'the refusal text') })
        return
      case 'input_image': {
        if (typeof part['image_url'] !== 'string') {
          b.drop(f.where(pp), 'input_image by file_id', 'the image bytes are not in the session')
          return
        }
        const { block, unknownSize } = imageFromUrl(part['image_url'])
        if (unknownSize) b.drop(f.where(pp), 'image bytes', 'the image is a URL: its reference is kept with size 0')
        out.push(block)
        return
      }
      default:
        b.drop(f.where(pp), `${type} part`, 'the transcript model carries text and images only')
    }
  })
  return out
}
