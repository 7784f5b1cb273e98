/**
 * Reading JSONL session logs (§1.1, design §4 item 1): plain or `.jsonl.zstd` files, streamed in
 * bounded memory; the optional header record; DSH packed chunk rows expanded in place; INV-01
 * contiguity; and the torn-tail rule (only the final line may be torn; it is reported and dropped,
 * never merged). Read side only: nothing here writes.
 */
import { Buffer, isUtf8 } from 'node:buffer'
import { createReadStream } from 'node:fs'
import { open, type FileHandle } from 'node:fs/promises'
import { Decompress } from 'fzstd'
import { assertNever, LogError, type LogErrorLocation } from '../errors.ts'
import { decodeLine, expandPackedRow, isHeaderRecord, isPackedChunkRow } from './codec.ts'
import type { LogEvent, SessionHeaderRecord } from './events.ts'
import type { ValidateOptions } from './validate.ts'

/** Options of the log readers: the dialect and the extra known types (the reader supplies line and file). */
export interface ReadLogOptions extends Omit<ValidateOptions, 'line' | 'file'> {}

/** A torn final line that was reported and dropped (§1.1). `offset` is its first byte in the uncompressed JSONL. */
export interface TornTail {
  line: number
  text: string
  reason: string
  offset: number
}

/**
 * One line of a log file. `line` is 1-based; `last` marks the final line; `terminated` is false only for
 * a final line without a trailing newline; `offset` is the byte offset of its first byte (uncompressed);
 * `invalidUtf8` is set when its bytes are not UTF-8 (then `text` holds replacement characters).
 */
export interface LogLine {
  line: number
  text: string
  last: boolean
  terminated: boolean
  offset: number
  invalidUtf8?: true
}

/** What a log stream yields, in file order: the header record, events (packed rows already expanded), a torn tail. */
export type LogStreamItem =
  | { kind: 'header'; line: number; header: SessionHeaderRecord }
  | { kind: 'event'; line: number; event: LogEvent }
  | { kind: 'torn'; tail: TornTail }

/** A whole log read into memory. */
export interface ReadLogResult {
  header?: SessionHeaderRecord
  events: LogEvent[]
  tornTail?: TornTail
}

/** Tuning of `readLogLines`; `chunkSize` is the read size in bytes (default 1 MiB for plain logs, 64 KiB for zstd). */
export interface ReadLinesOptions {
  chunkSize?: number
}

const DEFAULT_CHUNK = 64 * 1024

/**
 * Default read size of a plain log (reads into one reused buffer): fewer asynchronous reads, each a thread-pool
 * round trip that a loaded machine delays. Lines are decoded one by one, so a batch holds no shared block.
 */
const PLAIN_READ_BYTES = 1024 * 1024

/** True when the path names a compressed log by its extension (`.zstd` / `.zst`). */
export function isZstdPath(path: string): boolean {
  const lower = path.toLowerCase()
  return lower.endsWith('.zstd') || lower.endsWith('.zst')
}

/** True when `bytes` start with a zstd frame (magic 28 B5 2F FD) or a zstd skippable frame (5? 2A 4D 18). */
export function hasZstdMagic(bytes: Uint8Array): boolean {
  if (bytes.length < 4) return false
  if (bytes[0] === 0x28 && bytes[1] === 0xb5 && bytes[2] === 0x2f && bytes[3] === 0xfd) return true
  return ((bytes[0] as number) & 0xf0) === 0x50 && bytes[1] === 0x2a && bytes[2] === 0x4d && bytes[3] === 0x18
}

function located(file: string | undefined, line?: number): LogErrorLocation {
  const where: LogErrorLocation = {}
  if (file !== undefined) where.file = file
  if (line !== undefined) where.line = line
  return where
}

function ioError(error: unknown, file: string): LogError {
  if (error instanceof LogError) return error
  const detail = error instanceof Error ? error.message : String(error)
  return new LogError('IO', `cannot read the log: ${detail}`, { file }, { cause: error })
}

// ---------------------------------------------------------------------------------------------
// Bytes: plain or zstd (fzstd streaming; concatenated frames decode as one stream)

class ZstdStream {
  private out: Uint8Array[] = []
  private readonly decoder = new Decompress((data) => {
    if (data.length > 0) this.out.push(data)
  })

