/**
 * The checker's input stage: log lines (or in-memory events) become `FoldItem`s, in file order, in
 * bounded memory. It reads `.jsonl`, `.jsonl.zstd` and DSH packed chunk rows through core's line reader
 * and codec (§1.1), and judges each line in isolation: INV-01 (seq contiguity), INV-02 (envelope, lossless
 * JSON, known types), INV-03 (surface metadata eligibility), INV-04 (provenance shape), plus the
 * validator-detected parts of INV-10, INV-16, INV-20, INV-30 and INV-41.
 *
 * Unlike a reader, it never stops at a bad event: a validation failure becomes an `InputProblem`, and the
 * event is still folded when only rules that leave its shape intact were broken (an empty `compactionId`,
 * `surfaceOp` on a log-only type, a duplicate provenance seq, …); otherwise it is opaque (kept in the seq
 * order, folded as nothing). What no check can judge — a middle line that is not JSON or not UTF-8, an empty
 * line, a malformed packed row or session header record, an unreadable file — is an input error: a
 * `LogError` naming `file:line`, thrown to the caller. A torn final line is reported and dropped (§1.1).
 */
import {
  decodeLine, expandPackedRow, isHeaderRecord, isPackedChunkRow, isSurfaceType, LogError, readLogLineBatches, validateEvent,
  type Dialect, type LogEvent, type LogLine,
} from '@compaction-sim/core'
import type { FoldItem, InputProblem, InvariantId } from './types.ts'

/** Options of the input stage. */
export interface InputOptions {
  dialect: Dialect
  knownTypes: ReadonlySet<string>
  /** Names the source in errors (the log path). */
  file?: string
}

/** A torn final line that was dropped (§1.1); `reason` says why it could not be read. */
export interface DroppedTail {
  line: number
  reason: string
}

/** A dropped torn final line as the input stage yields it (after every item). */
export class TornTail {
  constructor(readonly tail: DroppedTail) {}
}

/** What the input stage yields, in order: items, then at most one dropped torn tail. */
export type InputItem = FoldItem | TornTail

/** Validation rounds per event before it is declared opaque (each round removes one shape-preserving problem). */
const VALIDATION_ROUNDS_MAX = 8

/** Excerpts are cut to this many UTF-16 units. */
const EXCERPT_UNITS_MAX = 160

/** Upper bound on the violations one line can carry (a pathological event cannot flood the report). */
const PROBLEMS_PER_LINE_MAX = 16

/**
 * Deepest JSON nesting the checker folds. Protocol events nest about ten levels (nested tool results, tool
 * schemas a few more); the pure pricing and projection helpers recurse, so a deeper event is judged
 * malformed (INV-02) instead of risking the call stack. A line shorter than twice the bound cannot exceed it.
 */
export const NESTING_DEPTH_MAX = 256

/** Shared by every line without problems (never mutated). */
const NO_PROBLEMS: readonly InputProblem[] = Object.freeze([])

class Item implements FoldItem {
  repair = false
  tornFinal = false
  constructor(
    readonly index: number,
    readonly line: number | null,
    readonly seq: number,
    readonly type: string,
    readonly event: LogEvent | null,
    readonly problems: readonly InputProblem[],
    readonly duplicate: boolean,
    private readonly source: string | unknown,
  ) {}

  get excerpt(): string {
    let text: string
    if (typeof this.source === 'string') text = this.source
    else {
      try {
        text = JSON.stringify(this.source) ?? String(this.source)
      } catch {
        text = '(unserialisable value)' // a cyclic or BigInt-holding in-memory value; INV-02 reports it
      }
    }
    return text.length > EXCERPT_UNITS_MAX ? `${text.slice(0, EXCERPT_UNITS_MAX - 1)}…` : text
  }
}

/** One decoded line before sequencing: its event (or null when opaque), written seq, type and problems. */
interface Decoded {
  event: LogEvent | null
  writtenSeq: number | null
  type: string
  problems: readonly InputProblem[]
  source: string | unknown
}

/** INV-01 sequencing state: report each new discontinuity once; never fold a seq twice. */
class Sequencer {
  private index = 0
  private prevSeq = -1
  private maxFolded = -1

  next(d: Decoded, line: number | null): Item {
    return this.nextOf(d.event, d.writtenSeq, d.type, d.problems, d.source, line)
  }

