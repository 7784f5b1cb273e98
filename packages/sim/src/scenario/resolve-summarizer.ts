/**
 * The defaults step of a summary route's `summarizer:` (issue #15): `resolveSummarizer` turns the YAML value
 * (a preset word or exactly one of `fixed`, `ratio`, `script`, `upstream`) into a frozen `SummarizerSpec`, and
 * `checkScriptCoverage` refuses a `script` too short for the faults declared against it. Every problem is a
 * SEMANTIC `ScenarioIssue` at the JSON path of the offending value (the loader adds `line:column`; exit 2).
 *
 * Coverage rule: a compaction-request fault targeted by `occurrence: k` with `count: c` answers attempts
 * k … k + c − 1 of the summary route (attempts count every compaction request the route receives, faulted or
 * not). When its delivery is `after-chunks` (and its code is not `EMPTY_RESPONSE`), it streams the first
 * chunks of the *scripted* reply of those attempts before failing, so the script must have at least
 * k + c − 1 attempts: otherwise the fault would stream the repeated last attempt, which the author did not
 * write for it. Faults that answer instead of the reply (a rejection, a reset, a hang before headers, a
 * FAULT-23…27 reply variant) need no scripted reply; a `requestIndex` fault is not bound to an attempt number.
 */
import { deepFreeze } from '@compaction-sim/core'
import {
  BUILTIN_SUMMARIZER, PRESET_SPECS, SUMMARIZER_PRESETS, SUMMARY_CHARS_MAX,
  type SummarizerPreset, type SummarizerSpec, type SummaryAttemptSpec,
} from '../provider/summarizers.ts'
import type { ScenarioIssue } from './errors.ts'
import type { ResolvedFault } from './resolve.ts'
import type { SummarizerConfig, SummaryAttemptConfig, UpstreamSummarizerConfig } from './types.ts'

const semantic = (path: string, reason: string): ScenarioIssue => ({ code: 'SEMANTIC', path, reason })

/**
 * The frozen spec of `raw` (absent = `builtin`); bad values are pushed to `issues` at `path` and below, and
 * the builtin summarizer stands in.
 */
export function resolveSummarizer(raw: SummarizerConfig | undefined, path: string, issues: ScenarioIssue[]): SummarizerSpec {
  if (raw === undefined) return BUILTIN_SUMMARIZER
  if (typeof raw === 'string') {
    if ((SUMMARIZER_PRESETS as readonly string[]).includes(raw)) return PRESET_SPECS[raw as SummarizerPreset]
    issues.push(semantic(path, `names no summarizer preset (got ${JSON.stringify(raw)}; presets: ${SUMMARIZER_PRESETS.join(', ')})`))
    return BUILTIN_SUMMARIZER
  }
  const keys = Object.keys(raw)
  if (keys.length !== 1) {
    issues.push(semantic(path, `must have exactly one of the keys fixed, ratio, script, upstream (got ${keys.length === 0 ? 'none' : keys.join(', ')})`))
    return BUILTIN_SUMMARIZER
  }
  if (raw.fixed !== undefined) {
    if (!Number.isSafeInteger(raw.fixed) || raw.fixed < 1 || raw.fixed > SUMMARY_CHARS_MAX) {
      issues.push(semantic(`${path}/fixed`, `must be an integer from 1 to ${SUMMARY_CHARS_MAX} characters (got ${raw.fixed})`))
      return BUILTIN_SUMMARIZER
    }
    return Object.freeze({ kind: 'fixed', chars: raw.fixed })
  }
  if (raw.ratio !== undefined) {
    if (!Number.isFinite(raw.ratio) || raw.ratio <= 0 || raw.ratio > 100) {
      issues.push(semantic(`${path}/ratio`, `must be above 0 and at most 100 (got ${raw.ratio}); ≥ 1 gives a summary that does not shrink`))
      return BUILTIN_SUMMARIZER
    }
    return Object.freeze({ kind: 'ratio', ratio: raw.ratio })
  }
  if (raw.upstream !== undefined) return upstreamSpec(raw.upstream, `${path}/upstream`, issues)
  const script = raw.script ?? []
  if (script.length === 0) {
    issues.push(semantic(`${path}/script`, 'must list at least one attempt'))
    return BUILTIN_SUMMARIZER
  }
  return deepFreeze({ kind: 'script', attempts: script.map((a, i) => attemptSpec(a, `${path}/script/${i}`, issues)) })
}

/** Environment variable names `apiKeyEnv` accepts (POSIX shell names). */
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/

/**
 * The frozen `upstream` summarizer of `raw`: `url` an absolute `http:`/`https:` URL without query, fragment or
 * credentials (a key in the URL would end up in the cassette), `apiKeyEnv` a variable name, never a key.
 */
