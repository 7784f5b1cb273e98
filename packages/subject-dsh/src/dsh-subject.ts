/**
 * The released official DSH engine as a subject (`subject: dsh`, issue #7): runs a scenario's transcript through
 * `@deepseek-ai/dsh-*` 0.1.0-rc.8 (agent loop, session store, LLM runtime, token meter, pruner,
 * `BasicCompactionEngine`) against the same mock provider and fault schedule as the reference subject, and writes
 * its `session/event` stream as the log, in the `dsh-0.1.0-rc.8` dialect (§14.1; check it with that dialect).
 *
 * Determinism: the engine's only nondeterminism is UUIDs and `Date.now` (official-engine.md). The seeded UUIDs and
 * the `Promise.withResolvers` polyfill of the DSH recorder (`@compaction-sim/fixtures/record-dsh/*`) are installed
 * once before the packages load; the virtual `Date.now` and the seeded `crypto.randomUUID` are swapped in only for
 * the duration of a session (sessions never overlap: the runner runs one scenario at a time), so the rest of the
 * process keeps the real clock. Same scenario + seed → byte-identical log.
 *
 * Scenarios that need a feature the release lacks are `skipped` with the §14 rule (`dshUnsupportedReason`), never
 * run and passed.
 */
import { writeFile } from 'node:fs/promises'
import { installDeterminism, type DeterminismControl } from '@compaction-sim/fixtures/record-dsh/determinism'
import { installPromiseWithResolvers } from '@compaction-sim/fixtures/record-dsh/polyfill'
import { TokenMeter, type LogEvent, type TurnEndReason } from '@compaction-sim/core'
import {
  worldStream, type ExpectationGaps, type ResolvedScenario, type Subject, type SubjectSessionOptions, type SubjectSessionResult, type SubjectTurnOutcome,
} from '@compaction-sim/sim'

/** The checker dialect of every log this subject writes (§14.1). */
export const DSH_DIALECT = 'dsh-0.1.0-rc.8' as const

/** Event types of the seed that the release never writes, with their §14 rule. */
const SEED_ONLY_EVENTS: Readonly<Record<string, string>> = {
  'system/message': 'D-02',
  'compaction/summary-error': 'D-07',
  'image/offload': 'D-06',
}

/** Faults the dsh subject does not wire (harness limits, not release limits), with the reason. */
const HARNESS_UNSUPPORTED: Readonly<Record<string, string>> = {
  'FAULT-10': 'turn cancellation is not wired into the official agent loop by the dsh subject',
  'FAULT-17': 'stream middleware hooks are not wired into the official runtime by the dsh subject',
  'FAULT-22': 'turn cancellation is not wired into the official agent loop by the dsh subject',
  'FAULT-31': 'an unroutable summarizer is not wired into the official engine by the dsh subject',
  'FAULT-32': 'summary rerouting middleware is not wired into the official runtime by the dsh subject',
  'FAULT-44': 'route switches are not wired into the official agent by the dsh subject',
  'FAULT-16': 'generic transient retries (§1.4.13) need the dsh-llm-retry plugin, which the pinned rc.8 composition does not load',
  'FAULT-09': 'direct API use without the agent loop is not wired for the dsh subject',
  'FAULT-11': 'a live lock needs an injected append fault, which the official session store does not take',
  'FAULT-60': 'append faults need a hook into the official session store, which the dsh subject does not have',
  'FAULT-61': 'append faults need a hook into the official session store, which the dsh subject does not have',
  'FAULT-62': 'append faults need a hook into the official session store, which the dsh subject does not have',
  'FAULT-63': 'append faults need a hook into the official session store, which the dsh subject does not have',
  'FAULT-43': 'a failed engine construction is not caught by the dsh subject (the session would not start)',
  'FAULT-64': 'flush faults need a hook into the official session store, which the dsh subject does not have',
  'FAULT-65': 'flush faults need a hook into the official session store, which the dsh subject does not have',
}

/** Faults whose failure code or event the release lacks (D-06, D-12: no `IMAGE_OFFLOAD_REQUIRED`, no `image/offload`). */
const IMAGE_OFFLOAD_FAULTS: ReadonlySet<string> = new Set(['FAULT-12', 'FAULT-13', 'FAULT-14', 'FAULT-15', 'FAULT-29', 'FAULT-30'])

/**
 * Why the dsh subject cannot run `scenario` (it is then `skipped` with this reason), or null. Release gaps name
 * their §14 rule (D-nn); harness gaps say so and name no rule.
 */
