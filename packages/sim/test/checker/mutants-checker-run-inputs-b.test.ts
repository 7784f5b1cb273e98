/**
 * The request capture and the defaults of a run's inputs in `src/checker/run-inputs.ts` (§1.1, §12.0), called
 * directly with small temp files, and once through `checkLog`. Every expected value and error message is
 * written out by hand from §1.1 (`CapturedRequest`, the capture is JSONL, one request per line) and the
 * module's documented contract (a malformed capture is a `CheckInputError('REQUESTS')` naming `file:line`
 * and the field, never a crash). It pins:
 * - `resolveRunInputs` without a manifest: no explicit region starts, no explicit series headers, no faults,
 *   no crashes;
 * - `loadRequests`: an unreadable file is named (no line) with the reader's reason and keeps it as the cause;
 *   blank and whitespace-only lines are skipped but still counted; a line that is not JSON and a line that
 *   fails validation are named by their 1-based line number; the requests come back in `index` order;
 * - `validateRequest`: the exact message for a non-object root (null, a number, a string, an array) and for
 *   each field it reads (`index`, `logRevisionAtDispatch` non-negative integers; `purpose`; `provider`,
 *   `model` strings; `messages` an array of `{role: string, content: array}`; optional `tools` array,
 *   `maxTokens` number, `stop` array of strings), and that a complete request is returned as given;
 * - `sortRequests`: dispatch (`index`) order, stable for equal indexes, the input left untouched.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { CapturedRequest } from '@compaction-sim/core'
import {
  CheckInputError, loadRequests, resolveRunInputs, sortRequests, validateRequest,
} from '../../src/checker/run-inputs.ts'
import { checkLog } from '../../src/checker/run.ts'
import { appendixB } from './support.ts'

let dir: string

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'run-inputs-b-'))
})

afterEach(async () => {
  await rm(dir, { recursive: true, force: true })
})

/** A complete, valid captured request (§1.1) with dispatch index `index`. */
function request(index: number, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    index,
    logRevisionAtDispatch: 3,
    time: 1000,
    purpose: 'conversation',
    provider: 'mock',
    model: 'm1',
    messages: [
      { id: 'u1', role: 'user', content: [{ type: 'text', text: 'hi' }], source: 'user' },
      { id: 'a1', role: 'assistant', content: [], source: 'model' },
    ],
    outcome: 'stop',
    ...extra,
  }
}

/** Writes `text` to `name` in the temp folder and returns its path. */
async function file(name: string, text: string): Promise<string> {
  const path = join(dir, name)
  await writeFile(path, text, 'utf8')
  return path
}

/** The `CheckInputError` `run` throws (fails the test when it throws anything else, or nothing). */
function thrownBy(run: () => unknown): CheckInputError {
  try {
    run()
  } catch (error) {
    if (error instanceof CheckInputError) return error
    throw new Error(`expected a CheckInputError, got ${String(error)}`)
  }
  throw new Error('expected a CheckInputError, nothing was thrown')
}

/** The `CheckInputError` `promise` rejects with. */
async function rejectionOf(promise: Promise<unknown>): Promise<CheckInputError> {
  try {
    await promise
  } catch (error) {
    if (error instanceof CheckInputError) return error
    throw new Error(`expected a CheckInputError, got ${String(error)}`)
  }
  throw new Error('expected a CheckInputError, the promise resolved')
}

/** The message `validateRequest(raw, 'cap.jsonl', 7)` fails with. */
function failureOf(raw: unknown): string {
  return thrownBy(() => validateRequest(raw, 'cap.jsonl', 7)).message
}

describe('resolveRunInputs: without a manifest nothing is explicit, faulted or crashed (§12.0)', () => {
  it('has empty explicit region starts, explicit series headers, faults and crashes', () => {
    const inputs = resolveRunInputs(null, null, 'seed')
    expect([...inputs.explicitRegionStarts]).toEqual([])
    expect([...inputs.explicitSeriesHeaders]).toEqual([])
    expect(inputs.faults).toEqual([])
    expect([...inputs.crashes]).toEqual([])
    expect(inputs.policySource).toBe('defaults')
  })

  it('a manifest without those lists has them empty too', () => {
    const inputs = resolveRunInputs({ scenario: 's', compaction: {}, routes: [] } as never, 'm.json', 'seed')
    expect([...inputs.explicitRegionStarts]).toEqual([])
    expect([...inputs.explicitSeriesHeaders]).toEqual([])
    expect(inputs.faults).toEqual([])
    expect([...inputs.crashes]).toEqual([])
  })
})

