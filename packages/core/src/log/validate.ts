/**
 * Per-event validation (§1.1, §1.3, §1.4, INV-02, INV-03, INV-04). Everything here judges ONE event in
 * isolation; checks that need other events (INV-01 contiguity, replace spans, pairing) belong to the
 * reader and the session fold.
 */
import { assertNever, LogError, type LogErrorCode, type LogErrorLocation } from '../errors.ts'
import { isSurfaceType, vocabulary, type Dialect, type EventType, type LogEvent } from './events.ts'

/** Options of `validateEvent` (and of the readers built on it). `line`/`file` only locate errors. */
export interface ValidateOptions {
  dialect: Dialect
  /** Extra foreign log-only types to accept without `ignorable` (e.g. a `--known-type` flag, §14.1). */
  knownTypes?: ReadonlySet<string> | undefined
  line?: number | undefined
  file?: string | undefined
}

// ---------------------------------------------------------------------------------------------
// Lossless JSON (§1.1 rule 2)

type Key = string | number

interface Frame {
  readonly value: object
  readonly parent: Frame | undefined
  readonly key: Key
}

/** Marks the end of a container's subtree on the DFS stack (for cycle detection). */
interface Exit {
  readonly exit: object
}

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/

function renderPath(field: string, frame: Frame | undefined, last?: Key): string {
  const keys: Key[] = []
  if (last !== undefined) keys.push(last)
  for (let f = frame; f !== undefined && f.parent !== undefined; f = f.parent) keys.push(f.key)
  let out = field
  for (let i = keys.length - 1; i >= 0; i--) out += renderKey(keys[i] as Key)
  return out
}

