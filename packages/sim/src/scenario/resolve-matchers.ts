/**
 * The defaults step for the provider-world expectations of issue #15 (`perPreStep`, `summarized`, `warnings`,
 * `rejections`, `requests`, and the `text`/`absent` keys of event patterns), called by `resolveExpect` in
 * `resolve.ts`. Every regex is parsed here, once: a bad one, a flag outside `imsu`, or a request test that
 * names `role`/`equals` without `message` becomes a SEMANTIC `ScenarioIssue` at its JSON path (the loader adds
 * `line:column`, the CLI exits 2). The evaluation is `run/expectation-matchers.ts`.
 */
import { vocabulary, type Dialect, type EventType, type JsonObject } from '@compaction-sim/core'
import type { ScenarioIssue } from './errors.ts'
import { dataMatcherErrors, resolveStringMatcher, type ResolvedStringMatcher } from './string-matcher.ts'
import {
  PRE_STEP_COUNT_NAMES, REJECTION_COUNT_NAMES,
  type CountBound, type ExpectConfig, type NodePattern, type PreStepCountName, type RejectionCountName, type RequestPattern,
  type StringMatcher, type SummarizedRegionExpectation,
} from './types.ts'

/** An inclusive count range; `max` null = unbounded (the same shape as `CountRange` of `resolve.ts`). */
export interface MatcherCountRange {
  readonly min: number
  readonly max: number | null
}

/** A node description; null fields are not tested. */
export interface ResolvedNodePattern {
  readonly type: EventType | null
  readonly text: ResolvedStringMatcher | null
  readonly data: Readonly<JsonObject> | null
}

/** One `summarized` item: which successful bracket (1-based or `any`) and what its region must be. */
export interface ResolvedSummarizedRegion {
  readonly bracket: number | 'any'
  readonly shadowedSeqs: readonly number[] | null
  readonly nodes: MatcherCountRange | null
  readonly first: ResolvedNodePattern | null
  readonly last: ResolvedNodePattern | null
}

/** One `warnings` item. */
export interface ResolvedWarningPattern {
  readonly matcher: ResolvedStringMatcher
  readonly absent: boolean
  /** How many warnings must match (`count`); null = at least one (or none, with `absent`). */
  readonly count: MatcherCountRange | null
}

/** How many selected requests must pass a request test. */
export type RequestQuantifier = 'some' | 'every' | 'none'

/** One `requests` item; null fields are not tested (`purpose` null = every purpose). */
export interface ResolvedRequestPattern {
  readonly purpose: 'conversation' | 'compaction' | 'session-title' | null
  readonly quantifier: RequestQuantifier
  readonly message: number | null
  readonly role: 'system' | 'user' | 'assistant' | null
  readonly equals: 'first' | 'previous' | null
  readonly matcher: ResolvedStringMatcher | null
}

/** The matcher expectations with their defaults; null/empty = not checked. */
export interface ResolvedMatcherExpect {
  readonly perPreStep: Readonly<Record<PreStepCountName, MatcherCountRange | null>> | null
  readonly summarized: readonly ResolvedSummarizedRegion[]
  readonly warnings: readonly ResolvedWarningPattern[]
  readonly rejections: Readonly<Record<RejectionCountName, MatcherCountRange | null>> | null
  readonly requests: readonly ResolvedRequestPattern[]
}

const semantic = (path: string, reason: string): ScenarioIssue => ({ code: 'SEMANTIC', path, reason })

/** A matcher at `path`; a refused regex is an issue at `path/matches` and resolves to null. */
export function matcherAt(m: StringMatcher, path: string, issues: ScenarioIssue[]): ResolvedStringMatcher | null {
  const resolved = resolveStringMatcher(m)
  if ('error' in resolved) {
    issues.push(semantic(`${path}/matches`, resolved.error))
    return null
  }
  return resolved
}

/** The `data` pattern at `path` as written, after its regexes were checked (issues for each refused one). */
export function dataPatternAt(data: Record<string, unknown> | undefined, path: string, issues: ScenarioIssue[]): Readonly<JsonObject> | null {
  if (data === undefined) return null
  for (const [where, reason] of dataMatcherErrors(data as JsonObject, path)) issues.push(semantic(where, reason))
  return data as JsonObject
}

