/**
 * Mutation-driven cases for policy/config.ts, policy/hardening.ts and policy/pressure.ts (issue #18, branch modpol):
 * the HARD-3 `reliefRatio` bounds on both sides, a NaN ratio, the `assertNever` defaults of the rule table and of
 * the retention form, and a `pressureOf` figure that decides step 8 against the measured total.
 * Every expectation is written out by hand.
 */
import { appendixBEvents } from '@compaction-sim/fixtures'
import { describe, expect, it } from 'vitest'
import { InvariantError } from '../../src/errors.ts'
import { EventLog } from '../../src/log/event-log.ts'
import type { LlmModelInfo } from '../../src/log/llm.ts'
import {
  compactionConfigRule, resolveCompactionConfig, resolveCompactSpec,
  type CompactionConfigErrorCode, type TargetPolicy,
} from '../../src/policy/config.ts'
import { HardeningConfigError, resolveHardening } from '../../src/policy/hardening.ts'
import { evaluatePressure } from '../../src/policy/pressure.ts'
import { measurementOf } from '../range/surface-builder.ts'

const TAIL = ' (hardened profile, packages/core/docs/hardened.md)'

/** The message of the `HardeningConfigError` that `resolveHardening(undefined, hardening)` throws. */
function hardeningRejection(hardening: unknown): string {
  let caught: unknown
  try {
    resolveHardening(undefined, hardening)
  } catch (err) {
    caught = err
  }
  expect(caught).toBeInstanceOf(HardeningConfigError)
  return (caught as Error).message
}

describe('HARD-3 checkpointBudget.reliefRatio: a closed interval [0, 1]', () => {
  it('accepts 0, 0.5-like values and 1 as given', () => {
    expect(resolveHardening(undefined, { checkpointBudget: { reliefRatio: 0 } })?.checkpointBudget)
      .toEqual({ marginTokens: 256, reliefRatio: 0 })
    expect(resolveHardening(undefined, { checkpointBudget: { reliefRatio: 0.3 } })?.checkpointBudget)
      .toEqual({ marginTokens: 256, reliefRatio: 0.3 })
    expect(resolveHardening(undefined, { checkpointBudget: { reliefRatio: 1, marginTokens: 7 } })?.checkpointBudget)
      .toEqual({ marginTokens: 7, reliefRatio: 1 })
  })

  it('rejects a negative ratio', () => {
    expect(hardeningRejection({ checkpointBudget: { reliefRatio: -0.1 } }))
      .toBe(`invalid compaction config: hardening.checkpointBudget.reliefRatio must be a finite number in [0, 1], got -0.1${TAIL}`)
  })

  it('rejects NaN, a numeric string and infinities', () => {
    expect(hardeningRejection({ checkpointBudget: { reliefRatio: Number.NaN } }))
      .toBe(`invalid compaction config: hardening.checkpointBudget.reliefRatio must be a finite number in [0, 1], got NaN${TAIL}`)
    expect(hardeningRejection({ checkpointBudget: { reliefRatio: '0.5' } }))
      .toBe(`invalid compaction config: hardening.checkpointBudget.reliefRatio must be a finite number in [0, 1], got "0.5"${TAIL}`)
    expect(hardeningRejection({ checkpointBudget: { reliefRatio: Number.NEGATIVE_INFINITY } }))
      .toBe(`invalid compaction config: hardening.checkpointBudget.reliefRatio must be a finite number in [0, 1], got -Infinity${TAIL}`)
  })
})

describe('HARD-5 oversizedUserText.maxWindowRatio', () => {
  it('rejects NaN (neither below 0 nor above 1)', () => {
    expect(hardeningRejection({ oversizedUserText: { maxWindowRatio: Number.NaN } }))
      .toBe(`invalid compaction config: hardening.oversizedUserText.maxWindowRatio must be a finite number in (0, 1], got NaN${TAIL}`)
  })

  it('accepts 1 and a small positive ratio', () => {
    expect(resolveHardening(undefined, { oversizedUserText: { maxWindowRatio: 1 } })?.oversizedUserText).toEqual({ maxWindowRatio: 1 })
    expect(resolveHardening(undefined, { oversizedUserText: { maxWindowRatio: 0.01 } })?.oversizedUserText).toEqual({ maxWindowRatio: 0.01 })
  })
})

describe('the assertNever defaults of config.ts', () => {
  it('compactionConfigRule refuses a code outside the closed set', () => {
    let caught: unknown
    try {
      compactionConfigRule('BOGUS' as CompactionConfigErrorCode)
    } catch (err) {
      caught = err
    }
    expect(caught).toBeInstanceOf(InvariantError)
    expect((caught as Error).message).toBe('unexpected compaction config error code: "BOGUS"')
  })

  it('resolveCompactSpec refuses a retention form that is neither ratio nor tokens', () => {
    const policy = {
      route: { provider: 'p', model: 'm' },
      thresholdRatio: 0.8,
      retention: { kind: 'percent', retainPercent: 10 },
      summarization: { provider: '', model: '' },
      maxTokens: 8192,
      compactionRetries: 1,
      maxOverflowRetries: 1,
    } as unknown as TargetPolicy
    let caught: unknown
    try {
      resolveCompactSpec(policy, 1000)
    } catch (err) {
      caught = err
    }
    expect(caught).toBeInstanceOf(InvariantError)
    expect((caught as Error).message).toBe('unexpected retention form: {"kind":"percent","retainPercent":10}')
  })
})

describe('evaluatePressure step 8 compares pressureOf, not the measured total, when given', () => {
  const PRICES = { 2: 28, 3: 20, 10: 15, 15: 1303, 23: 101, 28: 152, 37: 77, 42: 22, 47: 14, 49: 1925 }
  const modelInfo = async (provider: string, model: string): Promise<LlmModelInfo> =>
    ({ provider, id: model, name: model, context: { contextWindow: 4000 } })

  it('a total of 3,762 with a pressure figure of 3,199 is below the 3,200 threshold', async () => {
    const log = EventLog.fromEvents(appendixBEvents().slice(0, 51), { dialect: 'seed' })
    const decision = await evaluatePressure({
      log, spec: resolveCompactionConfig({}), measure: () => measurementOf(log, PRICES, 3762),
      resolveModelInfo: modelInfo, pressureOf: () => 3199,
    })
    expect(decision.kind).toBe('below')
    if (decision.kind !== 'below') return
    expect(decision.compact).toEqual({ contextWindow: 4000, thresholdTokens: 3200, retainTokens: 640 })
    expect(decision.measurement.totalTokens).toBe(3762)
  })

  it('a total of 100 with a pressure figure of 3,200 is above', async () => {
    const log = EventLog.fromEvents(appendixBEvents().slice(0, 51), { dialect: 'seed' })
    const seen: number[] = []
    const decision = await evaluatePressure({
      log, spec: resolveCompactionConfig({}), measure: () => measurementOf(log, PRICES, 100),
      resolveModelInfo: modelInfo, pressureOf: (m) => { seen.push(m.totalTokens); return 3200 },
    })
    expect(decision.kind).toBe('above')
    expect(seen).toEqual([100])
  })
})
