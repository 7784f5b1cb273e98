/**
 * `checkLog`: the programmatic API behind `sim check`. Reads a log (a path, streamed; or in-memory events),
 * resolves the run inputs (manifest found per §1.1, else the §12.0 defaults), folds the log once through the
 * checker model, and returns every violation of §12 with where it was detected. It is total: a corrupt or
 * truncated log yields violations or a typed input error, never a rejection or a hang.
 */
import { anyHardening, hardeningOf, LogError, type CapturedRequest, type Dialect, type RunManifest } from '@compaction-sim/core'
import { Dispatcher, type InternalFailure } from './dispatch.ts'
import { eventItems, fileItems, TornTail, type DroppedTail, type InputItem } from './input.ts'
import { RepairLookahead } from './lookahead.ts'
import type { MeterTaint } from './meter.ts'
import { CheckerModel } from './model.ts'
import { hardenedChecks } from './hardened-policy.ts'
import { HARDENED_CAPACITY_CHECKS } from './hardened-capacity.ts'
import { HARDENED_HEAD_CHECKS } from './hardened-head.ts'
import { HARDENED_ROOM_CHECKS } from './hardened-room.ts'
import { HARDENED_SELECTION_CHECKS } from './hardened-selection.ts'
import { HARDENED_TEXT_CHECKS } from './hardened-text.ts'
import { CHECKS } from './registry.ts'
import {
  CheckInputError, discoverManifest, loadManifest, loadRequests, resolveRunInputs, sortRequests, validateManifest, validateRequest,
} from './run-inputs.ts'
import type { Coverage, PolicySource, RunContext, RunInputs, Violation } from './types.ts'
import type { WorldRecord } from '../provider/world-record.ts'
import { loadWorldRecord, validateWorldRecord, WorldRecordError } from '../world/record-file.ts'

/** Options of `checkLog`. */
export interface CheckOptions {
  dialect: Dialect
  /**
   * The run manifest: a value, a path, `null` for "none" (no discovery), or absent: for a log path, look for
   * `<log>.manifest.json`, then `run-manifest.json` in its folder (§1.1); for in-memory events, none.
   */
  manifest?: RunManifest | string | null
  /** The request capture (§1.1): values or a JSONL path. Enables INV-39's capture part, INV-43 and INV-44. */
  requests?: readonly CapturedRequest[] | string
  /** Extra known log-only types (§14.1 `--known-type`). */
  knownTypes?: Iterable<string>
  /** The prune marker to judge INV-22 with; the dialect's by default (§5.1, §14.1). */
  pruneMarker?: string
  /** The world record (issue #21): a value or a path. Enables WORLD-01 … WORLD-06 (with a capture). */
  world?: WorldRecord | string
}

/** The verdict on one readable log. `ok` is true iff nothing was violated and no check failed internally. */
export interface CheckReport {
  kind: 'report'
  path: string | null
  dialect: Dialect
  /** Event lines read (header record excluded, packed rows expanded, a dropped torn tail excluded). */
  events: number
  ok: boolean
  policySource: PolicySource
  manifestPath: string | null
  /** Violations sorted by seq, then id. */
  violations: Violation[]
  /** Violations dropped beyond the per-id bound. */
  suppressed: number
  coverage: Coverage[]
  tornTail: DroppedTail | null
  /** Where the reference meter's pressure figure stopped being exact, if it did. */
  meterTaint: MeterTaint | null
  /** Checks that threw (bugs in sim; exit 3). */
  internalErrors: InternalFailure[]
}

/** A log (or its manifest or capture) that could not be read: exit 2. */
export interface CheckInputFailure {
  kind: 'input-error'
  path: string | null
  dialect: Dialect
  error: CheckInputError
}

/** What `checkLog` resolves to; it never rejects. */
export type CheckResult = CheckReport | CheckInputFailure

/**
 * Checks one log against every registered invariant (§12) under `options.dialect`.
 * @param source a log path (`.jsonl`, `.jsonl.zstd`, packed rows), or the events themselves (judged as lines)
 */
