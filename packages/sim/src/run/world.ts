/**
 * The provider side of a simulated run (design §4 items 4–5): a `MockProvider` serving the scenario's
 * transcript turn by turn, with the scenario's §13.1/§13.2/§13.3 faults translated into the mock's fault
 * vocabulary (`provider/faults.ts`) and the few in-process hooks some faults need (a virtual timeout for
 * `TIMEOUT`, a turn abort for FAULT-10/22, a route switch for FAULT-44). The crash harness builds the same
 * world in its child process: `createWorld(...)`, mount `world.provider` (msw), and pass `world.hooks` to
 * `runReferenceSession`. Subject hooks carry what is not on the wire: direct API use without request headers
 * (FAULT-09) and storage faults on the engine's bracket appends (FAULT-60…63; a FAULT-60/61 orphan is the live
 * lock FAULT-11 needs). A fault no scenario can express is refused with a `ScenarioError`.
 */
import type { CapturedRequest, EventDraft, FaultSpec, GenerateOptions, JsonValue, RunManifest, StreamMiddleware } from '@compaction-sim/core'
import type { Transcript } from '@compaction-sim/fixtures'
import { deterministicSummary } from '../provider/deterministic-summary.ts'
import { FaultInjectingPlan } from '../provider/faults.ts'
import { MockProvider } from '../provider/mock-provider.ts'
import type { MockRoute } from '../provider/route.ts'
import type { ParsedRequest, PlannedOutcome, PlannedReply, ReplyPlan } from '../provider/types.ts'
import { ScenarioError, type ScenarioIssue } from '../scenario/errors.ts'
import type { ResolvedFault, ResolvedScenario } from '../scenario/resolve.ts'
import type { FaultKind } from '../scenario/types.ts'
import type { SubjectHooks, TurnControl } from '../subjects/types.ts'
import { SummaryService } from './summaries.ts'

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
  | { kind: 'hook' } // FAULT-17, 31, 32, 60…63: a subject hook (middleware, unroutable summarizer, append faults)
  | { kind: 'crash' } // §13.4: the crash harness
  | { kind: 'refused'; reason: string }

/** Summary-content faults (§13.2) as the mock's reply variants. */
const REPLY_VARIANTS: Partial<Record<FaultKind, string>> = {
  'FAULT-23': 'max-tokens', 'FAULT-24': 'empty', 'FAULT-25': 'image', 'FAULT-26': 'mixed', 'FAULT-27': 'not-smaller',
}

/**
 * Append faults (§13.5) on the engine's bracket appends, by the draft they refuse. FAULT-66 (pruning with no
 * open turn) is not an append fault of a running session and stays refused.
 */
const APPEND_FAULTS: Partial<Record<FaultKind, (draft: EventDraft) => boolean>> = {
  'FAULT-60': (d) => d.type === 'compaction/end' && !('error' in d.data),
  'FAULT-61': (d) => d.type === 'compaction/end' && 'error' in d.data,
  'FAULT-62': (d) => d.type === 'compaction/summary',
  'FAULT-63': (d) => d.type === 'user/message',
}

/**
 * FAULT-11 needs a live lock when its overflow arrives (§3.6 step 2). The reference core holds one only as
 * the live orphan of a bracket whose `compaction/end` append was refused, so the scenario declares that too.
 */
const LIVE_LOCK_FAULTS: ReadonlySet<FaultKind> = new Set(['FAULT-60', 'FAULT-61'])

/** Faults whose conditions the scenario's transcript and configuration create; the wire needs no injection. */
const SETUP_ONLY: ReadonlySet<FaultKind> = new Set(['FAULT-33', 'FAULT-42', 'FAULT-45', 'FAULT-46'])

const REFUSED: Partial<Record<FaultKind, string>> = {
  'FAULT-41': 'the mock reports only valid capacities; an invalid one is covered by core tests',
  'FAULT-43': 'an invalid configuration is refused when the scenario loads (§3.2); write it as a load-error test',
}

/** The realisation of one resolved fault. */
export function realise(fault: ResolvedFault): Realisation {
  const refused = REFUSED[fault.kind]
  if (refused !== undefined) return { kind: 'refused', reason: refused }
  if (SETUP_ONLY.has(fault.kind)) return { kind: 'setup' }
  if (['FAULT-17', 'FAULT-31', 'FAULT-32'].includes(fault.kind) || APPEND_FAULTS[fault.kind] !== undefined) return { kind: 'hook' }
  switch (fault.target) {
    case 'crash': return { kind: 'crash' }
    case 'config':
      if (fault.kind === 'FAULT-40') return { kind: 'no-capacity' }
      if (fault.kind === 'FAULT-44') return { kind: 'route-switch' }
      return { kind: 'refused', reason: 'no simulation for this configuration fault' }
    case 'conversation':
    case 'compaction': return { kind: 'request', params: requestParams(fault) }
    default:
      return { kind: 'refused', reason: `a ${fault.target} fault (§13.5–§13.7) is in-process in the core; not expressible yet` }
  }
}

