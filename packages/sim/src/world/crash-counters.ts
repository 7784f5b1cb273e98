/**
 * The world's counts across a crash (fault targeting: counting is global to the scenario). A crash child appends one
 * JSON line `{ logLength, counters }` per change of its world's counts (`WorldCounters`), synchronously, stamped
 * with the session log's length at that moment. The parent keeps the last line written while the log was shorter
 * than the crash-point event's seq + 1 — the same rule `readChildCapture` applies to requests, so the counts agree
 * with the capture: a request dispatched past the crash point (which the crash truncates away) neither counts nor
 * fires. The next process's world starts from those counts, so a one-shot fault that fired before the crash
 * does not fire again after the restore, and the report's `fired` sums both halves.
 */
import { joinProviderCounts } from '../run/drift.ts'
import { appendFileSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import type { CapturedRequest } from '@compaction-sim/core'
import type { Transcript } from '@compaction-sim/fixtures'
import { createWorld, type World, type WorldCounters } from '../run/world.ts'
import type { ResolvedScenario } from '../scenario/resolve.ts'
import { CLOCK_ORIGIN_MS } from './clock.ts'
import { childCaptureWriter, type CrashJob } from './crash.ts'

/** Longest counts file read back, in bytes (a bound on what a misbehaving child can make the parent load). */
export const CHILD_COUNTERS_BYTES_MAX = 64 * 1024 * 1024

/** Appends one counts line (synchronously: it is on disk before the child can block at the crash point). */
export function writeCountersLine(path: string, logLength: number, counters: WorldCounters): void {
  appendFileSync(path, `${JSON.stringify({ logLength, counters })}\n`)
}

/**
 * The counts the next process continues from: the last line with `logLength < durableEvents` (null = the child was
 * not killed: the last line), or undefined when there is none (the child counted nothing before the crash point;
 * then the caller's prior counts stand). A missing file is no line. Throws naming `path:line` for a malformed line.
 */
export async function readChildCounters(path: string, durableEvents: number | null): Promise<WorldCounters | undefined> {
  let text: string
  try {
    text = await readFile(path, 'utf8')
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw err
  }
  if (text.length > CHILD_COUNTERS_BYTES_MAX) throw new Error(`${path}: the child's counts exceed ${CHILD_COUNTERS_BYTES_MAX} bytes`)
  let kept: WorldCounters | undefined
  text.split('\n').forEach((line, i) => {
    if (line === '') return
    let value: unknown
    try {
      value = JSON.parse(line)
    } catch {
      value = null // reported below with the line number
    }
    const entry = value as { logLength?: unknown; counters?: unknown } | null
    if (typeof entry?.logLength !== 'number' || typeof entry.counters !== 'object' || entry.counters === null) {
      throw new Error(`${path}:${i + 1}: expected a counts line {"logLength": n, "counters": {…}}`)
    }
    if (durableEvents !== null && entry.logLength >= durableEvents) return
    kept = entry.counters as WorldCounters
  })
  return kept
}

/** The last log length a capture update reported (the stamp for subjects that never call `observeSession`). */
const lastDispatchLogLength = new WeakMap<World, number>()

/**
 * The crash child's world: `createWorld` from the job's prior counts, persisting every change of its counts to
 * `job.countersPath`, stamped with the session's log length (`observeSession`; else the last capture update's).
 */
export function createChildWorld(job: CrashJob, scenario: ResolvedScenario, transcript: Transcript): World {
  const path = job.countersPath
  const world: World = createWorld({
    scenario, transcript, now: () => CLOCK_ORIGIN_MS,
    ...(job.priorCounters === undefined ? {} : { prior: job.priorCounters as WorldCounters }),
    ...(path === undefined ? {} : {
      onCountersChange: () => { writeCountersLine(path, world.logLength() ?? lastDispatchLogLength.get(world) ?? 0, world.counters()) },
    }),
  })
  return world
}

/** The child's `onRequest`: the capture writer (`childCaptureWriter`), noting each update's log length for `createChildWorld`. */
export function childRequestHook(job: CrashJob, world: World): ((request: CapturedRequest, logLength: number) => void) | undefined {
  const writer = childCaptureWriter(job)
  // Issue #15: the child's mock dies with it, so its provider counts are joined into the capture lines here.
  const capture = writer === undefined ? undefined : joinProviderCounts(world.provider, writer).onRequest
  if (capture === undefined && job.countersPath === undefined) return undefined
  return (request, logLength) => {
    lastDispatchLogLength.set(world, logLength)
    capture?.(request, logLength)
  }
}
