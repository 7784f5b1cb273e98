/**
 * One test per bad-input class of per-line validation (§1.1, §1.3, §1.4, INV-02, INV-03, INV-04):
 * each asserts a typed LogError with its code, the line (and seq/field where known) and a reason.
 */
import { describe, expect, it } from 'vitest'
import { LogError, type LogErrorCode, type LogErrorLocation } from '../../src/errors.ts'
import { decodeLine, expandPackedRow, isPackedChunkRow } from '../../src/log/codec.ts'
import type { Dialect } from '../../src/log/events.ts'
import { parseLogText } from '../../src/log/reader.ts'
import { checkLossless, validateEvent } from '../../src/log/validate.ts'

const LINE = 7

function decode(text: string, dialect: Dialect = 'seed', extra: { knownTypes?: ReadonlySet<string>; first?: boolean } = {}) {
  return decodeLine(text, { dialect, line: LINE, file: 'session.jsonl', first: extra.first ?? false, knownTypes: extra.knownTypes })
}

function expectLogError(fn: () => unknown, code: LogErrorCode, where: LogErrorLocation = {}): LogError {
  let caught: unknown
  try {
    fn()
  } catch (error) {
    caught = error
  }
  expect(caught, 'expected a LogError to be thrown').toBeInstanceOf(LogError)
  const error = caught as LogError
  expect(error.code, error.message).toBe(code)
  expect(error.reason.length).toBeGreaterThan(0)
  expect(error.location).toMatchObject(where)
  return error
}

/** A line for an event with the given envelope parts (JSON text, so -0 and 1e999 survive as written). */
function line(parts: { seq?: string; time?: string; type: string; data: string; rest?: string }): string {
  return `{"seq":${parts.seq ?? '5'},"time":${parts.time ?? '1700000000000'},"type":${JSON.stringify(parts.type)},"data":${parts.data}${parts.rest ?? ''}}`
}

const USER = '{"id":"m-u1","role":"user","content":[{"type":"text","text":"hi"}],"source":{"kind":"user"}}'
const TOOL_RESULT = '{"turn":1,"step":1,"message":{"id":"m-t1","role":"user","content":[{"type":"tool-result","toolCallId":"call_1","content":[{"type":"text","text":"ok"}],"isError":false}],"source":{"kind":"tool","callId":"call_1"}}}'
const ASSISTANT = '{"turn":1,"step":1,"message":{"id":"m-a1","role":"assistant","content":[],"source":{"kind":"model","provider":"mock","model":"mock-4k"}}}'

describe('INVALID_JSON (§1.1)', () => {
  it('rejects a line that is not JSON, naming the line', () => {
    const error = expectLogError(() => decode('{"seq":0,"time":1,'), 'INVALID_JSON', { line: LINE, file: 'session.jsonl' })
    expect(error.message).toMatch(/^session\.jsonl:7: /)
  })

  it('rejects JSON that is not an object', () => {
    expectLogError(() => decode('[1,2,3]'), 'INVALID_JSON', { line: LINE })
    expectLogError(() => decode('null'), 'INVALID_JSON', { line: LINE })
  })
})

