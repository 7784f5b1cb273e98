/**
 * `serve()`: the mock provider as a real HTTP server for adapters written in any language (design §8,
 * issue #11). With a scenario it serves the scenario's model replies in order (`TranscriptReplyPlan`: a
 * failed request does not consume its reply, so the retry gets it) with the scenario's request faults
 * (§13.1/§13.2) translated by the runner's world (`realise`), delivered with their exact timing by
 * `serveHttp` (reset before headers, or flushed headers then 0…N events then the cut). Faults that need an
 * in-process subject hook (FAULT-17/31/32, FAULT-44, crashes, …) cannot be served over a socket: they are
 * listed in `ignoredFaults`. Without a scenario every conversation request gets a short deterministic reply
 * and every compaction request the deterministic summary, for any model name; the announced model
 * (`mock-128k`) is listed by `GET /v1/models/<id>` with a 128 000-token window.
 *
 * Loopback only unless the caller opts in: a non-loopback `host` throws `ServeConfigError` without
 * `allowNonLoopback` (the CLI sets it only for an explicit `--host`). Requests are numbered and stamped by a
 * virtual clock (origin + 1 s per request); the capture holds redacted headers only (`REDACTED_HEADERS`).
 */
import { isIP } from 'node:net'
import type { Transcript } from '@compaction-sim/fixtures'
import { deterministicSummary } from '../provider/deterministic-summary.ts'
import { FaultInjectingPlan, type TargetedFaultSpec } from '../provider/faults.ts'
import { MockProvider } from '../provider/mock-provider.ts'
import type { MockRoute } from '../provider/route.ts'
import { serveHttp } from '../provider/serve-http.ts'
import { TranscriptReplyPlan } from '../provider/transcript-plan.ts'
import type { CapturedWireRequest, MockModel, MockWire, PlannedOutcome, ReplyPlan } from '../provider/types.ts'
import { countingFaultedSummaries, SummaryService } from '../run/summaries.ts'
import { scenarioTranscript } from '../run/transcript.ts'
import { checkFaultsSimulable, needsSessionContext, realise, requestFaultSpec, worldMockRoutes } from '../run/world.ts'
import { loadScenario } from '../scenario/load.ts'
import { resolveScenario, type ResolvedScenario } from '../scenario/resolve.ts'
import { CLOCK_ORIGIN_MS } from '../world/clock.ts'

/** Virtual milliseconds between two requests on the server's clock. */
export const SERVE_REQUEST_STEP_MS = 1000

/** The model reported without a scenario. */
export const SERVE_DEFAULT_MODEL = 'mock-128k'

/** The context window `GET /v1/models/mock-128k` reports without a scenario (the 128k its name promises). */
export const SERVE_DEFAULT_CONTEXT_WINDOW = 128_000

/** Bad options of `serve()` (an input error: CLI exit 2). */
export class ServeConfigError extends Error {
  override readonly name = 'ServeConfigError'
  readonly code = 'SERVE_CONFIG'
}

/** Options of `serve()`. */
export interface ServeOptions {
  /** Interface to bind. Default `127.0.0.1`. A non-loopback address needs `allowNonLoopback`. */
  host?: string
  /** Port; 0 picks a free one. Default 0. */
  port?: number
  /** The caller asked for a non-loopback bind explicitly (the CLI: `--host` given). Default false. */
  allowNonLoopback?: boolean
  /** Scenario file whose replies and request faults are served. */
  scenario?: string
  /** Wire dialect; default the scenario's, else `openai`. */
  wire?: MockWire
  /** Seed of the transcript generator (uint32); default the scenario's, else 0. */
  seed?: number
  /** Called once per request answered (after the response head is decided), in order. */
  onRequest?: (line: ServeRequestLine) => void
  /**
   * Provider-world routes to serve without a scenario (programmatic only; issue #15): each route's model is
   * listed and enforced (`enforce.ts`); any other model is refused 404. The first route's model is announced.
   * Not with `scenario`.
   */
  routes?: readonly MockRoute[]
}

/** One handled request as `sim serve` prints it (no header, no body: nothing secret). */
export interface ServeRequestLine {
  type: 'request'
  /** Capture index of a valid chat request; null for a refused or non-chat request. */
  index: number | null
  method: string
  path: string
  /** HTTP status sent, or null when the connection was reset before headers. */
  status: number | null
  purpose?: CapturedWireRequest['purpose']
  model?: string
  outcome?: PlannedOutcome['kind']
  expectedFailureCode?: string
}