  /** `next` without the `Decoded` record (the per-line fast path allocates only the item). */
  nextOf(
    event: LogEvent | null, s: number | null, type: string, given: readonly InputProblem[], source: string | unknown, line: number | null,
  ): Item {
    const k = this.index++
    const effective = s ?? this.prevSeq + 1
    let problems = given
    if (s !== null && s !== k && s !== this.prevSeq + 1) {
      const what = s < k ? 'a duplicate or out-of-order seq' : 'a gap'
      problems = [{ id: 'INV-01', seq: k, message: `event line ${k} holds seq ${s} (${what}); the k-th event must hold seq k` }, ...problems]
    }
    const duplicate = s !== null && s <= this.maxFolded
    this.prevSeq = effective
    if (!duplicate) this.maxFolded = Math.max(this.maxFolded, effective)
    return new Item(k, line, effective, type, event, problems, duplicate, source)
  }
}

type DecodeOptions = { dialect: Dialect; knownTypes: ReadonlySet<string>; line: number; file: string; first: boolean }

/** Where the input stage delivers items, in file order. */
export interface ItemSink {
  push(item: InputItem): void
}

/**
 * Streams the items of a log file into `sink`, in file order: one async step per read chunk of core's reader
 * (64 KiB, `readLogLineBatches`), and each line is handed on as soon as it is decoded, so at most one decoded
 * event is in flight. (Reading 1 MiB chunks was measured slower: a chunk's lines and items live across
 * scavenges and are promoted to the old generation, which then needs more full collections.) Throws
 * `LogError` (with `file` and `line`) for input errors: IO, an empty line, a middle line that is not UTF-8
 * JSON, a malformed packed row or header record (§1.1); items before the error have been delivered.
 */
export async function fileItems(path: string, options: InputOptions, sink: ItemSink): Promise<void> {
  const sequencer = new Sequencer()
  const decodeOptions: DecodeOptions = { dialect: options.dialect, knownTypes: options.knownTypes, line: 0, file: path, first: true }
  for await (const lines of readLogLineBatches(path)) {
    for (const l of lines) {
      decodeOptions.line = l.line
      decodeOptions.first = l.line === 1
      decodeFileLine(l, decodeOptions, options, sequencer, sink)
    }
  }
}

/** The items of in-memory events (no header record, no packed rows; every element is judged as an event line). */
export function* eventItems(events: Iterable<unknown>, options: InputOptions): Generator<InputItem> {
  const sequencer = new Sequencer()
  for (const raw of events) yield sequencer.next(judgeEvent(raw, options, undefined), null)
}

function inputError(code: 'CORRUPT_LINE' | 'HEADER' | 'PACKED_ROW', reason: string, opts: DecodeOptions, cause?: unknown): never {
  throw new LogError(code, reason, { file: opts.file, line: opts.line }, cause === undefined ? undefined : { cause })
}

/** Decodes one file line into `out`: nothing (header record), a dropped torn tail, or one item per event. */
function decodeFileLine(l: LogLine, opts: DecodeOptions, options: InputOptions, sequencer: Sequencer, out: ItemSink): void {
  const tornable = l.last && !l.terminated
  if (l.invalidUtf8 === true) {
    if (l.last) out.push(new TornTail({ line: l.line, reason: 'the line is not valid UTF-8' }))
    else inputError('CORRUPT_LINE', 'the line is not valid UTF-8; only the final line of a log may be torn (§1.1)', opts)
    return
  }
  let decoded: ReturnType<typeof decodeLine>
  try {
    decoded = decodeLine(l.text, opts)
  } catch (error) {
    if (!(error instanceof LogError)) throw error
    rejectLine(error, l, tornable, opts, options, sequencer, out)
    return
  }
  if (isHeaderRecord(decoded)) return
  if (isPackedChunkRow(decoded)) {
    for (const event of expandPackedRow(decoded)) {
      out.push(sequencer.nextOf(event, event.seq, event.type, NO_PROBLEMS, l.text, l.line))
    }
    return
  }
  // A 'session' record that is not a header record (it has a seq) is judged as an event of an unknown type.
  if (decoded.type === 'session') out.push(sequencer.next(judgeEvent(JSON.parse(l.text) as unknown, options, l.text), l.line))
  else if (l.text.length > 2 * NESTING_DEPTH_MAX && tooDeep(decoded)) {
    out.push(sequencer.next(opaque(decoded.seq, decoded.type, [depthProblem(decoded.seq)], l.text), l.line))
  } else out.push(sequencer.nextOf(decoded, decoded.seq, decoded.type, misfiledCheckpoint(decoded, decoded.type) ?? NO_PROBLEMS, l.text, l.line))
}