/** The scenario's `params` in the mock's vocabulary (`provider/faults.ts`). */
function requestParams(fault: ResolvedFault): Record<string, JsonValue> {
  const variant = REPLY_VARIANTS[fault.kind]
  const out: Record<string, JsonValue> = {}
  if (fault.params.count !== 1) out['times'] = fault.params.count
  if (variant !== undefined) return { ...out, reply: variant }
  const code = fault.params.code ?? 'SERVER'
  out['code'] = code
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
 * Why the provider world cannot serve `scenario` to any subject (the runner reports it `skipped`), or null
 * when it can. Every wire is served today; what a subject itself cannot do (e.g. a subject that does not
 * speak the anthropic wire: feature `anthropicWire`) is `missingFeatureReason`'s business.
 */
export function unsupportedReason(_scenario: ResolvedScenario): string | null {
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
 * Under FAULT-40 no route reports (or enforces) a window.
 */
export function worldMockRoutes(scenario: ResolvedScenario): MockRoute[] {
  const p = scenario.provider
  const noCapacity = scenario.faults.some((f) => f.kind === 'FAULT-40')
  const routes: MockRoute[] = p.routes.map((r) => ({ ...r }))
  const sw = scenario.faults.find((f) => f.kind === 'FAULT-44')
  if (sw !== undefined && sw.params.switchTo === null) {
    const window = sw.params.contextWindow ?? p.conversationRoute.contextWindow
    routes.push({ ...p.conversationRoute, model: p.model + SWITCHED_MODEL_SUFFIX, contextWindow: window })
  }
  if (scenario.faults.some((f) => f.kind === 'FAULT-32')) routes.push({ ...p.summaryRoute, model: p.model + REROUTED_MODEL_SUFFIX })
  return noCapacity ? routes.map((r) => ({ ...r, contextWindow: null })) : routes
}

/** The routes of the run (§1.1 `RunManifest.routes`): those of `worldMockRoutes`, under the provider's name. */
export function worldRoutes(scenario: ResolvedScenario): ManifestRoute[] {
  return worldMockRoutes(scenario).map((r) => ({
    provider: scenario.provider.name, model: r.model,
    ...(r.contextWindow === null ? {} : { contextWindow: r.contextWindow }),
    ...(r.imageTokens === null ? {} : { imageTokens: r.imageTokens }),
  }))
}

/** A built world: the provider to mount, the hooks the subject calls, and what fired. */
export interface World {
  readonly provider: MockProvider
  readonly hooks: SubjectHooks

  /** How often each fault fired, by fault id. */
  fired(): Map<string, number>

  /**
   * Counts the requests an earlier process of this scenario sent (the crash child's capture), before the
   * resumed session runs, so summary attempts continue instead of restarting (`run/summaries.ts`).
   */
  countEarlierRequests(requests: readonly CapturedRequest[]): void
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
}

/** Builds the provider world of one scenario run (module doc). Throws `ScenarioError` for a fault it cannot simulate. */
export function createWorld(options: WorldOptions): World {
  const { scenario, transcript } = options
  checkFaultsSimulable(scenario)
  const summaries = new SummaryService(scenario.provider.summarizer)
  const base = new TurnReplyPlan(transcript, summaries)
  const specs: FaultSpec[] = []
  for (const fault of scenario.faults) {
    const r = realise(fault)
    if (r.kind !== 'request') continue
    const when: FaultSpec['when'] = {}
    if (fault.when.requestIndex !== null) when.requestIndex = fault.when.requestIndex
    else when.occurrence = fault.when.occurrence
    if (fault.when.purpose !== null) when.purpose = fault.when.purpose
    specs.push({ id: fault.id, kind: fault.kind, target: fault.target, when, params: r.params })
  }
  const faulted = new FaultInjectingPlan(base, specs)
  const extra = new Map<string, number>()
  let turnAbort: AbortController | null = null
  let timeout: AbortController | null = null
  let abortOnCompaction = false
  const cancelling = scenario.faults.find((f) => f.kind === 'FAULT-10')
  let latencyMs = 0
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
    next: (request) => {
      if (abortOnCompaction && request.purpose === 'compaction') {
        // FAULT-10: the user cancels while overflow recovery's summary call is in flight (it arrives aborted).
        abortOnCompaction = false
        turnAbort?.abort(new Error('FAULT-10: cancelled during overflow recovery'))
      }
      const before = faulted.fired.length
      const planned = faulted.next(request)
      const hit = faulted.fired[before]
      if (hit !== undefined && hit[0] === cancelling?.id) abortOnCompaction = true
      // A fault answered instead of the base plan: the summary attempt still happened (`run/summaries.ts`).
      if (hit !== undefined && request.purpose === 'compaction') summaries.count(request)
      const outcome = withLatency(planned)
      if (outcome.kind === 'hang') {
        // The client gives up: its virtual timeout elapses (TIMEOUT) or the turn is aborted (ABORTED, FAULT-22).
        const target = outcome.expectedCode === 'ABORTED' ? turnAbort : timeout
        setImmediate(() => target?.abort(new Error(`${outcome.expectedCode ?? 'TIMEOUT'}: the mock provider never answered`)))
      }
      return outcome
    },
  }
  const provider = new MockProvider({
    wire: scenario.provider.wire, plan, clock: { now: () => options.now() + latencyMs }, routes: worldMockRoutes(scenario),
    cache: scenario.provider.cache,
  })
  const middleware = hookMiddleware(scenario, extra)
  const switchFault = scenario.faults.find((f) => f.kind === 'FAULT-44')
  const switchAfterTurn = switchFault === undefined ? null : switchFault.when.occurrence
  const hooks: SubjectHooks = {
    beginTurn: (turn: number, control: TurnControl): AbortSignal => {
      base.startTurn(turn)
      if (switchFault !== undefined && turn === (switchAfterTurn ?? 1) + 1) {
        control.setModel(switchFault.params.switchTo ?? scenario.provider.model + SWITCHED_MODEL_SUFFIX)
        extra.set(switchFault.id, (extra.get(switchFault.id) ?? 0) + 1)
      }
      turnAbort = new AbortController()
      return turnAbort.signal
    },
    adapterTimeout: (): AbortSignal => {
      timeout = new AbortController()
      return timeout.signal
    },
    middleware,
    unroutableSummarizer: scenario.faults.some((f) => f.kind === 'FAULT-31'),
    directApi: scenario.faults.some((f) => f.kind === 'FAULT-09'),
    ...appendFaultHook(scenario, extra),
  }

  return {
    provider,
    hooks,
    fired: () => {
      const counts = new Map(extra)
      for (const [id] of faulted.fired) counts.set(id, (counts.get(id) ?? 0) + 1)
      for (const fault of scenario.faults) if (fault.kind === 'FAULT-40' || fault.kind === 'FAULT-31') counts.set(fault.id, 1)
      return counts
    },
    countEarlierRequests: (requests) => { summaries.countEarlier(requests) },
  }
}

/**
 * The `rejectAppend` hook of the scenario's append faults (none → no hook): each refuses the `occurrence`-th
 * matching bracket draft and the `count - 1` matching ones after it, counting firings into `fired`.
 */
function appendFaultHook(scenario: ResolvedScenario, fired: Map<string, number>): Pick<SubjectHooks, 'rejectAppend'> {
  const faults = scenario.faults.flatMap((f) => {
    const matches = APPEND_FAULTS[f.kind]
    return matches === undefined ? [] : [{ fault: f, matches, seen: 0 }]
  })
  if (faults.length === 0) return {}
  return {
    rejectAppend: (draft) => {
      for (const entry of faults) {
        if (!entry.matches(draft)) continue
        entry.seen++
        const { occurrence } = entry.fault.when
        if (entry.seen < occurrence || entry.seen >= occurrence + entry.fault.params.count) continue
        fired.set(entry.fault.id, (fired.get(entry.fault.id) ?? 0) + 1)
        return `${entry.fault.kind} storage fault: ${draft.type} not persisted`
      }
      return null
    },
  }
}

/**
 * The stream middleware of FAULT-17 (throws at the matching dispatch: `requestIndex` over all dispatches,
 * else the `occurrence`-th of its purpose) and FAULT-32 (reroutes the matching summary call to the
 * `-rerouted` model of the same provider). Counts firings into `fired`.
 */
function hookMiddleware(scenario: ResolvedScenario, fired: Map<string, number>): StreamMiddleware[] {
  const faults = scenario.faults.filter((f) => f.kind === 'FAULT-17' || f.kind === 'FAULT-32')
  if (faults.length === 0) return []
  let index = -1
  const seen = new Map<string, number>()
  return [(options: GenerateOptions): GenerateOptions => {
    index++
    const purpose = options.purpose ?? 'conversation'
    const occurrence = (seen.get(purpose) ?? 0) + 1
    seen.set(purpose, occurrence)
    for (const fault of faults) {
      const wanted = fault.kind === 'FAULT-32' ? 'compaction' : fault.when.purpose ?? 'conversation'
      const at = fault.when.requestIndex
      const hit = at !== null ? at === index : purpose === wanted && fault.when.occurrence === occurrence
      if (!hit || purpose !== wanted) continue
      fired.set(fault.id, (fired.get(fault.id) ?? 0) + 1)
      if (fault.kind === 'FAULT-17') throw new InjectedMiddlewareError(`${fault.id}: injected middleware failure around request ${index}`)
      return { ...options, model: scenario.provider.model + REROUTED_MODEL_SUFFIX }
    }
    return options
  }]
}
