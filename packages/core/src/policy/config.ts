/**
 * Compaction policy configuration of the basic backend (§3.1–§3.4): the raw input type, the one explicit
 * `resolveCompactionConfig` step that validates it (§3.2) and fills every Appendix A default into a
 * deep-frozen spec, the per-route override resolution (§3.3) and the capacity-scaled figures a pressure
 * check compares against. Nothing else in the engine applies a default.
 */
import { assertNever } from '../errors.ts'
import { deepFreeze } from '../log/json.ts'
import { describe, isPlainObject } from './values.ts'
import { resolveHardening, type HardeningConfig, type HardeningSpec, type PolicyProfile } from './hardening.ts'

/** Why automatic policy runs (§3.4). `agent-request` is reserved by §3.4/Q-01 and deliberately absent. */
export type CompactionTrigger = 'pressure' | 'context-overflow'

/** One exact-route override as configured (§3.1 `modelPolicies`): a partial policy, no `auto`, no nesting. */
export interface ModelPolicyConfig {
  provider: string
  model: string
  thresholdRatio?: number
  retainRatio?: number
  retainTokens?: number
  summarizationProvider?: string
  summarizationModel?: string
  maxTokens?: number
  compactionRetries?: number
  maxOverflowRetries?: number
}

/** `BasicCompactionConfig` of §3.1; every key is optional and `resolveCompactionConfig` fills the defaults. */
export interface BasicCompactionConfig {
  thresholdRatio?: number
  retainRatio?: number
  retainTokens?: number
  summarizationProvider?: string
  summarizationModel?: string
  maxTokens?: number
  compactionRetries?: number
  maxOverflowRetries?: number
  modelPolicies?: readonly ModelPolicyConfig[]
  auto?: boolean
  /** compaction-sim's opt-in profile (issue #19, `policy/hardening.ts`); default `faithful`, the protocol as written. */
  profile?: PolicyProfile
  /** One HARD rule on or off on top of the profile (issue #19). */
  hardening?: HardeningConfig
}

/** Appendix A defaults of the basic backend (§3.1); frozen, and read only by `resolveCompactionConfig`. */
export const COMPACTION_DEFAULTS = deepFreeze({
  thresholdRatio: 0.8,
  retainRatio: 0.16,
  summarizationProvider: '',
  summarizationModel: '',
  maxTokens: 8192,
  compactionRetries: 1,
  maxOverflowRetries: 1,
  auto: true,
} as const)

/** The retained-tail form of one scope (§3.1): a window fraction or an absolute token budget, never both. */
export type RetentionSpec =
  | { readonly kind: 'ratio'; readonly retainRatio: number }
  | { readonly kind: 'tokens'; readonly retainTokens: number }

/** The summary route of one scope (§3.1): both empty (use the routed target, §8.1) or both non-empty. */
export interface SummarizationRouteSpec {
  readonly provider: string
  readonly model: string
}

/** The policy fields every scope resolves to (§3.3), all filled. */
export interface PolicyFieldsSpec {
  readonly thresholdRatio: number
  readonly retention: RetentionSpec
  readonly summarization: SummarizationRouteSpec
  readonly maxTokens: number
  readonly compactionRetries: number
  readonly maxOverflowRetries: number
}

/** A validated `modelPolicies` entry: only the fields the entry set; `resolveTargetPolicy` inherits the rest. */
export interface ModelPolicySpec {
  readonly provider: string
  readonly model: string
  readonly thresholdRatio?: number
  readonly retention?: RetentionSpec
  readonly summarization?: SummarizationRouteSpec
  readonly maxTokens?: number
  readonly compactionRetries?: number
  readonly maxOverflowRetries?: number
}

/** The deep-frozen result of `resolveCompactionConfig`: top-level policy with defaults, `auto`, and the overrides. */
export interface CompactionPolicySpec extends PolicyFieldsSpec {
  readonly auto: boolean
  readonly modelPolicies: readonly ModelPolicySpec[]
  /**
   * Present only when the config set `profile` or `hardening` (issue #19), so a faithful spec is exactly the
   * protocol's. Read it with `hardeningOf(spec)`.
   */
  readonly hardening?: HardeningSpec
}

/** An exact `(provider, model)` route (§0.3 "route"). */
export interface RouteTarget {
  readonly provider: string
  readonly model: string
}

