/**
 * The one explicit defaults step of the scenario format (style rule 10): `resolveScenario` turns a
 * schema-valid `Scenario` into a deep-frozen `ResolvedScenario` in which every optional key has its
 * value, the policy and pruner are resolved by the core (§3.2, §5.1), the transcript source is an
 * absolute path, a generator call or a fixtures `Transcript`, and each fault carries its §13 target. The
 * cross-field rules the schema cannot state are checked here; every problem becomes a `ScenarioIssue`
 * keyed by the JSON path of the offending value (the loader adds `line:column`).
 */
import { dirname, isAbsolute, relative, resolve, sep } from 'node:path'
import { fileURLToPath } from 'node:url'
import {
  CallId, CompactionConfigError, PruneConfigError, assertNever, deepFreeze, resolveCompactionConfig, resolvePruneConfig,
  vocabulary,
  type BasicCompactionConfig, type CompactionPolicySpec, type ContentBlock, type Dialect, type EventType, type FailureCode,
  type FaultSpec, type JsonObject, type JsonValue, type PruneSpec, type TokenUsage, type ToolCallBlock, type ToolResultPruneConfig,
  type ToolSchema,
} from '@compaction-sim/core'
import {
  GeneratorParamError, validateGeneratorOptions,
  type Transcript, type TranscriptStep, type TranscriptToolResult, type TranscriptTurn,
} from '@compaction-sim/fixtures'
import { CacheContractError, resolveCacheContract, type CacheContractSpec } from '../metrics/contracts.ts'
import { ENFORCE_ALL, ENFORCE_OFF, NO_IMAGE_LIMITS, type EnforceSpec, type ImageLimitsSpec } from '../provider/enforce.ts'
import type { MockRoute } from '../provider/route.ts'
import { ScenarioError, type ScenarioIssue } from './errors.ts'
import {
  COUNT_NAMES,
  type CountBound, type CountName, type CrashPoint, type FaultConfig, type FaultDelivery, type FaultKind, type FinalPressureExpectation,
  type GenerateConfig, type VolatileSystemPromptConfig, type InlineReply, type InlineReplyBlock, type InlineStep, type InlineToolResult, type InlineTranscript,
  type InlineTool, type InlineTurn,
  type ConcurrentAction, type ConcurrentDo, type ConcurrentDuring, type ConcurrentPoint, type InlineUserBlock, type ManualAction, type Scenario, type ScenarioInvariantId, type SubjectName, type TurnOutcome,
  type TurnOutcomeKind, type WireDialect, type ProviderConfig,
  type EnforceConfig, type ImageLimitsConfig, type RouteConfig, type ImportConfig,
} from './types.ts'
import { plural } from '../plural.ts'
import { dataPatternAt, matcherAt, resolveMatcherExpect, type ResolvedMatcherExpect } from './resolve-matchers.ts'
import type { ResolvedStringMatcher } from './string-matcher.ts'
import type { SummarizerSpec } from '../provider/summarizers.ts'
import { checkScriptCoverage, resolveSummarizer } from './resolve-summarizer.ts'
import { resolveProbes, type ResolvedProbe } from './resolve-probes.ts'

/** Prefix of a `transcript.recorded` path that lives in packages/fixtures/transcripts. */
export const FIXTURES_PREFIX = 'fixtures:'

/** packages/fixtures/transcripts of this workspace: the second root `transcript.recorded` may point into. */
export const DEFAULT_FIXTURES_DIR = fileURLToPath(new URL('../../../fixtures/transcripts/', import.meta.url))

/** Where a scenario came from: its file (relative paths resolve against its folder) and the fixtures root. */
export interface ScenarioSource {
  /** The scenario file as the caller names it (messages use it verbatim). */
  file: string
  /** Root of `fixtures:` paths. Default: `DEFAULT_FIXTURES_DIR`. */
  fixturesDir?: string
}

/** The subject that runs the session; a closed union a later issue extends with `dsh` and `module`. */
export type SubjectSpec = { readonly kind: 'reference' } | { readonly kind: 'dsh' }

/**
 * The provider with its defaults. `model`, `contextWindow` and `imageTokens` are those of the conversation
 * route (null = not reported), so single-route code keeps reading them; `routes` holds every declared route
 * (issue #15) in declaration order, all served under `name` on `wire`.
 */
export interface ResolvedProvider {
  readonly wire: WireDialect
  readonly name: string
  readonly model: string
  readonly contextWindow: number | null
  readonly imageTokens: number | null
  /** The prompt-cache contract of the mock's usage reports (issue #9); the plain §9.3 model by default. */
  readonly cache: CacheContractSpec
  /** The summary route's summarizer (issue #15): what the world answers a compaction request on no declared route. */
  readonly summarizer: SummarizerSpec
  /** Every route, in declaration order (the shorthand gives one); model ids are unique. */
  readonly routes: readonly MockRoute[]
  /** The route the agent talks to (`provider.conversation`, default the first). */
  readonly conversationRoute: MockRoute
  /** The route serving compaction calls (`provider.summary`; it is the policy's summarization route when it differs). */
  readonly summaryRoute: MockRoute
}

/** Where the transcript comes from, fully resolved. */
export type ResolvedTranscriptSource =
  | {
    readonly kind: 'recorded'
    /** Absolute path of the log (containment checked lexically here, through symlinks by `loadScenario`). */
    readonly path: string
    /** Which allowed root holds it. */
    readonly root: 'scenario' | 'fixtures'
    /** The path as written in the scenario. */
    readonly given: string
    readonly dialect: Dialect
  }
  | {
    readonly kind: 'generate'
    readonly generator: string
    readonly turns: number
    /** The generator's params with `turns` included: pass as `generateTranscript({ generator, seed, params })`. */
    readonly params: Readonly<JsonObject>
    /** `generate.volatileSystemPrompt`; absent when the prompt is fixed. */
    readonly volatileSystemPrompt?: VolatileSystemPromptConfig
  }
  | {
    readonly kind: 'inline'
    readonly transcript: Transcript
    /** `inline.volatileSystemPrompt`; absent when the prompt is fixed. */
    readonly volatileSystemPrompt?: VolatileSystemPromptConfig
  }
  | {
    /** An external JSONL transcript (`transcript.file`), read and validated line by line when the run starts. */
    readonly kind: 'file'
    /** Absolute path of the file (containment checked lexically here, through symlinks by `loadScenario`). */
    readonly path: string
    readonly root: 'scenario' | 'fixtures'
    /** The path as written in the scenario. */
    readonly given: string
  }
  | {
    /** A real session file (`transcript.import`), imported when the run starts (issue #20). */
    readonly kind: 'import'
    readonly format: ImportConfig['format']
    /** Absolute path of the file (containment checked lexically here, through symlinks by `loadScenario`). */
    readonly path: string
    readonly root: 'scenario' | 'fixtures'
    /** The path as written in the scenario. */
    readonly given: string
    readonly keepSecrets: boolean
  }

/** The §13 `FaultSpec.target` a fault kind belongs to. */
export type FaultTarget = FaultSpec['target']

/** `when` with its defaults: null = no condition. */
export interface ResolvedFaultWhen {
  readonly requestIndex: number | null
  readonly purpose: 'conversation' | 'compaction' | null
  readonly occurrence: number
  readonly afterEvent: CrashPoint | null
  readonly afterSeq: number | null
  /** Request selectors of fault targeting (README "Fault targeting"); null = no condition. */
  readonly turn: number | null
  readonly step: number | null
  readonly route: string | null
  readonly promptTokensAtLeast: number | null
  readonly maxTokensAbove: number | null
  readonly hasImages: boolean | null
  readonly atVirtualMs: number | null
}

/** `params` with its defaults: null = the provider's own choice (e.g. the status §1.2.2 gives `code`). */
export interface ResolvedFaultParams {
  readonly code: FailureCode | null
  readonly message: string | null
  readonly status: number | null
  readonly offloadImages: number | null
  readonly delivery: FaultDelivery
  readonly chunks: number
  readonly retryAfterMs: number | null
  readonly count: number
  readonly contextWindow: number | null
  /** FAULT-44: the declared route the agent switches to; null = a `<model>-switched` copy of the conversation route. */
  readonly switchTo: string | null
  /** A raw body answered verbatim with `status` (a string as is, anything else as JSON); null = the wire's own body. */
  readonly body: JsonValue | null
  readonly headers: Readonly<Record<string, string>> | null
  /** The i-th firing answers `codes[i]` (then `count` is their number); null = every firing answers `code`. */
  readonly codes: readonly FailureCode[] | null
}

/** One fault ready for the world and the run manifest. */
export interface ResolvedFault {
  readonly id: string
  readonly kind: FaultKind
  readonly target: FaultTarget
  readonly when: ResolvedFaultWhen
  readonly params: ResolvedFaultParams
  /** The scenario passes even if the fault never fires (a crash fault: its crash point is never reached). */
  readonly optional: boolean
}

