/**
 * Edges of HARD-8's capacity arithmetic and evidence fold (`meter/calibration.ts`) that the scenario-shaped tests
 * of `calibration.test.ts` never reach: a non-numeric observation, an estimated baseline with a surface change,
 * the cache terms of a usage record, a rejection that states zero tokens, a non-positive estimate and usage exactly
 * at the reported window. Every expected figure is written out by hand.
 */
import { describe, expect, it } from 'vitest'
import {
  CapacityEvidenceFold, calibratedTotal, calibrationPermille, overflowPromptTokens, usagePromptTokens,
} from '../../src/meter/calibration.ts'

describe('HARD-8 arithmetic edges', () => {
  it('an observation that is not a number is no evidence: factor 1', () => {
    expect(calibrationPermille(Number.NaN, 1000)).toBe(1000)
    expect(calibrationPermille(1000, Number.NaN)).toBe(1000)
  })

  it('an estimated baseline is scaled together with its surface change: ⌈2 · (500 + 100)⌉ and ⌈2 · (500 − 100)⌉', () => {
    expect(calibratedTotal({ baseline: { kind: 'estimated', tokens: 500 }, surfaceDeltaTokens: 100, totalTokens: 600 }, 2000)).toBe(1200)
    expect(calibratedTotal({ baseline: { kind: 'estimated', tokens: 500 }, surfaceDeltaTokens: -100, totalTokens: 400 }, 2000)).toBe(800)
  })

  it('the prompt side of usage adds both cache terms: 100 + 20 + 3', () => {
    expect(usagePromptTokens({ inputTokens: 100, outputTokens: 9, cacheReadTokens: 20, cacheWriteTokens: 3 })).toBe(123)
    expect(usagePromptTokens({ inputTokens: 100, outputTokens: 9, cacheReadTokens: 20 })).toBe(120)
    expect(usagePromptTokens({ inputTokens: 100, outputTokens: 9, cacheWriteTokens: 3 })).toBe(103)
  })

  it('a rejection that states zero counted tokens states nothing', () => {
    expect(overflowPromptTokens({ code: 'CONTEXT_WINDOW_EXCEEDED', message: 'However, your messages resulted in 0 tokens.' })).toBeUndefined()
  })
})

describe('HARD-8 evidence fold edges', () => {
  it('an observation against a non-positive estimate is dropped; the previous one stays', () => {
    const fold = new CapacityEvidenceFold()
    fold.observe('mock/m', 3, 'usage', 500, 0)
    expect(fold.evidence('mock', 'm').calibration).toBeUndefined()
    fold.observe('mock/m', 5, 'usage', 1500, 500)
    fold.observe('mock/m', 7, 'rejection', 900, -1)
    expect(fold.evidence('mock', 'm').calibration).toEqual({ seq: 5, source: 'usage', observedTokens: 1500, estimatedTokens: 500, permille: 3000 })
  })

  it('usage at or below the reported window, or without a window, is no excess; one token above is', () => {
    const fold = new CapacityEvidenceFold()
    fold.usage('mock/m', 2, 3999, 4000)
    fold.usage('mock/m', 4, 4000, 4000)
    fold.usage('mock/m', 6, 9000, undefined)
    expect(fold.evidence('mock', 'm')).toEqual({ calibration: undefined, excess: undefined, warned: false })
    fold.usage('mock/m', 8, 4001, 4000)
    fold.usage('mock/m', 9, 5000, 4000)
    expect(fold.evidence('mock', 'm').excess).toEqual({ usageSeq: 8, usageTokens: 4001, contextWindow: 4000 })
  })
})