function isCompactSource(source: unknown): boolean {
  if (typeof source !== 'object' || source === null) return false
  const { kind, plugin } = source as { kind?: unknown; plugin?: unknown }
  return kind === 'plugin' && plugin === 'compact'
}

/**
 * INV-14's "the checkpoint is a `user/message`": an event of another type that carries the compact checkpoint
 * source (§1.6) is a checkpoint stored under the wrong type. Judged per line, folded or not (an
 * `assistant/message` checkpoint usually also lacks `turn`/`step` and is opaque to the fold).
 */
function misfiledCheckpoint(raw: unknown, type: string): InputProblem[] | null {
  if (type === 'user/message' || typeof raw !== 'object' || raw === null) return null
  const data = (raw as { data?: unknown }).data
  if (typeof data !== 'object' || data === null) return null
  // A user/message's data is its message; other surface types hold theirs under `message`.
  const message = (data as { message?: unknown }).message
  if (!isCompactSource((data as { source?: unknown }).source) && !(typeof message === 'object' && message !== null && isCompactSource((message as { source?: unknown }).source))) return null
  return [{
    id: 'INV-14', seq: seqOf(raw) ?? -1,
    message: `a checkpoint (source {kind:'plugin', plugin:'compact'}) is stored as ${type}: the checkpoint is one user/message with that source and surfaceOp replace (§1.4.4, §1.6)`,
  }]
}

/** A line the codec refused: a dropped torn tail, an input error, or an event judged for its problems. */
function rejectLine(error: LogError, l: LogLine, tornable: boolean, opts: DecodeOptions, options: InputOptions, sequencer: Sequencer, out: ItemSink): void {
  const torn = new TornTail({ line: l.line, reason: error.reason })
  switch (error.code) {
    case 'INVALID_JSON':
      if (error.cause instanceof SyntaxError) {
        if (l.last) out.push(torn)
        else inputError('CORRUPT_LINE', `${error.reason}; only the final line of a log may be torn (§1.1)`, opts, error)
      } else if (tornable) out.push(torn)
      else out.push(sequencer.next(opaque(null, '?', [{ id: 'INV-02', seq: -1, message: error.reason }], l.text), l.line))
      return
    case 'HEADER':
    case 'PACKED_ROW':
      if (tornable) out.push(torn)
      else inputError(error.code, error.reason, opts, error)
      return
    default:
      // An event that breaks a validation rule: judged, never fatal (a torn unterminated tail is dropped).
      if (tornable) out.push(torn)
      else out.push(sequencer.next(judgeEvent(JSON.parse(l.text) as unknown, options, l.text), l.line))
  }
}

/**
 * True when `value` nests deeper than `NESTING_DEPTH_MAX`. Recursion is bounded by the limit itself (at most
 * `NESTING_DEPTH_MAX` frames) and allocates nothing per value, unlike an explicit stack of pairs. In-memory
 * values may be cyclic: a cycle recurses until the bound and counts as too deep.
 */
function tooDeep(value: unknown): boolean {
  return deeperThan(value, NESTING_DEPTH_MAX)
}

function deeperThan(v: unknown, levelsLeft: number): boolean {
  if (typeof v !== 'object' || v === null) return false
  if (levelsLeft === 0) return true
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) if (deeperThan(v[i], levelsLeft - 1)) return true
    return false
  }
  for (const key in v) if (deeperThan((v as Record<string, unknown>)[key], levelsLeft - 1)) return true
  return false
}

/** The INV-02 problem of an event nested beyond the checker's bound. */
function depthProblem(seq: number | null): InputProblem {
  return { id: 'INV-02', seq: seq ?? -1, message: `the event nests deeper than ${NESTING_DEPTH_MAX} levels (beyond the checker's bound; judged malformed)` }
}