/** The policy in force for one route (§3.3 `resolveTargetPolicy`), carrying the route it was resolved for. */
export interface TargetPolicy extends PolicyFieldsSpec {
  readonly route: RouteTarget
}

/** Capacity-scaled figures of one pressure check (§3.3 `resolveCompactSpec`); `retainTokens < thresholdTokens`. */
export interface CompactSpec {
  readonly contextWindow: number
  readonly thresholdTokens: number
  readonly retainTokens: number
}

/** Closed set of load-time validation failures (§3.2); each maps to one numbered rule. */
export type CompactionConfigErrorCode =
  | 'NOT_AN_OBJECT' // the config itself is not a plain object (precondition of every rule)
  | 'UNKNOWN_KEY' // rule 1
  | 'RATIO' // rule 2
  | 'INTEGER' // rule 3 (retainTokens, compactionRetries, maxOverflowRetries, maxTokens)
  | 'BOOLEAN' // rule 3 (auto)
  | 'RETENTION_CONFLICT' // rule 4
  | 'SUMMARY_ROUTE' // rule 5
  | 'MODEL_POLICIES' // rule 6
  | 'RETAIN_NOT_BELOW_THRESHOLD' // rule 7

/** The §3.2 rule number a config error code enforces; `null` for the plain-object precondition. */
export function compactionConfigRule(code: CompactionConfigErrorCode): 1 | 2 | 3 | 4 | 5 | 6 | 7 | null {
  switch (code) {
    case 'NOT_AN_OBJECT': return null
    case 'UNKNOWN_KEY': return 1
    case 'RATIO': return 2
    case 'INTEGER': return 3
    case 'BOOLEAN': return 3
    case 'RETENTION_CONFLICT': return 4
    case 'SUMMARY_ROUTE': return 5
    case 'MODEL_POLICIES': return 6
    case 'RETAIN_NOT_BELOW_THRESHOLD': return 7
    default: return assertNever(code, 'compaction config error code')
  }
}

/**
 * A configuration rejected at engine construction (§3.2). `key` is the offending key path (e.g.
 * `modelPolicies[1].retainRatio`); the message names that key and the rule it breaks.
 */
export class CompactionConfigError extends Error {
  override readonly name = 'CompactionConfigError'
  readonly code: CompactionConfigErrorCode
  readonly key: string
  /** The §3.2 rule broken, or null when the config is not an object at all. */
  readonly rule: 1 | 2 | 3 | 4 | 5 | 6 | 7 | null

  constructor(code: CompactionConfigErrorCode, key: string, reason: string, options?: ErrorOptions) {
    const rule = compactionConfigRule(code)
    super(`invalid compaction config: ${key} ${reason}${rule === null ? '' : ` (§3.2 rule ${rule})`}`, options)
    this.code = code
    this.key = key
    this.rule = rule
  }
}

/** Closed set of target-pressure configuration failures (§2.7, §3.3). */
export type TargetPressureConfigErrorCode =
  | 'NO_CAPACITY' // the route's adapter reports no context window (§2.7, §3.5 step 6)
  | 'INVALID_CAPACITY' // resolveCompactSpec was given a window that is not a positive integer (§3.3)
  | 'RETAIN_NOT_BELOW_THRESHOLD' // an absolute retainTokens is not below the scaled threshold (§3.2, §3.3)

/**
 * A target-pressure configuration error (§3.3): keyed by `"provider/model"`, the only error class the
 * automatic pre-step listener warns about once per key (§3.9). Every other failure is operational.
 */
export class TargetPressureConfigError extends Error {
  override readonly name = 'TargetPressureConfigError'
  readonly code: TargetPressureConfigErrorCode
  /** `"provider/model"` of the route (§3.3). */
  readonly key: string

  constructor(code: TargetPressureConfigErrorCode, key: string, message: string, options?: ErrorOptions) {
    super(message, options)
    this.code = code
    this.key = key
  }
}

/** The `"provider/model"` key of a route (§3.3), used by target-pressure errors and warning de-duplication. */
export function routeKey(route: RouteTarget): string {
  return `${route.provider}/${route.model}`
}

