/**
 * The provider side of a simulated run (design §4 items 4–5): a `MockProvider` serving the scenario's
 * transcript turn by turn, with the scenario's §13.1/§13.2/§13.3 faults translated into the mock's fault
 * vocabulary (`provider/faults.ts`) and the few in-process hooks some faults need (a virtual timeout for
 * `TIMEOUT`, a caller abort for FAULT-10/22 (the turn's signal, or a manual `compactNow`'s), a route switch for FAULT-44). The crash harness builds the same
 * world in its child process: `createWorld(...)`, mount `world.provider` (msw), and pass `world.hooks` to
 * `runReferenceSession`. Subject hooks carry what is not on the wire: direct API use without request headers
 * (FAULT-09), storage faults on the engine's bracket appends (FAULT-60…63; a FAULT-60/61 orphan is the live
 * lock FAULT-11 needs) and on its manual flush (FAULT-64/65). A fault no scenario can express is refused with a
 * `ScenarioError`.
 */
import type { CapturedRequest, EventDraft, GenerateOptions, JsonValue, RunManifest, StreamMiddleware } from '@compaction-sim/core'
import type { Transcript } from '@compaction-sim/fixtures'
import { deterministicSummary } from '../provider/deterministic-summary.ts'
import { FaultInjectingPlan, SELECTOR_KEYS, type FaultCounters, type TargetedFaultSpec } from '../provider/faults.ts'
import { MockProvider } from '../provider/mock-provider.ts'
import { reportedWindow, type MockRoute } from '../provider/route.ts'
import type { ParsedRequest, PlannedOutcome, PlannedReply, ReplyPlan } from '../provider/types.ts'
import { ScenarioError, type ScenarioIssue } from '../scenario/errors.ts'
import type { ResolvedFault, ResolvedScenario } from '../scenario/resolve.ts'
import type { FaultKind } from '../scenario/types.ts'
import type { FlushPoint, SessionView, SubjectHooks, TurnControl } from '../subjects/types.ts'
import { plural } from '../plural.ts'
import { SummaryService } from './summaries.ts'
import type { Cassette, UpstreamSpec } from '../provider/upstream.ts'

/** The model id a FAULT-44 route switch moves to without `params.switchTo` (`<model>-switched`). */
export const SWITCHED_MODEL_SUFFIX = '-switched'

/** The model id a FAULT-32 middleware reroutes summary calls to (`<model>-rerouted`, same provider and window). */
export const REROUTED_MODEL_SUFFIX = '-rerouted'

/** Thrown by the FAULT-17 middleware: a failure around the request that is not an adapter failure. */
export class InjectedMiddlewareError extends Error {
  override readonly name = 'InjectedMiddlewareError'
  readonly code = 'FAULT_17'
}

/** Thrown (inside the mock, answered as HTTP 500) when the subject asks for a reply its turn does not have. */
export class TurnRepliesExhaustedError extends Error {
  override readonly name = 'TurnRepliesExhaustedError'
  readonly code = 'TURN_REPLIES_EXHAUSTED'
}

/**
 * Serves the transcript's replies turn-aligned: `startTurn(t)` points at turn t's first step, so a turn
 * that ended early (an error, an abort) never shifts the replies of the next one, and a restored session
 * continues at the right reply. Compaction requests get the summary route's summarizer (`summaries`, issue
 * #15; without it the deterministic summary), other non-conversation requests the deterministic summary.
 */
export class TurnReplyPlan implements ReplyPlan {
  private readonly turns: ReadonlyArray<readonly PlannedReply[]>
  private readonly summaries: SummaryService | undefined
  private turn = 0
  private step = 0

  constructor(transcript: Transcript, summaries?: SummaryService) {
    this.summaries = summaries
    this.turns = transcript.turns.map((t) => t.steps.map((s) => (s.reply.usage === undefined
      ? { blocks: s.reply.blocks }
      : { blocks: s.reply.blocks, usage: s.reply.usage })))
  }

  /** Points the plan at the first reply of 1-based `turn`. */
  startTurn(turn: number): void {
    this.turn = turn
    this.step = 0
  }

  /**
   * Points the plan after the last reply of 1-based `turn` (0: before the first turn), where a manual `compactNow`
   * after that turn stands, unless it already stands in that turn (it ran here: its position is where the turn
   * really ended). A restored session's first manual action (issue #16) gets the position it would have had.
   */
  afterTurn(turn: number): void {
    if (turn === this.turn) return
    this.turn = turn
    this.step = this.turns[turn - 1]?.length ?? 0
  }

  /**
   * The session position of the next request (fault targeting's `turn`/`step`): the turn last started (null before
   * the first) and the 1-based step whose reply the turn asks for next, so a retry keeps its step and a compaction
   * belongs to the step it precedes or recovers (after the turn's last reply: that count + 1).
   */
  position(): { turn: number | null; step: number | null } {
    return this.turn === 0 ? { turn: null, step: null } : { turn: this.turn, step: this.step + 1 }
  }

