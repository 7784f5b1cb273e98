/**
 * The scenario loader (design §8): reads a YAML file of at most `SCENARIO_BYTES_MAX` bytes, parses it with
 * the YAML 1.2 core schema (no custom or YAML 1.1 tags, unique keys, capped alias expansion and nesting),
 * validates it with the ajv standalone validator generated from `schema.json`, applies the cross-field
 * rules of `resolveScenario`, and maps every problem to `file:line:column` of the offending YAML node.
 * Every failure is a `ScenarioError` (an input error, CLI exit 2); nothing else escapes.
 */
import { readFile, realpath, stat } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { resolve } from 'node:path'
import type { ErrorObject, ValidateFunction } from 'ajv'
import { LineCounter, isAlias, isMap, isScalar, isSeq, parseDocument, visit, type Document, type Node } from 'yaml'
import { ScenarioError, type ScenarioIssue } from './errors.ts'
import { DEFAULT_FIXTURES_DIR, isInside, resolveScenario } from './resolve.ts'
import type { Scenario } from './types.ts'

/** Largest scenario file accepted, in bytes (1 MiB): scenarios are hand-written, logs go in `recorded`. */
export const SCENARIO_BYTES_MAX = 1024 * 1024
/** Most alias expansions one document may cause (yaml's `maxAliasCount`), against billion-laughs documents. */
export const SCENARIO_ALIASES_MAX = 100
/** Deepest nesting of maps and lists accepted (the schema needs 12; free-form params get the rest). */
export const SCENARIO_DEPTH_MAX = 64
/** Issues reported per file at most; the rest are summarised in one line. */
export const SCENARIO_ISSUES_MAX = 50

/** Options of `parseScenario` and `loadScenario`. */
export interface ScenarioLoadOptions {
  /** Root of `fixtures:` transcript paths. Default: packages/fixtures/transcripts of this workspace. */
  fixturesDir?: string
}

const require = createRequire(import.meta.url)
const validateScenario = require('./validate.generated.cjs') as ValidateFunction<Scenario>

/**
 * Parses and validates scenario `text`; `file` names it in messages and anchors relative transcript paths.
 * No I/O: whether a recorded log exists is checked by `loadScenario`. Returns the validated document
 * (defaults not applied: see `resolveScenario`). Throws `ScenarioError` only.
 */
export function parseScenario(text: string, file: string, options: ScenarioLoadOptions = {}): Scenario {
  if (Buffer.byteLength(text, 'utf8') > SCENARIO_BYTES_MAX) {
    throw new ScenarioError(file, [{ code: 'TOO_LARGE', path: '', reason: `is larger than ${SCENARIO_BYTES_MAX} bytes` }])
  }
  const lineCounter = new LineCounter()
  const at = (offset: number): { line: number; column: number } => position(lineCounter, offset)
  const doc = parseYaml(text, file, lineCounter, at)
  const value = toValue(doc, file, at)
  const deep = findDepthOrNumberProblem(value)
  if (deep !== null) {
    // Locate by the value's path, but do not print a pointer 64 segments long for the nesting limit.
    const issue = located(file, doc, at, [{ code: 'YAML', path: deep.path, reason: deep.reason }]).issues[0]
    const path = deep.nesting ? '' : deep.path
    throw new ScenarioError(file, [{ code: 'YAML', path, reason: deep.reason, line: issue?.line ?? 1, column: issue?.column ?? 1 }])
  }
  if (!validateScenario(value)) {
    throw located(file, doc, at, schemaIssues(validateScenario.errors ?? []))
  }
  try {
    resolveScenario(value, { file, fixturesDir: options.fixturesDir ?? DEFAULT_FIXTURES_DIR })
  } catch (error) {
    if (error instanceof ScenarioError) throw located(file, doc, at, error.issues, error)
    throw error
  }
  return value
}

