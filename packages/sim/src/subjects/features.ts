/**
 * Which `SubjectFeature`s a scenario needs (the feature list is in `types.ts`), derived from what the
 * scenario exercises: its faults, its manual actions, what its `expect` block looks for and — once the
 * transcript is known — its steering messages and results given out of call order. A subject that lacks one
 * gets the scenario `skipped` with a reason naming the feature and what needed it. Pure.
 */
import { assertNever } from '@compaction-sim/core'
import type { Transcript } from '@compaction-sim/fixtures'
import type { FaultKind } from '../scenario/types.ts'
import type { ExpectationGaps } from '../run/expectations.ts'
import type { ResolvedScenario } from '../scenario/resolve.ts'
import { SUBJECT_FEATURES, type Subject, type SubjectFeature } from './types.ts'

/** One need: the feature and what in the scenario needs it (shown in skip reasons). */
export interface FeatureNeed {
  readonly feature: SubjectFeature
  readonly because: string
}

/** Faults that need a feature beyond plain turns, and which one. */
const FAULT_FEATURES: Partial<Record<FaultKind, SubjectFeature>> = {
  'FAULT-10': 'abort', 'FAULT-22': 'abort',
  'FAULT-12': 'imageOffload', 'FAULT-13': 'imageOffload', 'FAULT-14': 'imageOffload', 'FAULT-15': 'imageOffload',
  'FAULT-29': 'imageOffload', 'FAULT-30': 'imageOffload',
  'FAULT-17': 'middleware', 'FAULT-32': 'middleware',
  'FAULT-21': 'timeouts',
  'FAULT-31': 'unroutableSummarizer',
  'FAULT-44': 'routeSwitch',
  'FAULT-09': 'directApi',
  'FAULT-60': 'appendFaults', 'FAULT-61': 'appendFaults', 'FAULT-62': 'appendFaults', 'FAULT-63': 'appendFaults',
  'FAULT-64': 'flushFaults', 'FAULT-65': 'flushFaults',
}

/** Every feature `scenario` (replaying `transcript`, when given) needs, in `SUBJECT_FEATURES` order, each with its first reason. */
export function requiredFeatures(scenario: ResolvedScenario, transcript?: Transcript, gaps?: ExpectationGaps | null): FeatureNeed[] {
  const needs = new Map<SubjectFeature, string>()
  const need = (feature: SubjectFeature, because: string): void => {
    if (!needs.has(feature)) needs.set(feature, because)
  }
  if (scenario.provider.wire === 'anthropic') need('anthropicWire', 'provider.wire: anthropic')
  for (const fault of scenario.faults) {
    if (fault.target === 'crash') need('crash', `${fault.kind} is a crash fault (§13.4)`)
    const feature = FAULT_FEATURES[fault.kind]
    if (feature !== undefined) need(feature, `fault ${fault.kind}`)
    // The late answer comes only after the caller's own virtual timeout fired.
    if (fault.params.delivery === 'after-timeout') need('timeouts', `fault ${fault.id}: delivery after-timeout`)
  }
  for (const action of scenario.manual) {
    switch (action.kind) {
      case 'compactNow': need('manualCompaction', `manual compactNow after turn ${action.afterTurn} (§3.7)`); break
      case 'compactRegion': need('explicitRegion', `manual compactRegion in turn ${action.turn} (§3.8)`); break
      case 'prune': need('manualPrune', `manual prune after turn ${action.afterTurn} (FAULT-66)`); break
      default: assertNever(action, 'manual action')
    }
  }
  for (const item of scenario.concurrent) {
    need('concurrency', `concurrent[${item.index}] ${item.do} during ${item.during} (§13.6, §13.7)`)
  }
  const { counts, events } = scenario.expect
  if ((counts.offloads?.min ?? 0) > 0) need('imageOffload', 'expect.counts.offloads > 0')
  // An item the subject reports as a dialect gap (`Subject.expectationGaps`) is not judged, so it needs no feature.
  const counted = (gaps?.count('summaryErrors') ?? null) === null
  if (counted && (counts.summaryErrors?.min ?? 0) > 0) need('summaryError', 'expect.counts.summaryErrors > 0')
  events.forEach((pattern, i) => {
    if ((gaps?.event(pattern) ?? null) !== null) return
    if (pattern.type === 'image/offload') need('imageOffload', `expect.events[${i}] is image/offload`)
    if (pattern.type === 'compaction/summary-error') need('summaryError', `expect.events[${i}] is compaction/summary-error`)
    const data = pattern.data
    if (pattern.type === 'request/header' && data !== null && (data['reason'] === 'series' || 'startsSeries' in data)) {
      need('seriesHeaders', `expect.events[${i}] is a series request/header (§10.3)`)
    }
  })
  if (transcript !== undefined) transcriptNeeds(transcript, need)
  return SUBJECT_FEATURES.filter((f) => needs.has(f)).map((feature) => ({ feature, because: needs.get(feature) ?? '' }))
}