  /** The reply `next` would serve. Throws `TurnRepliesExhaustedError` past the turn's last step. */
  peek(request: ParsedRequest): PlannedReply {
    if (request.purpose === 'compaction' && this.summaries !== undefined) return this.summaries.reply(request)
    if (request.purpose !== 'conversation') return { blocks: [{ type: 'text', text: deterministicSummary(request) }] }
    const reply = this.turns[this.turn - 1]?.[this.step]
    if (reply === undefined) {
      const steps = this.turns[this.turn - 1]?.length ?? 0
      throw new TurnRepliesExhaustedError(`turn ${this.turn} asks for reply ${this.step + 1}; the transcript's turn has ${steps}`)
    }
    return reply
  }

  /** Serves `peek` and consumes conversation replies. */
  next(request: ParsedRequest): PlannedOutcome {
    const reply = this.peek(request)
    if (request.purpose === 'conversation') this.step++
    if (request.purpose === 'compaction') this.summaries?.count(request)
    return { kind: 'reply', reply }
  }
}

/** How a fault kind is realised (the report lists the same table). */
type Realisation =
  | { kind: 'request'; params: Record<string, JsonValue> } // a provider outcome via FaultInjectingPlan
  | { kind: 'setup' } // shaped by the scenario's transcript / policy / pruner; nothing to inject
  | { kind: 'no-capacity' } // FAULT-40: the route reports no window
  | { kind: 'route-switch' } // FAULT-44
  | { kind: 'hook' } // FAULT-17, 31, 32, 60…65: a subject hook (middleware, unroutable summarizer, append and flush faults)
  | { kind: 'crash' } // §13.4: the crash harness
  | { kind: 'concurrent' } // §13.6, §13.7: the scenario's `concurrent:` items, run in-process by the subject
  | { kind: 'refused'; reason: string }

/** Summary-content faults (§13.2) as the mock's reply variants. */
const REPLY_VARIANTS: Partial<Record<FaultKind, string>> = {
  'FAULT-23': 'max-tokens', 'FAULT-24': 'empty', 'FAULT-25': 'image', 'FAULT-26': 'mixed', 'FAULT-27': 'not-smaller',
}

/**
 * Append faults (§13.5) on the engine's bracket appends, by the draft they refuse. FAULT-66 (pruning with no
 * open turn) refuses nothing here: its `manual: prune` action makes the attempt and the pruner's own
 * pre-validation refuses it (setup-only).
 */
const APPEND_FAULTS: Partial<Record<FaultKind, (draft: EventDraft) => boolean>> = {
  'FAULT-60': (d) => d.type === 'compaction/end' && !('error' in d.data),
  'FAULT-61': (d) => d.type === 'compaction/end' && 'error' in d.data,
  'FAULT-62': (d) => d.type === 'compaction/summary',
  'FAULT-63': (d) => d.type === 'user/message',
}

/** Flush faults (§13.5, §7.11) on the manual durability checkpoint, by the bracket it follows. */
const FLUSH_FAULTS: Partial<Record<FaultKind, (bracket: FlushPoint) => boolean>> = {
  'FAULT-64': (b) => !b.failed,
  'FAULT-65': (b) => b.failed,
}

/**
 * FAULT-11 needs a live lock when its overflow arrives (§3.6 step 2). The reference core holds one only as
 * the live orphan of a bracket whose `compaction/end` append was refused, so the scenario declares that too.
 */
const LIVE_LOCK_FAULTS: ReadonlySet<FaultKind> = new Set(['FAULT-60', 'FAULT-61'])

/**
 * Faults whose conditions the scenario's transcript, configuration or manual actions create (FAULT-41: the
 * routes' scripted capacity reports, served by the mock; FAULT-43: the invalid `policy` block the subject's engine
 * construction must refuse; FAULT-66: a `manual: prune` action); nothing to inject.
 */
const SETUP_ONLY: ReadonlySet<FaultKind> = new Set(['FAULT-33', 'FAULT-41', 'FAULT-42', 'FAULT-43', 'FAULT-45', 'FAULT-46', 'FAULT-66'])

const REFUSED: Partial<Record<FaultKind, string>> = {}