/**
 * Reads and parses the scenario at `path` (see `parseScenario`), then checks that a `transcript.recorded`
 * log or a `transcript.file` exists and, with symlinks resolved, still lies inside the scenario's folder or the
 * fixtures root (a transcript file's content is read and validated when the run starts: `transcript-file.ts`).
 * Throws `ScenarioError` only (code READ for an unreadable file).
 */
export async function loadScenario(path: string, options: ScenarioLoadOptions = {}): Promise<Scenario> {
  let text: string
  try {
    const info = await stat(path)
    if (!info.isFile()) throw new Error('not a regular file')
    if (info.size > SCENARIO_BYTES_MAX) {
      throw new ScenarioError(path, [{ code: 'TOO_LARGE', path: '', reason: `is ${info.size} bytes, more than ${SCENARIO_BYTES_MAX}` }])
    }
    text = await readFile(path, 'utf8')
  } catch (error) {
    if (error instanceof ScenarioError) throw error
    const missing = error instanceof Error && 'code' in error && error.code === 'ENOENT'
    const reason = missing ? 'no such file' : `cannot be read: ${errorText(error)}`
    throw new ScenarioError(path, [{ code: 'READ', path: '', reason }], { cause: error })
  }
  const scenario = parseScenario(text, path, options)
  const onDisk = 'recorded' in scenario.transcript || 'file' in scenario.transcript || 'import' in scenario.transcript
  if (onDisk) await checkRecordedOnDisk(scenario, text, path, options)
  return scenario
}

async function checkRecordedOnDisk(scenario: Scenario, text: string, file: string, options: ScenarioLoadOptions): Promise<void> {
  const resolved = resolveScenario(scenario, { file, fixturesDir: options.fixturesDir ?? DEFAULT_FIXTURES_DIR })
  const kind = resolved.transcript.kind
  if (kind !== 'recorded' && kind !== 'file' && kind !== 'import') return
  const { path: target, given } = resolved.transcript
  const field = kind === 'file' ? '/transcript/file' : kind === 'import' ? '/transcript/import/path' : '/transcript/recorded'
  let reason: string | null = null
  try {
    const real = await realpath(target)
    const roots = await Promise.all([resolve(file, '..'), options.fixturesDir ?? DEFAULT_FIXTURES_DIR].map(realRoot))
    if (!(await stat(real)).isFile()) reason = `is not a regular file (got ${JSON.stringify(given)})`
    else if (!roots.some((root) => root !== null && isInside(root, real))) {
      reason = `resolves through a symbolic link outside the scenario's folder and the fixtures transcripts (got ${JSON.stringify(given)})`
    }
  } catch (error) {
    reason = `names a file that cannot be read (got ${JSON.stringify(given)}): ${errorText(error)}`
  }
  if (reason === null) return
  const lineCounter = new LineCounter()
  const doc = parseDocument(text, yamlOptions(lineCounter))
  throw located(file, doc, (offset) => position(lineCounter, offset), [{ code: 'PATH', path: field, reason }])
}

async function realRoot(root: string): Promise<string | null> {
  try {
    return await realpath(root)
  } catch {
    return null // a root that does not exist holds nothing
  }
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}

// ---------------------------------------------------------------------------------------------
// YAML

function yamlOptions(lineCounter: LineCounter): Parameters<typeof parseDocument>[1] {
  return {
    lineCounter,
    version: '1.2',
    schema: 'core',
    customTags: [],
    resolveKnownTags: false,
    merge: false,
    uniqueKeys: true,
    stringKeys: true,
    strict: true,
    prettyErrors: false,
    intAsBigInt: false,
    keepSourceTokens: false,
  }
}

type At = (offset: number) => { line: number; column: number }