describe('loadRequests: reading the request capture file (§1.1, JSONL)', () => {
  it('an unreadable capture is a REQUESTS input error naming the file (no line), with the reader error as its cause', async () => {
    const path = join(dir, 'missing.jsonl')
    const error = await rejectionOf(loadRequests(path))
    expect(error.code).toBe('REQUESTS')
    expect(error.file).toBe(path)
    expect(error.line).toBe(null)
    expect(error.reason).toBe(`cannot read the request capture: ENOENT: no such file or directory, open '${path}'`)
    expect(error.message).toBe(`${path}: cannot read the request capture: ENOENT: no such file or directory, open '${path}'`)
    expect((error.cause as NodeJS.ErrnoException).code).toBe('ENOENT')
  })

  it('reads one request per line, skipping blank and whitespace-only lines, in index order', async () => {
    const path = await file('cap.jsonl', [
      JSON.stringify(request(2)),
      '',
      ' \t ',
      JSON.stringify(request(0)),
      '   \r',
      JSON.stringify(request(1, { purpose: 'compaction' })),
      '',
    ].join('\n'))
    const requests = await loadRequests(path)
    expect(requests.map((r) => [r.index, r.purpose])).toEqual([[0, 'conversation'], [1, 'compaction'], [2, 'conversation']])
    expect(requests[0]).toEqual(request(0))
  })

  it('an empty capture has no requests', async () => {
    expect(await loadRequests(await file('empty.jsonl', ''))).toEqual([])
  })

  it('a line that is not JSON is named by its 1-based line number, with the parser error as its cause', async () => {
    const path = await file('cap.jsonl', [JSON.stringify(request(0)), '', '{', JSON.stringify(request(1))].join('\n'))
    const error = await rejectionOf(loadRequests(path))
    expect(error.code).toBe('REQUESTS')
    expect(error.file).toBe(path)
    expect(error.line).toBe(3)
    expect(error.message).toBe(`${path}:3: not JSON: Expected property name or '}' in JSON at position 1`)
    expect(error.cause).toBeInstanceOf(SyntaxError)
  })

  it('a line that fails validation is named by its 1-based line number and the field', async () => {
    const path = await file('cap.jsonl', [JSON.stringify(request(0)), '  ', JSON.stringify(request(1, { model: 7 }))].join('\n'))
    const error = await rejectionOf(loadRequests(path))
    expect(error.code).toBe('REQUESTS')
    expect(error.line).toBe(3)
    expect(error.message).toBe(`${path}:3: field model: expected a string (request capture, §1.1)`)
  })
})

describe('checkLog: a bad request capture is an input error, not a report (§1.1)', () => {
  it('an unreadable capture path yields the REQUESTS input error', async () => {
    const path = join(dir, 'absent.jsonl')
    const result = await checkLog(appendixB() as never, { dialect: 'seed', requests: path })
    expect(result.kind).toBe('input-error')
    if (result.kind !== 'input-error') return
    expect(result.error.code).toBe('REQUESTS')
    expect(result.error.message).toBe(`${path}: cannot read the request capture: ENOENT: no such file or directory, open '${path}'`)
  })

  it('in-memory requests are validated and numbered from 1, with no file', async () => {
    const result = await checkLog(appendixB() as never, { dialect: 'seed', requests: [request(0), request(1, { index: -1 })] as never })
    expect(result.kind).toBe('input-error')
    if (result.kind !== 'input-error') return
    expect(result.error.line).toBe(2)
    expect(result.error.file).toBe(null)
    expect(result.error.message).toBe('field index: expected a non-negative integer (request capture, §1.1)')
  })
})