export function dshUnsupportedReason(scenario: ResolvedScenario): string | null {
  if (scenario.dialect !== 'seed') return `D-01: the scenario is written for the ${scenario.dialect} dialect; the dsh subject replays seed scenarios`
  if (scenario.policyConfig.profile !== undefined || scenario.policyConfig.hardening !== undefined) {
    return 'policy profile/hardening: the hardened profile (issue #19) is compaction-sim\'s own policy beyond the protocol; the official engine runs the faithful protocol only (no §14 rule; harness limit)'
  }
  const transcript = scenario.transcript
  if ((transcript.kind === 'inline' || transcript.kind === 'generate') && transcript.volatileSystemPrompt !== undefined) {
    return 'volatileSystemPrompt: the reference subject renders the volatile environment block; the official engine is driven with the fixed transcript prompt (no §14 rule; harness limit)'
  }
  for (const fault of scenario.faults) {
    if (IMAGE_OFFLOAD_FAULTS.has(fault.kind)) {
      return `D-06: ${fault.kind} needs IMAGE_OFFLOAD_REQUIRED and image/offload, which 0.1.0-rc.8 lacks (§14 D-06, D-12)`
    }
    if (fault.target === 'crash') return `${fault.kind}: the crash harness drives the reference subject only (no §14 rule; harness limit)`
    const harness = HARNESS_UNSUPPORTED[fault.kind]
    if (harness !== undefined) return `${fault.kind}: ${harness} (no §14 rule; harness limit)`
  }
  if (scenario.provider.routes.some((r) => r.imageTokens !== null)) return 'D-09: route-declared imageTokens are not read by 0.1.0-rc.8 (§14 D-09, D-12)'
  if (scenario.concurrent.length > 0) {
    return 'concurrent: items (§13.6/§13.7: races at summary-call points, flush, pre-step) are not wired into the official engine by the dsh subject (no §14 rule; harness limit)'
  }
  if (scenario.manual.length > 0) return 'manual compactNow/compactRegion actions are not wired for the dsh subject (no §14 rule; harness limit)'
  let afterReplacement = false
  for (const entry of scenario.expect.events) {
    if (entry.type === 'request/header' && afterReplacement) {
      return 'D-05: the scenario expects a request/header after a replacement, which 0.1.0-rc.8 never writes (§14 D-05)'
    }
    if (entry.type === 'compaction/end' || entry.type === 'compaction/prune') afterReplacement = true
    // An offload the release cannot perform is a missing feature, not only a missing record (D-06, D-12).
    if (entry.type === 'image/offload' && !entry.absent) {
      return 'D-06: the scenario expects image/offload, which 0.1.0-rc.8 never writes (§14 D-06)'
    }
    const data = entry.data
    if (entry.type === 'request/header' && data !== null && (data['reason'] === 'series' || 'startsSeries' in data)) {
      return 'D-05: the scenario expects a series request/header, which 0.1.0-rc.8 never writes (§14 D-05)'
    }
  }
  const counts = scenario.expect.counts
  if ((counts.offloads?.min ?? 0) > 0) return 'D-06: the scenario counts image/offload events, which 0.1.0-rc.8 never writes (§14 D-06)'
  return null
}

/**
 * The `expect` items of `scenario` that a dsh-0.1.0-rc.8 log cannot hold (§14): patterns and counts of events the
 * release never writes (D-07 `compaction/summary-error`, D-02 `system/message`; an absent `image/offload` too),
 * and `compaction/end` error texts that quote seed-framed checkpoint prices (§14.1 "Checkpoint framing": rc.8
 * frames with its own preamble, so its prices differ). The run reports them `not evaluated` and judges the rest;
 * the differential explains the gap (D-07, framing).
 */
export function dshExpectationGaps(): ExpectationGaps {
  return {
    event: (pattern) => {
      const rule = SEED_ONLY_EVENTS[pattern.type]
      if (rule !== undefined) return `§14 ${rule}: 0.1.0-rc.8 never writes ${pattern.type}`
      const error = pattern.data?.['error']
      const text = typeof error === 'string' ? error : error !== null && typeof error === 'object' && !Array.isArray(error)
        ? [error['contains'], error['matches']].filter((v) => typeof v === 'string').join(' ') : ''
      if (pattern.type === 'compaction/end' && text.includes('framed tokens')) {
        return '§14.1 checkpoint framing: the error text quotes seed-framed prices; rc.8 frames with its own preamble'
      }
      return null
    },
    count: (name) => (name === 'summaryErrors' ? '§14 D-07: 0.1.0-rc.8 never writes compaction/summary-error' : null),
  }
}

