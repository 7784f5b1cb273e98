/**
 * The checker's input stage (`src/checker/input.ts`, lines 1–199) as `checkLog` shows it, on the Appendix B
 * log (seq 0 … 66, one event per line, lines 1 … 67) with a few lines added, written to a temporary folder,
 * or on in-memory events. Every expectation is written out by hand from §1.1, §12.0 (INV-01, INV-02) and the
 * module's documented contract. It pins:
 * - excerpts: a file line's excerpt is the line as written, an in-memory event's is its JSON text, a value
 *   JSON cannot render is `(unserialisable value)`; more than 160 UTF-16 units are cut to 159 and `…`;
 * - INV-01 sequencing: the first line must hold seq 0; a line without a readable seq takes the seq after the
 *   previous line's and is no discontinuity; each new discontinuity is reported once (a line holding its own
 *   index, or the seq after the previous line's, is none), worded "a gap" above its index and "a duplicate
 *   or out-of-order seq" below; a line repeating a seq already folded is not folded again;
 * - torn tails (§1.1): an unterminated final line that breaks a validation rule is dropped, a terminated one
 *   is judged; a final line that is not UTF-8 is dropped, a middle one is an input error (`CORRUPT_LINE`,
 *   no cause), as is a middle line that is not JSON (its cause: the codec's `INVALID_JSON` error);
 * - the session header record is recognised on line 1 only; a `session` record holding a seq is judged as
 *   an event (INV-02);
 * - a file line nested deeper than `NESTING_DEPTH_MAX` (256) levels is judged malformed (INV-02), counted;
 * - INV-14's compact checkpoint source is exactly `{kind: 'plugin', plugin: 'compact'}` (a `null` source or
 *   another kind marks nothing).
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { LogError } from '@compaction-sim/core'
import { APPENDIX_B_JSONL, fixturePath } from '@compaction-sim/fixtures'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { checkLog, type CheckResult } from '../../src/checker/run.ts'
import { appendixB, reportOf } from './support.ts'

/** The Appendix B log's 67 lines (seq 0 … 66), without newlines. */
let lines: string[] = []
let dir = ''
let files = 0

beforeAll(async () => {
  lines = (await readFile(fixturePath(APPENDIX_B_JSONL), 'utf8')).trimEnd().split('\n')
  dir = await mkdtemp(join(tmpdir(), 'sim-input-a-'))
})

afterAll(async () => {
  await rm(dir, { recursive: true, force: true })
})

/** Writes `content` to a fresh log file and checks it in seed without a manifest. */
async function checkFile(content: string | Buffer): Promise<{ path: string; result: CheckResult }> {
  const path = join(dir, `log-${files++}.jsonl`)
  await writeFile(path, content)
  return { path, result: await checkLog(path, { dialect: 'seed', manifest: null }) }
}

/** `id@seq: message` of every violation of a report. */
const lineOf = (r: CheckResult): string[] => reportOf(r).violations.map((v) => `${v.id}@${v.seq}: ${v.message}`)

/** An ignorable foreign record (`x/note`): every check skips it. */
const note = (seq: unknown, data: Record<string, unknown> = {}): Record<string, unknown> => ({ seq, time: 1700000000340, type: 'x/note', data, ignorable: true })

/** The JSONL line of an `x/note` (key order seq, time, type, data, ignorable), with `data` as written. */
const noteLine = (seq: string, data = ''): string => `{"seq":${seq},"time":1700000000340,"type":"x/note","data":{${data}},"ignorable":true}`

/** An `x/note` line whose `time` is the string "x" (INV-02), padded through `data.p` to exactly `length` units. */
function badTimeLine(seq: number, length: number): string {
  const head = `{"seq":${seq},"time":"x","type":"x/note","data":{"p":"`
  const tail = '"},"ignorable":true}'
  return `${head}${'a'.repeat(length - head.length - tail.length)}${tail}`
}

