/**
 * The crash harness against real child processes (§13.4, FAULT-50…57): a test child replays the Appendix B
 * log through `EventLog` + `JsonlLogStore` and is killed with SIGKILL right after the crash-point event is
 * fsync'ed. Each case checks the kill, that every acknowledged event is on disk byte for byte and nothing
 * after it, then restores the durable log (§11.4) and checks the restored log with `checkLog` (§12).
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import {
  encodeEvent, JsonlLogStore, readLog, restoreSession, TOOL_NOT_STARTED, TOOL_OUTCOME_UNKNOWN, type LogEvent, type RestoredSession,
} from '@compaction-sim/core'
import { APPENDIX_B_JSONL, fixturePath } from '@compaction-sim/fixtures'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { checkLog } from '../../src/checker/run.ts'
import { CrashPointMatcher, runCrashingSession, type CrashingSessionResult, type CrashPoint } from '../../src/world/crash.ts'

const APPEND_CHILD = fileURLToPath(new URL('./support/append-child.ts', import.meta.url))
const SILENT_CHILD = fileURLToPath(new URL('./support/silent-child.ts', import.meta.url))
const APPENDIX_B = fixturePath(APPENDIX_B_JSONL)

/** Expected state after restore, per the §13.4 table. */
interface CrashCase {
  name: string
  point: CrashPoint
  /** The Appendix B seq of the crash-point event (hand-read from the fixture), or 'last' for the FAULT-57 source. */
  crashSeq: number | 'last'
  source: 'appendix-b' | 'restored-after-fault-50'
  closers: string[]
  endSeed: boolean
  lock: 'free' | 'stale'
  extra?: (restored: RestoredSession) => void
}

const CASES: CrashCase[] = [
  {
    name: 'FAULT-50 after compaction/start: closers, end-seed, stale orphan',
    point: { afterEvent: 'compaction/start', occurrence: 1 }, crashSeq: 51, source: 'appendix-b',
    closers: ['turn/end:interrupted'], endSeed: true, lock: 'stale',
  },
  {
    name: 'FAULT-51 after compaction/summary-error: as FAULT-50',
    point: { afterEvent: 'compaction/summary-error', occurrence: 1 }, crashSeq: 52, source: 'appendix-b',
    closers: ['turn/end:interrupted'], endSeed: true, lock: 'stale',
  },
  {
    name: 'FAULT-51 after an in-bracket image/offload: the offload marks persist',
    point: { afterEvent: 'image/offload', occurrence: 2 }, crashSeq: 53, source: 'appendix-b',
    closers: ['turn/end:interrupted'], endSeed: true, lock: 'stale',
    extra: (r) => expect([...r.log.offloadedIndexes(28)].sort()).toEqual([0, 1]),
  },
  {
    name: 'FAULT-52 after compaction/summary: torn-final summary, surface unchanged',
    point: { afterEvent: 'compaction/summary', occurrence: 1 }, crashSeq: 54, source: 'appendix-b',
    closers: ['turn/end:interrupted'], endSeed: true, lock: 'stale',
    extra: (r) => expect(r.log.nodes.slice(0, 4)).toEqual([2, 3, 10, 15]),
  },
  {
    name: 'FAULT-53 after the checkpoint: surface replaced, stale orphan',
    point: { afterEvent: 'checkpoint', occurrence: 1 }, crashSeq: 55, source: 'appendix-b',
    closers: ['turn/end:interrupted'], endSeed: true, lock: 'stale',
    extra: (r) => expect(r.log.nodes).toEqual([2, 55, 47, 49]),
  },
  {
    name: 'FAULT-54 after compaction/prune: torn-final prune, surface unchanged',
    point: { afterEvent: 'compaction/prune', occurrence: 1 }, crashSeq: 14, source: 'appendix-b',
    closers: ['turn/end:interrupted'], endSeed: true, lock: 'free',
    extra: (r) => expect(r.log.nodes).toEqual([2, 3, 10, 12]),
  },
  {
    name: 'FAULT-55 after compaction/end: complete bracket',
    point: { afterEvent: 'compaction/end', occurrence: 1 }, crashSeq: 56, source: 'appendix-b',
    closers: ['turn/end:interrupted'], endSeed: true, lock: 'free',
  },
  {
    name: 'FAULT-56 mid-step after tool/call: TOOL_OUTCOME_UNKNOWN, step/end, turn/end',
    point: { afterEvent: 'tool/call', occurrence: 1 }, crashSeq: 11, source: 'appendix-b',
    closers: [`tool/result:${TOOL_OUTCOME_UNKNOWN}`, 'step/end', 'turn/end:interrupted'], endSeed: true, lock: 'free',
  },
  {
    name: 'FAULT-56 mid-step before tool/call: TOOL_NOT_STARTED, step/end, turn/end',
    point: { afterEvent: 'assistant/message', occurrence: 1 }, crashSeq: 10, source: 'appendix-b',
    closers: [`tool/result:${TOOL_NOT_STARTED}`, 'step/end', 'turn/end:interrupted'], endSeed: true, lock: 'free',
  },
  {
    name: 'FAULT-57 crash right after a restore wrote session/end-seed: no second end-seed',
    point: { afterEvent: 'session/end-seed', occurrence: 1 }, crashSeq: 'last', source: 'restored-after-fault-50',
    closers: [], endSeed: false, lock: 'stale',
  },
]