function opaque(writtenSeq: number | null, type: string, problems: readonly InputProblem[], source: unknown): Decoded {
  return { event: null, writtenSeq, type, problems, source }
}

function seqOf(raw: unknown): number | null {
  if (typeof raw !== 'object' || raw === null) return null
  const s = (raw as { seq?: unknown }).seq
  return Number.isSafeInteger(s) && (s as number) >= 0 && !Object.is(s, -0) ? (s as number) : null
}

function typeOf(raw: unknown): string {
  if (typeof raw !== 'object' || raw === null) return '?'
  const t = (raw as { type?: unknown }).type
  return typeof t === 'string' && t !== '' ? t : '?'
}

function cloneOf(value: unknown): Record<string, unknown> | undefined {
  try {
    const copy: unknown = structuredClone(value)
    return typeof copy === 'object' && copy !== null && !Array.isArray(copy) ? (copy as Record<string, unknown>) : undefined
  } catch {
    return undefined // functions, symbols, class instances with internal slots: not lossless JSON; INV-02 reports it
  }
}

/**
 * Judges one event object: validates it; on failure classifies the broken rule to its invariant, and when
 * the rule leaves the event's shape intact, repairs a probe copy (and, for metadata, the folded copy) and
 * validates again, so one event can report several problems and still be folded.
 */
function judgeEvent(raw: unknown, options: InputOptions, text: string | undefined): Decoded {
  const writtenSeq = seqOf(raw)
  const type = typeOf(raw)
  const source: unknown = text ?? raw
  if (tooDeep(raw)) return opaque(writtenSeq, type, [depthProblem(writtenSeq)], source)
  const opts = { dialect: options.dialect, knownTypes: options.knownTypes }
  const misfiled = misfiledCheckpoint(raw, type)
  try {
    const event = validateEvent(raw, opts)
    return { event, writtenSeq, type, problems: misfiled ?? NO_PROBLEMS, source }
  } catch (error) {
    if (!(error instanceof LogError)) throw error
  }
  const problems: InputProblem[] = misfiled ?? []
  const folded = cloneOf(raw)
  const probe = cloneOf(raw)
  if (folded === undefined || probe === undefined) {
    return opaque(writtenSeq, type, [{ id: 'INV-02', seq: writtenSeq ?? -1, message: describeUnclonable(raw) }], source)
  }
  for (let round = 0; round < VALIDATION_ROUNDS_MAX; round++) {
    try {
      validateEvent(probe, opts)
      return { event: folded as unknown as LogEvent, writtenSeq, type, problems, source }
    } catch (error) {
      if (!(error instanceof LogError)) throw error
      const verdict = classify(error, type, options.dialect, folded, probe)
      for (const id of verdict.ids) {
        if (problems.length < PROBLEMS_PER_LINE_MAX) problems.push({ id, seq: writtenSeq ?? -1, message: error.reason + fieldNote(error) })
      }
      if (!verdict.repaired) return opaque(writtenSeq, type, problems, source)
    }
  }
  return opaque(writtenSeq, type, problems, source)
}

function describeUnclonable(raw: unknown): string {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return `expected an event object, got ${raw === null ? 'null' : Array.isArray(raw) ? 'an array' : typeof raw}`
  return 'the event is not lossless JSON (it holds a value that cannot be copied: a function, symbol or class instance)'
}

function fieldNote(error: LogError): string {
  return error.location.field === undefined ? '' : ` (field ${error.location.field})`
}

/** The invariants a validation failure breaks, and whether a shape-preserving repair was applied. */
interface Verdict {
  ids: InvariantId[]
  repaired: boolean
}

/**
 * Maps one validation failure to the invariant that owns the rule (§12) and applies the repair when the
 * rule leaves the shape intact: `probe` is what gets validated next, `folded` is what the fold will see.
 * Metadata repairs (surfaceOp on a log-only type, provenance) change both; payload repairs change only the
 * probe, so the fold sees the event as written and the owning check judges it again.
 */