const POLICY_KEYS = [
  'thresholdRatio', 'retainRatio', 'retainTokens', 'summarizationProvider', 'summarizationModel',
  'maxTokens', 'compactionRetries', 'maxOverflowRetries',
] as const
const TOP_LEVEL_KEYS: ReadonlySet<string> = new Set([...POLICY_KEYS, 'modelPolicies', 'auto', 'profile', 'hardening'])
const ENTRY_KEYS: ReadonlySet<string> = new Set([...POLICY_KEYS, 'provider', 'model'])

type Raw = Readonly<Record<string, unknown>>

/** A partial policy as one scope stated it; `undefined` means "inherit" (or "default" at top level). */
interface ScopeFields {
  thresholdRatio: number | undefined
  retention: RetentionSpec | undefined
  summarization: SummarizationRouteSpec | undefined
  maxTokens: number | undefined
  compactionRetries: number | undefined
  maxOverflowRetries: number | undefined
}

/**
 * Validates `input` against §3.2 rules 1–7 and returns the deep-frozen spec with every Appendix A default
 * filled. `undefined` input means "no configuration" (all defaults); a key whose value is `undefined` is
 * treated as absent. Throws `CompactionConfigError` naming the first offending key path.
 */
export function resolveCompactionConfig(input: unknown): CompactionPolicySpec {
  const raw = input === undefined ? {} : input
  if (!isPlainObject(raw)) throw new CompactionConfigError('NOT_AN_OBJECT', '<config>', `must be a plain object, got ${describe(raw)}`)
  checkKeys(raw, TOP_LEVEL_KEYS, '')
  const top = readScope(raw, '')
  const auto = raw['auto']
  if (auto !== undefined && typeof auto !== 'boolean') {
    throw new CompactionConfigError('BOOLEAN', 'auto', `must be a boolean, got ${describe(auto)}`)
  }
  const base: PolicyFieldsSpec = {
    thresholdRatio: top.thresholdRatio ?? COMPACTION_DEFAULTS.thresholdRatio,
    retention: top.retention ?? { kind: 'ratio', retainRatio: COMPACTION_DEFAULTS.retainRatio },
    summarization: top.summarization
      ?? { provider: COMPACTION_DEFAULTS.summarizationProvider, model: COMPACTION_DEFAULTS.summarizationModel },
    maxTokens: top.maxTokens ?? COMPACTION_DEFAULTS.maxTokens,
    compactionRetries: top.compactionRetries ?? COMPACTION_DEFAULTS.compactionRetries,
    maxOverflowRetries: top.maxOverflowRetries ?? COMPACTION_DEFAULTS.maxOverflowRetries,
  }
  const modelPolicies = readModelPolicies(raw['modelPolicies'])
  // Rule 7 after rules 1–6 everywhere, so a structural error is reported before a cross-field one.
  checkRatioRetention(base, raw, '')
  modelPolicies.forEach((entry, i) => {
    checkRatioRetention(inherit(base, entry), entryRaw(raw, i), `modelPolicies[${i}].`)
  })
  const hardening = resolveHardening(raw['profile'], raw['hardening'])
  return deepFreeze({ ...base, auto: auto ?? COMPACTION_DEFAULTS.auto, modelPolicies, ...(hardening === undefined ? {} : { hardening }) })
}

/**
 * §3.3 `resolveTargetPolicy`: the override entry with exactly this provider AND model (if any) replaces
 * the fields it sets; retention follows the entry's own form (tokens, else ratio), else the top-level
 * form; the summarization route is inherited as a pair. Returns a frozen policy tagged with `route`.
 */
export function resolveTargetPolicy(spec: CompactionPolicySpec, route: RouteTarget): TargetPolicy {
  const entry = spec.modelPolicies.find((o) => o.provider === route.provider && o.model === route.model)
  const fields = entry === undefined ? spec : inherit(spec, entry)
  return Object.freeze({
    route: Object.freeze({ provider: route.provider, model: route.model }),
    thresholdRatio: fields.thresholdRatio,
    retention: fields.retention,
    summarization: fields.summarization,
    maxTokens: fields.maxTokens,
    compactionRetries: fields.compactionRetries,
    maxOverflowRetries: fields.maxOverflowRetries,
  })
}

/**
 * §3.3 `resolveCompactSpec`: scales the policy to a context window with `Math.floor(contextWindow * ratio)`
 * in IEEE-754 doubles (100 × 0.29 → 28). Throws `TargetPressureConfigError` (key `"provider/model"`) when
 * the window is not a positive integer or the retained budget is not strictly below the threshold.
 */