/** `doc` parsed from `text`; YAML errors and warnings (unknown tags, …) become YAML issues. */
function parseYaml(text: string, file: string, lineCounter: LineCounter, at: At): Document.Parsed {
  let doc: Document.Parsed
  try {
    doc = parseDocument(text, yamlOptions(lineCounter))
  } catch (error) {
    // Defensive: the parser reports its problems in doc.errors, but a pathological document must not escape as a RangeError.
    const issue: ScenarioIssue = { code: 'YAML', path: '', reason: `cannot be parsed: ${errorText(error)}`, line: 1, column: 1 }
    throw new ScenarioError(file, [issue], { cause: error })
  }
  const problems = [...doc.errors, ...doc.warnings]
  if (problems.length === 0) return doc
  const overflow = problems.find((problem) => /call stack/i.test(problem.message))
  if (overflow !== undefined) {
    // The composer recurses per nesting level; one issue says it instead of one per abandoned level.
    const reason = 'nests too deeply to parse (the YAML composer ran out of stack)'
    throw new ScenarioError(file, [{ code: 'YAML', path: '', reason, ...at(overflow.pos[0]) }])
  }
  const issues = problems.map((problem): ScenarioIssue => {
    return { code: 'YAML', path: '', reason: oneLine(problem.message), ...at(problem.pos[0]) }
  })
  throw new ScenarioError(file, limitIssues(sortIssues(issues)))
}

/** The document as plain data; alias expansion beyond `SCENARIO_ALIASES_MAX` is refused. */
function toValue(doc: Document.Parsed, file: string, at: At): unknown {
  try {
    return doc.toJS({ maxAliasCount: SCENARIO_ALIASES_MAX, mapAsMap: false })
  } catch (error) {
    let offset = 0
    visit(doc, { Alias: (_key, node) => { offset = node.range?.[0] ?? 0; return visit.BREAK } })
    const text = oneLine(errorText(error))
    const reason = /alias/i.test(text)
      ? `expands aliases too often (limit ${SCENARIO_ALIASES_MAX}): ${text}`
      : `cannot be read as data: ${text}`
    throw new ScenarioError(file, [{ code: 'YAML', path: '', reason, ...at(offset) }], { cause: error })
  }
}

/** The first value nested deeper than `SCENARIO_DEPTH_MAX`, or the first non-finite number (`.inf`, `.nan`). */
function findDepthOrNumberProblem(value: unknown): { path: string; reason: string; nesting: boolean } | null {
  const stack: Array<{ value: unknown; path: string; depth: number }> = [{ value, path: '', depth: 0 }]
  while (stack.length > 0) {
    const item = stack.pop()
    if (item === undefined) break
    if (typeof item.value === 'number' && !Number.isFinite(item.value)) {
      return { path: item.path, reason: `must be a finite number (got ${String(item.value)})`, nesting: false }
    }
    if (typeof item.value !== 'object' || item.value === null) continue
    if (item.depth >= SCENARIO_DEPTH_MAX) {
      return { path: item.path, reason: `nests deeper than ${SCENARIO_DEPTH_MAX} levels`, nesting: true }
    }
    for (const [key, child] of Object.entries(item.value)) {
      stack.push({ value: child, path: `${item.path}/${key.replaceAll('~', '~0').replaceAll('/', '~1')}`, depth: item.depth + 1 })
    }
  }
  return null
}

function position(lineCounter: LineCounter, offset: number): { line: number; column: number } {
  const pos = lineCounter.linePos(offset)
  return pos.line === 0 ? { line: 1, column: offset + 1 } : { line: pos.line, column: pos.col }
}

function oneLine(text: string): string {
  return text.split('\n')[0]?.trim() ?? ''
}

// ---------------------------------------------------------------------------------------------
// Locating issues

