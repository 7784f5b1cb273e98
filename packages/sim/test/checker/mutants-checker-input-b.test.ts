/**
 * The checker's input stage (`src/checker/input.ts`, lines 200–299) through its exported entry points
 * (`fileItems`, `eventItems`) and `checkLog`, on small logs written to a temp dir and on in-memory events.
 * Every expectation is written out by hand from §1.1 and the module's contract. It pins:
 * - the §1.1 line rules of a log file: a middle line that is not JSON is an input error (CORRUPT_LINE naming
 *   `file:line`, "only the final line of a log may be torn"); a final line that is not JSON is a dropped torn
 *   tail even when terminated; a line holding JSON that is no object is judged (INV-02 at its seq, opaque,
 *   type `?`) unless it is the unterminated final line; a malformed session header record or packed chunk
 *   row is an input error (HEADER / PACKED_ROW) unless it is the unterminated final line; an event breaking
 *   a validation rule is judged, or dropped when it is the unterminated final line; a torn tail names its
 *   line and the reason;
 * - in-memory elements that are no event object (`undefined`, `null`, a number): opaque, type `?`, INV-02;
 * - `typeOf`: a missing, non-string or empty `type` is `?`; `seqOf`: only a non-negative safe integer is a
 *   written seq (`"x"`, -1 are none; 0 is one, so a second 0 is an INV-01 duplicate);
 * - INV-14's misfiled checkpoint: reported at the event's seq when the written seq is unusable; events
 *   without `data`, with `data: null` or `data.message: null` are no checkpoint (and do not crash the stage);
 * - the nesting bound (`NESTING_DEPTH_MAX` = 256): an object or array at depth 256 is too deep (INV-02,
 *   opaque), depth 255 is not, a `null` at depth 256 is a leaf; only array elements (indexes below `length`)
 *   count as an array's children; the depth problem's seq when the written seq is unusable;
 * - the excerpt of an in-memory event is its JSON.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { LogError } from '@compaction-sim/core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { eventItems, fileItems, TornTail, type InputItem, type InputOptions } from '../../src/checker/input.ts'
import { checkLog } from '../../src/checker/run.ts'
import type { FoldItem } from '../../src/checker/types.ts'
import { reportOf } from './support.ts'

const OPTIONS: InputOptions = { dialect: 'seed', knownTypes: new Set() }

/** An ignorable foreign record at `seq` (valid in every dialect). */
const note = (seq: number): Record<string, unknown> => ({ seq, time: 1700000000000 + seq, type: 'x/note', data: {}, ignorable: true })
const line = (seq: number): string => JSON.stringify(note(seq))

const DEPTH_PROBLEM = 'the event nests deeper than 256 levels (beyond the checker\'s bound; judged malformed)'
const NOT_JSON = 'not valid JSON: Expected property name or \'}\' in JSON at position 1'
const BAD_VERSION = 'expected a non-negative integer version, got the string "x" (session header record, §1.1)'
const BAD_ROW = 'expected a number, got nothing (packed chunk row, §1.1)'
const CHECKPOINT_SOURCE = { kind: 'plugin', plugin: 'compact' }

/** The summary of an input item the fold sees. */
function view(x: InputItem): Record<string, unknown> {
  if (x instanceof TornTail) return { torn: x.tail }
  return { seq: x.seq, type: x.type, folded: x.event !== null, problems: x.problems }
}

/** The items of in-memory events. */
function items(events: unknown[]): FoldItem[] {
  return [...eventItems(events, OPTIONS)] as FoldItem[]
}

/** A chain of `levels` nested containers (`wrap` builds one around the next), `leaf` innermost. */
function chain(levels: number, wrap: (inner: unknown) => unknown, leaf: unknown): unknown {
  let v = leaf
  for (let i = 0; i < levels; i++) v = wrap(v)
  return v
}
const inArray = (inner: unknown): unknown => (inner === undefined ? [] : [inner])
const inObject = (inner: unknown): unknown => (inner === undefined ? {} : { a: inner })

