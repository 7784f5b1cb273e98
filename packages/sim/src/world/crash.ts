/**
 * The crash harness (§13.4, FAULT-50…57): a subject runs in a child process that acknowledges every event
 * once its bytes are fsync'ed, and the parent kills it with SIGKILL right after the crash-point event is
 * acknowledged. The child blocks after that acknowledgement until it is killed, so nothing is appended past
 * the crash point; the parent returns every acknowledged event so a caller can prove none was lost.
 *
 * Wire protocol (parent ⇄ child): the job is one JSON argument (`CrashJob`); once the child has loaded its
 * modules and inputs and is about to start the session it writes the ready line (`{"ready":true}`) to fd 3,
 * then one JSON line per durable event (`DurableAck`), synchronously, before it continues. Both sides run the
 * same `CrashPointMatcher`, so parent and child agree on which acknowledgement is the crash point.
 *
 * Wall-clock bounds (issue #18, `watchdog.ts`): none decides a verdict. The parent has two liveness
 * watchdogs — a startup bound from spawn to the ready line, then a bound on the silence between the ready
 * line or the last acknowledgement and the next one — both generous (minutes) and scaled by
 * `SIM_WATCHDOG_SCALE`. When one fires the child is killed and the result carries `watchdog`; the runner
 * turns that into an `error` verdict and never continues from the half-written log. The child's own bound
 * on waiting to be killed at the crash point (`blockMs`) is the same liveness bound; if it elapses the child
 * exits `CRASH_CHILD_WATCHDOG_EXIT`, which the parent reports as a watchdog too.
 *
 * Requirement on a subject run in the child: its `onDurable` must be the store's hook —
 * `JsonlLogStore.open(path, { …, onDurable })` — which runs after the fsync and before the store's next write,
 * one append per write. Acking from `store.append(...).then(…)` is too late: by then group commit may have
 * written later events, so the log would not end at the crash point. The hook passes the whole event, which
 * `isCheckpointEvent` needs for the `checkpoint` crash point.
 *
 * Request capture (§1.1): with `capturePath`, the child appends one JSON line `{ logLength, request }` per
 * capture update — each request at dispatch and again when it finishes — synchronously. The store acknowledges
 * events after their fsync while the session runs on in memory, so a child can dispatch (and even finish)
 * requests from log state past the crash point, which the crash truncates away, and whether a write lands
 * before the block at the crash point is a race. `readChildCapture` therefore keeps exactly the updates
 * written while the log was shorter than the crash-point event's seq + 1 — those provably precede the crash
 * event's append, hence the block — and the last such update per request: a request whose finish came later
 * keeps its dispatch line (outcome `aborted`, `TRANSPORT`: its outcome never became durable). Deterministic.
 */
