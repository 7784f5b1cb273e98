/**
 * Evaluates the provider-world expectations of issue #15 against a finished run: `perPreStep` (bounds per
 * §12.0 pre-step window, computed by the checker's fold), `summarized` (the regions successful brackets
 * summarized), `warnings`, `rejections` (the mock's rejected captures by `rejectionKind`) and `requests` (tests
 * over the requests the mock received). One `ExpectationResult` per item, named by its `expect` key and index;
 * a failure's `actual` names what was seen, with seqs or request indexes. Pure: reads the run's records only.
 */
import { assertNever, jsonEqual, type CapturedRequest, type Dialect, type JsonValue, type LogEvent, type SessionEvent } from '@compaction-sim/core'
import { windowsAfter } from '../checker/windows.ts'
import type { Window } from '../checker/model.ts'
import type { CapturedWireRequest, DecodedMessage, RejectionKind } from '../provider/types.ts'
import type { ExpectationResult } from '../report/types.ts'
import type {
  MatcherCountRange, ResolvedMatcherExpect, ResolvedNodePattern, ResolvedRequestPattern, ResolvedSummarizedRegion,
} from '../scenario/resolve-matchers.ts'
import { describeMatcher, testString, textOf } from '../scenario/string-matcher.ts'
import { PRE_STEP_COUNT_NAMES, REJECTION_COUNT_NAMES, type PreStepCountName, type RejectionCountName } from '../scenario/types.ts'
import { plural } from '../plural.ts'
import { inRange, partialMatch, rangeText } from './expectations.ts'

/** What the matcher expectations read besides the log. */
export interface MatcherInputs {
  expect: ResolvedMatcherExpect
  events: readonly LogEvent[]
  /** The dialect of the log (windows follow its vocabulary). */
  dialect: Dialect
  /** The subject's warnings, in order. */
  warnings: readonly string[]
  /** What the mock provider captured, in arrival order (the crashed child's mock is not among them). */
  wire: readonly CapturedWireRequest[]
  /** The subject's request capture (§1.1), for the dispatch revision of summary calls. */
  requests: readonly CapturedRequest[]
}

/** How many failing instances a result names before it says "…and n more". */
const SHOWN_MAX = 3

/** One result per matcher item, in the order `perPreStep`, `summarized`, `warnings`, `rejections`, `requests`. */
export function evaluateMatcherExpectations(inputs: MatcherInputs): ExpectationResult[] {
  const { expect } = inputs
  const results: ExpectationResult[] = []
  if (expect.perPreStep !== null) results.push(...perPreStepResults(expect.perPreStep, inputs))
  results.push(...summarizedResults(expect.summarized, inputs.events))
  expect.warnings.forEach((w, i) => {
    const hits = inputs.warnings.flatMap((text, k) => (testString(w.matcher, text) ? [k] : []))
    const expected = `${w.absent ? 'no warning' : 'a warning'} that ${describeMatcher(w.matcher)}`
    const shown = (k: number): string => `warning ${k + 1}: ${quote(inputs.warnings[k] ?? '')}`
    const actual = w.absent
      ? hits.length === 0 ? inputs.warnings.length === 0 ? 'no warnings' : `none of ${plural(inputs.warnings.length, 'warning')} matches` : listed(hits.map(shown))
      : hits.length > 0 ? shown(hits[0] ?? 0) : inputs.warnings.length === 0 ? 'no warnings' : `none of ${plural(inputs.warnings.length, 'warning')} matches: ${listed(inputs.warnings.map((_, k) => shown(k)))}`
    if (w.count !== null) {
      const counted = `${plural(hits.length, 'matching warning')}${hits.length === 0 ? '' : `: ${listed(hits.map(shown))}`}`
      results.push({
        name: `warnings[${i}]`, passed: inRange(hits.length, w.count),
        expected: `${rangeText(w.count)} warnings that ${describeMatcher(w.matcher)}`, actual: counted,
      })
      return
    }
    results.push({ name: `warnings[${i}]`, passed: w.absent ? hits.length === 0 : hits.length > 0, expected, actual })
  })
  if (expect.rejections !== null) results.push(...rejectionResults(expect.rejections, inputs.wire))
  expect.requests.forEach((pattern, i) => results.push(requestResult(pattern, i, inputs.wire)))
  return results
}

function quote(text: string): string {
  return JSON.stringify(text.length > 80 ? `${text.slice(0, 77)}…` : text)
}

/** The first `SHOWN_MAX` items joined, with the rest counted. */
function listed(items: readonly string[]): string {
  const more = items.length - SHOWN_MAX
  return items.slice(0, SHOWN_MAX).join('; ') + (more > 0 ? `; …and ${more} more` : '')
}

// ---------------------------------------------------------------------------------------------
// perPreStep

