/**
 * The versioned conformance pack (`packages/sim/conformance/pack.json`, scenarios under `pack-v1/`) and the
 * conformance levels (issue #11):
 *
 * - `must` — every §12 invariant, every world-truth check (WORLD-01 … WORLD-06: the log against the world
 *   record, issue #21) and §13.4 durability hold in every `should` entry the subject's declared features cover;
 *   the scenarios' other expectations are not judged.
 * - `should` — the same entries, and their `expect` blocks (the §13 faults' outcomes, events, retries) hold.
 * - `may` — also the `may` entries, which exercise optional [seed-only] features (image offload,
 *   `compaction/summary-error`, series headers).
 *
 * A `may` entry with a `feature` (pack v2: the image-offload entries, `imageOffload`) is promoted to `should` for
 * a subject that declares that feature: a subject that does image offload is judged on it at every level.
 *
 * Reading the pack validates it (a `PackError` names the field); judging a report at a level is pure.
 */
import { readFileSync } from 'node:fs'
import { fileURLToPath, pathToFileURL } from 'node:url'
import type { RunReport, ScenarioReport, ScenarioStatus } from '../report/types.ts'
import { plural } from '../plural.ts'
import { SUBJECT_FEATURES, type SubjectFeature } from '../subjects/types.ts'

/** The conformance levels, weakest first. */
export const CONFORMANCE_LEVELS = ['must', 'should', 'may'] as const

/** One conformance level. */
export type ConformanceLevel = (typeof CONFORMANCE_LEVELS)[number]

/** One scenario of the pack: its file (absolute), the level whose run includes it, and its catalog origin. */
export interface PackEntry {
  readonly file: string
  /** `should`: run at every level (expectations judged from `should`); `may`: run only at `may`. */
  readonly level: 'should' | 'may'
  /** The catalog file it was frozen from (provenance only). */
  readonly from: string
  /** A `may` entry runs as a `should` entry for a subject that declares this feature. */
  readonly feature?: SubjectFeature
}

/** A loaded pack. */
export interface ConformancePack {
  readonly name: string
  readonly version: number
  readonly scenarios: readonly PackEntry[]
}

/** The pack manifest shipped with this package. */
export const PACK_MANIFEST = fileURLToPath(new URL('../../conformance/pack.json', import.meta.url))

/** The pack manifest is unreadable or malformed (a packaging bug: exit 3 from the CLI). */
export class PackError extends Error {
  override readonly name = 'PackError'
  readonly code = 'PACK_INVALID'
}

/** Reads and validates the pack at `manifest` (default: the shipped one); entry files become absolute. */
export function loadPack(manifest: string = PACK_MANIFEST): ConformancePack {
  let doc: unknown
  try {
    doc = JSON.parse(readFileSync(manifest, 'utf8'))
  } catch (err) {
    throw new PackError(`${manifest}: cannot be read as JSON: ${err instanceof Error ? err.message : String(err)}`, { cause: err })
  }
  const fail = (path: string, expected: string): never => {
    throw new PackError(`${manifest}: ${path}: expected ${expected}`)
  }
  if (typeof doc !== 'object' || doc === null) return fail('(root)', 'an object')
  const d = doc as Record<string, unknown>
  if (typeof d['name'] !== 'string') fail('name', 'a string')
  if (typeof d['version'] !== 'number' || !Number.isInteger(d['version']) || d['version'] < 1) fail('version', 'an integer ≥ 1')
  if (!Array.isArray(d['scenarios'])) return fail('scenarios', 'an array')
  const scenarios = (d['scenarios'] as unknown[]).map((raw, i): PackEntry => {
    const e = (typeof raw === 'object' && raw !== null ? raw : {}) as Record<string, unknown>
    if (typeof e['file'] !== 'string') fail(`scenarios[${i}].file`, 'a path relative to the manifest')
    if (e['level'] !== 'should' && e['level'] !== 'may') fail(`scenarios[${i}].level`, '"should" or "may"')
    const feature = e['feature']
    if (feature !== undefined && !(SUBJECT_FEATURES as readonly unknown[]).includes(feature)) fail(`scenarios[${i}].feature`, 'a subject feature')
    return {
      file: fileURLToPath(new URL(String(e['file']), pathToFileURL(manifest))),
      level: e['level'] as PackEntry['level'],
      from: typeof e['from'] === 'string' ? e['from'] : '',
      ...(feature === undefined ? {} : { feature: feature as SubjectFeature }),
    }
  })
  return { name: d['name'] as string, version: d['version'] as number, scenarios }
}

/**
 * The entries run at `level` for a subject with `features` (absent = every feature, as `Subject.features`): the
 * `should` entries and the `may` entries promoted by a declared feature, plus every `may` entry at level `may`.
 */
export function entriesAt(pack: ConformancePack, level: ConformanceLevel, features?: readonly SubjectFeature[]): PackEntry[] {
  return pack.scenarios.filter((e) => e.level === 'should' || level === 'may' || promoted(e, features))
}

/** Whether a `may` entry counts as `should` for a subject with `features` (absent = every feature). */
export function promoted(entry: PackEntry, features?: readonly SubjectFeature[]): boolean {
  return entry.feature !== undefined && (features === undefined || features.includes(entry.feature))
}

/**
 * One scenario report judged at `level`: at `must` only the invariants (all of §12 and the WORLD checks, whatever
 * the scenario selected, judged from its violations) and §13.4 durability (`durable`) count, so a subject that keeps every promise but behaves differently
 * under a fault still conforms; at `should`/`may` the report is unchanged. `skipped`/`error` stay as they are.
 */
export function judgeScenario(report: ScenarioReport, level: ConformanceLevel): ScenarioReport {
  if (level !== 'must' || report.status === 'skipped' || report.status === 'error') return report
  const ids = [...new Set(report.violations.map((v) => v.id))].sort()
  const invariants = {
    name: 'invariants',
    passed: ids.length === 0,
    expected: 'no violation of any invariant',
    actual: ids.length === 0 ? 'none' : `${plural(report.violations.length, 'violation')}: ${ids.join(', ')}`,
  }
  const expectations = [invariants, ...report.expectations.filter((e) => e.name === 'durable')]
  const status: ScenarioStatus = expectations.every((e) => e.passed) ? 'passed' : 'failed'
  return { ...report, status, expectations }
}

/** A run report judged at `level` (every scenario by `judgeScenario`, the summary recounted). */
export function judgeReport(report: RunReport, level: ConformanceLevel): RunReport {
  const scenarios = report.scenarios.map((s) => judgeScenario(s, level))
  const count = (s: ScenarioStatus): number => scenarios.filter((r) => r.status === s).length
  return {
    ...report,
    summary: { total: scenarios.length, passed: count('passed'), failed: count('failed'), skipped: count('skipped'), error: count('error') },
    scenarios,
  }
}