/** The node at JSON pointer `path` (or its deepest existing ancestor) and, for a map entry, its key node. */
function nodeAt(doc: Document.Parsed, path: string): { node: Node | null; key: Node | null; exact: boolean } {
  let node: unknown = doc.contents
  let key: Node | null = null
  const segments = path === '' ? [] : path.slice(1).split('/').map((s) => s.replaceAll('~1', '/').replaceAll('~0', '~'))
  for (const [i, segment] of segments.entries()) {
    if (i > 100) break // paths are bounded by SCENARIO_DEPTH_MAX; this is a second fence
    if (isAlias(node)) node = node.resolve(doc) ?? node
    let next: unknown
    let nextKey: Node | null = null
    if (isMap(node)) {
      const pair = node.items.find((p) => isScalar(p.key) && String(p.key.value) === segment)
      if (pair !== undefined) {
        next = pair.value ?? pair.key
        nextKey = pair.key as Node
      }
    } else if (isSeq(node)) {
      next = node.items[Number(segment)]
    }
    if (next === undefined || next === null) return { node: node as Node | null, key, exact: false }
    node = next
    key = nextKey
  }
  if (isAlias(node)) return { node, key, exact: true }
  return { node: node as Node | null, key, exact: true }
}

/** A ScenarioError whose issues carry the `line:column` of their node (or of `issue.key` for unknown keys). */
function located(
  file: string, doc: Document.Parsed, at: At, issues: readonly (ScenarioIssue & { key?: string })[], cause?: unknown,
): ScenarioError {
  const placed = issues.map((issue): ScenarioIssue => {
    if (issue.line !== undefined) return issue
    const { key: keyName, ...rest } = issue
    const target = nodeAt(doc, keyName === undefined ? issue.path : `${issue.path}/${keyName.replaceAll('~', '~0').replaceAll('/', '~1')}`)
    const node = keyName !== undefined && target.key !== null && target.exact ? target.key : target.node
    const offset = node?.range?.[0] ?? 0
    return { ...rest, ...at(offset) }
  })
  return new ScenarioError(file, limitIssues(sortIssues(placed)), cause === undefined ? undefined : { cause })
}

function sortIssues(issues: readonly ScenarioIssue[]): ScenarioIssue[] {
  const seen = new Set<string>()
  return [...issues]
    .sort((a, b) => (a.line ?? 0) - (b.line ?? 0) || (a.column ?? 0) - (b.column ?? 0))
    .filter((issue) => {
      const id = `${issue.line}:${issue.column}:${issue.path}:${issue.reason}`
      if (seen.has(id)) return false
      seen.add(id)
      return true
    })
}

function limitIssues(issues: ScenarioIssue[]): ScenarioIssue[] {
  if (issues.length <= SCENARIO_ISSUES_MAX) return issues
  const rest = issues.length - SCENARIO_ISSUES_MAX
  const last = issues[SCENARIO_ISSUES_MAX - 1]
  const summary: ScenarioIssue = { code: last?.code ?? 'SCHEMA', path: '', reason: `… and ${rest} more ${rest === 1 ? 'problem' : 'problems'}` }
  return [...issues.slice(0, SCENARIO_ISSUES_MAX), summary]
}

// ---------------------------------------------------------------------------------------------
// Schema errors → issues

/** A schema issue; `key` names the unknown key of an `additionalProperties` error (the loader points at it). */
export type SchemaIssue = ScenarioIssue & { key?: string }

/**
 * One issue per meaningful ajv error: errors inside a failed `oneOf`'s branches, `if` wrappers,
 * `discriminator` tag errors (the tag's own `enum` reports them) and enum errors of a value of the wrong
 * type are dropped; the rest get a message naming the expected value.
 */
export function schemaIssues(errors: readonly ErrorObject[]): SchemaIssue[] {
  const branchSchemas = new Set<unknown>()
  for (const error of errors) {
    if (error.keyword === 'oneOf' && Array.isArray(error.schema)) for (const branch of error.schema) collectSchemas(branch, branchSchemas)
  }
  // A value of the wrong type also fails its enum/const; the type error alone says what is wrong.
  const wrongType = new Set(errors.filter((error) => error.keyword === 'type').map((error) => error.instancePath))
  return errors
    .filter((error) => error.keyword !== 'if' && error.keyword !== 'discriminator' && !branchSchemas.has(error.parentSchema))
    .filter((error) => !((error.keyword === 'enum' || error.keyword === 'const') && wrongType.has(error.instancePath)))
    .map((error): SchemaIssue => {
      const base = { code: 'SCHEMA' as const, path: error.instancePath }
      if (error.keyword === 'additionalProperties') {
        const name = String((error.params as { additionalProperty: string }).additionalProperty)
        return { ...base, key: name, reason: `has unknown key ${JSON.stringify(name)}${keyHint(name, error.parentSchema)}` }
      }
      return { ...base, reason: schemaReason(error) }
    })
}

