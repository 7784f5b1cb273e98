/**
 * The world-truth checks WORLD-01 … WORLD-06 (issue #21, `src/checker/world.ts`). Each id has a passing case (a
 * real `sim run` of a catalog scenario: its log, capture and world record as written) and a failing case: one
 * realistic lie planted into the log, the capture or the world record, reported under the right id at the
 * right seq. The world record itself is checked for schema validity and byte-determinism across runs.
 */
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { CapturedRequest, RunManifest } from '@compaction-sim/core'
import { checkLog, type CheckReport } from '../../src/checker/run.ts'
import { validateWorldRecord } from '../../src/world/record-file.ts'
import { tempDir } from '../cli/run-sim.ts'
import { runOf, type RawEvent, type Run } from './world-runs.ts'

const SCENARIOS = {
  overflow: 'scenarios/faults/fault-01-overflow-thrown.yaml',
  transient: 'scenarios/faults/fault-16-transient-retry.yaml',
  offload: 'scenarios/faults/fault-12-image-offload-required.yaml',
  summaryOffload: 'scenarios/faults/fault-29-summary-image-offload.yaml',
  pressure: 'scenarios/smoke/basic-pressure.yaml',
} as const

let dir: string
let cleanup: () => Promise<void>
const runs = new Map<string, Run>()

function get(name: keyof typeof SCENARIOS): Run {
  const r = runs.get(name)
  if (r === undefined) throw new Error(`${name} did not run`)
  return structuredClone(r)
}

async function judge(run: Run): Promise<string[]> {
  const result = await checkLog(run.events, { dialect: 'seed', manifest: run.manifest, requests: run.requests, world: run.world })
  if (result.kind !== 'report') throw result.error
  return result.violations.filter((v) => v.id.startsWith('WORLD-')).map((v) => `${v.id}@${v.seq}`)
}

async function report(run: Run): Promise<CheckReport> {
  const result = await checkLog(run.events, { dialect: 'seed', manifest: run.manifest, requests: run.requests, world: run.world })
  if (result.kind !== 'report') throw result.error
  return result
}

const firstOf = (run: Run, type: string, from = 0): RawEvent => {
  const e = run.events.find((x) => x.type === type && x.seq >= from)
  if (e === undefined) throw new Error(`no ${type} from seq ${from}`)
  return e
}

beforeAll(async () => {
  ;({ dir, cleanup } = await tempDir())
  for (const [name, file] of Object.entries(SCENARIOS)) runs.set(name, await runOf(file, join(dir, name)))
}, 300_000)
afterAll(async () => {
  await cleanup()
})

describe('the world record', () => {
  it('validates against its schema and is byte-identical across two runs of the same scenario', async () => {
    for (const r of runs.values()) expect(validateWorldRecord(r.world)).toEqual([])
    const again = await runOf(SCENARIOS.overflow, join(dir, 'again'))
    expect(again.worldText).toBe(get('overflow').worldText)
    const w = get('overflow').world
    expect(w.routes[0]).toMatchObject({ contextWindow: expect.any(Number) as number, prices: { id: expect.any(String) as string } })
    const rejected = w.requests.find((q) => q.failureClass !== null)
    expect(rejected).toMatchObject({ answer: { kind: 'reject', status: 400 }, failureClass: 'CONTEXT_WINDOW_EXCEEDED' })
    const summary = w.requests.find((q) => q.purpose === 'compaction')
    expect(summary?.summaryText?.length ?? 0).toBeGreaterThan(0)
    expect(validateWorldRecord({ ...w, captureOffset: -1 })).not.toEqual([])
  })

  it('every WORLD check is evaluated on a real run, and not evaluated without a world record', async () => {
    const run = get('overflow')
    const covered = (await report(run)).coverage.filter((c) => c.id.startsWith('WORLD-'))
    expect(covered.map((c) => `${c.id} ${c.status}`)).toEqual(['01', '02', '03', '04', '05', '06'].map((n) => `WORLD-${n} evaluated`))
    const none = await checkLog(run.events, { dialect: 'seed', manifest: run.manifest, requests: run.requests })
    if (none.kind !== 'report') throw none.error
    expect(none.coverage.filter((c) => c.id.startsWith('WORLD-')).every((c) => c.status === 'not-evaluated')).toBe(true)
  })
})