describe('ENVELOPE (§1.1, INV-02)', () => {
  it('rejects unknown top-level keys', () => {
    expectLogError(() => decode(line({ type: 'turn/start', data: '{"turn":1}', rest: ',"extra":1' })), 'ENVELOPE', { line: LINE, field: 'extra' })
  })

  it('rejects a seq that is not a non-negative safe integer', () => {
    expectLogError(() => decode(line({ seq: '-1', type: 'turn/start', data: '{"turn":1}' })), 'ENVELOPE', { line: LINE, field: 'seq' })
    expectLogError(() => decode(line({ seq: '1.5', type: 'turn/start', data: '{"turn":1}' })), 'ENVELOPE', { field: 'seq' })
    expectLogError(() => decode(line({ seq: '"3"', type: 'turn/start', data: '{"turn":1}' })), 'ENVELOPE', { field: 'seq' })
    expectLogError(() => decode(line({ seq: '9007199254740992', type: 'turn/start', data: '{"turn":1}' })), 'ENVELOPE', { field: 'seq' })
  })

  it('rejects a non-number time, an empty type, non-object data and ignorable other than true', () => {
    expectLogError(() => decode(line({ time: '"now"', type: 'turn/start', data: '{"turn":1}' })), 'ENVELOPE', { seq: 5, field: 'time' })
    expectLogError(() => decode(line({ type: '', data: '{}' })), 'ENVELOPE', { seq: 5, field: 'type' })
    expectLogError(() => decode(line({ type: 'turn/start', data: '[]' })), 'ENVELOPE', { seq: 5, field: 'data' })
    expectLogError(() => decode(line({ type: 'x/y', data: '{}', rest: ',"ignorable":false' })), 'ENVELOPE', { seq: 5, field: 'ignorable' })
  })

  it('rejects a missing field', () => {
    expectLogError(() => decode('{"seq":0,"time":1,"type":"turn/start"}'), 'ENVELOPE', { line: LINE, seq: 0, field: 'data' })
    expectLogError(() => decode('{"time":1,"type":"turn/start","data":{"turn":1}}'), 'ENVELOPE', { line: LINE, field: 'seq' })
  })
})

