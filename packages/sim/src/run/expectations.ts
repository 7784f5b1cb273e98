/**
 * Evaluates a scenario's `expect` block (design §2) against the finished session: invariants (every §12
 * id, or a list), turn outcomes, counts (`CountBound`s), final pressure bounds, an ordered event pattern
 * (a subsequence; `data` matches partially and deeply, strings by `{ contains }` / `{ matches }` too; a pattern's
 * `text` tests the event's text content; `absent` patterns must match no event), the final surface size, and the
 * issue #15 matchers (`expectation-matchers.ts`). Pure: it reads the final log and the computed figures, never the files.
 */
import {
  jsonEqual, type CapturedRequest, type Dialect, type JsonValue, type LogEvent, type SessionEvent,
} from '@compaction-sim/core'
import type { CapturedWireRequest } from '../provider/types.ts'
import { describeMatcher, isDataMatcher, testDataMatcher, testString, textOf } from '../scenario/string-matcher.ts'
import { evaluateMatcherExpectations } from './expectation-matchers.ts'
import type { Violation } from '../checker/types.ts'
import type { ExpectationResult, FinalPressure, ReportedOutcome, ScenarioCounts } from '../report/types.ts'
import type { CountRange, ResolvedEventPattern, ResolvedExpect, ResolvedScenario } from '../scenario/resolve.ts'
import { COUNT_NAMES } from '../scenario/types.ts'
import { plural } from '../plural.ts'

/** Counts of a finished log (`requests` and `crashes` come from the run). */
export function countsOf(events: readonly LogEvent[], requests: number, crashes: number): ScenarioCounts {
  const count = (p: (e: SessionEvent) => boolean): number => events.reduce((n, e) => n + (p(e as SessionEvent) ? 1 : 0), 0)
  return {
    events: events.length,
    turns: count((e) => e.type === 'turn/start'),
    requests,
    brackets: count((e) => e.type === 'compaction/start'),
    failedBrackets: count((e) => e.type === 'compaction/end' && e.data.error !== undefined),
    prunes: count((e) => e.type === 'compaction/prune'),
    offloads: count((e) => e.type === 'image/offload'),
    retries: count((e) => e.type === 'llm/retry'),
    summaryErrors: count((e) => e.type === 'compaction/summary-error'),
    // A checkpoint is a compact-sourced replacement (§1.4.4); another writer's replacement (FAULT-73/74) is not one.
    checkpoints: count((e) => e.type === 'user/message' && e.surfaceOp !== undefined && e.surfaceOp !== 'append'
      && (e.data.source as { plugin?: string }).plugin === 'compact'),
    crashes,
  }
}

/** How every turn of the log ended (`turn/end` reasons, repair closers included). */
export function outcomesOf(events: readonly LogEvent[]): ReportedOutcome[] {
  return events.flatMap((raw) => {
    const e = raw as SessionEvent
    if (e.type !== 'turn/end') return []
    const reason = e.data.reason
    const turn = e.data.turn
    return [reason.kind === 'error' ? { turn, kind: reason.kind, code: reason.error.code } : { turn, kind: reason.kind }]
  })
}

/** Everything `evaluateExpectations` judges. */
export interface ExpectationInputs {
  expect: ResolvedExpect
  events: readonly LogEvent[]
  violations: readonly Violation[]
  outcomes: readonly ReportedOutcome[]
  counts: ScenarioCounts
  finalPressure: FinalPressure
  finalSurfaceNodes: number
  /** The dialect of the log (for the §12.0 windows of `perPreStep`). */
  dialect: Dialect
  /** The subject's warnings (`expect.warnings`). */
  warnings: readonly string[]
  /** What the mock provider captured (`expect.rejections`, `expect.requests`). */
  wire: readonly CapturedWireRequest[]
  /** The subject's request capture (§1.1; `perPreStep.summaryCalls`). */
  requests: readonly CapturedRequest[]
  /** Items the subject's log dialect cannot hold (`Subject.expectationGaps`): not judged, reported as such. */
  gaps?: ExpectationGaps
}

/**
 * What a subject's log dialect cannot hold (§14): per event pattern or count of `expect`, the rule that says why
 * (e.g. `§14 D-07: 0.1.0-rc.8 never writes compaction/summary-error`), or null when the item can be judged.
 */
export interface ExpectationGaps {
  event(pattern: ResolvedEventPattern): string | null
  count(name: (typeof COUNT_NAMES)[number]): string | null
}

