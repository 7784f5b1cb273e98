/**
 * What a check run needs besides the log (§1.1, §12.0): the run manifest (found next to the log when not
 * given), the policy and pruner specs resolved from it or from the defaults, and the optional request
 * capture. Both files are boundaries: they are validated here, and a malformed one is an input error
 * naming `file:line` and the field, never a crash.
 */
import { readFile, stat } from 'node:fs/promises'
import { basename, dirname, join } from 'node:path'
import {
  CompactionConfigError, PRUNE_MARKER, PruneConfigError, resolveCompactionConfig, resolvePruneConfig,
  type CapturedRequest, type Dialect, type RunManifest,
} from '@compaction-sim/core'
import { routeKeyOf } from './model.ts'
import type { RunInputs } from './types.ts'

/**
 * The rc.8 pruner marker (§14.1 "Pruning"): 39 code points of the §5.1 shape, as the released
 * `dsh-compaction-tool-result-pruner@0.1.0-rc.8` writes it.
 */
export const RC8_PRUNE_MARKER = '\n\n[... tool result middle pruned ...]\n\n'

/** The prune marker of a dialect (§5.1 for the seed, §14.1 for rc.8). */
export function pruneMarkerOf(dialect: Dialect): string {
  return dialect === 'seed' ? PRUNE_MARKER : RC8_PRUNE_MARKER
}

/** Why a run's input could not be read. Codes: the core reader's, plus the two side files. */
export type InputErrorCode = 'LOG' | 'MANIFEST' | 'REQUESTS' | 'WORLD'

/** An unreadable input of a check run (exit 2): where (`file:line`), and why. */
export class CheckInputError extends Error {
  override readonly name = 'CheckInputError'
  readonly code: InputErrorCode
  readonly file: string | null
  readonly line: number | null
  readonly reason: string

  constructor(code: InputErrorCode, reason: string, file: string | null, line: number | null = null, options?: ErrorOptions) {
    super(`${file === null ? '' : line === null ? `${file}: ` : `${file}:${line}: `}${reason}`, options)
    this.code = code
    this.file = file
    this.line = line
    this.reason = reason
  }
}

/**
 * The manifest a checker uses for `logPath` when none is given (§1.1): `<log>.manifest.json` next to it (the
 * log name with `.jsonl` — and a compression suffix — replaced), else `run-manifest.json` in its folder.
 * Returns the first that exists, or null.
 */
export async function discoverManifest(logPath: string): Promise<string | null> {
  const name = basename(logPath)
  const stem = name.replace(/\.jsonl(\.zstd|\.zst)?$/i, '')
  const candidates = [join(dirname(logPath), `${stem === name ? name : stem}.manifest.json`), join(dirname(logPath), 'run-manifest.json')]
  for (const candidate of candidates) {
    try {
      if ((await stat(candidate)).isFile()) return candidate
    } catch {
      // not there (or unreadable): try the next candidate, as §1.1 orders them
    }
  }
  return null
}

/** Reads and validates a run manifest file (§1.1). Throws `CheckInputError('MANIFEST')`. */
export async function loadManifest(path: string): Promise<RunManifest> {
  let text: string
  try {
    text = await readFile(path, 'utf8')
  } catch (error) {
    throw new CheckInputError('MANIFEST', `cannot read the run manifest: ${messageOf(error)}`, path, null, { cause: error })
  }
  let raw: unknown
  try {
    raw = JSON.parse(text)
  } catch (error) {
    throw new CheckInputError('MANIFEST', `the run manifest is not JSON: ${messageOf(error)}`, path, null, { cause: error })
  }
  return validateManifest(raw, path)
}

/** Validates a manifest value (§1.1 `RunManifest`); `file` names it in errors (null for in-memory values). */
export function validateManifest(raw: unknown, file: string | null): RunManifest {
  const fail = (field: string, what: string): never => {
    throw new CheckInputError('MANIFEST', `field ${field}: expected ${what} (run manifest, §1.1)`, file)
  }
  if (!isObject(raw)) return fail('(root)', 'one JSON object')
  if (raw['scenario'] !== undefined && typeof raw['scenario'] !== 'string') fail('scenario', 'a string')
  if (raw['compaction'] !== undefined && !isObject(raw['compaction'])) fail('compaction', 'an object (BasicCompactionConfig)')
  if (raw['pruner'] !== undefined && !isObject(raw['pruner'])) fail('pruner', 'an object (ToolResultPruneConfig)')
  const routes = raw['routes'] ?? []
  if (!Array.isArray(routes)) return fail('routes', 'an array')
  routes.forEach((r: unknown, i) => {
    if (!isObject(r) || typeof r['provider'] !== 'string' || typeof r['model'] !== 'string') fail(`routes[${i}]`, '{provider, model, contextWindow?, imageTokens?}')
    const window = (r as Record<string, unknown>)['contextWindow']
    if (window !== undefined && (!Number.isSafeInteger(window) || (window as number) <= 0)) fail(`routes[${i}].contextWindow`, 'a positive integer')
  })
  const faults = raw['faults'] ?? []
  if (!Array.isArray(faults)) return fail('faults', 'an array')
  faults.forEach((f: unknown, i) => {
    if (!isObject(f) || typeof f['kind'] !== 'string' || typeof f['target'] !== 'string') fail(`faults[${i}]`, 'a FaultSpec {id, kind, target, when}')
  })
  const crashes = raw['crashes'] ?? []
  if (!Array.isArray(crashes)) return fail('crashes', 'an array')
  crashes.forEach((c: unknown, i) => {
    if (!isObject(c) || !isSeq(c['afterSeq'])) fail(`crashes[${i}].afterSeq`, 'a seq')
  })
  for (const key of ['explicitRegionStarts', 'explicitSeriesHeaders'] as const) {
    const list = raw[key]
    if (list === undefined) continue
    if (!Array.isArray(list) || !list.every(isSeq)) fail(key, 'an array of seqs')
  }
  return {
    ...(raw as object),
    scenario: typeof raw['scenario'] === 'string' ? raw['scenario'] : '',
    compaction: (raw['compaction'] ?? {}) as RunManifest['compaction'],
    routes: routes as RunManifest['routes'],
    faults: faults as RunManifest['faults'],
  } as RunManifest
}

