/**
 * Totality (issue 5): a corrupt or truncated log yields violations or a typed input error — never a
 * rejection, an internal error of a check, or a hang. Valid logs (Appendix B and the recorded rc.8 logs)
 * are mutated by random single and compound edits: lines dropped, duplicated, swapped, truncated or replaced
 * by garbage, and any JSON value inside an event replaced by an arbitrary one.
 */
import { readFileSync } from 'node:fs'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { APPENDIX_B_JSONL, fixturePath } from '@compaction-sim/fixtures'
import type { Dialect } from '@compaction-sim/core'
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { fcParams } from '../../../core/test/support/seed.ts'
import { checkLog, type CheckResult } from '../../src/checker/run.ts'
import { tempDir } from '../cli/run-sim.ts'
import { RECORDED_DIR, recordedLogNames } from './recorded-logs.ts'

const RECORDED = RECORDED_DIR

/** The valid logs the fuzz starts from, as lines, with their dialect. */
function bases(): Array<{ name: string; dialect: Dialect; lines: string[] }> {
  const out = [{ name: 'appendix-b', dialect: 'seed' as Dialect, lines: readFileSync(fixturePath(APPENDIX_B_JSONL), 'utf8').trimEnd().split('\n') }]
  // A missing or empty fixture folder throws (recorded-logs.ts): the fuzz never silently shrinks to Appendix B.
  for (const f of recordedLogNames()) out.push({ name: f, dialect: 'dsh-0.1.0-rc.8', lines: readFileSync(join(RECORDED, f), 'utf8').trimEnd().split('\n') })
  return out
}

type Edit =
  | { k: 'drop'; at: number }
  | { k: 'dup'; at: number }
  | { k: 'swap'; at: number; with: number }
  | { k: 'garbage'; at: number; text: string }
  | { k: 'json'; at: number; value: unknown }
  | { k: 'perturb'; at: number; path: number; value: unknown }
  | { k: 'delete-key'; at: number; path: number }
  | { k: 'retype'; at: number; type: string }
  | { k: 'truncate'; cut: number }

const TYPES = ['turn/start', 'turn/end', 'step/start', 'step/end', 'system/message', 'user/message', 'assistant/chunk', 'assistant/message',
  'tool/call', 'tool/result', 'request/header', 'request/context', 'session/end-seed', 'llm/retry', 'compaction/start', 'compaction/summary',
  'compaction/summary-error', 'compaction/prune', 'compaction/end', 'image/offload', 'text-chunks', 'session', 'agent/inbox/spliced', 'x/y']

const valueArb: fc.Arbitrary<unknown> = fc.oneof(
  fc.jsonValue({ maxDepth: 3 }),
  fc.constantFrom(-1, 0, 1, 2, 3, 12, 28, 55, 1e9, 0.5, -0.5, '', 'x', null, true, [], {}, [0], [3, 10], 'append', { op: 'replace', start: 3, end: 42 }),
)

const editArb: fc.Arbitrary<Edit> = fc.oneof(
  fc.record({ k: fc.constant('drop' as const), at: fc.nat() }),
  fc.record({ k: fc.constant('dup' as const), at: fc.nat() }),
  fc.record({ k: fc.constant('swap' as const), at: fc.nat(), with: fc.nat() }),
  fc.record({ k: fc.constant('garbage' as const), at: fc.nat(), text: fc.string({ maxLength: 40 }) }),
  fc.record({ k: fc.constant('json' as const), at: fc.nat(), value: fc.jsonValue({ maxDepth: 3 }) }),
  { arbitrary: fc.record({ k: fc.constant('perturb' as const), at: fc.nat(), path: fc.nat(), value: valueArb }), weight: 6 },
  { arbitrary: fc.record({ k: fc.constant('delete-key' as const), at: fc.nat(), path: fc.nat() }), weight: 2 },
  fc.record({ k: fc.constant('retype' as const), at: fc.nat(), type: fc.constantFrom(...TYPES) }),
  fc.record({ k: fc.constant('truncate' as const), cut: fc.nat() }),
)

/** Every (container, key) inside a JSON value, in a fixed order (iterative: no recursion). */
function slots(root: unknown): Array<[Record<string, unknown> | unknown[], string | number]> {
  const out: Array<[Record<string, unknown> | unknown[], string | number]> = []
  const stack: unknown[] = [root]
  while (stack.length > 0) {
    const v = stack.pop()
    if (Array.isArray(v)) v.forEach((x, i) => { out.push([v, i]); stack.push(x) })
    else if (typeof v === 'object' && v !== null) for (const [k, x] of Object.entries(v)) { out.push([v as Record<string, unknown>, k]); stack.push(x) }
  }
  return out
}

