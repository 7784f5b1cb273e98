/**
 * The meter's chunked list against a plain array: any sequence of push / set / splice / snapshot gives
 * the same contents, and every snapshot keeps exactly the elements it saw (later changes never leak in).
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { ChunkedList } from '../../src/meter/chunked-list.ts'
import { fcParams } from '../support/seed.ts'

type Op = { k: 'push'; v: number } | { k: 'set'; i: number; v: number } | { k: 'splice'; i: number; n: number; v: number } | { k: 'snap' }

const opArb: fc.Arbitrary<Op> = fc.oneof(
  { arbitrary: fc.record({ k: fc.constant('push' as const), v: fc.integer() }), weight: 8 },
  { arbitrary: fc.record({ k: fc.constant('set' as const), i: fc.nat(), v: fc.integer() }), weight: 3 },
  { arbitrary: fc.record({ k: fc.constant('splice' as const), i: fc.nat(), n: fc.nat({ max: 5 }), v: fc.integer() }), weight: 1 },
  { arbitrary: fc.constant({ k: 'snap' as const }), weight: 2 },
)

describe('ChunkedList', () => {
  it('matches a plain array and keeps snapshots immutable', () => {
    fc.assert(fc.property(fc.array(opArb, { maxLength: 1500, size: 'max' }), (ops) => {
      const list = new ChunkedList<number>()
      const model: number[] = []
      const snaps: Array<{ snap: ReturnType<ChunkedList<number>['snapshot']>; expected: number[] }> = []
      for (const op of ops) {
        switch (op.k) {
          case 'push': list.push(op.v); model.push(op.v); break
          case 'set':
            if (model.length === 0) break
            list.set(op.i % model.length, op.v); model[op.i % model.length] = op.v; break
          case 'splice': {
            const i = model.length === 0 ? 0 : op.i % (model.length + 1)
            expect(list.splice(i, op.n, op.v)).toEqual(model.splice(i, op.n, op.v))
            break
          }
          case 'snap': snaps.push({ snap: list.snapshot(), expected: [...model] }); break
        }
        expect(list.length).toBe(model.length)
      }
      expect(list.toArray()).toEqual(model)
      model.forEach((v, i) => expect(list.at(i)).toBe(v))
      for (const { snap, expected } of snaps) expect(snap.toArray()).toEqual(expected)
    }), fcParams({ numRuns: 60 }))
  }, 60_000)
})