/** A closer as `type` or `type:code` (tool result error code, turn/end reason kind). */
function closerLabel(event: LogEvent): string {
  const data = event.data as { message?: { content?: Array<{ type: string }> }; error?: { code?: string }; reason?: { kind?: string } }
  if (event.type === 'tool/result') return `tool/result:${data.error?.code ?? '?'}`
  if (event.type === 'turn/end') return `turn/end:${data.reason?.kind ?? '?'}`
  return event.type
}

function lines(text: string): string[] {
  return text.split('\n').filter((l) => l !== '')
}

let dir: string
const sources = new Map<CrashCase['source'], string>()
const runs = new Map<string, { result: CrashingSessionResult; logPath: string }>()

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'crash-'))
  sources.set('appendix-b', APPENDIX_B)
  // FAULT-57's source: the Appendix B prefix up to the FAULT-50 crash, as restore left it (closers + end-seed).
  const prefix = (await readLog(APPENDIX_B, { dialect: 'seed' })).events.slice(0, 52)
  const restored = restoreSession(prefix, { dialect: 'seed', clock: () => (prefix.at(-1) as LogEvent).time })
  const fault57 = join(dir, 'fault-57-source.jsonl')
  await writeFile(fault57, restored.log.events.map((e) => `${encodeEvent(e)}\n`).join(''))
  sources.set('restored-after-fault-50', fault57)
  // All children run at once: each costs one tsx startup.
  await Promise.all(CASES.map(async (c, i) => {
    const logPath = join(dir, `case-${i}.jsonl`)
    const result = await runCrashingSession({
      scenarioFile: sources.get(c.source) as string, seed: 1, logPath, crashPoint: c.point, childEntry: APPEND_CHILD,
    })
    runs.set(c.name, { result, logPath })
  }))
  // Ten concurrent tsx start-ups: a few seconds on a quiet 2-core machine; the bound is for a 10× slower one.
}, 300_000)

afterAll(async () => {
  await rm(dir, { recursive: true, force: true })
})

describe('runCrashingSession kills a real child at each crash point of §13.4', () => {
  it.each(CASES)('$name', async (c) => {
    const run = runs.get(c.name)
    if (run === undefined) throw new Error(`no run for ${c.name}`)
    const { result, logPath } = run
    expect(result.error, result.stderr).toBeNull()
    expect(result).toMatchObject({ killed: true, signal: 'SIGKILL', exitCode: null, watchdog: null })

    const sourceText = await readFile(sources.get(c.source) as string, 'utf8')
    const sourceLines = lines(sourceText)
    const crashSeq = c.crashSeq === 'last' ? sourceLines.length - 1 : c.crashSeq
    const sourceEvents = (await readLog(sources.get(c.source) as string, { dialect: 'seed' })).events
    // The acknowledgements are exactly seqs 0..crashSeq, in order, with their types; the last is the crash point.
    expect(result.durableAcked).toEqual(sourceEvents.slice(0, crashSeq + 1).map((e) => ({ seq: e.seq, type: e.type })))
    const crashType = c.point.afterEvent === 'checkpoint' ? 'user/message' : c.point.afterEvent
    expect(result.durableAcked.at(-1)?.type).toBe(crashType)

    // Every acknowledged event is on disk byte for byte, and nothing after the crash point.
    const crashedText = await readFile(logPath, 'utf8')
    expect(crashedText.endsWith('\n')).toBe(true)
    expect(lines(crashedText)).toEqual(sourceLines.slice(0, crashSeq + 1))

    // Reopen the durable log, restore (§11.4) and persist what restore appended, as the runner does.
    const opened = await JsonlLogStore.open(logPath, { dialect: 'seed' })
    expect(opened.tornTail).toBeUndefined()
    const restored = restoreSession(opened.events, { dialect: 'seed', clock: () => (opened.events.at(-1) as LogEvent).time })
    const appended = restored.log.events.slice(opened.events.length)
    if (appended.length > 0) await opened.store.append(appended)
    await opened.store.close()

    expect(restored.closers.map(closerLabel)).toEqual(c.closers)
    expect(restored.endSeed !== null).toBe(c.endSeed)
    const endSeeds = restored.log.events.filter((e) => e.type === 'session/end-seed')
    expect(endSeeds).toHaveLength(1)
    expect(restored.log.events.at(-1)?.type).toBe('session/end-seed')
    expect(restored.log.state.lock.state).toBe(c.lock)
    c.extra?.(restored)

    const report = await checkLog(logPath, { dialect: 'seed', manifest: null })
    if (report.kind !== 'report') throw report.error
    expect(report.violations).toEqual([])
    expect(report.ok).toBe(true)
    expect(report.events).toBe(restored.log.length)
  })

  it('ran one child per case', () => {
    expect([...runs.keys()].sort()).toEqual(CASES.map((c) => c.name).sort())
  })
})

