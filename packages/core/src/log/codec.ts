/**
 * The JSONL line codec (§1.1): deterministic encoding of events and the session header record, and
 * decoding of one line into an event, the header record, or a DSH packed chunk row (read side only).
 */
import { CallId, Seq } from '../brand.ts'
import { assertNever, LogError, type LogErrorLocation } from '../errors.ts'
import type { LogEvent, SessionEvent, SessionHeaderRecord, SurfaceOp } from './events.ts'
import type { StreamChunk } from './llm.ts'
import { checkLossless, describeValue, isPlainObject, validateParsedEvent, type ValidateOptions } from './validate.ts'

/** A packed row of `text-delta` / `reasoning-delta` chunks of one block (§1.1, read side only). */
export interface PackedTextChunkRow {
  type: 'text-chunks' | 'reasoning-chunks'
  seq0: Seq
  time0: number
  data: { turn: number; step: number; index: number; dt: number[]; texts: string[] }
}

/** A packed row of `tool-call-delta` chunks of one block (§1.1, read side only). */
export interface PackedToolCallChunkRow {
  type: 'tool-call-chunks'
  seq0: Seq
  time0: number
  data: { turn: number; step: number; index: number; id: string; name?: string; dt: number[]; args: string[] }
}

/** A DSH storage row standing for n consecutive `assistant/chunk` events (§1.1); never an event itself. */
export type PackedChunkRow = PackedTextChunkRow | PackedToolCallChunkRow

/** The three packed row types (a type without a slash). */
export const PACKED_ROW_TYPES: ReadonlySet<string> = new Set(['text-chunks', 'reasoning-chunks', 'tool-call-chunks'])

/** True when a decoded line is a packed chunk row. */
export function isPackedChunkRow(value: LogEvent | SessionHeaderRecord | PackedChunkRow): value is PackedChunkRow {
  return PACKED_ROW_TYPES.has(value.type) && !Object.hasOwn(value, 'seq')
}

/** True when a decoded line is the session header record (only ever returned for the first line). */
export function isHeaderRecord(value: LogEvent | SessionHeaderRecord | PackedChunkRow): value is SessionHeaderRecord {
  return value.type === 'session' && !Object.hasOwn(value, 'seq')
}

// ---------------------------------------------------------------------------------------------
// Encoding

function encodeSurfaceOp(op: SurfaceOp): string {
  return op === 'append' ? '"append"' : `{"op":"replace","start":${JSON.stringify(op.start)},"end":${JSON.stringify(op.end)}}`
}

/**
 * One JSONL line (no trailing newline) for `event`, keys in the fixed order seq, time, type, data,
 * surfaceOp, sourceEventSeqs, ignorable; absent (or undefined) ones are omitted; `data` keeps its key
 * insertion order. Deterministic. Does not validate: callers append only validated events.
 */
export function encodeEvent(event: LogEvent): string {
  let line = `{"seq":${JSON.stringify(event.seq)},"time":${JSON.stringify(event.time)},"type":${JSON.stringify(event.type)},"data":${JSON.stringify(event.data)}`
  if ('surfaceOp' in event && event.surfaceOp !== undefined) line += `,"surfaceOp":${encodeSurfaceOp(event.surfaceOp)}`
  if ('sourceEventSeqs' in event && event.sourceEventSeqs !== undefined) line += `,"sourceEventSeqs":${JSON.stringify(event.sourceEventSeqs)}`
  if (event.ignorable === true) line += ',"ignorable":true'
  return `${line}}`
}

/** One JSONL line for the session header record: type, version, id, createdAt first, then other keys in insertion order. */
export function encodeHeaderRecord(h: SessionHeaderRecord): string {
  let line = `{"type":"session","version":${JSON.stringify(h.version)},"id":${JSON.stringify(h.id)},"createdAt":${JSON.stringify(h.createdAt)}`
  for (const [key, value] of Object.entries(h)) {
    if (key === 'type' || key === 'version' || key === 'id' || key === 'createdAt' || value === undefined) continue
    line += `,${JSON.stringify(key)}:${JSON.stringify(value)}`
  }
  return `${line}}`
}

