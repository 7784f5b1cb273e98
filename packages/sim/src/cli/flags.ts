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

/** Most seeds one `--seeds` value may name. */
export const SEEDS_MAX = 100_000

/**
 * `--seeds`: a comma list of seeds and inclusive ranges `a..b` (`1..20`, `1,5,9`, `1..5,100`), each seed a uint32,
 * in the order given. An empty entry, a reversed range, a seed named twice or more than `SEEDS_MAX` seeds is refused.
 * @throws UsageError naming `flag`, what is accepted and the given text (JSON-quoted).
 */
export function parseSeedsFlag(flag: string, value: unknown): number[] {
  const text = String(value)
  const refuse = (why: string): never => {
    throw new UsageError(`${flag}: ${why}; expected a range a..b or a comma list of seeds (unsigned 32-bit integers, e.g. 1..20 or 1,5,9), got ${JSON.stringify(text)}`)
  }
  const seeds: number[] = []
  const seen = new Set<number>()
  for (const entry of text.split(',').map((e) => e.trim())) {
    const match = /^(\d+)(?:\.\.(\d+))?$/.exec(entry)
    if (match === null) return refuse(entry === '' ? 'empty entry' : `${JSON.stringify(entry)} is not a seed or a range`)
    const from = Number(match[1])
    const to = match[2] === undefined ? from : Number(match[2])
    if (from > UINT32_MAX || to > UINT32_MAX) return refuse(`${JSON.stringify(entry)} is above ${UINT32_MAX}`)
    if (to < from) return refuse(`the range ${entry} runs backwards`)
    if (seeds.length + (to - from + 1) > SEEDS_MAX) return refuse(`more than ${SEEDS_MAX} seeds`)
    for (let seed = from; seed <= to; seed++) {
      if (seen.has(seed)) return refuse(`seed ${seed} is named twice`)
      seen.add(seed)
      seeds.push(seed)
    }
  }
  return seeds
}
