/** Pruner configuration (§5.1): defaults, the frozen spec, and one test per refused rule naming its key. */
import { describe, expect, it } from 'vitest'
import { PRUNE_MARKER } from '../../src/constants.ts'
import { harnessReadOnlyPath, offloadPlaceholder } from '../../src/offload/projection.ts'
import { PRUNE_DEFAULTS, PruneConfigError, resolvePruneConfig, type PruneConfigErrorCode } from '../../src/prune/config.ts'

function refused(input: unknown, code: PruneConfigErrorCode, key: string, reason: RegExp, marker?: string): void {
  let error: unknown
  try {
    if (marker === undefined) resolvePruneConfig(input)
    else resolvePruneConfig(input, marker)
  } catch (err) { error = err }
  expect(error).toBeInstanceOf(PruneConfigError)
  const e = error as PruneConfigError
  expect(e.name).toBe('PruneConfigError')
  expect(e.code).toBe(code)
  expect(e.key).toBe(key)
  if (key !== '') expect(e.message).toContain(key)
  expect(e.message).toMatch(reason)
}

describe('resolvePruneConfig (§5.1)', () => {
  it('§5.1 Appendix A: resolves the defaults 8192 / 4096 / 1024 with the 43-code-point marker into a frozen spec', () => {
    const spec = resolvePruneConfig(undefined)
    expect(spec).toEqual({ thresholdChars: 8192, headChars: 4096, tailChars: 1024, marker: PRUNE_MARKER })
    expect(Object.isFrozen(spec)).toBe(true)
    expect(resolvePruneConfig({})).toEqual(spec)
    expect(PRUNE_DEFAULTS).toEqual({ thresholdChars: 8192, headChars: 4096, tailChars: 1024 })
    expect(4096 + Array.from(PRUNE_MARKER).length + 1024).toBe(5163)
  })

  it('§5.1: keeps given values and fills the rest from the defaults', () => {
    expect(resolvePruneConfig({ headChars: 100 })).toEqual({ thresholdChars: 8192, headChars: 100, tailChars: 1024, marker: PRUNE_MARKER })
    expect(resolvePruneConfig({ thresholdChars: 43, headChars: 0, tailChars: 0 }).thresholdChars).toBe(43)
  })

  it('§14.1: accepts another marker (the rc.8 39-code-point shape) and budgets with its length', () => {
    const rc8 = '\n\n[... middle of output omitted ....]\n\n' // any fixed 39-code-point marker of the §5.1 shape
    expect(Array.from(rc8)).toHaveLength(39)
    expect(resolvePruneConfig({ thresholdChars: 39, headChars: 0, tailChars: 0 }, rc8).marker).toBe(rc8)
    refused({ thresholdChars: 39, headChars: 1, tailChars: 0 }, 'BUDGET', 'thresholdChars', /1 \+ marker 39 \+ tailChars 0 = 40 exceeds thresholdChars 39/, rc8)
  })

  it('§5.1: refuses unknown keys, naming the key', () => {
    refused({ threshold: 100 }, 'UNKNOWN_KEY', 'threshold', /unknown key; allowed keys are thresholdChars, headChars, tailChars/)
    refused({ headChars: 1, marker: 'x' }, 'UNKNOWN_KEY', 'marker', /unknown key/)
  })

  it('§5.1: refuses non-integers, naming the key', () => {
    refused({ headChars: 1.5 }, 'NOT_AN_INTEGER', 'headChars', /must be a non-negative integer, got 1.5/)
    refused({ tailChars: '10' }, 'NOT_AN_INTEGER', 'tailChars', /got "10"/)
    refused({ thresholdChars: Number.NaN }, 'NOT_AN_INTEGER', 'thresholdChars', /must be a positive integer/)
    refused({ thresholdChars: undefined }, 'NOT_AN_INTEGER', 'thresholdChars', /got undefined/)
  })

  it('§5.1: refuses out-of-range integers, naming the key', () => {
    refused({ thresholdChars: 0 }, 'OUT_OF_RANGE', 'thresholdChars', /must be a positive integer, got 0/)
    refused({ headChars: -1 }, 'OUT_OF_RANGE', 'headChars', /must be a non-negative integer, got -1/)
    refused({ tailChars: -5 }, 'OUT_OF_RANGE', 'tailChars', /got -5/)
  })

  it('§5.1: refuses head + marker + tail > threshold (a pruned result could still exceed it)', () => {
    refused({ thresholdChars: 5162 }, 'BUDGET', 'thresholdChars', /headChars 4096 \+ marker 43 \+ tailChars 1024 = 5163 exceeds thresholdChars 5162/)
    refused({ thresholdChars: 50, headChars: 4, tailChars: 4 }, 'BUDGET', 'thresholdChars', /= 51 exceeds/)
  })

  it('§5.1: refuses a non-object configuration', () => {
    refused(null, 'NOT_AN_OBJECT', '', /expected a plain object/)
    refused([1, 2], 'NOT_AN_OBJECT', '', /got an array/)
    refused(8192, 'NOT_AN_OBJECT', '', /got 8192/)
  })

  it('§5.1/§5.2: refuses an empty marker or one that reads as an offload placeholder', () => {
    refused({}, 'MARKER', 'marker', /non-empty/, '')
    const ref = { attachmentId: `sha256:${'1'.repeat(64)}`, mediaType: 'image/png', bytes: 1, width: 1, height: 1 }
    refused({ thresholdChars: 100000 }, 'MARKER', 'marker', /offload placeholder/, offloadPlaceholder(ref, harnessReadOnlyPath(ref)))
  })
})
