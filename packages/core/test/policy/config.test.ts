/**
 * Policy configuration (§3.1–§3.4): Appendix A defaults in one frozen spec, every §3.2 rejection naming
 * its key and rule, per-route inheritance (§3.3) and the worked threshold/retain figures of §3.3.
 */
import { describe, expect, expectTypeOf, it } from 'vitest'
import {
  CompactionConfigError, resolveCompactionConfig, resolveCompactSpec, resolveTargetPolicy, TargetPressureConfigError,
  type CompactionConfigErrorCode, type CompactionTrigger,
} from '../../src/policy/config.ts'

const route = (provider: string, model: string) => ({ provider, model })
/** A `modelPolicies` entry for route p/m with `extra` fields. */
const pm = (extra: Record<string, unknown> = {}) => ({ provider: 'p', model: 'm', ...extra })
/** A config with only `modelPolicies`. */
const policies = (...entries: unknown[]) => ({ modelPolicies: entries })

function rejection(input: unknown): CompactionConfigError {
  try {
    resolveCompactionConfig(input)
  } catch (err) {
    if (err instanceof CompactionConfigError) return err
    throw err
  }
  throw new Error(`config was accepted: ${JSON.stringify(input)}`)
}

describe('resolveCompactionConfig defaults (§3.1, Appendix A)', () => {
  it('fills every default into one deep-frozen spec', () => {
    const spec = resolveCompactionConfig({})
    expect(spec).toEqual({
      thresholdRatio: 0.8,
      retention: { kind: 'ratio', retainRatio: 0.16 },
      summarization: { provider: '', model: '' },
      maxTokens: 8192,
      compactionRetries: 1,
      maxOverflowRetries: 1,
      auto: true,
      modelPolicies: [],
    })
    expect(Object.isFrozen(spec)).toBe(true)
    expect(Object.isFrozen(spec.retention)).toBe(true)
    expect(Object.isFrozen(spec.summarization)).toBe(true)
    expect(Object.isFrozen(spec.modelPolicies)).toBe(true)
    expect(resolveCompactionConfig(undefined)).toEqual(spec)
  })

  it('keeps explicit values, an absolute retention and frozen overrides', () => {
    const spec = resolveCompactionConfig({
      thresholdRatio: 0.7, retainTokens: 0, summarizationProvider: 'cheap', summarizationModel: 'small',
      maxTokens: 1, compactionRetries: 0, maxOverflowRetries: 0, auto: false,
      modelPolicies: [{ provider: 'p', model: 'm', retainRatio: 0.2 }],
    })
    expect(spec).toMatchObject({
      thresholdRatio: 0.7, retention: { kind: 'tokens', retainTokens: 0 }, summarization: { provider: 'cheap', model: 'small' },
      maxTokens: 1, compactionRetries: 0, maxOverflowRetries: 0, auto: false,
    })
    expect(spec.modelPolicies).toEqual([{ provider: 'p', model: 'm', retention: { kind: 'ratio', retainRatio: 0.2 } }])
    expect(Object.isFrozen(spec.modelPolicies[0]?.retention)).toBe(true)
  })

  it('CompactionTrigger is pressure | context-overflow; agent-request is reserved, not part of it (§3.4, Q-01)', () => {
    expectTypeOf<CompactionTrigger>().toEqualTypeOf<'pressure' | 'context-overflow'>()
    // @ts-expect-error — `agent-request` is reserved (§3.4) and must not type-check as a trigger.
    const reserved: CompactionTrigger = 'agent-request'
    expect(reserved).toBe('agent-request')
  })
})