  constructor(private readonly file: string) {}

  push(chunk: Uint8Array, final: boolean): Uint8Array[] {
    try {
      this.decoder.push(chunk, final)
    } catch (error) {
      const detail = error instanceof Error ? error.message : String(error)
      throw new LogError('IO', `cannot decompress the zstd log: ${detail} (a .jsonl.zstd file holds one or more zstd frames, §1.1)`, { file: this.file }, { cause: error })
    }
    const out = this.out
    this.out = []
    return out
  }
}

async function* fileChunks(path: string, chunkSize: number): AsyncGenerator<Uint8Array> {
  const stream = createReadStream(path, { highWaterMark: chunkSize })
  let zstd: ZstdStream | undefined = isZstdPath(path) ? new ZstdStream(path) : undefined
  let decided = zstd !== undefined
  let head: Buffer[] = []
  try {
    for await (const piece of stream as AsyncIterable<Buffer>) {
      let chunk: Uint8Array = piece
      if (!decided) {
        head.push(piece)
        const joined = Buffer.concat(head)
        if (joined.length < 4) continue
        decided = true
        head = []
        if (hasZstdMagic(joined)) zstd = new ZstdStream(path)
        chunk = joined
      }
      if (zstd !== undefined) yield* zstd.push(chunk, false)
      else yield chunk
    }
    if (!decided && head.length > 0) yield Buffer.concat(head)
    if (zstd !== undefined) yield* zstd.push(new Uint8Array(0), true)
  } catch (error) {
    throw ioError(error, path)
  } finally {
    stream.destroy()
  }
}

// ---------------------------------------------------------------------------------------------
// Lines: split, then number and classify (shared by the byte and the text paths)

/**
 * A line before numbering: already a `LogLine` (one object per line; `line` and `last` are filled in when the
 * sequencer releases it).
 */
type RawLine = LogLine

function rawLine(text: string, terminated: boolean, offset: number): RawLine {
  return { line: 0, text, last: false, terminated, offset }
}

function rawFromBytes(bytes: Buffer, terminated: boolean, offset: number): RawLine {
  const raw = rawLine(bytes.toString('utf8'), terminated, offset)
  if (!isUtf8(bytes)) raw.invalidUtf8 = true
  return raw
}

/** Raw lines of `block` (complete lines joined by '\n', no final newline) starting at byte `offset`. */
function blockLines(block: Buffer, offset: number): RawLine[] {
  const out: RawLine[] = []
  if (isUtf8(block)) {
    // Fast path: one decode per block; when it is all ASCII, byte offsets equal string offsets.
    const text = block.toString('utf8')
    const ascii = text.length === block.length
    let pos = 0
    for (;;) {
      const nl = text.indexOf('\n', pos)
      const line = text.slice(pos, nl < 0 ? text.length : nl)
      out.push(rawLine(line, true, offset))
      if (nl < 0) return out
      offset += (ascii ? line.length : Buffer.byteLength(line)) + 1
      pos = nl + 1
    }
  }
  let pos = 0
  for (;;) {
    const nl = block.indexOf(0x0a, pos)
    const bytes = block.subarray(pos, nl < 0 ? block.length : nl)
    out.push(rawFromBytes(bytes, true, offset))
    if (nl < 0) return out
    offset += bytes.length + 1
    pos = nl + 1
  }
}

/** Splits a byte stream at '\n' into raw lines, one array per input chunk that completes a line. */
async function* splitBytes(chunks: AsyncIterable<Uint8Array>): AsyncGenerator<RawLine[]> {
  let parts: Buffer[] = []
  let offset = 0
  for await (const chunk of chunks) {
    const buf = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength)
    const lastNl = buf.lastIndexOf(0x0a)
    if (lastNl < 0) {
      if (buf.length > 0) parts.push(buf)
      continue
    }
    let block = buf.subarray(0, lastNl)
    if (parts.length > 0) {
      parts.push(block)
      block = Buffer.concat(parts)
      parts = []
    }
    if (lastNl + 1 < buf.length) parts.push(buf.subarray(lastNl + 1))
    yield blockLines(block, offset)
    offset += block.length + 1
  }
  if (parts.length > 0) yield [rawFromBytes(Buffer.concat(parts), false, offset)]
}

