/**
 * Fault targeting end to end (issue #15 "Done when"): a one-shot fault around a crash fires exactly once over
 * both halves of the run; a declared fault that never fires and a crash point that is never reached each fail
 * their scenario with a message naming the fault and why; `optional: true` passes; `turn`/`step` (a compaction
 * belongs to the step its pre-step check precedes), `atVirtualMs` and `after-timeout` hit the request they name
 * in a real reference session; a bad `when`/`params` exits 2 with `file:line:column`.
 */
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { CapturedRequest } from '@compaction-sim/core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { ScenarioReport } from '../../src/report/types.ts'
import { runScenario } from '../../src/run/run-scenario.ts'
import { ScenarioError } from '../../src/scenario/errors.ts'
import { parseScenario } from '../../src/scenario/load.ts'
import { CLOCK_ORIGIN_MS } from '../../src/world/clock.ts'
import { REPO_ROOT, runSim, tempDir } from '../cli/run-sim.ts'

let tmp: { dir: string; cleanup: () => Promise<void> }
let basic: string

beforeAll(async () => {
  tmp = await tempDir()
  const text = await readFile(join(REPO_ROOT, 'scenarios/smoke/basic-pressure.yaml'), 'utf8')
  basic = text.slice(0, text.indexOf('expect:')) // no expectations: only the faults' own verdict counts
})
afterAll(async () => { await tmp.cleanup() })

/** Runs basic-pressure (3 turns of 2, 2 and 1 steps; one pre-step bracket before turn 3) with `faults` YAML. */
async function runBasic(name: string, faults: string): Promise<{ report: ScenarioReport; requests: CapturedRequest[] }> {
  const file = join(tmp.dir, `${name}.yaml`)
  await writeFile(file, `${basic}faults:\n${faults}`)
  const outDir = join(tmp.dir, name)
  const report = await runScenario(file, { outDir })
  const requests = report.artifacts === undefined ? [] : (await readFile(join(outDir, report.artifacts.requests), 'utf8'))
    .trim().split('\n').map((l) => JSON.parse(l) as CapturedRequest)
  return { report, requests }
}

const failedOf = (r: ScenarioReport): string[] => r.expectations.filter((e) => !e.passed).map((e) => `${e.name}: ${e.actual}`)
const faulted = (requests: CapturedRequest[]): Array<[number, string, string]> =>
  requests.filter((r) => r.failureCode !== undefined).map((r) => [r.index, r.purpose, r.failureCode ?? ''])

