/**
 * Anthropic Messages content (issue #20): `anthropic-messages` files (a `messages` array, or a request body
 * `{system, messages, tools}`), and the blocks Claude Code session lines carry. User blocks: `text`,
 * `image` (base64 or URL source), `tool_result` (string or text/image blocks, `is_error`); assistant blocks:
 * `text`, `thinking` (as reasoning), `tool_use` (input as JSON arguments). `redacted_thinking`, `document`,
 * server-tool blocks and cache-control markers are dropped (reported).
 */
import type { ContentBlock, ToolSchema, JsonObject } from '@compaction-sim/core'
import { imageFromBase64, imageFromUrl } from './image.ts'
import { Fields, isObj, type Obj } from './input.ts'
import { SessionBuilder, toolCall, type SessionItem } from './session.ts'

/** The items of one Messages-API message at `path` (`role` given by the caller). */
export function anthropicMessageItems(
  f: Fields, b: SessionBuilder, role: 'user' | 'assistant', content: unknown, path: string, messageId?: string,
): SessionItem[] {
  const where = f.where(path)
  if (typeof content === 'string') {
    const blocks: ContentBlock[] = [{ type: 'text', text: content }]
    return [role === 'user' ? { kind: 'user', blocks, where } : assistantItem(blocks, where, messageId)]
  }
  const list = f.arr(content, `${path}/content`, 'a string or an array of content blocks')
  const items: SessionItem[] = []
  const pending: ContentBlock[] = []
  let sawResult = false
  const flushUser = (): void => {
    if (pending.length === 0) return
    items.push({ kind: 'user', blocks: pending.splice(0), where, besideResults: sawResult })
  }
  list.forEach((raw, i) => {
    const p = `${path}/content/${i}`
    const block = f.obj(raw, p, 'a content block object')
    const type = f.str(block['type'], `${p}/type`, 'the block type (text, image, tool_use, tool_result, thinking)')
    if (role === 'user') {
      if (type === 'tool_result') {
        flushUser()
        sawResult = true
        const callId = f.str(block['tool_use_id'], `${p}/tool_use_id`, 'the id of the tool_use block it answers')
        items.push({
          kind: 'tool-result', callId, content: resultContent(f, b, block['content'], `${p}/content`),
          isError: block['is_error'] === true, where: f.where(p),
        })
        return
      }
      const converted = userBlock(f, b, block, type, p)
      if (converted !== null) pending.push(converted)
      return
    }
    const converted = assistantBlock(f, b, block, type, p)
    if (converted !== null) pending.push(converted)
  })
  if (role === 'user') flushUser()
  else if (pending.length > 0) items.push(assistantItem(pending.splice(0), where, messageId))
  return items
}

function assistantItem(blocks: ContentBlock[], where: string, messageId: string | undefined): SessionItem {
  return messageId === undefined ? { kind: 'assistant', blocks, where } : { kind: 'assistant', blocks, where, messageId }
}

function userBlock(f: Fields, b: SessionBuilder, block: Obj, type: string, p: string): ContentBlock | null {
  switch (type) {
    case 'text': return { type: 'text', text: f.str(block['text'], `${p}/text`, 'the text of a text block') }
    case 'image': return imageBlock(f, b, block, p)
    default:
      b.drop(f.where(p), `${type} block`, 'the transcript model carries text, images, tool calls, tool results and reasoning only')
      return null
  }
}

function assistantBlock(f: Fields, b: SessionBuilder, block: Obj, type: string, p: string): ContentBlock | null {
  switch (type) {
    case 'text': return { type: 'text', text: f.str(block['text'], `${p}/text`, 'the text of a text block') }
    case 'thinking': return { type: 'reasoning', text: f.str(block['thinking'], `${p}/thinking`, 'the thinking text') }
    case 'tool_use': {
      const id = f.str(block['id'], `${p}/id`, 'the tool_use id (a string)')
      const name = f.str(block['name'], `${p}/name`, 'the tool name (a string)')
      const input = block['input'] === undefined ? {} : f.obj(block['input'], `${p}/input`, 'the tool input object')
      return toolCall(id, name, JSON.stringify(input))
    }
    case 'image': return imageBlock(f, b, block, p)
    case 'redacted_thinking':
      b.drop(f.where(p), 'redacted_thinking block', 'its content is encrypted; nothing readable to replay')
      return null
    default:
      b.drop(f.where(p), `${type} block`, 'the transcript model carries text, images, tool calls, tool results and reasoning only')
      return null
  }
}