/** A note at seq 0 whose `data.v` is `v` (the event is depth 0, `data` depth 1, `v` depth 2). */
const deepNote = (v: unknown, seq: unknown = 0): Record<string, unknown> => ({ ...note(0), seq, data: { v } })

let dir = ''
beforeAll(async () => { dir = await mkdtemp(join(tmpdir(), 'checker-input-b-')) })
afterAll(async () => { await rm(dir, { recursive: true, force: true }) })

/** Writes `text` as a log named `name` in the temp dir; returns its path. */
async function log(name: string, text: string): Promise<string> {
  const path = join(dir, name)
  await writeFile(path, text)
  return path
}

/** Everything `fileItems` delivers for `path`, and the error it throws (or null). */
async function fileRun(path: string): Promise<{ items: Array<Record<string, unknown>>; error: unknown }> {
  const out: Array<Record<string, unknown>> = []
  try {
    await fileItems(path, { ...OPTIONS, file: path }, { push: (x) => out.push(view(x)) })
    return { items: out, error: null }
  } catch (error) {
    return { items: out, error }
  }
}

/** `code file:line reason` of a LogError. */
function described(error: unknown): string {
  if (!(error instanceof LogError)) return `not a LogError: ${String(error)}`
  return `${error.code} ${error.location.file ?? '?'}:${error.location.line ?? '?'} ${error.reason}`
}

/** The input error message of `checkLog(path)`, or a description of the report. */
async function inputErrorOf(path: string): Promise<string> {
  const r = await checkLog(path, { dialect: 'seed', manifest: null })
  return r.kind === 'input-error' ? r.error.message : `a report: ${JSON.stringify(r.violations)} ${JSON.stringify(r.internalErrors)}`
}