describe('fault targeting in a run', () => {
  it('a one-shot summary fault before a crash fires exactly once over both halves (the restored session does not restart counting)', async () => {
    const file = join(REPO_ROOT, 'scenarios/crash/fault-51-after-summary-error.yaml')
    const outDir = join(tmp.dir, 'crash-once')
    const report = await runScenario(file, { outDir })
    expect([report.status, report.faults]).toEqual(['passed', [
      { id: 'summary-fails', kind: 'FAULT-20', fired: 1 }, { id: 'crash', kind: 'FAULT-51', fired: 1 },
    ]])
    const manifest = JSON.parse(await readFile(join(outDir, report.artifacts?.manifest ?? ''), 'utf8')) as { crashes: Array<{ afterSeq: number }> }
    const crashSeq = manifest.crashes[0]?.afterSeq ?? -1
    const requests = (await readFile(join(outDir, report.artifacts?.requests ?? ''), 'utf8')).trim().split('\n')
      .map((l) => JSON.parse(l) as CapturedRequest)
    const compactions = requests.filter((r) => r.purpose === 'compaction')
      .map((r) => [r.logRevisionAtDispatch <= crashSeq ? 'child' : 'restored', r.failureCode ?? 'ok'])
    // One faulted compaction request (the child's, before the crash point); the restored session's compaction is
    // its first: a world that restarted `occurrence` would have failed it too.
    expect(compactions).toEqual([['child', 'SERVER'], ['restored', 'ok']])
  })

  it('a fault that never fires fails the scenario naming it and why; optional: true passes', async () => {
    const fault = '  - { id: f2, kind: FAULT-20, when: { purpose: compaction, occurrence: 3 } }\n'
    const { report } = await runBasic('unfired', fault)
    expect(report.status).toBe('failed')
    expect(failedOf(report)).toEqual([
      'faults.f2: fault f2 (FAULT-20, when purpose=compaction occurrence=3) never fired: the run made 1 compaction request',
    ])
    const optional = await runBasic('unfired-optional', fault.replace('} }', '}, optional: true }'))
    expect([optional.report.status, optional.report.faults]).toEqual(['passed', [{ id: 'f2', kind: 'FAULT-20', fired: 0 }]])
  })

  it('a crash point that is never reached fails the scenario instead of restoring as if it had crashed', async () => {
    const { report } = await runBasic('unreached', '  - { id: late-crash, kind: FAULT-56, when: { afterEvent: tool/call, occurrence: 9 } }\n')
    expect([report.status, report.counts?.crashes, report.faults]).toEqual(['failed', 0, [{ id: 'late-crash', kind: 'FAULT-56', fired: 0 }]])
    expect(failedOf(report)).toEqual([
      'faults.late-crash: fault late-crash (FAULT-56, when afterEvent=tool/call occurrence=9) never reached its crash point: '
      + 'the session ended after 70 durable events, 2 tool/call events among them',
    ])
  })

  it('turn/step hit the named request; a pre-step compaction belongs to the step it precedes', async () => {
    const step = await runBasic('turn-step', '  - { id: t2s2, kind: FAULT-16, when: { turn: 2, step: 2 } }\n')
    // Requests: t1s1, t1s2, t2s1, t2s2 (#3, faulted), its retry (#4), the compaction before turn 3, t3s1.
    expect(faulted(step.requests)).toEqual([[3, 'conversation', 'SERVER']])
    const summary = await runBasic('compaction-turn', '  - { id: pre3, kind: FAULT-20, when: { turn: 3, step: 1 } }\n')
    expect(faulted(summary.requests)).toEqual([[4, 'compaction', 'SERVER']])
    const wrongTurn = await runBasic('compaction-turn-2', '  - { id: pre2, kind: FAULT-20, when: { turn: 2 } }\n')
    expect([faulted(wrongTurn.requests), failedOf(wrongTurn.report)]).toEqual([[], [
      'faults.pre2: fault pre2 (FAULT-20, when purpose=compaction occurrence=1 turn=2) never fired: '
      + 'the run made 1 compaction request, 0 matching all its conditions (turn=2: 0)',
    ]])
  })

  it('atVirtualMs fires on the first request at or after the virtual time the subject reports', async () => {
    const plain = await runBasic('clock-plain', '  - { id: never, kind: FAULT-16, when: { requestIndex: 99 }, optional: true }\n')
    const third = plain.requests[2]
    if (third === undefined) throw new Error('expected a third request')
    const at = third.time - CLOCK_ORIGIN_MS
    const timed = await runBasic('clock-at', `  - { id: at, kind: FAULT-16, when: { atVirtualMs: ${at - 1} } }\n`)
    expect(faulted(timed.requests)).toEqual([[2, 'conversation', 'SERVER']])
    expect((plain.requests[1]?.time ?? Infinity) - CLOCK_ORIGIN_MS).toBeLessThan(at - 1) // the one before was too early
  })

  it('after-timeout: the overflow arrives only after the caller timed out, so the subject sees TIMEOUT and does not recover from it', async () => {
    const late = await runBasic('late', '  - { id: late, kind: FAULT-16, when: { turn: 1, step: 1 }, params: { code: CONTEXT_WINDOW_EXCEEDED, delivery: after-timeout } }\n')
    expect(late.report.faults).toEqual([{ id: 'late', kind: 'FAULT-16', fired: 1 }])
    expect(faulted(late.requests)).toEqual([[0, 'conversation', 'TIMEOUT']])
    // No overflow recovery: the only bracket is the pre-step one before turn 3.
    expect(late.requests.filter((r) => r.purpose === 'compaction').map((r) => r.index)).toEqual([late.requests.length - 2])
  })
})