/** What the transcript itself needs: steering messages, and results given in another order than the calls. */
function transcriptNeeds(transcript: Transcript, need: (feature: SubjectFeature, because: string) => void): void {
  transcript.turns.forEach((turn, t) => turn.steps.forEach((step, s) => {
    if (step.steer !== undefined) need('steering', `turn ${t + 1} step ${s + 1} steers mid-turn`)
    const calls = step.reply.blocks.flatMap((b) => (b.type === 'tool-call' ? [String(b['id'])] : []))
    if (step.toolResults.some((r, i) => r.callId !== calls[i])) {
      need('resultOrder', `turn ${t + 1} step ${s + 1} gives its tool results out of call order`)
    }
  }))
}

/** The features `subject` declares (absent = all). */
export function declaredFeatures(subject: Subject): ReadonlySet<SubjectFeature> {
  return new Set(subject.features ?? SUBJECT_FEATURES)
}

/**
 * What the scenario's run shape needs beyond its resolved content (issue #16): several sessions (`sessions`) and clean
 * restarts (`restart`). The runner resolves those keys beside `resolveScenario` and passes their sizes here.
 */
export interface RunShape {
  /** Sessions of the scenario (0 or 1 = a one-session scenario). */
  readonly sessions: number
  /** Clean stop points (`restart:`). */
  readonly restarts: number
}

/** The needs of `shape`, in `SUBJECT_FEATURES` order. */
export function shapeNeeds(shape: RunShape): FeatureNeed[] {
  const needs: FeatureNeed[] = []
  if (shape.sessions > 1) needs.push({ feature: 'sessions', because: `${shape.sessions} sessions in one run (sessions:)` })
  if (shape.restarts > 0) needs.push({ feature: 'restart', because: `${shape.restarts === 1 ? 'a clean stop' : `${shape.restarts} clean stops`} and restore (restart:)` })
  return needs
}

/**
 * Why `subject` cannot run `scenario` (with `transcript`, when given) for lack of a feature, or null when it declares
 * every one needed; `shape` adds the needs of several sessions and clean restarts.
 */
export function missingFeatureReason(scenario: ResolvedScenario, subject: Subject, transcript?: Transcript, shape?: RunShape): string | null {
  const declared = declaredFeatures(subject)
  const all = [...requiredFeatures(scenario, transcript, subject.expectationGaps?.(scenario)), ...(shape === undefined ? [] : shapeNeeds(shape))]
  const missing = SUBJECT_FEATURES.flatMap((f) => all.filter((n) => n.feature === f).slice(0, 1)).filter((n) => !declared.has(n.feature))
  if (missing.length === 0) return null
  const list = missing.map((n) => `${n.feature} (${n.because})`).join(', ')
  return `subject ${subject.name} does not declare the ${missing.length === 1 ? 'feature' : 'features'} this scenario needs: ${list}`
}
