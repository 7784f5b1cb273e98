import { describe, expect, it } from 'vitest'
import { CHECKS, CHECKS_BY_ID } from '../../src/checker/registry.ts'
import { INVARIANT_IDS, WORLD_CHECK_IDS, type Family, type InvariantId } from '../../src/checker/types.ts'

/** §12's families and the ids each owns (the one module per family of issue 5). */
const FAMILIES: Record<Family, [number, number]> = {
  'log-surface': [1, 9],
  bracket: [10, 19],
  pruning: [20, 24],
  policy: [25, 31],
  recovery: [32, 35],
  offload: [36, 40],
  reconstruction: [41, 44],
  lifecycle: [45, 47],
  world: [1, 6],
  hardened: [1, 8],
}

describe('checker registry', () => {
  it('registers INV-01 … INV-47 exactly once each, in catalog order, then WORLD-01 … WORLD-06', () => {
    expect(CHECKS.map((c) => c.id)).toEqual([...INVARIANT_IDS, ...WORLD_CHECK_IDS])
    expect(new Set(CHECKS.map((c) => c.id)).size).toBe(53)
    expect(CHECKS_BY_ID.size).toBe(53)
  })

  it('puts every id in the family module §12 assigns it to', () => {
    for (const c of CHECKS) {
      const n = Number(c.id.slice(c.id.indexOf('-') + 1))
      expect(c.id.startsWith('WORLD-'), c.id).toBe(c.family === 'world')
      const [lo, hi] = FAMILIES[c.family]
      expect(n >= lo && n <= hi, `${c.id} in ${c.family}`).toBe(true)
    }
  })

  it('gives every check a one-line statement', () => {
    for (const c of CHECKS) {
      expect(c.statement.length, c.id).toBeGreaterThan(20)
      expect(c.statement, c.id).not.toContain('\n')
    }
    const some: InvariantId = 'INV-13'
    expect(CHECKS_BY_ID.get(some)?.statement).toMatch(/adjacency/i)
  })
})