function renderKey(key: Key): string {
  if (typeof key === 'number') return `[${key}]`
  return IDENTIFIER.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`
}

/** Why a non-container value is not lossless JSON, or undefined when it is fine. */
function leafProblem(value: unknown): string | undefined {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return undefined
    case 'number':
      if (Number.isNaN(value)) return 'NaN is not lossless JSON'
      if (!Number.isFinite(value)) return `${value} is not lossless JSON (non-finite number)`
      if (Object.is(value, -0)) return '-0 is not lossless JSON (it reads back as 0)'
      return undefined
    case 'undefined':
      return 'undefined is not JSON'
    case 'bigint':
      return 'a BigInt is not JSON'
    case 'function':
      return 'a function is not JSON'
    case 'symbol':
      return 'a symbol is not JSON'
    case 'object':
      return undefined
  }
}

/**
 * Long frozen arrays already found dense and free of extra properties. A frozen array can gain no key, lose
 * none and change no prototype, so the verdict of `containerProblem` on it is final: the pre-validated and
 * then appended events of one compaction (§7.7) share their long seq lists, which are enumerated once. Weakly
 * held: it keeps nothing alive.
 */
const DENSE_FROZEN = new WeakSet<object>()

/** Arrays shorter than this are enumerated every time (cheaper than a memo entry). */
const DENSE_MEMO_LENGTH_MIN = 1024

/**
 * Why a container is not a plain object or a dense plain array, or undefined when it is fine. An array costs
 * one key enumeration (not two): an array of more than 16Ki elements
 * enumerates into a key list of more than 128 KiB, which V8 places in its large-object space (a fresh mapping
 * per list), so every extra list is a measurable cost per element of a compaction's `shadowedSeqs`.
 */
function containerProblem(value: object): string | undefined {
  const proto: unknown = Object.getPrototypeOf(value)
  if (Array.isArray(value)) {
    if (proto !== Array.prototype) return 'an Array subclass is not lossless JSON'
    if (DENSE_FROZEN.has(value)) return undefined
    // Own keys list the indices in ascending order, then `length`, then any other property: a dense array
    // without extras has exactly `length` + 1 of them, `length` last (holes offset by extras put an extra last).
    const length = value.length
    const keys = Reflect.ownKeys(value)
    if (keys.length === length + 1 && keys[length] === 'length') {
      if (length >= DENSE_MEMO_LENGTH_MIN && Object.isFrozen(value)) DENSE_FROZEN.add(value)
      return undefined
    }
    for (let i = 0; i < length; i++) if (!Object.hasOwn(value, i)) return `a sparse array (hole at index ${i}) is not lossless JSON`
    return 'an array with extra properties is not lossless JSON'
  }
  if (proto !== Object.prototype && proto !== null) return `${describeClass(value)} is not a plain object`
  if (Reflect.ownKeys(value).length !== Object.keys(value).length) {
    return Object.getOwnPropertySymbols(value).length > 0
      ? 'an object with symbol-keyed properties is not lossless JSON'
      : 'an object with non-enumerable properties is not lossless JSON'
  }
  return undefined
}

function describeClass(value: object): string {
  const ctor: unknown = (value as { constructor?: unknown }).constructor
  return typeof ctor === 'function' && ctor.name !== '' ? `a ${ctor.name} instance` : 'a class instance'
}

/** A lossless-JSON problem: the JSON path where it was found, and what is wrong there. */
interface LossProblem {
  readonly path: string
  readonly problem: string
}

function findLoss(value: unknown, field: string): LossProblem | undefined {
  const leaf = leafProblem(value)
  if (leaf !== undefined) return { path: field, problem: leaf }
  if (typeof value !== 'object' || value === null) return undefined
  const stack: Array<Frame | Exit> = [{ value, parent: undefined, key: '' }]
  const active = new Set<object>()
  while (stack.length > 0) {
    const item = stack.pop() as Frame | Exit
    if ('exit' in item) {
      active.delete(item.exit)
      continue
    }
    const container = item.value
    const problem = containerProblem(container)
    if (problem !== undefined) return { path: renderPath(field, item), problem }
    active.add(container)
    stack.push({ exit: container })
    // Children are visited last to first (so the DFS pops them in order); arrays by index, without an entry list.
    if (Array.isArray(container)) {
      for (let i = container.length - 1; i >= 0; i--) {
        const found = visitChild(container[i] as unknown, i, item, field, active, stack)
        if (found !== undefined) return found
      }
    } else {
      const keys = Object.keys(container)
      for (let i = keys.length - 1; i >= 0; i--) {
        const key = keys[i] as string
        const found = visitChild((container as Record<string, unknown>)[key], key, item, field, active, stack)
        if (found !== undefined) return found
      }
    }
  }
  return undefined
}

/** Judges one child of `parent`: a leaf problem or a cycle is returned; a container is pushed for the DFS. */
function visitChild(
  child: unknown, key: Key, parent: Frame, field: string, active: ReadonlySet<object>, stack: Array<Frame | Exit>,
): LossProblem | undefined {
  const childLeaf = leafProblem(child)
  if (childLeaf !== undefined) return { path: renderPath(field, parent, key), problem: childLeaf }
  if (typeof child !== 'object' || child === null) return undefined
  if (active.has(child)) return { path: renderPath(field, parent, key), problem: 'a circular reference is not JSON' }
  stack.push({ value: child, parent, key })
  return undefined
}

/**
 * Checks that `value` is lossless JSON (§1.1 rule 2): plain objects, dense arrays, strings, booleans,
 * null and finite numbers other than -0. Returns a reason naming the JSON path below `field`
 * (e.g. `data.message.content[2].text: NaN is not lossless JSON`), or undefined when the value is fine.
 * Iterative (explicit stack), so deeply nested values cannot overflow the call stack; cycles are reported.
 */
export function checkLossless(value: unknown, field: string): string | undefined {
  const loss = findLoss(value, field)
  return loss === undefined ? undefined : `${loss.path}: ${loss.problem}`
}

// ---------------------------------------------------------------------------------------------
// Small typed checks with located errors

type Obj = Record<string, unknown>

/** True for a non-null, non-array object whose prototype is Object.prototype or null. */
export function isPlainObject(value: unknown): value is Obj {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false
  const proto: unknown = Object.getPrototypeOf(value)
  return proto === Object.prototype || proto === null
}

/** A short description of a value for error messages. */
export function describeValue(value: unknown): string {
  if (value === undefined) return 'nothing'
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'an array'
  switch (typeof value) {
    case 'string': {
      const text = JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)
      return `the string ${text}`
    }
    case 'number':
      return `the number ${Object.is(value, -0) ? '-0' : String(value)}`
    case 'boolean':
      return String(value)
    case 'object':
      return 'an object'
    default:
      return `a ${typeof value}`
  }
}

/** Builds located errors (file, line, seq, field) with the current error code; allocation-free until it fails. */
class Check {
  constructor(
    private code: LogErrorCode,
    private readonly file: string | undefined,
    private readonly line: number | undefined,
    private readonly seq: number | undefined,
  ) {}

  /** Switches the code used by later failures. */
  as(code: LogErrorCode): this {
    this.code = code
    return this
  }

  where(field?: string): LogErrorLocation {
    const where: LogErrorLocation = {}
    if (this.file !== undefined) where.file = this.file
    if (this.line !== undefined) where.line = this.line
    if (this.seq !== undefined) where.seq = this.seq
    if (field !== undefined) where.field = field
    return where
  }

  fail(field: string, reason: string): never {
    throw new LogError(this.code, reason, this.where(field))
  }

  expected(field: string, what: string, got: unknown): never {
    return this.fail(field, `expected ${what}, got ${describeValue(got)}`)
  }

  obj(value: unknown, field: string): Obj {
    if (!isPlainObject(value)) this.expected(field, 'an object', value)
    return value
  }

  arr(value: unknown, field: string): unknown[] {
    if (!Array.isArray(value)) this.expected(field, 'an array', value)
    return value
  }

  str(value: unknown, field: string): string {
    if (typeof value !== 'string') this.expected(field, 'a string', value)
    return value
  }

  nonEmptyStr(value: unknown, field: string): string {
    if (typeof value !== 'string' || value === '') this.expected(field, 'a non-empty string', value)
    return value
  }

  num(value: unknown, field: string): number {
    if (typeof value !== 'number' || !Number.isFinite(value)) this.expected(field, 'a finite number', value)
    return value
  }

  nonNegNum(value: unknown, field: string): number {
    if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) this.expected(field, 'a non-negative number', value)
    return value
  }

  nonNegInt(value: unknown, field: string): number {
    if (!Number.isSafeInteger(value) || (value as number) < 0) this.expected(field, 'a non-negative integer', value)
    return value as number
  }

  posInt(value: unknown, field: string): number {
    if (!Number.isSafeInteger(value) || (value as number) < 1) this.expected(field, 'a positive integer', value)
    return value as number
  }

  isTrue(value: unknown, field: string): void {
    if (value !== true) this.expected(field, 'true (or the field absent)', value)
  }

  oneOf(value: unknown, allowed: readonly string[], field: string): string {
    if (typeof value !== 'string' || !allowed.includes(value)) {
      this.expected(field, `one of ${allowed.map((a) => `'${a}'`).join(', ')}`, value)
    }
    return value
  }

  // Optional fields: absent (own property missing) is fine; present must have the right type.
  optStr(o: Obj, key: string, field: string): void {
    if (Object.hasOwn(o, key)) this.str(o[key], `${field}.${key}`)
  }

  optNonEmptyStr(o: Obj, key: string, field: string): void {
    if (Object.hasOwn(o, key)) this.nonEmptyStr(o[key], `${field}.${key}`)
  }

  optNum(o: Obj, key: string, field: string): void {
    if (Object.hasOwn(o, key)) this.num(o[key], `${field}.${key}`)
  }

  optTrue(o: Obj, key: string, field: string): void {
    if (Object.hasOwn(o, key)) this.isTrue(o[key], `${field}.${key}`)
  }

  optBool(o: Obj, key: string, field: string): void {
    if (Object.hasOwn(o, key) && typeof o[key] !== 'boolean') this.expected(`${field}.${key}`, 'a boolean', o[key])
  }

  nonNegIntArray(value: unknown, field: string): number[] {
    const a = this.arr(value, field)
    for (let i = 0; i < a.length; i++) this.nonNegInt(a[i], `${field}[${i}]`)
    return a as number[]
  }

  stringArray(value: unknown, field: string): string[] {
    const a = this.arr(value, field)
    for (let i = 0; i < a.length; i++) this.str(a[i], `${field}[${i}]`)
    return a as string[]
  }
}

// ---------------------------------------------------------------------------------------------
// Payload shapes of §1.2 / §1.4 (code DATA)

const SOURCE_KINDS = ['user', 'plugin', 'model', 'tool'] as const
const TURN_END_KINDS = ['completed', 'blocked', 'max-tokens', 'aborted', 'error', 'interrupted'] as const
const ABORT_KINDS = ['user', 'parent', 'disposed', 'hook', 'legacy'] as const
const FINISH_KINDS = ['stop', 'tool-calls', 'max-tokens', 'aborted', 'error'] as const
const CHUNK_TYPES = ['block-start', 'text-delta', 'reasoning-delta', 'tool-call-delta', 'block-end', 'usage', 'finish'] as const
const SEED_REASONS = ['initial', 'resume', 'change', 'series'] as const
const RC8_REASONS = ['initial', 'resume', 'change'] as const

/** Content blocks (§1.2): the union is open; the five known types are checked, nested results iteratively. */
function checkContent(c: Check, value: unknown, field: string): void {
  const work: Array<[unknown, string]> = [[value, field]]
  while (work.length > 0) {
    const [blocks, blocksField] = work.pop() as [unknown, string]
    const list = c.arr(blocks, blocksField)
    for (let i = 0; i < list.length; i++) {
      const f = `${blocksField}[${i}]`
      const b = c.obj(list[i], f)
      const type = c.str(b['type'], `${f}.type`)
      switch (type) {
        case 'text':
        case 'reasoning':
          c.str(b['text'], `${f}.text`)
          break
        case 'image': {
          const a = c.obj(b['attachment'], `${f}.attachment`)
          const af = `${f}.attachment`
          c.str(a['attachmentId'], `${af}.attachmentId`)
          c.optStr(a, 'mediaType', af)
          c.optNum(a, 'bytes', af)
          c.optNum(a, 'width', af)
          c.optNum(a, 'height', af)
          c.optStr(a, 'name', af)
          break
        }
        case 'tool-call':
          c.str(b['id'], `${f}.id`)
          c.str(b['name'], `${f}.name`)
          c.str(b['arguments'], `${f}.arguments`)
          break
        case 'tool-result':
          c.str(b['toolCallId'], `${f}.toolCallId`)
          c.optBool(b, 'isError', f)
          work.push([b['content'], `${f}.content`])
          break
        default:
          break // unknown block types are preserved verbatim (§1.2)
      }
    }
  }
}

// Fast paths: the common well-formed shapes, accepted without building the located field names that only a
// failure needs (validation runs on every event a reader or the checker reads). Each accepts a subset of what
// the full check it guards accepts, and the full check runs whenever it declines, so results and errors are
// unchanged.

/** Nested tool-result levels the fast path follows before it declines. */
const FAST_NESTING_MAX = 4

function isNonNegInt(value: unknown): boolean {
  return Number.isSafeInteger(value) && (value as number) >= 0
}

/** True when `checkContent` would accept `value` (declines images and deep nesting). */
function wellFormedContent(value: unknown, depth: number): boolean {
  if (!Array.isArray(value)) return false
  for (let i = 0; i < value.length; i++) {
    const b: unknown = value[i]
    if (!isPlainObject(b)) return false
    const type = b['type']
    switch (type) {
      case 'text':
      case 'reasoning':
        if (typeof b['text'] !== 'string') return false
        break
      case 'tool-call':
        if (typeof b['id'] !== 'string' || typeof b['name'] !== 'string' || typeof b['arguments'] !== 'string') return false
        break
      case 'tool-result':
        if (typeof b['toolCallId'] !== 'string' || (Object.hasOwn(b, 'isError') && typeof b['isError'] !== 'boolean')) return false
        if (depth >= FAST_NESTING_MAX || !wellFormedContent(b['content'], depth + 1)) return false
        break
      case 'image':
        return false
      default:
        if (typeof type !== 'string') return false
    }
  }
  return true
}

/** True when `checkSource` would accept `value`. */
function wellFormedSource(value: unknown): boolean {
  if (!isPlainObject(value)) return false
  switch (value['kind']) {
    case 'user':
      return true
    case 'plugin':
      return typeof value['plugin'] === 'string'
    case 'model':
      return typeof value['provider'] === 'string' && typeof value['model'] === 'string'
    case 'tool':
      return typeof value['callId'] === 'string'
    default:
      return false
  }
}

/** True when `checkChunk` would accept `value` (declines usage and finish chunks). */
function wellFormedChunk(value: unknown): boolean {
  if (!isPlainObject(value) || !isNonNegInt(value['index'])) return false
  switch (value['type']) {
    case 'block-start':
      return typeof value['blockType'] === 'string'
    case 'text-delta':
    case 'reasoning-delta':
      return typeof value['text'] === 'string'
    case 'tool-call-delta':
      return typeof value['id'] === 'string' && typeof value['argumentsDelta'] === 'string' &&
        (!Object.hasOwn(value, 'name') || typeof value['name'] === 'string')
    case 'block-end':
      return isPlainObject(value['block']) && wellFormedContent([value['block']], 0)
    default:
      return false
  }
}

function checkSource(c: Check, value: unknown, field: string): Obj {
  const s = c.obj(value, field)
  const kind = c.oneOf(s['kind'], SOURCE_KINDS, `${field}.kind`) as (typeof SOURCE_KINDS)[number]
  switch (kind) {
    case 'user':
      break
    case 'plugin':
      c.str(s['plugin'], `${field}.plugin`)
      break
    case 'model':
      c.str(s['provider'], `${field}.provider`)
      c.str(s['model'], `${field}.model`)
      break
    case 'tool':
      c.str(s['callId'], `${field}.callId`)
      break
    default:
      assertNever(kind, 'source kind')
  }
  return s
}

function checkMessage(c: Check, value: unknown, field: string, role: 'system' | 'user' | 'assistant'): Obj {
  if (isPlainObject(value) && typeof value['id'] === 'string' && value['role'] === role && wellFormedContent(value['content'], 0) &&
    wellFormedSource(value['source'])) return value
  const m = c.obj(value, field)
  c.str(m['id'], `${field}.id`)
  if (m['role'] !== role) c.expected(`${field}.role`, `'${role}'`, m['role'])
  checkContent(c, m['content'], `${field}.content`)
  checkSource(c, m['source'], `${field}.source`)
  return m
}

function checkToolResultMessage(c: Check, value: unknown, field: string): void {
  const m = checkMessage(c, value, field, 'user')
  const source = m['source'] as Obj
  if (source['kind'] !== 'tool') c.expected(`${field}.source.kind`, "'tool' on a tool result", source['kind'])
  const content = m['content'] as Obj[]
  if (content.length !== 1) c.fail(`${field}.content`, `expected exactly one tool-result block, got ${content.length} blocks`)
  const block = content[0] as Obj
  if (block['type'] !== 'tool-result') c.expected(`${field}.content[0].type`, "'tool-result'", block['type'])
  if (block['toolCallId'] !== source['callId']) {
    c.fail(`${field}.content[0].toolCallId`, `expected the source callId ${JSON.stringify(source['callId'])}, got ${describeValue(block['toolCallId'])}`)
  }
}

function checkFailure(c: Check, value: unknown, field: string): void {
  const f = c.obj(value, field)
  c.str(f['message'], `${field}.message`)
  c.str(f['code'], `${field}.code`)
  c.optNum(f, 'status', field)
  c.optNum(f, 'providerRetryAfterMs', field)
  c.optStr(f, 'requestId', field)
  c.optNum(f, 'offloadImages', field)
}

function checkUsage(c: Check, value: unknown, field: string): void {
  const u = c.obj(value, field)
  c.nonNegNum(u['inputTokens'], `${field}.inputTokens`)
  c.nonNegNum(u['outputTokens'], `${field}.outputTokens`)
  c.optNum(u, 'cacheReadTokens', field)
  c.optNum(u, 'cacheWriteTokens', field)
  c.optNum(u, 'reasoningTokens', field)
}

const SUMMARY_ROOM_KEYS: ReadonlySet<string> = new Set(['configuredMaxTokens', 'promptTokens', 'contextWindow', 'maxOutputTokens', 'deferredTo'])

/** The hardened HARD-2 record (`SummaryRoomRecord`, `docs/hardened.md`): closed keys, integer figures. */
function checkSummaryRoom(c: Check, value: unknown, field: string): void {
  const r = c.obj(value, field)
  for (const key of Object.keys(r)) {
    if (!SUMMARY_ROOM_KEYS.has(key)) c.fail(`${field}.${key}`, `is not a summaryRoom field (allowed: ${[...SUMMARY_ROOM_KEYS].join(', ')})`)
  }
  c.nonNegInt(r['promptTokens'], `${field}.promptTokens`)
  for (const key of ['configuredMaxTokens', 'contextWindow', 'maxOutputTokens', 'deferredTo']) {
    if (Object.hasOwn(r, key)) c.posInt(r[key], `${field}.${key}`)
  }
}

function checkFinishReason(c: Check, value: unknown, field: string): void {
  const r = c.obj(value, field)
  const kind = c.oneOf(r['kind'], FINISH_KINDS, `${field}.kind`) as (typeof FINISH_KINDS)[number]
  switch (kind) {
    case 'stop':
    case 'tool-calls':
    case 'max-tokens':
      break
    case 'aborted':
    case 'error':
      checkFailure(c, r['failure'], `${field}.failure`)
      break
    default:
      assertNever(kind, 'finish kind')
  }
}

function checkChunk(c: Check, value: unknown, field: string): void {
  if (wellFormedChunk(value)) return
  const ch = c.obj(value, field)
  const type = c.oneOf(ch['type'], CHUNK_TYPES, `${field}.type`) as (typeof CHUNK_TYPES)[number]
  switch (type) {
    case 'block-start':
      c.nonNegInt(ch['index'], `${field}.index`)
      c.str(ch['blockType'], `${field}.blockType`)
      break
    case 'text-delta':
    case 'reasoning-delta':
      c.nonNegInt(ch['index'], `${field}.index`)
      c.str(ch['text'], `${field}.text`)
      break
    case 'tool-call-delta':
      c.nonNegInt(ch['index'], `${field}.index`)
      c.str(ch['id'], `${field}.id`)
      c.optStr(ch, 'name', field)
      c.str(ch['argumentsDelta'], `${field}.argumentsDelta`)
      break
    case 'block-end':
      c.nonNegInt(ch['index'], `${field}.index`)
      c.obj(ch['block'], `${field}.block`)
      checkContent(c, [ch['block']], `${field}.block`)
      break
    case 'usage':
      checkUsage(c, ch['usage'], `${field}.usage`)
      break
    case 'finish':
      checkFinishReason(c, ch['reason'], `${field}.reason`)
      break
    default:
      assertNever(type, 'chunk type')
  }
}

function checkTurnStep(c: Check, d: Obj): void {
  c.posInt(d['turn'], 'data.turn')
  c.posInt(d['step'], 'data.step')
}

function checkRange(c: Check, value: unknown, field: string): void {
  const r = c.obj(value, field)
  c.nonNegInt(r['start'], `${field}.start`)
  c.nonNegInt(r['end'], `${field}.end`)
}

function checkOwnerTurn(c: Check, value: unknown, field: string): void {
  if (value !== null) {
    if (!Number.isSafeInteger(value) || (value as number) < 1) c.expected(field, 'a positive integer or null', value)
  }
}

function checkHeader(c: Check, d: Obj, dialect: Dialect): void {
  const h = c.obj(d['header'], 'data.header')
  const config = c.obj(h['config'], 'data.header.config')
  c.str(config['provider'], 'data.header.config.provider')
  c.str(config['model'], 'data.header.config.model')
  c.optStr(config, 'reasoningEffort', 'data.header.config')
  c.optNum(config, 'temperature', 'data.header.config')
  c.optNum(config, 'maxTokens', 'data.header.config')
  if (Object.hasOwn(config, 'stop')) c.stringArray(config['stop'], 'data.header.config.stop')
  if (Object.hasOwn(h, 'adapterDefaults')) {
    const ad = c.obj(h['adapterDefaults'], 'data.header.adapterDefaults')
    c.optTrue(ad, 'reasoningEffort', 'data.header.adapterDefaults')
    c.optTrue(ad, 'maxTokens', 'data.header.adapterDefaults')
  }
  if (Object.hasOwn(h, 'tools')) {
    const tools = c.arr(h['tools'], 'data.header.tools')
    for (let i = 0; i < tools.length; i++) {
      const f = `data.header.tools[${i}]`
      const t = c.obj(tools[i], f)
      c.str(t['name'], `${f}.name`)
      c.str(t['description'], `${f}.description`)
      c.obj(t['parameters'], `${f}.parameters`)
    }
  }
  switch (dialect) {
    case 'seed':
      // D-02: the seed header has no system field; system text lives in system/message (§1.4.10).
      if (Object.hasOwn(h, 'system')) c.fail('data.header.system', 'the seed dialect has no header.system (system text lives in system/message, §1.4.5, D-02)')
      c.oneOf(d['reason'], SEED_REASONS, 'data.reason')
      c.optTrue(d, 'startsSeries', 'data')
      break
    case 'dsh-0.1.0-rc.8':
      c.optStr(h, 'system', 'data.header')
      c.oneOf(d['reason'], RC8_REASONS, 'data.reason')
      if (Object.hasOwn(d, 'startsSeries')) c.fail('data.startsSeries', 'startsSeries is seed-only (§10.3); the rc.8 dialect never writes it (§14.1)')
      break
    default:
      assertNever(dialect, 'dialect')
  }
}

/** Payload shape of a protocol type (§1.4), for the fields the folds rely on. */
function checkPayload(c: Check, type: EventType, d: Obj, dialect: Dialect): void {
  switch (type) {
    case 'turn/start':
      c.posInt(d['turn'], 'data.turn')
      return
    case 'turn/end': {
      c.posInt(d['turn'], 'data.turn')
      const r = c.obj(d['reason'], 'data.reason')
      const kind = c.oneOf(r['kind'], TURN_END_KINDS, 'data.reason.kind')
      if (kind === 'error') checkFailure(c, r['error'], 'data.reason.error')
      if (kind === 'aborted') {
        const inner = c.obj(r['reason'], 'data.reason.reason')
        c.oneOf(inner['kind'], ABORT_KINDS, 'data.reason.reason.kind')
        c.optStr(inner, 'reason', 'data.reason.reason')
      }
      return
    }
    case 'step/start':
    case 'step/end':
      checkTurnStep(c, d)
      return
    case 'system/message':
      checkMessage(c, d, 'data', 'system')
      return
    case 'user/message':
      checkMessage(c, d, 'data', 'user')
      return
    case 'assistant/chunk':
      checkTurnStep(c, d)
      checkChunk(c, d['chunk'], 'data.chunk')
      return
    case 'assistant/message':
      checkTurnStep(c, d)
      checkMessage(c, d['message'], 'data.message', 'assistant')
      if (Object.hasOwn(d, 'usage')) checkUsage(c, d['usage'], 'data.usage')
      c.optTrue(d, 'interrupted', 'data')
      return
    case 'tool/call':
      checkTurnStep(c, d)
      c.str(d['callId'], 'data.callId')
      c.str(d['name'], 'data.name')
      c.str(d['arguments'], 'data.arguments')
      return
    case 'tool/result':
      checkTurnStep(c, d)
      checkToolResultMessage(c, d['message'], 'data.message')
      if (Object.hasOwn(d, 'error')) {
        const e = c.obj(d['error'], 'data.error')
        c.str(e['name'], 'data.error.name')
        c.str(e['code'], 'data.error.code')
      }
      return
    case 'request/header':
      checkHeader(c, d, dialect)
      return
    case 'request/context':
      c.str(d['provider'], 'data.provider')
      c.str(d['model'], 'data.model')
      c.optNum(d, 'contextWindow', 'data')
      c.optNum(d, 'imageTokens', 'data')
      c.optNum(d, 'calibration', 'data')
      if (Object.hasOwn(d, 'capacityWarning')) {
        const w = c.obj(d['capacityWarning'], 'data.capacityWarning')
        c.nonNegInt(w['usageSeq'], 'data.capacityWarning.usageSeq')
        c.nonNegInt(w['usageTokens'], 'data.capacityWarning.usageTokens')
        c.nonNegInt(w['contextWindow'], 'data.capacityWarning.contextWindow')
      }
      return
    case 'session/end-seed':
      return
    case 'llm/retry':
      c.str(d['retryId'], 'data.retryId')
      checkTurnStep(c, d)
      c.str(d['provider'], 'data.provider')
      c.oneOf(d['mode'], ['normal', 'always'], 'data.mode')
      c.str(d['policyKey'], 'data.policyKey')
      c.num(d['retry'], 'data.retry')
      c.optNum(d, 'maxRetries', 'data')
      c.num(d['delayMs'], 'data.delayMs')
      checkFailure(c, d['failure'], 'data.failure')
      return
    case 'llm/retry-started':
      c.str(d['retryId'], 'data.retryId')
      checkTurnStep(c, d)
      c.num(d['retry'], 'data.retry')
      return
    case 'compaction/start':
    case 'compaction/end':
      c.nonEmptyStr(d['compactionId'], 'data.compactionId')
      c.optNonEmptyStr(d, 'sourceCommandId', 'data')
      checkOwnerTurn(c, d['turn'], 'data.turn')
      if (type === 'compaction/end') c.optStr(d, 'error', 'data')
      return
    case 'compaction/summary': {
      c.nonEmptyStr(d['compactionId'], 'data.compactionId')
      c.optNonEmptyStr(d, 'sourceCommandId', 'data')
      const summary = c.arr(d['summary'], 'data.summary')
      for (let i = 0; i < summary.length; i++) {
        const b = c.obj(summary[i], `data.summary[${i}]`)
        if (b['type'] !== 'text') c.expected(`data.summary[${i}].type`, "'text'", b['type'])
        c.str(b['text'], `data.summary[${i}].text`)
      }
      checkRange(c, d['shadowedRange'], 'data.shadowedRange')
      const shadowed = c.nonNegIntArray(d['shadowedSeqs'], 'data.shadowedSeqs')
      if (shadowed.length === 0) c.fail('data.shadowedSeqs', 'expected a non-empty array of seqs (§1.4.15)')
      c.nonNegNum(d['shadowedTokenCount'], 'data.shadowedTokenCount')
      c.str(d['provider'], 'data.provider')
      c.str(d['model'], 'data.model')
      c.optNum(d, 'maxTokens', 'data')
      if (Object.hasOwn(d, 'summaryRoom')) checkSummaryRoom(c, d['summaryRoom'], 'data.summaryRoom')
      if (Object.hasOwn(d, 'usage')) checkUsage(c, d['usage'], 'data.usage')
      if (Object.hasOwn(d, 'rawOutput')) checkContent(c, d['rawOutput'], 'data.rawOutput')
      c.optTrue(d, 'llmStreamCall', 'data')
      if (d['llmStreamCall'] === true && !Object.hasOwn(d, 'rawOutput')) c.fail('data.rawOutput', 'expected rawOutput when llmStreamCall is true (§1.4.15)')
      return
    }
    case 'compaction/summary-error':
      c.nonEmptyStr(d['compactionId'], 'data.compactionId')
      c.optNonEmptyStr(d, 'sourceCommandId', 'data')
      checkRange(c, d['shadowedRange'], 'data.shadowedRange')
      c.nonNegIntArray(d['shadowedSeqs'], 'data.shadowedSeqs')
      checkFailure(c, d['failure'], 'data.failure')
      c.optStr(d, 'provider', 'data')
      c.optStr(d, 'model', 'data')
      c.optNum(d, 'maxTokens', 'data')
      if (Object.hasOwn(d, 'summaryRoom')) checkSummaryRoom(c, d['summaryRoom'], 'data.summaryRoom')
      return
    case 'compaction/prune': {
      checkRange(c, d['shadowedRange'], 'data.shadowedRange')
      const shadowed = c.nonNegIntArray(d['shadowedSeqs'], 'data.shadowedSeqs')
      if (shadowed.length !== 1) c.fail('data.shadowedSeqs', `expected exactly one seq (the pruned node, §1.4.17), got ${shadowed.length}`)
      c.nonNegNum(d['shadowedTokenCount'], 'data.shadowedTokenCount')
      return
    }
    case 'image/offload': {
      const targets = c.arr(d['targets'], 'data.targets')
      for (let i = 0; i < targets.length; i++) {
        const f = `data.targets[${i}]`
        const t = c.obj(targets[i], f)
        c.nonNegInt(t['seq'], `${f}.seq`)
        c.nonNegIntArray(t['imageIndexes'], `${f}.imageIndexes`)
      }
      return
    }
    case 'text/offload':
      // Hardened oversizedUserText (HARD-5): which user text block is projected, its price, the bound and the path.
      c.nonNegInt(d['seq'], 'data.seq')
      c.nonNegInt(d['blockIndex'], 'data.blockIndex')
      c.nonNegInt(d['tokens'], 'data.tokens')
      c.nonNegInt(d['bound'], 'data.bound')
      c.nonEmptyStr(d['path'], 'data.path')
      return
    default:
      assertNever(type, 'event type')
  }
}

// ---------------------------------------------------------------------------------------------
// The envelope

const ENVELOPE_KEYS: ReadonlySet<string> = new Set(['seq', 'time', 'type', 'data', 'surfaceOp', 'sourceEventSeqs', 'ignorable'])

function checkSurfaceOp(c: Check, value: unknown): void {
  if (value === 'append') return
  if (!isPlainObject(value)) c.expected('surfaceOp', "'append' or {op: 'replace', start, end}", value)
  for (const key of Object.keys(value)) {
    if (key !== 'op' && key !== 'start' && key !== 'end') c.fail(`surfaceOp.${key}`, `unexpected key ${JSON.stringify(key)} in a replace op (§1.1)`)
  }
  if (value['op'] !== 'replace') c.expected('surfaceOp.op', "'replace'", value['op'])
  c.nonNegInt(value['start'], 'surfaceOp.start')
  c.nonNegInt(value['end'], 'surfaceOp.end')
}

function checkProvenance(c: Check, value: unknown, seq: number, type: string): void {
  if (!Array.isArray(value)) c.expected('sourceEventSeqs', 'an array of seqs', value)
  if (value.length === 0 && type !== 'assistant/message') {
    c.fail('sourceEventSeqs', 'provenance may be empty only on assistant/message; omit it instead (§1.5.1, INV-04)')
  }
  let increasing = true
  for (let i = 0; i < value.length; i++) {
    const s: unknown = value[i]
    if (!Number.isSafeInteger(s) || (s as number) < 0) c.expected(`sourceEventSeqs[${i}]`, 'a non-negative integer seq', s)
    const n = s as number
    if (n >= seq) c.fail(`sourceEventSeqs[${i}]`, `provenance must cite earlier events: ${n} is not < the event's own seq ${seq} (INV-04)`)
    if (i > 0 && n <= (value[i - 1] as number)) increasing = false
  }
  if (increasing) return // strictly increasing lists (the common case) cannot hold duplicates
  if (!hasDuplicate(value as readonly number[])) return
  const seen = new Set<number>()
  for (let i = 0; i < value.length; i++) {
    const n = value[i] as number
    if (seen.has(n)) c.fail(`sourceEventSeqs[${i}]`, `duplicate seq ${n} in provenance (INV-04)`)
    seen.add(n)
  }
}