function collectSchemas(schema: unknown, into: Set<unknown>): void {
  const stack: unknown[] = [schema]
  while (stack.length > 0) {
    const item = stack.pop()
    if (typeof item !== 'object' || item === null || into.has(item)) continue
    into.add(item)
    stack.push(...Object.values(item))
  }
}

function schemaReason(error: ErrorObject): string {
  const expected = (error.parentSchema as { 'x-expected'?: unknown } | undefined)?.['x-expected']
  const got = ` (got ${preview(error.data)})`
  switch (error.keyword) {
    case 'type': return `must be ${String((error.params as { type: string }).type).split(',').join(' or ')}${got}`
    case 'enum': {
      if (typeof expected === 'string') return `must be ${expected}${got}`
      const allowed = (error.params as { allowedValues: unknown[] }).allowedValues
      return `must be one of ${allowed.map((v) => JSON.stringify(v)).join(', ')}${got}`
    }
    case 'const': if (typeof expected === 'string') return `${expected}${got}`
      return `must be ${JSON.stringify((error.params as { allowedValue: unknown }).allowedValue)}${got}`
    case 'required': if (typeof expected === 'string') return expected
      return `must have the key ${JSON.stringify((error.params as { missingProperty: string }).missingProperty)}`
    case 'oneOf': return typeof expected === 'string' ? `must have ${expected}` : `${error.message ?? 'is invalid'}${got}`
    case 'pattern': case 'minimum': case 'maximum': case 'exclusiveMinimum': case 'minLength': case 'maxLength':
      return `${error.message ?? 'is invalid'}${got}`
    default: return error.message ?? 'is invalid'
  }
}

function preview(value: unknown): string {
  if (Array.isArray(value)) return 'a list'
  if (typeof value === 'object' && value !== null) return 'a mapping'
  const text = JSON.stringify(value) ?? String(value)
  return text.length > 60 ? `${text.slice(0, 57)}…` : text
}

/** ` (did you mean "x"?)` for a near miss, else the allowed keys when there are few. */
function keyHint(name: string, parentSchema: unknown): string {
  const properties = (parentSchema as { properties?: Record<string, unknown> } | undefined)?.properties
  if (properties === undefined) return ''
  const keys = Object.keys(properties)
  let best: string | null = null
  let bestDistance = Number.POSITIVE_INFINITY
  for (const key of keys) {
    const d = editDistance(name.toLowerCase(), key.toLowerCase())
    if (d < bestDistance) {
      best = key
      bestDistance = d
    }
  }
  if (best !== null && bestDistance <= Math.max(2, Math.floor(best.length / 4))) return ` (did you mean ${JSON.stringify(best)}?)`
  return keys.length <= 24 ? `; allowed keys: ${keys.join(', ')}` : ''
}

/** Levenshtein distance, bounded: names longer than 64 code units are compared by their first 64. */
function editDistance(a: string, b: string): number {
  const x = a.slice(0, 64)
  const y = b.slice(0, 64)
  let previous = Array.from({ length: y.length + 1 }, (_, j) => j)
  for (let i = 1; i <= x.length; i++) {
    const current = [i]
    for (let j = 1; j <= y.length; j++) {
      const cost = x[i - 1] === y[j - 1] ? 0 : 1
      current[j] = Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, (previous[j - 1] ?? 0) + cost)
    }
    previous = current
  }
  return previous[y.length] ?? 0
}