describe('§1.1 line rules of a log file', () => {
  it('a middle line that is not JSON is a CORRUPT_LINE input error naming file:line; the lines before it were delivered', async () => {
    const path = await log('middle-not-json.jsonl', `${line(0)}\n{bad\n${line(1)}\n`)
    const run = await fileRun(path)
    expect(described(run.error)).toBe(`CORRUPT_LINE ${path}:2 ${NOT_JSON}; only the final line of a log may be torn (§1.1)`)
    expect(run.items).toEqual([{ seq: 0, type: 'x/note', folded: true, problems: [] }])
    expect(await inputErrorOf(path)).toBe(`${path}:2: ${NOT_JSON}; only the final line of a log may be torn (§1.1)`)
  })

  it('a final line that is not JSON is a dropped torn tail (line and reason), even when terminated', async () => {
    const path = await log('final-not-json.jsonl', `${line(0)}\n${line(1)}\n{bad\n`)
    const r = reportOf(await checkLog(path, { dialect: 'seed', manifest: null }))
    expect(r.tornTail).toEqual({ line: 3, reason: NOT_JSON })
    expect(r.events).toBe(2)
    expect(r.violations).toEqual([])
    expect((await fileRun(path)).items.at(-1)).toEqual({ torn: { line: 3, reason: NOT_JSON } })
  })

  it('a middle line holding JSON that is no object is judged: opaque, type ?, INV-02 at the seq it stands for', async () => {
    const path = await log('middle-array.jsonl', `${line(0)}\n${line(1)}\n[1]\n${line(3)}\n`)
    const r = reportOf(await checkLog(path, { dialect: 'seed', manifest: null }))
    expect(r.violations.map((v) => `${v.id}@${v.seq}: ${v.message}`)).toEqual(['INV-02@2: expected a JSON object, got an array'])
    expect(r.events).toBe(4)
    expect(r.tornTail).toBeNull()
    const run = await fileRun(path)
    expect(run.error).toBeNull()
    expect(run.items[2]).toEqual({ seq: 2, type: '?', folded: false, problems: [{ id: 'INV-02', seq: -1, message: 'expected a JSON object, got an array' }] })
  })

  it('a final line holding JSON that is no object: dropped when unterminated, judged when terminated', async () => {
    const torn = reportOf(await checkLog(await log('final-array.jsonl', `${line(0)}\n${line(1)}\n[1]`), { dialect: 'seed', manifest: null }))
    expect(torn.tornTail).toEqual({ line: 3, reason: 'expected a JSON object, got an array' })
    expect(torn.events).toBe(2)
    expect(torn.violations).toEqual([])
    const judged = reportOf(await checkLog(await log('final-array-terminated.jsonl', `${line(0)}\n${line(1)}\n[1]\n`), { dialect: 'seed', manifest: null }))
    expect(judged.tornTail).toBeNull()
    expect(judged.violations.map((v) => `${v.id}@${v.seq}: ${v.message}`)).toEqual(['INV-02@2: expected a JSON object, got an array'])
  })

  it('a malformed session header record is a HEADER input error at line 1', async () => {
    const path = await log('bad-header.jsonl', `{"type":"session","version":"x","id":"s","createdAt":1}\n${line(0)}\n`)
    const run = await fileRun(path)
    expect(described(run.error)).toBe(`HEADER ${path}:1 ${BAD_VERSION}`)
    expect(run.items).toEqual([])
    expect(await inputErrorOf(path)).toBe(`${path}:1: ${BAD_VERSION}`)
  })

  it('a malformed session header record that is the unterminated final line is a torn tail', async () => {
    const r = reportOf(await checkLog(await log('torn-header.jsonl', '{"type":"session","version":"x","id":"s","createdAt":1}'), { dialect: 'seed', manifest: null }))
    expect(r.tornTail).toEqual({ line: 1, reason: BAD_VERSION })
    expect(r.events).toBe(0)
  })

  it('a malformed packed chunk row is a PACKED_ROW input error, and a torn tail when it is the unterminated final line', async () => {
    const middle = await log('bad-row.jsonl', `${line(0)}\n{"type":"text-chunks","seq0":1}\n${line(2)}\n`)
    expect(described((await fileRun(middle)).error)).toBe(`PACKED_ROW ${middle}:2 ${BAD_ROW}`)
    const r = reportOf(await checkLog(await log('torn-row.jsonl', `${line(0)}\n{"type":"text-chunks","seq0":1}`), { dialect: 'seed', manifest: null }))
    expect(r.tornTail).toEqual({ line: 2, reason: BAD_ROW })
    expect(r.events).toBe(1)
  })

  it('a middle event breaking a validation rule is judged (INV-02), never fatal', async () => {
    const bad = JSON.stringify({ ...note(1), time: 'x' })
    const path = await log('middle-invalid.jsonl', `${line(0)}\n${bad}\n${line(2)}\n`)
    const r = reportOf(await checkLog(path, { dialect: 'seed', manifest: null }))
    expect(r.violations.map((v) => `${v.id}@${v.seq}: ${v.message}`)).toEqual(['INV-02@1: expected a finite number, got the string "x" (field time)'])
    expect(r.events).toBe(3)
    expect(r.tornTail).toBeNull()
  })

  it('an event breaking a validation rule on the unterminated final line is a dropped torn tail', async () => {
    const bad = JSON.stringify({ ...note(2), time: 'x' })
    const r = reportOf(await checkLog(await log('final-invalid.jsonl', `${line(0)}\n${line(1)}\n${bad}`), { dialect: 'seed', manifest: null }))
    expect(r.tornTail).toEqual({ line: 3, reason: 'expected a finite number, got the string "x"' })
    expect(r.events).toBe(2)
    expect(r.violations).toEqual([])
  })
})