/** Splits in-memory text at '\n' into raw lines (offsets in UTF-8 bytes). */
function splitText(text: string): RawLine[] {
  const out: RawLine[] = []
  let pos = 0
  let offset = 0
  while (pos < text.length) {
    const nl = text.indexOf('\n', pos)
    const line = text.slice(pos, nl < 0 ? text.length : nl)
    out.push(rawLine(line, nl >= 0, offset))
    if (nl < 0) break
    offset += Buffer.byteLength(line) + 1
    pos = nl + 1
  }
  return out
}

/**
 * Numbers raw lines and marks the last one by holding one line back. An empty line is an error
 * (CORRUPT_LINE), raised only when that line is released, so earlier lines are processed first;
 * the empty remainder after a final newline is not a line at all.
 */
class LineSequencer {
  private held: RawLine | undefined
  private count = 0

  constructor(private readonly file: string | undefined) {}

  push(raw: RawLine): LogLine | undefined {
    const previous = this.held
    this.held = raw
    return previous === undefined ? undefined : this.release(previous, false)
  }

  end(): LogLine | undefined {
    const previous = this.held
    this.held = undefined
    return previous === undefined ? undefined : this.release(previous, true)
  }

  private release(raw: RawLine, last: boolean): LogLine {
    const line = ++this.count
    if (raw.text === '' && raw.terminated) {
      throw new LogError('CORRUPT_LINE', 'empty line; every line of a log holds one JSON record (§1.1)', located(this.file, line))
    }
    raw.line = line
    raw.last = last
    return raw
  }
}

/** Feeds raw-line batches through a sequencer; a sequencing error is raised after the lines before it. */
function* sequenceBatch(sequencer: LineSequencer, raws: readonly RawLine[] | undefined): Generator<LogLine[]> {
  const lines: LogLine[] = []
  try {
    if (raws === undefined) {
      const last = sequencer.end()
      if (last !== undefined) lines.push(last)
    } else {
      for (const raw of raws) {
        const line = sequencer.push(raw)
        if (line !== undefined) lines.push(line)
      }
    }
  } catch (error) {
    if (lines.length > 0) yield lines
    throw error
  }
  if (lines.length > 0) yield lines
}

async function* lineBatches(path: string, chunkSize: number | undefined): AsyncGenerator<LogLine[]> {
  const sequencer = new LineSequencer(path)
  const plain = isZstdPath(path) ? null : await openPlain(path)
  if (plain === null) {
    for await (const raws of splitBytes(fileChunks(path, chunkSize ?? DEFAULT_CHUNK))) yield* sequenceBatch(sequencer, raws)
  } else {
    for await (const raws of plainLines(plain, path, chunkSize ?? PLAIN_READ_BYTES)) yield* sequenceBatch(sequencer, raws)
  }
  yield* sequenceBatch(sequencer, undefined)
}

/** An open file that is not zstd by its first bytes, or null when it is (the stream path decompresses it). */
async function openPlain(path: string): Promise<FileHandle | null> {
  let handle: FileHandle
  try {
    handle = await open(path, 'r')
  } catch (error) {
    throw ioError(error, path)
  }
  try {
    const head = Buffer.alloc(4)
    const { bytesRead } = await handle.read(head, 0, 4, 0)
    if (!hasZstdMagic(head.subarray(0, bytesRead))) return handle
  } catch (error) {
    await handle.close()
    throw ioError(error, path)
  }
  await handle.close()
  return null
}

/**
 * Raw lines of a plain log, one array per read. Reads into two reused buffers in turn and cuts lines with
 * `indexOf(0x0a)`; the next read is in flight while the lines of the current one are decoded and consumed
 * (each read is a thread-pool round trip). Lines are decoded one by one, so no line string keeps a block
 * alive and no `Buffer` is allocated per read. A line longer than a buffer doubles it. Closes the handle.
 */