describe('LOSSY_JSON (§1.1 rule 2, INV-02)', () => {
  it('rejects a literal -0 in JSON text (JSON.parse keeps the sign)', () => {
    expect(Object.is(JSON.parse('-0'), -0)).toBe(true)
    expectLogError(() => decode(line({ type: 'turn/start', data: '{"turn":1,"note":-0}' })), 'LOSSY_JSON', { line: LINE, seq: 5, field: 'data.note' })
    expectLogError(() => decode(line({ type: 'turn/start', data: '{"turn":1,"note":[1,-0.0e3]}' })), 'LOSSY_JSON', { field: 'data.note[1]' })
    expectLogError(() => decode(line({ time: '-0', type: 'turn/start', data: '{"turn":1}' })), 'LOSSY_JSON', { field: 'time' })
  })

  it('rejects numbers that overflow to Infinity or underflow to -0 (1e999 parses to Infinity)', () => {
    expect(JSON.parse('1e999')).toBe(Infinity)
    expectLogError(() => decode(line({ time: '1e999', type: 'turn/start', data: '{"turn":1}' })), 'LOSSY_JSON', { line: LINE, seq: 5, field: 'time' })
    expectLogError(() => decode(line({ type: 'turn/start', data: '{"turn":1,"x":{"y":-1e999}}' })), 'LOSSY_JSON', { field: 'data.x.y' })
    expectLogError(() => decode(line({ type: 'turn/start', data: '{"turn":1,"x":-1e-400}' })), 'LOSSY_JSON', { field: 'data.x' })
    expectLogError(() => decode(line({ seq: '-0', type: 'turn/start', data: '{"turn":1}' })), 'LOSSY_JSON', { field: 'seq' })
  })

  it('rejects in-memory values JSON cannot represent, naming the JSON path', () => {
    class Point {
      constructor(readonly x: number) {}
    }
    const sparse = [1, 2]
    sparse[4] = 5
    const withHidden = {}
    Object.defineProperty(withHidden, 'h', { value: 1, enumerable: false })
    const cyclic: Record<string, unknown> = {}
    cyclic['self'] = { back: cyclic }
    const cases: Array<[unknown, RegExp]> = [
      [undefined, /undefined/],
      [() => 1, /function/],
      [10n, /BigInt/],
      [Symbol('s'), /symbol/],
      [Number.NaN, /NaN/],
      [Infinity, /non-finite/],
      [-Infinity, /non-finite/],
      [-0, /-0/],
      [sparse, /sparse/],
      [new Map(), /Map/],
      [new Set([1]), /Set/],
      [new Date(0), /Date/],
      [new Point(1), /Point/],
      [withHidden, /non-enumerable/],
      [{ [Symbol('k')]: 1 }, /symbol-keyed/],
      [cyclic, /circular/],
    ]
    for (const [value, reason] of cases) {
      const event = { seq: 5, time: 1, type: 'user/message', surfaceOp: 'append', data: { id: 'm', role: 'user', source: { kind: 'user' }, content: [{ type: 'text', text: 'a' }, { type: 'text', text: 'b' }, { type: 'text', text: value }] } }
      const error = expectLogError(() => validateEvent(event, { dialect: 'seed', line: LINE }), 'LOSSY_JSON', { line: LINE, seq: 5 })
      expect(error.location.field).toMatch(/^data\.content\[2\]\.text/)
      expect(error.reason).toMatch(reason)
    }
  })

  it('checkLossless names the path and accepts valid JSON', () => {
    expect(checkLossless({ message: { content: [{}, {}, { text: Number.NaN }] } }, 'data')).toMatch(/^data\.message\.content\[2\]\.text: NaN/)
    expect(checkLossless({ 'odd key': [undefined] }, 'data')).toMatch(/^data\["odd key"\]\[0\]: undefined/)
    expect(checkLossless({ a: [1, 'x', null, true, { b: [] }], c: 0 }, 'data')).toBeUndefined()
    expect(checkLossless(Object.assign(Object.create(null) as object, { a: 1 }), 'data')).toBeUndefined()
    const shared = { s: 1 }
    expect(checkLossless({ a: shared, b: shared }, 'data')).toBeUndefined()
  })

  it('does not overflow the stack on depth ~10k (explicit stack)', () => {
    let deep: unknown = 'leaf'
    for (let i = 0; i < 10_000; i++) deep = i % 2 === 0 ? [deep] : { k: deep }
    expect(checkLossless(deep, 'data')).toBeUndefined()
    let bad: unknown = Number.NaN
    for (let i = 0; i < 10_000; i++) bad = [bad]
    expect(checkLossless(bad, 'data')).toMatch(/^data(\[0\]){10000}: NaN/)
    let nested: unknown[] = [{ type: 'text', text: 'x' }]
    for (let i = 0; i < 10_000; i++) nested = [{ type: 'tool-result', toolCallId: 'c', content: nested }]
    const event = { seq: 0, time: 1, type: 'user/message', surfaceOp: 'append', data: { id: 'm', role: 'user', source: { kind: 'user' }, content: nested } }
    expect(() => validateEvent(event, { dialect: 'seed' })).not.toThrow()
  })
})

describe('UNKNOWN_TYPE (§1.1 rule 4, INV-02, §14.1)', () => {
  const inbox = line({ type: 'agent/inbox/spliced', data: '{"count":2}' })

  it('rejects an unknown type without ignorable', () => {
    const error = expectLogError(() => decode(inbox), 'UNKNOWN_TYPE', { line: LINE, seq: 5, field: 'type' })
    expect(error.reason).toMatch(/agent\/inbox\/spliced/)
  })

  it('accepts an unknown type marked ignorable: true', () => {
    const event = decode(line({ type: 'vendor/title', data: '{"title":"x"}', rest: ',"ignorable":true' }))
    expect(event).toMatchObject({ type: 'vendor/title', ignorable: true })
  })

  it('accepts agent/inbox/spliced in the rc.8 dialect (a known foreign type)', () => {
    expect(decode(inbox, 'dsh-0.1.0-rc.8')).toMatchObject({ type: 'agent/inbox/spliced', data: { count: 2 } })
  })

  it('accepts a type declared in knownTypes', () => {
    expect(decode(inbox, 'seed', { knownTypes: new Set(['agent/inbox/spliced']) })).toMatchObject({ type: 'agent/inbox/spliced' })
  })

  it('rejects system/message in the rc.8 dialect (seed-only, §14.1)', () => {
    const sys = line({ type: 'system/message', data: '{"id":"s","role":"system","content":[],"source":{"kind":"plugin","plugin":"system-prompt"}}', rest: ',"surfaceOp":"append"' })
    expect(decode(sys, 'seed')).toMatchObject({ type: 'system/message' })
    expectLogError(() => decode(sys, 'dsh-0.1.0-rc.8'), 'UNKNOWN_TYPE', { line: LINE, field: 'type' })
    expectLogError(() => decode(line({ type: 'image/offload', data: '{"targets":[]}' }), 'dsh-0.1.0-rc.8'), 'UNKNOWN_TYPE', { line: LINE })
  })
})