describe('runCrashingSession reports a crash point that never comes', () => {
  it('a child that finishes first is not killed; every event it wrote was acknowledged', async () => {
    const logPath = join(dir, 'never.jsonl')
    const result = await runCrashingSession({
      scenarioFile: APPENDIX_B, seed: 1, logPath, crashPoint: { afterEvent: 'compaction/start', occurrence: 2 }, childEntry: APPEND_CHILD,
    })
    expect(result).toMatchObject({ killed: false, exitCode: 0, signal: null, watchdog: null })
    expect(result.error).toMatch(/exited \(code 0, signal null\) before the crash point/)
    expect(result.durableAcked.map((a) => a.seq)).toEqual(lines(await readFile(APPENDIX_B, 'utf8')).map((_, i) => i))
    expect(await readFile(logPath, 'utf8')).toBe(await readFile(APPENDIX_B, 'utf8'))
  })

  it('a child that never becomes ready is killed by the startup watchdog, which names what it awaited', async () => {
    const result = await runCrashingSession({
      scenarioFile: APPENDIX_B, seed: 1, logPath: join(dir, 'startup.jsonl'), crashPoint: { afterEvent: 'turn/end', occurrence: 1 },
      childEntry: SILENT_CHILD, startupMs: 200,
    })
    expect(result).toMatchObject({
      killed: false, signal: 'SIGKILL', durableAcked: [],
      watchdog: { awaited: 'the crash child to become ready (its ready line on fd 3)', waitedMs: 200 },
    })
    expect(result.error).toBe('watchdog: waited 0.2 s for the crash child to become ready (its ready line on fd 3)')
  }, 120_000)

  it('a child that goes silent after its ready line is killed by the liveness watchdog, counted from ready', async () => {
    // The startup bound is long and the liveness bound short: only the bound from the ready line can fire.
    const result = await runCrashingSession({
      scenarioFile: APPENDIX_B, seed: 1, logPath: join(dir, 'silent.jsonl'), crashPoint: { afterEvent: 'turn/end', occurrence: 1 },
      childEntry: SILENT_CHILD, childArgs: ['ready'], startupMs: 300_000, watchdogMs: 200,
    })
    expect(result).toMatchObject({ killed: false, signal: 'SIGKILL', durableAcked: [], watchdog: { waitedMs: 200 } })
    expect(result.error).toBe(
      'watchdog: waited 0.2 s for the crash child\'s next durable event before the crash point turn/end #1 (0 events acknowledged)',
    )
  }, 120_000)

  it('a slow start-up is not a failure: the liveness bound only starts at the ready line', async () => {
    // The child sleeps longer than the liveness bound before it says ready, then runs to its crash point.
    const result = await runCrashingSession({
      scenarioFile: APPENDIX_B, seed: 1, logPath: join(dir, 'slow-start.jsonl'), crashPoint: { afterEvent: 'compaction/start', occurrence: 1 },
      childEntry: APPEND_CHILD, childArgs: ['sleep-before-ready=6000'], startupMs: 300_000, watchdogMs: 5_000,
    })
    expect(result.error, result.stderr).toBeNull()
    expect(result).toMatchObject({ killed: true, signal: 'SIGKILL', watchdog: null })
    expect(result.durableAcked.at(-1)).toEqual({ seq: 51, type: 'compaction/start' })
  }, 120_000)
})

describe('CrashPointMatcher', () => {
  it('fires once, on the n-th match; checkpoint matches by provenance, not by type', () => {
    const m = new CrashPointMatcher({ afterEvent: 'checkpoint', occurrence: 2 })
    const taken = [
      { seq: 0, type: 'user/message', checkpoint: false },
      { seq: 1, type: 'user/message', checkpoint: true },
      { seq: 2, type: 'user/message', checkpoint: true },
      { seq: 3, type: 'user/message', checkpoint: true },
    ].map((a) => m.take(a))
    expect(taken).toEqual([false, false, true, false])
    expect(() => new CrashPointMatcher({ afterEvent: 'turn/end', occurrence: 0 })).toThrow(/occurrence: expected an integer ≥ 1, got 0/)
  })
})
