/**
 * The JSONL reader (§1.1, design §4 item 1): header record, packed rows, `.jsonl.zstd` with
 * concatenated frames, the torn-tail rule, corrupt middle lines and INV-01 contiguity.
 */
import { copyFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { LogError, type LogErrorCode } from '../../src/errors.ts'
import {
  parseLogText, readLog, readLogLines, streamLogEvents, type LogLine, type LogStreamItem, type ReadLogResult,
} from '../../src/log/reader.ts'
import { MULTI_BLOCK_EVENTS, multiBlockLogText } from './fixtures/multi-block.ts'

const FIXTURES = fileURLToPath(new URL('./fixtures/', import.meta.url))
const SEED = { dialect: 'seed' } as const
let dir = ''

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'reader-test-'))
})
afterAll(async () => {
  await rm(dir, { recursive: true, force: true })
})

async function fileWith(name: string, content: string | Uint8Array): Promise<string> {
  const path = join(dir, name)
  await writeFile(path, content)
  return path
}

async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = []
  for await (const item of items) out.push(item)
  return out
}

async function rejection(promise: Promise<unknown>, code: LogErrorCode): Promise<LogError> {
  const error: unknown = await promise.then(() => undefined, (e: unknown) => e)
  expect(error, 'expected a LogError').toBeInstanceOf(LogError)
  expect((error as LogError).code, String(error)).toBe(code)
  return error as LogError
}

const ev = (seq: number, type = 'turn/start', data = '{"turn":1}') => `{"seq":${seq},"time":${1000 + seq},"type":"${type}","data":${data}}`
const HEADER = '{"type":"session","version":0,"id":"s-1","createdAt":1700000000000}'

describe('header record (§1.1)', () => {
  it('skips the header line: it is returned separately and the first event line holds seq 0', async () => {
    const path = await fileWith('header.jsonl', `${HEADER}\n${ev(0)}\n${ev(1, 'step/start', '{"turn":1,"step":1}')}\n`)
    const result = await readLog(path, SEED)
    expect(result.header).toEqual({ type: 'session', version: 0, id: 's-1', createdAt: 1700000000000 })
    expect(result.events.map((e) => e.seq)).toEqual([0, 1])
    const items = await collect(streamLogEvents(path, SEED))
    expect(items.map((i) => i.kind)).toEqual(['header', 'event', 'event'])
    expect(items.map((i) => (i.kind === 'event' ? i.line : 0))).toEqual([0, 2, 3])
  })

  it('reads a log without a header', async () => {
    expect(parseLogText(`${ev(0)}\n`, SEED)).toEqual({ events: [JSON.parse(ev(0))] })
  })

  it('treats a session record after the first line as a bad event', () => {
    expect(() => parseLogText(`${ev(0)}\n${HEADER}\n${ev(1)}\n`, { ...SEED, file: 'h.jsonl' })).toThrow(/h\.jsonl:2/)
  })
})

