/**
 * Torn-tail recovery never loses a complete line (§1.1, design §4 item 1): write N events through the
 * store, cut the file at a random byte, reopen. Every line wholly before the cut is present in order;
 * a partial final line is reported torn and truncated away; a further append yields a valid log.
 * Seed: FC_SEED (printed in the test name).
 */
import { mkdtemp, readFile, rm, truncate } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { LogEvent, SessionHeaderRecord } from '../../src/log/events.ts'
import { readLog } from '../../src/log/reader.ts'
import { JsonlLogStore } from '../../src/log/store.ts'
import { contiguousEventsArb, FC_SEED } from '../support/arbitraries.ts'

const HEADER: SessionHeaderRecord = { type: 'session', version: 0, id: 'torn-tail', createdAt: 1_700_000_000_000, note: 'ünïcödé' }
let dir = ''
let counter = 0

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'store-property-'))
})
afterAll(async () => {
  await rm(dir, { recursive: true, force: true })
})

interface LineSpan {
  start: number
  end: number // index of the line's '\n'
}

function spans(bytes: Buffer): LineSpan[] {
  const out: LineSpan[] = []
  let start = 0
  for (let nl = bytes.indexOf(0x0a); nl >= 0; nl = bytes.indexOf(0x0a, start)) {
    out.push({ start, end: nl })
    start = nl + 1
  }
  return out
}

describe('JsonlLogStore torn-tail recovery', () => {
  it(`never loses a complete line, for random truncation points (seed ${FC_SEED})`, async () => {
    await fc.assert(
      fc.asyncProperty(contiguousEventsArb(12), fc.boolean(), fc.nat(), fc.nat(), async (events, withHeader, split, cutAt) => {
        const path = join(dir, `log-${counter++}.jsonl`)
        const header = withHeader ? { header: HEADER } : {}
        const created = await JsonlLogStore.open(path, { dialect: 'seed', create: true, ...header })
        const k = events.length === 0 ? 0 : split % (events.length + 1)
        await Promise.all([created.store.append(events.slice(0, k)), created.store.append(events.slice(k))])
        await created.store.close()

        const original = await readFile(path)
        const cut = cutAt % (original.length + 1)
        await truncate(path, cut)

        const lines = spans(original)
        const kept = lines.filter((l) => l.end <= cut) // complete content (a missing final newline is repaired)
        const partial = lines.find((l) => l.start < cut && cut < l.end)
        const headerLines = withHeader ? 1 : 0
        const keptEvents = Math.max(0, kept.length - headerLines)

        const reopened = await JsonlLogStore.open(path, { dialect: 'seed', ...header })
        expect(reopened.events).toStrictEqual(events.slice(0, keptEvents))
        expect(reopened.store.eventCount).toBe(keptEvents)
        if (partial === undefined) {
          expect(reopened.tornTail).toBeUndefined()
        } else {
          expect(reopened.tornTail).toMatchObject({ line: lines.indexOf(partial) + 1, offset: partial.start })
          expect(reopened.tornTail?.text.length).toBeGreaterThan(0)
        }
        // The file now ends right after the last complete line (the header is rewritten if it was cut).
        const lastKept = kept.at(-1)
        const keptBytes = Math.max(lastKept === undefined ? 0 : lastKept.end + 1, withHeader ? (lines[0]?.end ?? -1) + 1 : 0)
        expect((await readFile(path)).equals(original.subarray(0, keptBytes))).toBe(true)

        await reopened.store.append(events.slice(keptEvents))
        await reopened.store.close()
        const final = await readLog(path, { dialect: 'seed' })
        expect(final.tornTail).toBeUndefined()
        expect(final.events).toStrictEqual(events as LogEvent[])
        expect((await readFile(path)).equals(original)).toBe(true)
      }),
      { seed: FC_SEED, numRuns: 100 },
    )
  }, 60_000)
})