/** A running server. */
export interface Serving {
  /** e.g. `http://127.0.0.1:40123/v1` (the OpenAI SDKs' base URL; the Anthropic SDK takes it without `/v1`). */
  readonly baseURL: string
  readonly host: string
  readonly seed: number
  readonly wire: MockWire
  readonly model: string
  /** Scenario faults served over the wire, by id. */
  readonly servedFaults: readonly string[]
  /** Scenario faults `sim serve` cannot deliver over a socket, with the reason. */
  readonly ignoredFaults: ReadonlyArray<{ id: string; kind: string; reason: string }>
  readonly provider: MockProvider
  /** Stops listening, drops open connections, and resolves with the capture. Idempotent. */
  close(): Promise<CapturedWireRequest[]>
}

/** True for 127.0.0.0/8, `::1`, `::ffff:127.x` and `localhost`. */
export function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase()
  if (h === 'localhost') return true
  if (isIP(h) === 4) return h.startsWith('127.')
  if (isIP(h) === 6) return h === '::1' || h.startsWith('::ffff:127.')
  return false
}

/** The plan without a scenario: `Mock reply <n>.` for conversation requests, the deterministic summary otherwise. */
class DefaultPlan implements ReplyPlan {
  private served = 0

  next(request: Parameters<ReplyPlan['next']>[0]): PlannedOutcome {
    if (request.purpose !== 'conversation') {
      return { kind: 'reply', reply: { blocks: [{ type: 'text', text: deterministicSummary(request) }] } }
    }
    this.served++
    return { kind: 'reply', reply: { blocks: [{ type: 'text', text: `Mock reply ${this.served}.` }] } }
  }
}

interface Served {
  plan: ReplyPlan
  /** The scenario's routes (issue #15); null without a scenario (`models` then lists the announced model). */
  routes: MockRoute[] | null
  models: MockModel[]
  model: string
  wire: MockWire
  seed: number
  servedFaults: string[]
  ignoredFaults: Array<{ id: string; kind: string; reason: string }>
}

const HOOK_REASON: Record<string, string> = {
  'hook': 'needs an in-process subject hook (stream middleware or summarizer routing)',
  'route-switch': 'is a route switch by the host between turns',
  'crash': 'is a crash of the host process (§13.4)',
  'concurrent': 'is a race the subject runs in-process (`concurrent:`, §13.6/§13.7); a socket carries no summary-call points',
  'unsupported': 'needs a subject feature',
}

async function scenarioPlan(file: string, options: ServeOptions): Promise<Served> {
  const scenario: ResolvedScenario = resolveScenario(await loadScenario(file), { file })
  checkFaultsSimulable(scenario)
  const seed = options.seed ?? scenario.seed
  const transcript: Transcript = await scenarioTranscript(scenario, seed)
  const specs: TargetedFaultSpec[] = []
  const servedFaults: string[] = []
  const ignoredFaults: Served['ignoredFaults'] = []
  for (const fault of scenario.faults) {
    const r = realise(fault)
    if (r.kind === 'request' && needsSessionContext(fault)) {
      const reason = `${fault.kind} selects by turn, step or virtual time, which a socket does not carry (run it with sim run)`
      ignoredFaults.push({ id: fault.id, kind: fault.kind, reason })
    } else if (r.kind === 'request') {
      specs.push(requestFaultSpec(fault, r.params))
      servedFaults.push(fault.id)
    } else if (r.kind !== 'setup' && r.kind !== 'no-capacity') {
      ignoredFaults.push({ id: fault.id, kind: fault.kind, reason: `${fault.kind} ${HOOK_REASON[r.kind] ?? r.kind}` })
    }
  }
  const wire = options.wire ?? scenario.provider.wire
  const summaries = new SummaryService(scenario.provider.summarizer)
  const faulted = new FaultInjectingPlan(new TranscriptReplyPlan(transcript, { summaries }), specs)
  return {
    plan: countingFaultedSummaries(faulted, summaries),
    routes: worldMockRoutes(scenario).map((r) => ({ ...r, wire })),
    models: [],
    model: scenario.provider.model,
    wire,
    seed,
    servedFaults,
    ignoredFaults,
  }
}