export async function checkLog(source: string | Iterable<unknown>, options: CheckOptions): Promise<CheckResult> {
  const path = typeof source === 'string' ? source : null
  const dialect = options.dialect
  let inputs: RunInputs
  let requests: CapturedRequest[] | null
  let world: WorldRecord | null
  try {
    inputs = await runInputs(path, options)
    requests = await requestsOf(options.requests)
    world = await worldOf(options.world)
  } catch (error) {
    if (error instanceof CheckInputError) return { kind: 'input-error', path, dialect, error }
    if (error instanceof WorldRecordError) {
      return { kind: 'input-error', path, dialect, error: new CheckInputError('WORLD', error.message.slice(error.file.length + 2), error.file, null, { cause: error }) }
    }
    return internalReport(path, dialect, error)
  }
  const ctx: RunContext = { dialect, inputs, requests, world }
  const model = new CheckerModel(dialect, inputs)
  // Hardened-profile checks (issue #19) join only when a HARD rule is on, so faithful reports stay byte-identical.
  // Each is listed only when its own rule is on (like `hardenedChecks`).
  const hardening = hardeningOf(inputs.policy)
  const checks = anyHardening(hardening)
    ? [...CHECKS, ...[
      ...hardenedChecks(inputs), ...(hardening.oversizedUserText !== null ? HARDENED_TEXT_CHECKS : []),
      ...(hardening.openTurnPrompt !== null ? HARDENED_SELECTION_CHECKS : []),
      ...(hardening.summaryRoom !== null ? HARDENED_ROOM_CHECKS : []),
      ...(hardening.headRefresh !== null ? HARDENED_HEAD_CHECKS : []),
      ...(hardening.capacitySanity !== null ? HARDENED_CAPACITY_CHECKS : []),
    ].sort((a, b) => hardNumber(a.id) - hardNumber(b.id))] // HARD-id order, whichever module owns a check
    : CHECKS
  const dispatcher = new Dispatcher(checks, ctx)
  let alive = true
  const lookahead = new RepairLookahead((item) => {
    if (alive) alive = dispatcher.item(item, model)
  })
  const knownTypes = new Set(options.knownTypes ?? [])
  let events = 0
  let tornTail: DroppedTail | null = null
  const take = (x: InputItem): void => {
    if (x instanceof TornTail) tornTail = x.tail
    else {
      events++
      lookahead.push(x)
    }
  }
  try {
    if (path !== null) {
      await fileItems(path, { dialect, knownTypes, file: path }, { push: take })
    } else {
      for (const x of eventItems(source as Iterable<unknown>, { dialect, knownTypes })) take(x)
    }
  } catch (error) {
    if (error instanceof LogError) {
      const where = error.location
      return { kind: 'input-error', path, dialect, error: new CheckInputError('LOG', error.reason, where.file ?? path, where.line ?? null, { cause: error }) }
    }
    return internalReport(path, dialect, error)
  }
  lookahead.end((seq) => inputs.crashes.has(seq))
  if (alive) dispatcher.end(model)
  const violations = [...dispatcher.violations].sort((a, b) => a.seq - b.seq || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
  const internalErrors = [...dispatcher.internalFailures]
  return {
    kind: 'report',
    path,
    dialect,
    events,
    ok: violations.length === 0 && dispatcher.suppressed === 0 && internalErrors.length === 0,
    policySource: inputs.policySource,
    manifestPath: inputs.manifestPath,
    violations,
    suppressed: dispatcher.suppressed,
    coverage: dispatcher.coverageOf(checks),
    tornTail,
    meterTaint: model.meter.taint,
    internalErrors,
  }
}

async function runInputs(path: string | null, options: CheckOptions): Promise<RunInputs> {
  const given = options.manifest
  let manifest: RunManifest | null = null
  let manifestPath: string | null = null
  if (typeof given === 'string') {
    manifestPath = given
    manifest = await loadManifest(given)
  } else if (given !== undefined && given !== null) {
    manifest = validateManifest(given, null)
  } else if (given === undefined && path !== null) {
    manifestPath = await discoverManifest(path)
    if (manifestPath !== null) manifest = await loadManifest(manifestPath)
  }
  return options.pruneMarker === undefined
    ? resolveRunInputs(manifest, manifestPath, options.dialect)
    : resolveRunInputs(manifest, manifestPath, options.dialect, options.pruneMarker)
}

async function requestsOf(given: CheckOptions['requests']): Promise<CapturedRequest[] | null> {
  if (given === undefined) return null
  if (typeof given === 'string') return loadRequests(given)
  return sortRequests(given.map((r, i) => validateRequest(r, null, i + 1)))
}

async function worldOf(given: CheckOptions['world']): Promise<WorldRecord | null> {
  if (given === undefined) return null
  if (typeof given === 'string') return loadWorldRecord(given)
  const problems = validateWorldRecord(given)
  if (problems.length > 0) throw new WorldRecordError('<world record>', `not a world record: ${problems.slice(0, 5).join('; ')}`)
  return given
}

/** A report for a failure that is a bug in sim (the reader or a resolver threw something untyped). */
function internalReport(path: string | null, dialect: Dialect, error: unknown): CheckReport {
  return {
    kind: 'report', path, dialect, events: 0, ok: false, policySource: 'defaults', manifestPath: null, violations: [], suppressed: 0,
    coverage: [], tornTail: null, meterTaint: null,
    internalErrors: [{ id: 'model', message: error instanceof Error ? `${error.name}: ${error.message}` : String(error) }],
  }
}

/** `n` of a `HARD-n` check id (the hardened checks are listed in this order). */
function hardNumber(id: string): number {
  return Number(id.slice('HARD-'.length))
}
