/**
 * Issue #20 "Done when": an imported session replays through `sim run` on the reference subject and the
 * official engine (`--subject dsh`) with the checker clean — here for a generated long session of every
 * import format (`long-sessions.ts`: parallel calls, failed results, reasoning, PNG images, results up to
 * 6000 characters). The full 500-turn sessions take minutes per run, so the test replays a representative
 * slice: the first 24 turns of the same generator (seed 20, the seed of the 500-turn import test), under a
 * window small enough (8000) that the session compacts. The 500-turn replays themselves were run by hand;
 * the README's "Replay your own session" ("Long sessions") records which and the result.
 *
 * The generated openai-chat file logs each step's tool results in reverse call order (the importer keeps the
 * logged order). DSH does not declare the feature `resultOrder`, so under `--subject dsh` that scenario is
 * skipped with the reason, and an in-order copy of the same session (results sorted by call) runs instead.
 */
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { IMPORT_FORMATS, type ImportFormat } from '../../src/import/index.ts'
import { runSim, tempDir } from '../cli/run-sim.ts'
import { writeLongSession } from './long-sessions.ts'

const TURNS = 24
const WINDOW = 8000

interface Reported {
  file: string
  subject: string
  status: string
  error?: string
  skipReason?: string
  violations: unknown[]
  counts?: { turns: number; checkpoints: number; failedBrackets: number }
}

let dir: string
let cleanup: () => Promise<void>
const scenarios = new Map<ImportFormat, string>()

beforeAll(async () => {
  ;({ dir, cleanup } = await tempDir())
  for (const format of IMPORT_FORMATS) {
    const { path } = await writeLongSession(format, dir, 20, TURNS)
    const out = join(dir, `${format}.yaml`)
    const imported = await runSim(['import', format, path, '-o', out, '--context-window', String(WINDOW)])
    if (imported.exitCode !== 0) throw new Error(`sim import ${format}: exit ${imported.exitCode}\n${imported.stderr}`)
    scenarios.set(format, out)
  }
  const chat = join(dir, 'long-openai-chat.json')
  await writeFile(join(dir, 'in-order.json'), inCallOrder(await readFile(chat, 'utf8')))
  const out = join(dir, 'openai-chat-in-order.yaml')
  const imported = await runSim(['import', 'openai-chat', join(dir, 'in-order.json'), '-o', out, '--context-window', String(WINDOW)])
  if (imported.exitCode !== 0) throw new Error(`sim import openai-chat (in order): exit ${imported.exitCode}\n${imported.stderr}`)
})

interface ChatMessage { role: string; tool_call_id?: string; tool_calls?: Array<{ id: string }> }

/** The openai-chat session `text` with every step's tool results sorted into call order. */
function inCallOrder(text: string): string {
  const body = JSON.parse(text) as { messages: ChatMessage[] }
  const out: ChatMessage[] = []
  let order: string[] = []
  let results: ChatMessage[] = []
  const flush = (): void => {
    out.push(...results.sort((a, b) => order.indexOf(a.tool_call_id ?? '') - order.indexOf(b.tool_call_id ?? '')))
    results = []
  }
  for (const m of body.messages) {
    if (m.role === 'tool') {
      results.push(m)
      continue
    }
    flush()
    if (m.tool_calls !== undefined) order = m.tool_calls.map((c) => c.id)
    out.push(m)
  }
  flush()
  return JSON.stringify({ ...body, messages: out })
}
afterAll(async () => {
  await cleanup()
})

describe(`generated ${TURNS}-turn slices of the long sessions replay through sim run (issue #20)`, () => {
  for (const subject of ['reference', 'dsh'] as const) {
    it(`every format passes on --subject ${subject} with the checker clean, compacting`, async () => {
      const formats = subject === 'dsh' ? IMPORT_FORMATS.filter((f) => f !== 'openai-chat') : IMPORT_FORMATS
      const files = formats.map((f) => scenarios.get(f) as string)
      if (subject === 'dsh') files.unshift(join(dir, 'openai-chat-in-order.yaml'))
      const reversed = scenarios.get('openai-chat') as string
      const out = join(dir, `run-${subject}`)
      const listed = subject === 'dsh' ? [...files, reversed] : files
      const result = await runSim(['run', ...listed, '--subject', subject, '--out-dir', out, '--reporter', 'json'])
      const report = JSON.parse(await readFile(join(out, 'report.json'), 'utf8')) as { scenarios: Reported[] }
      const summary = report.scenarios.map((s) => ({
        file: s.file, status: s.status, error: s.error ?? s.skipReason ?? null, violations: s.violations.length, turns: s.counts?.turns,
      }))
      const passed = files.map((file) => ({ file, status: 'passed', error: null, violations: 0, turns: TURNS }))
      const skipped = {
        file: reversed, status: 'skipped', violations: 0, turns: undefined,
        error: expect.stringMatching(/^subject dsh does not declare the feature this scenario needs: resultOrder/) as unknown,
      }
      expect(summary).toEqual(subject === 'dsh' ? [...passed, skipped] : passed)
      for (const s of report.scenarios.filter((r) => r.status !== 'skipped')) {
        expect(s.counts?.checkpoints, s.file).toBeGreaterThanOrEqual(1)
        expect(s.counts?.failedBrackets, s.file).toBe(0)
      }
      expect(result.exitCode).toBe(0)
    }, 240_000)
  }
})