describe('packed chunk rows (§1.1)', () => {
  const text = [
    HEADER,
    ev(0),
    ev(1, 'step/start', '{"turn":1,"step":1}'),
    '{"type":"text-chunks","seq0":2,"time0":5000,"data":{"turn":1,"step":1,"index":0,"dt":[10,-3],"texts":["Hel","lo ","world"]}}',
    '{"type":"reasoning-chunks","seq0":5,"time0":6000,"data":{"turn":1,"step":1,"index":1,"dt":[],"texts":["hmm"]}}',
    '{"type":"tool-call-chunks","seq0":6,"time0":7000,"data":{"turn":1,"step":1,"index":2,"id":"call_1","name":"read","dt":[4],"args":["{\\"path\\":","\\"a.ts\\"}"]}}',
    '{"type":"tool-call-chunks","seq0":8,"time0":8000,"data":{"turn":1,"step":1,"index":3,"id":"call_2","dt":[],"args":["{}"]}}',
    ev(9, 'step/end', '{"turn":1,"step":1}'),
  ].join('\n')

  it('expands rows in place and in order; each expanded event reports the row line', async () => {
    const path = await fileWith('rows.jsonl', `${text}\n`)
    const items = (await collect(streamLogEvents(path, SEED))).filter((i): i is Extract<LogStreamItem, { kind: 'event' }> => i.kind === 'event')
    expect(items.map((i) => [i.event.seq, i.line])).toEqual([[0, 2], [1, 3], [2, 4], [3, 4], [4, 4], [5, 5], [6, 6], [7, 6], [8, 7], [9, 8]])
    const chunks = items.slice(2, 9).map((i) => i.event)
    expect(chunks).toEqual([
      { seq: 2, time: 5000, type: 'assistant/chunk', data: { turn: 1, step: 1, chunk: { type: 'text-delta', index: 0, text: 'Hel' } } },
      { seq: 3, time: 5010, type: 'assistant/chunk', data: { turn: 1, step: 1, chunk: { type: 'text-delta', index: 0, text: 'lo ' } } },
      { seq: 4, time: 5007, type: 'assistant/chunk', data: { turn: 1, step: 1, chunk: { type: 'text-delta', index: 0, text: 'world' } } },
      { seq: 5, time: 6000, type: 'assistant/chunk', data: { turn: 1, step: 1, chunk: { type: 'reasoning-delta', index: 1, text: 'hmm' } } },
      { seq: 6, time: 7000, type: 'assistant/chunk', data: { turn: 1, step: 1, chunk: { type: 'tool-call-delta', index: 2, id: 'call_1', name: 'read', argumentsDelta: '{"path":' } } },
      { seq: 7, time: 7004, type: 'assistant/chunk', data: { turn: 1, step: 1, chunk: { type: 'tool-call-delta', index: 2, id: 'call_1', name: 'read', argumentsDelta: '"a.ts"}' } } },
      { seq: 8, time: 8000, type: 'assistant/chunk', data: { turn: 1, step: 1, chunk: { type: 'tool-call-delta', index: 3, id: 'call_2', argumentsDelta: '{}' } } },
    ])
    expect(Object.hasOwn(chunks[6]?.data ?? {}, 'name')).toBe(false)
  })

  it('checks INV-01 on the expanded sequence', () => {
    const gap = text.replace('"seq0":5', '"seq0":6')
    const error = expectThrows(() => parseLogText(gap, { ...SEED, file: 'rows.jsonl' }), 'SEQ')
    expect(error.location).toMatchObject({ file: 'rows.jsonl', line: 5, seq: 6 })
    expect(error.reason).toMatch(/expected seq 5/)
  })
})

function expectThrows(fn: () => unknown, code: LogErrorCode): LogError {
  let caught: unknown
  try {
    fn()
  } catch (error) {
    caught = error
  }
  expect(caught, 'expected a LogError').toBeInstanceOf(LogError)
  expect((caught as LogError).code, String(caught)).toBe(code)
  return caught as LogError
}

describe('.jsonl.zstd (§1.1: one or more concatenated zstd frames)', () => {
  const zstdPath = join(FIXTURES, 'concat-frames.jsonl.zstd')
  const textPath = join(FIXTURES, 'concat-frames.jsonl')

  it('decodes the concatenated-frames fixture (frames cut mid-line and mid-character, a skippable frame) to its text', async () => {
    const expected = await readFile(textPath, 'utf8')
    const lines = await collect(readLogLines(zstdPath))
    expect(lines.map((l) => l.text).join('\n') + '\n').toBe(expected)
    const fromZstd = await readLog(zstdPath, SEED)
    expect(fromZstd).toEqual(await readLog(textPath, SEED))
    expect(fromZstd.events).toHaveLength(18)
    expect(fromZstd.header?.id).toBe('sess-zstd-fixture')
  })

  it('gives identical lines for any read chunk size', async () => {
    const reference = await collect(readLogLines(textPath))
    for (const chunkSize of [1, 2, 7, 64, 1000]) {
      expect(await collect(readLogLines(zstdPath, { chunkSize }))).toEqual(reference)
      expect(await collect(readLogLines(textPath, { chunkSize }))).toEqual(reference)
    }
  })

  it('detects zstd by the magic bytes 28 B5 2F FD when the name does not say so', async () => {
    const disguised = join(dir, 'disguised.jsonl')
    await copyFile(zstdPath, disguised)
    expect(await readLog(disguised, SEED)).toEqual(await readLog(textPath, SEED))
  })

  it('streams a multi-block, multi-frame log with a line longer than the read size', async () => {
    const expected = multiBlockLogText()
    const path = join(FIXTURES, 'multi-block.jsonl.zstd')
    for (const chunkSize of [4096, 65536]) {
      const lines = await collect(readLogLines(path, { chunkSize }))
      expect(lines.map((l) => l.text).join('\n') + '\n').toBe(expected)
    }
    const result = await readLog(path, SEED)
    expect(result.events).toHaveLength(MULTI_BLOCK_EVENTS)
    expect(result.events.every((e, k) => e.seq === k)).toBe(true)
  })

  it('reports a damaged compressed file as an IO error naming the file', async () => {
    const bytes = await readFile(zstdPath)
    const path = await fileWith('cut.jsonl.zstd', bytes.subarray(0, bytes.length - 5))
    const error = await rejection(readLog(path, SEED), 'IO')
    expect(error.location.file).toBe(path)
  })
})

