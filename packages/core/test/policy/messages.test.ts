/**
 * The exact text of every §3.2 load-time rejection and §3.3 capacity error: the message is the contract a
 * user reads ("bad input → a clear error naming the field"), so each one is pinned in full, including how
 * the offending value is described (number, string, array, object, null, …).
 */
import { appendixBEvents } from '@compaction-sim/fixtures'
import { describe, expect, it } from 'vitest'
import { InvariantError } from '../../src/errors.ts'
import { EventLog } from '../../src/log/event-log.ts'
import { CompactionBusyError, evaluatePressure, ModelContextError } from '../../src/policy/pressure.ts'
import { measurementOf } from '../range/surface-builder.ts'
import {
  compactionConfigRule, resolveCompactionConfig, resolveCompactSpec, resolveTargetPolicy, routeKey,
} from '../../src/policy/config.ts'

/** The message of the error `resolveCompactionConfig(input)` throws. */
function messageOf(input: unknown): string {
  try {
    resolveCompactionConfig(input)
  } catch (err) {
    return (err as Error).message
  }
  throw new Error(`config was accepted: ${JSON.stringify(input)}`)
}

const P = 'invalid compaction config: '

describe('§3.2 rejection messages, in full', () => {
  const cases: ReadonlyArray<[unknown, string]> = [
    [null, `${P}<config> must be a plain object, got null`],
    [[], `${P}<config> must be a plain object, got an array`],
    ['x', `${P}<config> must be a plain object, got "x"`],
    [3, `${P}<config> must be a plain object, got 3`],
    [new Map(), `${P}<config> must be a plain object, got an object`],
    [{ treshold: 0.8 }, `${P}treshold is not a known key; allowed: thresholdRatio, retainRatio, retainTokens, summarizationProvider, ` +
      'summarizationModel, maxTokens, compactionRetries, maxOverflowRetries, modelPolicies, auto, profile, hardening (§3.2 rule 1)'],
    [{ modelPolicies: [{ provider: 'p', model: 'm', auto: true }] }, `${P}modelPolicies[0].auto is not a known key; allowed: thresholdRatio, ` +
      'retainRatio, retainTokens, summarizationProvider, summarizationModel, maxTokens, compactionRetries, maxOverflowRetries, provider, model (§3.2 rule 1)'],
    [{ thresholdRatio: 0 }, `${P}thresholdRatio must be a finite number in (0, 1], got 0 (§3.2 rule 2)`],
    [{ thresholdRatio: 1.01 }, `${P}thresholdRatio must be a finite number in (0, 1], got 1.01 (§3.2 rule 2)`],
    [{ retainRatio: Number.POSITIVE_INFINITY }, `${P}retainRatio must be a finite number in (0, 1], got Infinity (§3.2 rule 2)`],
    [{ retainRatio: true }, `${P}retainRatio must be a finite number in (0, 1], got true (§3.2 rule 2)`],
    [{ retainTokens: -1 }, `${P}retainTokens must be a non-negative integer, got -1 (§3.2 rule 3)`],
    [{ maxTokens: 0 }, `${P}maxTokens must be a positive integer, got 0 (§3.2 rule 3)`],
    [{ compactionRetries: 1.5 }, `${P}compactionRetries must be a non-negative integer, got 1.5 (§3.2 rule 3)`],
    [{ maxOverflowRetries: '1' }, `${P}maxOverflowRetries must be a non-negative integer, got "1" (§3.2 rule 3)`],
    [{ auto: 'yes' }, `${P}auto must be a boolean, got "yes" (§3.2 rule 3)`],
    [{ auto: 0 }, `${P}auto must be a boolean, got 0 (§3.2 rule 3)`],
    [{ auto: () => true }, `${P}auto must be a boolean, got function (§3.2 rule 3)`],
    [{ auto: 1n }, `${P}auto must be a boolean, got bigint (§3.2 rule 3)`],
    [{ retainRatio: 0.1, retainTokens: 100 }, `${P}retainTokens cannot be combined with retainRatio in the same scope (§3.2 rule 4)`],
    [{ summarizationProvider: 'p' }, `${P}summarizationModel must be set together with summarizationProvider (they form one route) (§3.2 rule 5)`],
    [{ summarizationModel: 'm' }, `${P}summarizationProvider must be set together with summarizationModel (they form one route) (§3.2 rule 5)`],
    [{ summarizationProvider: 'p', summarizationModel: '' },
      `${P}summarizationModel is empty while its pair is not: set both or leave both empty (§3.2 rule 5)`],
    [{ summarizationProvider: '', summarizationModel: 'm' },
      `${P}summarizationProvider is empty while its pair is not: set both or leave both empty (§3.2 rule 5)`],
    [{ summarizationProvider: 3, summarizationModel: 'm' }, `${P}summarizationProvider must be a string, got 3 (§3.2 rule 5)`],
    [{ summarizationProvider: 'p', summarizationModel: null }, `${P}summarizationModel must be a string, got null (§3.2 rule 5)`],
    [{ modelPolicies: {} }, `${P}modelPolicies must be an array, got an object (§3.2 rule 6)`],
    [{ modelPolicies: 'p/m' }, `${P}modelPolicies must be an array, got "p/m" (§3.2 rule 6)`],
    [{ modelPolicies: [null] }, `${P}modelPolicies[0] must be a plain object, got null (§3.2 rule 6)`],
    [{ modelPolicies: [[]] }, `${P}modelPolicies[0] must be a plain object, got an array (§3.2 rule 6)`],
    [{ modelPolicies: [{ provider: '', model: 'm' }] }, `${P}modelPolicies[0].provider must be a non-empty string, got "" (§3.2 rule 6)`],
    [{ modelPolicies: [{ provider: 'p' }] }, `${P}modelPolicies[0].model must be a non-empty string, got undefined (§3.2 rule 6)`],
    [{ modelPolicies: [{ provider: 'p', model: 7 }] }, `${P}modelPolicies[0].model must be a non-empty string, got 7 (§3.2 rule 6)`],
    [{ modelPolicies: [{ provider: 'p', model: 'm' }, { provider: 'q', model: 'm' }, { provider: 'p', model: 'm' }] },
      `${P}modelPolicies[2] repeats the route p/m of modelPolicies[0] (§3.2 rule 6)`],
    [{ thresholdRatio: 0.5, retainRatio: 0.5 },
      `${P}retainRatio breaks the retention rule: retainRatio 0.5 must be strictly below thresholdRatio 0.5 (§3.2 rule 7)`],
    [{ thresholdRatio: 0.1 },
      `${P}thresholdRatio breaks the retention rule: retainRatio 0.16 must be strictly below thresholdRatio 0.1 (§3.2 rule 7)`],
    [{ retainRatio: 0.3, modelPolicies: [{ provider: 'p', model: 'm', thresholdRatio: 0.3 }] },
      `${P}modelPolicies[0].thresholdRatio breaks the retention rule: retainRatio 0.3 must be strictly below thresholdRatio 0.3 (§3.2 rule 7)`],
    [{ modelPolicies: [{ provider: 'p', model: 'm', retainRatio: 0.9 }] },
      `${P}modelPolicies[0].retainRatio breaks the retention rule: retainRatio 0.9 must be strictly below thresholdRatio 0.8 (§3.2 rule 7)`],
  ]
  for (const [input, message] of cases) {
    it(message, () => {
      expect(messageOf(input)).toBe(message)
    })
  }

  it('a key whose value is undefined is absent, at the top level and in an entry', () => {
    const spec = resolveCompactionConfig({ thresholdRatio: undefined, auto: undefined, modelPolicies: [{ provider: 'p', model: 'm', retainRatio: undefined }] })
    expect(spec.thresholdRatio).toBe(0.8)
    expect(spec.auto).toBe(true)
    expect(spec.modelPolicies).toEqual([{ provider: 'p', model: 'm' }])
  })

  it('an object with a null prototype is a plain object', () => {
    const input = Object.assign(Object.create(null) as Record<string, unknown>, { thresholdRatio: 0.7 })
    expect(resolveCompactionConfig(input).thresholdRatio).toBe(0.7)
  })

  it('the rule number of each code', () => {
    expect(compactionConfigRule('NOT_AN_OBJECT')).toBeNull()
    expect(compactionConfigRule('BOOLEAN')).toBe(3)
  })
})