/** What one pre-step window held: the seqs of each counted thing (summary calls: the dispatch revisions). */
interface WindowTally {
  readonly window: Window
  readonly seqs: Record<PreStepCountName, number[]>
}

function perPreStepResults(bounds: Readonly<Record<PreStepCountName, MatcherCountRange | null>>, inputs: MatcherInputs): ExpectationResult[] {
  const after = windowsAfter(inputs.events, inputs.dialect)
  const tallies = new Map<Window, WindowTally>()
  for (const w of after) {
    if (w !== null && w.kind === 'pre-step' && !tallies.has(w)) {
      tallies.set(w, { window: w, seqs: { brackets: [], failedBrackets: [], prunes: [], summaryCalls: [], summaryErrors: [] } })
    }
  }
  inputs.events.forEach((raw, i) => {
    const w = i === 0 ? null : after[i - 1] ?? null
    const tally = w === null ? undefined : tallies.get(w)
    if (tally === undefined) return
    const e = raw as SessionEvent
    if (e.type === 'compaction/start') tally.seqs.brackets.push(e.seq)
    else if (e.type === 'compaction/end' && e.data.error !== undefined) tally.seqs.failedBrackets.push(e.seq)
    else if (e.type === 'compaction/prune') tally.seqs.prunes.push(e.seq)
    else if (e.type === 'compaction/summary-error') tally.seqs.summaryErrors.push(e.seq)
  })
  for (const r of inputs.requests) {
    if (r.purpose !== 'compaction' || r.logRevisionAtDispatch < 1) continue
    const w = after[r.logRevisionAtDispatch - 1] ?? null
    const tally = w === null ? undefined : tallies.get(w)
    // A summary call's "seq" is the last event written before it was dispatched.
    tally?.seqs.summaryCalls.push(r.logRevisionAtDispatch - 1)
  }
  const windows = [...tallies.values()]
  return PRE_STEP_COUNT_NAMES.flatMap((name): ExpectationResult[] => {
    const range = bounds[name]
    if (range === null) return []
    const bad = windows.filter((t) => !inRange(t.seqs[name].length, range))
    const max = windows.reduce((m, t) => Math.max(m, t.seqs[name].length), 0)
    const what = name === 'summaryCalls' ? 'dispatched after' : 'at'
    const describe = (t: WindowTally): string => {
      const seqs = t.seqs[name]
      const where = seqs.length === 0 ? '' : ` (${what} ${seqs.length === 1 ? 'seq' : 'seqs'} ${seqs.join(', ')})`
      return `the window opened at seq ${t.window.openSeq} (turn ${t.window.turn}) has ${seqs.length}${where}`
    }
    return [{
      name: `perPreStep.${name}`,
      passed: bad.length === 0 && windows.length > 0,
      expected: `${rangeText(range)} ${name} in each pre-step window`,
      actual: windows.length === 0
        ? 'the log has no pre-step window'
        : bad.length === 0 ? `at most ${max} in each of ${plural(windows.length, 'pre-step window')}` : listed(bad.map(describe)),
    }]
  })
}

// ---------------------------------------------------------------------------------------------
// summarized

/** A bracket that committed: its `compaction/summary` and its error-free `compaction/end`. */
interface SuccessfulBracket {
  readonly summary: SessionEvent<'compaction/summary'>
  readonly endSeq: number
}

/** The successful brackets of a log, in the order they closed. */
export function successfulBrackets(events: readonly LogEvent[]): SuccessfulBracket[] {
  const summaries = new Map<string, SessionEvent<'compaction/summary'>>()
  const out: SuccessfulBracket[] = []
  for (const raw of events) {
    const e = raw as SessionEvent
    if (e.type === 'compaction/summary') summaries.set(e.data.compactionId, e)
    if (e.type !== 'compaction/end') continue
    const summary = summaries.get(e.data.compactionId)
    summaries.delete(e.data.compactionId)
    if (e.data.error === undefined && summary !== undefined) out.push({ summary, endSeq: e.seq })
  }
  return out
}

function nodeMatches(p: ResolvedNodePattern, e: LogEvent | undefined): boolean {
  if (e === undefined) return false
  if (p.type !== null && e.type !== p.type) return false
  if (p.text !== null && !testString(p.text, textOf(e.data))) return false
  return p.data === null || partialMatch(p.data, e.data as JsonValue)
}

function nodeText(p: ResolvedNodePattern): string {
  const parts = [p.type ?? 'any event']
  if (p.text !== null) parts.push(`text ${describeMatcher(p.text)}`)
  if (p.data !== null) parts.push(JSON.stringify(p.data))
  return parts.join(' ')
}

