/**
 * The opt-in hardened policy profile (issue #19; `packages/core/docs/hardened.md`). The protocol
 * (`profile: faithful`, the default) stays the contract: an absent `profile` and an absent `hardening`
 * resolve to no rule at all, and the resolved policy then carries no `hardening` field, so every faithful
 * run, manifest and report is byte-identical to one made before the profile existed.
 *
 * `profile: hardened` switches every rule on with its defaults; `hardening.<rule>` switches one rule on
 * (`true` or an object of parameters) or off (`false`) on top of either profile.
 */
import { assertNever } from '../errors.ts'
import { deepFreeze } from '../log/json.ts'
import { describe, isPlainObject } from './values.ts'

/** The two policy profiles: the protocol as written, or the protocol plus the HARD rules. */
export type PolicyProfile = 'faithful' | 'hardened'

/** The eight rules by config key, in HARD-id order (`HARD-1` is `failureBackoff`, …, `HARD-8` is `capacitySanity`). */
export const HARDENING_RULES = Object.freeze([
  'failureBackoff', 'summaryRoom', 'checkpointBudget', 'meteredRelief',
  'oversizedUserText', 'openTurnPrompt', 'headRefresh', 'capacitySanity',
] as const)

/** One rule's config key. */
export type HardeningRule = (typeof HARDENING_RULES)[number]

/** The `HARD-n` checker id of a rule. */
export function hardId(rule: HardeningRule): `HARD-${number}` {
  return `HARD-${HARDENING_RULES.indexOf(rule) + 1}`
}

/** Rule 1 parameters: after a failed or non-shrinking attempt, wait for the surface to change, with back-off in steps. */
export interface FailureBackoffConfig {
  /** Tokens the priced surface must grow by (or a `replaceGeneration` move) before the next attempt. Default 512. */
  minGrowthTokens?: number
  /** Pre-steps skipped after the first failure; doubled after each further failure. Default 1. */
  baseSteps?: number
  /** Upper bound of the skipped pre-steps. Default 32. */
  maxSteps?: number
}

/** Rule 3 parameters: a checkpoint must leave this many tokens of headroom under the threshold. */
export interface CheckpointBudgetConfig {
  /** Default 256. */
  marginTokens?: number
  /**
   * An over-budget checkpoint priced at most this share of what it shadows (route prices) is kept anyway: it is
   * relief, not a treadmill step. In [0, 1]; 0 refuses every over-budget checkpoint. Default 0.5.
   */
  reliefRatio?: number
}

/** Rule 5 parameters: user text larger than this share of the window is projected to a placeholder. */
export interface OversizedUserTextConfig {
  /** Share of the context window (0, 1]. Default 0.5. */
  maxWindowRatio?: number
}

/** Rule 8 parameters: warn when usage exceeds the reported window; optionally calibrate the meter per route. */
export interface CapacitySanityConfig {
  /** Learn and log a per-route calibration factor from provider usage. Default true. */
  calibrate?: boolean
}

/** `hardening:` as configured: each rule `true`/`false`, or an object of its parameters (which means on). */
export interface HardeningConfig {
  failureBackoff?: boolean | FailureBackoffConfig
  summaryRoom?: boolean
  checkpointBudget?: boolean | CheckpointBudgetConfig
  meteredRelief?: boolean
  oversizedUserText?: boolean | OversizedUserTextConfig
  openTurnPrompt?: boolean
  headRefresh?: boolean
  capacitySanity?: boolean | CapacitySanityConfig
}

/** A rule that is on carries its filled parameters; a rule that is off is `null`. */
export interface HardeningSpec {
  readonly profile: PolicyProfile
  readonly failureBackoff: Readonly<Required<FailureBackoffConfig>> | null
  readonly summaryRoom: Readonly<Record<string, never>> | null
  readonly checkpointBudget: Readonly<Required<CheckpointBudgetConfig>> | null
  readonly meteredRelief: Readonly<Record<string, never>> | null
  readonly oversizedUserText: Readonly<Required<OversizedUserTextConfig>> | null
  readonly openTurnPrompt: Readonly<Record<string, never>> | null
  readonly headRefresh: Readonly<Record<string, never>> | null
  readonly capacitySanity: Readonly<Required<CapacitySanityConfig>> | null
}

/** The parameters every rule takes when it is on without an object of its own. */
export const HARDENING_DEFAULTS = deepFreeze({
  failureBackoff: { minGrowthTokens: 512, baseSteps: 1, maxSteps: 32 },
  summaryRoom: {},
  checkpointBudget: { marginTokens: 256, reliefRatio: 0.5 },
  meteredRelief: {},
  oversizedUserText: { maxWindowRatio: 0.5 },
  openTurnPrompt: {},
  headRefresh: {},
  capacitySanity: { calibrate: true },
} as const)

/** The faithful spec: no rule on. */
export const FAITHFUL_HARDENING: HardeningSpec = deepFreeze({
  profile: 'faithful',
  failureBackoff: null, summaryRoom: null, checkpointBudget: null, meteredRelief: null,
  oversizedUserText: null, openTurnPrompt: null, headRefresh: null, capacitySanity: null,
})

/** The hardening of a resolved policy: its own, or the faithful one when it has none. */
export function hardeningOf(spec: { readonly hardening?: HardeningSpec }): HardeningSpec {
  return spec.hardening ?? FAITHFUL_HARDENING
}

/** True when at least one rule is on. */
export function anyHardening(spec: HardeningSpec): boolean {
  return HARDENING_RULES.some((rule) => spec[rule] !== null)
}

/** A `profile` or `hardening` value that is not valid; `key` is the offending key path. */
export class HardeningConfigError extends Error {
  override readonly name = 'HardeningConfigError'
  readonly key: string

