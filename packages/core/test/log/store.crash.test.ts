/**
 * Acknowledged appends survive a real crash (design §4 items 1 and 5, §1.1): a child process appends
 * through JsonlLogStore and reports each fsync'ed append on stdout; the parent SIGKILLs it at a seeded
 * moment, reopens the log, and checks that every acknowledged seq is present, in order, contiguous from
 * 0, with at most a reported (and repaired) torn tail. Three crash/restart rounds share one log.
 */
import { spawn } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { readLog } from '../../src/log/reader.ts'
import { JsonlLogStore } from '../../src/log/store.ts'
import { FC_SEED } from '../support/arbitraries.ts'

const ROOT = fileURLToPath(new URL('../../../../', import.meta.url))
const CHILD = fileURLToPath(new URL('./fixtures/append-child.ts', import.meta.url))
const ROUNDS = 3
let dir = ''

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'store-crash-'))
})
afterAll(async () => {
  await rm(dir, { recursive: true, force: true })
})

/** Deterministic PRNG (LCG) so the kill points follow FC_SEED. */
function prng(seed: number): () => number {
  let state = seed >>> 0
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0
    return state
  }
}

interface ChildRun {
  acked: number[]
  signal: NodeJS.Signals | null
  stderr: string
}

/** Runs the child until it has acknowledged `killAfter` appends, then SIGKILLs it; resolves when its pipes close. */
function runChild(path: string, killAfter: number): Promise<ChildRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', CHILD, path], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] })
    const acked: number[] = []
    let pending = ''
    let stderr = ''
    let signal: NodeJS.Signals | null = null
    child.stdout.setEncoding('utf8')
    child.stdout.on('data', (text: string) => {
      pending += text
      const lines = pending.split('\n')
      pending = lines.pop() ?? ''
      for (const line of lines) acked.push(Number(line))
      if (acked.length >= killAfter && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
    })
    child.stderr.setEncoding('utf8')
    child.stderr.on('data', (text: string) => {
      stderr += text
    })
    child.on('error', reject)
    child.on('exit', (_code, s) => {
      signal = s
    })
    child.on('close', () => resolve({ acked, signal, stderr }))
  })
}

describe('JsonlLogStore under SIGKILL', () => {
  it(`keeps every acknowledged append across ${ROUNDS} crash/restart rounds (seed ${FC_SEED})`, async () => {
    const path = join(dir, 'crash.jsonl')
    const random = prng(FC_SEED)
    const allAcked: number[] = []
    let torn = 0
    for (let round = 0; round < ROUNDS; round++) {
      const killAfter = 200 + (random() % 200)
      const run = await runChild(path, killAfter)
      expect(run.signal, `child ended by itself:\n${run.stderr}`).toBe('SIGKILL')
      expect(run.acked.length).toBeGreaterThanOrEqual(killAfter)
      allAcked.push(...run.acked)

      const opened = await JsonlLogStore.open(path, { dialect: 'seed' })
      await opened.store.close()
      if (opened.tornTail !== undefined) torn++
      const { events } = opened
      expect(events.every((e, k) => e.seq === k)).toBe(true)
      // Acks come in append order, and every acknowledged seq is durable.
      expect(run.acked).toEqual([...run.acked].sort((a, b) => a - b))
      expect(events.length).toBeGreaterThan(Math.max(...allAcked))
    }
    const final = await readLog(path, { dialect: 'seed' })
    expect(final.tornTail).toBeUndefined()
    expect(final.header?.id).toBe('crash-test')
    expect(final.events.length).toBeGreaterThan(Math.max(...allAcked))
    console.log(`crash test (seed ${FC_SEED}): ${allAcked.length} acks over ${ROUNDS} kills, ${final.events.length} events kept, ${torn} torn tail(s) repaired`)
  }, 20_000)
})
