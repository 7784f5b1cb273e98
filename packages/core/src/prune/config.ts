/**
 * Configuration of the tool-result pruner (§5.1). Defaults are resolved in one explicit step that
 * returns a frozen `PruneSpec`; the transform (§5.3) and the session pass (§5.4) read only that spec.
 */
import { PRUNE_MARKER } from '../constants.ts'
import { isOffloadPlaceholder } from '../offload/projection.ts'

/** The pruner options a host may set (§5.1); every key is optional and all lengths are Unicode code points. */
export interface ToolResultPruneConfig {
  /** Prune when the measured text exceeds this many code points (positive integer; default 8192). */
  thresholdChars?: number
  /** Code points kept at the head (non-negative integer; default 4096). */
  headChars?: number
  /** Code points kept at the tail (non-negative integer; default 1024). */
  tailChars?: number
}

/** A validated, frozen pruner configuration: `headChars + codePoints(marker) + tailChars ≤ thresholdChars`. */
export interface PruneSpec {
  readonly thresholdChars: number
  readonly headChars: number
  readonly tailChars: number
  /** The text inserted once between head and tail (`PRUNE_MARKER` unless a dialect needs another, §14.1). */
  readonly marker: string
}

/** Appendix A pruner defaults (§5.1). */
export const PRUNE_DEFAULTS: Readonly<Required<ToolResultPruneConfig>> = Object.freeze({
  thresholdChars: 8192,
  headChars: 4096,
  tailChars: 1024,
})

/** Which §5.1 rule a pruner configuration broke. */
export type PruneConfigErrorCode =
  | 'NOT_AN_OBJECT' // the configuration is not a plain object
  | 'UNKNOWN_KEY' // a key §5.1 does not define
  | 'NOT_AN_INTEGER' // a length that is not a safe integer
  | 'OUT_OF_RANGE' // thresholdChars < 1, or headChars / tailChars < 0
  | 'BUDGET' // headChars + marker + tailChars > thresholdChars: a pruned result could still exceed the threshold
  | 'MARKER' // the marker is empty or reads as an offload placeholder (it would not be measured, §5.2)

/** A pruner configuration refused at construction (§5.1). `key` names the offending option. */
export class PruneConfigError extends Error {
  override readonly name = 'PruneConfigError'
  readonly code: PruneConfigErrorCode
  /** The configuration key the rule applies to (`''` when the whole input is wrong). */
  readonly key: string

  constructor(code: PruneConfigErrorCode, key: string, reason: string) {
    super(key === '' ? `pruner config: ${reason}` : `pruner config ${key}: ${reason}`)
    this.code = code
    this.key = key
  }
}

const KEYS: ReadonlySet<string> = new Set(Object.keys(PRUNE_DEFAULTS))

/**
 * Resolves a pruner configuration (§5.1): `undefined` means all defaults; otherwise a plain object whose
 * keys are a subset of `ToolResultPruneConfig`. Returns a frozen spec. Throws `PruneConfigError` naming
 * the key and the rule for unknown keys, non-integers, out-of-range values, an empty or placeholder-like
 * marker, and `headChars + codePoints(marker) + tailChars > thresholdChars`.
 */
export function resolvePruneConfig(input: unknown, marker: string = PRUNE_MARKER): PruneSpec {
  const config = input === undefined ? {} : input
  if (typeof config !== 'object' || config === null || Array.isArray(config) || !isPlainObject(config)) {
    throw new PruneConfigError('NOT_AN_OBJECT', '', `expected a plain object of ${[...KEYS].join(', ')}, got ${describe(config)}`)
  }
  const record = config as Record<string, unknown>
  for (const key of Object.keys(record)) {
    if (!KEYS.has(key)) throw new PruneConfigError('UNKNOWN_KEY', key, `unknown key; allowed keys are ${[...KEYS].join(', ')} (§5.1)`)
  }
  const thresholdChars = integerOption(record, 'thresholdChars', 1)
  const headChars = integerOption(record, 'headChars', 0)
  const tailChars = integerOption(record, 'tailChars', 0)
  if (typeof marker !== 'string' || marker.length === 0) {
    throw new PruneConfigError('MARKER', 'marker', 'the prune marker must be a non-empty string (§5.1)')
  }
  if (isOffloadPlaceholder(marker)) {
    throw new PruneConfigError('MARKER', 'marker', 'the prune marker must not read as an offload placeholder (§5.2)')
  }
  const markerChars = Array.from(marker).length
  if (headChars + markerChars + tailChars > thresholdChars) {
    throw new PruneConfigError(
      'BUDGET', 'thresholdChars',
      `headChars ${headChars} + marker ${markerChars} + tailChars ${tailChars} = ${headChars + markerChars + tailChars} ` +
        `exceeds thresholdChars ${thresholdChars}; a pruned result could still exceed the threshold (§5.1)`,
    )
  }
  return Object.freeze({ thresholdChars, headChars, tailChars, marker })
}

function integerOption(record: Record<string, unknown>, key: keyof ToolResultPruneConfig, min: number): number {
  if (!Object.hasOwn(record, key)) return PRUNE_DEFAULTS[key]
  const value = record[key]
  const rule = min === 1 ? 'a positive integer' : 'a non-negative integer'
  if (typeof value !== 'number' || !Number.isSafeInteger(value)) {
    throw new PruneConfigError('NOT_AN_INTEGER', key, `must be ${rule}, got ${describe(value)} (§5.1)`)
  }
  if (value < min) throw new PruneConfigError('OUT_OF_RANGE', key, `must be ${rule}, got ${value} (§5.1)`)
  return value
}

function isPlainObject(value: object): boolean {
  const proto: unknown = Object.getPrototypeOf(value)
  return proto === Object.prototype || proto === null
}

function describe(value: unknown): string {
  if (value === undefined) return 'undefined'
  if (typeof value === 'number' || typeof value === 'bigint') return String(value)
  if (typeof value === 'string') return JSON.stringify(value)
  if (Array.isArray(value)) return 'an array'
  return value === null ? 'null' : typeof value
}
