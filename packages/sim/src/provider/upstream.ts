/**
 * A real summarizer behind a URL, recorded once and replayed forever (issue #20). A summary route's
 * `summarizer: {upstream: {url, model?, apiKeyEnv?}}` names an OpenAI-compatible chat-completions endpoint
 * (a local Ollama or vLLM, or a cloud API). The mock never lets the subject reach it: the mock's own
 * summary-route handler builds the upstream request from the compaction request it received
 * (`upstreamRequestBody`), and answers from a cassette beside the scenario (`<scenario>.cassette.json`).
 *
 * - Replay (the default): the answer is the cassette entry whose key is the SHA-256 of the canonical JSON
 *   (object keys sorted, no whitespace) of the upstream request body. Its stored response body — the bytes
 *   the upstream sent, a server-sent-event stream or one JSON completion — is parsed into the reply the mock
 *   streams on its own wire. No entry is a `CassetteMissError` naming the request; nothing is ever fetched.
 * - Record (`sim run --record`): before the plan answers a compaction request whose key the cassette lacks,
 *   `recordUpstream` POSTs the body to `<url>/chat/completions` (streaming, as real clients do), with
 *   `Authorization: Bearer $<apiKeyEnv>` when the route names an environment variable, and stores the
 *   response body verbatim. The request then answers from the cassette exactly as a replay would, so a
 *   recorded run and its replays give the same report. Entries already present are reused, never refetched.
 *
 * Why not nock's record/playback ("back") mode: the in-process mount (`mount-intercept.ts`) and nock both
 * patch `node:http` and `fetch`, which must never be combined in one process; and nock back matches a
 * recorded call by method, path and body, while a cassette keyed by a digest of the canonical body is stable
 * across key order, ports and headers (the key never holds the API key: headers are not part of it).
 *
 * The upstream request flattens the region into plain chat messages any OpenAI-compatible server accepts:
 * text blocks stay text, a tool call becomes a `[tool call <name> <arguments>]` line of the assistant's text,
 * a tool result a `[tool result <id>] <text>` line of a user message, an image `[image <media type>]`;
 * reasoning is dropped. `max_tokens`, `temperature` and `stop` are forwarded as the subject sent them.
 */
import { createHash } from 'node:crypto'
import { readFile, rename, writeFile } from 'node:fs/promises'
import type { ContentBlock, JsonValue } from '@compaction-sim/core'
import type { DecodedMessage, ParsedRequest, PlannedFinish, PlannedReply } from './types.ts'

/** A resolved upstream summarizer. */
export interface UpstreamSpec {
  /** OpenAI-compatible base URL, without a trailing slash (e.g. `http://127.0.0.1:11434/v1`). */
  readonly url: string
  /** The model the upstream is asked for; null = the route's own model id. */
  readonly model: string | null
  /** Name of the environment variable holding the API key at record time; null = no `Authorization` header. */
  readonly apiKeyEnv: string | null
}

/** `kind` of a cassette file. */
export const CASSETTE_KIND = 'compaction-sim/cassette'

/** Version of the cassette file format. */
export const CASSETTE_VERSION = 1

/** One recorded upstream exchange. */
export interface CassetteEntry {
  /** The chat-completions URL the request went to (informative: not part of the key). */
  readonly url: string
  /** The upstream request body (the key is the digest of its canonical JSON). */
  readonly request: JsonValue
  /** The upstream response: its status, content type and body text as received. */
  readonly response: { readonly status: number; readonly contentType: string; readonly body: string }
}

/** The cassette file: entries by key, written with sorted keys. */
export interface CassetteFile {
  readonly kind: typeof CASSETTE_KIND
  readonly version: typeof CASSETTE_VERSION
  readonly entries: Readonly<Record<string, CassetteEntry>>
}

/** A cassette file that cannot be read (bad JSON or shape): an input error (exit 2). */
export class CassetteFileError extends Error {
  override readonly name = 'CassetteFileError'
  readonly code = 'CASSETTE_FILE'
}

/** A compaction request of an upstream route the cassette has no entry for, in replay mode: an input error (exit 2). */
export class CassetteMissError extends Error {
  override readonly name = 'CassetteMissError'
  readonly code = 'CASSETTE_MISS'
}

/** The upstream failed while recording (unreachable, a non-2xx status, no API key, an unreadable reply): exit 2. */
export class UpstreamError extends Error {
  override readonly name = 'UpstreamError'
  readonly code = 'UPSTREAM'
}

/** Canonical JSON of `value`: object keys sorted by UTF-16 code units, no whitespace; `undefined` members dropped. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value)
  if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? 'null' : canonicalJson(v))).join(',')}]`
  const obj = value as Record<string, unknown>
  const keys = Object.keys(obj).filter((k) => obj[k] !== undefined).sort()
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(obj[k])}`).join(',')}}`
}

/** The cassette key of an upstream request body: `sha256:` + hex digest of its canonical JSON. */
export function cassetteKey(body: JsonValue): string {
  return `sha256:${createHash('sha256').update(canonicalJson(body)).digest('hex')}`
}