/** One result per expectation item, in the order of the `expect` block. */
export function evaluateExpectations(inputs: ExpectationInputs): ExpectationResult[] {
  const { expect } = inputs
  const results: ExpectationResult[] = [invariantsExpectation(expect, inputs.violations)]
  expect.outcome?.forEach((want, i) => {
    const got = inputs.outcomes[i]
    const wanted = want.code === null ? want.kind : `${want.kind} (${want.code})`
    const actual = got === undefined ? 'no such turn' : got.code === undefined ? got.kind : `${got.kind} (${got.code})`
    const passed = got !== undefined && got.kind === want.kind && (want.code === null || got.code === want.code)
    results.push({ name: `outcome[${i}]`, passed, expected: wanted, actual })
  })
  for (const name of COUNT_NAMES) {
    const range = expect.counts[name]
    if (range === null) continue
    const actual = inputs.counts[name]
    const gap = inputs.gaps?.count(name) ?? null
    if (gap !== null) {
      results.push({ name: `counts.${name}`, passed: true, expected: rangeText(range), actual: `not evaluated (${gap})`, notEvaluated: 'dialect' })
      continue
    }
    results.push({ name: `counts.${name}`, passed: inRange(actual, range), expected: rangeText(range), actual: String(actual) })
  }
  const fp = expect.finalPressure
  if (fp !== null) {
    const { ratio, tokens } = inputs.finalPressure
    const ratioText = ratio === null ? 'no ratio (no context window)' : ratio.toFixed(4)
    const bound = (name: string, passed: boolean, expected: string, actual: string): void => {
      results.push({ name: `finalPressure.${name}`, passed, expected, actual })
    }
    if (fp.ratioMin !== null) bound('ratioMin', ratio !== null && ratio >= fp.ratioMin, `≥ ${fp.ratioMin}`, ratioText)
    if (fp.ratioMax !== null) bound('ratioMax', ratio !== null && ratio <= fp.ratioMax, `≤ ${fp.ratioMax}`, ratioText)
    if (fp.tokensMin !== null) bound('tokensMin', tokens >= fp.tokensMin, `≥ ${fp.tokensMin}`, String(tokens))
    if (fp.tokensMax !== null) bound('tokensMax', tokens <= fp.tokensMax, `≤ ${fp.tokensMax}`, String(tokens))
  }
  results.push(...matchEvents(expect.events, inputs.events, inputs.gaps))
  if (expect.finalSurfaceNodes !== null) {
    const n = inputs.finalSurfaceNodes
    const range = expect.finalSurfaceNodes
    results.push({ name: 'finalSurfaceNodes', passed: inRange(n, range), expected: rangeText(range), actual: String(n) })
  }
  const { events, dialect, warnings, wire, requests } = inputs
  results.push(...evaluateMatcherExpectations({ expect, events, dialect, warnings, wire, requests }))
  return results
}

/** The `invariants` expectation: no violation of the invariants the scenario selects (all by default). */
export function invariantsExpectation(expect: ExpectationInputs['expect'], violations: ExpectationInputs['violations']): ExpectationResult {
  const chosen: readonly string[] | 'all' = expect.invariants
  // The world-truth checks (WORLD-…, issue #21) always count: a scenario selects among the §12 invariants only.
  const selected = chosen === 'all' ? violations : violations.filter((v) => chosen.includes(v.id) || v.id.startsWith('WORLD-'))
  const ids = [...new Set(selected.map((v) => v.id))].sort()
  return {
    name: 'invariants',
    passed: selected.length === 0,
    expected: expect.invariants === 'all' ? 'no violation of any invariant' : `no violation of ${expect.invariants.join(', ')} or a world-truth check`,
    actual: selected.length === 0 ? 'none' : `${plural(selected.length, 'violation')}: ${ids.join(', ')}`,
  }
}

/** True when `n` lies in the inclusive range. */
export function inRange(n: number, range: CountRange): boolean {
  return n >= range.min && (range.max === null || n <= range.max)
}

/** A range as reports show it: `3`, `≥ 1`, `0…2`. */
export function rangeText(range: CountRange): string {
  if (range.max === range.min) return String(range.min)
  return range.max === null ? `≥ ${range.min}` : `${range.min}…${range.max}`
}

/**
 * The event patterns as an ordered subsequence: each pattern matches the first event at or after the
 * previous match. One result per pattern; after the first miss the rest are reported as not reached. An
 * `absent` pattern stands outside the subsequence: it passes when no event of the whole log matches it.
 */
