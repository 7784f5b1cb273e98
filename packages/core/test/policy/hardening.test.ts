import { describe, expect, it } from 'vitest'
import { FAITHFUL_HARDENING, hardId, hardeningOf, HardeningConfigError, resolveCompactionConfig, resolveHardening } from '../../src/index.ts'

describe('hardened profile config (issue #19)', () => {
  it('leaves a faithful policy without a hardening field, so its spec is the protocol\'s', () => {
    const spec = resolveCompactionConfig({ thresholdRatio: 0.7 })
    expect('hardening' in spec).toBe(false)
    expect(hardeningOf(spec)).toBe(FAITHFUL_HARDENING)
  })

  it('switches every rule on with its defaults under profile: hardened', () => {
    const h = hardeningOf(resolveCompactionConfig({ profile: 'hardened' }))
    expect(h.profile).toBe('hardened')
    expect(h.failureBackoff).toEqual({ minGrowthTokens: 512, baseSteps: 1, maxSteps: 32 })
    expect(h.checkpointBudget).toEqual({ marginTokens: 256 })
    expect(h.oversizedUserText).toEqual({ maxWindowRatio: 0.5 })
    expect(h.capacitySanity).toEqual({ calibrate: true })
    for (const rule of ['summaryRoom', 'meteredRelief', 'openTurnPrompt', 'headRefresh'] as const) expect(h[rule]).toEqual({})
  })

  it('turns one rule on under faithful, and one off under hardened', () => {
    const one = hardeningOf(resolveCompactionConfig({ hardening: { checkpointBudget: { marginTokens: 10 } } }))
    expect(one.profile).toBe('faithful')
    expect(one.checkpointBudget).toEqual({ marginTokens: 10 })
    expect(one.failureBackoff).toBeNull()
    const off = hardeningOf(resolveCompactionConfig({ profile: 'hardened', hardening: { headRefresh: false } }))
    expect(off.headRefresh).toBeNull()
    expect(off.summaryRoom).toEqual({})
  })

  it('names the key of a bad value', () => {
    expect(() => resolveHardening('strict', undefined)).toThrow(/profile must be "faithful" or "hardened", got "strict"/)
    expect(() => resolveHardening(undefined, { backoff: true })).toThrow(/hardening\.backoff is not a rule/)
    expect(() => resolveHardening(undefined, { failureBackoff: { baseSteps: 4, maxSteps: 2 } })).toThrow(/hardening\.failureBackoff\.maxSteps must be at least baseSteps 4/)
    expect(() => resolveHardening(undefined, { summaryRoom: { x: 1 } })).toThrow(/takes none/)
    expect(() => resolveHardening(undefined, { oversizedUserText: { maxWindowRatio: 0 } })).toThrow(HardeningConfigError)
    expect(() => resolveHardening(undefined, { capacitySanity: 'yes' })).toThrow(/hardening\.capacitySanity must be true, false or an object/)
  })

  it('numbers the rules HARD-1 … HARD-8 in the issue\'s order', () => {
    expect(hardId('failureBackoff')).toBe('HARD-1')
    expect(hardId('oversizedUserText')).toBe('HARD-5')
    expect(hardId('capacitySanity')).toBe('HARD-8')
  })
})