function upstreamSpec(raw: UpstreamSummarizerConfig, path: string, issues: ScenarioIssue[]): SummarizerSpec {
  const before = issues.length
  let url: URL | null = null
  try {
    url = new URL(raw.url)
  } catch {
    issues.push(semantic(`${path}/url`, `must be an absolute http(s) URL, the OpenAI-compatible base (got ${JSON.stringify(raw.url)})`))
  }
  if (url !== null) {
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      issues.push(semantic(`${path}/url`, `must use http or https (got ${JSON.stringify(url.protocol.replace(/:$/, ''))})`))
    } else if (url.username !== '' || url.password !== '' || url.search !== '' || url.hash !== '') {
      issues.push(semantic(`${path}/url`, 'must not carry credentials, a query or a fragment (name the key in apiKeyEnv)'))
    }
  }
  if (raw.apiKeyEnv !== undefined && !ENV_NAME.test(raw.apiKeyEnv)) {
    const hint = raw.apiKeyEnv.length > 20 ? ' — it looks like a key: name the variable that holds it instead' : ''
    issues.push(semantic(`${path}/apiKeyEnv`, `must be an environment variable name (letters, digits, _)${hint}`))
  }
  if (issues.length > before || url === null) return BUILTIN_SUMMARIZER
  return deepFreeze({
    kind: 'upstream',
    upstream: { url: url.href.replace(/\/+$/, ''), model: raw.model ?? null, apiKeyEnv: raw.apiKeyEnv ?? null },
  })
}

function attemptSpec(raw: SummaryAttemptConfig, path: string, issues: ScenarioIssue[]): SummaryAttemptSpec {
  const out: {
    -readonly [K in keyof SummaryAttemptSpec]: SummaryAttemptSpec[K]
  } = {}
  if (raw.reasoning !== undefined) out.reasoning = raw.reasoning
  if (raw.text !== undefined) out.text = raw.text
  if (raw.toolCalls !== undefined) {
    out.toolCalls = raw.toolCalls.map((c) => ({
      name: c.name,
      arguments: c.arguments === undefined ? '{}' : typeof c.arguments === 'string' ? c.arguments : JSON.stringify(c.arguments),
    }))
  }
  if (raw.images !== undefined) out.images = raw.images
  if (raw.finish !== undefined) out.finish = raw.finish
  if (raw.chunks !== undefined) {
    if (!Number.isSafeInteger(raw.chunks) || raw.chunks < 1) issues.push(semantic(`${path}/chunks`, `must be a positive integer (got ${raw.chunks})`))
    else out.chunks = raw.chunks
  }
  if (raw.latencyMs !== undefined) {
    if (!Number.isSafeInteger(raw.latencyMs) || raw.latencyMs < 0) {
      issues.push(semantic(`${path}/latencyMs`, `must be a non-negative integer (got ${raw.latencyMs})`))
    } else {
      out.latencyMs = raw.latencyMs
    }
  }
  return out
}

/** True when `fault` streams the scripted reply of the attempts it hits (module doc "Coverage rule"). */
function streamsScriptedReply(fault: ResolvedFault): boolean {
  if (NOT_STREAMING.has(fault.kind)) return false
  return fault.params.delivery === 'after-chunks' && fault.params.chunks > 0 && fault.params.code !== 'EMPTY_RESPONSE'
}

/** Compaction faults that never stream the route's reply: reply variants (FAULT-23…27) and hook or setup faults. */
const NOT_STREAMING: ReadonlySet<string> = new Set(['FAULT-23', 'FAULT-24', 'FAULT-25', 'FAULT-26', 'FAULT-27', 'FAULT-31', 'FAULT-32', 'FAULT-33'])

/**
 * Pushes an issue at `path/script` for every compaction fault that needs a scripted attempt the script of
 * `spec` does not have (module doc "Coverage rule"). No-op for the other kinds.
 */
export function checkScriptCoverage(spec: SummarizerSpec, faults: readonly ResolvedFault[], path: string, issues: ScenarioIssue[]): void {
  if (spec.kind !== 'script') return
  faults.forEach((fault, i) => {
    if (fault.target !== 'compaction' || fault.when.requestIndex !== null || !streamsScriptedReply(fault)) return
    const needed = fault.when.occurrence + fault.params.count - 1
    if (needed <= spec.attempts.length) return
    const has = spec.attempts.length === 1 ? '1 attempt' : `${spec.attempts.length} attempts`
    const reason = `has ${has}, but /faults/${i} (${fault.id}, ${fault.kind}, delivery after-chunks) streams the scripted reply `
      + `of compaction attempt ${needed}: give at least ${needed} attempts`
    issues.push(semantic(`${path}/script`, reason))
  })
}