/**
 * True when a list of safe integers holds a value twice. Sorted in a typed copy (off the JS heap): a `Set` of
 * a compaction checkpoint's provenance (start and summary seqs, then the region, so not increasing) is a
 * large-object allocation beyond 16Ki seqs. The caller finds the first duplicate's index for its message.
 */
function hasDuplicate(list: readonly number[]): boolean {
  // The strictly increasing tail list[k …] holds no duplicate; a short head is checked against itself and,
  // by binary search, against the tail (a checkpoint's head is its start and summary seqs).
  let k = list.length - 1
  while (k > 0 && (list[k - 1] as number) < (list[k] as number)) k--
  if (k > UNSORTED_HEAD_MAX) {
    const sorted = Float64Array.from(list).sort()
    for (let i = 1; i < sorted.length; i++) if (sorted[i] === sorted[i - 1]) return true
    return false
  }
  for (let a = 0; a < k; a++) {
    const v = list[a] as number
    for (let b = a + 1; b < k; b++) if (list[b] === v) return true
    let lo = k
    let hi = list.length - 1
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1
      const m = list[mid] as number
      if (m === v) return true
      if (m < v) lo = mid + 1
      else hi = mid - 1
    }
  }
  return false
}

/** Longest unsorted head `hasDuplicate` checks pairwise; a longer one is sorted instead. */
const UNSORTED_HEAD_MAX = 16