/** The realisation of one resolved fault. */
export function realise(fault: ResolvedFault): Realisation {
  const refused = REFUSED[fault.kind]
  if (refused !== undefined) return { kind: 'refused', reason: refused }
  if (SETUP_ONLY.has(fault.kind)) return { kind: 'setup' }
  if (['FAULT-17', 'FAULT-31', 'FAULT-32'].includes(fault.kind) || APPEND_FAULTS[fault.kind] !== undefined
    || FLUSH_FAULTS[fault.kind] !== undefined) return { kind: 'hook' }
  switch (fault.target) {
    case 'crash': return { kind: 'crash' }
    case 'config':
      if (fault.kind === 'FAULT-40') return { kind: 'no-capacity' }
      if (fault.kind === 'FAULT-44') return { kind: 'route-switch' }
      return { kind: 'refused', reason: 'no simulation for this configuration fault' }
    case 'conversation':
    case 'compaction': return { kind: 'request', params: requestParams(fault) }
    case 'concurrent':
    case 'signal': return { kind: 'concurrent' }
    default:
      return { kind: 'refused', reason: `a ${fault.target} fault (§13.5) is in-process in the core; not expressible yet` }
  }
}

/** The scenario's `params` in the mock's vocabulary (`provider/faults.ts`). */
function requestParams(fault: ResolvedFault): Record<string, JsonValue> {
  const variant = REPLY_VARIANTS[fault.kind]
  const out: Record<string, JsonValue> = {}
  if (fault.params.count !== 1) out['times'] = fault.params.count
  if (variant !== undefined) return { ...out, reply: variant }
  if (fault.params.codes !== null) out['codes'] = [...fault.params.codes]
  else out['code'] = fault.params.code ?? 'SERVER'
  if (fault.params.body !== null) out['body'] = fault.params.body
  if (fault.params.headers !== null) out['headers'] = { ...fault.params.headers }
  const delivery = fault.params.delivery
  out['delivery'] = delivery
  if (delivery === 'after-chunks') out['afterChunks'] = fault.params.chunks
  if (fault.params.offloadImages !== null) out['offloadImages'] = fault.params.offloadImages
  if (fault.params.status !== null) out['status'] = fault.params.status
  if (fault.params.retryAfterMs !== null) out['retryAfterMs'] = fault.params.retryAfterMs
  if (fault.params.message !== null) out['message'] = fault.params.message
  return out
}

/**
 * The mock's spec of a request fault (`realise` gave `request`): `requestIndex`, else `occurrence`, with `purpose` and
 * fault targeting's selectors. Shared by the runner's world and `sim serve`.
 */
export function requestFaultSpec(fault: ResolvedFault, params: Record<string, JsonValue>): TargetedFaultSpec {
  const when: TargetedFaultSpec['when'] = {}
  if (fault.when.requestIndex !== null) when.requestIndex = fault.when.requestIndex
  else when.occurrence = fault.when.occurrence
  if (fault.when.purpose !== null) when.purpose = fault.when.purpose
  const w = fault.when
  if (w.turn !== null) when.turn = w.turn
  if (w.step !== null) when.step = w.step
  if (w.route !== null) when.route = w.route
  if (w.promptTokensAtLeast !== null) when.promptTokensAtLeast = w.promptTokensAtLeast
  if (w.maxTokensAbove !== null) when.maxTokensAbove = w.maxTokensAbove
  if (w.hasImages !== null) when.hasImages = w.hasImages
  if (w.atVirtualMs !== null) when.atVirtualMs = w.atVirtualMs
  return { id: fault.id, kind: fault.kind, target: fault.target, when, params }
}

/** True when the fault selects by the session's position or clock, which only an in-process subject reports. */
export function needsSessionContext(fault: ResolvedFault): boolean {
  return fault.when.turn !== null || fault.when.step !== null || fault.when.atVirtualMs !== null
}

/**
 * Why the provider world cannot serve `scenario` to any subject (the runner reports it `skipped`), or null
 * when it can. Every wire is served today; what a subject itself cannot do (e.g. a subject that does not
 * speak the anthropic wire: feature `anthropicWire`) is `missingFeatureReason`'s business. An upstream
 * summarizer (issue #20) is not served in a crash child (its world has no cassette): such a scenario is skipped.
 */
export function unsupportedReason(scenario: ResolvedScenario): string | null {
  if (scenario.faults.some((f) => f.target === 'crash') && upstreamsOf(scenario).length > 0) {
    return 'an upstream summarizer is not served in the crash harness\'s child process yet (issue #20)'
  }
  return null
}

