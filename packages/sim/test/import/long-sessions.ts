/**
 * Generated long sessions for the importer tests (issue #20): one seeded conversation of `turns` turns
 * (user text, sometimes a PNG image, 0–3 tool steps of 1–3 parallel calls with results of 40–6000
 * characters, sometimes failed, reasoning, a final reply), written in each import format. Deterministic from
 * the seed; nothing is checked in. `expected` is what an import must keep: turns, calls, the characters of
 * every text and the bytes of every image.
 */
import { deflateSync } from 'node:zlib'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { ImportFormat } from '../../src/import/index.ts'

/** What a lossless import of the generated session keeps. */
export interface LongSessionFacts {
  turns: number
  toolCalls: number
  /** Characters of user, reply, reasoning and tool-result text (system prompt excluded). */
  textChars: number
  /** Characters of all tool-call argument texts. */
  argumentChars: number
  imageBytes: number
  images: number
}

/** One tool call of a generated session and its result. */
export interface Call { id: string; name: string; input: Record<string, unknown>; output: string; failed: boolean }
/** One tool step: reasoning and text ('' = none) and its parallel calls. */
export interface Step { reasoning: string; text: string; calls: Call[] }
/** One turn: user text, an optional PNG, tool steps, the final reply. */
export interface Turn { user: string; image: Buffer | null; steps: Step[]; final: string }

/** A small seeded PRNG (mulberry32). */
function prng(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const WORDS = ['cache', 'render', 'queue', 'parser', 'index', 'retry', 'buffer', 'schema', 'worker', 'shard', 'token',
  'branch', 'commit', 'layout', 'metric', 'socket', 'thread', 'module', 'config', 'bundle', 'router', 'handler', 'timer']

function crc32(bytes: Buffer): number {
  let c = ~0
  for (const byte of bytes) {
    c ^= byte
    for (let k = 0; k < 8; k++) c = (c >>> 1) ^ (0xedb88320 & -(c & 1))
  }
  return ~c >>> 0
}

/** A solid-colour RGB PNG of `width` × `height`. */
export function png(width: number, height: number, rgb: readonly [number, number, number]): Buffer {
  const row = Buffer.concat([Buffer.from([0]), Buffer.from(Array.from({ length: width }, () => rgb).flat())])
  const raw = Buffer.concat(Array.from({ length: height }, () => row))
  const chunk = (type: string, data: Buffer): Buffer => {
    const head = Buffer.alloc(4)
    head.writeUInt32BE(data.length)
    const body = Buffer.concat([Buffer.from(type, 'latin1'), data])
    const crc = Buffer.alloc(4)
    crc.writeUInt32BE(crc32(body))
    return Buffer.concat([head, body, crc])
  }
  const ihdr = Buffer.alloc(13)
  ihdr.writeUInt32BE(width, 0)
  ihdr.writeUInt32BE(height, 4)
  ihdr.set([8, 2, 0, 0, 0], 8)
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk('IHDR', ihdr), chunk('IDAT', deflateSync(raw)), chunk('IEND', Buffer.alloc(0))])
}

function session(seed: number, turns: number): Turn[] {
  const rand = prng(seed)
  const int = (lo: number, hi: number): number => lo + Math.floor(rand() * (hi - lo + 1))
  const words = (chars: number): string => {
    const out: string[] = []
    let n = 0
    while (n < chars) {
      const w = WORDS[int(0, WORDS.length - 1)] as string
      out.push(w)
      n += w.length + 1
    }
    return out.join(' ')
  }
  let calls = 0
  return Array.from({ length: turns }, (_, t): Turn => {
    const steps = Array.from({ length: int(0, 3) }, (): Step => ({
      reasoning: rand() < 0.5 ? words(int(20, 200)) : '',
      text: rand() < 0.6 ? words(int(10, 120)) : '',
      calls: Array.from({ length: int(1, 3) }, (): Call => {
        calls++
        const name = ['read_file', 'grep', 'run_tests'][int(0, 2)] as string
        return {
          id: `call_${seed}_${calls}`, name, input: { path: `src/${words(8).replace(/ /g, '_')}.ts`, line: int(1, 900) },
          output: `${words(int(40, rand() < 0.1 ? 6000 : 900))}\n`, failed: rand() < 0.08,
        }
      }),
    }))
    const image = t % 25 === 3 ? png(int(2, 40), int(2, 30), [int(0, 255), int(0, 255), int(0, 255)]) : null
    return { user: `Turn ${t + 1}: ${words(int(30, 400))}`, image, steps, final: `Done with turn ${t + 1}: ${words(int(20, 300))}` }
  })
}

/** What the generated session holds (the facts a lossless import keeps). */
function facts(turns: readonly Turn[]): LongSessionFacts {
  const out: LongSessionFacts = { turns: turns.length, toolCalls: 0, textChars: 0, argumentChars: 0, imageBytes: 0, images: 0 }
  for (const turn of turns) {
    out.textChars += turn.user.length + turn.final.length
    if (turn.image !== null) {
      out.images++
      out.imageBytes += turn.image.length
    }
    for (const step of turn.steps) {
      out.textChars += step.reasoning.length + step.text.length
      for (const call of step.calls) {
        out.toolCalls++
        out.textChars += call.output.length
        out.argumentChars += JSON.stringify(call.input).length
      }
    }
  }
  return out
}