// ---------------------------------------------------------------------------------------------
// Decoding

function locate(opts: ValidateOptions, field?: string): LogErrorLocation {
  const where: LogErrorLocation = {}
  if (opts.file !== undefined) where.file = opts.file
  if (opts.line !== undefined) where.line = opts.line
  if (field !== undefined) where.field = field
  return where
}

function validateHeaderRecord(raw: Record<string, unknown>, opts: ValidateOptions): SessionHeaderRecord {
  const fail = (field: string, reason: string): never => {
    throw new LogError('HEADER', `${reason} (session header record, §1.1)`, locate(opts, field))
  }
  for (const [key, value] of Object.entries(raw)) {
    const loss = checkLossless(value, key)
    if (loss !== undefined) fail(key, loss)
  }
  if (!Number.isSafeInteger(raw['version']) || (raw['version'] as number) < 0) fail('version', `expected a non-negative integer version, got ${describeValue(raw['version'])}`)
  if (typeof raw['id'] !== 'string') fail('id', `expected a string id, got ${describeValue(raw['id'])}`)
  if (typeof raw['createdAt'] !== 'number') fail('createdAt', `expected a number createdAt, got ${describeValue(raw['createdAt'])}`)
  return raw as SessionHeaderRecord
}

const TEXT_ROW_KEYS: ReadonlySet<string> = new Set(['turn', 'step', 'index', 'dt', 'texts'])
const TOOL_ROW_KEYS: ReadonlySet<string> = new Set(['turn', 'step', 'index', 'id', 'name', 'dt', 'args'])

function validatePackedRow(raw: Record<string, unknown>, opts: ValidateOptions): PackedChunkRow {
  const fail = (field: string, reason: string): never => {
    throw new LogError('PACKED_ROW', `${reason} (packed chunk row, §1.1)`, locate(opts, field))
  }
  const expect = (ok: boolean, field: string, what: string, got: unknown): void => {
    if (!ok) fail(field, `expected ${what}, got ${describeValue(got)}`)
  }
  for (const key of Object.keys(raw)) {
    if (key !== 'type' && key !== 'seq0' && key !== 'time0' && key !== 'data') fail(key, `unexpected key ${JSON.stringify(key)}; a row has exactly type, seq0, time0, data`)
  }
  for (const [key, value] of Object.entries(raw)) {
    const loss = checkLossless(value, key)
    if (loss !== undefined) fail(key, loss)
  }
  const seq0 = raw['seq0']
  expect(Number.isSafeInteger(seq0) && (seq0 as number) >= 0, 'seq0', 'a non-negative integer', seq0)
  const time0 = raw['time0']
  expect(typeof time0 === 'number', 'time0', 'a number', time0)
  const data = raw['data']
  if (!isPlainObject(data)) return fail('data', `expected an object, got ${describeValue(data)}`)
  const tool = raw['type'] === 'tool-call-chunks'
  const allowed = tool ? TOOL_ROW_KEYS : TEXT_ROW_KEYS
  for (const key of Object.keys(data)) {
    if (!allowed.has(key)) fail(`data.${key}`, `unexpected key ${JSON.stringify(key)} in a ${String(raw['type'])} row`)
  }
  expect(Number.isSafeInteger(data['turn']) && (data['turn'] as number) >= 1, 'data.turn', 'a positive integer', data['turn'])
  expect(Number.isSafeInteger(data['step']) && (data['step'] as number) >= 1, 'data.step', 'a positive integer', data['step'])
  expect(Number.isSafeInteger(data['index']) && (data['index'] as number) >= 0, 'data.index', 'a non-negative integer', data['index'])
  if (tool) {
    expect(typeof data['id'] === 'string', 'data.id', 'a string', data['id'])
    if (Object.hasOwn(data, 'name')) expect(typeof data['name'] === 'string', 'data.name', 'a string', data['name'])
  }
  const membersKey = tool ? 'args' : 'texts'
  const members = data[membersKey]
  if (!Array.isArray(members) || members.length === 0) return fail(`data.${membersKey}`, `expected a non-empty array of strings, got ${describeValue(members)}`)
  for (let k = 0; k < members.length; k++) expect(typeof members[k] === 'string', `data.${membersKey}[${k}]`, 'a string', members[k])
  const dt = data['dt']
  if (!Array.isArray(dt)) return fail('data.dt', `expected an array of ${members.length - 1} integer gaps, got ${describeValue(dt)}`)
  if (dt.length !== members.length - 1) fail('data.dt', `expected ${members.length - 1} gaps for ${members.length} members, got ${dt.length}`)
  let time = time0 as number
  for (let k = 0; k < dt.length; k++) {
    expect(Number.isSafeInteger(dt[k]), `data.dt[${k}]`, 'an integer gap in milliseconds', dt[k])
    time += dt[k] as number
    if (!Number.isFinite(time)) fail(`data.dt[${k}]`, 'the expanded time is not a finite number')
  }
  expect(Number.isSafeInteger((seq0 as number) + members.length - 1), 'seq0', 'seqs that stay safe integers after expansion', seq0)
  return raw as unknown as PackedChunkRow
}