/** Refuses the scenario when any fault has no simulation (a `ScenarioError`, exit 2). */
export function checkFaultsSimulable(scenario: ResolvedScenario): void {
  const issues: ScenarioIssue[] = []
  scenario.faults.forEach((fault, i) => {
    const r = realise(fault)
    if (r.kind === 'refused') {
      issues.push({ code: 'SEMANTIC', path: `/faults/${i}/kind`, reason: `${fault.kind} cannot be simulated: ${r.reason}` })
    }
    if (r.kind === 'concurrent' && scenario.concurrent.length === 0) {
      const reason = `${fault.kind} is realised by the scenario's concurrent: block (§13.6, §13.7); declare the action that races`
      issues.push({ code: 'SEMANTIC', path: `/faults/${i}/kind`, reason })
    }
    if (fault.kind === 'FAULT-11' && !scenario.faults.some((f) => LIVE_LOCK_FAULTS.has(f.kind))) {
      const reason = 'FAULT-11 needs a live lock when the overflow arrives: '
        + 'declare a FAULT-60 or FAULT-61 fault whose orphan holds it (§13.5)'
      issues.push({ code: 'SEMANTIC', path: `/faults/${i}/kind`, reason })
    }
    if (r.kind === 'request' && (fault.when.afterEvent !== null || fault.when.afterSeq !== null)) {
      const reason = 'a request fault fires by requestIndex, purpose and occurrence, not afterEvent/afterSeq'
      issues.push({ code: 'SEMANTIC', path: `/faults/${i}/when`, reason })
    }
  })
  if (issues.length > 0) throw new ScenarioError(scenario.file, issues)
}

/** One route of the run manifest (§1.1). */
export type ManifestRoute = RunManifest['routes'][number]

/**
 * The routes the mock serves (issue #15): every declared route, then the synthetic ones some faults need —
 * FAULT-44's `<model>-switched` copy of the conversation route (window `params.contextWindow`, unless
 * `params.switchTo` names a declared route) and FAULT-32's `<model>-rerouted` copy of the summary route.
 * Under FAULT-40 no route reports (or enforces) a window; FAULT-41's `params.contextWindow` is the capacity the
 * conversation route reports (its `reportedContextWindow`).
 */
export function worldMockRoutes(scenario: ResolvedScenario): MockRoute[] {
  const p = scenario.provider
  const noCapacity = scenario.faults.some((f) => f.kind === 'FAULT-40')
  const reports = scenario.faults.find((f) => f.kind === 'FAULT-41')?.params.contextWindow ?? null
  const routes: MockRoute[] = p.routes.map((r) => (reports !== null && r.model === p.conversationRoute.model
    ? { ...r, reportedContextWindow: reports }
    : { ...r }))
  const sw = scenario.faults.find((f) => f.kind === 'FAULT-44')
  if (sw !== undefined && sw.params.switchTo === null) {
    const window = sw.params.contextWindow ?? p.conversationRoute.contextWindow
    routes.push({ ...p.conversationRoute, model: p.model + SWITCHED_MODEL_SUFFIX, contextWindow: window })
  }
  if (scenario.faults.some((f) => f.kind === 'FAULT-32')) routes.push({ ...p.summaryRoute, model: p.model + REROUTED_MODEL_SUFFIX })
  return noCapacity ? routes.map((r) => ({ ...r, contextWindow: null })) : routes
}

/** The upstream summarizers of the scenario (issue #20): its routes' and the provider's, distinct by URL, in route order. */
export function upstreamsOf(scenario: ResolvedScenario): UpstreamSpec[] {
  const out = new Map<string, UpstreamSpec>()
  for (const spec of [...worldMockRoutes(scenario).map((r) => r.summarizer), scenario.provider.summarizer]) {
    if (spec.kind === 'upstream' && !out.has(spec.upstream.url)) out.set(spec.upstream.url, spec.upstream)
  }
  return [...out.values()]
}

/**
 * The routes of the run (§1.1 `RunManifest.routes`): those of `worldMockRoutes`, under the provider's name, each
 * with the capacity it reports (`reportedWindow`) when that is one the runtime accepts (a positive integer; an
 * invalid FAULT-41 report is `INVALID_MODEL_CONTEXT`, so the policy never sees a capacity for that route).
 */
export function worldRoutes(scenario: ResolvedScenario): ManifestRoute[] {
  return worldMockRoutes(scenario).map((r) => {
    const window = reportedWindow(r)
    return {
      provider: scenario.provider.name, model: r.model,
      ...(window === null || !Number.isSafeInteger(window) || window <= 0 ? {} : { contextWindow: window }),
      ...(r.imageTokens === null ? {} : { imageTokens: r.imageTokens }),
    }
  })
}

/** Counts of the hook-realised faults (middleware, append faults, route switch), by fault id. */
export interface HookCounter {
  /** Points the fault could fire at (matching dispatches, bracket drafts, turn starts). */
  seen: number
  fired: number
}

/**
 * Everything a world has counted, as plain JSON (fault targeting: counting is global to the scenario). The crash
 * child writes it after each change; the runner starts the next process's world from the copy that precedes the
 * crash point (`WorldOptions.prior`), so no fault restarts its `occurrence` or `requestIndex` after a restore.
 */
export interface WorldCounters {
  plan: FaultCounters
  hooks: Record<string, HookCounter>
  /** The stream middleware's dispatch counts (FAULT-17/32): all purposes, and per purpose. */
  middleware: { index: number; conversation: number; compaction: number }
  /** Turns begun (the FAULT-44 switch happens before turn `occurrence` + 1). */
  turns: number
}