describe('SURFACE_OP (INV-03)', () => {
  it('rejects surfaceOp on a log-only type', () => {
    expectLogError(() => decode(line({ type: 'turn/start', data: '{"turn":1}', rest: ',"surfaceOp":"append"' })), 'SURFACE_OP', { line: LINE, seq: 5, field: 'surfaceOp' })
    const start = '{"compactionId":"c1","turn":1}'
    expectLogError(() => decode(line({ type: 'compaction/start', data: start, rest: ',"surfaceOp":{"op":"replace","start":1,"end":2}' })), 'SURFACE_OP', { field: 'surfaceOp' })
  })

  it('rejects sourceEventSeqs on a log-only type', () => {
    expectLogError(() => decode(line({ type: 'compaction/prune', data: '{"shadowedRange":{"start":1,"end":1},"shadowedSeqs":[1],"shadowedTokenCount":3}', rest: ',"sourceEventSeqs":[1]' })), 'SURFACE_OP', { line: LINE, field: 'sourceEventSeqs' })
  })

  it('rejects a surface type without surfaceOp', () => {
    expectLogError(() => decode(line({ type: 'user/message', data: USER })), 'SURFACE_OP', { line: LINE, seq: 5, field: 'surfaceOp' })
    expectLogError(() => decode(line({ type: 'tool/result', data: TOOL_RESULT, rest: ',"sourceEventSeqs":[4]' })), 'SURFACE_OP', { field: 'surfaceOp' })
  })

  it('rejects malformed surface ops', () => {
    const bad = ['"prepend"', '{"op":"replace","start":1}', '{"op":"replace","start":1,"end":2,"x":0}', '{"op":"swap","start":1,"end":2}', '{"op":"replace","start":-1,"end":2}', '{"op":"replace","start":1.5,"end":2}']
    for (const op of bad) {
      expectLogError(() => decode(line({ type: 'user/message', data: USER, rest: `,"surfaceOp":${op},"sourceEventSeqs":[1]` })), 'SURFACE_OP', { line: LINE, seq: 5 })
    }
  })

  it('accepts append and replace ops', () => {
    expect(decode(line({ type: 'user/message', data: USER, rest: ',"surfaceOp":"append"' }))).toMatchObject({ surfaceOp: 'append' })
    expect(decode(line({ type: 'user/message', data: USER, rest: ',"surfaceOp":{"op":"replace","start":3,"end":1},"sourceEventSeqs":[3,1]' }))).toMatchObject({ surfaceOp: { op: 'replace', start: 3, end: 1 } })
  })
})