/** An explicit compaction call with its defaults. */
export type ResolvedManualAction =
  | { readonly kind: 'compactNow'; readonly afterTurn: number; readonly sourceCommandId: string | null }
  | { readonly kind: 'compactRegion'; readonly turn: number; readonly beforeStep: number; readonly start: number; readonly end: number }
  | { readonly kind: 'prune'; readonly afterTurn: number } // FAULT-66: the pruner with no turn open

/**
 * One `concurrent:` item with its defaults (§13.6, §13.7). `at` is meaningful with `during: summary` only (`seed`:
 * the seed's scheduler picks the point); `chunk` is set iff `at` is `after-chunk`; `turn`/`step` with `pre-step`;
 * `afterTurn` with `idle`; `start`/`end` with `compact-region`; `imageTokens` null = the route's price + 100.
 */
export interface ResolvedConcurrent {
  /** The item's 0-based position in `concurrent:` (its warnings say `concurrent[<index>]`). */
  readonly index: number
  readonly during: ConcurrentDuring
  readonly occurrence: number
  readonly at: ConcurrentPoint
  readonly chunk: number | null
  readonly turn: number | null
  readonly step: number
  readonly afterTurn: number | null
  readonly do: ConcurrentDo
  readonly node: 'first' | 'middle' | 'last'
  readonly signal: 'live' | 'aborted'
  readonly imageTokens: number | null
  readonly start: number | null
  readonly end: number | null
}

/** An inclusive count range; `max` null = unbounded. */
export interface CountRange {
  readonly min: number
  readonly max: number | null
}

/** A turn's expected end; `code` null = any code (or not an error). */
export interface ResolvedTurnOutcome {
  readonly kind: TurnOutcomeKind
  readonly code: FailureCode | null
}

/** One event pattern; `data` null = any data, `text` null = any text; `absent`: no event of the log may match. */
export interface ResolvedEventPattern {
  readonly type: EventType
  readonly data: Readonly<JsonObject> | null
  readonly text: ResolvedStringMatcher | null
  readonly absent: boolean
}

/** Final pressure bounds; null = unbounded on that side. */
export interface ResolvedFinalPressure {
  readonly ratioMin: number | null
  readonly ratioMax: number | null
  readonly tokensMin: number | null
  readonly tokensMax: number | null
}

/** Expectations with their defaults; null/empty = not checked (the issue #15 matchers: `resolve-matchers.ts`). */
export interface ResolvedExpect extends ResolvedMatcherExpect {
  /** `expect.seedSpecific`: every item but the invariants holds for the scenario's own seed only. */
  readonly seedSpecific: boolean
  readonly invariants: 'all' | readonly ScenarioInvariantId[]
  readonly outcome: readonly ResolvedTurnOutcome[] | null
  readonly counts: Readonly<Record<CountName, CountRange | null>>
  readonly finalPressure: ResolvedFinalPressure | null
  readonly events: readonly ResolvedEventPattern[]
  readonly finalSurfaceNodes: CountRange | null
}

/** A scenario with every default applied, deep-frozen. */
export interface ResolvedScenario {
  readonly file: string
  readonly name: string
  readonly description: string
  /** The scenario's `tags` (empty when it has none), for `sim run --tag`. */
  readonly tags: readonly string[]
  readonly seed: number
  readonly subject: SubjectSpec
  readonly dialect: Dialect
  readonly provider: ResolvedProvider
  /** `BasicCompactionConfig` as written (for the run manifest, §1.1). */
  readonly policyConfig: Readonly<BasicCompactionConfig>
  /** The resolved policy; under FAULT-43 the `{ auto: false }` stand-in of "nothing installed" (see `configError`). */
  readonly policy: CompactionPolicySpec
  /**
   * FAULT-43 (§13.3): the core's §3.2 rejection of `policyConfig` (`invalid compaction config: <key> …`), which a
   * declared FAULT-43 turns from a load error into the fault: the subject's engine construction must fail and
   * nothing is installed. Null otherwise.
   */
  readonly configError: string | null
  /** `ToolResultPruneConfig` as written (`{}` for `true`), null when the pruner is not loaded. */
  readonly prunerConfig: Readonly<ToolResultPruneConfig> | null
  readonly pruner: PruneSpec | null
  readonly transcript: ResolvedTranscriptSource
  readonly faults: readonly ResolvedFault[]
  readonly manual: readonly ResolvedManualAction[]
  /** The `concurrent:` items, in declaration order (empty when none). */
  readonly concurrent: readonly ResolvedConcurrent[]
  /** The scenario's own retention probes (issue #20); a generated transcript's planted ones join them at run time. */
  readonly probes: readonly ResolvedProbe[]
  readonly expect: ResolvedExpect
}

/**
 * Resolves a schema-valid scenario (trusted shape: `parseScenario` or typed code produced it). Returns
 * a deep-frozen copy; `raw` is not modified. Throws `ScenarioError` listing every cross-field problem
 * (codes POLICY, PATH, SEMANTIC) with JSON paths and no line numbers.
 */
export function resolveScenario(raw: Scenario, source: ScenarioSource): ResolvedScenario {
  const doc = structuredClone(raw)
  const issues: ScenarioIssue[] = []
  const dialect: Dialect = doc.dialect ?? 'seed'
  const name = doc.provider.name ?? doc.provider.wire
  const routed = resolveRoutes(doc.provider, name, doc.policy ?? {}, issues)
  const provider: ResolvedProvider = {
    wire: doc.provider.wire,
    name,
    model: routed.conversationRoute.model,
    contextWindow: routed.conversationRoute.contextWindow,
    imageTokens: routed.conversationRoute.imageTokens,
    cache: resolveProviderCache(doc.provider.cache, issues),
    summarizer: routed.summaryRoute.summarizer,
    routes: routed.routes,
    conversationRoute: routed.conversationRoute,
    summaryRoute: routed.summaryRoute,
  }
  const policyConfig = routed.policyConfig
  const { policy, configError } = resolveScenarioPolicy(policyConfig, doc.faults ?? [], issues)
  const { prunerConfig, pruner } = resolvePruner(doc.pruner ?? false, issues)
  const transcript = resolveTranscript(doc, dialect, source, issues)
  if (transcript?.kind === 'inline') checkImageLimits(doc.provider, provider.routes, transcript.transcript, issues)
  const turnSteps = transcript?.kind === 'inline' ? transcript.transcript.turns.map((t) => t.steps.length) : null
  const turnCount = transcript?.kind === 'generate' ? transcript.turns : turnSteps?.length ?? null
  const faults = (doc.faults ?? []).map((fault, i) => resolveFault(fault, i, dialect, issues))
  checkUniqueFaultIds(faults, issues)
  checkScriptCoverage(provider.summarizer, faults, summarizerPath(doc.provider, provider.summaryRoute.model), issues)
  checkRouteSwitches(faults, provider.routes, issues)
  checkReportedCapacity(faults, provider.routes, doc.provider.routes === undefined, issues)
  checkFaultTargeting(doc.faults ?? [], requestModels(doc), turnSteps, turnCount, issues)
  const manual = (doc.manual ?? []).map((action, i) => resolveManual(action, i, turnCount, turnSteps, pruner !== null, issues))
  checkPruneFault(faults, manual, issues)
  const concurrent = (doc.concurrent ?? []).map((item, i) => resolveConcurrent(item, i, turnCount, turnSteps, issues))
  const probes = resolveProbes(doc.probes, issues)
  const expect = resolveExpect(doc, dialect, provider, turnCount, issues)
  if (issues.length > 0 || policy === null || transcript === null) {
    throw new ScenarioError(source.file, issues.length > 0 ? issues : [{ code: 'SEMANTIC', path: '', reason: 'cannot be resolved' }])
  }
  return deepFreeze({
    file: source.file,
    name: doc.name,
    description: doc.description ?? '',
    tags: doc.tags ?? [],
    seed: doc.seed,
    subject: resolveSubject(doc.subject ?? 'reference'),
    dialect,
    provider,
    policyConfig,
    policy,
    configError,
    prunerConfig,
    pruner,
    transcript,
    faults,
    manual,
    concurrent,
    probes,
    expect,
  })
}

/** The §13 `FaultSpec` of a resolved fault, for the run manifest (`afterEvent` as `eventType`; null fields left out). */
export function faultSpecOf(fault: ResolvedFault): FaultSpec {
  const when: FaultSpec['when'] = { occurrence: fault.when.occurrence }
  if (fault.when.requestIndex !== null) when.requestIndex = fault.when.requestIndex
  if (fault.when.purpose !== null) when.purpose = fault.when.purpose
  if (fault.when.afterEvent !== null) when.eventType = fault.when.afterEvent
  if (fault.when.afterSeq !== null) when.afterSeq = fault.when.afterSeq
  // Fault targeting's selectors ride along in `when` (the manifest records where a fault was aimed; §13 readers ignore them).
  const targeted: Record<string, JsonValue> = when
  for (const key of TARGETING_SELECTORS) {
    const value = fault.when[key]
    if (value !== null) targeted[key] = value
  }
  const params: Record<string, JsonValue> = {}
  for (const [key, value] of Object.entries(fault.params)) if (value !== null) params[key] = value
  return { id: fault.id, kind: fault.kind, target: fault.target, when, params }
}