describe('in-memory elements that are no event object', () => {
  it('undefined: opaque, type ?, INV-02 "expected an event object, got undefined"', () => {
    expect(items([note(0), undefined]).map(view)).toEqual([
      { seq: 0, type: 'x/note', folded: true, problems: [] },
      { seq: 1, type: '?', folded: false, problems: [{ id: 'INV-02', seq: -1, message: 'expected an event object, got undefined' }] },
    ])
  })

  it('null: opaque, type ?, INV-02 "expected an event object, got null"', () => {
    expect(items([note(0), null]).map(view)).toEqual([
      { seq: 0, type: 'x/note', folded: true, problems: [] },
      { seq: 1, type: '?', folded: false, problems: [{ id: 'INV-02', seq: -1, message: 'expected an event object, got null' }] },
    ])
  })

  it('a number: opaque, type ?, INV-02 "expected an event object, got number"', () => {
    expect(items([5]).map(view)).toEqual([
      { seq: 0, type: '?', folded: false, problems: [{ id: 'INV-02', seq: -1, message: 'expected an event object, got number' }] },
    ])
  })

  it('checkLog reports them at the seq they stand for', async () => {
    const r = reportOf(await checkLog([note(0), undefined, null, 5], { dialect: 'seed' }))
    expect(r.violations.map((v) => `${v.id}@${v.seq}: ${v.message}`)).toEqual([
      'INV-02@1: expected an event object, got undefined',
      'INV-02@2: expected an event object, got null',
      'INV-02@3: expected an event object, got number',
    ])
    expect(r.internalErrors).toEqual([])
  })
})

describe('type and seq of an event as written', () => {
  it('a missing, non-string or empty type is ?', () => {
    const { type: _, ...untyped } = note(0)
    expect(items([untyped, { ...note(1), type: 5 }, { ...note(2), type: '' }]).map((x) => x.type)).toEqual(['?', '?', '?'])
  })

  it('a string seq is no written seq: the event stands for the next seq, without an INV-01 problem', () => {
    expect(items([{ ...note(0), seq: 'x' }]).map(view)).toEqual([
      { seq: 0, type: 'x/note', folded: false, problems: [{ id: 'INV-02', seq: -1, message: 'expected a non-negative integer, got the string "x" (field seq)' }] },
    ])
  })

  it('a negative seq is no written seq', () => {
    expect(items([note(0), { ...note(1), seq: -1 }]).map(view)).toEqual([
      { seq: 0, type: 'x/note', folded: true, problems: [] },
      { seq: 1, type: 'x/note', folded: false, problems: [{ id: 'INV-02', seq: -1, message: 'expected a non-negative integer, got the number -1 (field seq)' }] },
    ])
  })

  it('seq 0 is a written seq: a second 0 is an INV-01 duplicate', () => {
    const [, second] = items([note(0), note(0)])
    expect(second?.seq).toBe(0)
    expect(second?.duplicate).toBe(true)
    expect(second?.problems).toEqual([{ id: 'INV-01', seq: 1, message: 'event line 1 holds seq 0 (a duplicate or out-of-order seq); the k-th event must hold seq k' }])
  })

  it('the excerpt of an in-memory event is its JSON', () => {
    expect(items([note(0)]).map((x) => x.excerpt)).toEqual(['{"seq":0,"time":1700000000000,"type":"x/note","data":{},"ignorable":true}'])
  })
})