describe('PROVENANCE (§1.5.1, INV-04)', () => {
  const user = (seqs: string, seq = '5') => line({ seq, type: 'user/message', data: USER, rest: `,"surfaceOp":"append","sourceEventSeqs":${seqs}` })

  it('rejects duplicates', () => {
    expectLogError(() => decode(user('[1,2,1]')), 'PROVENANCE', { line: LINE, seq: 5, field: 'sourceEventSeqs[2]' })
  })

  it('rejects future seqs (>= the event seq)', () => {
    expectLogError(() => decode(user('[1,5]')), 'PROVENANCE', { line: LINE, seq: 5, field: 'sourceEventSeqs[1]' })
    expectLogError(() => decode(user('[9]')), 'PROVENANCE', { field: 'sourceEventSeqs[0]' })
  })

  it('rejects negative and non-integer seqs', () => {
    expectLogError(() => decode(user('[-1]')), 'PROVENANCE', { line: LINE, field: 'sourceEventSeqs[0]' })
    expectLogError(() => decode(user('[0.5]')), 'PROVENANCE', { field: 'sourceEventSeqs[0]' })
    expectLogError(() => decode(user('{"0":1}')), 'PROVENANCE', { field: 'sourceEventSeqs' })
  })

  it('rejects an empty list except on assistant/message', () => {
    expectLogError(() => decode(user('[]')), 'PROVENANCE', { line: LINE, seq: 5, field: 'sourceEventSeqs' })
    expect(decode(line({ type: 'assistant/message', data: ASSISTANT, rest: ',"surfaceOp":"append","sourceEventSeqs":[]' }))).toMatchObject({ sourceEventSeqs: [] })
  })

  it('accepts unique earlier seqs in any order', () => {
    expect(decode(user('[4,0,2]'))).toMatchObject({ sourceEventSeqs: [4, 0, 2] })
  })
})

