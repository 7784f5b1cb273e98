/**
 * Codec properties (§1.1): encode → decode is the identity for every event type and dialect, the
 * encoding is deterministic with a fixed key order, packed rows expand exactly per §1.1, and decoding
 * arbitrary text never throws anything but a LogError (design §8). Seed: FC_SEED (printed in names).
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { Seq } from '../../src/brand.ts'
import { LogError } from '../../src/errors.ts'
import {
  decodeLine, encodeEvent, encodeHeaderRecord, expandPackedRow, isHeaderRecord, isPackedChunkRow, type PackedChunkRow,
} from '../../src/log/codec.ts'
import { DIALECTS, EVENT_TYPES, vocabulary, type LogEvent, type SessionHeaderRecord } from '../../src/log/events.ts'
import {
  anyEventArbFor, eventArb, FC_SEED, foreignEventArb, jsonObjectArb, textArb, timeArb,
} from '../support/arbitraries.ts'

const RUNS = { seed: FC_SEED, numRuns: 100 }

function roundTrip(event: LogEvent, dialect: (typeof DIALECTS)[number], knownTypes?: ReadonlySet<string>): void {
  const line = encodeEvent(event)
  expect(line).not.toContain('\n')
  const decoded = decodeLine(line, { dialect, knownTypes, first: false })
  expect(decoded).toStrictEqual(event)
  expect(encodeEvent(decoded as LogEvent)).toBe(line)
}

describe(`encode → decode is the identity (seed ${FC_SEED})`, () => {
  for (const dialect of DIALECTS) {
    const types = EVENT_TYPES.filter((t) => vocabulary(dialect).eventTypes.has(t))
    it.each(types)(`${dialect}: %s`, (type) => {
      fc.assert(fc.property(eventArb(type, { dialect }), (event) => roundTrip(event, dialect)), { ...RUNS, numRuns: 25 })
    }, 60_000)
  }

  it('any seed event', () => {
    fc.assert(fc.property(anyEventArbFor('seed'), (event) => roundTrip(event, 'seed')), RUNS)
  }, 60_000)

  it('foreign events: declared known types and ignorable ones', () => {
    fc.assert(
      fc.property(foreignEventArb('vendor/title', false), foreignEventArb('x/unknown', true), (known, ignorable) => {
        roundTrip(known, 'seed', new Set(['vendor/title']))
        roundTrip(ignorable, 'seed')
      }),
      RUNS,
    )
  }, 60_000)
})

describe(`deterministic encoding with the fixed key order (seed ${FC_SEED})`, () => {
  const ORDER = ['seq', 'time', 'type', 'data', 'surfaceOp', 'sourceEventSeqs', 'ignorable']

  it('puts envelope keys in the order seq, time, type, data, surfaceOp, sourceEventSeqs, ignorable', () => {
    fc.assert(
      fc.property(anyEventArbFor('seed'), fc.boolean(), (event, shuffle) => {
        const source = shuffle ? Object.fromEntries(Object.entries(event).reverse()) as LogEvent : event
        const line = encodeEvent(source)
        const keys = Object.keys(JSON.parse(line) as object)
        expect(keys).toEqual(ORDER.filter((k) => keys.includes(k)))
        expect(line).toBe(encodeEvent(event))
        expect(Object.keys((JSON.parse(line) as { data: object }).data)).toEqual(Object.keys(event.data))
      }),
      RUNS,
    )
  }, 60_000)

  it('omits absent and undefined optional envelope fields', () => {
    const event = { seq: Seq(1), time: 2, type: 'turn/start', data: { turn: 1 }, surfaceOp: undefined, sourceEventSeqs: undefined } as unknown as LogEvent
    expect(encodeEvent(event)).toBe('{"seq":1,"time":2,"type":"turn/start","data":{"turn":1}}')
  })

  it('writes the session header record with type, version, id, createdAt first', () => {
    fc.assert(
      fc.property(fc.nat(), fc.string(), timeArb, jsonObjectArb, (version, id, createdAt, extra) => {
        const header = { ...extra, createdAt, id, version, type: 'session' } as SessionHeaderRecord
        const line = encodeHeaderRecord(header)
        const decoded = decodeLine(line, { dialect: 'seed', first: true })
        expect(isHeaderRecord(decoded)).toBe(true)
        expect(decoded).toStrictEqual({ ...header })
        // (checked on the text: JS objects list integer-like keys first whatever the JSON order)
        expect(line.startsWith(`{"type":"session","version":${version},"id":${JSON.stringify(id)},"createdAt":${JSON.stringify(createdAt)}`)).toBe(true)
      }),
      RUNS,
    )
  }, 60_000)
})

const rowArb: fc.Arbitrary<PackedChunkRow> = fc
  .record({
    kind: fc.constantFrom('text-chunks' as const, 'reasoning-chunks' as const, 'tool-call-chunks' as const),
    seq0: fc.nat({ max: 1_000_000 }),
    time0: fc.integer({ min: 0, max: 2_000_000_000_000 }),
    turn: fc.integer({ min: 1, max: 50 }),
    step: fc.integer({ min: 1, max: 50 }),
    index: fc.nat({ max: 10 }),
    members: fc.array(textArb, { minLength: 1, maxLength: 8 }),
    gaps: fc.array(fc.integer({ min: -1000, max: 1000 }), { minLength: 7, maxLength: 7 }),
    id: fc.string({ minLength: 1 }),
    name: fc.option(fc.string(), { nil: undefined }),
  })
  .map(({ kind, seq0, time0, turn, step, index, members, gaps, id, name }): PackedChunkRow => {
    const dt = gaps.slice(0, members.length - 1)
    if (kind !== 'tool-call-chunks') return { type: kind, seq0: Seq(seq0), time0, data: { turn, step, index, dt, texts: members } }
    return name === undefined
      ? { type: kind, seq0: Seq(seq0), time0, data: { turn, step, index, id, dt, args: members } }
      : { type: kind, seq0: Seq(seq0), time0, data: { turn, step, index, id, name, dt, args: members } }
  })

describe(`packed rows expand exactly per §1.1 (seed ${FC_SEED})`, () => {
  it('n members → n assistant/chunk events with seq0 + k and time0 + Σ dt[0..k-1]', () => {
    fc.assert(
      fc.property(rowArb, (row) => {
        const decoded = decodeLine(JSON.stringify(row), { dialect: 'seed', first: false })
        expect(isPackedChunkRow(decoded)).toBe(true)
        const events = expandPackedRow(decoded as PackedChunkRow)
        const members = row.type === 'tool-call-chunks' ? row.data.args : row.data.texts
        expect(events).toHaveLength(members.length)
        events.forEach((event, k) => {
          const time = row.time0 + row.data.dt.slice(0, k).reduce((a, b) => a + b, 0)
          expect(event.seq).toBe(row.seq0 + k)
          expect(event.time).toBe(time)
          expect(event.type).toBe('assistant/chunk')
          expect(Object.keys(event)).toEqual(['seq', 'time', 'type', 'data'])
          const chunk = row.type === 'tool-call-chunks'
            ? { type: 'tool-call-delta', index: row.data.index, id: row.data.id, ...(row.data.name === undefined ? {} : { name: row.data.name }), argumentsDelta: members[k] }
            : { type: row.type === 'text-chunks' ? 'text-delta' : 'reasoning-delta', index: row.data.index, text: members[k] }
          expect(event.data).toStrictEqual({ turn: row.data.turn, step: row.data.step, chunk })
          // Every expanded event is itself a valid event line.
          expect(decodeLine(encodeEvent(event), { dialect: 'seed', first: false })).toStrictEqual(event)
        })
      }),
      RUNS,
    )
  }, 60_000)
})

describe(`decoding never throws an untyped error (design §8, seed ${FC_SEED})`, () => {
  it('arbitrary text and mutated valid lines give an event or a LogError', () => {
    const mutated = fc.tuple(anyEventArbFor('seed'), fc.nat(), fc.nat({ max: 20 }), fc.string({ maxLength: 3 })).map(([event, at, drop, insert]) => {
      const line = encodeEvent(event)
      const i = at % (line.length + 1)
      return line.slice(0, i) + insert + line.slice(i + drop)
    })
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.json(), mutated), fc.boolean(), (text, first) => {
        try {
          decodeLine(text, { dialect: 'seed', first })
        } catch (error) {
          expect(error).toBeInstanceOf(LogError)
        }
      }),
      { ...RUNS, numRuns: 300 },
    )
  }, 60_000)
})