/**
 * Resolves the run inputs (§12.0): policy and pruner from the manifest when there is one, else the §3.1 and
 * §5.1 defaults (with the dialect's marker). Throws `CheckInputError('MANIFEST')` for a configuration §3.2 or
 * §5.1 rejects.
 */
export function resolveRunInputs(manifest: RunManifest | null, manifestPath: string | null, dialect: Dialect, marker = pruneMarkerOf(dialect)): RunInputs {
  let policy
  try {
    policy = resolveCompactionConfig(manifest?.compaction)
  } catch (error) {
    if (error instanceof CompactionConfigError) throw new CheckInputError('MANIFEST', `compaction: ${error.message}`, manifestPath, null, { cause: error })
    throw error
  }
  let pruner
  try {
    pruner = resolvePruneConfig(manifest?.pruner, marker)
  } catch (error) {
    if (error instanceof PruneConfigError) throw new CheckInputError('MANIFEST', `pruner: ${error.message}`, manifestPath, null, { cause: error })
    throw error
  }
  const manifestCapacity = new Map<string, number>()
  for (const r of manifest?.routes ?? []) {
    if (r.contextWindow !== undefined) manifestCapacity.set(routeKeyOf(r.provider, r.model), r.contextWindow)
  }
  return {
    policySource: manifest === null ? 'defaults' : 'manifest',
    manifestPath,
    manifest,
    policy,
    pruner,
    explicitRegionStarts: new Set(manifest?.explicitRegionStarts ?? []),
    explicitSeriesHeaders: new Set(manifest?.explicitSeriesHeaders ?? []),
    faults: manifest?.faults ?? [],
    crashes: new Set((manifest?.crashes ?? []).map((c) => c.afterSeq)),
    manifestCapacity,
  }
}

/** Reads a request capture file (§1.1, JSONL, one request per line). Throws `CheckInputError('REQUESTS')`. */
export async function loadRequests(path: string): Promise<CapturedRequest[]> {
  let text: string
  try {
    text = await readFile(path, 'utf8')
  } catch (error) {
    throw new CheckInputError('REQUESTS', `cannot read the request capture: ${messageOf(error)}`, path, null, { cause: error })
  }
  const out: CapturedRequest[] = []
  const lines = text.split('\n')
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? ''
    if (line.trim() === '') continue
    let raw: unknown
    try {
      raw = JSON.parse(line)
    } catch (error) {
      throw new CheckInputError('REQUESTS', `not JSON: ${messageOf(error)}`, path, i + 1, { cause: error })
    }
    out.push(validateRequest(raw, path, i + 1))
  }
  return sortRequests(out)
}

/** Validates one captured request (§1.1 `CapturedRequest`) for the fields the checks read. */
export function validateRequest(raw: unknown, file: string | null, line: number | null): CapturedRequest {
  const fail = (field: string, what: string): never => {
    throw new CheckInputError('REQUESTS', `field ${field}: expected ${what} (request capture, §1.1)`, file, line)
  }
  if (!isObject(raw)) return fail('(root)', 'one JSON object per line')
  if (!isSeq(raw['index'])) fail('index', 'a non-negative integer')
  if (!isSeq(raw['logRevisionAtDispatch'])) fail('logRevisionAtDispatch', 'a non-negative integer')
  if (raw['purpose'] !== 'conversation' && raw['purpose'] !== 'compaction') fail('purpose', "'conversation' or 'compaction'")
  if (typeof raw['provider'] !== 'string') fail('provider', 'a string')
  if (typeof raw['model'] !== 'string') fail('model', 'a string')
  const messages = raw['messages']
  if (!Array.isArray(messages)) return fail('messages', 'an array of messages')
  messages.forEach((m: unknown, i) => {
    if (!isObject(m) || typeof m['role'] !== 'string' || !Array.isArray(m['content'])) fail(`messages[${i}]`, 'a message {id, role, content, source}')
  })
  if (raw['tools'] !== undefined && !Array.isArray(raw['tools'])) fail('tools', 'an array')
  if (raw['maxTokens'] !== undefined && typeof raw['maxTokens'] !== 'number') fail('maxTokens', 'a number')
  if (raw['stop'] !== undefined && (!Array.isArray(raw['stop']) || !raw['stop'].every((s) => typeof s === 'string'))) fail('stop', 'an array of strings')
  return raw as unknown as CapturedRequest
}

/** Requests in dispatch order (`index`), stable. */
export function sortRequests(requests: readonly CapturedRequest[]): CapturedRequest[] {
  return [...requests].sort((a, b) => a.index - b.index)
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function isSeq(value: unknown): boolean {
  return Number.isSafeInteger(value) && (value as number) >= 0
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}
