/**
 * The exact text of every §5.1 pruner-configuration rejection (the message is what a user reads), with
 * the offending value described by kind, and the exact budget boundary `head + marker + tail = threshold`.
 */
import { describe, expect, it } from 'vitest'
import { PruneConfigError, resolvePruneConfig } from '../../src/prune/config.ts'

/** The message of the error `resolvePruneConfig(input, marker)` throws. */
function messageOf(input: unknown, marker?: string): string {
  try {
    if (marker === undefined) resolvePruneConfig(input)
    else resolvePruneConfig(input, marker)
  } catch (err) {
    expect(err).toBeInstanceOf(PruneConfigError)
    return (err as Error).message
  }
  throw new Error(`accepted: ${JSON.stringify(input)}`)
}

describe('§5.1 pruner config rejections, in full', () => {
  const cases: ReadonlyArray<[unknown, string]> = [
    [null, 'pruner config: expected a plain object of thresholdChars, headChars, tailChars, got null'],
    [[], 'pruner config: expected a plain object of thresholdChars, headChars, tailChars, got an array'],
    ['x', 'pruner config: expected a plain object of thresholdChars, headChars, tailChars, got "x"'],
    [5, 'pruner config: expected a plain object of thresholdChars, headChars, tailChars, got 5'],
    [new Date(0), 'pruner config: expected a plain object of thresholdChars, headChars, tailChars, got object'],
    [{ head: 1 }, 'pruner config head: unknown key; allowed keys are thresholdChars, headChars, tailChars (§5.1)'],
    [{ thresholdChars: 0 }, 'pruner config thresholdChars: must be a positive integer, got 0 (§5.1)'],
    [{ headChars: -1 }, 'pruner config headChars: must be a non-negative integer, got -1 (§5.1)'],
    [{ tailChars: 1.5 }, 'pruner config tailChars: must be a non-negative integer, got 1.5 (§5.1)'],
    [{ headChars: '4' }, 'pruner config headChars: must be a non-negative integer, got "4" (§5.1)'],
    [{ thresholdChars: 10n }, 'pruner config thresholdChars: must be a positive integer, got 10 (§5.1)'],
    [{ thresholdChars: undefined }, 'pruner config thresholdChars: must be a positive integer, got undefined (§5.1)'],
    [{ thresholdChars: null }, 'pruner config thresholdChars: must be a positive integer, got null (§5.1)'],
    [{ thresholdChars: [] }, 'pruner config thresholdChars: must be a positive integer, got an array (§5.1)'],
    [{ thresholdChars: 100, headChars: 40, tailChars: 18 },
      'pruner config thresholdChars: headChars 40 + marker 43 + tailChars 18 = 101 exceeds thresholdChars 100; ' +
        'a pruned result could still exceed the threshold (§5.1)'],
  ]
  for (const [input, message] of cases) {
    it(message, () => {
      expect(messageOf(input)).toBe(message)
    })
  }

  it('an empty marker', () => {
    expect(messageOf({}, '')).toBe('pruner config marker: the prune marker must be a non-empty string (§5.1)')
  })

  it('head + marker + tail exactly at the threshold is accepted (43 + 40 + 17 = 100)', () => {
    expect(resolvePruneConfig({ thresholdChars: 100, headChars: 40, tailChars: 17 })).toMatchObject({ thresholdChars: 100 })
  })

  it('the marker is counted in code points, not UTF-16 units: a 2-code-point emoji marker uses 2 of the budget', () => {
    expect(resolvePruneConfig({ thresholdChars: 4, headChars: 1, tailChars: 1 }, '\u{1F600}\u{1F600}').marker).toBe('\u{1F600}\u{1F600}')
  })

  it('a null-prototype object is a plain object', () => {
    const input = Object.assign(Object.create(null) as Record<string, unknown>, { headChars: 5 })
    expect(resolvePruneConfig(input).headChars).toBe(5)
  })
})