/** Applies `edits` to a copy of `lines` and returns the file text. */
function apply(lines: readonly string[], edits: readonly Edit[]): string {
  const out = [...lines]
  let cut: number | null = null
  for (const e of edits) {
    if (out.length === 0) break
    const i = 'at' in e ? e.at % out.length : 0
    switch (e.k) {
      case 'drop': out.splice(i, 1); break
      case 'dup': out.splice(i, 0, out[i] as string); break
      case 'swap': { const j = e.with % out.length; const t = out[i] as string; out[i] = out[j] as string; out[j] = t; break }
      case 'garbage': out[i] = e.text === '' ? '{' : e.text.replace(/\n/g, ' '); break
      case 'json': out[i] = JSON.stringify(e.value) ?? 'null'; break
      case 'perturb':
      case 'delete-key': {
        let obj: unknown
        try { obj = JSON.parse(out[i] as string) } catch { break }
        const all = slots(obj)
        if (all.length === 0) break
        const [container, key] = all[e.path % all.length] as [Record<string, unknown> | unknown[], string | number]
        if (e.k === 'perturb') (container as Record<string | number, unknown>)[key] = e.value
        else if (Array.isArray(container)) container.splice(key as number, 1)
        else delete container[key as string]
        out[i] = JSON.stringify(obj)
        break
      }
      case 'retype': {
        try {
          const obj = JSON.parse(out[i] as string) as Record<string, unknown>
          if (typeof obj === 'object' && obj !== null) { obj['type'] = e.type; out[i] = JSON.stringify(obj) }
        } catch { /* not JSON any more: keep the line */ }
        break
      }
      case 'truncate': cut = e.cut; break
    }
  }
  const text = `${out.join('\n')}\n`
  return cut === null ? text : text.slice(0, cut % (text.length + 1))
}

/** A result is total: a report without internal errors, or a typed input error naming its line. */
function expectTotal(r: CheckResult): void {
  if (r.kind === 'input-error') {
    expect(r.error.reason.length).toBeGreaterThan(0)
    return
  }
  expect(r.internalErrors).toEqual([])
}

describe('checkLog is total', () => {
  const logs = bases()
  let dir = ''
  let cleanup: () => Promise<void> = async () => undefined
  beforeAll(async () => { ({ dir, cleanup } = await tempDir()) })
  afterAll(async () => { await cleanup() })

  it('never throws, never hangs, never fails internally on mutated log files', async () => {
    let n = 0
    await fc.assert(fc.asyncProperty(fc.nat(), fc.array(editArb, { minLength: 1, maxLength: 4 }), async (pick, edits) => {
      const base = logs[pick % logs.length] as (typeof logs)[number]
      const path = join(dir, `fuzz-${n++}.jsonl`)
      await writeFile(path, apply(base.lines, edits))
      expectTotal(await checkLog(path, { dialect: base.dialect, manifest: null }))
    }), fcParams({ numRuns: Number(process.env["FUZZ_RUNS"] ?? 300) }))
  }, 300_000)

  it('never throws or fails internally on mutated in-memory events, in either dialect', async () => {
    await fc.assert(fc.asyncProperty(fc.nat(), fc.array(editArb, { minLength: 1, maxLength: 4 }), fc.boolean(), async (pick, edits, rc8) => {
      const base = logs[pick % logs.length] as (typeof logs)[number]
      const events = apply(base.lines, edits).split('\n').flatMap((line) => {
        try { return [JSON.parse(line) as unknown] } catch { return [] }
      })
      expectTotal(await checkLog(events, { dialect: rc8 ? 'dsh-0.1.0-rc.8' : 'seed' }))
    }), fcParams({ numRuns: Number(process.env["FUZZ_RUNS"] ?? 300) }))
  }, 300_000)

  it('handles pathological values: deep nesting, huge seq gaps, non-JSON in-memory values', async () => {
    let deep: unknown = 'x'
    for (let i = 0; i < 5000; i++) deep = [deep]
    const events: unknown[] = [
      { seq: 0, time: 1, type: 'turn/start', data: { turn: 1 } },
      { seq: 1, time: 1, type: 'user/message', data: { id: 'u', role: 'user', content: [{ type: 'x', deep }], source: { kind: 'user' } }, surfaceOp: 'append' },
      { seq: 9_007_199_254_740_990, time: 1, type: 'turn/end', data: { turn: 1, reason: { kind: 'completed' } } },
      { seq: 3, time: Number.NaN, type: 'step/start', data: { turn: 1, step: 1 } },
      { seq: 4, time: 1, type: 'step/start', data: { turn: 1, step: 1, f: () => 1 } },
      null, 7, 'text', [],
    ]
    expectTotal(await checkLog(events, { dialect: 'seed' }))
  })
})
