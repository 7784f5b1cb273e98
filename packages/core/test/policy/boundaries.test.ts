/**
 * Boundary cases of the §3.3 scaling that the worked examples miss: every window × ratio there is a whole
 * number, so `Math.floor` and `Math.ceil` (or rounding) agree on all of them. Here the products are
 * fractional, and each expectation is the floor written out by hand (640.16 → 640, 3200.8 → 3200, …).
 */
import { describe, expect, it } from 'vitest'
import { resolveCompactionConfig, resolveCompactSpec, resolveTargetPolicy, TargetPressureConfigError } from '../../src/policy/config.ts'

const route = { provider: 'p', model: 'm' }
/** The resolved policy of route p/m for a top-level config. */
const policyOf = (config: Record<string, unknown>) => resolveTargetPolicy(resolveCompactionConfig(config), route)

describe('resolveCompactSpec with fractional window × ratio (§3.3 Math.floor)', () => {
  it('defaults at 4,001: threshold floor(3200.8) = 3200, retain floor(640.16) = 640', () => {
    expect(resolveCompactSpec(policyOf({}), 4001)).toEqual({ contextWindow: 4001, thresholdTokens: 3200, retainTokens: 640 })
  })

  it('retain 0.16 of 999: floor(159.84) = 159, not 160 (the fraction is above one half)', () => {
    expect(resolveCompactSpec(policyOf({}), 999)).toEqual({ contextWindow: 999, thresholdTokens: 799, retainTokens: 159 })
  })

  it('retain 0.1 of 1,001 in doubles (100.10000000000001) → 100', () => {
    expect(resolveCompactSpec(policyOf({ retainRatio: 0.1 }), 1001)).toMatchObject({ retainTokens: 100 })
  })

  it('a window of 7: threshold floor(5.6) = 5, retain floor(1.12) = 1', () => {
    expect(resolveCompactSpec(policyOf({}), 7)).toEqual({ contextWindow: 7, thresholdTokens: 5, retainTokens: 1 })
  })

  it('a whole product is kept as is: 125 × 0.16 = 20', () => {
    expect(resolveCompactSpec(policyOf({}), 125)).toMatchObject({ retainTokens: 20 })
  })

  it('the retention rule compares the floored figures: 3 × 0.49 and 3 × 0.5 both floor to 1 → rejected', () => {
    const policy = policyOf({ thresholdRatio: 0.5, retainRatio: 0.49 })
    expect(() => resolveCompactSpec(policy, 3)).toThrow(TargetPressureConfigError)
    expect(() => resolveCompactSpec(policy, 3)).toThrow('retained budget 1 for p/m is not below its threshold 1 (context window 3)')
    // 10 × 0.49 = 4.9 → 4, below 10 × 0.5 = 5
    expect(resolveCompactSpec(policy, 10)).toEqual({ contextWindow: 10, thresholdTokens: 5, retainTokens: 4 })
  })
})