  constructor(key: string, reason: string) {
    super(`invalid compaction config: ${key} ${reason} (hardened profile, packages/core/docs/hardened.md)`)
    this.key = key
  }
}

type Raw = Readonly<Record<string, unknown>>

/**
 * Resolves `profile` and `hardening` of a raw compaction config. Returns `undefined` when neither key is set,
 * so a faithful policy stays exactly as it was; otherwise the deep-frozen spec. Throws `HardeningConfigError`.
 */
export function resolveHardening(profile: unknown, hardening: unknown): HardeningSpec | undefined {
  if (profile === undefined && hardening === undefined) return undefined
  if (profile !== undefined && profile !== 'faithful' && profile !== 'hardened') {
    throw new HardeningConfigError('profile', `must be "faithful" or "hardened", got ${describe(profile)}`)
  }
  const base: PolicyProfile = profile ?? 'faithful'
  if (hardening !== undefined && !isPlainObject(hardening)) {
    throw new HardeningConfigError('hardening', `must be an object of rules, got ${describe(hardening)}`)
  }
  const raw: Raw = hardening ?? {}
  for (const key of Object.keys(raw)) {
    if (!(HARDENING_RULES as readonly string[]).includes(key)) {
      throw new HardeningConfigError(`hardening.${key}`, `is not a rule; allowed: ${HARDENING_RULES.join(', ')}`)
    }
  }
  const out: { -readonly [K in keyof HardeningSpec]: HardeningSpec[K] } = { ...FAITHFUL_HARDENING, profile: base }
  for (const rule of HARDENING_RULES) {
    const value = raw[rule]
    const on = value === undefined ? base === 'hardened' : value !== false
    if (value !== undefined && typeof value !== 'boolean' && !isPlainObject(value)) {
      throw new HardeningConfigError(`hardening.${rule}`, `must be true, false or an object of parameters, got ${describe(value)}`)
    }
    if (!on) continue
    setRule(out, rule, isPlainObject(value) ? value : {})
  }
  return deepFreeze(out)
}

function setRule(out: { -readonly [K in keyof HardeningSpec]: HardeningSpec[K] }, rule: HardeningRule, params: Raw): void {
  const key = `hardening.${rule}`
  switch (rule) {
    case 'failureBackoff': {
      checkParams(params, ['minGrowthTokens', 'baseSteps', 'maxSteps'], key)
      const d = HARDENING_DEFAULTS.failureBackoff
      const baseSteps = integer(params, 'baseSteps', key, 0) ?? d.baseSteps
      const maxSteps = integer(params, 'maxSteps', key, 0) ?? d.maxSteps
      if (maxSteps < baseSteps) throw new HardeningConfigError(`${key}.maxSteps`, `must be at least baseSteps ${baseSteps}, got ${maxSteps}`)
      out.failureBackoff = { minGrowthTokens: integer(params, 'minGrowthTokens', key, 0) ?? d.minGrowthTokens, baseSteps, maxSteps }
      return
    }
    case 'checkpointBudget': {
      checkParams(params, ['marginTokens', 'reliefRatio'], key)
      const r = params['reliefRatio']
      if (r !== undefined && (typeof r !== 'number' || !Number.isFinite(r) || r < 0 || r > 1)) {
        throw new HardeningConfigError(`${key}.reliefRatio`, `must be a finite number in [0, 1], got ${describe(r)}`)
      }
      out.checkpointBudget = {
        marginTokens: integer(params, 'marginTokens', key, 0) ?? HARDENING_DEFAULTS.checkpointBudget.marginTokens,
        reliefRatio: (r as number | undefined) ?? HARDENING_DEFAULTS.checkpointBudget.reliefRatio,
      }
      return
    }
    case 'oversizedUserText': {
      checkParams(params, ['maxWindowRatio'], key)
      const v = params['maxWindowRatio']
      if (v !== undefined && (typeof v !== 'number' || !Number.isFinite(v) || v <= 0 || v > 1)) {
        throw new HardeningConfigError(`${key}.maxWindowRatio`, `must be a finite number in (0, 1], got ${describe(v)}`)
      }
      out.oversizedUserText = { maxWindowRatio: (v as number | undefined) ?? HARDENING_DEFAULTS.oversizedUserText.maxWindowRatio }
      return
    }
    case 'capacitySanity': {
      checkParams(params, ['calibrate'], key)
      const v = params['calibrate']
      if (v !== undefined && typeof v !== 'boolean') throw new HardeningConfigError(`${key}.calibrate`, `must be a boolean, got ${describe(v)}`)
      out.capacitySanity = { calibrate: (v as boolean | undefined) ?? HARDENING_DEFAULTS.capacitySanity.calibrate }
      return
    }
    case 'summaryRoom':
    case 'meteredRelief':
    case 'openTurnPrompt':
    case 'headRefresh':
      checkParams(params, [], key)
      out[rule] = {}
      return
    default:
      assertNever(rule, 'hardening rule')
  }
}

function checkParams(params: Raw, allowed: readonly string[], key: string): void {
  for (const name of Object.keys(params)) {
    if (!allowed.includes(name)) {
      throw new HardeningConfigError(`${key}.${name}`, allowed.length === 0
        ? 'is not a parameter: this rule takes none (use true or false)'
        : `is not a parameter; allowed: ${allowed.join(', ')}`)
    }
  }
}

function integer(params: Raw, name: string, key: string, min: number): number | undefined {
  const v = params[name]
  if (v === undefined) return undefined
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < min) {
    throw new HardeningConfigError(`${key}.${name}`, `must be an integer ≥ ${min}, got ${describe(v)}`)
  }
  return v
}