/** The family of a §13 fault id: which `FaultSpec.target` it belongs to. */
export function faultTargetOf(kind: FaultKind): FaultTarget {
  const n = Number(kind.slice('FAULT-'.length))
  if (n <= 17) return 'conversation'
  if (n <= 33) return 'compaction'
  if (n <= 46) return 'config'
  if (n <= 57) return 'crash'
  if (n === 64 || n === 65) return 'flush'
  if (n <= 66) return 'append'
  if (n <= 79) return 'concurrent'
  return 'signal'
}

// ---------------------------------------------------------------------------------------------
// JSON pointers

/** A JSON pointer (RFC 6901) of `segments`. */
export function jsonPointer(...segments: ReadonlyArray<string | number>): string {
  return segments.map((s) => `/${String(s).replaceAll('~', '~0').replaceAll('/', '~1')}`).join('')
}

/** A SEMANTIC issue at `path`. */
const semantic = (path: string, reason: string): ScenarioIssue => ({ code: 'SEMANTIC', path, reason })

/** JSON pointer of a core config key path like `modelPolicies[1].retainRatio` below `base`. */
function keyPathPointer(base: string, key: string): string {
  if (key === '' || key === '<config>') return base
  const segments = key.split(/\.|\[(\d+)\]/).filter((s) => s !== undefined && s !== '')
  return base + jsonPointer(...segments)
}

// ---------------------------------------------------------------------------------------------
// Subject, policy, pruner

function resolveSubject(name: SubjectName): SubjectSpec {
  switch (name) {
    case 'reference': return { kind: 'reference' }
    case 'dsh': return { kind: 'dsh' }
    default: return assertNever(name, 'subject')
  }
}

/**
 * The policy, or with a declared FAULT-43 the expected §3.2 rejection: the invalid configuration is the fault, so its
 * error is kept (`configError`) instead of refusing the scenario, and the policy is the `{ auto: false }` stand-in
 * (no engine, no listeners: nothing is installed). A FAULT-43 over a valid policy is a SEMANTIC issue.
 */
function resolveScenarioPolicy(
  config: BasicCompactionConfig, faults: readonly FaultConfig[], issues: ScenarioIssue[],
): { policy: CompactionPolicySpec | null; configError: string | null } {
  const i = faults.findIndex((f) => f.kind === 'FAULT-43')
  if (i < 0) return { policy: resolvePolicy(config, issues), configError: null }
  try {
    resolveCompactionConfig(config)
  } catch (error) {
    if (!(error instanceof CompactionConfigError)) throw error
    return { policy: resolveCompactionConfig({ auto: false }), configError: error.message }
  }
  issues.push(semantic(`/faults/${i}/kind`, 'FAULT-43 needs a policy that §3.2 rejects (e.g. thresholdRatio 1.5, or retainRatio not below thresholdRatio): this policy block is valid'))
  return { policy: null, configError: null }
}

function resolvePolicy(config: BasicCompactionConfig, issues: ScenarioIssue[]): CompactionPolicySpec | null {
  try {
    return resolveCompactionConfig(config)
  } catch (error) {
    if (!(error instanceof CompactionConfigError)) throw error
    issues.push({ code: 'POLICY', path: keyPathPointer('/policy', error.key), reason: policyReason(error) })
    return null
  }
}

/** The core's message without its `invalid compaction config: <key>` prefix (the path replaces the key). */
function policyReason(error: CompactionConfigError): string {
  const prefix = `invalid compaction config: ${error.key} `
  return error.message.startsWith(prefix) ? error.message.slice(prefix.length) : error.message
}

function resolvePruner(
  config: boolean | ToolResultPruneConfig, issues: ScenarioIssue[],
): { prunerConfig: ToolResultPruneConfig | null; pruner: PruneSpec | null } {
  if (config === false) return { prunerConfig: null, pruner: null }
  const prunerConfig = config === true ? {} : config
  try {
    return { prunerConfig, pruner: resolvePruneConfig(prunerConfig) }
  } catch (error) {
    if (!(error instanceof PruneConfigError)) throw error
    const path = error.key === '' || error.key === 'marker' ? '/pruner' : jsonPointer('pruner', error.key)
    const prefix = error.key === '' ? 'pruner config: ' : `pruner config ${error.key}: `
    const reason = error.message.startsWith(prefix) ? error.message.slice(prefix.length) : error.message
    issues.push({ code: 'POLICY', path, reason })
    return { prunerConfig, pruner: null }
  }
}

// ---------------------------------------------------------------------------------------------
// Transcript

function resolveTranscript(
  doc: Scenario, dialect: Dialect, source: ScenarioSource, issues: ScenarioIssue[],
): ResolvedTranscriptSource | null {
  const config = doc.transcript
  if ('recorded' in config) {
    const located = locateRecorded(config.recorded, source)
    if (typeof located === 'string') {
      issues.push({ code: 'PATH', path: '/transcript/recorded', reason: located })
      return null
    }
    return { kind: 'recorded', ...located, given: config.recorded, dialect: config.dialect ?? dialect }
  }
  if ('generate' in config) return resolveGenerate(config.generate, doc.seed, issues)
  if ('file' in config) {
    const located = locateRecorded(config.file, source)
    if (typeof located === 'string') {
      issues.push({ code: 'PATH', path: '/transcript/file', reason: located })
      return null
    }
    return { kind: 'file', ...located, given: config.file }
  }
  if ('import' in config) {
    const located = locateRecorded(config.import.path, source)
    if (typeof located === 'string') {
      issues.push({ code: 'PATH', path: '/transcript/import/path', reason: located })
      return null
    }
    return { kind: 'import', format: config.import.format, ...located, given: config.import.path, keepSecrets: config.import.keepSecrets ?? false }
  }
  const transcript = inlineTranscript(config.inline, issues)
  if (transcript === null) return null
  const volatile = config.inline.volatileSystemPrompt
  return volatile === undefined ? { kind: 'inline', transcript } : { kind: 'inline', transcript, volatileSystemPrompt: volatile }
}

/**
 * The generator call: `turns` joins the params (the fixtures generators read it there), and the request
 * is checked by the fixtures registry now, so a bad name or parameter is a load error with a YAML path.
 */
function resolveGenerate(config: GenerateConfig, seed: number, issues: ScenarioIssue[]): ResolvedTranscriptSource | null {
  const base = '/transcript/generate'
  if (config.params !== undefined && Object.hasOwn(config.params, 'turns')) {
    issues.push(semantic(`${base}/params/turns`, 'is set by generate.turns; remove it from params'))
    return null
  }
  const params = { ...config.params, turns: config.turns } as JsonObject
  try {
    validateGeneratorOptions({ generator: config.generator, seed, params })
  } catch (error) {
    if (!(error instanceof GeneratorParamError)) throw error
    const path = error.param === 'generator' || error.param === 'turns' ? `${base}/${error.param}`
      : error.param === 'seed' ? '/seed' : keyPathPointer(`${base}/params`, error.param)
    const prefix = `${error.param}: `
    issues.push(semantic(path, error.message.startsWith(prefix) ? error.message.slice(prefix.length) : error.message))
    return null
  }
  return {
    kind: 'generate', generator: config.generator, turns: config.turns, params,
    ...(config.volatileSystemPrompt === undefined ? {} : { volatileSystemPrompt: config.volatileSystemPrompt }),
  }
}

/**
 * Resolves a `transcript.recorded` path lexically: `fixtures:<p>` inside the fixtures root, anything else
 * against the scenario's folder; the result must lie inside one of the two roots. Returns the reason as a
 * string when refused.
 */
function locateRecorded(given: string, source: ScenarioSource): { path: string; root: 'scenario' | 'fixtures' } | string {
  if (given.includes('\0')) return 'must not contain a NUL character'
  const fixturesDir = resolve(source.fixturesDir ?? DEFAULT_FIXTURES_DIR)
  const scenarioDir = resolve(dirname(source.file))
  if (given.startsWith(FIXTURES_PREFIX)) {
    const rest = given.slice(FIXTURES_PREFIX.length)
    const path = resolve(fixturesDir, rest)
    if (isAbsolute(rest) || !isInside(fixturesDir, path)) {
      return `escapes packages/fixtures/transcripts (got ${JSON.stringify(given)}): a fixtures: path is relative and stays inside it`
    }
    return { path, root: 'fixtures' }
  }
  const path = resolve(scenarioDir, given)
  if (isInside(scenarioDir, path)) return { path, root: 'scenario' }
  if (isInside(fixturesDir, path)) return { path, root: 'fixtures' }
  return `escapes the scenario's folder (got ${JSON.stringify(given)}): use a path inside the folder of the scenario file, `
    + 'or "fixtures:<path>" for packages/fixtures/transcripts'
}

