/**
 * Mutant-killing tests for the world-truth checks WORLD-01 … WORLD-03 (`src/checker/world.ts`, lines 150-249).
 * Pins: the not-evaluated reasons without a world record or a request capture; WORLD-01's exact capture and log
 * relabel messages; WORLD-02's exact capacity messages (a wrong capacity, no capacity) and the capacity-fault
 * exemption reason; WORLD-03's exact offload messages (too few images removed, the wrong images removed).
 */
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RunManifest } from '@compaction-sim/core'
import { checkLog } from '../../src/checker/run.ts'
import { tempDir } from '../cli/run-sim.ts'
import { runOf, type RawEvent, type Run } from './world-runs.ts'

const SCENARIOS = {
  overflow: 'scenarios/faults/fault-01-overflow-thrown.yaml',
  transient: 'scenarios/faults/fault-16-transient-retry.yaml',
  offload: 'scenarios/faults/fault-12-image-offload-required.yaml',
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
  expect(result.internalErrors).toEqual([])
  return result.violations.filter((v) => v.id.startsWith('WORLD-')).map((v) => `${v.id}@${v.seq}: ${v.message}`)
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


const coverageOf = async (run: Run, opts: { requests: boolean; world: boolean }): Promise<string[]> => {
  const result = await checkLog(run.events, {
    dialect: 'seed', manifest: run.manifest,
    ...(opts.requests ? { requests: run.requests } : {}),
    ...(opts.world ? { world: run.world } : {}),
  })
  if (result.kind !== 'report') throw result.error
  expect(result.internalErrors).toEqual([])
  return result.coverage.filter((c) => c.id.startsWith('WORLD-')).map((c) => `${c.id} ${c.status}: ${c.reason ?? ''}`)
}

const six = (text: string): string[] => ['01', '02', '03', '04', '05', '06'].map((n) => `WORLD-${n} ${text}`)

describe('world checks: applicability', () => {
  it('without a world record every WORLD check is not evaluated, naming the missing world record', async () => {
    expect(await coverageOf(get('pressure'), { requests: true, world: false })).toEqual(
      six('not-evaluated: no world record (sim run writes <slug>.world.json; pass sim check --world)'))
  })

  it('with a world record but no request capture every WORLD check is not evaluated, naming the missing capture', async () => {
    expect(await coverageOf(get('pressure'), { requests: false, world: true })).toEqual(
      six('not-evaluated: no request capture (the world is joined to the log through it)'))
  })
})

describe('WORLD-01 messages', () => {
  it('a capture relabelling the world\'s 400 overflow names the world answer and the captured code', async () => {
    const run = get('overflow')
    const failed = run.requests.find((r) => r.failureCode === 'CONTEXT_WINDOW_EXCEEDED')
    if (failed === undefined) throw new Error('no overflow in the capture')
    expect(failed.index).toBe(2)
    failed.failureCode = 'SERVER'
    expect(await judge(run)).toEqual([
      'WORLD-01@42: world request #2 (conversation, mock-8k) answered CONTEXT_WINDOW_EXCEEDED (HTTP 400); the capture records request #2 as SERVER',
    ])
  })

  it('a log llm/retry relabelling the world\'s 503 names the world answer, the logged code and the event type', async () => {
    const run = get('transient')
    const retry = firstOf(run, 'llm/retry')
    expect(retry.seq).toBe(21)
    ;(retry.data['failure'] as { code: string }).code = 'RATE_LIMIT'
    expect(await judge(run)).toEqual([
      "WORLD-01@21: world request #1 (conversation, mock-8k) answered SERVER (HTTP 503); the log records this attempt's failure as RATE_LIMIT (llm/retry)",
    ])
  })
})

describe('WORLD-02 messages', () => {
  it('a request/context capacity other than the true window names the route, both capacities', async () => {
    const run = get('pressure')
    for (const route of run.world.routes) if (route.contextWindow !== null) route.contextWindow += 1000
    expect(await judge(run)).toEqual([
      "WORLD-02@5: request/context gives route openai/mock-1k capacity 1000; the world's true window is 2000",
    ])
  })

  it('a request/context without a capacity says "no capacity"', async () => {
    const run = get('pressure')
    const first = firstOf(run, 'request/context')
    expect(first.seq).toBe(5)
    delete first.data['contextWindow']
    expect(await judge(run)).toEqual([
      "WORLD-02@5: request/context gives route openai/mock-1k no capacity; the world's true window is 1000",
    ])
  })

  it('a declared capacity fault makes WORLD-02 not applicable, naming the fault kind', async () => {
    const run = get('pressure')
    const manifest = JSON.parse(await readFile(run.manifest as string, 'utf8')) as RunManifest
    manifest.faults.push({ id: 'switch', kind: 'FAULT-44', target: 'conversation', when: { occurrence: 1 } } as RunManifest['faults'][number])
    run.manifest = manifest
    const coverage = await coverageOf(run, { requests: true, world: true })
    expect(coverage.filter((c) => c.startsWith('WORLD-02'))).toEqual(['WORLD-02 not-applicable: the run declares capacity fault FAULT-44'])
  })
})

describe('WORLD-03 messages', () => {
  it('a retry removing too few images names the demand, the retry\'s image count, removed count and the expected count', async () => {
    const run = get('offload')
    const rejected = run.world.requests.find((r) => r.failureClass === 'IMAGE_OFFLOAD_REQUIRED')
    if (rejected === undefined) throw new Error('no offload demand')
    expect(rejected.images.length).toBe(2)
    rejected.offloadImages = 2
    expect(await judge(run)).toEqual([
      'WORLD-03@20: world request #1 (conversation, mock-vision) answered IMAGE_OFFLOAD_REQUIRED (HTTP 400) demanding offloadImages 2 of 2 images; its retry, world request #2, carries 1 images (1 removed), expected 0',
    ])
  })

  it('a retry removing the newest image instead of the oldest says "not the oldest ones"', async () => {
    const run = get('offload')
    const demand = run.world.requests.find((r) => r.failureClass === 'IMAGE_OFFLOAD_REQUIRED')
    const retry = run.world.requests[(demand?.index ?? 0) + 1]
    if (demand === undefined || retry === undefined) throw new Error('no retry after the offload demand')
    retry.images = demand.images.slice(0, -1)
    expect(await judge(run)).toEqual([
      'WORLD-03@20: world request #1 (conversation, mock-vision) answered IMAGE_OFFLOAD_REQUIRED (HTTP 400) demanding offloadImages 1 of 2 images; its retry, world request #2, carries 1 images (1 removed), not the oldest ones',
    ])
  })

  it('a retry carrying no images after a demand for one counts every image of the rejected request as removed', async () => {
    const run = get('offload')
    const demand = run.world.requests.find((r) => r.failureClass === 'IMAGE_OFFLOAD_REQUIRED')
    const retry = run.world.requests[(demand?.index ?? 0) + 1]
    if (demand === undefined || retry === undefined) throw new Error('no retry after the offload demand')
    retry.images = []
    expect(await judge(run)).toEqual([
      'WORLD-03@20: world request #1 (conversation, mock-vision) answered IMAGE_OFFLOAD_REQUIRED (HTTP 400) demanding offloadImages 1 of 2 images; its retry, world request #2, carries 0 images (2 removed), expected 1',
    ])
  })
})

describe('WORLD-02 applicability', () => {
  it('without a world record a declared capacity fault still leaves WORLD-02 not evaluated; with one and no fault it is evaluated', async () => {
    const run = get('pressure')
    expect((await coverageOf(run, { requests: true, world: true })).filter((c) => c.startsWith('WORLD-02'))).toEqual(['WORLD-02 evaluated: '])
    const manifest = JSON.parse(await readFile(run.manifest as string, 'utf8')) as RunManifest
    manifest.faults.push({ id: 'switch', kind: 'FAULT-44', target: 'conversation', when: { occurrence: 1 } } as RunManifest['faults'][number])
    run.manifest = manifest
    expect((await coverageOf(run, { requests: true, world: false })).filter((c) => c.startsWith('WORLD-02'))).toEqual([
      'WORLD-02 not-evaluated: no world record (sim run writes <slug>.world.json; pass sim check --world)',
    ])
  })
})