/**
 * A frozen list of `head` then `tail`, dense and free of extra properties by construction (each index is
 * assigned once, nothing else is; a hole of the sources reads as undefined, which validation still rejects),
 * so `validateEvent` never enumerates its keys: for the long seq lists of a compaction (§7.7), each key list
 * would be a large-object allocation. Core-internal (the bracket builds its summary and checkpoint lists here).
 */
export function frozenDenseList<T>(head: readonly T[], tail: readonly T[]): T[] {
  const out = Array.from<T>({ length: head.length + tail.length })
  for (let i = 0; i < head.length; i++) out[i] = head[i] as T
  for (let i = 0; i < tail.length; i++) out[head.length + i] = tail[i] as T
  Object.freeze(out)
  DENSE_FROZEN.add(out)
  return out
}

/**
 * Validates one event object in isolation (§1.1, §1.3, §1.4, INV-02, INV-03, INV-04) and returns it
 * typed (the same object, not a copy). Throws a `LogError` naming line, seq and field: ENVELOPE,
 * LOSSY_JSON, UNKNOWN_TYPE, SURFACE_OP, PROVENANCE or DATA. Never looks at other events.
 */
export function validateEvent(raw: unknown, opts: ValidateOptions): LogEvent {
  return validate(raw, opts, true)
}