function classify(error: LogError, type: string, dialect: Dialect, folded: Record<string, unknown>, probe: Record<string, unknown>): Verdict {
  const field = error.location.field ?? ''
  const data = probe['data']
  const probeData = typeof data === 'object' && data !== null && !Array.isArray(data) ? (data as Record<string, unknown>) : undefined
  switch (error.code) {
    case 'SURFACE_OP': {
      const logOnly = !isSurfaceType(type, dialect)
      if (logOnly && (field === 'surfaceOp' || field === 'sourceEventSeqs')) {
        delete folded[field]
        delete probe[field]
        const onSurface = field === 'surfaceOp' && (type.startsWith('compaction/') || type === 'image/offload')
        return { ids: onSurface ? ['INV-03', 'INV-30'] : ['INV-03'], repaired: true }
      }
      return { ids: ['INV-03'], repaired: false }
    }
    case 'PROVENANCE':
      repairProvenance(folded, type)
      repairProvenance(probe, type)
      return { ids: ['INV-04'], repaired: true }
    case 'DATA':
      if (probeData !== undefined) {
        const repaired = repairPayload(type, field, dialect, probeData)
        if (repaired !== null) return { ids: [repaired], repaired: true }
      }
      return { ids: ['INV-02'], repaired: false }
    default:
      return { ids: ['INV-02'], repaired: false }
  }
}

/** Keeps the unique non-negative integer seqs below the event's own seq; drops an empty list where it is not allowed. */
function repairProvenance(event: Record<string, unknown>, type: string): void {
  const list = event['sourceEventSeqs']
  const seq = event['seq']
  if (!Array.isArray(list) || !Number.isSafeInteger(seq)) {
    delete event['sourceEventSeqs']
    return
  }
  const seen = new Set<number>()
  const kept: number[] = []
  for (const s of list as unknown[]) {
    if (Number.isSafeInteger(s) && (s as number) >= 0 && (s as number) < (seq as number) && !seen.has(s as number)) {
      seen.add(s as number)
      kept.push(s as number)
    }
  }
  if (kept.length === 0 && type !== 'assistant/message') delete event['sourceEventSeqs']
  else event['sourceEventSeqs'] = kept
}

/**
 * Payload rules whose breach leaves the event foldable, with the invariant that owns each (§12): ids of
 * a bracket (INV-10), the summary record (INV-16), the prune record (INV-20), header form and reasons
 * (INV-41). Returns the owning id after patching `data` of the probe, or null for any other rule.
 */
function repairPayload(type: string, field: string, dialect: Dialect, data: Record<string, unknown>): InvariantId | null {
  if (type.startsWith('compaction/') && (field === 'data.compactionId' || field === 'data.sourceCommandId')) {
    const key = field === 'data.compactionId' ? 'compactionId' : 'sourceCommandId'
    if (data[key] !== '') return null
    data[key] = '?'
    return 'INV-10'
  }
  if (type === 'compaction/summary') {
    if (field === 'data.shadowedSeqs' && Array.isArray(data['shadowedSeqs']) && data['shadowedSeqs'].length === 0) {
      data['shadowedSeqs'] = [0]
      return 'INV-16'
    }
    // Only a missing rawOutput breaks the stream-call rule; a malformed one is a shape error (INV-02) either way.
    if (field === 'data.rawOutput' && data['llmStreamCall'] === true && !Object.hasOwn(data, 'rawOutput')) {
      delete data['llmStreamCall']
      return 'INV-16'
    }
    const summaryBlock = /^data\.summary\[(\d+)\]\.type$/.exec(field)
    const blocks = data['summary']
    if (summaryBlock !== null && Array.isArray(blocks)) {
      blocks[Number(summaryBlock[1])] = { type: 'text', text: '' }
      return 'INV-16'
    }
    return null
  }
  if (type === 'compaction/prune' && field === 'data.shadowedSeqs') {
    const list = data['shadowedSeqs']
    if (!Array.isArray(list) || list.length === 1) return null
    data['shadowedSeqs'] = [0]
    return 'INV-20'
  }
  if (type === 'request/header') {
    if (field === 'data.header.system' && dialect === 'seed') {
      const header = data['header'] as Record<string, unknown>
      delete header['system']
      return 'INV-41'
    }
    if (field === 'data.startsSeries') {
      delete data['startsSeries']
      return 'INV-41'
    }
    if (field === 'data.reason' && typeof data['reason'] === 'string') {
      data['reason'] = 'change'
      return 'INV-41'
    }
  }
  return null
}