describe('§3.2 load-time validation: each rule names the offending key and the rule', () => {
  const cases: ReadonlyArray<{ rule: number; code: CompactionConfigErrorCode; input: unknown; key: string }> = [
    { rule: 1, code: 'UNKNOWN_KEY', input: { treshold: 0.8 }, key: 'treshold' },
    { rule: 1, code: 'UNKNOWN_KEY', input: policies(pm({ auto: false })), key: 'modelPolicies[0].auto' },
    { rule: 1, code: 'UNKNOWN_KEY', input: policies(pm({ modelPolicies: [] })), key: 'modelPolicies[0].modelPolicies' },
    { rule: 2, code: 'RATIO', input: { thresholdRatio: 0 }, key: 'thresholdRatio' },
    { rule: 2, code: 'RATIO', input: { thresholdRatio: 1.01 }, key: 'thresholdRatio' },
    { rule: 2, code: 'RATIO', input: { retainRatio: Number.NaN }, key: 'retainRatio' },
    { rule: 2, code: 'RATIO', input: { retainRatio: '0.1' }, key: 'retainRatio' },
    { rule: 2, code: 'RATIO', input: policies(route('a', 'b'), pm({ retainRatio: 1.5 })), key: 'modelPolicies[1].retainRatio' },
    { rule: 3, code: 'INTEGER', input: { retainTokens: -1 }, key: 'retainTokens' },
    { rule: 3, code: 'INTEGER', input: { compactionRetries: 1.5 }, key: 'compactionRetries' },
    { rule: 3, code: 'INTEGER', input: { maxOverflowRetries: '1' }, key: 'maxOverflowRetries' },
    { rule: 3, code: 'INTEGER', input: { maxTokens: 0 }, key: 'maxTokens' },
    { rule: 3, code: 'BOOLEAN', input: { auto: 'yes' }, key: 'auto' },
    { rule: 4, code: 'RETENTION_CONFLICT', input: { retainRatio: 0.1, retainTokens: 100 }, key: 'retainTokens' },
    {
      rule: 4, code: 'RETENTION_CONFLICT', input: policies(pm({ retainRatio: 0.1, retainTokens: 1 })),
      key: 'modelPolicies[0].retainTokens',
    },
    { rule: 5, code: 'SUMMARY_ROUTE', input: { summarizationProvider: 'p' }, key: 'summarizationModel' },
    { rule: 5, code: 'SUMMARY_ROUTE', input: { summarizationProvider: 'p', summarizationModel: '' }, key: 'summarizationModel' },
    { rule: 5, code: 'SUMMARY_ROUTE', input: { summarizationProvider: 3, summarizationModel: 'm' }, key: 'summarizationProvider' },
    { rule: 5, code: 'SUMMARY_ROUTE', input: policies(pm({ summarizationModel: 'x' })), key: 'modelPolicies[0].summarizationProvider' },
    { rule: 6, code: 'MODEL_POLICIES', input: { modelPolicies: {} }, key: 'modelPolicies' },
    { rule: 6, code: 'MODEL_POLICIES', input: { modelPolicies: [null] }, key: 'modelPolicies[0]' },
    { rule: 6, code: 'MODEL_POLICIES', input: { modelPolicies: [{ provider: '', model: 'm' }] }, key: 'modelPolicies[0].provider' },
    { rule: 6, code: 'MODEL_POLICIES', input: { modelPolicies: [{ provider: 'p' }] }, key: 'modelPolicies[0].model' },
    { rule: 6, code: 'MODEL_POLICIES', input: policies(pm(), route('q', 'm'), pm()), key: 'modelPolicies[2]' },
    { rule: 7, code: 'RETAIN_NOT_BELOW_THRESHOLD', input: { thresholdRatio: 0.5, retainRatio: 0.5 }, key: 'retainRatio' },
    { rule: 7, code: 'RETAIN_NOT_BELOW_THRESHOLD', input: { thresholdRatio: 0.1 }, key: 'thresholdRatio' }, // default retainRatio 0.16
    // After inheritance: the entry's threshold meets the top-level ratio it inherits.
    {
      rule: 7, code: 'RETAIN_NOT_BELOW_THRESHOLD', input: { retainRatio: 0.3, modelPolicies: [pm({ thresholdRatio: 0.3 })] },
      key: 'modelPolicies[0].thresholdRatio',
    },
    { rule: 7, code: 'RETAIN_NOT_BELOW_THRESHOLD', input: policies(pm({ retainRatio: 0.9 })), key: 'modelPolicies[0].retainRatio' },
  ]

  for (const c of cases) {
    it(`rule ${c.rule} (${c.code}): ${JSON.stringify(c.input)} → ${c.key}`, () => {
      const err = rejection(c.input)
      expect(err.code).toBe(c.code)
      expect(err.rule).toBe(c.rule)
      expect(err.key).toBe(c.key)
      expect(err.message).toContain(c.key)
      expect(err.message).toContain(`(§3.2 rule ${c.rule})`)
      expect(err.name).toBe('CompactionConfigError')
    })
  }

  it('messages state the broken rule in words', () => {
    expect(rejection({ modelPolicies: [{ provider: 'p', model: 'm', retainRatio: 1.5 }] }).message).toBe(
      'invalid compaction config: modelPolicies[0].retainRatio must be a finite number in (0, 1], got 1.5 (§3.2 rule 2)',
    )
    expect(rejection({ thresholdRatio: 0.5, retainRatio: 0.5 }).message).toBe(
      'invalid compaction config: retainRatio breaks the retention rule: ' +
        'retainRatio 0.5 must be strictly below thresholdRatio 0.5 (§3.2 rule 7)',
    )
  })

  it('a config that is not a plain object is refused before any rule', () => {
    for (const input of [null, [], 'x', 3, new Map()]) expect(rejection(input).code).toBe('NOT_AN_OBJECT')
  })

  it('an absolute retainTokens is not checked at load time (only a capacity can judge it, §3.2)', () => {
    expect(() => resolveCompactionConfig({ thresholdRatio: 0.01, retainTokens: 1_000_000 })).not.toThrow()
  })

  it('a ratio retention under an entry with absolute retention is fine even if the top level is tight', () => {
    const input = { thresholdRatio: 0.2, retainRatio: 0.1, modelPolicies: [pm({ thresholdRatio: 0.05, retainTokens: 10 })] }
    expect(() => resolveCompactionConfig(input)).not.toThrow()
  })
})