describe('§3.3 capacity errors, in full', () => {
  const policy = resolveTargetPolicy(resolveCompactionConfig({}), { provider: 'mock', model: 'mock-4k' })

  it('names the route and describes the window', () => {
    expect(() => resolveCompactSpec(policy, 4000.5)).toThrow('context window of mock/mock-4k must be a positive integer, got 4000.5')
    expect(() => resolveCompactSpec(policy, 0)).toThrow('context window of mock/mock-4k must be a positive integer, got 0')
  })

  it('routeKey is "provider/model"', () => {
    expect(routeKey({ provider: 'a', model: 'b/c' })).toBe('a/b/c')
  })
})

describe('§3.2/§3.3 edges the rejection tables do not reach', () => {
  it('a ratio of exactly 1 is inside (0, 1]', () => {
    expect(resolveCompactionConfig({ thresholdRatio: 1 }).thresholdRatio).toBe(1)
  })

  it('an entry sets only the fields it states: no key is present as undefined', () => {
    const spec = resolveCompactionConfig({ modelPolicies: [{ provider: 'p', model: 'm' }] })
    expect(Object.keys(spec.modelPolicies[0] ?? {})).toEqual(['provider', 'model'])
  })

  it('an entry keeps every field it states', () => {
    const spec = resolveCompactionConfig({
      modelPolicies: [{
        provider: 'p', model: 'm', thresholdRatio: 0.6, retainTokens: 5, summarizationProvider: 's', summarizationModel: 'x',
        maxTokens: 7, compactionRetries: 0, maxOverflowRetries: 2,
      }],
    })
    expect(spec.modelPolicies[0]).toStrictEqual({
      provider: 'p', model: 'm', thresholdRatio: 0.6, retention: { kind: 'tokens', retainTokens: 5 },
      summarization: { provider: 's', model: 'x' }, maxTokens: 7, compactionRetries: 0, maxOverflowRetries: 2,
    })
  })

  it('an entry matches provider AND model: the same provider with another model is another route', () => {
    const spec = resolveCompactionConfig({ modelPolicies: [{ provider: 'p', model: 'big', thresholdRatio: 0.5 }] })
    expect(resolveTargetPolicy(spec, { provider: 'p', model: 'small' }).thresholdRatio).toBe(0.8)
    expect(resolveTargetPolicy(spec, { provider: 'p', model: 'big' }).thresholdRatio).toBe(0.5)
  })

  it('an entry overrides the summarization route and the retry counts of the top level', () => {
    const spec = resolveCompactionConfig({
      summarizationProvider: 'top', summarizationModel: 't', compactionRetries: 4, maxOverflowRetries: 4,
      modelPolicies: [{ provider: 'p', model: 'm', summarizationProvider: 'own', summarizationModel: 'o', compactionRetries: 0, maxOverflowRetries: 2 }],
    })
    expect(resolveTargetPolicy(spec, { provider: 'p', model: 'm' })).toMatchObject({
      summarization: { provider: 'own', model: 'o' }, compactionRetries: 0, maxOverflowRetries: 2,
    })
  })
})