let SYSTEM = 'You are a coding agent in a generated long session.'
const dataUrl = (image: Buffer): string => `data:image/png;base64,${image.toString('base64')}`
const jsonl = (lines: readonly unknown[]): string => lines.map((l) => JSON.stringify(l)).join('\n') + '\n'

function openAiChat(turns: readonly Turn[]): string {
  const messages: unknown[] = [{ role: 'system', content: SYSTEM }]
  for (const turn of turns) {
    messages.push(turn.image === null ? { role: 'user', content: turn.user }
      : { role: 'user', content: [{ type: 'text', text: turn.user }, { type: 'image_url', image_url: { url: dataUrl(turn.image) } }] })
    for (const step of turn.steps) {
      messages.push({
        role: 'assistant', content: step.text === '' ? null : step.text,
        ...(step.reasoning === '' ? {} : { reasoning_content: step.reasoning }),
        tool_calls: step.calls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: JSON.stringify(c.input) } })),
      })
      for (const c of [...step.calls].reverse()) messages.push({ role: 'tool', tool_call_id: c.id, content: c.output })
    }
    messages.push({ role: 'assistant', content: turn.final })
  }
  return JSON.stringify({ model: 'gpt-4.1', messages })
}

function responsesItems(turns: readonly Turn[]): unknown[] {
  const items: unknown[] = []
  for (const turn of turns) {
    const content: unknown[] = [{ type: 'input_text', text: turn.user }]
    if (turn.image !== null) content.push({ type: 'input_image', image_url: dataUrl(turn.image) })
    items.push({ type: 'message', role: 'user', content })
    for (const step of turn.steps) {
      if (step.reasoning !== '') items.push({ type: 'reasoning', summary: [{ type: 'summary_text', text: step.reasoning }] })
      if (step.text !== '') items.push({ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: step.text }] })
      for (const c of step.calls) items.push({ type: 'function_call', call_id: c.id, name: c.name, arguments: JSON.stringify(c.input) })
      for (const c of step.calls) items.push({ type: 'function_call_output', call_id: c.id, output: c.output })
    }
    items.push({ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: turn.final }] })
  }
  return items
}

interface AnthropicMessage { role: 'user' | 'assistant'; content: unknown[] }

function anthropicMessages(turns: readonly Turn[]): AnthropicMessage[] {
  const messages: AnthropicMessage[] = []
  for (const turn of turns) {
    const user: unknown[] = [{ type: 'text', text: turn.user }]
    if (turn.image !== null) user.push({ type: 'image', source: { type: 'base64', media_type: 'image/png', data: turn.image.toString('base64') } })
    messages.push({ role: 'user', content: user })
    for (const step of turn.steps) {
      const blocks: unknown[] = []
      if (step.reasoning !== '') blocks.push({ type: 'thinking', thinking: step.reasoning, signature: 'c2ln' })
      if (step.text !== '') blocks.push({ type: 'text', text: step.text })
      for (const c of step.calls) blocks.push({ type: 'tool_use', id: c.id, name: c.name, input: c.input })
      messages.push({ role: 'assistant', content: blocks })
      messages.push({
        role: 'user',
        content: step.calls.map((c) => (c.failed ? { type: 'tool_result', tool_use_id: c.id, content: c.output, is_error: true }
          : { type: 'tool_result', tool_use_id: c.id, content: c.output })),
      })
    }
    messages.push({ role: 'assistant', content: [{ type: 'text', text: turn.final }] })
  }
  return messages
}

function claudeCode(turns: readonly Turn[]): string {
  const lines: unknown[] = [{ type: 'summary', summary: 'Generated long session', leafUuid: 'none' }]
  let n = 0
  let parent: string | null = null
  const record = (type: 'user' | 'assistant', message: unknown, extra: Record<string, unknown> = {}): void => {
    const uuid = `00000000-0000-4000-8000-${String(++n).padStart(12, '0')}`
    lines.push({ parentUuid: parent, isSidechain: false, type, message, uuid, sessionId: 'generated', ...extra })
    parent = uuid
  }
  let messageNo = 0
  for (const message of anthropicMessages(turns)) {
    if (message.role === 'user') {
      const results = message.content.every((b) => (b as { type: string }).type === 'tool_result')
      if (!results) record('user', { role: 'user', content: message.content })
      else for (const block of message.content) record('user', { role: 'user', content: [block] }, { toolUseResult: { stdout: 'copy' } })
      continue
    }
    // Claude Code writes one line per content block, all with the message's id.
    const id = `msg_${++messageNo}`
    for (const block of message.content) record('assistant', { id, role: 'assistant', content: [block], usage: { input_tokens: 1, output_tokens: 1 } })
  }
  return jsonl(lines)
}