/** Starts the server (module doc). Throws `ServeConfigError` (bad host or seed), `ScenarioError` (bad scenario), or the listen error. */
export async function serve(options: ServeOptions = {}): Promise<Serving> {
  const host = options.host ?? '127.0.0.1'
  if (!isLoopbackHost(host) && options.allowNonLoopback !== true) {
    throw new ServeConfigError(`refusing to bind ${host}: not a loopback address (pass --host ${host} explicitly to expose the mock)`)
  }
  if (options.seed !== undefined && (!Number.isSafeInteger(options.seed) || options.seed < 0 || options.seed > 0xffffffff)) {
    throw new ServeConfigError(`seed must be an unsigned 32-bit integer, got ${options.seed}`)
  }
  if (options.routes !== undefined && (options.scenario !== undefined || options.routes.length === 0)) {
    throw new ServeConfigError('routes: give a non-empty route list, and no scenario with it')
  }
  const served: Served = options.scenario === undefined
    ? {
      plan: new DefaultPlan(), routes: options.routes === undefined ? null : [...options.routes],
      models: [{ id: SERVE_DEFAULT_MODEL, contextWindow: SERVE_DEFAULT_CONTEXT_WINDOW }],
      model: options.routes?.[0]?.model ?? SERVE_DEFAULT_MODEL,
      wire: options.wire ?? options.routes?.[0]?.wire ?? 'openai',
      seed: options.seed ?? 0,
      servedFaults: [], ignoredFaults: [],
    }
    : await scenarioPlan(options.scenario, options)
  let handled = 0
  const provider = new MockProvider({
    wire: served.wire,
    plan: served.plan,
    clock: { now: () => CLOCK_ORIGIN_MS + SERVE_REQUEST_STEP_MS * handled },
    ...(served.routes === null ? { models: served.models } : { routes: served.routes }),
    // Without a scenario the announced model is listed, and any other model name is still served.
    acceptUnknownModels: options.scenario === undefined && options.routes === undefined,
  })
  const onRequest = options.onRequest
  let received = 0
  const handler = {
    handle: async (request: Request): Promise<Response> => {
      // Concurrent requests interleave inside the provider: a private tag header links this request to its capture.
      const tag = String(received++)
      const headers = new Headers(request.headers)
      headers.set(TAG_HEADER, tag)
      const init: RequestInit = { method: request.method, headers, signal: request.signal }
      if (request.method !== 'GET' && request.method !== 'HEAD') init.body = await request.arrayBuffer()
      const response = await provider.handle(new Request(request.url, init))
      handled++
      const capture = provider.captured.find((c) => c.headers[TAG_HEADER] === tag)
      if (capture !== undefined) delete capture.headers[TAG_HEADER]
      if (onRequest !== undefined) onRequest(requestLine(request, response, capture))
      return response
    },
  }
  const http = await serveHttp(handler, { host, port: options.port ?? 0 })
  let closed: Promise<CapturedWireRequest[]> | undefined
  return {
    baseURL: http.baseURL,
    host,
    seed: served.seed,
    wire: served.wire,
    model: served.model,
    servedFaults: served.servedFaults,
    ignoredFaults: served.ignoredFaults,
    provider,
    close: () => {
      closed ??= http.close().then(() => [...provider.captured])
      return closed
    },
  }
}

/** The header `serve()` adds to link a request to its capture; removed from the capture right after. */
const TAG_HEADER = 'x-compaction-sim-serve-tag'

function requestLine(request: Request, response: Response, c: CapturedWireRequest | undefined): ServeRequestLine {
  const line: ServeRequestLine = {
    type: 'request',
    index: null,
    method: request.method,
    path: new URL(request.url).pathname,
    status: response.type === 'error' ? null : response.status,
  }
  if (c === undefined) return line
  line.index = c.index
  line.purpose = c.purpose
  line.model = c.model
  line.outcome = c.outcome
  if (c.expectedFailureCode !== undefined) line.expectedFailureCode = c.expectedFailureCode
  return line
}

/** The capture as JSONL (one `CapturedWireRequest` per line; headers already redacted). */
export function captureJsonl(captured: readonly CapturedWireRequest[]): string {
  return captured.map((c) => `${JSON.stringify(c)}\n`).join('')
}
