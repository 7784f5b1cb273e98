/**
 * The durable JSONL log store (design §4 item 1, §1.1): appends are fsync'ed before they are
 * acknowledged; concurrent appends are serialized in call order and group-committed (one write + one
 * fsync per batch); on open a torn final line is reported and truncated away, never merged.
 */
import { Buffer } from 'node:buffer'
import { open, type FileHandle } from 'node:fs/promises'
import { dirname } from 'node:path'
import { LogError } from '../errors.ts'
import { encodeEvent, encodeHeaderRecord } from './codec.ts'
import type { Dialect, LogEvent, SessionHeaderRecord } from './events.ts'
import { hasZstdMagic, isZstdPath, readLog, type TornTail } from './reader.ts'

/** Options of `JsonlLogStore.open`. `header` is written only into a new or empty file; `create` allows a missing file. */
export interface JsonlLogStoreOptions {
  dialect: Dialect
  knownTypes?: ReadonlySet<string>
  header?: SessionHeaderRecord
  create?: boolean
  /**
   * Called synchronously once per appended event, in seq order, right after the fsync that made it durable
   * and before the store starts its next write, so a caller that blocks here (the crash harness, §13.4)
   * stops the writer exactly at that event. When set, appends are committed one call at a time (no group
   * commit): a durable point lies between any two `append` calls. If it throws, that append rejects with
   * the error (its events stay durable) and the store refuses further appends.
   */
  onDurable?: (event: LogEvent) => void
}

/** What `JsonlLogStore.open` found: the store, the stored events and header, and the torn tail it truncated away. */
export interface OpenedLogStore {
  store: JsonlLogStore
  events: LogEvent[]
  header?: SessionHeaderRecord
  tornTail?: TornTail
}

interface PendingAppend {
  readonly bytes: Buffer
  readonly events: readonly LogEvent[]
  readonly resolve: () => void
  readonly reject: (error: unknown) => void
}

const NEWLINE = 0x0a

function errorCode(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null && 'code' in error && typeof error.code === 'string' ? error.code : undefined
}

function ioError(error: unknown, file: string, what: string): LogError {
  if (error instanceof LogError) return error
  const detail = error instanceof Error ? error.message : String(error)
  return new LogError('IO', `${what}: ${detail}`, { file }, { cause: error })
}

async function writeAll(handle: FileHandle, bytes: Buffer, position: number): Promise<void> {
  let done = 0
  while (done < bytes.length) {
    const { bytesWritten } = await handle.write(bytes, done, bytes.length - done, position + done)
    if (bytesWritten <= 0) throw new Error('write made no progress')
    done += bytesWritten
  }
}

/** fsync of a directory, so a newly created file's directory entry is durable. */
async function syncDirectory(dir: string): Promise<void> {
  if (process.platform === 'win32') return
  const handle = await open(dir, 'r')
  try {
    await handle.sync()
  } finally {
    await handle.close()
  }
}

/**
 * An append-only JSONL session log on disk. Create with `JsonlLogStore.open`. It checks only that
 * appended seqs continue its count (INV-01); semantic validation is the caller's (the in-memory log).
 */
export class JsonlLogStore {
  /** The file this store appends to. */
  readonly path: string
  private readonly handle: FileHandle
  private size: number
  private reserved: number
  private durable: number
  private queue: PendingAppend[] = []
  private flushing = false
  private drained: Promise<void> = Promise.resolve()
  private failure: LogError | undefined
  private closed = false
  private closing: Promise<void> | undefined
  private readonly onDurable: ((event: LogEvent) => void) | undefined

  private constructor(path: string, handle: FileHandle, count: number, size: number, onDurable?: (event: LogEvent) => void) {
    this.path = path
    this.handle = handle
    this.onDurable = onDurable
    this.reserved = count
    this.durable = count
    this.size = size
  }

  /**
   * Opens (or, with `create: true`, creates) a plain JSONL log for appending. A new file gets the header
   * line (if given) and is fsync'ed together with its directory. An existing file is read with the reader
   * (errors as `readLog`); a torn final line is truncated away (ftruncate + fsync) and reported; a final
   * complete line without its newline gets one. Compressed logs are refused (IO).
   */
  static async open(path: string, opts: JsonlLogStoreOptions): Promise<OpenedLogStore> {
    if (isZstdPath(path)) {
      throw new LogError('IO', 'refusing to open a compressed log for writing; .jsonl.zstd logs are read-only (§1.1)', { file: path })
    }
    let handle: FileHandle
    try {
      handle = await open(path, 'r+')
    } catch (error) {
      if (errorCode(error) !== 'ENOENT') throw ioError(error, path, 'cannot open the log')
      if (opts.create !== true) throw ioError(error, path, 'the log does not exist (open it with create: true to create it)')
      return JsonlLogStore.create(path, opts)
    }
    try {
      return await JsonlLogStore.recover(path, handle, opts)
    } catch (error) {
      await handle.close().catch(() => undefined)
      throw ioError(error, path, 'cannot open the log')
    }
  }

  private static async create(path: string, opts: JsonlLogStoreOptions): Promise<OpenedLogStore> {
    let handle: FileHandle
    try {
      handle = await open(path, 'wx')
    } catch (error) {
      throw ioError(error, path, 'cannot create the log')
    }
    try {
      let size = 0
      if (opts.header !== undefined) {
        const bytes = Buffer.from(`${encodeHeaderRecord(opts.header)}\n`)
        await writeAll(handle, bytes, 0)
        size = bytes.length
      }
      await handle.sync()
      await syncDirectory(dirname(path))
      const store = new JsonlLogStore(path, handle, 0, size, opts.onDurable)
      return opts.header !== undefined ? { store, events: [], header: opts.header } : { store, events: [] }
    } catch (error) {
      await handle.close().catch(() => undefined)
      throw ioError(error, path, 'cannot create the log')
    }
  }

