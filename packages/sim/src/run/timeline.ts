/**
 * `timelineOf`: a scenario's pressure timeline for the HTML report, a pure function of the final session
 * log, the request capture and the scenario's policy. One point per captured request: the reference
 * `TokenMeter` (§2.5) on the log prefix the request was dispatched at (`logRevisionAtDispatch`), with the
 * §3.3 threshold of the route in force then; markers for compaction brackets (§5), prunes (§6) and image
 * offloads (§6.5). The log is folded once, incrementally (O(events + requests)).
 */
import {
  EventLog, TargetPressureConfigError, TokenMeter, resolveCompactSpec, resolveTargetPolicy, routedTarget,
  type CapturedRequest, type CompactionPolicySpec, type LogEvent,
} from '@compaction-sim/core'
import type { ScenarioTimeline, TimelineMarker, TimelinePoint } from '../report/types.ts'

/** What `timelineOf` needs of the scenario: its resolved policy and the provider's declared window. */
export interface TimelineScenario {
  readonly policy: CompactionPolicySpec
  /** The provider's configured window, used when the log records no `request/context` (as `pressureOf` does). */
  readonly contextWindow: number | null
}

/**
 * The timeline of `events` (a seed-dialect log that the meter can replay) and its `requests` (in dispatch
 * order). A request whose dispatch revision lies beyond the log (a crashed child's tail) is measured on the
 * whole log. Throws what `TokenMeter.measure` throws (`MeterReplayError`) for a log it cannot replay.
 */
export function timelineOf(
  events: readonly LogEvent[], requests: readonly CapturedRequest[], scenario: TimelineScenario,
): ScenarioTimeline {
  const log = new EventLog({ dialect: 'seed' })
  const meter = new TokenMeter(log, { dialect: 'seed' })
  const order = requests.map((r, position) => ({ r, position, at: Math.min(r.logRevisionAtDispatch, events.length) }))
  order.sort((a, b) => a.at - b.at || a.position - b.position)
  const points = Array.from<TimelinePoint | undefined>({ length: requests.length })
  for (const { r, position, at } of order) {
    while (log.length < at) log.accept(events[log.length] as LogEvent)
    points[position] = pointOf(r, log, meter, scenario)
  }
  return { events: events.length, points: points.filter((p) => p !== undefined), markers: markersOf(events) }
}

function pointOf(request: CapturedRequest, log: EventLog, meter: TokenMeter, scenario: TimelineScenario): TimelinePoint {
  const tokens = meter.measure().totalTokens
  const context = log.state.routeContext?.data
  const contextWindow = context?.contextWindow ?? (context === undefined ? scenario.contextWindow : null)
  return {
    request: request.index,
    purpose: request.purpose,
    seq: log.length,
    tokens,
    ratio: contextWindow === null ? null : tokens / contextWindow,
    thresholdTokens: contextWindow === null ? null : thresholdOf(log, scenario.policy, contextWindow),
  }
}

/** §3.3: the routed target's threshold at `contextWindow`; null without a routed target or for a config the route rejects. */
function thresholdOf(log: EventLog, policy: CompactionPolicySpec, contextWindow: number): number | null {
  const target = routedTarget(log)
  if (target === null) return null
  try {
    return resolveCompactSpec(resolveTargetPolicy(policy, target), contextWindow).thresholdTokens
  } catch (err) {
    if (err instanceof TargetPressureConfigError) return null // the engine reports this itself (§3.9); no line to draw
    throw err
  }
}

function markersOf(events: readonly LogEvent[]): TimelineMarker[] {
  const markers: TimelineMarker[] = []
  for (const e of events) {
    switch (e.type) {
      case 'compaction/start': markers.push({ kind: 'compaction-start', seq: e.seq, compactionId: idOf(e.data.compactionId) }); break
      case 'compaction/end': {
        const end: TimelineMarker = { kind: 'compaction-end', seq: e.seq, compactionId: idOf(e.data.compactionId) }
        if (e.data.error !== undefined) end.failed = true
        markers.push(end)
        break
      }
      case 'compaction/prune': markers.push({ kind: 'prune', seq: e.seq }); break
      case 'image/offload': markers.push({ kind: 'offload', seq: e.seq }); break
      default: break
    }
  }
  return markers
}

/** A compactionId as text (validated logs hold strings; anything else is shown as its JSON). */
function idOf(id: unknown): string {
  return typeof id === 'string' ? id : JSON.stringify(id)
}
