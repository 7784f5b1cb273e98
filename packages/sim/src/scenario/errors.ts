/**
 * The one error a scenario file can raise: `ScenarioError`, an input error (CLI exit 2) carrying every
 * problem found as an issue with a stable code, the JSON path and, when the text is known, the
 * `line:column` of the offending YAML node. Its message is one `file:line:column: /path reason` line per issue.
 */
import { assertNever } from '@compaction-sim/core'

/** Why a scenario was refused; one code per issue, and the error's code is that of its first issue. */
export type ScenarioErrorCode =
  | 'READ' // the file cannot be read (missing, a directory, permissions)
  | 'TOO_LARGE' // the file exceeds SCENARIO_BYTES_MAX
  | 'YAML' // YAML syntax, duplicate keys, unknown tags, alias or nesting limits, non-finite numbers
  | 'SCHEMA' // the document does not match schema.json (type, unknown key, enum, required …)
  | 'POLICY' // §3.2 rule broken (core resolveCompactionConfig) or pruner §5.1 rule (resolvePruneConfig)
  | 'PATH' // a referenced file escapes the scenario folder and the fixtures package, or is missing
  | 'SEMANTIC' // a cross-field rule of the scenario format (tool results vs calls, bounds, dialect …)
  | 'JSONL' // a line of a `transcript.file` is not one UTF-8 JSON object (empty, bad JSON, bad UTF-8)

/** One problem of a scenario. `path` is a JSON pointer ('' = the document); `line`/`column` are 1-based. */
export interface ScenarioIssue {
  readonly code: ScenarioErrorCode
  readonly path: string
  readonly reason: string
  readonly line?: number
  readonly column?: number
}

/** The human name of a scenario error code (for summaries and reports). */
export function scenarioErrorTitle(code: ScenarioErrorCode): string {
  switch (code) {
    case 'READ': return 'unreadable scenario file'
    case 'TOO_LARGE': return 'scenario file too large'
    case 'YAML': return 'invalid YAML'
    case 'SCHEMA': return 'schema violation'
    case 'POLICY': return 'invalid policy'
    case 'PATH': return 'refused path'
    case 'SEMANTIC': return 'inconsistent scenario'
    case 'JSONL': return 'invalid JSONL transcript'
    default: return assertNever(code, 'scenario error code')
  }
}

/** One issue as `file:line:column: /path reason` (parts that are unknown are left out). */
export function formatScenarioIssue(file: string, issue: ScenarioIssue): string {
  let where = file
  if (issue.line !== undefined) where += `:${issue.line}${issue.column !== undefined ? `:${issue.column}` : ''}`
  const documentLevel = issue.code === 'YAML' || issue.code === 'READ' || issue.code === 'TOO_LARGE' || issue.code === 'JSONL'
  const path = issue.path !== '' ? `${issue.path} ` : documentLevel ? '' : '/ '
  return `${where}: ${path}${issue.reason}`
}

/**
 * A scenario that cannot be used: an input error (exit 2 in the CLI). `issues` is non-empty and sorted by
 * position; `message` holds one formatted line per issue.
 */
export class ScenarioError extends Error {
  override readonly name = 'ScenarioError'
  readonly code: ScenarioErrorCode
  /** The scenario file as given by the caller (used verbatim in messages). */
  readonly file: string
  readonly issues: readonly ScenarioIssue[]

  constructor(file: string, issues: readonly ScenarioIssue[], options?: ErrorOptions) {
    const first = issues[0]
    if (first === undefined) throw new TypeError('ScenarioError needs at least one issue')
    super(issues.map((issue) => formatScenarioIssue(file, issue)).join('\n'), options)
    this.code = first.code
    this.file = file
    this.issues = Object.freeze(issues.map((issue) => Object.freeze({ ...issue })))
  }
}