export function resolveCompactSpec(policy: TargetPolicy, contextWindow: number): CompactSpec {
  const key = routeKey(policy.route)
  if (!Number.isSafeInteger(contextWindow) || contextWindow <= 0) {
    const reason = `context window of ${key} must be a positive integer, got ${describe(contextWindow)}`
    throw new TargetPressureConfigError('INVALID_CAPACITY', key, reason)
  }
  const thresholdTokens = Math.floor(contextWindow * policy.thresholdRatio)
  const retainTokens = retainedTokensOf(policy.retention, contextWindow)
  if (retainTokens >= thresholdTokens) {
    throw new TargetPressureConfigError(
      'RETAIN_NOT_BELOW_THRESHOLD', key,
      `retained budget ${retainTokens} for ${key} is not below its threshold ${thresholdTokens} (context window ${contextWindow})`,
    )
  }
  return Object.freeze({ contextWindow, thresholdTokens, retainTokens })
}

function retainedTokensOf(retention: RetentionSpec, contextWindow: number): number {
  switch (retention.kind) {
    case 'tokens': return retention.retainTokens
    case 'ratio': return Math.floor(contextWindow * retention.retainRatio)
    default: return assertNever(retention, 'retention form')
  }
}

function inherit(base: PolicyFieldsSpec, entry: ModelPolicySpec): PolicyFieldsSpec {
  return {
    thresholdRatio: entry.thresholdRatio ?? base.thresholdRatio,
    retention: entry.retention ?? base.retention,
    summarization: entry.summarization ?? base.summarization,
    maxTokens: entry.maxTokens ?? base.maxTokens,
    compactionRetries: entry.compactionRetries ?? base.compactionRetries,
    maxOverflowRetries: entry.maxOverflowRetries ?? base.maxOverflowRetries,
  }
}

/** Rule 7: a ratio retention must be strictly below the scope's resolved threshold ratio. */
function checkRatioRetention(fields: PolicyFieldsSpec, scope: Raw, prefix: string): void {
  if (fields.retention.kind !== 'ratio' || fields.retention.retainRatio < fields.thresholdRatio) return
  const key = scope['retainRatio'] !== undefined || scope['thresholdRatio'] === undefined ? 'retainRatio' : 'thresholdRatio'
  throw new CompactionConfigError(
    'RETAIN_NOT_BELOW_THRESHOLD', `${prefix}${key}`,
    `breaks the retention rule: retainRatio ${fields.retention.retainRatio} must be strictly below thresholdRatio ${fields.thresholdRatio}`,
  )
}

function entryRaw(raw: Raw, index: number): Raw {
  return (raw['modelPolicies'] as readonly Raw[])[index] as Raw
}

function readModelPolicies(value: unknown): ModelPolicySpec[] {
  if (value === undefined) return []
  if (!Array.isArray(value)) throw new CompactionConfigError('MODEL_POLICIES', 'modelPolicies', `must be an array, got ${describe(value)}`)
  const seen = new Map<string, number>()
  return value.map((entry: unknown, i): ModelPolicySpec => {
    const prefix = `modelPolicies[${i}].`
    if (!isPlainObject(entry)) {
      throw new CompactionConfigError('MODEL_POLICIES', `modelPolicies[${i}]`, `must be a plain object, got ${describe(entry)}`)
    }
    checkKeys(entry, ENTRY_KEYS, prefix)
    const provider = entry['provider']
    const model = entry['model']
    for (const [name, v] of [['provider', provider], ['model', model]] as const) {
      if (typeof v !== 'string' || v === '') {
        throw new CompactionConfigError('MODEL_POLICIES', `${prefix}${name}`, `must be a non-empty string, got ${describe(v)}`)
      }
    }
    const fields = readScope(entry, prefix)
    const route = { provider: provider as string, model: model as string }
    const id = JSON.stringify([route.provider, route.model])
    const first = seen.get(id)
    if (first !== undefined) {
      const reason = `repeats the route ${routeKey(route)} of modelPolicies[${first}]`
      throw new CompactionConfigError('MODEL_POLICIES', `modelPolicies[${i}]`, reason)
    }
    seen.set(id, i)
    const spec: { -readonly [K in keyof ModelPolicySpec]: ModelPolicySpec[K] } = { provider: route.provider, model: route.model }
    if (fields.thresholdRatio !== undefined) spec.thresholdRatio = fields.thresholdRatio
    if (fields.retention !== undefined) spec.retention = fields.retention
    if (fields.summarization !== undefined) spec.summarization = fields.summarization
    if (fields.maxTokens !== undefined) spec.maxTokens = fields.maxTokens
    if (fields.compactionRetries !== undefined) spec.compactionRetries = fields.compactionRetries
    if (fields.maxOverflowRetries !== undefined) spec.maxOverflowRetries = fields.maxOverflowRetries
    return spec
  })
}