/** True when `path` is strictly inside `root` (both absolute and normalised). */
export function isInside(root: string, path: string): boolean {
  const rel = relative(root, path)
  return rel !== '' && rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel)
}

/**
 * What converting an inline transcript keeps across turns: call ids seen (with where they were first seen)
 * and tools called. `where` names a JSON path in messages (`transcript.file` lines prefix their line).
 */
export interface InlineContext {
  readonly issues: ScenarioIssue[]
  readonly callPaths: Map<string, string>
  readonly calledTools: string[]
  readonly where: (path: string) => string
}

/** A fresh conversion context collecting into `issues`; `where` (default: the path itself) names a first call id's place. */
export function inlineContext(issues: ScenarioIssue[], where: (path: string) => string = (path) => path): InlineContext {
  return { issues, callPaths: new Map(), calledTools: [], where }
}

/**
 * One inline turn (0-based `t`) as a fixtures turn; problems become SEMANTIC issues below `path` (the turn's
 * JSON pointer). Call ids default to `call-<t+1>-<step>-<n>` and must be unique across the context.
 */
export function inlineTurn(turn: InlineTurn, t: number, path: string, context: InlineContext): TranscriptTurn {
  return {
    user: typeof turn.user === 'string' ? [{ type: 'text', text: turn.user }] : turn.user.map(userBlock),
    steps: turn.steps.map((step, s) => inlineStep(step, t, s, s === turn.steps.length - 1, `${path}/steps/${s}`, context)),
  }
}

/** The tool schemas of an inline transcript (`tools` as given, else one per tool called); a repeated name is an issue at `base/tools/i`. */
export function inlineTools(given: readonly InlineTool[] | undefined, base: string, context: InlineContext): ToolSchema[] {
  const tools: ToolSchema[] = given !== undefined
    ? given.map((tool) => ({
      name: tool.name, description: tool.description ?? '', parameters: (tool.parameters ?? { type: 'object' }) as JsonObject,
    }))
    : context.calledTools.map((name) => ({ name, description: '', parameters: { type: 'object' } }))
  const seen = new Set<string>()
  tools.forEach((tool, i) => {
    if (seen.has(tool.name)) context.issues.push(semantic(`${base}/tools/${i}/name`, `repeats the tool name ${JSON.stringify(tool.name)}`))
    seen.add(tool.name)
  })
  return tools
}

function inlineTranscript(inline: InlineTranscript, issues: ScenarioIssue[]): Transcript | null {
  const base = '/transcript/inline'
  const before = issues.length
  const context = inlineContext(issues)
  const turns = inline.turns.map((turn, t): TranscriptTurn => inlineTurn(turn, t, `${base}/turns/${t}`, context))
  const tools = inlineTools(inline.tools, base, context)
  if (issues.length > before) return null
  const transcript: Transcript = { systemPrompt: inline.systemPrompt ?? '', tools, turns }
  if (inline.facts !== undefined) transcript.facts = inline.facts
  return transcript
}

/** One step: its reply as content blocks (call ids defaulted to `call-<turn>-<step>-<n>`), results paired with calls. */
function inlineStep(step: InlineStep, t: number, s: number, last: boolean, path: string, context: InlineContext): TranscriptStep {
  const { blocks, callPaths, usage } = replyContent(step.reply, t, s, path, context.issues)
  const calls = blocks.flatMap((block, b) => {
    return block.type === 'tool-call' ? [{ block: block as ToolCallBlock, path: callPaths[b] ?? path }] : []
  })
  for (const call of calls) {
    const first = context.callPaths.get(call.block.id)
    if (first === undefined) context.callPaths.set(call.block.id, context.where(call.path))
    else context.issues.push(semantic(call.path, `repeats the tool call id ${JSON.stringify(call.block.id)} of ${first}`))
    if (!context.calledTools.includes(call.block.name)) context.calledTools.push(call.block.name)
  }
  if (!last && calls.length === 0) {
    const reason = 'has no tool calls but is not the last step of its turn (a reply without tool calls ends the turn)'
    context.issues.push(semantic(`${path}/reply`, reason))
  }
  if (last && calls.length > 0) {
    context.issues.push(semantic(`${path}/reply`, 'calls tools but is the last step of its turn (add a step with the final reply)'))
  }
  const toolResults = matchResults(calls.map((c) => c.block.id), step.toolResults ?? [], path, context.issues)
  const resolved: TranscriptStep = { reply: usage === undefined ? { blocks } : { blocks, usage }, toolResults }
  if (step.steer !== undefined) {
    const steer = typeof step.steer === 'string' ? [{ type: 'text', text: step.steer } as const] : step.steer.map(userBlock)
    if (last) {
      const reason = 'is on the last step of its turn: a steering message arrives before the next step\'s request, and this turn has none '
        + '(put it in the next turn\'s user input, or on an earlier step)'
      context.issues.push(semantic(`${path}/steer`, reason))
    } else if (steer.length === 0) {
      context.issues.push(semantic(`${path}/steer`, 'holds no block (give the text or at least one text/image block)'))
    }
    resolved.steer = steer
  }
  return resolved
}

/** The reply's blocks in emission order (reasoning, text, tool calls) and the JSON path each block came from. */
function replyContent(
  reply: InlineReply, t: number, s: number, path: string, issues: ScenarioIssue[],
): { blocks: ContentBlock[]; callPaths: string[]; usage: TokenUsage | undefined } {
  if (typeof reply === 'string') return { blocks: [{ type: 'text', text: reply }], callPaths: [`${path}/reply`], usage: undefined }
  const usage = reply.usage === undefined ? undefined : { ...reply.usage }
  if (reply.blocks !== undefined) {
    for (const key of ['reasoning', 'text', 'toolCalls'] as const) {
      if (reply[key] === undefined) continue
      issues.push(semantic(`${path}/reply/${key}`, 'cannot be combined with blocks (blocks is the full form)'))
    }
    return { blocks: reply.blocks.map(replyBlock), callPaths: reply.blocks.map((_, b) => `${path}/reply/blocks/${b}`), usage }
  }
  const blocks: ContentBlock[] = []
  const callPaths: string[] = []
  if (reply.reasoning !== undefined) blocks.push({ type: 'reasoning', text: reply.reasoning })
  if (reply.text !== undefined) blocks.push({ type: 'text', text: reply.text })
  callPaths.push(...blocks.map(() => `${path}/reply`))
  ;(reply.toolCalls ?? []).forEach((call, c) => {
    const args = call.arguments === undefined ? '{}' : typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments)
    const id = CallId(call.id ?? `call-${t + 1}-${s + 1}-${c + 1}`)
    blocks.push({ type: 'tool-call', id, name: call.name, arguments: args })
    callPaths.push(`${path}/reply/toolCalls/${c}`)
  })
  return { blocks, callPaths, usage }
}

/**
 * Pairs results with calls: a result with `callId` answers that call, the others answer the remaining
 * calls in order; each call is answered exactly once. The results keep the order given — the order the
 * subject logs them in (parallel calls may be answered out of call order).
 */
function matchResults(
  callIds: readonly CallId[], results: readonly InlineToolResult[], stepPath: string, issues: ScenarioIssue[],
): TranscriptToolResult[] {
  if (results.length !== callIds.length) {
    const path = results.length === 0 ? stepPath : `${stepPath}/toolResults`
    issues.push(semantic(path, `has ${plural(results.length, 'tool result')} for ${plural(callIds.length, 'tool call')}; give one per call`))
    return []
  }
  const byCall = new Map<string, TranscriptToolResult>()
  const claimed = new Set(results.flatMap((result) => result.callId ?? []))
  const unclaimed = callIds.filter((id) => !claimed.has(id))
  results.forEach((result, r) => {
    const callId = result.callId ?? unclaimed.shift()
    if (callId === undefined || !callIds.includes(CallId(callId))) {
      issues.push(semantic(`${stepPath}/toolResults/${r}/callId`, `names no tool call of this reply (got ${JSON.stringify(callId)})`))
      return
    }
    if (byCall.has(callId)) {
      issues.push(semantic(`${stepPath}/toolResults/${r}`, `answers tool call ${JSON.stringify(callId)} a second time`))
      return
    }
    byCall.set(callId, toolResultOf(result, callId, `${stepPath}/toolResults/${r}`, issues))
  })
  return [...byCall.values()]
}

/**
 * One result: `content` as blocks, or the error's text when it has none; an `error` makes it an error result
 * (`isError: true`, `error: {name, code}` logged on `tool/result`, §1.4.9) and `meta` is carried verbatim.
 */