function codex(turns: readonly Turn[]): string {
  const lines: unknown[] = [{ timestamp: '2026-03-10T10:00:00.000Z', type: 'session_meta', payload: { id: 'generated', cwd: '/w', instructions: SYSTEM } }]
  for (const item of responsesItems(turns)) {
    lines.push({ timestamp: '2026-03-10T10:00:00.000Z', type: 'response_item', payload: item })
    if ((item as { type: string }).type === 'function_call_output') {
      lines.push({ timestamp: '2026-03-10T10:00:00.000Z', type: 'event_msg', payload: { type: 'token_count', info: null } })
    }
  }
  return jsonl(lines)
}

/** A DSH 0.1.0-rc.8 session log of the session: the events the recorded-log replay reads. */
function dsh(turns: readonly Turn[]): string {
  const events: unknown[] = []
  const time = 1_767_225_601_000
  let seq = 0
  let message = 0
  const push = (type: string, data: unknown, extra: Record<string, unknown> = {}): void => {
    events.push({ type, seq: seq++, time, data, ...extra })
  }
  const id = (): string => `00000000-0000-4000-9000-${String(++message).padStart(12, '0')}`
  turns.forEach((turn, t) => {
    push('turn/start', { turn: t + 1 })
    const steps = [...turn.steps.map((s) => ({ ...s, last: false })), { reasoning: '', text: turn.final, calls: [] as Call[], last: true }]
    steps.forEach((step, s) => {
      push('step/start', { turn: t + 1, step: s + 1 })
      if (s === 0) {
        const content: unknown[] = [{ type: 'text', text: turn.user }]
        if (turn.image !== null) {
          content.push({ type: 'image', attachment: { attachmentId: `img-${t}`, mediaType: 'image/png', bytes: turn.image.length, width: turn.image.readUInt32BE(16), height: turn.image.readUInt32BE(20) } })
        }
        push('user/message', { content, source: { kind: 'user' }, role: 'user', id: id() }, { surfaceOp: 'append' })
      }
      if (t === 0 && s === 0) push('request/header', { header: { config: { provider: 'openai', model: 'mock' }, system: SYSTEM, tools: [] }, reason: 'initial' })
      const blocks: unknown[] = []
      if (step.reasoning !== '') blocks.push({ type: 'reasoning', text: step.reasoning })
      if (step.text !== '') blocks.push({ type: 'text', text: step.text })
      for (const c of step.calls) blocks.push({ type: 'tool-call', id: c.id, name: c.name, arguments: JSON.stringify(c.input) })
      push('assistant/message', {
        turn: t + 1, step: s + 1, message: { role: 'assistant', content: blocks, source: { kind: 'model', provider: 'openai', model: 'mock' }, id: id() },
      }, { surfaceOp: 'append' })
      for (const c of step.calls) push('tool/call', { turn: t + 1, step: s + 1, callId: c.id, name: c.name, arguments: JSON.stringify(c.input) })
      for (const c of step.calls) {
        const result = c.failed ? { type: 'tool-result', toolCallId: c.id, content: [{ type: 'text', text: c.output }], isError: true }
          : { type: 'tool-result', toolCallId: c.id, content: [{ type: 'text', text: c.output }] }
        push('tool/result', { turn: t + 1, step: s + 1, message: { source: { kind: 'tool', callId: c.id }, content: [result], role: 'user', id: id() } }, { surfaceOp: 'append' })
      }
      push('step/end', { turn: t + 1, step: s + 1 })
    })
    push('turn/end', { turn: t + 1, reason: { kind: 'completed' } })
  })
  return jsonl(events)
}

const EXTENSIONS: Record<ImportFormat, string> = {
  'openai-chat': 'json', 'openai-responses': 'json', 'anthropic-messages': 'json', 'claude-code': 'jsonl', 'codex': 'jsonl', 'dsh': 'jsonl',
}

/** `turns` written in `format` (with `system` as its system prompt), as file text. */
export function formatSession(format: ImportFormat, s: readonly Turn[], system = 'You are a coding agent in a generated long session.'): string {
  SYSTEM = system
  switch (format) {
    case 'openai-chat': return openAiChat(s)
    case 'openai-responses': return JSON.stringify({ instructions: SYSTEM, input: responsesItems(s) })
    case 'anthropic-messages': return JSON.stringify({ system: SYSTEM, messages: anthropicMessages(s) })
    case 'claude-code': return claudeCode(s)
    case 'codex': return codex(s)
    case 'dsh': return dsh(s)
    default: {
      const never: never = format
      throw new Error(`unknown format ${String(never)}`)
    }
  }
}

/** Writes the long session of `seed` in `format` under `dir`; returns its path and the facts an import keeps. */
export async function writeLongSession(format: ImportFormat, dir: string, seed: number, turns = 500): Promise<{ path: string; expected: LongSessionFacts }> {
  const path = join(dir, `long-${format}.${EXTENSIONS[format]}`)
  await writeFile(path, formatSession(format, session(seed, turns)))
  return { path, expected: facts(session(seed, turns)) }
}
