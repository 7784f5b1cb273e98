/**
 * Properties of the surface fold (§1.5), checked against a naive reference model:
 * - folding any valid random sequence of appends/replaces equals the naive model after every event
 *   (nodes in position order, replaceGeneration, shadowed seqs never return — INV-05, INV-07);
 * - the incremental tool-pairing balances equal the naive prefix sums at every cut (§4.1, INV-08);
 * - offload marks equal the model's (§6.4) and a refused append leaves log and surface untouched.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { LogError } from '../../src/errors.ts'
import { EventLog } from '../../src/log/event-log.ts'
import { interpret, openTurn, naiveBalances, newModel, opArb } from '../support/log-gen.ts'
import { fcParams } from '../support/seed.ts'

describe('surface fold (§1.5.1) equals the naive model', () => {
  it('after every event of any valid random history', () => {
    fc.assert(fc.property(fc.array(opArb, { maxLength: 150, size: 'max' }), (ops) => {
      const log = new EventLog({ dialect: 'seed' })
      log.append(openTurn) // tool-result replacements need an open turn (§1.3)
      const model = newModel()
      for (const op of ops) {
        const draft = interpret(op, log.length, model)
        if (draft === null) continue
        log.append(draft)
        const surface = log.state.surface
        expect(surface.nodes).toEqual(model.nodes)
        expect(surface.replaceGeneration).toBe(model.replaceGeneration)
        for (const s of model.shadowed) {
          expect(surface.isShadowed(s)).toBe(true)
          expect(surface.position(s)).toBe(-1)
        }
        model.nodes.forEach((s, k) => expect(surface.position(s)).toBe(k))
        const balances = naiveBalances(model)
        balances.forEach((b, k) => expect(surface.balanceAt(k)).toBe(b))
        const firstNegative = balances.findIndex((b) => b < 0)
        expect(surface.firstNegativePosition).toBe(firstNegative < 0 ? -1 : firstNegative - 1)
      }
      for (const [seq, indexes] of model.offloaded) expect([...log.offloadedIndexes(seq)].sort()).toEqual([...indexes].sort())
      expect(log.state.offloadCount).toBe([...model.offloaded.values()].reduce((n, s) => n + s.size, 0))
    }), fcParams({ numRuns: 100 }))
  }, 600_000) // 100 histories of up to 300 events, each checked after every event: ~2 s alone, more on a loaded 2-core machine

  it('refuses a replace naming a shadowed node and leaves the log untouched', () => {
    fc.assert(fc.property(fc.array(opArb, { maxLength: 100, size: 'max' }), fc.nat(), (ops, pick) => {
      const log = new EventLog({ dialect: 'seed' })
      log.append(openTurn) // tool-result replacements need an open turn (§1.3)
      const model = newModel()
      for (const op of ops) {
        const draft = interpret(op, log.length, model)
        if (draft !== null) log.append(draft)
      }
      const shadowed = [...model.shadowed]
      fc.pre(shadowed.length > 0 && model.nodes.length > 0)
      const gone = shadowed[pick % shadowed.length] as number
      const before = { length: log.length, nodes: [...log.nodes], gen: log.state.surface.replaceGeneration }
      const end = model.nodes[model.nodes.length - 1] as number
      let error: unknown
      try {
        log.append({
          time: 1, type: 'user/message',
          data: { id: 'x' as never, role: 'user', content: [{ type: 'text', text: 'x' }], source: { kind: 'user' } },
          surfaceOp: { op: 'replace', start: gone as never, end: end as never }, sourceEventSeqs: [gone as never, ...(gone === end ? [] : [end as never])],
        })
      } catch (err) { error = err }
      expect(error).toBeInstanceOf(LogError)
      expect((error as LogError).code).toBe('REPLACE')
      expect(log.length).toBe(before.length)
      expect(log.nodes).toEqual(before.nodes)
      expect(log.state.surface.replaceGeneration).toBe(before.gen)
    }), fcParams({ numRuns: 100 }))
  }, 60_000)
})