  private static async recover(path: string, handle: FileHandle, opts: JsonlLogStoreOptions): Promise<OpenedLogStore> {
    const magic = Buffer.alloc(4)
    const { bytesRead } = await handle.read(magic, 0, 4, 0)
    if (hasZstdMagic(magic.subarray(0, bytesRead))) {
      throw new LogError('IO', 'refusing to open a zstd-compressed log for writing (§1.1)', { file: path })
    }
    const read = await readLog(path, { dialect: opts.dialect, knownTypes: opts.knownTypes })
    let size = (await handle.stat()).size
    if (read.tornTail !== undefined) {
      // Never merge: cut the file back to the end of the last complete line (§1.1, design §4.1).
      size = read.tornTail.offset
      await handle.truncate(size)
      await handle.sync()
    } else if (size > 0) {
      const last = Buffer.alloc(1)
      await handle.read(last, 0, 1, size - 1)
      if (last[0] !== NEWLINE) {
        // The final line was complete and valid but its newline was lost: finish it so appends start a new line.
        await writeAll(handle, Buffer.from('\n'), size)
        size += 1
        await handle.sync()
      }
    }
    let header = read.header
    if (size === 0 && opts.header !== undefined) {
      const bytes = Buffer.from(`${encodeHeaderRecord(opts.header)}\n`)
      await writeAll(handle, bytes, 0)
      size = bytes.length
      await handle.sync()
      await syncDirectory(dirname(path))
      header = opts.header
    }
    const result: OpenedLogStore = { store: new JsonlLogStore(path, handle, read.events.length, size, opts.onDurable), events: read.events }
    if (header !== undefined) result.header = header
    if (read.tornTail !== undefined) result.tornTail = read.tornTail
    return result
  }

  /** The seq the next append must start with: events in the file plus those queued by pending appends. */
  get eventCount(): number {
    return this.reserved
  }

  /** Events whose append has been acknowledged (written and fsync'ed). */
  get durableCount(): number {
    return this.durable
  }

  /**
   * Appends events (seqs must continue `eventCount`, else SEQ) and resolves once they are written and
   * fsync'ed: an acknowledged append is durable. Calls are serialized in call order; concurrent calls
   * are coalesced into one write + fsync. After a write failure or `close`, appends reject (IO).
   */
  append(events: readonly LogEvent[]): Promise<void> {
    if (this.closed) return Promise.reject(new LogError('IO', 'the log store is closed', { file: this.path }))
    if (this.failure !== undefined) return Promise.reject(this.failure)
    for (let i = 0; i < events.length; i++) {
      const seq = (events[i] as LogEvent).seq
      if (seq !== this.reserved + i) {
        return Promise.reject(new LogError('SEQ', `an append must continue the log: expected seq ${this.reserved + i}, got ${seq} (INV-01)`, { file: this.path, seq, field: 'seq' }))
      }
    }
    let text = ''
    try {
      for (const event of events) text += `${encodeEvent(event)}\n`
    } catch (error) {
      const detail = error instanceof Error ? error.message : String(error)
      return Promise.reject(new LogError('LOSSY_JSON', `cannot encode the events: ${detail}`, { file: this.path }, { cause: error }))
    }
    this.reserved += events.length
    return new Promise<void>((resolve, reject) => {
      this.queue.push({ bytes: Buffer.from(text), events: [...events], resolve, reject })
      if (!this.flushing) {
        this.flushing = true
        this.drained = this.drain()
      }
    })
  }

  /** Writes queued appends batch by batch (group commit) until the queue is empty. */
  private async drain(): Promise<void> {
    while (this.queue.length > 0) {
      // With an `onDurable` hook, commit one append at a time so the hook sees every durable point.
      let batch: PendingAppend[]
      if (this.onDurable === undefined) {
        batch = this.queue
        this.queue = []
      } else {
        batch = this.queue.splice(0, 1)
      }
      try {
        if (this.failure !== undefined) throw this.failure
        const bytes = batch.length === 1 ? (batch[0] as PendingAppend).bytes : Buffer.concat(batch.map((p) => p.bytes))
        if (bytes.length > 0) {
          await writeAll(this.handle, bytes, this.size)
          this.size += bytes.length
          await this.handle.datasync()
        }
      } catch (error) {
        this.failure ??= ioError(error, this.path, 'append failed; the store refuses further appends (reopen to repair the tail)')
        for (const pending of batch) pending.reject(this.failure)
        continue
      }
      for (const pending of batch) {
        this.durable += pending.events.length
        if (this.onDurable !== undefined && !this.notifyDurable(pending)) continue
        pending.resolve()
      }
    }
    this.flushing = false
  }

  /** Runs the `onDurable` hook for each event of a durable append; a throwing hook fails the append and the store. */
  private notifyDurable(pending: PendingAppend): boolean {
    try {
      for (const event of pending.events) this.onDurable?.(event)
      return true
    } catch (error) {
      this.failure ??= ioError(error, this.path, 'the onDurable hook threw; the store refuses further appends')
      pending.reject(error)
      return false
    }
  }

  /** Waits for pending appends, then closes the file. Idempotent; later appends reject. */
  close(): Promise<void> {
    this.closed = true
    this.closing ??= (async () => {
      while (this.flushing) await this.drained
      await this.handle.close()
    })()
    return this.closing
  }
}