describe('resolveTargetPolicy (§3.3): exact-route override and inheritance', () => {
  const spec = resolveCompactionConfig({
    thresholdRatio: 0.8, retainRatio: 0.1, summarizationProvider: 'sum', summarizationModel: 'm1', maxTokens: 4096,
    modelPolicies: [
      { provider: 'small', model: 'shared', thresholdRatio: 0.5, retainTokens: 120 },
      { provider: 'ratio', model: 'only', retainRatio: 0.05, compactionRetries: 3 },
      { provider: 'sum', model: 'both', summarizationProvider: '', summarizationModel: '', maxOverflowRetries: 0 },
    ],
  })

  it('matches provider AND model exactly; the same model under another provider is another route (§2.7)', () => {
    expect(resolveTargetPolicy(spec, route('small', 'shared'))).toEqual({
      route: route('small', 'shared'), thresholdRatio: 0.5, retention: { kind: 'tokens', retainTokens: 120 },
      summarization: { provider: 'sum', model: 'm1' }, maxTokens: 4096, compactionRetries: 1, maxOverflowRetries: 1,
    })
    expect(resolveTargetPolicy(spec, route('large', 'shared'))).toMatchObject({
      thresholdRatio: 0.8, retention: { kind: 'ratio', retainRatio: 0.1 },
    })
  })

  it('an entry without a retention inherits the top-level form; its own ratio replaces it', () => {
    expect(resolveTargetPolicy(spec, route('sum', 'both')).retention).toEqual({ kind: 'ratio', retainRatio: 0.1 })
    expect(resolveTargetPolicy(spec, route('ratio', 'only'))).toMatchObject({
      retention: { kind: 'ratio', retainRatio: 0.05 }, compactionRetries: 3,
    })
    const absolute = resolveCompactionConfig({ retainTokens: 300, modelPolicies: [{ provider: 'p', model: 'm', thresholdRatio: 0.5 }] })
    expect(resolveTargetPolicy(absolute, route('p', 'm')).retention).toEqual({ kind: 'tokens', retainTokens: 300 })
  })

  it('the summarization route is inherited or overridden as a pair', () => {
    expect(resolveTargetPolicy(spec, route('sum', 'both'))).toMatchObject({
      summarization: { provider: '', model: '' }, maxOverflowRetries: 0,
    })
    expect(resolveTargetPolicy(spec, route('ratio', 'only')).summarization).toEqual({ provider: 'sum', model: 'm1' })
  })

  it('returns a frozen policy', () => {
    const policy = resolveTargetPolicy(spec, route('x', 'y'))
    expect(Object.isFrozen(policy)).toBe(true)
    expect(Object.isFrozen(policy.route)).toBe(true)
  })
})