/** True for -0 and non-finite numbers (`x - x` is NaN exactly for NaN and ±Infinity). */
function isLossyNumber(x: number): boolean {
  return x - x !== 0 || (x === 0 && 1 / x < 0)
}

/** Levels `hasLossyNumberShallow` recurses before it hands a subtree to the iterative `hasLossyNumber`. */
const LOSSY_RECURSION_MAX = 32

/**
 * `hasLossyNumber` without the explicit stack (no allocation: it runs on every parsed line); a value nested
 * deeper than `LOSSY_RECURSION_MAX` is finished by the iterative walk, so the call stack stays bounded.
 */
function hasLossyNumberShallow(value: object, depth: number): boolean {
  if (depth > LOSSY_RECURSION_MAX) return hasLossyNumber(value)
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const x: unknown = value[i]
      if (typeof x === 'object' ? x !== null && hasLossyNumberShallow(x, depth + 1) : typeof x === 'number' && isLossyNumber(x)) return true
    }
    return false
  }
  for (const key in value) {
    const x: unknown = (value as Obj)[key]
    if (typeof x === 'object' ? x !== null && hasLossyNumberShallow(x, depth + 1) : typeof x === 'number' && isLossyNumber(x)) return true
  }
  return false
}

/** True when a JSON.parse result holds -0 or a non-finite number (structure is JSON.parse's, so numbers are the only risk). */
function hasLossyNumber(value: unknown): boolean {
  const stack: unknown[] = [value]
  while (stack.length > 0) {
    const v = stack.pop()
    if (typeof v === 'number') {
      if (!Number.isFinite(v) || Object.is(v, -0)) return true
    } else if (typeof v === 'object' && v !== null) {
      if (Array.isArray(v)) {
        for (let i = 0; i < v.length; i++) stack.push(v[i])
      } else {
        for (const key in v) stack.push((v as Obj)[key])
      }
    }
  }
  return false
}

