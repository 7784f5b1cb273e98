/**
 * JsonlLogStore's `onDurable` hook (§13.4 crash harness): called per event after its fsync and before the
 * next write, with appends committed one call at a time, so a durable point lies between any two appends.
 */
import { readFileSync } from 'node:fs'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Seq } from '../../src/brand.ts'
import { LogError } from '../../src/errors.ts'
import type { LogEvent } from '../../src/log/events.ts'
import { JsonlLogStore } from '../../src/log/store.ts'

let dir = ''
let counter = 0

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'store-durable-test-'))
})
afterAll(async () => {
  await rm(dir, { recursive: true, force: true })
})

const fresh = (): string => join(dir, `log-${counter++}.jsonl`)

function turn(seq: number): LogEvent {
  return { seq: Seq(seq), time: 1000 + seq, type: 'turn/start', data: { turn: seq + 1 } }
}

function lineCount(path: string): number {
  return readFileSync(path, 'utf8').split('\n').filter((l) => l !== '').length
}

describe('JsonlLogStore onDurable', () => {
  it('sees each event on disk when it is called, and no later event yet, even for concurrent appends', async () => {
    const path = fresh()
    const seen: Array<{ seq: number; linesOnDisk: number }> = []
    const { store } = await JsonlLogStore.open(path, {
      dialect: 'seed', create: true, onDurable: (event) => seen.push({ seq: event.seq, linesOnDisk: lineCount(path) }),
    })
    // Five appends queued at once: without the hook they would be group-committed in fewer writes.
    await Promise.all([0, 1, 2, 3, 4].map((seq) => store.append([turn(seq)])))
    await store.close()
    expect(seen).toEqual([0, 1, 2, 3, 4].map((seq) => ({ seq, linesOnDisk: seq + 1 })))
  })

  it('reports every event of a multi-event append, in seq order', async () => {
    const path = fresh()
    const seqs: number[] = []
    const { store } = await JsonlLogStore.open(path, { dialect: 'seed', create: true, onDurable: (event) => seqs.push(event.seq) })
    await store.append([turn(0), turn(1), turn(2)])
    await store.close()
    expect(seqs).toEqual([0, 1, 2])
    expect(store.durableCount).toBe(3)
  })

  it('a throwing hook rejects that append (its event stays durable) and the store refuses later appends', async () => {
    const path = fresh()
    const { store } = await JsonlLogStore.open(path, {
      dialect: 'seed', create: true, onDurable: (event) => {
        if (event.seq === 1) throw new Error('hook refused')
      },
    })
    await store.append([turn(0)])
    await expect(store.append([turn(1)])).rejects.toThrow('hook refused')
    const later: unknown = await store.append([turn(2)]).then(() => undefined, (e: unknown) => e)
    expect(later).toBeInstanceOf(LogError)
    expect((later as LogError).code).toBe('IO')
    await store.close()
    expect((await readFile(path, 'utf8')).split('\n').filter((l) => l !== '')).toHaveLength(2)
  })
})