async function* plainLines(handle: FileHandle, path: string, chunkSize: number): AsyncGenerator<RawLine[]> {
  const size = Math.max(chunkSize, 4)
  let cur = Buffer.allocUnsafe(size)
  let spare = Buffer.allocUnsafe(size)
  const read = async (into: Buffer, at: number): Promise<number> => {
    try {
      return (await handle.read(into, at, into.length - at, null)).bytesRead
    } catch (error) {
      throw ioError(error, path)
    }
  }
  let filled = 0 // bytes of an incomplete line carried at the start of `cur`
  let offset = 0 // file offset of cur[0]
  let pending = read(cur, 0)
  try {
    for (;;) {
      const bytesRead = await pending
      if (bytesRead === 0) break
      const end = filled + bytesRead
      const lastNl = cur.lastIndexOf(0x0a, end - 1)
      if (lastNl < filled) {
        // No newline in the new bytes (the carried ones hold none): read on, into a bigger buffer when full.
        filled = end
        if (filled === cur.length) {
          const bigger = Buffer.allocUnsafe(cur.length * 2)
          cur.copy(bigger, 0, 0, filled)
          cur = bigger
        }
        pending = read(cur, filled)
        continue
      }
      const carry = end - lastNl - 1
      if (spare.length < Math.max(carry * 2, size)) spare = Buffer.allocUnsafe(Math.max(carry * 2, size))
      cur.copy(spare, 0, lastNl + 1, end)
      pending = read(spare, carry)
      const lines = cutLines(cur, lastNl, offset)
      offset += lastNl + 1
      filled = carry
      const done = cur
      cur = spare
      spare = done
      yield lines
    }
    if (filled > 0) yield [rawFromBytes(Buffer.from(cur.subarray(0, filled)), false, offset)]
  } finally {
    await pending.catch(() => 0) // a read still in flight when the consumer stopped early or a line failed
    await handle.close()
  }
}

/** The raw lines of `buf[0 … end)` (complete lines joined by '\n'), decoded one by one; `offset` is the file offset of buf[0]. */
function cutLines(buf: Buffer, end: number, offset: number): RawLine[] {
  const out: RawLine[] = []
  const utf8 = isUtf8(buf.subarray(0, end))
  let pos = 0
  for (;;) {
    const nl = buf.indexOf(0x0a, pos)
    const stop = nl < 0 || nl > end ? end : nl
    out.push(utf8 ? rawLine(buf.toString('utf8', pos, stop), true, offset + pos) : rawFromBytes(buf.subarray(pos, stop), true, offset + pos))
    if (stop === end) return out
    pos = stop + 1
  }
}

/**
 * Streams the lines of a log file (plain, or `.jsonl.zstd` detected by extension or magic bytes) in
 * bounded memory. A final line without a trailing newline is still a line (`terminated: false`).
 * Throws `LogError` IO (unreadable or undecompressable file) or CORRUPT_LINE (an empty line), with `file`.
 */
export async function* readLogLines(path: string, options: ReadLinesOptions = {}): AsyncGenerator<LogLine> {
  for await (const batch of lineBatches(path, options.chunkSize)) yield* batch
}

/**
 * `readLogLines` in batches (one array per read chunk, same lines, same rules and errors): one async step
 * per batch instead of per line, for streaming consumers whose per-line work is synchronous (the checker).
 */
export function readLogLineBatches(path: string, options: ReadLinesOptions = {}): AsyncGenerator<LogLine[]> {
  return lineBatches(path, options.chunkSize)
}

// ---------------------------------------------------------------------------------------------
// Records: decode, expand rows, check INV-01, apply the torn-tail rule

class LineProcessor {
  private nextSeq = 0
  /** Reused per line (decodeLine reads it synchronously and keeps no reference). */
  private readonly decodeOptions: ValidateOptions & { first: boolean }

  constructor(
    opts: ReadLogOptions,
    private readonly file: string | undefined,
  ) {
    this.decodeOptions = { dialect: opts.dialect, knownTypes: opts.knownTypes, line: 0, file, first: true }
  }