function toolResultOf(result: InlineToolResult, callId: string, path: string, issues: ScenarioIssue[]): TranscriptToolResult {
  const error = result.error === undefined ? undefined
    : typeof result.error === 'string' ? { code: 'TOOL_ERROR', name: 'ToolError', text: result.error }
    : { code: result.error.code, name: result.error.name ?? 'ToolError', text: result.error.text }
  if (result.content === undefined && error === undefined) issues.push(semantic(path, 'needs content or an error'))
  if (error !== undefined && result.isError === false) {
    issues.push(semantic(`${path}/isError`, 'is false, but the result has an error (an error result is always isError: true)'))
  }
  if (error?.text !== undefined && result.content !== undefined) {
    issues.push(semantic(`${path}/error`, 'gives the error text, and so does content: give the text in one of them'))
  }
  const content: ContentBlock[] = result.content === undefined ? [{ type: 'text', text: error?.text ?? error?.code ?? '' }]
    : typeof result.content === 'string' ? [{ type: 'text', text: result.content }] : result.content.map(userBlock)
  const out: TranscriptToolResult = error === undefined && result.isError === undefined ? { callId, content }
    : { callId, content, isError: error !== undefined || result.isError === true }
  if (error !== undefined) out.error = { name: error.name, code: error.code }
  if (result.meta !== undefined) out.meta = structuredClone(result.meta) as JsonValue
  return out
}

function userBlock(block: InlineUserBlock): ContentBlock {
  switch (block.type) {
    case 'text': return { type: 'text', text: block.text }
    case 'image': return { type: 'image', attachment: { ...block.attachment } }
    default: return assertNever(block, 'user block')
  }
}

function replyBlock(block: InlineReplyBlock): ContentBlock {
  switch (block.type) {
    case 'text': return { type: 'text', text: block.text }
    case 'reasoning': return { type: 'reasoning', text: block.text }
    case 'image': return { type: 'image', attachment: { ...block.attachment } }
    case 'tool-call': return { type: 'tool-call', id: CallId(block.id), name: block.name, arguments: block.arguments }
    default: return assertNever(block, 'reply block')
  }
}

// ---------------------------------------------------------------------------------------------
// Faults

const FAULT_CODES: Partial<Record<FaultKind, FailureCode>> = {
  'FAULT-01': 'CONTEXT_WINDOW_EXCEEDED', 'FAULT-02': 'CONTEXT_WINDOW_EXCEEDED', 'FAULT-03': 'CONTEXT_WINDOW_EXCEEDED',
  'FAULT-04': 'CONTEXT_WINDOW_EXCEEDED', 'FAULT-05': 'CONTEXT_WINDOW_EXCEEDED', 'FAULT-06': 'CONTEXT_WINDOW_EXCEEDED',
  'FAULT-07': 'CONTEXT_WINDOW_EXCEEDED', 'FAULT-08': 'CONTEXT_WINDOW_EXCEEDED', 'FAULT-09': 'CONTEXT_WINDOW_EXCEEDED',
  'FAULT-10': 'CONTEXT_WINDOW_EXCEEDED', 'FAULT-11': 'CONTEXT_WINDOW_EXCEEDED',
  'FAULT-12': 'IMAGE_OFFLOAD_REQUIRED', 'FAULT-13': 'IMAGE_OFFLOAD_REQUIRED', 'FAULT-14': 'IMAGE_OFFLOAD_REQUIRED',
  'FAULT-15': 'IMAGE_OFFLOAD_REQUIRED', 'FAULT-16': 'SERVER',
  'FAULT-20': 'SERVER', 'FAULT-21': 'TIMEOUT', 'FAULT-22': 'ABORTED', 'FAULT-23': 'MAX_TOKENS', 'FAULT-28': 'CONTEXT_WINDOW_EXCEEDED',
  'FAULT-29': 'IMAGE_OFFLOAD_REQUIRED', 'FAULT-30': 'IMAGE_OFFLOAD_REQUIRED',
}

/** The crash point of each §13.4 kind (the checkpoint of FAULT-53 is the bracket's `user/message` replacement). */
const CRASH_POINTS: Partial<Record<FaultKind, CrashPoint>> = {
  'FAULT-50': 'compaction/start', 'FAULT-51': 'compaction/summary-error', 'FAULT-52': 'compaction/summary', 'FAULT-53': 'checkpoint',
  'FAULT-54': 'compaction/prune', 'FAULT-55': 'compaction/end', 'FAULT-56': 'tool/call', 'FAULT-57': 'session/end-seed',
}

const REQUEST_PARAMS = ['code', 'message', 'status', 'offloadImages', 'delivery', 'chunks', 'retryAfterMs'] as const

function resolveFault(fault: FaultConfig, index: number, dialect: Dialect, issues: ScenarioIssue[]): ResolvedFault {
  const path = `/faults/${index}`
  const target = faultTargetOf(fault.kind)
  const when = fault.when ?? {}
  const params = fault.params ?? {}
  const isRequest = target === 'conversation' || target === 'compaction'
  if (isRequest && when.purpose !== undefined && when.purpose !== target) {
    issues.push(semantic(`${path}/when/purpose`, `must be ${target}: ${fault.kind} is a ${target}-request fault (§13)`))
  }
  if (!isRequest) {
    for (const key of REQUEST_PARAMS) {
      if (params[key] !== undefined) {
        issues.push(semantic(`${path}/params/${key}`, `applies only to request faults (FAULT-01…33), not to ${fault.kind}`))
      }
    }
  }
  if (params.contextWindow !== undefined && target !== 'config') {
    issues.push(semantic(`${path}/params/contextWindow`, `applies only to configuration faults (FAULT-40…46), not to ${fault.kind}`))
  }
  const afterEvent = when.afterEvent ?? CRASH_POINTS[fault.kind] ?? null
  if (afterEvent !== null && afterEvent !== 'checkpoint' && !vocabulary(dialect).eventTypes.has(afterEvent)) {
    issues.push(semantic(`${path}/when/afterEvent`, `names ${afterEvent}, which the ${dialect} dialect never writes (§14)`))
  }
  const delivery = params.delivery ?? (fault.kind === 'FAULT-02' ? 'after-headers' : 'before-headers')
  return {
    id: fault.id ?? `fault-${index + 1}`,
    kind: fault.kind,
    target,
    when: {
      requestIndex: when.requestIndex ?? null,
      purpose: when.purpose ?? (isRequest ? target : null),
      occurrence: when.occurrence ?? 1,
      afterEvent,
      afterSeq: when.afterSeq ?? null,
      turn: when.turn ?? null,
      step: when.step ?? null,
      route: when.route ?? null,
      promptTokensAtLeast: when.promptTokensAtLeast ?? null,
      maxTokensAbove: when.maxTokensAbove ?? null,
      hasImages: when.hasImages ?? null,
      atVirtualMs: when.atVirtualMs ?? null,
    },
    params: {
      code: params.code ?? FAULT_CODES[fault.kind] ?? null,
      message: params.message ?? null,
      status: params.status ?? null,
      offloadImages: params.offloadImages ?? null,
      delivery,
      chunks: delivery === 'after-chunks' ? params.chunks ?? 1 : 0,
      retryAfterMs: params.retryAfterMs ?? null,
      count: params.count ?? params.codes?.length ?? 1,
      contextWindow: params.contextWindow ?? null,
      switchTo: params.switchTo ?? null,
      body: params.body === undefined ? null : params.body as JsonValue,
      headers: params.headers ?? null,
      codes: params.codes ?? null,
    },
    optional: fault.optional ?? false,
  }
}

/** Request selectors of `when` beyond `requestIndex`/`purpose`/`occurrence` (README "Fault targeting"). */
export const TARGETING_SELECTORS = ['turn', 'step', 'route', 'promptTokensAtLeast', 'maxTokensAbove', 'hasImages', 'atVirtualMs'] as const

/**
 * Request faults that are not answered by the mock provider (`run/world.ts` realises FAULT-17/32 as stream
 * middleware, FAULT-31 as an unroutable summarizer, FAULT-33 by the scenario's setup): they take no request
 * selector and no wire parameter of fault targeting.
 */
const OFF_WIRE_REQUEST_KINDS: ReadonlySet<FaultKind> = new Set(['FAULT-17', 'FAULT-31', 'FAULT-32', 'FAULT-33'])

/** Summary-content faults (§13.2) answered with a scripted reply, not a failure: no raw body, codes or late delivery. */
const REPLY_KINDS: ReadonlySet<FaultKind> = new Set(['FAULT-23', 'FAULT-24', 'FAULT-25', 'FAULT-26', 'FAULT-27'])

/**
 * The cross-field rules of fault targeting (README "Fault targeting"): selectors and wire parameters only on
 * faults the mock answers, turns and steps the transcript has, routes the provider declares, a raw body only
 * before headers or late, `count` equal to the number of `codes`. `models` are the declared request models.
 */