function range(bound: CountBound | undefined, path: string, issues: ScenarioIssue[]): MatcherCountRange | null {
  if (bound === undefined) return null
  if (typeof bound === 'number') return { min: bound, max: bound }
  const r = { min: bound.min ?? 0, max: bound.max ?? null }
  if (r.max !== null && r.min > r.max) issues.push(semantic(path, `has min ${r.min} above max ${r.max}`))
  return r
}

function nodePattern(p: NodePattern | undefined, path: string, dialect: Dialect, issues: ScenarioIssue[]): ResolvedNodePattern | null {
  if (p === undefined) return null
  if (p.type !== undefined && !vocabulary(dialect).eventTypes.has(p.type)) {
    issues.push(semantic(`${path}/type`, `names ${p.type}, which the ${dialect} dialect never writes (§14)`))
  }
  return {
    type: p.type ?? null,
    text: p.text === undefined ? null : matcherAt(p.text, `${path}/text`, issues),
    data: dataPatternAt(p.data, `${path}/data`, issues),
  }
}

function summarized(item: SummarizedRegionExpectation, i: number, dialect: Dialect, issues: ScenarioIssue[]): ResolvedSummarizedRegion {
  const path = `/expect/summarized/${i}`
  return {
    bracket: item.bracket ?? i + 1,
    shadowedSeqs: item.shadowedSeqs ?? null,
    nodes: range(item.nodes, `${path}/nodes`, issues),
    first: nodePattern(item.first, `${path}/first`, dialect, issues),
    last: nodePattern(item.last, `${path}/last`, dialect, issues),
  }
}

function request(item: RequestPattern, i: number, issues: ScenarioIssue[]): ResolvedRequestPattern {
  const path = `/expect/requests/${i}`
  if (item.every === true && item.absent === true) issues.push(semantic(path, 'sets both every and absent; choose one'))
  if (item.message === undefined) {
    if (item.role !== undefined) issues.push(semantic(`${path}/role`, 'tests the role of a message: give message (its position)'))
    if (item.equals !== undefined) issues.push(semantic(`${path}/equals`, 'compares one message: give message (its position)'))
  }
  if (item.contains !== undefined && item.matches !== undefined) issues.push(semantic(path, 'sets both contains and matches; choose one'))
  let matcher: ResolvedStringMatcher | null = null
  if (item.contains !== undefined) matcher = { kind: 'contains', text: item.contains }
  else if (item.matches !== undefined) matcher = matcherAt({ matches: item.matches }, path, issues)
  return {
    purpose: item.purpose ?? null,
    quantifier: item.every === true ? 'every' : item.absent === true ? 'none' : 'some',
    message: item.message ?? null,
    role: item.role ?? null,
    equals: item.equals ?? null,
    matcher,
  }
}

/** Resolves the matcher keys of `expect` (module doc); problems are pushed onto `issues`. */
export function resolveMatcherExpect(expect: ExpectConfig, dialect: Dialect, issues: ScenarioIssue[]): ResolvedMatcherExpect {
  let perPreStep: Record<PreStepCountName, MatcherCountRange | null> | null = null
  if (expect.perPreStep !== undefined) {
    const given = expect.perPreStep
    perPreStep = {} as Record<PreStepCountName, MatcherCountRange | null>
    for (const name of PRE_STEP_COUNT_NAMES) perPreStep[name] = range(given[name], `/expect/perPreStep/${name}`, issues)
  }
  let rejections: Record<RejectionCountName, MatcherCountRange | null> | null = null
  if (expect.rejections !== undefined) {
    const given = expect.rejections
    rejections = {} as Record<RejectionCountName, MatcherCountRange | null>
    for (const name of REJECTION_COUNT_NAMES) rejections[name] = range(given[name], `/expect/rejections/${name}`, issues)
  }
  const warnings = (expect.warnings ?? []).flatMap((w, i): ResolvedWarningPattern[] => {
    const matcher = matcherAt(w, `/expect/warnings/${i}`, issues)
    const count = range(w.count, `/expect/warnings/${i}/count`, issues)
    if (count !== null && w.absent === true) issues.push(semantic(`/expect/warnings/${i}`, 'sets both absent and count; choose one'))
    return matcher === null ? [] : [{ matcher, absent: w.absent === true, count }]
  })
  return {
    perPreStep,
    summarized: (expect.summarized ?? []).map((item, i) => summarized(item, i, dialect, issues)),
    warnings,
    rejections,
    requests: (expect.requests ?? []).map((item, i) => request(item, i, issues)),
  }
}