describe('DATA (§1.4 payload shapes)', () => {
  const cases: Array<[string, string, string, string]> = [
    ['turn number not positive', 'turn/start', '{"turn":0}', 'data.turn'],
    ['step number not an integer', 'step/start', '{"turn":1,"step":1.5}', 'data.step'],
    ['message id not a string', 'user/message', USER.replace('"m-u1"', '7'), 'data.id'],
    ['role not matching the type', 'user/message', USER.replace('"role":"user"', '"role":"assistant"'), 'data.role'],
    ['text block without text', 'user/message', USER.replace('"text":"hi"', '"txt":"hi"'), 'data.content[0].text'],
    ['block without a string type', 'user/message', USER.replace('{"type":"text","text":"hi"}', '{"type":"text","text":"hi"},{"kind":"x"}'), 'data.content[1].type'],
    ['image without attachmentId', 'user/message', USER.replace('{"type":"text","text":"hi"}', '{"type":"image","attachment":{"mediaType":"image/png"}}'), 'data.content[0].attachment.attachmentId'],
    ['nested tool result content not an array', 'user/message', USER.replace('{"type":"text","text":"hi"}', '{"type":"tool-result","toolCallId":"c","content":[{"type":"tool-result","toolCallId":"d","content":"x"}]}'), 'data.content[0].content[0].content'],
    ['unknown source kind', 'user/message', USER.replace('{"kind":"user"}', '{"kind":"robot"}'), 'data.source.kind'],
    ['assistant message role', 'assistant/message', ASSISTANT.replace('"role":"assistant"', '"role":"user"'), 'data.message.role'],
    ['tool result source not tool', 'tool/result', TOOL_RESULT.replace('{"kind":"tool","callId":"call_1"}', '{"kind":"user"}'), 'data.message.source.kind'],
    ['tool result toolCallId mismatch', 'tool/result', TOOL_RESULT.replace('"toolCallId":"call_1"', '"toolCallId":"call_2"'), 'data.message.content[0].toolCallId'],
    ['tool result with two blocks', 'tool/result', TOOL_RESULT.replace('"isError":false}]', '"isError":false},{"type":"text","text":"x"}]'), 'data.message.content'],
    ['chunk without type', 'assistant/chunk', '{"turn":1,"step":1,"chunk":{"index":0}}', 'data.chunk.type'],
    ['text delta without text', 'assistant/chunk', '{"turn":1,"step":1,"chunk":{"type":"text-delta","index":0}}', 'data.chunk.text'],
    ['header config without model', 'request/header', '{"header":{"config":{"provider":"mock"}},"reason":"initial"}', 'data.header.config.model'],
    ['header reason unknown', 'request/header', '{"header":{"config":{"provider":"mock","model":"m"}},"reason":"later"}', 'data.reason'],
    ['header.system in the seed dialect (D-02)', 'request/header', '{"header":{"config":{"provider":"mock","model":"m"},"system":"x"},"reason":"initial"}', 'data.header.system'],
    ['empty compactionId', 'compaction/start', '{"compactionId":"","turn":1}', 'data.compactionId'],
    ['compaction turn neither number nor null', 'compaction/end', '{"compactionId":"c","turn":"1"}', 'data.turn'],
    ['summary shadowedSeqs with a negative seq', 'compaction/summary', '{"compactionId":"c","summary":[],"shadowedRange":{"start":1,"end":2},"shadowedSeqs":[1,-2],"shadowedTokenCount":3,"provider":"p","model":"m"}', 'data.shadowedSeqs[1]'],
    ['prune with two shadowed seqs', 'compaction/prune', '{"shadowedRange":{"start":1,"end":1},"shadowedSeqs":[1,2],"shadowedTokenCount":3}', 'data.shadowedSeqs'],
    ['offload imageIndexes not integers', 'image/offload', '{"targets":[{"seq":3,"imageIndexes":[0,"1"]}]}', 'data.targets[0].imageIndexes[1]'],
    ['turn/end reason without kind', 'turn/end', '{"turn":1,"reason":{}}', 'data.reason.kind'],
  ]
  for (const [name, type, data, field] of cases) {
    it(`rejects ${name}`, () => {
      const surface = ['user/message', 'assistant/message', 'tool/result', 'system/message'].includes(type) ? ',"surfaceOp":"append"' : ''
      expectLogError(() => decode(line({ type, data, rest: surface })), 'DATA', { line: LINE, seq: 5, field })
    })
  }

  it('applies the rc.8 header rules: system allowed, series and startsSeries rejected (§14.1)', () => {
    const header = (rest: string) => line({ type: 'request/header', data: `{"header":{"config":{"provider":"p","model":"m"},"system":"You are."},${rest}}` })
    expect(decode(header('"reason":"change"'), 'dsh-0.1.0-rc.8')).toMatchObject({ data: { header: { system: 'You are.' } } })
    expectLogError(() => decode(header('"reason":"series"'), 'dsh-0.1.0-rc.8'), 'DATA', { line: LINE, field: 'data.reason' })
    expectLogError(() => decode(header('"reason":"initial","startsSeries":true'), 'dsh-0.1.0-rc.8'), 'DATA', { field: 'data.startsSeries' })
  })

  it('does not over-validate: unknown block types and extra payload fields pass', () => {
    const data = USER.replace('{"type":"text","text":"hi"}', '{"type":"citation","anything":[1,{"x":null}]}').replace('"source"', '"extra":{"a":1},"source"')
    expect(decode(line({ type: 'user/message', data, rest: ',"surfaceOp":"append"' }))).toMatchObject({ data: { extra: { a: 1 } } })
  })
})

