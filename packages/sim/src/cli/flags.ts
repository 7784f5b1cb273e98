/**
 * Parsers for numeric flags. yargs' `type: 'number'` turns `--runs abc` into `NaN` and loses what the user
 * typed, so numeric flags are declared as strings and parsed here: a refused value is a `UsageError`
 * (exit 2) naming the flag, the accepted range and the text exactly as given.
 */
import { UsageError } from './exit-codes.ts'

/** Largest uint32, the seed domain. */
export const UINT32_MAX = 0xffff_ffff

/**
 * The integer `value` spells (decimal digits, an optional leading `-` when `min` < 0), within `min … max`.
 * @throws UsageError naming `flag`, the range and the given text (JSON-quoted) otherwise.
 */
export function parseIntegerFlag(flag: string, value: unknown, min: number, max: number): number {
  const text = String(value)
  const n = Number(text)
  if (!/^-?\d+$/.test(text) || !Number.isSafeInteger(n) || n < min || n > max) {
    throw new UsageError(`${flag}: expected an integer ${min} … ${max}, got ${JSON.stringify(text)}`)
  }
  return n
}

/** A `--seed`-style flag: an unsigned 32-bit integer. @throws UsageError naming `flag` and the given text. */
export function parseSeedFlag(flag: string, value: unknown): number {
  const text = String(value)
  const n = Number(text)
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(n) || n > UINT32_MAX) {
    throw new UsageError(`${flag}: expected an unsigned 32-bit integer (0 … ${UINT32_MAX}), got ${JSON.stringify(text)}`)
  }
  return n
}