let determinism: DeterminismControl | null = null
let virtualNow: (() => number) | null = null
let virtualUuid: (() => string) | null = null
let engine: typeof import('./dsh-engine.ts') | null = null

/** Installs the polyfill and seeded UUIDs once, then loads the engine module (which loads the DSH packages). */
async function load(): Promise<{ control: DeterminismControl; engine: typeof import('./dsh-engine.ts') }> {
  if (determinism === null) {
    installPromiseWithResolvers()
    const realNow = Date.now
    const realUuid = globalThis.crypto.randomUUID
    determinism = installDeterminism()
    virtualNow = Date.now
    virtualUuid = globalThis.crypto.randomUUID
    Date.now = realNow
    Object.defineProperty(globalThis.crypto, 'randomUUID', { value: realUuid, writable: true, configurable: true })
  }
  engine ??= await import('./dsh-engine.ts')
  return { control: determinism, engine }
}

/** Runs `body` with the virtual clock and seeded web UUIDs in place, restoring the real ones afterwards. */
async function withVirtualWorld<T>(body: () => Promise<T>): Promise<T> {
  const realNow = Date.now
  const realUuid = globalThis.crypto.randomUUID
  if (virtualNow === null || virtualUuid === null) throw new Error('dsh subject: determinism is not installed')
  Date.now = virtualNow
  Object.defineProperty(globalThis.crypto, 'randomUUID', { value: virtualUuid, writable: true, configurable: true })
  try {
    return await body()
  } finally {
    Date.now = realNow
    Object.defineProperty(globalThis.crypto, 'randomUUID', { value: realUuid, writable: true, configurable: true })
  }
}

/** The official `turn/end` reason in the core's vocabulary (the shapes agree, §1.4.1). */
function turnReasonOf(data: unknown): TurnEndReason {
  const reason = (data as { reason?: TurnEndReason }).reason
  return reason ?? { kind: 'interrupted' }
}

/**
 * Runs one official-engine session and writes its log to `options.logPath` (module doc). `resume` and `onDurable`
 * are not supported (crash scenarios are skipped for this subject).
 * @throws Error for `resume: true`; `DshSessionError` when the engine hangs.
 */
export async function runDshSession(options: SubjectSessionOptions): Promise<SubjectSessionResult> {
  if (options.resume === true) throw new Error('the dsh subject cannot resume a session (crash scenarios are skipped for it)')
  const { control, engine: mod } = await load()
  const ids = worldStream(options.seed, 'ids')
  const sessionId = `sim-${ids.hex(8)}`
  control.reset(`compaction-sim/${options.seed}/${options.scenario.name}`)
  const output = await withVirtualWorld(() => mod.runDshEngine({
    scenario: options.scenario,
    transcript: options.transcript,
    baseUrl: options.baseUrl,
    ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
    hooks: options.hooks ?? {},
    sessionId,
    advance: (ms) => control.advance(ms),
    now: () => control.now(),
  }))
  await writeFile(options.logPath, output.events.map((event) => `${JSON.stringify(event)}\n`).join(''))
  const outcomes: SubjectTurnOutcome[] = []
  for (const event of output.events) {
    if (event.type !== 'turn/end') continue
    const data = event.data as { turn: number }
    outcomes.push({ turn: data.turn, reason: turnReasonOf(event.data) })
  }
  // Cross-check: the core meter in the rc.8 dialect (§14.1) must reproduce the official tokenMeter.measure() figure.
  const ours = new TokenMeter({ events: output.events as unknown as LogEvent[] }, { dialect: DSH_DIALECT }).measure().totalTokens
  const warnings = ours === output.official.totalTokens
    ? []
    : [`the rc.8 meter reads ${ours} tokens but the official tokenMeter.measure() reads ${output.official.totalTokens} (§14.1 metering)`]
  return { outcomes, warnings, requests: output.requests, explicitRegionStarts: [], events: output.events.length, startedAfterTurn: 0 }
}

/** The official-engine subject (`subject: dsh`). */
export const dshSubject: Subject = {
  name: 'dsh',
  dialect: DSH_DIALECT,
  features: ['timeouts'],
  skipReason: dshUnsupportedReason,
  expectationGaps: () => dshExpectationGaps(),
  runSession: (options) => runDshSession(options),
}