describe('PACKED_ROW (§1.1)', () => {
  const row = (body: string) => `{"type":"text-chunks","seq0":4,"time0":100,"data":${body}${''}}`

  it('accepts and expands a well-formed row', () => {
    const decoded = decode(row('{"turn":1,"step":2,"index":0,"dt":[3,-1],"texts":["a","b","c"]}'))
    expect(isPackedChunkRow(decoded)).toBe(true)
    if (!isPackedChunkRow(decoded)) return
    expect(expandPackedRow(decoded).map((e) => [e.seq, e.time])).toEqual([[4, 100], [5, 103], [6, 102]])
  })

  const bad: Array<[string, string, string]> = [
    ['another top-level key', '{"type":"text-chunks","seq0":4,"time0":100,"seq":4,"data":{"turn":1,"step":1,"index":0,"dt":[],"texts":["a"]}}', 'seq'],
    ['an empty member list', row('{"turn":1,"step":1,"index":0,"dt":[],"texts":[]}'), 'data.texts'],
    ['a dt of the wrong length', row('{"turn":1,"step":1,"index":0,"dt":[1],"texts":["a","b","c"]}'), 'data.dt'],
    ['a non-integer gap', row('{"turn":1,"step":1,"index":0,"dt":[1.5],"texts":["a","b"]}'), 'data.dt[0]'],
    ['a non-string member', row('{"turn":1,"step":1,"index":0,"dt":[1],"texts":["a",2]}'), 'data.texts[1]'],
    ['an extra data key', row('{"turn":1,"step":1,"index":0,"dt":[],"texts":["a"],"id":"x"}'), 'data.id'],
    ['a negative seq0', '{"type":"reasoning-chunks","seq0":-4,"time0":100,"data":{"turn":1,"step":1,"index":0,"dt":[],"texts":["a"]}}', 'seq0'],
    ['a missing time0', '{"type":"reasoning-chunks","seq0":4,"data":{"turn":1,"step":1,"index":0,"dt":[],"texts":["a"]}}', 'time0'],
    ['a tool row without id', '{"type":"tool-call-chunks","seq0":4,"time0":1,"data":{"turn":1,"step":1,"index":0,"dt":[],"args":["{}"]}}', 'data.id'],
    ['a tool row with texts instead of args', '{"type":"tool-call-chunks","seq0":4,"time0":1,"data":{"turn":1,"step":1,"index":0,"id":"c","dt":[],"texts":["{}"]}}', 'data.texts'],
    ['a turn of 0', row('{"turn":0,"step":1,"index":0,"dt":[],"texts":["a"]}'), 'data.turn'],
    ['a lossy -0 gap', row('{"turn":1,"step":1,"index":0,"dt":[-0],"texts":["a","b"]}'), 'data'],
  ]
  for (const [name, text, field] of bad) {
    it(`rejects a row with ${name}`, () => {
      const error = expectLogError(() => decode(text), 'PACKED_ROW', { line: LINE })
      expect(error.location.field?.startsWith(field)).toBe(true)
    })
  }

  it('reports a bad row in a log with its file and line', () => {
    const text = `${line({ seq: '0', type: 'turn/start', data: '{"turn":1}' })}\n{"type":"text-chunks","seq0":1,"time0":1,"data":{"turn":1,"step":1,"index":0,"dt":[1],"texts":["a"]}}\n${line({ seq: '2', type: 'turn/end', data: '{"turn":1,"reason":{"kind":"completed"}}' })}\n`
    const error = expectLogError(() => parseLogText(text, { dialect: 'seed', file: 'rows.jsonl' }), 'PACKED_ROW', { file: 'rows.jsonl', line: 2 })
    expect(error.message).toMatch(/^rows\.jsonl:2/)
  })
})

describe('HEADER (§1.1)', () => {
  it('accepts a header record on the first line only', () => {
    const header = '{"type":"session","version":0,"id":"s1","createdAt":1700000000000,"cwd":"/x"}'
    expect(decode(header, 'seed', { first: true })).toEqual({ type: 'session', version: 0, id: 's1', createdAt: 1700000000000, cwd: '/x' })
    expectLogError(() => decode(header, 'seed', { first: false }), 'ENVELOPE', { line: LINE })
  })

  it('rejects a malformed header record', () => {
    expectLogError(() => decode('{"type":"session","version":"0","id":"s1","createdAt":1}', 'seed', { first: true }), 'HEADER', { line: LINE, field: 'version' })
    expectLogError(() => decode('{"type":"session","version":0,"createdAt":1}', 'seed', { first: true }), 'HEADER', { field: 'id' })
    expectLogError(() => decode('{"type":"session","version":0,"id":"s","createdAt":"x"}', 'seed', { first: true }), 'HEADER', { field: 'createdAt' })
    expectLogError(() => decode('{"type":"session","version":0,"id":"s","createdAt":1,"x":-0}', 'seed', { first: true }), 'HEADER', { field: 'x' })
  })
})