describe('validateRequest: the fields the checks read (§1.1 CapturedRequest)', () => {
  it('returns a complete request as given', () => {
    const raw = request(4, { tools: [], maxTokens: 512, stop: ['END', 'STOP'] })
    expect(validateRequest(raw, 'cap.jsonl', 1)).toBe(raw)
    expect(validateRequest(request(5, { stop: [] }), null, null)).toEqual(request(5, { stop: [] }))
  })

  it('the error carries code, file and line', () => {
    const error = thrownBy(() => validateRequest(request(0, { provider: null }), 'cap.jsonl', 7))
    expect(error.code).toBe('REQUESTS')
    expect(error.file).toBe('cap.jsonl')
    expect(error.line).toBe(7)
    expect(error.reason).toBe('field provider: expected a string (request capture, §1.1)')
  })

  it.each([
    ['null', null],
    ['a number', 5],
    ['a string', 'req'],
    ['an array', [request(0)]],
  ])('a root that is %s is not a request object', (_what, raw) => {
    expect(failureOf(raw)).toBe('cap.jsonl:7: field (root): expected one JSON object per line (request capture, §1.1)')
  })

  it.each([
    ['index', -1],
    ['index', 1.5],
    ['index', '0'],
    ['logRevisionAtDispatch', -1],
    ['logRevisionAtDispatch', 2.5],
    ['logRevisionAtDispatch', undefined],
  ])('%s = %j is not a non-negative integer', (field, value) => {
    expect(failureOf(request(0, { [field]: value }))).toBe(`cap.jsonl:7: field ${field}: expected a non-negative integer (request capture, §1.1)`)
  })

  it('index 0 and logRevisionAtDispatch 0 are valid', () => {
    expect(validateRequest(request(0, { logRevisionAtDispatch: 0 }), null, 1).logRevisionAtDispatch).toBe(0)
  })

  it.each([['chat'], [undefined]])('purpose %j is neither conversation nor compaction', (value) => {
    expect(failureOf(request(0, { purpose: value }))).toBe("cap.jsonl:7: field purpose: expected 'conversation' or 'compaction' (request capture, §1.1)")
  })

  it.each([['provider'], ['model']])('%s must be a string', (field) => {
    expect(failureOf(request(0, { [field]: 1 }))).toBe(`cap.jsonl:7: field ${field}: expected a string (request capture, §1.1)`)
  })

  it.each([['absent', undefined], ['a string', 'hi'], ['an object', { role: 'user' }]])('messages %s is not an array of messages', (_what, value) => {
    expect(failureOf(request(0, { messages: value }))).toBe('cap.jsonl:7: field messages: expected an array of messages (request capture, §1.1)')
  })

  it.each([
    ['null', null],
    ['a number', 3],
    ['an array', [{ role: 'user', content: [] }]],
    ['a message whose role is not a string', { id: 'x', role: 5, content: [], source: 'user' }],
    ['a message whose role is missing', { id: 'x', content: [], source: 'user' }],
    ['a message whose content is not an array', { id: 'x', role: 'user', content: 'hi', source: 'user' }],
  ])('the second message being %s is named by its index', (_what, value) => {
    const messages = [{ id: 'u1', role: 'user', content: [], source: 'user' }, value]
    expect(failureOf(request(0, { messages }))).toBe('cap.jsonl:7: field messages[1]: expected a message {id, role, content, source} (request capture, §1.1)')
  })

  it('tools, when present, must be an array', () => {
    expect(failureOf(request(0, { tools: 'read' }))).toBe('cap.jsonl:7: field tools: expected an array (request capture, §1.1)')
  })

  it('maxTokens, when present, must be a number', () => {
    expect(failureOf(request(0, { maxTokens: '512' }))).toBe('cap.jsonl:7: field maxTokens: expected a number (request capture, §1.1)')
  })

  it.each([
    ['a string', 'END'],
    ['an array with a non-string', ['END', 1]],
    ['an array of non-strings', [1, 2]],
  ])('stop being %s is not an array of strings', (_what, value) => {
    expect(failureOf(request(0, { stop: value }))).toBe('cap.jsonl:7: field stop: expected an array of strings (request capture, §1.1)')
  })

  it.each([[[]], [['END']], [['END', 'STOP']]])('stop %j is an array of strings', (value) => {
    expect(validateRequest(request(0, { stop: value }), null, 1).stop).toEqual(value)
  })
})

describe('sortRequests: dispatch order (index), stable', () => {
  it('orders by index, keeps equal indexes in their order, and leaves the input as it was', () => {
    const given = [request(2, { model: 'c' }), request(0, { model: 'a' }), request(3, { model: 'd' }), request(1, { model: 'b1' }), request(1, { model: 'b2' })] as unknown as CapturedRequest[]
    const sorted = sortRequests(given)
    expect(sorted.map((r) => r.model)).toEqual(['a', 'b1', 'b2', 'c', 'd'])
    expect(given.map((r) => r.model)).toEqual(['c', 'a', 'd', 'b1', 'b2'])
  })
})
