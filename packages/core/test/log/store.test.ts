/**
 * JsonlLogStore behaviour (design §4 item 1): create/open, header, seq continuity (INV-01), serialized
 * group-committed appends, close, refusal of compressed logs, repair of a final line without newline.
 */
import { copyFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Seq } from '../../src/brand.ts'
import { LogError, type LogErrorCode } from '../../src/errors.ts'
import type { LogEvent, SessionHeaderRecord } from '../../src/log/events.ts'
import { readLog } from '../../src/log/reader.ts'
import { JsonlLogStore } from '../../src/log/store.ts'

const FIXTURES = fileURLToPath(new URL('./fixtures/', import.meta.url))
const HEADER: SessionHeaderRecord = { type: 'session', version: 0, id: 'store-test', createdAt: 1_700_000_000_000 }
let dir = ''
let counter = 0

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'store-test-'))
})
afterAll(async () => {
  await rm(dir, { recursive: true, force: true })
})

const fresh = (ext = 'jsonl'): string => join(dir, `log-${counter++}.${ext}`)

function turn(seq: number): LogEvent {
  return { seq: Seq(seq), time: 1000 + seq, type: 'turn/start', data: { turn: seq + 1 } }
}

async function rejection(promise: Promise<unknown>, code: LogErrorCode): Promise<LogError> {
  const error: unknown = await promise.then(() => undefined, (e: unknown) => e)
  expect(error, 'expected a LogError').toBeInstanceOf(LogError)
  expect((error as LogError).code, String(error)).toBe(code)
  return error as LogError
}

describe('open and create', () => {
  it('creates a new log with its header line, then reopens it', async () => {
    const path = fresh()
    const created = await JsonlLogStore.open(path, { dialect: 'seed', create: true, header: HEADER })
    expect(created.events).toEqual([])
    expect(created.header).toEqual(HEADER)
    await created.store.append([turn(0), turn(1)])
    await created.store.close()
    expect(await readFile(path, 'utf8')).toBe(
      '{"type":"session","version":0,"id":"store-test","createdAt":1700000000000}\n'
      + '{"seq":0,"time":1000,"type":"turn/start","data":{"turn":1}}\n{"seq":1,"time":1001,"type":"turn/start","data":{"turn":2}}\n',
    )
    const reopened = await JsonlLogStore.open(path, { dialect: 'seed', header: { ...HEADER, id: 'ignored' } })
    expect(reopened.header).toEqual(HEADER)
    expect(reopened.events).toEqual([turn(0), turn(1)])
    expect(reopened.store.eventCount).toBe(2)
    await reopened.store.close()
  })

  it('refuses a missing file unless create is set (IO)', async () => {
    const path = fresh()
    const error = await rejection(JsonlLogStore.open(path, { dialect: 'seed' }), 'IO')
    expect(error.location.file).toBe(path)
  })

  it('refuses to open a compressed log for writing, by extension or by magic bytes (IO)', async () => {
    await rejection(JsonlLogStore.open(join(FIXTURES, 'concat-frames.jsonl.zstd'), { dialect: 'seed' }), 'IO')
    await rejection(JsonlLogStore.open(fresh('jsonl.zst'), { dialect: 'seed', create: true }), 'IO')
    const disguised = fresh()
    await copyFile(join(FIXTURES, 'concat-frames.jsonl.zstd'), disguised)
    await rejection(JsonlLogStore.open(disguised, { dialect: 'seed' }), 'IO')
  })

  it('refuses a log with a corrupt middle line, naming file:line', async () => {
    const path = fresh()
    await writeFile(path, '{"seq":0,"time":1,"type":"turn/start","data":{"turn":1}}\n{oops\n{"seq":1,"time":1,"type":"turn/start","data":{"turn":1}}\n')
    const error = await rejection(JsonlLogStore.open(path, { dialect: 'seed' }), 'CORRUPT_LINE')
    expect(error.location).toMatchObject({ file: path, line: 2 })
  })

  it('completes a valid final line that lost its newline, so appends start a new line', async () => {
    const path = fresh()
    await writeFile(path, '{"seq":0,"time":1000,"type":"turn/start","data":{"turn":1}}')
    const { store, events, tornTail } = await JsonlLogStore.open(path, { dialect: 'seed' })
    expect(events).toEqual([turn(0)])
    expect(tornTail).toBeUndefined()
    await store.append([turn(1)])
    await store.close()
    expect((await readLog(path, { dialect: 'seed' })).events).toEqual([turn(0), turn(1)])
  })

  it('writes the header into an existing empty file', async () => {
    const path = fresh()
    await writeFile(path, '')
    const { store, header } = await JsonlLogStore.open(path, { dialect: 'seed', header: HEADER })
    expect(header).toEqual(HEADER)
    await store.close()
    expect((await readLog(path, { dialect: 'seed' })).header).toEqual(HEADER)
  })
})

describe('append', () => {
  it('rejects seqs that do not continue the log (SEQ) and stays usable', async () => {
    const { store } = await JsonlLogStore.open(fresh(), { dialect: 'seed', create: true })
    await rejection(store.append([turn(1)]), 'SEQ')
    await rejection(store.append([turn(0), turn(2)]), 'SEQ')
    expect(store.eventCount).toBe(0)
    await store.append([turn(0)])
    await rejection(store.append([turn(0)]), 'SEQ')
    expect(store.eventCount).toBe(1)
    await store.close()
  })

  it('serializes concurrent appends in call order and group-commits them', async () => {
    const path = fresh()
    const { store } = await JsonlLogStore.open(path, { dialect: 'seed', create: true })
    const handle = (store as unknown as { handle: { datasync: () => Promise<void> } }).handle
    let syncs = 0
    const datasync = handle.datasync.bind(handle)
    handle.datasync = async () => {
      syncs++
      await datasync()
    }
    const order: number[] = []
    const pending = Array.from({ length: 50 }, (_, k) => store.append([turn(k)]).then(() => order.push(k)))
    expect(store.eventCount).toBe(50)
    await Promise.all(pending)
    expect(order).toEqual(Array.from({ length: 50 }, (_, k) => k))
    expect(store.durableCount).toBe(50)
    expect(syncs).toBeLessThan(50)
    await store.close()
    expect((await readLog(path, { dialect: 'seed' })).events.map((e) => e.seq)).toEqual(order)
  })

  it('rejects an event JSON cannot encode (LOSSY_JSON) without consuming its seq', async () => {
    const { store } = await JsonlLogStore.open(fresh(), { dialect: 'seed', create: true })
    const bad = { ...turn(0), data: { turn: 1n } } as unknown as LogEvent
    await rejection(store.append([bad]), 'LOSSY_JSON')
    expect(store.eventCount).toBe(0)
    await store.append([turn(0)])
    await store.close()
  })

  it('resolves an empty append and waits for pending appends on close; later appends reject (IO)', async () => {
    const path = fresh()
    const { store } = await JsonlLogStore.open(path, { dialect: 'seed', create: true })
    const first = store.append([turn(0)])
    await store.append([])
    const closing = store.close()
    await rejection(store.append([turn(1)]), 'IO')
    await first
    await closing
    await store.close()
    expect((await readLog(path, { dialect: 'seed' })).events).toEqual([turn(0)])
  })
})
