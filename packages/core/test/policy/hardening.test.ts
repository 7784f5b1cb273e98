import { describe, expect, it } from 'vitest'
import { anyHardening, FAITHFUL_HARDENING, HARDENING_RULES, hardId, hardeningOf, HardeningConfigError, resolveCompactionConfig, resolveHardening } from '../../src/index.ts'

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
    expect(h.checkpointBudget).toEqual({ marginTokens: 256, reliefRatio: 0.5 })
    expect(h.oversizedUserText).toEqual({ maxWindowRatio: 0.5 })
    expect(h.capacitySanity).toEqual({ calibrate: true })
    for (const rule of ['summaryRoom', 'meteredRelief', 'openTurnPrompt', 'headRefresh'] as const) expect(h[rule]).toEqual({})
  })

  it('turns one rule on under faithful, and one off under hardened', () => {
    const one = hardeningOf(resolveCompactionConfig({ hardening: { checkpointBudget: { marginTokens: 10 } } }))
    expect(one.profile).toBe('faithful')
    expect(one.checkpointBudget).toEqual({ marginTokens: 10, reliefRatio: 0.5 })
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

describe('hardened profile config: every rejection, in full', () => {
  const tail = ' (hardened profile, packages/core/docs/hardened.md)'
  const cases: ReadonlyArray<readonly [unknown, unknown, string]> = [
    ['strict', undefined, 'profile must be "faithful" or "hardened", got "strict"'],
    [undefined, [], 'hardening must be an object of rules, got an array'],
    [undefined, 'on', 'hardening must be an object of rules, got "on"'],
    [undefined, { backoff: true }, 'hardening.backoff is not a rule; allowed: failureBackoff, summaryRoom, checkpointBudget, meteredRelief, oversizedUserText, openTurnPrompt, headRefresh, capacitySanity'],
    [undefined, { failureBackoff: 1 }, 'hardening.failureBackoff must be true, false or an object of parameters, got 1'],
    [undefined, { failureBackoff: { steps: 1 } }, 'hardening.failureBackoff.steps is not a parameter; allowed: minGrowthTokens, baseSteps, maxSteps'],
    [undefined, { failureBackoff: { baseSteps: 4, maxSteps: 3 } }, 'hardening.failureBackoff.maxSteps must be at least baseSteps 4, got 3'],
    [undefined, { failureBackoff: { minGrowthTokens: -1 } }, 'hardening.failureBackoff.minGrowthTokens must be an integer ≥ 0, got -1'],
    [undefined, { failureBackoff: { baseSteps: 1.5 } }, 'hardening.failureBackoff.baseSteps must be an integer ≥ 0, got 1.5'],
    [undefined, { failureBackoff: { maxSteps: '2' } }, 'hardening.failureBackoff.maxSteps must be an integer ≥ 0, got "2"'],
    [undefined, { checkpointBudget: { margin: 1 } }, 'hardening.checkpointBudget.margin is not a parameter; allowed: marginTokens, reliefRatio'],
    [undefined, { checkpointBudget: { reliefRatio: 1.5 } }, 'hardening.checkpointBudget.reliefRatio must be a finite number in [0, 1], got 1.5'],
    [undefined, { checkpointBudget: { marginTokens: null } }, 'hardening.checkpointBudget.marginTokens must be an integer ≥ 0, got null'],
    [undefined, { oversizedUserText: { ratio: 1 } }, 'hardening.oversizedUserText.ratio is not a parameter; allowed: maxWindowRatio'],
    [undefined, { oversizedUserText: { maxWindowRatio: 0 } }, 'hardening.oversizedUserText.maxWindowRatio must be a finite number in (0, 1], got 0'],
    [undefined, { oversizedUserText: { maxWindowRatio: 1.01 } }, 'hardening.oversizedUserText.maxWindowRatio must be a finite number in (0, 1], got 1.01'],
    [undefined, { oversizedUserText: { maxWindowRatio: Infinity } }, 'hardening.oversizedUserText.maxWindowRatio must be a finite number in (0, 1], got Infinity'],
    [undefined, { oversizedUserText: { maxWindowRatio: '0.5' } }, 'hardening.oversizedUserText.maxWindowRatio must be a finite number in (0, 1], got "0.5"'],
    [undefined, { capacitySanity: { learn: true } }, 'hardening.capacitySanity.learn is not a parameter; allowed: calibrate'],
    [undefined, { capacitySanity: { calibrate: 1 } }, 'hardening.capacitySanity.calibrate must be a boolean, got 1'],
    [undefined, { headRefresh: { on: true } }, 'hardening.headRefresh.on is not a parameter: this rule takes none (use true or false)'],
  ]
  for (const [profile, hardening, message] of cases) {
    it(message, () => {
      let caught: unknown
      try { resolveHardening(profile, hardening) } catch (e) { caught = e }
      expect(caught).toBeInstanceOf(HardeningConfigError)
      expect((caught as Error).name).toBe('HardeningConfigError')
      expect((caught as Error).message).toBe(`invalid compaction config: ${message}${tail}`)
    })
  }

  it('accepts each parameter at its bounds', () => {
    expect(resolveHardening(undefined, { failureBackoff: { minGrowthTokens: 0, baseSteps: 0, maxSteps: 0 } })?.failureBackoff)
      .toEqual({ minGrowthTokens: 0, baseSteps: 0, maxSteps: 0 })
    expect(resolveHardening(undefined, { failureBackoff: { baseSteps: 3, maxSteps: 3 } })?.failureBackoff)
      .toEqual({ minGrowthTokens: 512, baseSteps: 3, maxSteps: 3 })
    expect(resolveHardening(undefined, { oversizedUserText: { maxWindowRatio: 1 } })?.oversizedUserText).toEqual({ maxWindowRatio: 1 })
    expect(resolveHardening(undefined, { capacitySanity: { calibrate: false } })?.capacitySanity).toEqual({ calibrate: false })
    expect(resolveHardening('faithful', undefined)).toEqual(FAITHFUL_HARDENING)
  })

  it('anyHardening is true exactly when some rule is on', () => {
    expect(anyHardening(FAITHFUL_HARDENING)).toBe(false)
    for (const rule of HARDENING_RULES) {
      const spec = resolveHardening(undefined, { [rule]: true })
      expect(spec?.[rule], rule).not.toBeNull()
      expect(anyHardening(spec ?? FAITHFUL_HARDENING), rule).toBe(true)
      expect(HARDENING_RULES.filter((r) => spec?.[r] !== null), rule).toEqual([rule])
    }
    expect(anyHardening(resolveHardening('hardened', Object.fromEntries(HARDENING_RULES.map((r) => [r, false]))) ?? FAITHFUL_HARDENING)).toBe(false)
  })
})
