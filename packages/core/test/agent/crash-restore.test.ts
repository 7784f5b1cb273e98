/**
 * §13.4 crash faults, one test per FAULT id: the log the loop and engine produce for the Appendix B inputs
 * is truncated right after the named event and restored (§11.4). Expected: repair closers when a turn was
 * open (never a `compaction/*` event, INV-19), exactly one `session/end-seed`, an unmatched start that is
 * stale after it (and live — busy — without it), durable offload marks and replacements unchanged.
 */
import { beforeAll, describe, expect, it } from 'vitest'
import { restoreSession, type RestoredSession } from '../../src/agent/restore.ts'
import { CompactionBusyError } from '../../src/policy/pressure.ts'
import { EventLog } from '../../src/log/event-log.ts'
import type { LogEvent, SessionEvent } from '../../src/log/events.ts'
import { isRepairCloser, TOOL_NOT_STARTED, TOOL_OUTCOME_UNKNOWN } from '../../src/log/lifecycle.ts'
import { TokenMeter } from '../../src/meter/meter.ts'
import { isOffloadPlaceholder } from '../../src/offload/projection.ts'
import { APPENDIX_B_SYSTEM_PROMPT, appendixBSession } from './appendix-b-session.ts'
import { withEngine } from './engine.ts'
import { prompt, say, world, type World } from './harness.ts'

const RESTORE_TIME = 1_700_000_100_000
const clock = (): number => RESTORE_TIME
let produced: readonly LogEvent[] = []

beforeAll(async () => {
  produced = (await appendixBSession()).events
})

/** The seq of the `nth` (0-based) event of `type` in the produced log. */
function seqOf(type: string, nth = 0, where: (e: SessionEvent) => boolean = () => true): number {
  const found = produced.filter((e) => e.type === type && where(e as SessionEvent))[nth]
  if (found === undefined) throw new Error(`the produced log has no ${type} #${nth}`)
  return found.seq
}

/** Restores the log truncated right after `seq`. */
function crashAfter(seq: number): RestoredSession {
  return restoreSession(produced.slice(0, seq + 1), { dialect: 'seed', clock })
}

/** Types written by restore (closers and the end-seed). */
function restoreTail(r: RestoredSession, crashSeq: number): string[] {
  return r.log.events.slice(crashSeq + 1).map((e) => e.type)
}

/** Continues a restored session with one more turn through a new loop instance and engine. */
async function continueTurn(r: RestoredSession, compaction: Parameters<typeof world>[0]['compaction'] = []): Promise<World> {
  const w = world({
    log: r.log, makeEngine: withEngine({ pruner: true }), conversation: [say('continuing')], systemPrompt: () => APPENDIX_B_SYSTEM_PROMPT,
    ...(compaction !== undefined ? { compaction } : {}),
  })
  await w.agent.runTurn(prompt('Continue.'))
  return w
}

/** A live-lock probe in the same lifecycle: the engine's overflow entry point must report busy before writing. */
async function busyInSameLifecycle(seq: number): Promise<unknown> {
  const log = EventLog.fromEvents(produced.slice(0, seq + 1), { dialect: 'seed' })
  const w = world({ log, makeEngine: withEngine({ pruner: true }), conversation: [] })
  const before = log.length
  const outcome = await w.engine?.compactIfNeeded('context-overflow', new AbortController().signal).then(() => null, (err: unknown) => err)
  expect(log.length).toBe(before)
  return outcome
}