describe('world-truth checks', () => {
  it('WORLD-01: a real overflow and a real transient retry pass; a capture or log that relabels the world\'s answer fails', async () => {
    expect(await judge(get('overflow'))).toEqual([])
    expect(await judge(get('transient'))).toEqual([])
    // The capture labels the 400 context_length_exceeded a SERVER failure.
    const relabelled = get('overflow')
    const failed = relabelled.requests.find((r) => r.failureCode === 'CONTEXT_WINDOW_EXCEEDED')
    if (failed === undefined) throw new Error('no overflow in the capture')
    failed.failureCode = 'SERVER'
    expect(await judge(relabelled)).toEqual([`WORLD-01@${failed.logRevisionAtDispatch}`])
    // The log's llm/retry names a class the world never sent (the 503 logged as a rate limit).
    const retried = get('transient')
    const retry = firstOf(retried, 'llm/retry')
    ;(retry.data['failure'] as { code: string }).code = 'RATE_LIMIT'
    expect(await judge(retried)).toEqual([`WORLD-01@${retry.seq}`])
  })

  it('WORLD-02: the routed capacity is the true window; a subject reporting another capacity fails; FAULT-40 exempts the run', async () => {
    expect(await judge(get('pressure'))).toEqual([])
    const wrong = get('pressure')
    const contexts = wrong.events.filter((e) => e.type === 'request/context')
    for (const route of wrong.world.routes) if (route.contextWindow !== null) route.contextWindow += 1000
    expect(await judge(wrong)).toEqual(contexts.map((e) => `WORLD-02@${e.seq}`))
    const missing = get('pressure')
    const first = contexts[0]
    if (first === undefined) throw new Error('no request/context')
    delete (missing.events[first.seq] as RawEvent).data['contextWindow']
    expect((await judge(missing)).filter((v) => v.startsWith('WORLD-02'))).toEqual([`WORLD-02@${first.seq}`])
    // A declared capacity fault (here a route switch, FAULT-44) makes the reported capacity differ by design.
    const exempt = wrong
    const manifest = JSON.parse(await readFile(exempt.manifest as string, 'utf8')) as RunManifest
    manifest.faults.push({ id: 'switch', kind: 'FAULT-44', target: 'conversation', when: { occurrence: 1 } } as RunManifest['faults'][number])
    exempt.manifest = manifest
    expect(await judge(exempt)).toEqual([])
    const coverage = (await report(exempt)).coverage.find((c) => c.id === 'WORLD-02')
    expect(coverage).toMatchObject({ status: 'not-applicable' })
  })

  it('WORLD-03: a real conversation and a real in-bracket offload pass; a retry that drops the wrong or too few images fails', async () => {
    expect(await judge(get('offload'))).toEqual([])
    expect(await judge(get('summaryOffload'))).toEqual([])
    // The world demanded 2 images, the subject offloaded 1.
    const fewer = get('offload')
    const rejected = fewer.world.requests.find((r) => r.failureClass === 'IMAGE_OFFLOAD_REQUIRED')
    if (rejected === undefined) throw new Error('no offload demand')
    expect(rejected.offloadImages).toBe(1)
    rejected.offloadImages = 2
    const offload = firstOf(fewer, 'image/offload')
    expect(await judge(fewer)).toEqual([`WORLD-03@${offload.seq}`])
    // The newest image went instead of the oldest.
    const newest = get('offload')
    const demand = newest.world.requests.find((r) => r.failureClass === 'IMAGE_OFFLOAD_REQUIRED')
    const retry = newest.world.requests[(demand?.index ?? 0) + 1]
    if (demand === undefined || retry === undefined) throw new Error('no retry after the offload demand')
    retry.images = demand.images.slice(0, -1)
    expect(await judge(newest)).toEqual([`WORLD-03@${offload.seq}`])
  })

  it('WORLD-04: a real bracket passes; a canned checkpoint after a failed summary call, or a different text, fails', async () => {
    expect(await judge(get('pressure'))).toEqual([])
    const canned = get('pressure')
    const summary = firstOf(canned, 'compaction/summary')
    const call = [...canned.requests].reverse().find((r) => r.purpose === 'compaction' && r.logRevisionAtDispatch <= summary.seq)
    const served = canned.world.requests.find((w) => w.index === (call?.index ?? -1))
    if (call === undefined || served === undefined) throw new Error('no summary call')
    served.failureClass = 'SERVER'
    served.answer = { kind: 'reject', status: 503 }
    call.outcome = 'error'
    expect(await judge(canned)).toEqual([`WORLD-04@${summary.seq}`])
    const edited = get('pressure')
    const text = (edited.events[summary.seq] as RawEvent).data['summary'] as Array<{ text: string }>
    const checkpoint = edited.events[summary.seq + 1] as RawEvent
    ;(text[0] as { text: string }).text += ' (edited)'
    expect(await judge(edited)).toEqual([`WORLD-04@${summary.seq}`])
    // Only the checkpoint differs from what the world returned.
    const framed = get('pressure')
    const content = (framed.events[summary.seq + 1] as RawEvent).data['content'] as Array<{ text: string }>
    ;(content[1] as { text: string }).text = 'a canned summary'
    expect(await judge(framed)).toEqual([`WORLD-04@${checkpoint.seq}`])
  })

  it('WORLD-05: real usage passes; usage the world did not report, or other figures, fail', async () => {
    expect(await judge(get('pressure'))).toEqual([])
    const other = get('pressure')
    const first = other.world.requests.find((r) => r.purpose === 'conversation' && r.usage !== null)
    if (first?.usage === null || first === undefined) throw new Error('no usage')
    first.usage.outputTokens += 7
    const message = firstOf(other, 'assistant/message', other.requests.find((r) => r.index === first.index)?.logRevisionAtDispatch ?? 0)
    expect(await judge(other)).toEqual([`WORLD-05@${message.seq}`])
    const omitted = get('pressure')
    const target = omitted.world.requests.find((r) => r.index === first.index)
    if (target === undefined) throw new Error('lost the request')
    target.usage = null
    target.usageDelivery = 'omitted'
    expect(await judge(omitted)).toEqual([`WORLD-05@${message.seq}`])
  })

  it('WORLD-06: a real capture passes; a compaction request left out of it, or a retry nobody logged, fails', async () => {
    expect(await judge(get('pressure'))).toEqual([])
    // The capture leaves out its compaction requests (INV-44 would have nothing to judge).
    const partial = get('pressure')
    const compaction = partial.requests.filter((r) => r.purpose === 'compaction')
    expect(compaction.length).toBeGreaterThan(0)
    partial.requests = partial.requests.filter((r) => r.purpose !== 'compaction')
    const found = await judge(partial)
    const six = found.filter((v) => v.startsWith('WORLD-06'))
    expect(six.length).toBe(compaction.length)
    // Each is reported where the next captured (conversation) request was dispatched.
    const next = (c: CapturedRequest): number => partial.requests.find((r) => r.index > c.index)?.logRevisionAtDispatch ?? partial.events.length - 1
    expect(six).toEqual(compaction.map((c) => `WORLD-06@${Math.min(next(c), partial.events.length - 1)}`))
    // The HTTP client retried a 429 by itself: the world saw one more request than the capture shows.
    const hidden = get('overflow')
    const firstServed = hidden.world.requests[0]
    if (firstServed === undefined) throw new Error('no request')
    const retry = { ...structuredClone(firstServed), answer: { kind: 'reject' as const, status: 429 }, failureClass: 'RATE_LIMIT', usage: null, usageDelivery: 'none' as const }
    delete retry.summaryText
    hidden.world.requests = [retry, ...hidden.world.requests.map((r) => ({ ...r, index: r.index + 1 }))]
    hidden.world.requests.forEach((r, i) => { r.index = i })
    const firstCapture = hidden.requests[0]
    expect(await judge(hidden)).toEqual([`WORLD-06@${firstCapture?.logRevisionAtDispatch ?? -1}`])
  })
})