describe('lines (readLogLines)', () => {
  it('marks the last line and whether it was newline-terminated; offsets are UTF-8 bytes', async () => {
    const path = await fileWith('lines.jsonl', 'aé\nb\nc')
    expect(await collect(readLogLines(path))).toEqual<LogLine[]>([
      { line: 1, text: 'aé', last: false, terminated: true, offset: 0 },
      { line: 2, text: 'b', last: false, terminated: true, offset: 4 },
      { line: 3, text: 'c', last: true, terminated: false, offset: 6 },
    ])
    const terminated = await fileWith('lines2.jsonl', 'a\nb\n')
    expect((await collect(readLogLines(terminated))).map((l) => [l.last, l.terminated])).toEqual([[false, true], [true, true]])
  })

  it('reads an empty file as no lines and a missing file as IO', async () => {
    expect(await collect(readLogLines(await fileWith('empty.jsonl', '')))).toEqual([])
    expect(await readLog(await fileWith('empty2.jsonl', ''), SEED)).toEqual({ events: [] })
    const error = await rejection(readLog(join(dir, 'missing.jsonl'), SEED), 'IO')
    expect(error.location.file).toBe(join(dir, 'missing.jsonl'))
  })

  it('rejects an empty line in the middle (CORRUPT_LINE naming file:line)', async () => {
    const path = await fileWith('blank.jsonl', `${ev(0)}\n\n${ev(1)}\n`)
    const error = await rejection(readLog(path, SEED), 'CORRUPT_LINE')
    expect(error.location).toMatchObject({ file: path, line: 2 })
    expect(error.message.startsWith(`${path}:2:`)).toBe(true)
    expectThrows(() => parseLogText(`${ev(0)}\n\n`, SEED), 'CORRUPT_LINE')
  })
})

describe('torn tail (§1.1, design §4.1: reported and dropped, never merged)', () => {
  const body = `${HEADER}\n${ev(0)}\n${ev(1, 'step/start', '{"turn":1,"step":1}')}\n`

  async function both(text: string): Promise<ReadLogResult> {
    const fromText = parseLogText(text, { ...SEED, file: 'torn.jsonl' })
    const fromFile = await readLog(await fileWith('torn.jsonl', text), SEED)
    expect(fromFile.events).toEqual(fromText.events)
    expect(fromFile.tornTail).toEqual(fromText.tornTail)
    return fromText
  }

  it('reports and drops a final line cut mid-JSON', async () => {
    const result = await both(`${body}{"seq":2,"time":1002,"type":"step/e`)
    expect(result.events.map((e) => e.seq)).toEqual([0, 1])
    expect(result.tornTail).toMatchObject({ line: 4, text: '{"seq":2,"time":1002,"type":"step/e', offset: Buffer.byteLength(body) })
    expect(result.tornTail?.reason).toMatch(/JSON/)
  })

  it('reports a final unparsable line even when it has a newline', async () => {
    const result = await both(`${body}{"seq":2,"ti\n`)
    expect(result.tornTail).toMatchObject({ line: 4, offset: Buffer.byteLength(body) })
  })

  it('reports a final line cut inside a multi-byte character', async () => {
    const full = Buffer.from(`${body}${ev(2, 'user/message', '{"id":"é","role":"user","content":[],"source":{"kind":"user"}}')}`)
    const cut = full.subarray(0, full.indexOf(Buffer.from('é')) + 1)
    const path = await fileWith('utf8.jsonl', cut)
    const result = await readLog(path, SEED)
    expect(result.events).toHaveLength(2)
    expect(result.tornTail).toMatchObject({ line: 4, offset: Buffer.byteLength(body) })
  })

  it('treats a complete-JSON final line without newline that fails validation as torn', async () => {
    const result = await both(`${body}{"seq":2,"time":1}`)
    expect(result.tornTail).toMatchObject({ line: 4 })
    expect(result.events).toHaveLength(2)
  })

  it('keeps a valid final line without newline (it is complete)', async () => {
    const result = await both(`${body}${ev(2, 'step/end', '{"turn":1,"step":1}')}`)
    expect(result.events.map((e) => e.seq)).toEqual([0, 1, 2])
    expect(result.tornTail).toBeUndefined()
  })

  it('rejects a terminated final line that parses but fails validation (not torn)', async () => {
    const path = await fileWith('final.jsonl', `${body}{"seq":2,"time":1}\n`)
    const error = await rejection(readLog(path, SEED), 'ENVELOPE')
    expect(error.location).toMatchObject({ file: path, line: 4 })
  })

  it('only the final line may be torn: a partial header alone is torn', async () => {
    const result = await both('{"type":"sess')
    expect(result).toEqual({ events: [], tornTail: { line: 1, text: '{"type":"sess', reason: expect.any(String) as string, offset: 0 } })
  })
})

