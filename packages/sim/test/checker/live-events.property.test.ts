/**
 * The checker model's live-event table (`LiveEvents`) behaves as a `Map` from seq to event under any
 * sequence of sets and deletes, including colliding seqs, seqs beyond the int32 range and growth.
 */
import type { LogEvent } from '@compaction-sim/core'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { fcParams } from '../../../core/test/support/seed.ts'
import { LiveEvents } from '../../src/checker/live-events.ts'

type Op = { kind: 'set' | 'delete' | 'get'; seq: number }

const seqArb = fc.oneof(
  fc.integer({ min: 0, max: 300 }),
  fc.integer({ min: 0, max: 8 }).map((k) => k * 64), // one home slot while the table is small
  fc.constantFrom(2 ** 31, 2 ** 32 + 5, 2 ** 53 - 1, 2 ** 40),
)
const opArb: fc.Arbitrary<Op> = fc.record({ kind: fc.constantFrom('set', 'set', 'delete', 'get'), seq: seqArb })

describe('LiveEvents (checker model, design §6 bounded memory)', () => {
  it('agrees with a Map on every get and on its size', () => {
    fc.assert(
      fc.property(fc.array(opArb, { maxLength: 400 }), (ops) => {
        const table = new LiveEvents()
        const map = new Map<number, LogEvent>()
        ops.forEach((op, i) => {
          const event = { seq: op.seq, tag: i } as unknown as LogEvent
          if (op.kind === 'set') {
            table.set(op.seq, event)
            map.set(op.seq, event)
          } else if (op.kind === 'delete') {
            table.delete(op.seq)
            map.delete(op.seq)
          }
          expect(table.get(op.seq)).toBe(map.get(op.seq))
          expect(table.size).toBe(map.size)
        })
        for (const [seq, event] of map) expect(table.get(seq)).toBe(event)
      }),
      fcParams({ numRuns: 100 }),
    )
  }, 60_000)
})