describe('pressure errors (§3.5, §2.7), in full', () => {
  /** Appendix B up to the bracket's start (seq 51): route mock/mock-4k; every node of the surface then, priced. */
  const PRICES = { 2: 28, 3: 20, 10: 15, 15: 1303, 23: 101, 28: 152, 37: 77, 42: 22, 47: 14, 49: 1925 }
  const log = () => EventLog.fromEvents(appendixBEvents().slice(0, 51), { dialect: 'seed' })

  it('ModelContextError names the route and the reported window', () => {
    const err = new ModelContextError('mock/mock-4k', -3)
    expect(err.name).toBe('ModelContextError')
    expect(err.message).toBe('adapter for mock/mock-4k reported context window -3, which is not a positive integer')
    expect(err.failure).toEqual({ code: 'INVALID_MODEL_CONTEXT', message: err.message })
  })

  it('CompactionBusyError names the open bracket', () => {
    const err = new CompactionBusyError({ compactionId: 'cmp-1', startSeq: 9, turn: 2 } as never)
    expect(err.name).toBe('CompactionBusyError')
    expect(err.message).toBe('busy: compaction cmp-1 (started at seq 9) is still open')
  })

  it('a measure() that does not measure the log as it is now is an invariant error, not a stale comparison', async () => {
    const l = log()
    const err = await evaluatePressure({
      log: l, spec: resolveCompactionConfig({}),
      measure: () => ({ ...measurementOf(l, PRICES, 3762), logRevision: 50 }),
      resolveModelInfo: async (provider, id) => ({ provider, id, name: id, context: { contextWindow: 4000 } }),
    }).then(() => null, (e: unknown) => e)
    expect(err).toBeInstanceOf(InvariantError)
    expect((err as Error).message).toBe('measure() returned log revision 50, but the log has 51 events')
  })
})