describe('corrupt middle lines and INV-01', () => {
  it('rejects an unparsable middle line with CORRUPT_LINE naming file:line', async () => {
    const path = await fileWith('corrupt.jsonl', `${ev(0)}\n{"seq":1,"time":\n${ev(2)}\n`)
    const error = await rejection(readLog(path, SEED), 'CORRUPT_LINE')
    expect(error.location).toMatchObject({ file: path, line: 2 })
    expect(error.message.startsWith(`${path}:2:`)).toBe(true)
  })

  it('rejects invalid UTF-8 in a middle line', async () => {
    const bytes = Buffer.concat([Buffer.from(`${ev(0)}\n{"seq":1,"time":1,"type":"turn/start","data":{"turn":1,"x":"`), Buffer.from([0xff, 0xfe]), Buffer.from(`"}}\n${ev(2)}\n`)])
    const error = await rejection(readLog(await fileWith('badutf8.jsonl', bytes), SEED), 'CORRUPT_LINE')
    expect(error.location.line).toBe(2)
  })

  it('reports a middle line that fails validation with its specific code and file:line', async () => {
    const path = await fileWith('invalid.jsonl', `${ev(0)}\n${ev(1, 'turn/start', '{"turn":0}')}\n${ev(2)}\n`)
    const error = await rejection(readLog(path, SEED), 'DATA')
    expect(error.location).toMatchObject({ file: path, line: 2, seq: 1, field: 'data.turn' })
  })

  it('rejects a seq gap with SEQ naming the line and the expected seq', async () => {
    const path = await fileWith('gap.jsonl', `${HEADER}\n${ev(0)}\n${ev(1)}\n${ev(3)}\n${ev(4)}\n`)
    const error = await rejection(readLog(path, SEED), 'SEQ')
    expect(error.location).toMatchObject({ file: path, line: 4, seq: 3 })
    expect(error.reason).toMatch(/expected seq 2/)
    expect(error.message).toContain(`${path}:4`)
  })

  it('rejects a duplicate seq and a log that does not start at 0', () => {
    expect(expectThrows(() => parseLogText(`${ev(0)}\n${ev(0)}\n`, SEED), 'SEQ').location.line).toBe(2)
    expect(expectThrows(() => parseLogText(`${ev(1)}\n`, SEED), 'SEQ').reason).toMatch(/expected seq 0/)
  })

  it('refuses an unknown required type (§1.1 rule 4)', async () => {
    const path = await fileWith('unknown.jsonl', `${ev(0)}\n${ev(1, 'vendor/thing', '{}')}\n${ev(2)}\n`)
    const error = await rejection(readLog(path, SEED), 'UNKNOWN_TYPE')
    expect(error.location).toMatchObject({ file: path, line: 2 })
    const ok = await readLog(path, { dialect: 'seed', knownTypes: new Set(['vendor/thing']) })
    expect(ok.events).toHaveLength(3)
  })
})