/** Rules 2–5 for one scope (top level or an entry); `prefix` is the scope's key path prefix. */
function readScope(raw: Raw, prefix: string): ScopeFields {
  const thresholdRatio = readRatio(raw, 'thresholdRatio', prefix)
  const retainRatio = readRatio(raw, 'retainRatio', prefix)
  const retainTokens = readInteger(raw, 'retainTokens', prefix, 0)
  const maxTokens = readInteger(raw, 'maxTokens', prefix, 1)
  const compactionRetries = readInteger(raw, 'compactionRetries', prefix, 0)
  const maxOverflowRetries = readInteger(raw, 'maxOverflowRetries', prefix, 0)
  if (retainRatio !== undefined && retainTokens !== undefined) {
    throw new CompactionConfigError('RETENTION_CONFLICT', `${prefix}retainTokens`, 'cannot be combined with retainRatio in the same scope')
  }
  const retention: RetentionSpec | undefined = retainTokens !== undefined
    ? { kind: 'tokens', retainTokens }
    : retainRatio !== undefined ? { kind: 'ratio', retainRatio } : undefined
  return { thresholdRatio, retention, summarization: readSummarization(raw, prefix), maxTokens, compactionRetries, maxOverflowRetries }
}

function readRatio(raw: Raw, name: 'thresholdRatio' | 'retainRatio', prefix: string): number | undefined {
  const v = raw[name]
  if (v === undefined) return undefined
  if (typeof v !== 'number' || !Number.isFinite(v) || v <= 0 || v > 1) {
    throw new CompactionConfigError('RATIO', `${prefix}${name}`, `must be a finite number in (0, 1], got ${describe(v)}`)
  }
  return v
}

function readInteger(raw: Raw, name: string, prefix: string, min: 0 | 1): number | undefined {
  const v = raw[name]
  if (v === undefined) return undefined
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < min) {
    const reason = `must be a ${min === 0 ? 'non-negative' : 'positive'} integer, got ${describe(v)}`
    throw new CompactionConfigError('INTEGER', `${prefix}${name}`, reason)
  }
  return v
}

/** Rule 5: strings, set as a pair, and both empty or both non-empty. */
function readSummarization(raw: Raw, prefix: string): SummarizationRouteSpec | undefined {
  const provider = raw['summarizationProvider']
  const model = raw['summarizationModel']
  for (const [name, v] of [['summarizationProvider', provider], ['summarizationModel', model]] as const) {
    if (v !== undefined && typeof v !== 'string') {
      throw new CompactionConfigError('SUMMARY_ROUTE', `${prefix}${name}`, `must be a string, got ${describe(v)}`)
    }
  }
  if (provider === undefined && model === undefined) return undefined
  if (provider === undefined || model === undefined) {
    const missing = provider === undefined ? 'summarizationProvider' : 'summarizationModel'
    const given = provider === undefined ? 'summarizationModel' : 'summarizationProvider'
    throw new CompactionConfigError('SUMMARY_ROUTE', `${prefix}${missing}`, `must be set together with ${given} (they form one route)`)
  }
  if ((provider === '') !== (model === '')) {
    const empty = provider === '' ? 'summarizationProvider' : 'summarizationModel'
    throw new CompactionConfigError('SUMMARY_ROUTE', `${prefix}${empty}`, 'is empty while its pair is not: set both or leave both empty')
  }
  return { provider: provider as string, model: model as string }
}

function checkKeys(raw: Raw, allowed: ReadonlySet<string>, prefix: string): void {
  for (const key of Object.keys(raw)) {
    if (!allowed.has(key)) {
      throw new CompactionConfigError('UNKNOWN_KEY', `${prefix}${key}`, `is not a known key; allowed: ${[...allowed].join(', ')}`)
    }
  }
}
