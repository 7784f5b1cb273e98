/**
 * Meter-vs-provider drift (issue #15): the subject's §2.5 meter at dispatch next to the prompt as the
 * provider's tokenizer counted it, per request of the run capture, and the per-scenario summary.
 *
 * Joining the two captures: the subject records its requests (§1.1, `onRequest` at dispatch and again at
 * finish); the mock records the chat requests that reached it, each with `providerPromptTokens`. A subject
 * request owns the mock capture made between its dispatch and its finish when exactly one was made (the
 * subject's calls are sequential). Otherwise — the request never reached the mock (a middleware failure,
 * a refused model), or several did — the request carries no provider count: nothing is guessed. A subject
 * that never calls `onRequest` is joined in order instead, only when its requests and the mock's captures
 * agree one for one in count, purpose and model. Requests of a crashed child are joined in the child (its
 * mock died with it) and reach the run through the child's capture file.
 *
 * Drift of one request: `(provider − meter) / meter`, in percent, signed (positive = the provider counts
 * more than the meter said: the subject is closer to the window than it believes). Only conversation
 * requests count: a compaction request's prompt is the summary call, not the conversation the meter
 * measures. Pure and deterministic; figures are rounded to 0.01 %.
 */
import type { CapturedRequest } from '@compaction-sim/core'
import type { MockProvider } from '../provider/mock-provider.ts'
import type { ScenarioDrift, ScenarioTimeline } from '../report/types.ts'

/** `onRequest` of a subject session that joins the mock's counts into the subject's captures (module doc). */
export interface ProviderCountJoin {
  /** Pass as the session's `onRequest`; forwards each (annotated) update to `inner`. */
  readonly onRequest: (request: CapturedRequest, logLength: number) => void
  /** `requests` of the session, each with `providerPromptTokens` when its mock capture was found (copies). */
  annotate(requests: readonly CapturedRequest[]): CapturedRequest[]
}

/** A join for one session against `provider` (module doc). `inner` gets every update, with the count once known. */
export function joinProviderCounts(
  provider: Pick<MockProvider, 'captured'>, inner?: (request: CapturedRequest, logLength: number) => void,
): ProviderCountJoin {
  const dispatchedAt = new Map<number, number>()
  const counts = new Map<number, number>()
  let called = false
  return {
    onRequest: (request, logLength) => {
      called = true
      const from = dispatchedAt.get(request.index)
      if (from === undefined) {
        dispatchedAt.set(request.index, provider.captured.length)
        inner?.(request, logLength)
        return
      }
      const made = provider.captured.slice(from)
      const count = made.length === 1 ? made[0]?.providerPromptTokens : undefined
      if (count === undefined) {
        inner?.(request, logLength)
        return
      }
      counts.set(request.index, count)
      inner?.({ ...request, providerPromptTokens: count }, logLength)
    },
    annotate: (requests) => {
      if (!called) return inOrder(requests, provider.captured)
      return requests.map((r) => {
        const count = counts.get(r.index)
        return count === undefined ? { ...r } : { ...r, providerPromptTokens: count }
      })
    },
  }
}

/** The in-order join of a subject that never reported its requests as they went (module doc). */
function inOrder(requests: readonly CapturedRequest[], captured: MockProvider['captured']): CapturedRequest[] {
  const agree = requests.length === captured.length
    && requests.every((r, i) => captured[i]?.purpose === r.purpose && captured[i]?.model === r.model)
  return requests.map((r, i) => {
    const count = agree ? captured[i]?.providerPromptTokens : undefined
    return count === undefined ? { ...r } : { ...r, providerPromptTokens: count }
  })
}

/**
 * `requests` with `meterTokensAtDispatch` filled from the timeline's meter replay (the §2.5 reading of the
 * log prefix at dispatch) where the subject did not record it; the second value says whether any was filled.
 */
export function withReplayedMeter(requests: readonly CapturedRequest[], timeline: ScenarioTimeline | undefined): [CapturedRequest[], boolean] {
  if (timeline === undefined) return [[...requests], false]
  const replayed = new Map(timeline.points.map((p) => [p.request, p.tokens]))
  let filled = false
  const out = requests.map((r) => {
    const tokens = replayed.get(r.index)
    if (r.meterTokensAtDispatch !== undefined || tokens === undefined) return r
    filled = true
    return { ...r, meterTokensAtDispatch: tokens }
  })
  return [out, filled]
}

/** Signed drift of one request in percent, or null when it has no pair of figures or a zero meter reading. */
export function requestDriftPct(request: CapturedRequest): number | null {
  const meter = request.meterTokensAtDispatch
  const provider = request.providerPromptTokens
  if (meter === undefined || provider === undefined || meter <= 0) return null
  return ((provider - meter) / meter) * 100
}

/** The scenario's drift over its conversation requests with both figures; undefined when there is none. */
export function driftOf(requests: readonly CapturedRequest[]): ScenarioDrift | undefined {
  let n = 0
  let sum = 0
  let max: { pct: number; index: number } | null = null
  let min = Number.POSITIVE_INFINITY
  for (const r of requests) {
    if (r.purpose !== 'conversation') continue
    const pct = requestDriftPct(r)
    if (pct === null) continue
    n++
    sum += pct
    if (max === null || pct > max.pct) max = { pct, index: r.index }
    if (pct < min) min = pct
  }
  if (max === null) return undefined
  return { requests: n, meanPct: round2(sum / n), maxPct: round2(max.pct), maxRequest: max.index, minPct: round2(min) }
}

/** The timeline with each point's `providerTokens` (the provider's count of that request), where known. */
export function withProviderLine(timeline: ScenarioTimeline, requests: readonly CapturedRequest[]): ScenarioTimeline {
  const counts = new Map(requests.flatMap((r) => (r.providerPromptTokens === undefined ? [] : [[r.index, r.providerPromptTokens] as const])))
  return {
    ...timeline,
    points: timeline.points.map((p) => {
      const provider = counts.get(p.request)
      return provider === undefined ? p : { ...p, providerTokens: provider }
    }),
  }
}

function round2(value: number): number {
  const r = Math.round(value * 100) / 100
  return r === 0 ? 0 : r
}
