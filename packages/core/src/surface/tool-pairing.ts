/**
 * Tool-pairing balance helpers (§4.1). Balances are computed over the current surface in position
 * order; a negative prefix means the surface is corrupt and every helper throws.
 */
import { InvariantError } from '../errors.ts'
import type { Surface } from './surface.ts'

/** Thrown when a pairing helper is asked about a non-node or the surface is corrupt (§4.1). */
export class ToolPairingError extends Error {
  override readonly name = 'ToolPairingError'
  readonly code: 'NOT_A_NODE' | 'NEGATIVE_BALANCE'
  constructor(code: 'NOT_A_NODE' | 'NEGATIVE_BALANCE', message: string) {
    super(message)
    this.code = code
  }
}

function assertSound(surface: Surface): void {
  const at = surface.firstNegativePosition
  if (at >= 0) {
    throw new ToolPairingError('NEGATIVE_BALANCE', `tool pairing goes negative after node ${surface.nodes[at]} at position ${at} (a tool result without an open call)`)
  }
}

function positionOf(surface: Surface, seq: number): number {
  const p = surface.position(seq)
  if (p < 0) {
    const why = surface.isShadowed(seq) ? 'it was shadowed' : surface.nodes.length === 0 ? 'the surface is empty' : 'it is not on the surface'
    throw new ToolPairingError('NOT_A_NODE', `seq ${seq} is not a current surface node: ${why}`)
  }
  return p
}

/** True when the cut just before node `seq` is balanced (no unanswered call crosses it). Throws per §4.1. */
export function toolPairingBalancedBefore(surface: Surface, seq: number): boolean {
  assertSound(surface)
  return surface.balanceAt(positionOf(surface, seq)) === 0
}

/** True when the cut just after node `seq` is balanced. Throws per §4.1. */
export function toolPairingBalancedAfter(surface: Surface, seq: number): boolean {
  assertSound(surface)
  return surface.balanceAt(positionOf(surface, seq) + 1) === 0
}

/** The positions k (0 … n) whose cut is balanced, in ascending order. Throws on a corrupt surface. */
export function balancedCuts(surface: Surface): number[] {
  assertSound(surface)
  const out: number[] = []
  for (let k = 0; k <= surface.nodes.length; k++) if (surface.balanceAt(k) === 0) out.push(k)
  if (out[0] !== 0) throw new InvariantError('cut 0 must always be balanced')
  return out
}