/**
 * `validateEvent` for a value produced by JSON.parse: identical result, but the lossless-JSON scan is
 * reduced to what JSON.parse can get wrong (-0 and ±Infinity numbers; its structure is always plain).
 */
export function validateParsedEvent(raw: unknown, opts: ValidateOptions): LogEvent {
  const lossy = typeof raw === 'object' && raw !== null ? hasLossyNumberShallow(raw, 0) : typeof raw === 'number' && isLossyNumber(raw)
  return validate(raw, opts, lossy)
}

function validate(raw: unknown, opts: ValidateOptions, scanLoss: boolean): LogEvent {
  if (!isPlainObject(raw)) throw new LogError('ENVELOPE', `expected an event object, got ${describeValue(raw)}`, new Check('ENVELOPE', opts.file, opts.line, undefined).where())
  const seq = raw['seq']
  const seqOk = Number.isSafeInteger(seq) && (seq as number) >= 0 && !Object.is(seq, -0)
  const c: Check = new Check('ENVELOPE', opts.file, opts.line, seqOk ? (seq as number) : undefined)
  for (const key in raw) {
    if (!ENVELOPE_KEYS.has(key)) c.fail(key, `unexpected top-level key ${JSON.stringify(key)} (an event has only seq, time, type, data, surfaceOp, sourceEventSeqs, ignorable)`)
  }
  // §1.1 rule 2 first: a lossy value gets the precise diagnosis even where a shape check would also fail.
  if (scanLoss) {
    for (const key of ENVELOPE_KEYS) {
      if (!Object.hasOwn(raw, key)) continue
      const loss = findLoss(raw[key], key)
      if (loss !== undefined) c.as('LOSSY_JSON').fail(loss.path, `${loss.problem} (§1.1 rule 2)`)
    }
  }
  if (!seqOk) c.expected('seq', 'a non-negative integer', seq)
  c.num(raw['time'], 'time')
  const type = raw['type']
  if (typeof type !== 'string' || type === '') return c.expected('type', 'a non-empty string', type)
  const data = c.obj(raw['data'], 'data')
  if (Object.hasOwn(raw, 'ignorable')) c.isTrue(raw['ignorable'], 'ignorable')

  const vocab = vocabulary(opts.dialect)
  const protocol = vocab.eventTypes.has(type as EventType)
  if (!protocol && !vocab.foreignTypes.has(type) && opts.knownTypes?.has(type) !== true && raw['ignorable'] !== true) {
    c.as('UNKNOWN_TYPE').fail(
      'type',
      `unknown event type ${JSON.stringify(type)} in the ${opts.dialect} dialect without ignorable: true; the reader must refuse the session (§1.1 rule 4, INV-02)`,
    )
  }

  // INV-03: surfaceOp iff surface-eligible; sourceEventSeqs only on surface-eligible types.
  c.as('SURFACE_OP')
  const eligible = isSurfaceType(type, opts.dialect)
  const hasOp = Object.hasOwn(raw, 'surfaceOp')
  if (eligible && !hasOp) c.fail('surfaceOp', `${type} is surface-eligible and requires surfaceOp (INV-03)`)
  if (!eligible && hasOp) c.fail('surfaceOp', `${type} is log-only and must not carry surfaceOp (INV-03)`)
  if (!eligible && Object.hasOwn(raw, 'sourceEventSeqs')) c.fail('sourceEventSeqs', `${type} is log-only and must not carry sourceEventSeqs (INV-03)`)
  if (hasOp) checkSurfaceOp(c, raw['surfaceOp'])

  // INV-04 / §1.5.1: provenance well-formed.
  if (Object.hasOwn(raw, 'sourceEventSeqs')) checkProvenance(c.as('PROVENANCE'), raw['sourceEventSeqs'], seq as number, type)

  if (protocol) checkPayload(c.as('DATA'), type as EventType, data, opts.dialect)
  return raw as unknown as LogEvent
}