/**
 * Decodes one JSONL line: JSON.parse (INVALID_JSON naming the line), then — on the first line — a
 * `type: 'session'` object is the header record (HEADER); a slash-less `text-chunks` /
 * `reasoning-chunks` / `tool-call-chunks` type is a packed row (PACKED_ROW); anything else goes through
 * `validateEvent` (via its parsed-text fast path). Does not check seq contiguity (the reader does, INV-01).
 */
export function decodeLine(text: string, opts: ValidateOptions & { first: boolean }): LogEvent | SessionHeaderRecord | PackedChunkRow {
  let raw: unknown
  try {
    raw = JSON.parse(text)
  } catch (error) {
    const detail = error instanceof Error ? error.message : String(error)
    throw new LogError('INVALID_JSON', `not valid JSON: ${detail}`, locate(opts), { cause: error })
  }
  if (!isPlainObject(raw)) throw new LogError('INVALID_JSON', `expected a JSON object, got ${describeValue(raw)}`, locate(opts))
  const type = raw['type']
  if (opts.first && type === 'session') return validateHeaderRecord(raw, opts)
  if (typeof type === 'string' && PACKED_ROW_TYPES.has(type)) return validatePackedRow(raw, opts)
  return validateParsedEvent(raw, opts)
}

/**
 * Expands a packed row in order into its n `assistant/chunk` events (§1.1): seq = seq0 + k,
 * time = time0 + dt[0] + … + dt[k−1], chunk `{type, index, text}` or `{type: 'tool-call-delta', index, id,
 * name (only when the row has one), argumentsDelta}`. Expects a row accepted by `decodeLine`.
 */
export function expandPackedRow(row: PackedChunkRow): SessionEvent<'assistant/chunk'>[] {
  const out: SessionEvent<'assistant/chunk'>[] = []
  const { turn, step, index, dt } = row.data
  let time = row.time0
  switch (row.type) {
    case 'text-chunks':
    case 'reasoning-chunks': {
      const chunkType = row.type === 'text-chunks' ? 'text-delta' : 'reasoning-delta'
      row.data.texts.forEach((text, k) => {
        if (k > 0) time += dt[k - 1] ?? 0
        const chunk: StreamChunk = { type: chunkType, index, text }
        out.push({ seq: Seq(row.seq0 + k), time, type: 'assistant/chunk', data: { turn, step, chunk } })
      })
      return out
    }
    case 'tool-call-chunks': {
      const { id, name } = row.data
      row.data.args.forEach((argumentsDelta, k) => {
        if (k > 0) time += dt[k - 1] ?? 0
        const chunk: StreamChunk = name === undefined
          ? { type: 'tool-call-delta', index, id: CallId(id), argumentsDelta }
          : { type: 'tool-call-delta', index, id: CallId(id), name, argumentsDelta }
        out.push({ seq: Seq(row.seq0 + k), time, type: 'assistant/chunk', data: { turn, step, chunk } })
      })
      return out
    }
    default:
      return assertNever(row, 'packed row')
  }
}