export function matchEvents(
  patterns: readonly ResolvedEventPattern[], events: readonly LogEvent[], gaps?: ExpectationGaps,
): ExpectationResult[] {
  const results: ExpectationResult[] = []
  let from = 0
  let missed = false
  patterns.forEach((pattern, i) => {
    const described = pattern.data === null ? pattern.type : `${pattern.type} ${JSON.stringify(pattern.data)}`
    const withText = pattern.text === null ? described : `${described} with text ${describeMatcher(pattern.text)}`
    const expected = pattern.absent ? `no ${withText}` : withText
    // A pattern the subject's dialect cannot hold is not judged, and does not move the ordered match (§14).
    const gap = gaps?.event(pattern) ?? null
    if (gap !== null) {
      results.push({ name: `events[${i}]`, passed: true, expected, actual: `not evaluated (${gap})`, notEvaluated: 'dialect' })
      return
    }
    const { data, text } = pattern
    const matches = (e: LogEvent): boolean => e.type === pattern.type && (data === null || partialMatch(data, e.data as JsonValue))
      && (text === null || testString(text, textOf(e.data)))
    if (pattern.absent) {
      const seqs = events.filter(matches).map((e) => e.seq)
      const shown = seqs.slice(0, 10).join(', ') + (seqs.length > 10 ? ` …and ${seqs.length - 10} more` : '')
      const actual = seqs.length === 0 ? 'none in the log' : `${seqs.length === 1 ? 'seq' : 'seqs'} ${shown} ${seqs.length === 1 ? 'matches' : 'match'}`
      results.push({ name: `events[${i}]`, passed: seqs.length === 0, expected, actual })
      return
    }
    if (missed) {
      results.push({ name: `events[${i}]`, passed: false, expected, actual: 'not reached (an earlier pattern did not match)' })
      return
    }
    const index = events.findIndex((e, k) => k >= from && matches(e))
    if (index < 0) {
      missed = true
      const after = from === 0 ? 'in the log' : `after seq ${from - 1}`
      results.push({ name: `events[${i}]`, passed: false, expected, actual: `no matching event ${after}` })
      return
    }
    results.push({ name: `events[${i}]`, passed: true, expected, actual: `seq ${events[index]?.seq ?? index}` })
    from = index + 1
  })
  return results
}

/**
 * True when every key of `pattern` matches `value` (objects partially and recursively; arrays element-wise, same
 * length). A `{ contains }` / `{ matches }` object (`isDataMatcher`) matches a string that passes it, nothing else.
 */
export function partialMatch(pattern: JsonValue, value: JsonValue | undefined): boolean {
  if (value === undefined) return false
  if (isDataMatcher(pattern)) return typeof value === 'string' && testDataMatcher(pattern, value)
  if (Array.isArray(pattern)) {
    return Array.isArray(value) && value.length === pattern.length && pattern.every((p, i) => partialMatch(p, value[i]))
  }
  if (pattern !== null && typeof pattern === 'object') {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return false
    return Object.entries(pattern).every(([k, p]) => partialMatch(p, (value as Record<string, JsonValue>)[k]))
  }
  return jsonEqual(pattern, value)
}

/** What a seed-specific expectation says under a seed other than its scenario's own (issue #21). */
export const SEED_SPECIFIC_ACTUAL = 'not evaluated (seed-specific)'

/** Results judged under every seed, whatever `expect.seedSpecific` says: the checker's verdict and §13.4 durability. */
const SEED_FREE_RESULTS: ReadonlySet<string> = new Set(['invariants', 'durable'])

/**
 * `results` as a run under `seed` reports them: unchanged when the scenario's expectations hold for every seed
 * (no `expect.seedSpecific`) or `seed` is the scenario's own; otherwise every result but the invariants and
 * durability (fault targeting included: whether a fault fires depends on the transcript) is replaced by a
 * `notEvaluated: seed-specific` entry that passes, keeping its name and what it expected.
 */
export function pinnedToSeed(
  results: readonly ExpectationResult[], scenario: Pick<ResolvedScenario, 'seed' | 'expect'>, seed: number,
): ExpectationResult[] {
  if (!scenario.expect.seedSpecific || seed === scenario.seed) return [...results]
  return results.map((e) => (SEED_FREE_RESULTS.has(e.name)
    ? e
    : { name: e.name, passed: true, expected: e.expected, actual: SEED_SPECIFIC_ACTUAL, notEvaluated: 'seed-specific' }))
}