describe('§13.4 crash faults (truncate after the event, then restore)', () => {
  it('FAULT-50: after compaction/start — turn/end{interrupted}, end-seed, a stale orphan; a new bracket may open', async () => {
    const at = seqOf('compaction/start')
    expect(await busyInSameLifecycle(at)).toBeInstanceOf(CompactionBusyError)
    const r = crashAfter(at)
    expect(restoreTail(r, at)).toEqual(['turn/end', 'session/end-seed'])
    expect(r.closers.every(isRepairCloser)).toBe(true)
    expect(r.closers.at(-1)?.data).toEqual({ turn: 3, reason: { kind: 'interrupted' } })
    expect(r.closers.map((e) => e.time)).toEqual([produced[at]?.time])
    expect(r.log.state.lock).toMatchObject({ state: 'stale', bracket: { startSeq: at } })
    const w = await continueTurn(r, [say('## Primary Request and Intent\n- merged')])
    const starts = w.ofType('compaction/start')
    expect(starts.map((s) => [s.seq > at, s.data.turn])).toEqual([[false, 3], [true, 4]])
    expect(w.ofType('compaction/end').at(-1)?.data.error).toBeUndefined()
    expect(w.ofType('request/header').at(-1)?.data).toMatchObject({ reason: 'resume', startsSeries: true })
  })

  it('FAULT-51: after compaction/summary-error — as FAULT-50', () => {
    const at = seqOf('compaction/summary-error')
    const r = crashAfter(at)
    expect(restoreTail(r, at)).toEqual(['turn/end', 'session/end-seed'])
    expect(r.log.state.lock.state).toBe('stale')
  })

  it('FAULT-51: after the in-bracket image/offload — the offload marks persist and apply to later requests', async () => {
    const at = seqOf('image/offload', 1)
    const r = crashAfter(at)
    expect(restoreTail(r, at)).toEqual(['turn/end', 'session/end-seed'])
    expect(r.log.state.lock.state).toBe('stale')
    const imageNode = produced.find((e) => e.type === 'user/message' && (e as SessionEvent<'user/message'>).data.content.some((b) => b.type === 'image'))?.seq ?? -1
    expect([...r.log.offloadedIndexes(imageNode)]).toEqual([0, 1])
    const w = await continueTurn(r, [say('## Primary Request and Intent\n- merged')])
    const summaryRequest = w.adapter.requests.find((q) => q.purpose === 'compaction')
    const projected = summaryRequest?.messages.find((m) => m.id === 'm-u2')
    expect(projected?.content.map((b) => b.type)).toEqual(['text', 'text', 'text'])
    expect(projected?.content.slice(1).every((b) => b.type === 'text' && isOffloadPlaceholder(String(b['text'])))).toBe(true)
  })

  it('FAULT-52: after compaction/summary (before its checkpoint) — torn-final summary, surface unchanged, stale orphan', () => {
    const at = seqOf('compaction/summary')
    const r = crashAfter(at)
    expect(restoreTail(r, at)).toEqual(['turn/end', 'session/end-seed'])
    expect(r.log.nodes).toEqual(EventLog.fromEvents(produced.slice(0, at), { dialect: 'seed' }).nodes)
    expect(r.log.state.surface.replaceGeneration).toBe(1)
    expect(r.log.state.lock.state).toBe('stale')
  })

  it('FAULT-53: after the checkpoint (before compaction/end) — surface replaced and model-visible, stale orphan', async () => {
    const at = seqOf('user/message', 0, (e) => typeof e.surfaceOp === 'object')
    const r = crashAfter(at)
    expect(restoreTail(r, at)).toEqual(['turn/end', 'session/end-seed'])
    expect(r.log.nodes).toEqual([2, at, 47, 49])
    expect(r.log.state.lock).toMatchObject({ state: 'stale' })
    const w = await continueTurn(r)
    expect(w.captures[0]?.messages.map((m) => m.id)).toEqual(['m-sys', 'm-ck1', 'm-a4', 'm-t2', 'm-u1'])
  })

  it('FAULT-54: after compaction/prune (before its replacement) — torn-final prune, surface unchanged, meter replays', () => {
    const at = seqOf('compaction/prune')
    const r = crashAfter(at)
    expect(restoreTail(r, at)).toEqual(['turn/end', 'session/end-seed'])
    expect(r.log.nodes).toEqual([2, 3, 10, 12])
    expect(r.log.state.surface.replaceGeneration).toBe(0)
    expect(() => new TokenMeter(r.log, { dialect: 'seed' }).measure()).not.toThrow()
  })

  it('FAULT-55: after compaction/end — a complete bracket, the lock is free', () => {
    const at = seqOf('compaction/end')
    const r = crashAfter(at)
    expect(restoreTail(r, at)).toEqual(['turn/end', 'session/end-seed'])
    expect(r.log.state.lock).toEqual({ state: 'free' })
    expect(r.log.state.openBrackets).toEqual([])
  })

  it('FAULT-56: mid-step with a logged tool/call — TOOL_OUTCOME_UNKNOWN result citing it, step/end, turn/end, end-seed', async () => {
    const at = seqOf('tool/call')
    const r = crashAfter(at)
    expect(restoreTail(r, at)).toEqual(['tool/result', 'step/end', 'turn/end', 'session/end-seed'])
    const result = r.closers[0] as SessionEvent<'tool/result'>
    expect(result.data.error).toEqual({ name: 'ToolOutcomeUnknownError', code: TOOL_OUTCOME_UNKNOWN })
    expect(result.sourceEventSeqs).toEqual([at])
    expect(result.data.message.content[0].isError).toBe(true)
    expect(r.log.state.surface.balanceAt(r.log.nodes.length)).toBe(0)
    const w = await continueTurn(r)
    expect(w.captures[0]?.messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'user', 'user'])
  })

  it('FAULT-56: mid-step before the tool/call — TOOL_NOT_STARTED result without provenance', () => {
    const at = seqOf('assistant/message')
    const r = crashAfter(at)
    expect(restoreTail(r, at)).toEqual(['tool/result', 'step/end', 'turn/end', 'session/end-seed'])
    const result = r.closers[0] as SessionEvent<'tool/result'>
    expect(result.data.error).toEqual({ name: 'ToolNotStartedError', code: TOOL_NOT_STARTED })
    expect(result.sourceEventSeqs).toBeUndefined()
    expect(result.data).toMatchObject({ turn: 1, step: 1 })
  })

  it('FAULT-57: restoring a log that already ends with session/end-seed writes no second one', () => {
    const once = crashAfter(produced.length - 1)
    expect(once.closers).toEqual([])
    expect(once.endSeed?.seq).toBe(produced.length)
    const twice = restoreSession(once.log.events, { dialect: 'seed', clock })
    expect(twice.endSeed).toBeNull()
    expect(twice.closers).toEqual([])
    expect(twice.log.length).toBe(once.log.length)
  })
})