/** A declared fault that never fired, with the message the report shows. */
export interface UnfiredFault {
  readonly fault: ResolvedFault
  /** `fault <id> (<kind>, when …) never fired: <why it could not match>`. */
  readonly message: string
}

/** A built world: the provider to mount, the hooks the subject calls, and what fired. */
export interface World {
  readonly provider: MockProvider
  readonly hooks: SubjectHooks

  /** How often each fault fired, by fault id (the prior counts included; `setup` kinds count 1 by construction). */
  fired(): Map<string, number>

  /**
   * Counts the requests an earlier process of this scenario sent (the crash child's capture), before the
   * resumed session runs, so summary attempts continue instead of restarting (`run/summaries.ts`).
   */
  countEarlierRequests(requests: readonly CapturedRequest[]): void
  /** A JSON snapshot of the world's counts (see `WorldCounters`). */
  counters(): WorldCounters
  /** The session's log length as the subject reported it (`observeSession`), or null before it did. */
  logLength(): number | null
  /** The scenario's non-crash faults that never fired, each with why (optional ones included: the caller filters). */
  unfired(): UnfiredFault[]
  /** Indexes of the scenario's `concurrent:` items the subject never reported running (`hooks.concurrentRan`). */
  concurrentNotRun(): number[]
  /**
   * Where the subject's session stands, for the report of a run that never settled (issue #16, `pending-work.ts`):
   * the turn or manual call it began last and the last request the mock answered, e.g.
   * `in the manual compactNow after turn 1; request #2 (compaction) answered hang`.
   */
  activity(): string
  /** Virtual latency the world's replies have taken so far, in ms (a scripted summary attempt's `latencyMs`; issue #16's scheduler waits it out). */
  latencyMs(): number
}

/** Options of `createWorld`. */
export interface WorldOptions {
  scenario: ResolvedScenario
  transcript: Transcript
  /** The virtual time the provider stamps on captures and `created` (the subject's clock, not advanced). */
  now: () => number
  /**
   * The caller's virtual timeout for one provider call, in ms: a reply whose virtual latency (a scripted
   * summary attempt's `latencyMs`) reaches it never arrives in time — the call times out (TIMEOUT). Default
   * none: no subject declares a virtual timeout yet, so latency only advances the provider's clock.
   */
  callerTimeoutMs?: number | null
  /** Counts to continue from: the crashed process's, up to its crash point. */
  prior?: WorldCounters
  /** Called after every change of the counts (the crash child persists them synchronously). */
  onCountersChange?: () => void
  /** The scenario's cassette, for upstream summarizers (issue #20, `provider/upstream.ts`); in record mode it fills. */
  cassette?: Cassette
  /** The environment an upstream key is read from when recording (default `process.env`; tests inject it). */
  env?: Readonly<Record<string, string | undefined>>
}

/** Fault kinds the world realises by construction (nothing can fail to match): they count as fired once. */
function firedByConstruction(fault: ResolvedFault, r: Realisation): boolean {
  return r.kind === 'setup' || r.kind === 'no-capacity' || (r.kind === 'hook' && fault.kind === 'FAULT-31')
}