function imageBlock(f: Fields, b: SessionBuilder, block: Obj, p: string): ContentBlock | null {
  const source = f.obj(block['source'], `${p}/source`, 'an image source object {type: base64, media_type, data} or {type: url, url}')
  const type = f.str(source['type'], `${p}/source/type`, 'base64 or url')
  if (type === 'base64') {
    const mediaType = f.str(source['media_type'], `${p}/source/media_type`, 'the image media type, e.g. image/png')
    return imageFromBase64(f.str(source['data'], `${p}/source/data`, 'the base64 image data'), mediaType)
  }
  if (type === 'url') {
    const { block: image, unknownSize } = imageFromUrl(f.str(source['url'], `${p}/source/url`, 'the image URL'))
    if (unknownSize) b.drop(f.where(p), 'image bytes', 'the image is a URL: its reference is kept with size 0')
    return image
  }
  b.drop(f.where(p), `image source ${type}`, 'only base64 and url image sources are read')
  return null
}

/** A tool_result's content: a string, or text/image blocks. */
export function resultContent(f: Fields, b: SessionBuilder, content: unknown, path: string): ContentBlock[] {
  if (content === undefined || content === null) return []
  if (typeof content === 'string') return [{ type: 'text', text: content }]
  const list = f.arr(content, path, 'a string or an array of text/image blocks')
  const out: ContentBlock[] = []
  list.forEach((raw, i) => {
    const p = `${path}/${i}`
    const block = f.obj(raw, p, 'a content block object')
    const converted = userBlock(f, b, block, f.str(block['type'], `${p}/type`, 'the block type (text or image)'), p)
    if (converted !== null) out.push(converted)
  })
  return out
}

/** Anthropic tool definitions `{name, description, input_schema}`; server tools without a schema are dropped. */
export function anthropicTools(f: Fields, b: SessionBuilder, tools: unknown, path: string): ToolSchema[] {
  if (tools === undefined) return []
  return f.arr(tools, path, 'an array of tool definitions').flatMap((raw, i) => {
    const p = `${path}/${i}`
    const tool = f.obj(raw, p, 'a tool definition {name, description, input_schema}')
    const name = f.str(tool['name'], `${p}/name`, 'the tool name (a string)')
    if (!isObj(tool['input_schema'])) {
      b.drop(f.where(p), `tool ${name}`, 'has no input_schema (a server tool): not a client tool the transcript can call')
      return []
    }
    return [{ name, description: typeof tool['description'] === 'string' ? tool['description'] : '', parameters: tool['input_schema'] as JsonObject }]
  })
}

/** The system prompt of a request body: a string or text blocks. */
export function anthropicSystem(f: Fields, system: unknown, path: string): string | undefined {
  if (system === undefined || system === null) return undefined
  if (typeof system === 'string') return system
  return f.arr(system, path, 'a string or an array of text blocks').map((raw, i) => {
    const block = f.obj(raw, `${path}/${i}`, 'a text block {type: text, text}')
    return f.str(block['text'], `${path}/${i}/text`, 'the text of a system block')
  }).join('\n\n')
}

/** Reads an `anthropic-messages` document. */
export function readAnthropicMessages(doc: unknown, b: SessionBuilder): void {
  const f = new Fields()
  let messages: unknown[]
  let base = ''
  if (Array.isArray(doc)) {
    messages = doc
  } else {
    const body = f.obj(doc, '', 'an array of Messages API messages, or a request body {system, messages, tools}')
    messages = f.arr(body['messages'], '/messages', 'an array of messages {role, content}')
    base = '/messages'
    const system = anthropicSystem(f, body['system'], '/system')
    if (system !== undefined) b.push({ kind: 'system', text: system, where: '/system' })
    b.setTools(anthropicTools(f, b, body['tools'], '/tools'))
  }
  messages.forEach((raw, i) => {
    const p = `${base}/${i}`
    const message = f.obj(raw, p, 'a message object {role, content}')
    const role = f.str(message['role'], `${p}/role`, 'user or assistant')
    if (role !== 'user' && role !== 'assistant') f.fail(`${p}/role`, `must be user or assistant (got ${JSON.stringify(role)})`)
    for (const item of anthropicMessageItems(f, b, role as 'user' | 'assistant', message['content'], p)) b.push(item)
  })
}