describe("INV-14's misfiled checkpoint, judged per event", () => {
  const misfiled = 'a checkpoint (source {kind:\'plugin\', plugin:\'compact\'}) is stored as assistant/message: the checkpoint is one user/message with that source and surfaceOp replace (§1.4.4, §1.6)'

  it('with an unusable written seq it is reported at the seq the event stands for', async () => {
    const event = { seq: 'x', time: 1700000000000, type: 'assistant/message', data: { message: { source: CHECKPOINT_SOURCE } } }
    const [item] = items([event])
    expect(item?.problems[0]).toEqual({ id: 'INV-14', seq: -1, message: misfiled })
    const r = reportOf(await checkLog([note(0), note(1), event], { dialect: 'seed' }))
    expect(r.violations.filter((v) => v.id === 'INV-14').map((v) => `${v.id}@${v.seq}: ${v.message}`)).toEqual([`INV-14@2: ${misfiled}`])
  })

  it('an event without data, with data null or with message null is no checkpoint (only its own shape problem)', () => {
    const { data: _, ...dataless } = note(0)
    expect(items([dataless]).map(view)).toEqual([
      { seq: 0, type: 'x/note', folded: false, problems: [{ id: 'INV-02', seq: 0, message: 'expected an object, got nothing (field data)' }] },
    ])
    expect(items([{ ...note(0), data: null }]).map(view)).toEqual([
      { seq: 0, type: 'x/note', folded: false, problems: [{ id: 'INV-02', seq: 0, message: 'expected an object, got null (field data)' }] },
    ])
    const noMessage = { seq: 0, time: 1700000000000, type: 'assistant/message', data: { message: null } }
    expect(items([noMessage]).map(view)).toEqual([{
      seq: 0, type: 'assistant/message', folded: false,
      problems: [{ id: 'INV-03', seq: 0, message: 'assistant/message is surface-eligible and requires surfaceOp (INV-03) (field surfaceOp)' }],
    }])
  })
})

describe('the nesting bound (NESTING_DEPTH_MAX = 256)', () => {
  const tooDeep = (seq = 0): Record<string, unknown> => ({ seq, type: 'x/note', folded: false, problems: [{ id: 'INV-02', seq, message: DEPTH_PROBLEM }] })
  const fine = { seq: 0, type: 'x/note', folded: true, problems: [] }

  it('an array at depth 256 is too deep: opaque, INV-02 at the event seq', () => {
    expect(items([deepNote(chain(255, inArray, undefined))]).map(view)).toEqual([tooDeep()])
  })

  it('an array at depth 255 is within the bound', () => {
    expect(items([deepNote(chain(254, inArray, undefined))]).map(view)).toEqual([fine])
  })

  it('an object at depth 256 is too deep; at depth 255 it is within the bound', () => {
    expect(items([deepNote(chain(255, inObject, undefined))]).map(view)).toEqual([tooDeep()])
    expect(items([deepNote(chain(254, inObject, undefined))]).map(view)).toEqual([fine])
  })

  it('a null at depth 256 is a leaf, not a level', () => {
    expect(items([deepNote(chain(254, inArray, null))]).map(view)).toEqual([fine])
    expect(items([deepNote(chain(254, inObject, null))]).map(view)).toEqual([fine])
  })

  it('with an unusable written seq the depth problem is reported at the seq the event stands for', async () => {
    const deep = deepNote(chain(255, inArray, undefined), 'x')
    expect(items([note(0), deep]).map(view)[1]).toEqual({ seq: 1, type: 'x/note', folded: false, problems: [{ id: 'INV-02', seq: -1, message: DEPTH_PROBLEM }] })
    const r = reportOf(await checkLog([note(0), note(1), deep], { dialect: 'seed' }))
    expect(r.violations.map((v) => `${v.id}@${v.seq}: ${v.message}`)).toEqual([`INV-02@2: ${DEPTH_PROBLEM}`])
  })

  it('an array\'s children are its elements: a deep named property of an array is no level of nesting', () => {
    const v = Object.assign([], { extra: chain(300, inObject, undefined) })
    // Judged by §1.1 rule 2 instead: such an array is not lossless JSON.
    expect(items([deepNote(v)]).map(view)).toEqual([{
      seq: 0, type: 'x/note', folded: false,
      problems: [{ id: 'INV-02', seq: 0, message: 'an array with extra properties is not lossless JSON (§1.1 rule 2) (field data.v)' }],
    }])
  })

  it('an array\'s children are the indexes below its length', () => {
    const deep = chain(300, inArray, undefined)
    const v = new Proxy([], { get: (target, key) => (key === '0' ? deep : Reflect.get(target, key)) })
    // An in-memory array-like proxy of length 0 whose index 0 still answers: it has no element, so no depth.
    expect(items([deepNote(v)]).map(view)).toEqual([fine])
  })
})