/** The cassette path of a scenario file: its extension replaced by `.cassette.json`. */
export function cassettePathOf(scenarioFile: string): string {
  return `${scenarioFile.replace(/\.(ya?ml|json)$/i, '')}.cassette.json`
}

function flatText(blocks: readonly ContentBlock[]): string[] {
  const lines: string[] = []
  for (const b of blocks) {
    switch (b.type) {
      case 'text':
        lines.push(String(b['text']))
        break
      case 'tool-call':
        lines.push(`[tool call ${String(b['name'])} ${String(b['arguments'])}]`)
        break
      case 'tool-result':
        lines.push(`[tool result ${String(b['toolCallId'])}] ${flatText(b['content'] as ContentBlock[]).join('\n')}`)
        break
      case 'image': {
        const attachment = b['attachment'] as { mediaType?: unknown } | undefined
        lines.push(`[image ${String(attachment?.mediaType ?? 'unknown')}]`)
        break
      }
      default:
        break // reasoning and anything else the summarizer need not read
    }
  }
  return lines
}

/** Plain chat messages of `messages` (module doc); messages with nothing to say are left out. */
export function upstreamMessages(messages: readonly DecodedMessage[]): Array<{ role: string; content: string }> {
  const out: Array<{ role: string; content: string }> = []
  for (const m of messages) {
    const content = flatText(m.content).join('\n')
    if (content !== '') out.push({ role: m.role, content })
  }
  return out
}

/** The upstream request body for compaction request `request` of a route served by `spec` (module doc). */
export function upstreamRequestBody(
  spec: UpstreamSpec, request: Pick<ParsedRequest, 'model' | 'messages' | 'maxTokens' | 'temperature' | 'stop'>,
): JsonValue {
  const body: { [key: string]: JsonValue } = {
    model: spec.model ?? request.model,
    messages: upstreamMessages(request.messages),
    stream: true,
  }
  if (request.maxTokens !== undefined) body['max_tokens'] = request.maxTokens
  if (request.temperature !== undefined) body['temperature'] = request.temperature
  if (request.stop !== undefined) body['stop'] = request.stop
  return body
}

/** The reply an upstream response body gives (an SSE stream of chunks, or one JSON completion). */
export function replyOfUpstream(entry: CassetteEntry, key: string): PlannedReply {
  const { body } = entry.response
  const fail = (why: string): never => {
    throw new UpstreamError(`upstream response of ${key} is unreadable: ${why}`)
  }
  let text = ''
  let finishReason: unknown = null
  const trimmed = body.trimStart()
  if (trimmed.startsWith('{')) {
    let parsed: { choices?: Array<{ message?: { content?: unknown }; finish_reason?: unknown }> }
    try {
      parsed = JSON.parse(trimmed) as typeof parsed
    } catch (err) {
      return fail(`not JSON (${(err as Error).message})`)
    }
    const choice = parsed.choices?.[0]
    if (choice === undefined) return fail('no choices')
    text = typeof choice.message?.content === 'string' ? choice.message.content : ''
    finishReason = choice.finish_reason ?? null
  } else {
    for (const line of body.split(/\r?\n/)) {
      if (!line.startsWith('data:')) continue
      const data = line.slice(5).trim()
      if (data === '' || data === '[DONE]') continue
      let chunk: { choices?: Array<{ delta?: { content?: unknown }; finish_reason?: unknown }>; error?: unknown }
      try {
        chunk = JSON.parse(data) as typeof chunk
      } catch (err) {
        return fail(`an event is not JSON (${(err as Error).message})`)
      }
      if (chunk.error !== undefined) return fail(`in-band error ${JSON.stringify(chunk.error)}`)
      const choice = chunk.choices?.[0]
      if (typeof choice?.delta?.content === 'string') text += choice.delta.content
      if (choice?.finish_reason !== undefined && choice.finish_reason !== null) finishReason = choice.finish_reason
    }
  }
  const finish: PlannedFinish = finishReason === 'length' ? 'max-tokens' : 'stop'
  return { blocks: text === '' ? [] : [{ type: 'text', text }], finish }
}

/** The cassette of one scenario run: read once, added to in record mode, written back with `save`. */
export class Cassette {
  readonly path: string
  readonly record: boolean
  private readonly entries: Map<string, CassetteEntry>
  private added = 0

  private constructor(path: string, record: boolean, entries: Map<string, CassetteEntry>) {
    this.path = path
    this.record = record
    this.entries = entries
  }