function checkFaultTargeting(
  faults: readonly FaultConfig[], models: ReadonlySet<string>, turnSteps: readonly number[] | null, turnCount: number | null,
  issues: ScenarioIssue[],
): void {
  faults.forEach((fault, i) => {
    const path = `/faults/${i}`
    const when = fault.when ?? {}
    const params = fault.params ?? {}
    const target = faultTargetOf(fault.kind)
    const wired = (target === 'conversation' || target === 'compaction') && !OFF_WIRE_REQUEST_KINDS.has(fault.kind)
    for (const key of TARGETING_SELECTORS) {
      if (when[key] !== undefined && !wired) {
        issues.push(semantic(`${path}/when/${key}`, `selects provider requests; ${fault.kind} is not answered by the provider (FAULT-17, 31, 32, 33 and FAULT-40…84 are not)`))
      }
    }
    for (const key of ['body', 'headers', 'codes'] as const) {
      if (params[key] !== undefined && (!wired || REPLY_KINDS.has(fault.kind))) {
        issues.push(semantic(`${path}/params/${key}`, `applies only to provider failures (FAULT-01…22 and 28…30, not FAULT-17), not to ${fault.kind}`))
      }
    }
    if (params.delivery === 'after-timeout' && (!wired || REPLY_KINDS.has(fault.kind))) {
      issues.push(semantic(`${path}/params/delivery`, `after-timeout applies only to provider failures (FAULT-01…22 and 28…30, not FAULT-17), not to ${fault.kind}`))
    }
    const delivery = params.delivery ?? 'before-headers'
    if (params.body !== undefined && delivery !== 'before-headers' && delivery !== 'after-timeout') {
      issues.push(semantic(`${path}/params/delivery`, `must be before-headers or after-timeout with a raw body (a body is a whole HTTP response), got ${delivery}`))
    }
    if (params.codes !== undefined && params.count !== undefined && params.count !== params.codes.length) {
      issues.push(semantic(`${path}/params/count`, `must equal the number of codes (${params.codes.length}): the i-th firing answers the i-th code`))
    }
    if (when.turn !== undefined && turnCount !== null && when.turn > turnCount) {
      issues.push(semantic(`${path}/when/turn`, `names turn ${when.turn}; the transcript has ${plural(turnCount, 'turn')}`))
    }
    const stepsMax = turnSteps === null ? null : when.turn === undefined ? Math.max(0, ...turnSteps) : turnSteps[when.turn - 1] ?? null
    // +1: a compaction after the turn's last step (a manual compactNow) belongs to the step after it.
    if (when.step !== undefined && stepsMax !== null && when.step > stepsMax + 1) {
      const where = when.turn === undefined ? 'no turn of the transcript has' : `turn ${when.turn} has`
      issues.push(semantic(`${path}/when/step`, `names step ${when.step}; ${where} more than ${plural(stepsMax, 'step')} (+1 for a compaction after the last)`))
    }
    if (when.route !== undefined && !models.has(when.route)) {
      issues.push(semantic(`${path}/when/route`, `names model ${JSON.stringify(when.route)}, which no route serves (declared: ${[...models].map((m) => JSON.stringify(m)).join(', ')})`))
    }
  })
}

/**
 * The models requests may name (the `route` selector's domain): the provider's model, plus the FAULT-44 and
 * FAULT-32 targets (`run/world.ts` `worldRoutes`, suffixes `-switched` / `-rerouted`).
 */
function requestModels(doc: Scenario): ReadonlySet<string> {
  const model = doc.provider.model ?? doc.provider.routes?.[0]?.model ?? ''
  const kinds = new Set((doc.faults ?? []).map((f) => f.kind))
  const models = new Set([model, ...(doc.provider.routes ?? []).map((r) => r.model)])
  if (kinds.has('FAULT-44')) models.add(`${model}-switched`)
  if (kinds.has('FAULT-32')) models.add(`${model}-rerouted`)
  return models
}

function checkUniqueFaultIds(faults: readonly ResolvedFault[], issues: ScenarioIssue[]): void {
  const seen = new Map<string, number>()
  faults.forEach((fault, i) => {
    const first = seen.get(fault.id)
    if (first === undefined) seen.set(fault.id, i)
    else issues.push(semantic(`/faults/${i}/id`, `repeats the fault id ${JSON.stringify(fault.id)} of /faults/${first}`))
  })
}

// ---------------------------------------------------------------------------------------------
// Manual actions and expectations

function resolveManual(
  action: ManualAction, index: number, turnCount: number | null, turnSteps: readonly number[] | null, hasPruner: boolean,
  issues: ScenarioIssue[],
): ResolvedManualAction {
  const path = `/manual/${index}`
  switch (action.action) {
    case 'compactNow':
      if (turnCount !== null && action.afterTurn > turnCount) {
        issues.push(semantic(`${path}/afterTurn`, `is after the last turn (the transcript has ${turnCount})`))
      }
      return { kind: 'compactNow', afterTurn: action.afterTurn, sourceCommandId: action.sourceCommandId ?? null }
    case 'compactRegion': {
      const beforeStep = action.beforeStep ?? 1
      if (turnCount !== null && action.turn > turnCount) {
        issues.push(semantic(`${path}/turn`, `names a turn the transcript does not have (it has ${turnCount})`))
      } else if (turnSteps !== null && beforeStep > (turnSteps[action.turn - 1] ?? 0)) {
        const steps = turnSteps[action.turn - 1] ?? 0
        issues.push(semantic(`${path}/beforeStep`, `names a step turn ${action.turn} does not have (it has ${steps})`))
      }
      return { kind: 'compactRegion', turn: action.turn, beforeStep, start: action.start, end: action.end }
    }
    case 'prune':
      if (turnCount !== null && action.afterTurn > turnCount) {
        issues.push(semantic(`${path}/afterTurn`, `is after the last turn (the transcript has ${turnCount})`))
      }
      if (!hasPruner) issues.push(semantic(`${path}/action`, 'calls the pruner, but the scenario loads none (set `pruner`)'))
      return { kind: 'prune', afterTurn: action.afterTurn }
    default: return assertNever(action, 'manual action')
  }
}

/** Which `do` actions make sense while which thing is in flight (§13.6, §13.7). */
const CONCURRENT_DURING: Readonly<Record<ConcurrentDo, readonly ConcurrentDuring[]>> = {
  'compact-now': ['summary', 'flush', 'pre-step', 'idle'],
  'compact-region': ['summary', 'flush'],
  'pressure-check': ['summary', 'flush'],
  'replace-node': ['summary'],
  'price-change': ['summary'],
  'append-surface': ['summary'],
  'append-log-only': ['summary'],
  'user-prompt': ['summary', 'flush'],
  'abort-caller': ['summary', 'flush'],
  'cancel-agent': ['summary', 'flush'],
  'abort-turn': ['summary', 'pre-step'],
}

function resolveConcurrent(
  item: ConcurrentAction, index: number, turnCount: number | null, turnSteps: readonly number[] | null, issues: ScenarioIssue[],
): ResolvedConcurrent {
  const path = `/concurrent/${index}`
  const only = (key: keyof ConcurrentAction, ok: boolean, what: string): void => {
    if (item[key] !== undefined && !ok) issues.push(semantic(`${path}/${key}`, `applies only ${what}`))
  }
  const { during } = item
  only('occurrence', during === 'summary' || during === 'flush', 'with during: summary or flush')
  only('at', during === 'summary', 'with during: summary')
  only('chunk', item.at === 'after-chunk', 'with at: after-chunk')
  only('turn', during === 'pre-step', 'with during: pre-step')
  only('step', during === 'pre-step', 'with during: pre-step')
  only('afterTurn', during === 'idle', 'with during: idle')
  only('node', item.do === 'replace-node', 'with do: replace-node')
  only('signal', item.do === 'compact-now', 'with do: compact-now')
  only('imageTokens', item.do === 'price-change', 'with do: price-change')
  only('start', item.do === 'compact-region', 'with do: compact-region')
  only('end', item.do === 'compact-region', 'with do: compact-region')
  if (item.at === 'after-chunk' && item.chunk === undefined) issues.push(semantic(`${path}/chunk`, 'is required with at: after-chunk'))
  if (during === 'pre-step' && item.turn === undefined) issues.push(semantic(`${path}/turn`, 'is required with during: pre-step'))
  if (during === 'idle' && item.afterTurn === undefined) issues.push(semantic(`${path}/afterTurn`, 'is required with during: idle'))
  if (item.do === 'compact-region' && (item.start === undefined || item.end === undefined)) {
    issues.push(semantic(`${path}/${item.start === undefined ? 'start' : 'end'}`, 'is required with do: compact-region'))
  }
  if (!CONCURRENT_DURING[item.do].includes(during)) {
    issues.push(semantic(`${path}/do`, `${item.do} cannot run during ${during} (it can during ${CONCURRENT_DURING[item.do].join(', ')})`))
  }
  if (item.signal === 'aborted' && during !== 'idle') {
    issues.push(semantic(`${path}/signal`, 'aborted applies only with during: idle (FAULT-80: the call itself throws, nothing is in flight)'))
  }
  const step = item.step ?? 1
  if (item.turn !== undefined && turnCount !== null && item.turn > turnCount) {
    issues.push(semantic(`${path}/turn`, `names a turn the transcript does not have (it has ${turnCount})`))
  } else if (item.turn !== undefined && turnSteps !== null && step > (turnSteps[item.turn - 1] ?? 0)) {
    issues.push(semantic(`${path}/step`, `names a step turn ${item.turn} does not have (it has ${turnSteps[item.turn - 1] ?? 0})`))
  }
  if (item.afterTurn !== undefined && turnCount !== null && item.afterTurn > turnCount) {
    issues.push(semantic(`${path}/afterTurn`, `is after the last turn (the transcript has ${turnCount})`))
  }
  return {
    index,
    during,
    occurrence: item.occurrence ?? 1,
    at: item.at ?? 'seed',
    chunk: item.chunk ?? null,
    turn: item.turn ?? null,
    step,
    afterTurn: item.afterTurn ?? null,
    do: item.do,
    node: item.node ?? 'first',
    signal: item.signal ?? 'live',
    imageTokens: item.imageTokens ?? null,
    start: item.start ?? null,
    end: item.end ?? null,
  }
}

