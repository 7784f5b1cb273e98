/**
 * Secrets on import (issue #20 "Secrets and privacy on import"): every string of an imported transcript
 * passes through `SECRET_PATTERNS`, in order, and each match becomes the stable placeholder
 * `[REDACTED:<kind>]` (for a `key = value` pair only the value). `--keep-secrets` skips this. The list is
 * documented in the README ("Replay your own session"); a test plants one secret of every kind in every
 * import format and greps every output for it.
 */
import type { ContentBlock, JsonValue } from '@compaction-sim/core'
import type { Transcript } from '@compaction-sim/fixtures'

/** One redaction rule: its placeholder kind, what it matches, and the group to keep before the secret (if any). */
export interface SecretPattern {
  readonly kind: string
  readonly description: string
  readonly pattern: RegExp
  /** When set, group 1 is kept (a header name, a `key =`) and only the rest is replaced. */
  readonly keepPrefix?: true
}

/**
 * Where a token may start: not inside a word, and not right after a backslash — but right after a JSON
 * escape (`\n`, `\t`, `\r`), since tool-call arguments are JSON text whose newlines are escapes.
 */
const START = String.raw`(?:(?<![A-Za-z0-9_\\])|(?<=\\[nrt]))`

/** A global regular expression whose source begins at `START`. */
const token = (source: string, flags = 'g'): RegExp => new RegExp(`${START}${source}`, flags)

/** The documented redaction patterns, most specific first. */
export const SECRET_PATTERNS: readonly SecretPattern[] = [
  {
    kind: 'private-key', description: 'PEM private key blocks (`-----BEGIN … PRIVATE KEY-----` … `-----END … PRIVATE KEY-----`)',
    pattern: /-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----[\s\S]*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY-----/g,
  },
  { kind: 'anthropic-key', description: 'Anthropic API keys `sk-ant-…`', pattern: token(String.raw`sk-ant-[A-Za-z0-9_-]{20,}`) },
  { kind: 'openai-key', description: 'OpenAI API keys `sk-…`, `sk-proj-…`, `sk-svcacct-…`, `sk-admin-…`', pattern: token(String.raw`sk-[A-Za-z0-9_-]{20,}`) },
  { kind: 'aws-access-key-id', description: 'AWS access key ids `AKIA…` / `ASIA…` (20 characters)', pattern: token(String.raw`(?:AKIA|ASIA)[0-9A-Z]{16}(?![A-Za-z0-9])`) },
  {
    kind: 'aws-secret-key', description: 'AWS secret access keys: 40 characters after `aws_secret_access_key`, `secret_access_key`, `SecretAccessKey` …',
    pattern: token(String.raw`((?:aws_?)?secret_?access_?key["']?\s*[:=]\s*["']?)[A-Za-z0-9/+=]{40}`, 'gi'), keepPrefix: true,
  },
  { kind: 'github-token', description: 'GitHub tokens `ghp_`, `gho_`, `ghu_`, `ghs_`, `ghr_` and `github_pat_…`', pattern: token(String.raw`(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})`) },
  { kind: 'slack-token', description: 'Slack tokens `xoxb-`, `xoxa-`, `xoxp-`, `xoxr-`, `xoxs-`', pattern: token(String.raw`xox[baprs]-[A-Za-z0-9-]{10,}`) },
  { kind: 'google-api-key', description: 'Google API keys `AIza…` (39 characters)', pattern: token(String.raw`AIza[0-9A-Za-z_-]{35}`) },
  { kind: 'jwt', description: 'JSON Web Tokens `eyJ….eyJ….…`', pattern: token(String.raw`eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}`) },
  {
    kind: 'bearer-token', description: 'bearer tokens in headers (`Authorization: Bearer …`, 16 characters or more)',
    pattern: token(String.raw`(Bearer\s+)[A-Za-z0-9._~+/-]{16,}=*`, 'gi'), keepPrefix: true,
  },
  {
    kind: 'secret-assignment', description: 'values of secret-looking pairs: `password`, `passwd`, `secret`, `api_key`, `apikey`, `access_token`, `auth_token`, `client_secret` followed by `=` or `:` and 8 or more characters',
    pattern: token(String.raw`((?:password|passwd|client_secret|secret|api[_-]?key|access[_-]?token|auth[_-]?token)["']?\s*[:=]\s*["']?)(?!\[REDACTED:)[^\s"'\\,;}]{8,}`, 'gi'), keepPrefix: true,
  },
  { kind: 'email', description: 'email addresses', pattern: token(String.raw`[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}(?![A-Za-z0-9])`) },
]

/** How many secrets of each kind were replaced. */
export type RedactionCounts = Record<string, number>

/** `text` with every secret replaced; counts go into `counts`. */
export function redactText(text: string, counts: RedactionCounts): string {
  let out = text
  for (const rule of SECRET_PATTERNS) {
    out = out.replace(rule.pattern, (...match: unknown[]) => {
      counts[rule.kind] = (counts[rule.kind] ?? 0) + 1
      const prefix = rule.keepPrefix === true ? String(match[1]) : ''
      return `${prefix}[REDACTED:${rule.kind}]`
    })
  }
  return out
}

/** Keys whose values are identifiers the transcript links by, never secrets: left as they are. */
const ID_KEYS = new Set(['type', 'id', 'toolCallId', 'attachmentId', 'mediaType'])

/** Every string of `value` (JSON), redacted, except the values of `ID_KEYS`. */
export function redactJson(value: JsonValue, counts: RedactionCounts): JsonValue {
  if (typeof value === 'string') return redactText(value, counts)
  if (Array.isArray(value)) return value.map((v) => redactJson(v, counts))
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, ID_KEYS.has(k) ? v : redactJson(v, counts)]))
  }
  return value
}

function redactBlocks(blocks: ContentBlock[], counts: RedactionCounts): ContentBlock[] {
  return blocks.map((block) => redactJson(block as unknown as JsonValue, counts) as unknown as ContentBlock)
}

/** A redacted copy of `transcript` (system prompt, tools, every block, result meta) and the counts per kind. */
export function redactTranscript(transcript: Transcript): { transcript: Transcript; counts: RedactionCounts } {
  const counts: RedactionCounts = {}
  const out: Transcript = {
    systemPrompt: redactText(transcript.systemPrompt, counts),
    tools: transcript.tools.map((tool) => redactJson(tool as unknown as JsonValue, counts) as unknown as Transcript['tools'][number]),
    turns: transcript.turns.map((turn) => ({
      user: redactBlocks(turn.user, counts),
      steps: turn.steps.map((step) => {
        const next = {
          ...step,
          reply: { ...step.reply, blocks: redactBlocks(step.reply.blocks, counts) },
          toolResults: step.toolResults.map((result) => {
            const r = { ...result, content: redactBlocks(result.content, counts) }
            if (result.meta !== undefined) r.meta = redactJson(result.meta, counts)
            return r
          }),
        }
        if (step.steer !== undefined) next.steer = redactBlocks(step.steer, counts)
        return next
      }),
    })),
  }
  if (transcript.facts !== undefined) out.facts = transcript.facts.map((f) => redactText(f, counts))
  return { transcript: out, counts }
}