const BAD_TIME = 'expected a finite number, got the string "x" (field time)'
const BAD_SEQ = 'expected a non-negative integer, got the string "x" (field seq)'

describe('excerpts: the offending event as written, cut beyond 160 UTF-16 units', () => {
  it('a file line is excerpted as written: 160 units whole, 161 units cut to 159 and an ellipsis', async () => {
    const whole = badTimeLine(67, 160)
    const cut = badTimeLine(68, 161)
    expect([whole.length, cut.length]).toEqual([160, 161])
    const { result } = await checkFile(`${[...lines, whole, cut].join('\n')}\n`)
    const r = reportOf(result)
    expect(lineOf(r)).toEqual([`INV-02@67: ${BAD_TIME}`, `INV-02@68: ${BAD_TIME}`])
    expect(r.violations.map((v) => v.excerpt)).toEqual([whole, `${cut.slice(0, 159)}…`])
  })

  it('an in-memory event is excerpted as its JSON text', async () => {
    const r = reportOf(await checkLog([...appendixB(), { ...note(67), time: 'x' }], { dialect: 'seed' }))
    expect(lineOf(r)).toEqual([`INV-02@67: ${BAD_TIME}`])
    expect(r.violations.map((v) => v.excerpt)).toEqual(['{"seq":67,"time":"x","type":"x/note","data":{},"ignorable":true}'])
  })

  it('an in-memory event JSON cannot render (a BigInt) is excerpted as (unserialisable value)', async () => {
    const r = reportOf(await checkLog([...appendixB(), note(67, { n: 1n })], { dialect: 'seed' }))
    expect(lineOf(r)).toEqual(['INV-02@67: a BigInt is not JSON (§1.1 rule 2) (field data.n)'])
    expect(r.violations.map((v) => v.excerpt)).toEqual(['(unserialisable value)'])
    expect(r.internalErrors).toEqual([])
  })
})

describe('INV-01: the k-th event line holds seq k; each discontinuity is reported once', () => {
  it('the first event line must hold seq 0: seq 2 there is a gap', async () => {
    expect(lineOf(await checkLog([note(2)], { dialect: 'seed' }))).toEqual([
      'INV-01@0: event line 0 holds seq 2 (a gap); the k-th event must hold seq k',
    ])
  })

  it('a first line without a readable seq takes seq 0 (its INV-02 is reported there)', async () => {
    const r = reportOf(await checkLog([note('x')], { dialect: 'seed' }))
    expect(lineOf(r)).toEqual([`INV-02@0: ${BAD_SEQ}`])
    expect(r.events).toBe(1)
  })

  it('a line without a readable seq takes the seq after the previous line and is no INV-01 discontinuity', async () => {
    const r = reportOf(await checkLog([note(0), note(1), note('x')], { dialect: 'seed' }))
    expect(lineOf(r)).toEqual([`INV-02@2: ${BAD_SEQ}`])
    expect(r.events).toBe(3)
  })

  it('a jump is reported where it starts; a line holding its own index or the next seq is none; gap above, duplicate below', async () => {
    // Lines 67 … 72 hold 69, 68, 69, 71, 72, 70: 67 jumps up (gap); 68 and 69 hold their own index; 70 jumps up
    // again (gap); 71 holds the seq after 70's (71 + 1); 72 goes back to 70 (below its index).
    const events = [...appendixB(), note(69), note(68), note(69), note(71), note(72), note(70)]
    const r = reportOf(await checkLog(events, { dialect: 'seed' }))
    expect(lineOf(r)).toEqual([
      'INV-01@67: event line 67 holds seq 69 (a gap); the k-th event must hold seq k',
      'INV-01@70: event line 70 holds seq 71 (a gap); the k-th event must hold seq k',
      'INV-01@72: event line 72 holds seq 70 (a duplicate or out-of-order seq); the k-th event must hold seq k',
    ])
    expect(r.events).toBe(73)
  })

  it('the seq a seq-less line took counts as folded: a later line holding it is a duplicate, never folded', async () => {
    // Line 67 has no readable seq (it takes 67); line 68 holds 67 again: a step/end 3.2 that, folded, would
    // close a step that turn/end #66 already closed (INV-09).
    const stepEnd = { seq: 67, time: 1700000000340, type: 'step/end', data: { turn: 3, step: 2 } }
    const r = reportOf(await checkLog([...appendixB(), note('x'), stepEnd], { dialect: 'seed' }))
    expect(lineOf(r)).toEqual([
      `INV-02@67: ${BAD_SEQ}`,
      'INV-01@68: event line 68 holds seq 67 (a duplicate or out-of-order seq); the k-th event must hold seq k',
    ])
  })
})