describe('fault targeting input errors', () => {
  const withFault = (fault: string): string => `${basic}faults:\n${fault}`
  const issuesOf = (text: string): string[] => {
    try {
      parseScenario(text, 'x.yaml')
    } catch (err) {
      if (err instanceof ScenarioError) return err.message.split('\n')
      throw err
    }
    return []
  }

  it('names file:line:column and what was expected for each bad selector or param', () => {
    const line = basic.split('\n').length + 1 // the fault's line, after `faults:`
    /** The issue of `fault` (one YAML flow line) as `x.yaml:<line>:<column of token>: <reason>`. */
    const issue = (fault: string, token: string): string => `x.yaml:${line}:${fault.indexOf(token) + 1}: `
    const cases: Array<[string, string, string]> = [
      ['  - { kind: FAULT-16, when: { turn: 4 } }', '4', '/faults/0/when/turn names turn 4; the transcript has 3 turns'],
      ['  - { kind: FAULT-16, when: { turn: 3, step: 3 } }', '3 }', '/faults/0/when/step names step 3; turn 3 has more than 1 step (+1 for a compaction after the last)'],
      ['  - { kind: FAULT-16, when: { route: gpt-9 } }', 'gpt-9', '/faults/0/when/route names model "gpt-9", which no route serves (declared: "mock-1k")'],
      ['  - { kind: FAULT-16, params: { codes: [SERVER, RATE_LIMIT], count: 3 } }', '3', '/faults/0/params/count must equal the number of codes (2): the i-th firing answers the i-th code'],
      ['  - { kind: FAULT-16, params: { body: oops, status: 502, delivery: after-chunks } }', 'after-chunks',
        '/faults/0/params/delivery must be before-headers or after-timeout with a raw body (a body is a whole HTTP response), got after-chunks'],
      ['  - { kind: FAULT-56, when: { turn: 1 } }', '1 }',
        '/faults/0/when/turn selects provider requests; FAULT-56 is not answered by the provider (FAULT-17, 31, 32, 33 and FAULT-40…84 are not)'],
      ['  - { kind: FAULT-23, params: { delivery: after-timeout } }', 'after-timeout',
        '/faults/0/params/delivery after-timeout applies only to provider failures (FAULT-01…22 and 28…30, not FAULT-17), not to FAULT-23'],
    ]
    for (const [fault, token, reason] of cases) expect(issuesOf(withFault(`${fault}\n`))).toEqual([`${issue(fault, token)}${reason}`])
    expect(issuesOf(withFault('  - { kind: FAULT-16, params: { body: oops } }\n'))[0]).toMatch(/\/faults\/0\/params must set `status` when `body` is given/)
    expect(issuesOf(withFault('  - { kind: FAULT-16, when: { hasImages: maybe } }\n'))[0]).toMatch(new RegExp(`^x\\.yaml:${line}:\\d+: /faults/0/when/hasImages`))
  })

  it('sim run exits 2 for a bad selector', async () => {
    const file = join(tmp.dir, 'bad-turn.yaml')
    await writeFile(file, withFault('  - { kind: FAULT-16, when: { turn: 4 } }\n'))
    const run = await runSim(['run', file, '--out-dir', join(tmp.dir, 'bad')])
    expect(run.exitCode).toBe(2)
    expect(run.stderr).toContain(`error: ${file}:${basic.split('\n').length + 1}:37: /faults/0/when/turn names turn 4; the transcript has 3 turns`)
  })
})