/** Builds the provider world of one scenario run (module doc). Throws `ScenarioError` for a fault it cannot simulate. */
export function createWorld(options: WorldOptions): World {
  const { scenario, transcript } = options
  checkFaultsSimulable(scenario)
  const summaries = new SummaryService(
    scenario.provider.summarizer, options.cassette ?? null, options.env === undefined ? {} : { env: options.env },
  )
  const base = new TurnReplyPlan(transcript, summaries)
  const specs: TargetedFaultSpec[] = []
  for (const fault of scenario.faults) {
    const r = realise(fault)
    if (r.kind === 'request') specs.push(requestFaultSpec(fault, r.params))
  }
  let session: SessionView | null = null
  const changed = options.onCountersChange ?? ((): void => {})
  const faulted = new FaultInjectingPlan(base, specs, {
    context: () => ({ ...base.position(), virtualMs: session === null ? null : session.now() - session.originMs }),
    ...(options.prior === undefined ? {} : { prior: options.prior.plan }),
  })
  const counts: Omit<WorldCounters, 'plan'> = options.prior === undefined
    ? { hooks: {}, middleware: { index: -1, conversation: 0, compaction: 0 }, turns: 0 }
    : structuredClone({ hooks: options.prior.hooks, middleware: options.prior.middleware, turns: options.prior.turns })
  const hookCounter = (id: string): HookCounter => {
    const existing = counts.hooks[id]
    if (existing !== undefined) return existing
    const fresh = { seen: 0, fired: 0 }
    counts.hooks[id] = fresh
    return fresh
  }
  const ranItems = new Set<number>()
  // The signal of whatever caller is running now: the turn (beginTurn) or a manual compactNow (beginManual).
  let callerAbort: AbortController | null = null
  let timeout: AbortController | null = null
  let abortOnCompaction = false
  const cancelling = scenario.faults.find((f) => f.kind === 'FAULT-10')
  let latencyMs = 0
  // What `activity()` reports: the caller the subject began last, and the mock's last answer.
  let phase = 'before the first turn or manual call'
  let lastAnswer: { index: number; purpose: string; outcome: PlannedOutcome } | null = null
  const answerText = (a: NonNullable<typeof lastAnswer>): string => `request #${a.index} (${a.purpose}) answered ${a.outcome.kind}`
    + (a.outcome.kind === 'hang' ? ` (never answers: the caller must give up, ${a.outcome.expectedCode ?? 'TIMEOUT'})` : '')
  const callerTimeoutMs = options.callerTimeoutMs ?? null
  // A reply's virtual latency elapses before its first byte; past the caller's timeout it never arrives.
  const withLatency = (outcome: PlannedOutcome): PlannedOutcome => {
    const reply = outcome.kind === 'reply' || outcome.kind === 'interrupt' || outcome.kind === 'hang' ? outcome.reply : undefined
    const latency = reply?.latencyMs ?? 0
    if (latency === 0) return outcome
    if (callerTimeoutMs !== null && latency >= callerTimeoutMs) {
      latencyMs += callerTimeoutMs
      return { kind: 'hang', expectedCode: 'TIMEOUT' }
    }
    latencyMs += latency
    return outcome
  }
  const plan: ReplyPlan = {
    peek: (request) => faulted.peek(request),
    prepare: (request) => summaries.prepare(request),
    observe: (request) => {
      faulted.observe(request)
      changed()
    },
    next: (request) => {
      if (abortOnCompaction && request.purpose === 'compaction') {
        // FAULT-10: the user cancels while overflow recovery's summary call is in flight (it arrives aborted).
        abortOnCompaction = false
        callerAbort?.abort(new Error('FAULT-10: cancelled during overflow recovery'))
      }
      const before = faulted.fired.length
      const planned = faulted.next(request)
      changed()
      const hit = faulted.fired[before]
      if (hit !== undefined && hit[0] === cancelling?.id) abortOnCompaction = true
      // A fault answered instead of the base plan: the summary attempt still happened (`run/summaries.ts`).
      if (hit !== undefined && request.purpose === 'compaction') summaries.count(request)
      const outcome = withLatency(planned)
      lastAnswer = { index: request.index, purpose: request.purpose, outcome }
      if (outcome.kind === 'hang') {
        // The client gives up: its virtual timeout elapses (TIMEOUT) or its caller aborts (ABORTED, FAULT-22): the turn,
        // or a manual compactNow's caller signal (§7.10) — the finished turn's signal would abort nothing and leave it hanging.
        const target = outcome.expectedCode === 'ABORTED' ? callerAbort : timeout
        setImmediate(() => target?.abort(new Error(`${outcome.expectedCode ?? 'TIMEOUT'}: the mock provider never answered`)))
      }
      return outcome
    },
  }
  const provider = new MockProvider({
    wire: scenario.provider.wire, plan, clock: { now: () => options.now() + latencyMs }, routes: worldMockRoutes(scenario),
    cache: scenario.provider.cache,
  })
  const middleware = hookMiddleware(scenario, hookCounter, counts.middleware, changed)
  const switchFault = scenario.faults.find((f) => f.kind === 'FAULT-44')
  const switchAfterTurn = switchFault === undefined ? null : switchFault.when.occurrence
  const hooks: SubjectHooks = {
    observeSession: (view) => { session = view },
    beginTurn: (turn: number, control: TurnControl): AbortSignal => {
      base.startTurn(turn)
      counts.turns = Math.max(counts.turns, turn)
      if (switchFault !== undefined && turn === (switchAfterTurn ?? 1) + 1) {
        control.setModel(switchFault.params.switchTo ?? scenario.provider.model + SWITCHED_MODEL_SUFFIX)
        hookCounter(switchFault.id).fired++
      }
      changed()
      phase = `in turn ${turn}`
      callerAbort = new AbortController()
      return callerAbort.signal
    },
    beginManual: (call): AbortSignal => {
      base.afterTurn(call.afterTurn)
      phase = `in the manual compactNow ${call.afterTurn === 0 ? 'before the first turn' : `after turn ${call.afterTurn}`}`
      callerAbort = new AbortController()
      return callerAbort.signal
    },
    adapterTimeout: (): AbortSignal => {
      timeout = new AbortController()
      return timeout.signal
    },
    middleware,
    unroutableSummarizer: scenario.faults.some((f) => f.kind === 'FAULT-31'),
    directApi: scenario.faults.some((f) => f.kind === 'FAULT-09'),
    ...appendFaultHook(scenario, hookCounter, changed),
    concurrentRan: (index) => {
      ranItems.add(index)
      // Any item racing fires every §13.6/§13.7 fault the scenario declares (they name what the items provoke).
      for (const fault of scenario.faults) if (realise(fault).kind === 'concurrent') hookCounter(fault.id).fired++
      changed()
    },
    ...flushFaultHook(scenario, hookCounter, changed),
  }
  const counters = (): WorldCounters => ({ plan: faulted.counters(), ...structuredClone(counts) })
  const fired = (): Map<string, number> => {
    const out = new Map<string, number>()
    const plan = faulted.counters()
    for (const fault of scenario.faults) {
      const r = realise(fault)
      if (r.kind === 'crash' || r.kind === 'refused') continue
      if (firedByConstruction(fault, r)) out.set(fault.id, 1)
      else if (r.kind === 'request') out.set(fault.id, plan.faults[fault.id]?.fired ?? 0)
      else out.set(fault.id, counts.hooks[fault.id]?.fired ?? 0)
    }
    return out
  }
  return {
    provider,
    hooks,
    fired,
    counters,
    logLength: () => (session === null ? null : session.logLength()),
    unfired: () => {
      const firings = fired()
      const snapshot = counters()
      return scenario.faults.flatMap((fault) => {
        const r = realise(fault)
        if (r.kind === 'crash' || r.kind === 'refused' || (firings.get(fault.id) ?? 0) > 0) return []
        return [{ fault, message: `${faultLabel(fault)} never fired: ${unfiredReason(fault, snapshot, session !== null)}` }]
      })
    },
    countEarlierRequests: (requests) => { summaries.countEarlier(requests) },
    concurrentNotRun: () => scenario.concurrent.flatMap((c) => (ranItems.has(c.index) ? [] : [c.index])),
    activity: () => (lastAnswer === null ? `${phase}; no request yet` : `${phase}; last ${answerText(lastAnswer)}`),
    latencyMs: () => latencyMs,
  }
}

