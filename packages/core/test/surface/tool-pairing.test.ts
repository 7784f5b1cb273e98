/** Tool-pairing helpers (§4.1): balanced cuts by position, throwing on non-nodes and corrupt surfaces. */
import { describe, expect, it } from 'vitest'
import { EventLog } from '../../src/log/event-log.ts'
import { balancedCuts, toolPairingBalancedAfter, toolPairingBalancedBefore, ToolPairingError } from '../../src/surface/tool-pairing.ts'
import { assistant, logOf, marker, replacement, result, user } from '../support/events.ts'


describe('tool-pairing balance (§4.1)', () => {
  it('a parallel call batch with an unrelated node inside is one unit', () => {
    // 0 user, 1 assistant(2 calls), 2 result, 3 injected user, 4 result, 5 assistant text
    const log = logOf(user('q'), assistant(['a', 'b']), result('a'), user('context'), result('b'), assistant([]))
    const s = log.state.surface
    expect(balancedCuts(s)).toEqual([0, 1, 5, 6])
    expect(toolPairingBalancedBefore(s, 1)).toBe(true)
    expect(toolPairingBalancedAfter(s, 1)).toBe(false)
    expect(toolPairingBalancedBefore(s, 3)).toBe(false)
    expect(toolPairingBalancedAfter(s, 4)).toBe(true)
  })

  it('throws for a shadowed seq, a non-node and the empty surface', () => {
    const log = logOf(user('a'), user('b'))
    log.append(replacement(0, 0, [0]))
    const s = log.state.surface
    expect(() => toolPairingBalancedBefore(s, 0)).toThrow(/shadowed/)
    expect(() => toolPairingBalancedAfter(s, 9)).toThrow(ToolPairingError)
    expect(() => toolPairingBalancedBefore(new EventLog({ dialect: 'seed' }).state.surface, 0)).toThrow(/empty/)
  })

  it('throws on a corrupt surface whose balance goes negative, naming the node', () => {
    const log = logOf(user('a'), assistant(['x']), result('x'))
    log.append(replacement(1, 1, [1])) // shadows the call, leaving its result orphaned
    const s = log.state.surface
    expect(s.firstNegativePosition).toBe(2)
    expect(() => toolPairingBalancedBefore(s, 0)).toThrow(/negative after node 2 at position 2/)
  })

  it('pruning keeps balances: a one-for-one result replacement changes no cut', () => {
    const log = logOf(marker('turn/start'), user('a'), assistant(['x']), result('x', 'long'))
    const before = balancedCuts(log.state.surface)
    log.append({ ...result('x', 'short'), surfaceOp: { op: 'replace', start: 3 as never, end: 3 as never }, sourceEventSeqs: [3 as never] })
    expect(balancedCuts(log.state.surface)).toEqual(before)
    expect(log.nodes).toEqual([1, 2, 4])
  })
})