import { spawn } from 'node:child_process'
import { appendFileSync, writeSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import type { CapturedRequest } from '@compaction-sim/core'
import { childEntryFile, childNodeArgs } from './child-entry.ts'
import { scaledWatchdogMs, watchdogMessage } from './watchdog.ts'

/** Where to crash: after the `occurrence`-th durable event of type `afterEvent` (a §1.4 type, or `checkpoint`). */
export interface CrashPoint {
  /** A §1.4 event type, or `checkpoint`: a checkpoint replacement `user/message` (§1.4.4). */
  afterEvent: string
  /** 1-based count of matching durable events. */
  occurrence: number
}

/** One durable event as acknowledged by the child. `checkpoint` marks a §1.4.4 checkpoint replacement. */
export interface DurableAck {
  seq: number
  type: string
  checkpoint: boolean
}

/** The job handed to a crash child as its only argument (JSON). */
export interface CrashJob {
  scenarioFile: string
  seed: number
  logPath: string
  crashPoint: CrashPoint
  /** Restore the existing log (§11.4) and continue it instead of starting a new session (FAULT-57). */
  resume: boolean
  /** How long the child waits to be killed after acknowledging the crash point before it gives up (exit `CRASH_CHILD_WATCHDOG_EXIT`). */
  blockMs: number
  /** Where the child appends its request-capture lines (absent = the child captures nothing). */
  capturePath?: string
  /** Where the child appends its world's counts (`crash-counters.ts`; absent = it keeps none). */
  countersPath?: string
  /** The world counts the child starts from (`WorldCounters` of an earlier crashed child; absent = fresh). */
  priorCounters?: unknown
}

/** Options of `runCrashingSession`. */
export interface CrashingSessionOptions {
  /** The scenario YAML for the default child; a test child may read another kind of input from it. */
  scenarioFile: string
  seed: number
  /** The session log the child creates and appends to. */
  logPath: string
  crashPoint: CrashPoint
  /**
   * Resume the log at `logPath` instead of starting afresh (default false): the child's first durable
   * events are restore's closers and `session/end-seed`, so a crash point there gives FAULT-57.
   */
  resume?: boolean
  /**
   * Startup watchdog: how long the child may take from spawn to its ready line, in ms, used as given
   * (default `CRASH_STARTUP_MS_DEFAULT` × `SIM_WATCHDOG_SCALE`).
   */
  startupMs?: number
  /**
   * Liveness watchdog: how long the child may stay silent after its ready line or its last acknowledgement
   * before the crash point, and how long it waits to be killed at the crash point, in ms, used as given
   * (default `CRASH_WATCHDOG_MS_DEFAULT` × `SIM_WATCHDOG_SCALE`).
   */
  watchdogMs?: number
  /** Absolute path of the child entry module (default `crash-child.ts` next to this file, `.js` from `dist`). */
  childEntry?: string
  /** Extra arguments after the job JSON (e.g. the user subject module of `subjects/module-crash-child.ts`). */
  childArgs?: readonly string[]
  /** A file the child appends its request-capture lines to (read it with `readChildCapture`); created by the child. */
  capturePath?: string
  /** A file the child appends its world's counts to (`crash-counters.ts`); created by the child. */
  countersPath?: string
  /** The world counts the child starts from (passed through to `CrashJob.priorCounters`). */
  priorCounters?: unknown
}

/** What happened to the child. `durableAcked` lists every acknowledged event in order. */
export interface CrashingSessionResult {
  /** True iff the parent killed the child with SIGKILL at the crash point. */
  killed: boolean
  durableAcked: Array<{ seq: number; type: string }>
  exitCode: number | null
  signal: string | null
  stderr: string
  /** Why the crash point was not reached (watchdog, early exit, bad ack line), or null when `killed`. */
  error: string | null
  /** Set iff a watchdog fired (then `error` is its `watchdog: waited <n> s for …` message): what was awaited, and the bound. */
  watchdog: { awaited: string; waitedMs: number } | null
}

/** Default startup watchdog (spawn → ready line), before scaling: minutes, for tsx startup on a loaded machine. */
export const CRASH_STARTUP_MS_DEFAULT = 300_000

/** Default liveness watchdog (ready line or last ack → next ack; the child's wait to be killed), before scaling. */
export const CRASH_WATCHDOG_MS_DEFAULT = 300_000

/** The child's exit code when its own watchdog (`blockMs`) elapsed at the crash point without the parent's SIGKILL. */
export const CRASH_CHILD_WATCHDOG_EXIT = 4

/** The line a child writes to the ack fd once it is loaded and about to start the session. */
export const CRASH_READY_LINE = '{"ready":true}'

/** The file descriptor the child writes its acknowledgements to. */
export const ACK_FD = 3

/** The stderr kept per child, so a chatty child cannot grow the parent without bound. */
const STDERR_CHARS_MAX = 64_000

/**
 * Decides which durable acknowledgement is the crash point. Fed every ack in order; `take` returns true
 * exactly once, for the `occurrence`-th match. Pure and shared by parent and child.
 */
export class CrashPointMatcher {
  private seen = 0
  private done = false

  constructor(private readonly point: CrashPoint) {
    if (!Number.isInteger(point.occurrence) || point.occurrence < 1) {
      throw new RangeError(`crashPoint.occurrence: expected an integer ≥ 1, got ${point.occurrence}`)
    }
  }

  /** Counts `ack` if it matches; true iff it is the crash point (never again afterwards). */
  take(ack: DurableAck): boolean {
    if (this.done) return false
    const matches = this.point.afterEvent === 'checkpoint' ? ack.checkpoint : ack.type === this.point.afterEvent
    if (!matches) return false
    this.seen++
    if (this.seen < this.point.occurrence) return false
    this.done = true
    return true
  }
}

/**
 * True iff `event` is a checkpoint replacement (§1.4.4): a `user/message` replacing a span with the
 * compact plugin's provenance. Takes any object so it can judge what a subject's durable hook passes.
 */
export function isCheckpointEvent(event: { type: string }): boolean {
  if (event.type !== 'user/message') return false
  const e = event as { surfaceOp?: { op?: unknown }; data?: { source?: { kind?: unknown; plugin?: unknown } } }
  return e.surfaceOp?.op === 'replace' && e.data?.source?.kind === 'plugin' && e.data.source.plugin === 'compact'
}

/** Parses and checks the child's job argument (a process boundary). Throws naming the bad field. */
export function parseCrashJob(text: string | undefined): CrashJob {
  if (text === undefined) throw new Error('crash child: expected the job JSON as the first argument')
  const job = JSON.parse(text) as Partial<CrashJob> | null
  const fail = (field: string, expected: string): never => {
    throw new Error(`crash child: job.${field}: expected ${expected}`)
  }
  if (typeof job !== 'object' || job === null) return fail('(root)', 'an object')
  if (typeof job.scenarioFile !== 'string') fail('scenarioFile', 'a path')
  if (typeof job.logPath !== 'string') fail('logPath', 'a path')
  if (typeof job.seed !== 'number' || !Number.isInteger(job.seed) || job.seed < 0) fail('seed', 'a uint32')
  if (typeof job.blockMs !== 'number' || job.blockMs <= 0) fail('blockMs', 'a positive number')
  if (typeof job.resume !== 'boolean') fail('resume', 'a boolean')
  if (job.capturePath !== undefined && typeof job.capturePath !== 'string') fail('capturePath', 'a path when present')
  if (job.countersPath !== undefined && typeof job.countersPath !== 'string') fail('countersPath', 'a path when present')
  if (job.priorCounters !== undefined && (typeof job.priorCounters !== 'object' || job.priorCounters === null)) {
    fail('priorCounters', 'an object when present')
  }
  const point = job.crashPoint
  if (typeof point !== 'object' || point === null || typeof point.afterEvent !== 'string' || typeof point.occurrence !== 'number') {
    fail('crashPoint', '{ afterEvent: string, occurrence: number }')
  }
  return job as CrashJob
}

/**
 * The child's side of the protocol. `ready()` writes the ready line to fd 3: call it once, after loading
 * everything and right before the session starts (the parent's startup watchdog ends there). `ack(event)`
 * writes the acknowledgement line synchronously to fd 3 and, if it is the crash point, blocks the whole
 * process (Atomics.wait) until the parent's SIGKILL lands. Call it from the store's `onDurable` hook, which
 * runs after the fsync and before the next write. If the parent never kills it within `blockMs`, the child
 * exits `CRASH_CHILD_WATCHDOG_EXIT` naming the crash point.
 */
export function crashAckChannel(job: CrashJob): { ready: () => void; ack: (event: { seq: number; type: string }) => void } {
  const matcher = new CrashPointMatcher(job.crashPoint)
  return {
    ready() {
      writeSync(ACK_FD, `${CRASH_READY_LINE}\n`)
    },
    ack(event) {
      const ack: DurableAck = { seq: event.seq, type: event.type, checkpoint: isCheckpointEvent(event) }
      writeSync(ACK_FD, `${JSON.stringify(ack)}\n`)
      if (!matcher.take(ack)) return
      // Hold the process at the crash point: no further write may start before the SIGKILL.
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, job.blockMs)
      process.stderr.write(`crash child: ${watchdogMessage(`the parent's SIGKILL at the crash point (seq ${ack.seq})`, job.blockMs)}\n`)
      process.exit(CRASH_CHILD_WATCHDOG_EXIT)
    },
  }
}

/**
 * The child's capture writer: `onRequest` for the subject, appending each capture update as one JSON line,
 * synchronously (so it is on disk before the child can block at the crash point). Without `capturePath`, undefined.
 */
export function childCaptureWriter(job: CrashJob): ((request: CapturedRequest, logLength: number) => void) | undefined {
  const path = job.capturePath
  if (path === undefined) return undefined
  return (request, logLength) => { appendFileSync(path, `${JSON.stringify({ logLength, request })}\n`) }
}

/** Longest child capture file read back, in bytes (a bound on what a misbehaving child can make the parent load). */
export const CHILD_CAPTURE_BYTES_MAX = 256 * 1024 * 1024

/**
 * The crashed child's requests from its capture file, in index order (module doc): only updates written while
 * the log had fewer than `durableEvents` events (the crash-point seq + 1; null = the child was not killed, keep
 * all), the last one per request. A missing file means no request was dispatched. Throws naming `path:line`
 * for a line that is not a capture update (a process boundary).
 */
export async function readChildCapture(path: string, durableEvents: number | null): Promise<CapturedRequest[]> {
  let text: string
  try {
    text = await readFile(path, 'utf8')
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return []
    throw err
  }
  if (text.length > CHILD_CAPTURE_BYTES_MAX) throw new Error(`${path}: the child capture exceeds ${CHILD_CAPTURE_BYTES_MAX} bytes`)
  const byIndex = new Map<number, CapturedRequest>()
  text.split('\n').forEach((line, i) => {
    if (line === '') return
    let value: unknown
    try {
      value = JSON.parse(line)
    } catch {
      value = null // reported below with the line number
    }
    const update = value as { logLength?: unknown; request?: Partial<CapturedRequest> } | null
    const request = update?.request
    const logLength = update?.logLength
    if (typeof logLength !== 'number' || typeof request !== 'object' || request === null
      || !Number.isInteger(request.index) || !Array.isArray(request.messages)) {
      throw new Error(`${path}:${i + 1}: expected a capture update {"logLength": n, "request": <captured request, §1.1>}`)
    }
    if (durableEvents !== null && logLength >= durableEvents) return
    byIndex.set(request.index as number, request as CapturedRequest)
  })
  return [...byIndex.keys()].sort((a, b) => a - b).map((index) => byIndex.get(index) as CapturedRequest)
}

/** Parses one acknowledgement line (or the ready line: `'ready'`); returns a message for a malformed one. */
function parseAck(line: string): DurableAck | 'ready' | string {
  if (line === CRASH_READY_LINE) return 'ready'
  try {
    const v = JSON.parse(line) as Partial<DurableAck> | null
    if (v !== null && typeof v === 'object' && typeof v.seq === 'number' && typeof v.type === 'string' && typeof v.checkpoint === 'boolean') {
      return { seq: v.seq, type: v.type, checkpoint: v.checkpoint }
    }
  } catch {
    // A non-JSON line: reported below as a malformed acknowledgement.
  }
  return `malformed acknowledgement line from the crash child: ${JSON.stringify(line.slice(0, 200))}`
}

/**
 * Runs a subject in a child process (`node <childEntry> <job>`, with tsx from source: `world/child-entry.ts`) and kills it with SIGKILL as
 * soon as it acknowledges the crash-point event as durable. Never rejects for child misbehaviour: a watchdog
 * that fires (the child is killed, `killed` false, `watchdog` set), an early exit or a bad ack line are
 * reported in `error`. Rejects if the child cannot be spawned, or with `WatchdogScaleError` for a bad
 * `SIM_WATCHDOG_SCALE` when a default bound is needed.
 */
export function runCrashingSession(options: CrashingSessionOptions): Promise<CrashingSessionResult> {
  const startupMs = options.startupMs ?? scaledWatchdogMs(CRASH_STARTUP_MS_DEFAULT)
  const watchdogMs = options.watchdogMs ?? scaledWatchdogMs(CRASH_WATCHDOG_MS_DEFAULT)
  const entry = options.childEntry ?? childEntryFile(new URL('./crash-child.ts', import.meta.url))
  const job: CrashJob = {
    scenarioFile: options.scenarioFile,
    seed: options.seed,
    logPath: options.logPath,
    crashPoint: options.crashPoint,
    resume: options.resume ?? false,
    blockMs: watchdogMs,
    ...(options.capturePath === undefined ? {} : { capturePath: options.capturePath }),
    ...(options.countersPath === undefined ? {} : { countersPath: options.countersPath }),
    ...(options.priorCounters === undefined ? {} : { priorCounters: options.priorCounters }),
  }
  const matcher = new CrashPointMatcher(options.crashPoint)
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...childNodeArgs(options.childArgs), entry, JSON.stringify(job), ...(options.childArgs ?? [])], {
      stdio: ['ignore', 'ignore', 'pipe', 'pipe'],
    })
    const acks: Array<{ seq: number; type: string }> = []
    let crashed = false
    let ready = false
    let error: string | null = null
    let watchdog: CrashingSessionResult['watchdog'] = null
    let stderr = ''
    let pending = ''
    let timer: NodeJS.Timeout | undefined
    const point = `${options.crashPoint.afterEvent} #${options.crashPoint.occurrence}`
    // (Re)arms the one watchdog: it fires only after `ms` without a sign of life from the child.
    const arm = (ms: number, awaited: () => string): void => {
      clearTimeout(timer)
      timer = setTimeout(() => {
        if (crashed || error !== null) return
        watchdog = { awaited: awaited(), waitedMs: ms }
        error = watchdogMessage(watchdog.awaited, ms)
        child.kill('SIGKILL')
      }, ms)
    }
    const armLiveness = (): void => {
      arm(watchdogMs, () => `the crash child's next durable event before the crash point ${point} (${acks.length} events acknowledged)`)
    }
    const onLine = (line: string): void => {
      if (line === '') return
      const ack = parseAck(line)
      if (ack === 'ready') {
        ready = true
        armLiveness()
        return
      }
      if (typeof ack === 'string') {
        error ??= ack
        child.kill('SIGKILL')
        return
      }
      acks.push({ seq: ack.seq, type: ack.type })
      if (!crashed && error === null && matcher.take(ack)) {
        crashed = true
        clearTimeout(timer)
        if (!child.kill('SIGKILL')) error = 'SIGKILL could not be delivered to the crash child'
        return
      }
      // An acknowledgement is a sign of life (and implies the child got past its start-up).
      ready = true
      if (!crashed) armLiveness()
    }
    child.stderr?.setEncoding('utf8')
    child.stderr?.on('data', (chunk: string) => {
      if (stderr.length < STDERR_CHARS_MAX) stderr += chunk.slice(0, STDERR_CHARS_MAX - stderr.length)
    })
    const ackStream = child.stdio[ACK_FD] as NodeJS.ReadableStream | null | undefined
    ackStream?.setEncoding('utf8')
    ackStream?.on('data', (chunk: string) => {
      pending += chunk
      let newline = pending.indexOf('\n')
      while (newline >= 0) {
        onLine(pending.slice(0, newline))
        pending = pending.slice(newline + 1)
        newline = pending.indexOf('\n')
      }
    })
    arm(startupMs, () => `the crash child to become ready (its ready line on fd ${ACK_FD})`)
    child.on('error', (err) => {
      clearTimeout(timer)
      reject(err)
    })
    child.on('close', (exitCode, signal) => {
      clearTimeout(timer)
      if (pending !== '') onLine(pending)
      const killed = crashed && signal === 'SIGKILL'
      if (crashed && !killed && exitCode === CRASH_CHILD_WATCHDOG_EXIT && watchdog === null) {
        watchdog = { awaited: 'the parent\'s SIGKILL at the crash point (the crash child\'s own watchdog)', waitedMs: watchdogMs }
        error ??= watchdogMessage(watchdog.awaited, watchdogMs)
      }
      const before = ready ? '' : ' (it never sent its ready line)'
      if (!crashed) error ??= `the crash child exited (code ${exitCode}, signal ${signal}) before the crash point ${JSON.stringify(options.crashPoint)}${before}`
      else if (!killed) error ??= `the crash child did not die by SIGKILL (code ${exitCode}, signal ${signal})`
      resolve({ killed, durableAcked: acks, exitCode, signal, stderr, error, watchdog })
    })
  })
}