/** `fault <id> (<kind>, when k=v …)` for messages: every condition the fault was declared (or defaulted) with. */
export function faultLabel(fault: ResolvedFault): string {
  const w = fault.when
  const parts: string[] = []
  if (w.afterEvent !== null) parts.push(`afterEvent=${w.afterEvent}`)
  if (w.requestIndex !== null) parts.push(`requestIndex=${w.requestIndex}`)
  if (w.purpose !== null) parts.push(`purpose=${w.purpose}`)
  if (w.requestIndex === null) parts.push(`occurrence=${w.occurrence}`)
  for (const key of SELECTOR_KEYS) if (w[key] !== null) parts.push(`${key}=${String(w[key])}`)
  return `fault ${fault.id} (${fault.kind}, when ${parts.join(' ')})`
}

/** Why `fault` could not fire, from the world's counts (`observed`: the subject reported its session view). */
function unfiredReason(fault: ResolvedFault, counts: WorldCounters, observed: boolean): string {
  const r = realise(fault)
  const w = fault.when
  const hook = counts.hooks[fault.id] ?? { seen: 0, fired: 0 }
  if (r.kind === 'concurrent') return 'no item of the scenario\'s concurrent: block ran (see its `never ran` warnings)'
  if (fault.kind === 'FAULT-44') return `the run began ${plural(counts.turns, 'turn')}; the switch comes before turn ${w.occurrence + 1}`
  if (APPEND_FAULTS[fault.kind] !== undefined) {
    return `the engine made ${plural(hook.seen, 'matching bracket append')}; occurrence ${w.occurrence} needs ${w.occurrence}`
  }
  if (FLUSH_FAULTS[fault.kind] !== undefined) {
    const which = fault.kind === 'FAULT-64' ? 'successful' : 'failed'
    return `the engine flushed after ${plural(hook.seen, `${which} manual bracket`)}; occurrence ${w.occurrence} needs ${w.occurrence}`
  }
  if (r.kind === 'hook') {
    const purpose = fault.kind === 'FAULT-32' ? 'compaction' : w.purpose ?? 'conversation'
    if (w.requestIndex !== null) return `the run made ${plural(counts.middleware.index + 1, 'dispatch', 'dispatches')}; dispatch #${w.requestIndex} was not a ${purpose} one`
    return `the run made ${plural(counts.middleware[purpose], `${purpose} dispatch`, `${purpose} dispatches`)}`
  }
  const c = counts.plan.faults[fault.id]
  const purpose = fault.target === 'compaction' ? 'compaction' : 'conversation'
  if (c?.missed !== undefined) return `it was due on request #${c.missed.requestIndex}, which ${c.missed.by} answered instead`
  if (w.requestIndex !== null) {
    const n = counts.plan.requests
    if (n <= w.requestIndex) return `the run made ${plural(n, 'request')}, so there is no request #${w.requestIndex}`
    return `request #${w.requestIndex} is not a ${purpose} request matching its other conditions`
  }
  let why = `the run made ${plural(c?.target ?? counts.plan.purposes[purpose], `${purpose} request`)}`
  const selectors = SELECTOR_KEYS.filter((k) => w[k] !== null)
  if (selectors.length > 0) {
    const each = selectors.map((k) => `${k}=${String(w[k])}: ${c?.conditions[k] ?? 0}`).join(', ')
    why += `, ${c?.seen ?? 0} matching all its conditions (${each})`
  }
  if (!observed && (w.atVirtualMs !== null)) why += '; the subject never reported its virtual clock (hooks.observeSession)'
  return why
}

