/**
 * `inspectLog`: read one session log and report its folded state at the end (surface, generation,
 * header in force, open turn/step, open brackets, last end-seed). The programmatic side of `sim inspect`.
 */
import {
  LogError, loadSessionLog, MeterReplayError, resolveCompactionConfig, resolveCompactSpec, resolveTargetPolicy, routedTarget, summarizeSession,
  TokenMeter, type Dialect, type EventLog, type SessionSummary,
} from '@compaction-sim/core'

/** Options of `inspectLog`. The dialect is explicit: there is no silent guessing (design.md §4.2). */
export interface InspectOptions {
  dialect: Dialect
  /** Foreign log-only types to accept besides the dialect's own (protocol §14.1, `--known-type`). */
  knownTypes?: readonly string[]
}

/** A torn final line that the reader dropped (protocol §1.1); `line` is 1-based in the file. */
export interface TornTail {
  line: number
  text: string
  reason: string
}

/** The token meter's reading at the end of the log (protocol §2.5); `baseline` is the baseline kind. */
export interface MeterFigures {
  totalTokens: number
  surfaceTokens: number
  baseline: 'usage' | 'estimated' | 'none'
  baselineTokens: number
  surfaceDeltaTokens: number
}

/**
 * The resolved budgets of the routed target (§3.3) when its window is known from the latest
 * `request/context` of that route. Policy: the §3.1 defaults (`policySource: 'defaults'`).
 */
export interface BudgetFigures {
  provider: string
  model: string
  contextWindow: number
  thresholdTokens: number
  retainTokens: number
  policySource: 'defaults'
}

/** The folded state of a log plus where it came from, whether its final line was torn, the meter and budgets. */
export type InspectResult = { file: string } & SessionSummary & {
  /** Null when the log cannot be metered (§2.5 replay errors); `meterError` then says why. */
  meter: MeterFigures | null
  meterError?: string
  budgets: BudgetFigures | null
  tornTail: TornTail | null
}

/**
 * Reads `path` as a session log of `options.dialect` and summarises its end state.
 * A torn final line is not an error: it is dropped and returned as `tornTail`.
 * @throws LogError for an unreadable file (code `IO`, naming the file) or an invalid line
 *   (message `file:line: reason`).
 */
export async function inspectLog(path: string, options: InspectOptions): Promise<InspectResult> {
  const loadOptions: { dialect: Dialect; knownTypes?: ReadonlySet<string> } = { dialect: options.dialect }
  if (options.knownTypes !== undefined && options.knownTypes.length > 0) loadOptions.knownTypes = new Set(options.knownTypes)
  let loaded: Awaited<ReturnType<typeof loadSessionLog>>
  try {
    loaded = await loadSessionLog(path, loadOptions)
  } catch (err) {
    if (isErrnoError(err)) throw new LogError('IO', describeErrno(err), { file: path }, { cause: err })
    throw err
  }
  const tornTail = loaded.tornTail === undefined ? null
    : { line: loaded.tornTail.line, text: loaded.tornTail.text, reason: loaded.tornTail.reason }
  const result: InspectResult = { file: path, ...summarizeSession(loaded.log), meter: null, budgets: budgetFigures(loaded.log), tornTail }
  try {
    result.meter = meterFigures(loaded.log)
  } catch (err) {
    if (!(err instanceof MeterReplayError)) throw err
    result.meterError = err.message
  }
  return result
}

/** Meters the whole log with the reference meter of its dialect (§2; rc.8 adjustments of §14.1). */
function meterFigures(log: EventLog): MeterFigures {
  const m = new TokenMeter(log, { dialect: log.dialect }).measure()
  return { totalTokens: m.totalTokens, surfaceTokens: m.surfaceTokens, baseline: m.baseline.kind, baselineTokens: m.baseline.tokens, surfaceDeltaTokens: m.surfaceDeltaTokens }
}

/** Threshold and retained budget of the routed target under the default policy, when the log records its window. */
function budgetFigures(log: EventLog): BudgetFigures | null {
  const route = routedTarget(log)
  const ctx = log.state.routeContext?.data
  if (route === null || ctx === undefined || ctx.provider !== route.provider || ctx.model !== route.model || ctx.contextWindow === undefined) return null
  const spec = resolveCompactSpec(resolveTargetPolicy(resolveCompactionConfig({}), route), ctx.contextWindow)
  return { provider: route.provider, model: route.model, contextWindow: ctx.contextWindow, thresholdTokens: spec.thresholdTokens, retainTokens: spec.retainTokens, policySource: 'defaults' }
}

function isErrnoError(err: unknown): err is NodeJS.ErrnoException {
  return err instanceof Error && typeof (err as NodeJS.ErrnoException).code === 'string'
    && typeof (err as NodeJS.ErrnoException).syscall === 'string'
}

function describeErrno(err: NodeJS.ErrnoException): string {
  switch (err.code) {
    case 'ENOENT': return 'no such file'
    case 'EISDIR': return 'is a directory, not a log file'
    case 'EACCES': case 'EPERM': return 'permission denied'
    default: return `cannot read: ${err.message}`
  }
}
