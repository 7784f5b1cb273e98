/**
 * INV-09's crash-repair rule (§11.4, §12.0 "repair run"): the closers restore writes before `session/end-seed`
 * answer every tool call of the interrupted turn that had no result exactly once. A call left unanswered is
 * reported at the repair `turn/end {interrupted}`; a second answer at that answer. The base is the valid
 * `crash-mid-step` log (torn after call_a's `tool/call` #12; repair #13 … #16, end-seed #17); every edit below is
 * written out by hand (the fixtures' `insertEvents` / `removeEvents` only renumber), so the expectations do not
 * come from core's `repairClosers`.
 */
import type { LogEvent, RunManifest } from '@compaction-sim/core'
import { insertEvents, removeEvents, validConformanceLogs } from '@compaction-sim/fixtures'
import { describe, expect, it } from 'vitest'
import { checkLog } from '../../src/checker/run.ts'
import { found, reportOf } from './support.ts'

const BASE = validConformanceLogs().find((l) => l.name === 'crash-mid-step')
if (BASE === undefined) throw new Error('the crash-mid-step conformance log is missing')
const MANIFEST: RunManifest | null = BASE.manifest ?? null

/** crash-mid-step, after checking the repair run is where these tests expect it. */
function crashLog(): LogEvent[] {
  const events = structuredClone(BASE?.events ?? [])
  expect(events.slice(12, 18).map((e) => e.type))
    .toEqual(['tool/call', 'tool/result', 'tool/result', 'step/end', 'turn/end', 'session/end-seed'])
  return events
}

/** A real (non-synthetic) tool result for call_a in step 1.1, as the tool would have appended it before the crash. */
function realResultA(): LogEvent {
  return {
    seq: 0, time: 0, type: 'tool/result', surfaceOp: 'append', sourceEventSeqs: [12],
    data: {
      turn: 1, step: 1,
      message: {
        id: 'm-t-a', role: 'user', source: { kind: 'tool', callId: 'call_a' },
        content: [{ type: 'tool-result', toolCallId: 'call_a', content: [{ type: 'text', text: 'contents of a.txt' }] }],
      },
    },
  } as unknown as LogEvent
}

/** The synthetic OUTCOME_UNKNOWN result #13 for call_a again, with a fresh message id. */
function secondUnknownA(events: readonly LogEvent[]): LogEvent {
  const copy = structuredClone(events[13]) as LogEvent & { data: { message: { id: string } } }
  copy.data.message.id = 'interrupted-call_a-14'
  return copy
}

async function check(events: readonly LogEvent[], manifest: RunManifest | null = MANIFEST): Promise<ReturnType<typeof reportOf>> {
  return reportOf(await checkLog([...events], { dialect: 'seed', manifest }))
}

/** `seq: message` of every INV-09 violation of a report. */
const inv09 = (r: ReturnType<typeof reportOf>): string[] =>
  r.violations.filter((v) => v.id === 'INV-09').map((v) => `${v.seq}: ${v.message}`)

describe('INV-09: a crash-repair run answers every unanswered call of the interrupted turn exactly once', () => {
  it('INV-09: a repair run answering call_a (OUTCOME_UNKNOWN) and call_b (NOT_STARTED) once each is clean', async () => {
    expect((await check(crashLog())).violations).toEqual([])
  })

  it('INV-09: a repair run that leaves call_b unanswered is reported at its turn/end', async () => {
    const r = await check(removeEvents(crashLog(), [14]))
    expect(found(r)).toEqual(['INV-09@15'])
    expect(inv09(r)).toEqual(['15: the crash-repair run closes turn 1 leaving 1 tool call(s) unanswered: call_b (step 1); repair answers ' +
      'every call of the interrupted turn that had no result exactly once before its turn/end (§11.4)'])
  })

  it('INV-09: a repair run with no results names every unanswered call, with the tool/call it saw', async () => {
    const r = await check(removeEvents(crashLog(), [13, 14]))
    expect(found(r)).toEqual(['INV-09@14'])
    expect(inv09(r)[0]).toContain('leaving 2 tool call(s) unanswered: call_a (step 1, tool/call #12), call_b (step 1)')
  })

  it('INV-09: the same synthetic result written twice is reported at the second', async () => {
    const events = crashLog()
    const r = await check(insertEvents(events, 14, [secondUnknownA(events)]))
    expect(inv09(r)).toEqual(['14: synthetic repair result answers call call_a a second time (#13 already answered it): a repair run ' +
      'answers each unanswered call exactly once (§11.4)'])
  })

  it('INV-09: a synthetic result for a call the tool answered before the crash is a second answer', async () => {
    const r = await check(insertEvents(crashLog(), 13, [realResultA()]), null)
    expect(inv09(r)).toEqual(['14: synthetic repair result answers call call_a a second time (#13 already answered it): a repair run ' +
      'answers each unanswered call exactly once (§11.4)'])
  })

  it('INV-09: a repair run that answers only what the tool left open is clean', async () => {
    const r = await check(insertEvents(removeEvents(crashLog(), [13]), 13, [realResultA()]), null)
    expect(r.violations).toEqual([])
  })

  it('INV-09: an interrupted turn/end that no end-seed follows is no repair run, so the repair rule does not judge it', async () => {
    const r = await check(removeEvents(crashLog().slice(0, 17), [14]), null)
    expect(inv09(r)).toEqual([])
  })
})