describe('resolveCompactSpec (§3.3 worked examples)', () => {
  it('override small/shared at 1,000 → threshold 500, retain 120; large/shared at 2,000 → 1,600, 200', () => {
    const spec = resolveCompactionConfig({
      thresholdRatio: 0.8, retainRatio: 0.1,
      modelPolicies: [{ provider: 'small', model: 'shared', thresholdRatio: 0.5, retainTokens: 120 }],
    })
    const small = resolveCompactSpec(resolveTargetPolicy(spec, route('small', 'shared')), 1000)
    const large = resolveCompactSpec(resolveTargetPolicy(spec, route('large', 'shared')), 2000)
    expect(small).toEqual({ contextWindow: 1000, thresholdTokens: 500, retainTokens: 120 })
    expect(large).toEqual({ contextWindow: 2000, thresholdTokens: 1600, retainTokens: 200 })
  })

  it('defaults: 4,000 → 3,200 / 640; 8,000 → 6,400 / 1,280; 128,000 → 102,400 / 20,480', () => {
    const policy = resolveTargetPolicy(resolveCompactionConfig({}), route('mock', 'mock-4k'))
    expect(resolveCompactSpec(policy, 4000)).toMatchObject({ thresholdTokens: 3200, retainTokens: 640 })
    expect(resolveCompactSpec(policy, 8000)).toMatchObject({ thresholdTokens: 6400, retainTokens: 1280 })
    expect(resolveCompactSpec(policy, 128_000)).toMatchObject({ thresholdTokens: 102_400, retainTokens: 20_480 })
  })

  it('uses Math.floor(contextWindow * ratio) in doubles: 100 × 0.29 → 28, not 29', () => {
    const policy = resolveTargetPolicy(resolveCompactionConfig({ thresholdRatio: 0.29, retainRatio: 0.1 }), route('p', 'm'))
    expect(resolveCompactSpec(policy, 100)).toEqual({ contextWindow: 100, thresholdTokens: 28, retainTokens: 10 })
  })

  it('throws TargetPressureConfigError keyed "provider/model" for a window that is not a positive integer', () => {
    const policy = resolveTargetPolicy(resolveCompactionConfig({}), route('mock', 'mock-4k'))
    for (const w of [0, -4000, 4000.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      let err: unknown
      try { resolveCompactSpec(policy, w) } catch (e) { err = e }
      expect(err).toBeInstanceOf(TargetPressureConfigError)
      expect(err).toMatchObject({ code: 'INVALID_CAPACITY', key: 'mock/mock-4k' })
    }
  })

  it('throws RETAIN_NOT_BELOW_THRESHOLD when an absolute retainTokens reaches the scaled threshold (§3.2, §3.3)', () => {
    const policy = resolveTargetPolicy(resolveCompactionConfig({ retainTokens: 640 }), route('mock', 'mock-800'))
    expect(() => resolveCompactSpec(policy, 800)).toThrow(TargetPressureConfigError)
    expect(() => resolveCompactSpec(policy, 800))
      .toThrow('retained budget 640 for mock/mock-800 is not below its threshold 640 (context window 800)')
    expect(() => resolveCompactSpec(policy, 801)).toThrow(TargetPressureConfigError) // floor(640.8) = 640
    expect(resolveCompactSpec(policy, 802)).toEqual({ contextWindow: 802, thresholdTokens: 641, retainTokens: 640 })
  })
})