function resolveExpect(
  doc: Scenario, dialect: Dialect, provider: ResolvedProvider, turnCount: number | null, issues: ScenarioIssue[],
): ResolvedExpect {
  const expect = doc.expect ?? {}
  const outcome = expect.outcome?.map((item, i) => resolveOutcome(item, `/expect/outcome/${i}`, issues)) ?? null
  if (outcome !== null && turnCount !== null && outcome.length > turnCount) {
    issues.push(semantic('/expect/outcome', `lists ${plural(outcome.length, 'outcome')} for ${plural(turnCount, 'turn')}`))
  }
  const counts = {} as Record<CountName, CountRange | null>
  for (const name of COUNT_NAMES) counts[name] = countRange(expect.counts?.[name], `/expect/counts/${name}`, issues)
  const events = (expect.events ?? []).map((pattern, i): ResolvedEventPattern => {
    const type = typeof pattern === 'string' ? pattern : pattern.type
    if (!vocabulary(dialect).eventTypes.has(type)) {
      const where = typeof pattern === 'string' ? `/expect/events/${i}` : `/expect/events/${i}/type`
      issues.push(semantic(where, `names ${type}, which the ${dialect} dialect never writes (§14)`))
    }
    if (typeof pattern === 'string') return { type, data: null, text: null, absent: false }
    return {
      type,
      data: dataPatternAt(pattern.data, `/expect/events/${i}/data`, issues),
      text: pattern.text === undefined ? null : matcherAt(pattern.text, `/expect/events/${i}/text`, issues),
      absent: pattern.absent === true,
    }
  })
  return {
    seedSpecific: expect.seedSpecific === true,
    invariants: expect.invariants ?? 'all',
    outcome,
    counts,
    finalPressure: resolveFinalPressure(expect.finalPressure, provider, issues),
    events,
    finalSurfaceNodes: countRange(expect.finalSurfaceNodes, '/expect/finalSurfaceNodes', issues),
    ...resolveMatcherExpect(expect, dialect, issues),
  }
}

function resolveOutcome(item: TurnOutcome, path: string, issues: ScenarioIssue[]): ResolvedTurnOutcome {
  if (typeof item === 'string') return { kind: item, code: null }
  if (item.code !== undefined && item.kind !== 'error') {
    issues.push(semantic(`${path}/code`, `applies only to kind error (got kind ${JSON.stringify(item.kind)})`))
  }
  return { kind: item.kind, code: item.code ?? null }
}

function countRange(bound: CountBound | undefined, path: string, issues: ScenarioIssue[]): CountRange | null {
  if (bound === undefined) return null
  if (typeof bound === 'number') return { min: bound, max: bound }
  const range = { min: bound.min ?? 0, max: bound.max ?? null }
  if (range.max !== null && range.min > range.max) issues.push(semantic(path, `has min ${range.min} above max ${range.max}`))
  return range
}

function resolveFinalPressure(
  bounds: FinalPressureExpectation | undefined, provider: ResolvedProvider, issues: ScenarioIssue[],
): ResolvedFinalPressure | null {
  if (bounds === undefined) return null
  const resolved: ResolvedFinalPressure = {
    ratioMin: bounds.ratioMin ?? null,
    ratioMax: bounds.ratioMax ?? null,
    tokensMin: bounds.tokensMin ?? null,
    tokensMax: bounds.tokensMax ?? null,
  }
  if ((resolved.ratioMin !== null || resolved.ratioMax !== null) && provider.contextWindow === null) {
    issues.push(semantic('/expect/finalPressure', 'bounds a ratio, but provider.contextWindow is not set (no capacity, no ratio)'))
  }
  const pairs = [[resolved.ratioMin, resolved.ratioMax, 'ratio'], [resolved.tokensMin, resolved.tokensMax, 'tokens']] as const
  for (const [min, max, unit] of pairs) {
    if (min !== null && max !== null && min > max) {
      issues.push(semantic('/expect/finalPressure', `has ${unit}Min ${min} above ${unit}Max ${max}`))
    }
  }
  return resolved
}

/** `provider.cache` resolved by `metrics/contracts.ts`; a bad value is a SEMANTIC issue at its field (the default stands in). */
function resolveProviderCache(config: ProviderConfig['cache'], issues: ScenarioIssue[]): CacheContractSpec {
  try {
    return resolveCacheContract(config ?? {})
  } catch (err) {
    if (!(err instanceof CacheContractError)) throw err
    issues.push(semantic(`/provider/cache/${err.field}`, err.message))
    return resolveCacheContract()
  }
}

// ---------------------------------------------------------------------------------------------
// Provider routes (issue #15)

/** The route keys the single-route shorthand accepts beside `model` (with `routes` they belong in each route). */
const SHORTHAND_ROUTE_KEYS = ['contextWindow', 'reportedContextWindow', 'imageTokens', 'maxOutputTokens', 'tokenizer', 'limits', 'usage', 'summarizer'] as const

/** The resolved routes, the conversation and summary routes, and the policy config with the summary route set. */
interface ResolvedRoutes {
  readonly routes: readonly MockRoute[]
  readonly conversationRoute: MockRoute
  readonly summaryRoute: MockRoute
  readonly policyConfig: BasicCompactionConfig
}

/**
 * `provider.routes` (or the shorthand's one route) with their defaults; `conversation`/`summary` picked; a
 * summary route other than the conversation route written into the policy's `summarizationProvider`/
 * `summarizationModel` (§3.1, §8.1), which must agree when the policy already names a route. Problems become
 * SEMANTIC issues (a stand-in route keeps resolution going).
 */
function resolveRoutes(config: ProviderConfig, name: string, policy: BasicCompactionConfig, issues: ScenarioIssue[]): ResolvedRoutes {
  const fallbackEnforce = config.enforce
  let routes: MockRoute[]
  let conversation: { model: string | undefined; path: string } = { model: undefined, path: '/provider/conversation' }
  let summary: { model: string | undefined; path: string } = { model: undefined, path: '/provider/summary' }
  if (config.routes === undefined) {
    for (const key of ['conversation', 'summary'] as const) {
      if (config[key] !== undefined) issues.push(semantic(`/provider/${key}`, 'applies only with provider.routes (the shorthand declares one route)'))
    }
    const route: RouteConfig = { model: config.model ?? '' }
    for (const key of SHORTHAND_ROUTE_KEYS) if (config[key] !== undefined) Object.assign(route, { [key]: config[key] })
    routes = [resolveRoute(route, config.wire, fallbackEnforce, '/provider', issues)]
  } else {
    for (const key of SHORTHAND_ROUTE_KEYS) {
      if (config[key] !== undefined) issues.push(semantic(`/provider/${key}`, 'belongs in each route when provider.routes is given'))
    }
    const first = new Map<string, number>()
    routes = config.routes.map((route, i) => {
      const seen = first.get(route.model)
      if (seen === undefined) first.set(route.model, i)
      else issues.push(semantic(`/provider/routes/${i}/model`, `repeats the route model ${JSON.stringify(route.model)} of /provider/routes/${seen}`))
      return resolveRoute(route, config.wire, fallbackEnforce, `/provider/routes/${i}`, issues)
    })
    conversation = { model: config.conversation, path: '/provider/conversation' }
    summary = { model: config.summary, path: '/provider/summary' }
  }
  const declared = routes.map((r) => JSON.stringify(r.model)).join(', ')
  const byModel = new Map(routes.map((r) => [r.model, r] as const))
  const pick = (model: string | undefined, path: string, fallback: MockRoute): MockRoute => {
    if (model === undefined) return fallback
    const route = byModel.get(model)
    if (route === undefined) issues.push(semantic(path, `names the route ${JSON.stringify(model)}, which provider.routes does not declare (declared: ${declared})`))
    return route ?? fallback
  }
  const firstRoute = routes[0] as MockRoute // the schema requires one route at least (and the shorthand gives one)
  const conversationRoute = pick(conversation.model, conversation.path, firstRoute)
  const policyModel = policy.summarizationModel ?? ''
  const policyProvider = policy.summarizationProvider ?? ''
  const policyNames = policyModel !== '' && policyProvider !== ''
  if (policyNames && (policyProvider !== name || !byModel.has(policyModel))) {
    const path = policyProvider !== name ? '/policy/summarizationProvider' : '/policy/summarizationModel'
    const reason = policyProvider !== name
      ? `names the provider ${JSON.stringify(policyProvider)}, but every route is served by ${JSON.stringify(name)} (provider.name)`
      : `names the route ${JSON.stringify(policyModel)}, which the provider does not declare (declared: ${declared})`
    issues.push(semantic(path, reason))
  }
  const policyRoute = policyNames && policyProvider === name ? byModel.get(policyModel) : undefined
  const summaryRoute = pick(summary.model, summary.path, policyRoute ?? conversationRoute)
  let policyConfig = policy
  if (summary.model !== undefined && policyNames && policyRoute !== undefined && policyRoute !== summaryRoute) {
    const reason = `names the summary route ${JSON.stringify(policyModel)}, but provider.summary is ${JSON.stringify(summaryRoute.model)}; they must agree`
    issues.push(semantic('/policy/summarizationModel', reason))
  } else if (summaryRoute !== conversationRoute && !policyNames) {
    policyConfig = { ...policy, summarizationProvider: name, summarizationModel: summaryRoute.model }
  }
  return { routes, conversationRoute, summaryRoute, policyConfig }
}