  /** Decodes one line into `out`; throws for a bad line that is not a torn tail. */
  process(l: LogLine, out: LogStreamItem[]): void {
    let decoded: ReturnType<typeof decodeLine>
    try {
      if (l.invalidUtf8 === true) throw new LogError('INVALID_JSON', 'the line is not valid UTF-8', located(this.file, l.line))
      this.decodeOptions.line = l.line
      this.decodeOptions.first = l.line === 1
      decoded = decodeLine(l.text, this.decodeOptions)
      if (!isHeaderRecord(decoded)) {
        const packed = isPackedChunkRow(decoded)
        const seq: number = isPackedChunkRow(decoded) ? decoded.seq0 : decoded.seq
        if (seq !== this.nextSeq) {
          const where: LogErrorLocation = { ...located(this.file, l.line), seq, field: packed ? 'seq0' : 'seq' }
          const what = seq < this.nextSeq ? 'a duplicate or out-of-order seq' : 'a gap'
          throw new LogError('SEQ', `expected seq ${this.nextSeq}, got ${seq} (${what}); the k-th event holds seq k (INV-01)`, where)
        }
      }
    } catch (error) {
      this.reject(l, error, out)
      return
    }
    if (isHeaderRecord(decoded)) {
      out.push({ kind: 'header', line: l.line, header: decoded })
    } else if (isPackedChunkRow(decoded)) {
      for (const event of expandPackedRow(decoded)) out.push({ kind: 'event', line: l.line, event })
      this.nextSeq += decoded.data.dt.length + 1
    } else {
      out.push({ kind: 'event', line: l.line, event: decoded })
      this.nextSeq += 1
    }
  }

  /** The torn-tail rule (§1.1, design §4.1): only the final line may be torn; anything else is an error. */
  private reject(l: LogLine, error: unknown, out: LogStreamItem[]): void {
    if (!(error instanceof LogError)) throw error
    const unparsable = l.invalidUtf8 === true || (error.code === 'INVALID_JSON' && error.cause instanceof SyntaxError)
    if (l.last && (unparsable || !l.terminated)) {
      out.push({ kind: 'torn', tail: { line: l.line, text: l.text, reason: error.reason, offset: l.offset } })
      return
    }
    if (error.code === 'INVALID_JSON') {
      throw new LogError('CORRUPT_LINE', `${error.reason}; only the final line of a log may be torn (§1.1)`, located(this.file, l.line), { cause: error })
    }
    throw this.file !== undefined && error.location.file === undefined ? error.at({ file: this.file }) : error
  }
}

function* processBatch(processor: LineProcessor, lines: readonly LogLine[]): Generator<LogStreamItem[]> {
  const items: LogStreamItem[] = []
  try {
    for (const line of lines) processor.process(line, items)
  } catch (error) {
    if (items.length > 0) yield items
    throw error
  }
  if (items.length > 0) yield items
}

async function* itemBatches(path: string, opts: ReadLogOptions): AsyncGenerator<LogStreamItem[]> {
  const processor = new LineProcessor(opts, path)
  for await (const lines of lineBatches(path, undefined)) yield* processBatch(processor, lines)
}

/**
 * Streams a log file as tagged items in file order: `header` (line 1 only), `event` (packed rows
 * expanded in place, each expanded event reporting the row's line), and at most one final `torn`.
 * Throws `LogError` (with `file` and `line`) for a bad line that is not the final one: CORRUPT_LINE for
 * unparsable text, SEQ for a break of INV-01, else the validation code.
 */
export async function* streamLogEvents(path: string, opts: ReadLogOptions): AsyncGenerator<LogStreamItem> {
  for await (const batch of itemBatches(path, opts)) yield* batch
}

class ResultCollector {
  readonly result: ReadLogResult = { events: [] }

  add(items: readonly LogStreamItem[]): void {
    for (const item of items) {
      switch (item.kind) {
        case 'header':
          this.result.header = item.header
          break
        case 'event':
          this.result.events.push(item.event)
          break
        case 'torn':
          this.result.tornTail = item.tail
          break
        default:
          assertNever(item, 'log item')
      }
    }
  }
}

/** Reads a whole log file into memory (see `streamLogEvents` for the rules and errors). */
export async function readLog(path: string, opts: ReadLogOptions): Promise<ReadLogResult> {
  const collector = new ResultCollector()
  for await (const batch of itemBatches(path, opts)) collector.add(batch)
  return collector.result
}

/** `readLog` for in-memory JSONL text (same rules; `file` only names the source in errors). */
export function parseLogText(text: string, opts: ReadLogOptions & { file?: string }): ReadLogResult {
  const collector = new ResultCollector()
  const sequencer = new LineSequencer(opts.file)
  const processor = new LineProcessor(opts, opts.file)
  for (const raws of [splitText(text), undefined]) {
    for (const lines of sequenceBatch(sequencer, raws)) {
      for (const items of processBatch(processor, lines)) collector.add(items)
    }
  }
  return collector.result
}