function regionText(item: ResolvedSummarizedRegion): string {
  const parts: string[] = []
  if (item.shadowedSeqs !== null) parts.push(`shadowedSeqs [${item.shadowedSeqs.join(', ')}]`)
  if (item.nodes !== null) parts.push(`nodes ${rangeText(item.nodes)}`)
  if (item.first !== null) parts.push(`first: ${nodeText(item.first)}`)
  if (item.last !== null) parts.push(`last: ${nodeText(item.last)}`)
  return parts.join(', ')
}

/** Why `b`'s region fails `item`, or null when it passes. */
function regionMiss(item: ResolvedSummarizedRegion, b: SuccessfulBracket, bySeq: ReadonlyMap<number, LogEvent>): string | null {
  const seqs = b.summary.data.shadowedSeqs.map(Number)
  const first = bySeq.get(Number(b.summary.data.shadowedRange.start))
  const last = bySeq.get(Number(b.summary.data.shadowedRange.end))
  const node = (e: LogEvent | undefined): string => {
    if (e === undefined) return 'not in the log'
    const text = textOf(e.data)
    return `seq ${e.seq} ${e.type}${text === '' ? '' : ` ${quote(text)}`}`
  }
  const misses: string[] = []
  if (item.shadowedSeqs !== null && !jsonEqual(item.shadowedSeqs as JsonValue, seqs)) misses.push(`shadowedSeqs [${seqs.join(', ')}]`)
  if (item.nodes !== null && !inRange(seqs.length, item.nodes)) misses.push(plural(seqs.length, 'node'))
  if (item.first !== null && !nodeMatches(item.first, first)) misses.push(`first ${node(first)}`)
  if (item.last !== null && !nodeMatches(item.last, last)) misses.push(`last ${node(last)}`)
  return misses.length === 0 ? null : `the bracket summarized at seq ${b.summary.seq} has ${misses.join(', ')}`
}

function summarizedResults(items: readonly ResolvedSummarizedRegion[], events: readonly LogEvent[]): ExpectationResult[] {
  if (items.length === 0) return []
  const brackets = successfulBrackets(events)
  const bySeq = new Map(events.map((e) => [Number(e.seq), e]))
  return items.map((item, i): ExpectationResult => {
    const name = `summarized[${i}]`
    const which = item.bracket === 'any' ? 'some successful bracket' : `successful bracket ${item.bracket}`
    const expected = `${which} summarized ${regionText(item)}`
    if (item.bracket === 'any') {
      const hit = brackets.find((b) => regionMiss(item, b, bySeq) === null)
      if (hit !== undefined) return { name, passed: true, expected, actual: `the bracket summarized at seq ${hit.summary.seq}` }
      const actual = brackets.length === 0
        ? 'no bracket succeeded'
        : `none of ${plural(brackets.length, 'successful bracket')} matches: ${listed(brackets.map((b) => regionMiss(item, b, bySeq) ?? ''))}`
      return { name, passed: false, expected, actual }
    }
    const b = brackets[item.bracket - 1]
    if (b === undefined) return { name, passed: false, expected, actual: `only ${plural(brackets.length, 'successful bracket')}` }
    const miss = regionMiss(item, b, bySeq)
    return { name, passed: miss === null, expected, actual: miss ?? `the bracket summarized at seq ${b.summary.seq}` }
  })
}

// ---------------------------------------------------------------------------------------------
// rejections

/** The `expect.rejections` key a capture's `rejectionKind` counts under (`unclassified` when it has none). */
export function rejectionKey(kind: RejectionKind | undefined): RejectionCountName {
  switch (kind) {
    case undefined: return 'unclassified'
    case 'window': return 'window'
    case 'pairing': return 'pairing'
    case 'images': return 'images'
    case 'max-output': return 'maxOutput'
    case 'fault': return 'fault'
    default: return assertNever(kind, 'rejection kind')
  }
}

function rejectionResults(bounds: Readonly<Record<RejectionCountName, MatcherCountRange | null>>, wire: readonly CapturedWireRequest[]): ExpectationResult[] {
  const rejected = wire.filter((c) => c.outcome === 'reject')
  return REJECTION_COUNT_NAMES.flatMap((name): ExpectationResult[] => {
    const range = bounds[name]
    if (range === null) return []
    const hits = name === 'total' ? rejected : rejected.filter((c) => rejectionKey(c.rejectionKind) === name)
    const which = hits.map((c) => `#${c.index}${c.expectedFailureCode === undefined ? '' : ` ${c.expectedFailureCode}`}`)
    const others = rejected.filter((c) => !hits.includes(c)).map((c) => `#${c.index} ${rejectionKey(c.rejectionKind)}`)
    const actual = `${hits.length}${which.length === 0 ? '' : ` (requests ${listed(which)})`}`
      + (inRange(hits.length, range) || others.length === 0 ? '' : `; other rejections: ${listed(others)}`)
    return [{ name: `rejections.${name}`, passed: inRange(hits.length, range), expected: rangeText(range), actual }]
  })
}

