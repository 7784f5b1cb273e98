/**
 * The defaults step of a scenario's `probes:` (issue #20): each item becomes a frozen `ResolvedProbe` with its
 * id (default `<kind>-<n>`, n counting the scenario's probes from 1), its expected strings as matchers and its
 * tolerance. An `expect` entry is a regular expression when it is written `/source/flags` — it starts with `/`
 * and only flag letters (i, m, s, u) follow its last `/` — and a substring otherwise, so an absolute path such as
 * `/home/me/app.ts` stays a substring. Problems are SEMANTIC issues at the JSON path of the offending value.
 */
import type { ProbeKind, ProbeMatch, TranscriptProbe } from '@compaction-sim/fixtures'
import type { ScenarioIssue } from './errors.ts'
import { parseRegexLiteral, type ResolvedStringMatcher } from './string-matcher.ts'
import type { ProbeConfig } from './types.ts'

/** A probe ready to score: every `expect` entry must match the surface's text. */
export interface ResolvedProbe {
  readonly id: string
  readonly kind: ProbeKind
  readonly expect: readonly ResolvedStringMatcher[]
  readonly match: ProbeMatch
}

/** True when `entry` is written as a `/source/flags` regular expression (module doc). */
export function isRegexEntry(entry: string): boolean {
  return /^\/.+\/[a-z]*$/s.test(entry) && /\/[imsu]*$/.test(entry)
}

/**
 * The matcher of one expected string, or the reason its regular expression is refused. A string that is not
 * written as a regex is a substring.
 */
export function probeMatcherOf(entry: string): ResolvedStringMatcher | { error: string } {
  if (!isRegexEntry(entry)) return { kind: 'contains', text: entry }
  const parsed = parseRegexLiteral(entry)
  return 'error' in parsed ? parsed : { kind: 'matches', source: parsed.source, flags: parsed.flags }
}

/** The resolved probes of a scenario's `probes:` (absent = none); bad entries are pushed to `issues`. */
export function resolveProbes(raw: readonly ProbeConfig[] | undefined, issues: ScenarioIssue[]): ResolvedProbe[] {
  const seen = new Map<string, number>()
  return (raw ?? []).map((item, i): ResolvedProbe => {
    const id = item.id ?? `${item.kind}-${i + 1}`
    const earlier = seen.get(id)
    if (earlier !== undefined) issues.push({ code: 'SEMANTIC', path: `/probes/${i}/id`, reason: `repeats the id ${JSON.stringify(id)} of /probes/${earlier}` })
    seen.set(id, i)
    const entries = typeof item.expect === 'string' ? [item.expect] : item.expect
    const expect: ResolvedStringMatcher[] = []
    entries.forEach((entry, k) => {
      const matcher = probeMatcherOf(entry)
      if ('error' in matcher) {
        const path = typeof item.expect === 'string' ? `/probes/${i}/expect` : `/probes/${i}/expect/${k}`
        issues.push({ code: 'SEMANTIC', path, reason: matcher.error })
      } else {
        expect.push(matcher)
      }
    })
    return { id, kind: item.kind, expect, match: item.match ?? 'exact' }
  })
}

/**
 * A generated transcript's probe as a resolved one (its strings are trusted: the generator wrote them; a
 * regex-looking entry is still read as the module doc says).
 */
export function resolvedTranscriptProbe(probe: TranscriptProbe): ResolvedProbe {
  const expect = probe.expect.map((entry): ResolvedStringMatcher => {
    const matcher = probeMatcherOf(entry)
    return 'error' in matcher ? { kind: 'contains', text: entry } : matcher
  })
  return { id: probe.id, kind: probe.kind, expect, match: probe.match }
}