describe('torn tails and corrupt lines (§1.1)', () => {
  const badTime = '{"seq":67,"time":"x","type":"x/note","data":{},"ignorable":true}'

  it('an unterminated final line that breaks a validation rule is a dropped torn tail', async () => {
    const r = reportOf((await checkFile([...lines, badTime].join('\n'))).result)
    expect(r.tornTail).toEqual({ line: 68, reason: 'expected a finite number, got the string "x"' })
    expect(r.violations).toEqual([])
    expect(r.events).toBe(67)
  })

  it('a terminated final line that breaks a validation rule is judged (INV-02), not dropped', async () => {
    const r = reportOf((await checkFile(`${[...lines, badTime].join('\n')}\n`)).result)
    expect(r.tornTail).toBeNull()
    expect(lineOf(r)).toEqual([`INV-02@67: ${BAD_TIME}`])
    expect(r.events).toBe(68)
  })

  it('a final line that is not UTF-8 is a dropped torn tail', async () => {
    const r = reportOf((await checkFile(Buffer.concat([Buffer.from(`${lines.join('\n')}\n{`), Buffer.from([0xff, 0x0a])]))).result)
    expect(r.tornTail).toEqual({ line: 68, reason: 'the line is not valid UTF-8' })
    expect(r.violations).toEqual([])
    expect(r.events).toBe(67)
  })

  it('a middle line that is not UTF-8 is an input error naming file:line (CORRUPT_LINE, no cause)', async () => {
    // Line 68 is a note whose data.t holds the byte 0xFF (it would parse, with a replacement character).
    const bytes = Buffer.concat([
      Buffer.from(`${lines.join('\n')}\n{"seq":67,"time":1700000000340,"type":"x/note","data":{"t":"`), Buffer.from([0xff]),
      Buffer.from(`"},"ignorable":true}\n${noteLine('68')}\n`),
    ])
    const { path, result } = await checkFile(bytes)
    if (result.kind !== 'input-error') throw new Error('expected an input error')
    expect(result.error.message).toBe(`${path}:68: the line is not valid UTF-8; only the final line of a log may be torn (§1.1)`)
    expect([result.error.code, result.error.file, result.error.line]).toEqual(['LOG', path, 68])
    const cause = result.error.cause
    if (!(cause instanceof LogError)) throw new Error('expected a LogError cause')
    expect([cause.code, cause.reason, cause.location]).toEqual([
      'CORRUPT_LINE', 'the line is not valid UTF-8; only the final line of a log may be torn (§1.1)', { file: path, line: 68 },
    ])
    expect(Object.hasOwn(cause, 'cause')).toBe(false)
  })

  it('a middle line that is not JSON is an input error whose cause is the codec\'s INVALID_JSON error', async () => {
    const { path, result } = await checkFile(`${[...lines.slice(0, 5), '{"seq":', ...lines.slice(5)].join('\n')}\n`)
    if (result.kind !== 'input-error') throw new Error('expected an input error')
    expect([result.error.code, result.error.line]).toEqual(['LOG', 6])
    const cause = result.error.cause
    if (!(cause instanceof LogError)) throw new Error('expected a LogError cause')
    expect([cause.code, cause.location]).toEqual(['CORRUPT_LINE', { file: path, line: 6 }])
    const codec = cause.cause
    if (!(codec instanceof LogError)) throw new Error('expected the codec error as the cause')
    expect([codec.code, codec.location, codec.cause instanceof SyntaxError]).toEqual(['INVALID_JSON', { file: path, line: 6 }, true])
  })
})