// ---------------------------------------------------------------------------------------------
// requests

function messageAt(messages: readonly DecodedMessage[], position: number): DecodedMessage | undefined {
  return messages[position < 0 ? messages.length + position : position]
}

function requestText(p: ResolvedRequestPattern): string {
  const who = p.purpose === null ? 'request' : `${p.purpose} request`
  const subject = p.quantifier === 'every' ? `every ${who}` : p.quantifier === 'none' ? `no ${who}` : `a ${who}`
  const tests: string[] = []
  if (p.message !== null) {
    const parts: string[] = []
    if (p.role !== null) parts.push(`has role ${p.role}`)
    if (p.equals !== null) parts.push(`is identical to the ${p.equals} request's`)
    if (p.matcher !== null) parts.push(`text ${describeMatcher(p.matcher)}`)
    tests.push(`message ${p.message}${parts.length === 0 ? ' exists' : ` ${parts.join(' and ')}`}`)
  } else if (p.matcher !== null) {
    tests.push(`text ${describeMatcher(p.matcher)}`)
  }
  return tests.length === 0 ? subject : `${subject} whose ${tests.join(' and ')}`
}

/** Why request `selected[k]` fails the test of `p`, or null when it passes. */
function requestMiss(p: ResolvedRequestPattern, selected: readonly CapturedWireRequest[], k: number): string | null {
  const r = selected[k]
  if (r === undefined) return 'no such request'
  const label = `#${r.index}`
  if (p.message === null) {
    if (p.matcher === null || testString(p.matcher, textOf(r.messages))) return null
    return `${label}'s text does not ${p.matcher.kind === 'contains' ? 'contain' : 'match'} it`
  }
  const m = messageAt(r.messages, p.message)
  if (m === undefined) return `${label} has ${plural(r.messages.length, 'message')}, no message ${p.message}`
  if (p.role !== null && m.role !== p.role) return `${label}'s message ${p.message} has role ${m.role}`
  if (p.equals !== null) {
    const ref = p.equals === 'first' ? selected[0] : selected[k - 1]
    const refMessage = ref === undefined ? undefined : messageAt(ref.messages, p.message)
    if (ref !== undefined && !jsonEqual(m as unknown as JsonValue, refMessage as unknown as JsonValue ?? null)) {
      const size = (x: DecodedMessage | undefined): string => (x === undefined ? 'none' : `${x.role}, ${JSON.stringify(x.content).length} chars`)
      return `${label}'s message ${p.message} (${size(m)}) differs from #${ref.index}'s (${size(refMessage)})`
    }
  }
  if (p.matcher !== null && !testString(p.matcher, textOf(m.content))) {
    return `${label}'s message ${p.message} text ${quote(textOf(m.content))} does not ${p.matcher.kind === 'contains' ? 'contain' : 'match'} it`
  }
  return null
}

function requestResult(p: ResolvedRequestPattern, i: number, wire: readonly CapturedWireRequest[]): ExpectationResult {
  const name = `requests[${i}]`
  const expected = requestText(p)
  const selected = wire.filter((c) => p.purpose === null || c.purpose === p.purpose)
  const misses = selected.map((_, k) => requestMiss(p, selected, k))
  const passing = selected.flatMap((c, k) => (misses[k] === null ? [`#${c.index}`] : []))
  const failing = misses.filter((m): m is string => m !== null)
  const of = plural(selected.length, p.purpose === null ? 'request' : `${p.purpose} request`)
  switch (p.quantifier) {
    case 'some':
      return passing.length > 0
        ? { name, passed: true, expected, actual: `${passing[0] ?? ''} passes` }
        : { name, passed: false, expected, actual: selected.length === 0 ? `no ${of.replace(/^0 /, '')}` : `none of ${of} passes: ${listed(failing)}` }
    case 'every':
      if (selected.length === 0) return { name, passed: false, expected, actual: `no ${of.replace(/^0 /, '')}` }
      return failing.length === 0
        ? { name, passed: true, expected, actual: `all ${of} pass` }
        : { name, passed: false, expected, actual: `${failing.length} of ${of} fail: ${listed(failing)}` }
    case 'none':
      if (passing.length === 0) {
        return { name, passed: true, expected, actual: selected.length === 0 ? `no ${of.replace(/^0 /, '')}` : `none of ${of} passes` }
      }
      return { name, passed: false, expected, actual: `${passing.length} of ${of} ${passing.length === 1 ? 'passes' : 'pass'}: ${listed(passing)}` }
    default:
      return assertNever(p.quantifier, 'request quantifier')
  }
}