/** One route with its defaults; `path` is the JSON pointer of its keys (`/provider` for the shorthand). */
function resolveRoute(
  route: RouteConfig, providerWire: WireDialect, providerEnforce: EnforceConfig | undefined, path: string, issues: ScenarioIssue[],
): MockRoute {
  const wire = route.wire ?? providerWire
  if (wire !== providerWire) {
    const reason = `is ${JSON.stringify(wire)}, but the provider's wire is ${JSON.stringify(providerWire)}: one provider serves one wire (routes of mixed wires are not supported)`
    issues.push(semantic(`${path}/wire`, reason))
  }
  const enforce = resolveEnforce(route.enforce ?? providerEnforce)
  const contextWindow = route.contextWindow ?? null
  if (enforce.window === 'prompt-plus-max-tokens' && contextWindow === null) {
    const where = route.enforce !== undefined ? `${path}/enforce/window` : '/provider/enforce/window'
    const reason = `sets window: prompt-plus-max-tokens, but the route ${JSON.stringify(route.model)} has no contextWindow to count against`
    issues.push(semantic(where, reason))
  }
  const reported = route.reportedContextWindow
  return {
    model: route.model,
    wire,
    contextWindow,
    ...(reported === undefined ? {} : { reportedContextWindow: reported === 'none' ? null : reported }),
    maxOutputTokens: route.maxOutputTokens ?? null,
    imageTokens: route.imageTokens ?? null,
    tokenizer: route.tokenizer ?? 'heuristic',
    enforce,
    imageLimits: resolveImageLimits(route.limits),
    usage: route.usage ?? 'reported',
    summarizer: resolveSummarizer(route.summarizer, `${path}/summarizer`, issues),
  }
}

/** `enforce` resolved: `on` (and absent) = every rule, `off` = none, an object = every rule but those it turns off. */
export function resolveEnforce(config: EnforceConfig | undefined): EnforceSpec {
  if (config === undefined || config === 'on') return ENFORCE_ALL
  if (config === 'off') return ENFORCE_OFF
  const window = config.window ?? true
  return {
    window: window === true ? 'prompt' : window === false ? null : window,
    pairing: config.pairing ?? true,
    images: config.images ?? true,
    maxOutput: config.maxOutput ?? true,
  }
}

function resolveImageLimits(limits: ImageLimitsConfig | undefined): ImageLimitsSpec {
  if (limits === undefined) return NO_IMAGE_LIMITS
  return {
    imagesPerRequestMax: limits.imagesPerRequest ?? null,
    imageBytesMax: limits.imageBytes ?? null,
    requestImageBytesMax: limits.requestImageBytes ?? null,
  }
}

/** The JSON path of the summarizer of route `model` (the shorthand's, or its entry in `provider.routes`). */
function summarizerPath(config: ProviderConfig, model: string): string {
  const i = config.routes?.findIndex((r) => r.model === model) ?? -1
  return i < 0 ? '/provider/summarizer' : `/provider/routes/${i}/summarizer`
}

/**
 * An inline transcript's images against every route's byte limits: a limit below the largest image the
 * transcript carries can never let that image through (a world that contradicts itself, issue #15).
 */
function checkImageLimits(config: ProviderConfig, routes: readonly MockRoute[], transcript: Transcript, issues: ScenarioIssue[]): void {
  let largest = 0
  for (const turn of transcript.turns) {
    const blocks = [...turn.user, ...turn.steps.flatMap((s) => [...s.reply.blocks, ...s.toolResults.flatMap((r) => r.content)])]
    for (const block of blocks) {
      const bytes = block.type === 'image' ? (block as { attachment?: { bytes?: unknown } }).attachment?.bytes : undefined
      if (typeof bytes === 'number') largest = Math.max(largest, bytes)
    }
  }
  if (largest === 0) return
  routes.forEach((route, i) => {
    const base = config.routes === undefined ? '/provider/limits' : `/provider/routes/${i}/limits`
    const checks = [['imageBytes', route.imageLimits.imageBytesMax], ['requestImageBytes', route.imageLimits.requestImageBytesMax]] as const
    for (const [key, max] of checks) {
      if (max !== null && max < largest) {
        issues.push(semantic(`${base}/${key}`, `is ${max} bytes, below the largest image the transcript carries (${largest} bytes): it could never be sent`))
      }
    }
  })
}

/**
 * A scripted capacity report (a route's `reportedContextWindow`, or FAULT-41's `params.contextWindow` for the
 * conversation route) makes the reported capacity differ from the world's by design: it needs a declared FAULT-41
 * (the checker's WORLD-02 then stands aside), and a FAULT-41 needs one to script.
 */
function checkReportedCapacity(
  faults: readonly ResolvedFault[], routes: readonly MockRoute[], shorthand: boolean, issues: ScenarioIssue[],
): void {
  const i = faults.findIndex((f) => f.kind === 'FAULT-41')
  const scripted = routes.findIndex((r) => r.reportedContextWindow !== undefined)
  if (i < 0) {
    if (scripted >= 0) {
      const path = shorthand ? '/provider/reportedContextWindow' : `/provider/routes/${scripted}/reportedContextWindow`
      issues.push(semantic(path, 'scripts the capacity the route reports: declare a FAULT-41 fault (§13.3) for it'))
    }
    return
  }
  const fault = faults[i]
  if (fault?.params.contextWindow === null && scripted < 0) {
    issues.push(semantic(`/faults/${i}/params/contextWindow`, 'FAULT-41 needs a capacity to report: set params.contextWindow or a route\'s reportedContextWindow'))
  }
  if (fault?.params.contextWindow !== null && scripted >= 0) {
    issues.push(semantic(`/faults/${i}/params/contextWindow`, 'cannot be combined with a route\'s reportedContextWindow (give one or the other)'))
  }
}

/** FAULT-66 (pruning with no open turn) needs a `manual: prune` action to attempt it. */
function checkPruneFault(faults: readonly ResolvedFault[], manual: readonly ResolvedManualAction[], issues: ScenarioIssue[]): void {
  const i = faults.findIndex((f) => f.kind === 'FAULT-66')
  if (i >= 0 && !manual.some((a) => a.kind === 'prune')) {
    issues.push(semantic(`/faults/${i}/kind`, 'FAULT-66 needs a `manual: [{action: prune, afterTurn: n}]` action that calls the pruner with no turn open'))
  }
}

/** FAULT-44 `switchTo` names a declared route other than the conversation route, and is exclusive with `contextWindow`. */
function checkRouteSwitches(faults: readonly ResolvedFault[], routes: readonly MockRoute[], issues: ScenarioIssue[]): void {
  faults.forEach((fault, i) => {
    const target = fault.params.switchTo
    if (target === null) return
    const path = `/faults/${i}/params/switchTo`
    if (fault.kind !== 'FAULT-44') issues.push(semantic(path, `applies only to FAULT-44 (a route switch), not to ${fault.kind}`))
    else if (!routes.some((r) => r.model === target)) {
      const declared = routes.map((r) => JSON.stringify(r.model)).join(', ')
      issues.push(semantic(path, `names the route ${JSON.stringify(target)}, which provider.routes does not declare (declared: ${declared})`))
    }
    if (fault.params.contextWindow !== null) {
      issues.push(semantic(`/faults/${i}/params/contextWindow`, 'cannot be combined with switchTo (the declared route has its own window)'))
    }
  })
}