  /**
   * The cassette at `path` (absent file = empty). `record` allows `recordUpstream` to add entries.
   * @throws CassetteFileError for a file that is not a cassette.
   */
  static async load(path: string, record: boolean): Promise<Cassette> {
    let text: string
    try {
      text = await readFile(path, 'utf8')
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return new Cassette(path, record, new Map())
      throw new CassetteFileError(`${path}: cannot read the cassette (${(err as Error).message})`)
    }
    let doc: Partial<CassetteFile>
    try {
      doc = JSON.parse(text) as Partial<CassetteFile>
    } catch (err) {
      throw new CassetteFileError(`${path}: the cassette is not JSON (${(err as Error).message})`)
    }
    if (doc.kind !== CASSETTE_KIND || doc.version !== CASSETTE_VERSION || typeof doc.entries !== 'object' || doc.entries === null) {
      throw new CassetteFileError(`${path}: not a cassette (expected kind ${CASSETTE_KIND} version ${CASSETTE_VERSION} with entries)`)
    }
    const entries = new Map<string, CassetteEntry>()
    for (const [key, entry] of Object.entries(doc.entries)) {
      const r = (entry as Partial<CassetteEntry>).response
      if (typeof r?.body !== 'string' || typeof r.status !== 'number') {
        throw new CassetteFileError(`${path}: entries.${key}.response must have a numeric status and a string body`)
      }
      entries.set(key, entry)
    }
    return new Cassette(path, record, entries)
  }

  /** An empty in-memory cassette (tests). */
  static empty(path: string, record: boolean): Cassette {
    return new Cassette(path, record, new Map())
  }

  /** The entry of `key`, if recorded. */
  get(key: string): CassetteEntry | undefined {
    return this.entries.get(key)
  }

  /** Records `entry` under `key`. */
  put(key: string, entry: CassetteEntry): void {
    if (!this.entries.has(key)) this.added++
    this.entries.set(key, entry)
  }

  /** Entries recorded by this run. */
  get addedCount(): number {
    return this.added
  }

  /** Writes the cassette (sorted keys, two-space indent, trailing newline) when this run added entries. */
  async save(): Promise<void> {
    if (this.added === 0) return
    const entries: Record<string, CassetteEntry> = {}
    for (const key of [...this.entries.keys()].sort()) entries[key] = this.entries.get(key) as CassetteEntry
    const doc: CassetteFile = { kind: CASSETTE_KIND, version: CASSETTE_VERSION, entries }
    const tmp = `${this.path}.tmp`
    await writeFile(tmp, `${JSON.stringify(doc, null, 2)}\n`)
    await rename(tmp, this.path)
  }
}

/** Where a request is described in errors: its index, route and key. */
function describe(request: Pick<ParsedRequest, 'index' | 'model'>, key: string): string {
  return `compaction request #${request.index} (route ${request.model}, key ${key})`
}

/** The error of a replayed request the cassette lacks (module doc). */
export function cassetteMiss(cassette: Cassette, request: Pick<ParsedRequest, 'index' | 'model'>, key: string): CassetteMissError {
  return new CassetteMissError(
    `${cassette.path}: no cassette entry for ${describe(request, key)}; `
      + 'run once with `sim run --record` to record it from the upstream (replays never reach the network)',
  )
}

/** Options of `recordUpstream` (tests inject the environment). */
export interface RecordOptions {
  env?: Readonly<Record<string, string | undefined>>
}

/**
 * Record mode: fetches `body` from the upstream of `spec` and stores the response under `key` in `cassette`.
 * @throws UpstreamError when the key variable is unset, the upstream is unreachable, answers non-2xx, or its reply is unreadable.
 */
export async function recordUpstream(
  spec: UpstreamSpec, request: Pick<ParsedRequest, 'index' | 'model'>, body: JsonValue, key: string, cassette: Cassette,
  options: RecordOptions = {},
): Promise<void> {
  const env = options.env ?? process.env
  const headers: Record<string, string> = { 'content-type': 'application/json', 'accept': 'text/event-stream' }
  if (spec.apiKeyEnv !== null) {
    const apiKey = env[spec.apiKeyEnv]
    if (apiKey === undefined || apiKey === '') {
      throw new UpstreamError(`recording ${describe(request, key)}: environment variable ${spec.apiKeyEnv} (apiKeyEnv) is not set`)
    }
    headers['authorization'] = `Bearer ${apiKey}`
  }
  const url = `${spec.url}/chat/completions`
  let response: Response
  let text: string
  try {
    response = await fetch(url, { method: 'POST', headers, body: JSON.stringify(body) })
    text = await response.text()
  } catch (err) {
    const cause = err instanceof Error ? (err.cause instanceof Error ? `${err.message}: ${err.cause.message}` : err.message) : String(err)
    throw new UpstreamError(`recording ${describe(request, key)}: POST ${url} failed (${cause})`)
  }
  if (!response.ok) {
    throw new UpstreamError(`recording ${describe(request, key)}: POST ${url} answered HTTP ${response.status}: ${text.slice(0, 300)}`)
  }
  const entry: CassetteEntry = {
    url, request: body, response: { status: response.status, contentType: response.headers.get('content-type') ?? '', body: text },
  }
  replyOfUpstream(entry, key) // refuse to store what a replay could not read
  cassette.put(key, entry)
}
