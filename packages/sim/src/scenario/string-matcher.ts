/**
 * The string-matcher grammar of `expect` (issue #15): `{ contains: text }` is a case-sensitive substring test,
 * `{ matches: '/source/flags' }` a regular expression (flags `i`, `m`, `s`, `u` only: `g` and `y` make `test`
 * stateful, so they are refused). A matcher stands wherever `expect` tests a string: an event's or node's
 * `text`, a warning, a request's text, and any string inside a `data` pattern (an object whose only key is
 * `contains` or `matches` with a string value is a matcher there, never a literal object).
 *
 * The "text content" a `text` matcher reads is the `text` of every text block (`{ type: 'text', text }`) in the
 * value, at any depth, in document order, joined by newlines: a message's content, a tool result's nested
 * content, a summary's blocks. Pure: no I/O, no clock.
 */
import type { JsonValue } from '@compaction-sim/core'

/** A validated string matcher; `matches` keeps the regex as source and flags (compiled on use). */
export type ResolvedStringMatcher =
  | { readonly kind: 'contains'; readonly text: string }
  | { readonly kind: 'matches'; readonly source: string; readonly flags: string }

/** The regex flags a `matches` literal may carry. */
export const REGEX_FLAGS = 'imsu'

/**
 * Parses a `/source/flags` literal. Returns the source and flags, or the reason it is not one (a plain string,
 * an unknown or repeated flag, or a source `RegExp` refuses, with its message).
 */
export function parseRegexLiteral(literal: string): { source: string; flags: string } | { error: string } {
  const close = literal.lastIndexOf('/')
  if (!literal.startsWith('/') || close <= 0) return { error: `${JSON.stringify(literal)} is not a /source/flags regular expression` }
  const source = literal.slice(1, close)
  const flags = literal.slice(close + 1)
  if (source === '') return { error: `${JSON.stringify(literal)} has an empty source` }
  for (const [i, flag] of [...flags].entries()) {
    if (!REGEX_FLAGS.includes(flag)) return { error: `${JSON.stringify(literal)} has the flag ${JSON.stringify(flag)}; allowed: ${[...REGEX_FLAGS].join(', ')}` }
    if (flags.indexOf(flag) !== i) return { error: `${JSON.stringify(literal)} repeats the flag ${JSON.stringify(flag)}` }
  }
  try {
    new RegExp(source, flags)
  } catch (err) {
    return { error: `${JSON.stringify(literal)} is not a valid regular expression: ${err instanceof Error ? err.message : String(err)}` }
  }
  return { source, flags }
}

/**
 * Resolves a schema-valid matcher (`contains` xor `matches`). Returns the matcher, or the reason the regex is
 * refused (the caller turns it into an issue at `…/matches`).
 */
export function resolveStringMatcher(m: { contains?: string | undefined; matches?: string | undefined }): ResolvedStringMatcher | { error: string } {
  if (m.contains !== undefined) return { kind: 'contains', text: m.contains }
  const parsed = parseRegexLiteral(m.matches ?? '')
  return 'error' in parsed ? parsed : { kind: 'matches', source: parsed.source, flags: parsed.flags }
}

const compiled = new Map<string, RegExp>()
/** Bound on the compiled-regex cache (cleared when full). */
const COMPILED_MAX = 1024

function regexOf(source: string, flags: string): RegExp {
  const key = `${flags}/${source}`
  let re = compiled.get(key)
  if (re === undefined) {
    if (compiled.size >= COMPILED_MAX) compiled.clear()
    re = new RegExp(source, flags)
    compiled.set(key, re)
  }
  return re
}

/** True when `text` passes the matcher. */
export function testString(m: ResolvedStringMatcher, text: string): boolean {
  return m.kind === 'contains' ? text.includes(m.text) : regexOf(m.source, m.flags).test(text)
}

/** The matcher as the report shows it: `contains "x"` or `matches /x/i`. */
export function describeMatcher(m: ResolvedStringMatcher): string {
  return m.kind === 'contains' ? `contains ${JSON.stringify(m.text)}` : `matches /${m.source}/${m.flags}`
}

/** The object form of a matcher inside a `data` pattern: exactly one key, `contains` or `matches`, with a string value. */
export function isDataMatcher(pattern: JsonValue): pattern is { contains: string } | { matches: string } {
  if (pattern === null || typeof pattern !== 'object' || Array.isArray(pattern)) return false
  const keys = Object.keys(pattern)
  const key = keys[0]
  return keys.length === 1 && (key === 'contains' || key === 'matches') && typeof pattern[key] === 'string'
}

/**
 * Every refused regex of the matchers inside a `data` pattern, as `[JSON pointer, reason]` under `path`.
 * (A `contains` matcher cannot be wrong; the walk is bounded by the pattern, which the loader bounds.)
 */
export function dataMatcherErrors(pattern: JsonValue, path: string): Array<[string, string]> {
  if (isDataMatcher(pattern)) {
    if (!('matches' in pattern)) return []
    const parsed = parseRegexLiteral(pattern.matches)
    return 'error' in parsed ? [[`${path}/matches`, parsed.error]] : []
  }
  if (Array.isArray(pattern)) return pattern.flatMap((p, i) => dataMatcherErrors(p, `${path}/${i}`))
  if (pattern !== null && typeof pattern === 'object') {
    return Object.entries(pattern).flatMap(([k, p]) => dataMatcherErrors(p, `${path}/${k.replaceAll('~', '~0').replaceAll('/', '~1')}`))
  }
  return []
}

/** Tests a string against the raw object form of a data matcher (already validated by `dataMatcherErrors`). */
export function testDataMatcher(pattern: { contains: string } | { matches: string }, text: string): boolean {
  const resolved = resolveStringMatcher(pattern)
  return !('error' in resolved) && testString(resolved, text)
}

/** Bound on the nesting `textOf` descends (deeper values are not read). */
const TEXT_DEPTH_MAX = 64

/** The text content of a value: every text block's `text`, depth-first in document order, joined by `\n`. */
export function textOf(value: unknown): string {
  const parts: string[] = []
  const walk = (v: unknown, depth: number): void => {
    if (depth > TEXT_DEPTH_MAX || v === null || typeof v !== 'object') return
    if (Array.isArray(v)) {
      for (const item of v) walk(item, depth + 1)
      return
    }
    const record = v as Record<string, unknown>
    if (record['type'] === 'text' && typeof record['text'] === 'string') parts.push(record['text'])
    for (const [key, item] of Object.entries(record)) if (key !== 'text') walk(item, depth + 1)
  }
  walk(value, 0)
  return parts.join('\n')
}