/**
 * The `rejectAppend` hook of the scenario's append faults (none → no hook): each refuses the `occurrence`-th
 * matching bracket draft and the `count - 1` matching ones after it, counting into the fault's `HookCounter`.
 */
function appendFaultHook(
  scenario: ResolvedScenario, counter: (id: string) => HookCounter, changed: () => void,
): Pick<SubjectHooks, 'rejectAppend'> {
  const refuse = countedRefusal(scenario, APPEND_FAULTS, counter, changed,
    (kind, draft) => `${kind} storage fault: ${draft.type} not persisted`)
  return refuse === null ? {} : { rejectAppend: refuse }
}

/**
 * The `rejectFlush` hook of the scenario's flush faults (none → no hook): FAULT-64 fails the `occurrence`-th flush
 * after a committed manual bracket (and the `count - 1` after it), FAULT-65 the same after a failed one.
 */
function flushFaultHook(
  scenario: ResolvedScenario, counter: (id: string) => HookCounter, changed: () => void,
): Pick<SubjectHooks, 'rejectFlush'> {
  const refuse = countedRefusal(scenario, FLUSH_FAULTS, counter, changed,
    (kind, bracket) => `${kind} storage fault: the session durability checkpoint failed after a ${bracket.failed ? 'failed' : 'committed'} bracket`)
  return refuse === null ? {} : { rejectFlush: refuse }
}

/**
 * One storage hook over the scenario's faults of a table (`kind` → which inputs it matches), or null when the
 * scenario has none: a matching input counts as `seen`, and the `occurrence`-th one and the `count - 1` after it
 * are refused (`fired`) with the message `why` gives.
 */
function countedRefusal<T>(
  scenario: ResolvedScenario, table: Partial<Record<string, (input: T) => boolean>>,
  counter: (id: string) => HookCounter, changed: () => void, why: (kind: string, input: T) => string,
): ((input: T) => string | null) | null {
  const faults = scenario.faults.flatMap((f) => {
    const matches = table[f.kind]
    return matches === undefined ? [] : [{ fault: f, matches }]
  })
  if (faults.length === 0) return null
  return (input) => {
    for (const entry of faults) {
      if (!entry.matches(input)) continue
      const c = counter(entry.fault.id)
      c.seen++
      changed()
      const { occurrence } = entry.fault.when
      if (c.seen < occurrence || c.seen >= occurrence + entry.fault.params.count) continue
      c.fired++
      changed()
      return why(entry.fault.kind, input)
    }
    return null
  }
}

/**
 * The stream middleware of FAULT-17 (throws at the matching dispatch: `requestIndex` over all dispatches,
 * else the `occurrence`-th of its purpose) and FAULT-32 (reroutes the matching summary call to the
 * `-rerouted` model of the same provider). Counts into `state` (carried over a crash) and each fault's `HookCounter`.
 */
function hookMiddleware(
  scenario: ResolvedScenario, counter: (id: string) => HookCounter, state: WorldCounters['middleware'], changed: () => void,
): StreamMiddleware[] {
  const faults = scenario.faults.filter((f) => f.kind === 'FAULT-17' || f.kind === 'FAULT-32')
  if (faults.length === 0) return []
  return [(options: GenerateOptions): GenerateOptions => {
    const index = ++state.index
    const purpose = options.purpose === 'compaction' ? 'compaction' : 'conversation'
    const occurrence = ++state[purpose]
    changed()
    for (const fault of faults) {
      const wanted = fault.kind === 'FAULT-32' ? 'compaction' : fault.when.purpose ?? 'conversation'
      const at = fault.when.requestIndex
      const hit = at !== null ? at === index : purpose === wanted && fault.when.occurrence === occurrence
      if (!hit || purpose !== wanted) continue
      counter(fault.id).fired++
      changed()
      if (fault.kind === 'FAULT-17') throw new InjectedMiddlewareError(`${fault.id}: injected middleware failure around request ${index}`)
      return { ...options, model: scenario.provider.model + REROUTED_MODEL_SUFFIX }
    }
    return options
  }]
}