describe('the session header record (§1.1): line 1 only, and never with a seq', () => {
  const header = '{"type":"session","version":0,"id":"s-1","createdAt":1700000000000}'

  it('a header record on line 1 is skipped: the log stays clean, 67 event lines', async () => {
    const r = reportOf((await checkFile(`${[header, ...lines].join('\n')}\n`)).result)
    expect(r.violations).toEqual([])
    expect([r.ok, r.events, r.tornTail]).toEqual([true, 67, null])
  })

  it('the same record on a later line is no header: it is an event line, malformed (INV-02)', async () => {
    const r = reportOf((await checkFile(`${[...lines, header].join('\n')}\n`)).result)
    expect(lineOf(r)).toEqual([
      'INV-02@67: unexpected top-level key "version" (an event has only seq, time, type, data, surfaceOp, sourceEventSeqs, ignorable) (field version)',
    ])
    expect(r.events).toBe(68)
  })

  it('a session record on line 1 that holds a seq is judged as an event line (INV-02)', async () => {
    const r = reportOf((await checkFile(`{"type":"session","version":0,"id":"s-1","createdAt":1700000000000,"seq":0}\n${noteLine('1')}\n`)).result)
    expect(lineOf(r)).toEqual([
      'INV-02@0: unexpected top-level key "version" (an event has only seq, time, type, data, surfaceOp, sourceEventSeqs, ignorable) (field version)',
    ])
    expect([r.events, r.internalErrors]).toEqual([2, []])
  })
})

describe('nesting depth: a file line nested beyond 256 levels is judged malformed (INV-02)', () => {
  it('a note holding 300 nested arrays is INV-02 at its seq, still counted as an event line', async () => {
    const deep = noteLine('67', `"d":${'['.repeat(300)}${']'.repeat(300)}`)
    const r = reportOf((await checkFile(`${[...lines, deep].join('\n')}\n`)).result)
    expect(lineOf(r)).toEqual(['INV-02@67: the event nests deeper than 256 levels (beyond the checker\'s bound; judged malformed)'])
    expect(r.violations.map((v) => v.excerpt)).toEqual([`${deep.slice(0, 159)}…`])
    expect([r.events, r.internalErrors]).toEqual([68, []])
  })
})

describe('INV-14: the compact checkpoint source is exactly {kind: plugin, plugin: compact}', () => {
  const withSource = (source: string): Promise<CheckResult> =>
    checkFile(`${[...lines, noteLine('67', `"source":${source}`)].join('\n')}\n`).then((x) => x.result)

  it('a null data.source marks no checkpoint (and is no failure)', async () => {
    const r = reportOf(await withSource('null'))
    expect([r.violations, r.internalErrors, r.events]).toEqual([[], [], 68])
  })

  it('a source of another kind, or of another plugin, marks no checkpoint', async () => {
    expect(lineOf(await withSource('{"kind":"user","plugin":"compact"}'))).toEqual([])
    expect(lineOf(await withSource('{"kind":"plugin","plugin":"memory"}'))).toEqual([])
  })

  it('the compact plugin source on an x/note is a checkpoint stored under the wrong type', async () => {
    expect(lineOf(await withSource('{"kind":"plugin","plugin":"compact"}'))).toEqual([
      'INV-14@67: a checkpoint (source {kind:\'plugin\', plugin:\'compact\'}) is stored as x/note: the checkpoint is one user/message with that source and surfaceOp replace (§1.4.4, §1.6)',
    ])
  })
})
