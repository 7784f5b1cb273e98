/**
 * Summarizers through real runs (issue #15): each kind and preset on an inline scenario over the mock, with
 * no fault declared unless the case says so. The scenario is the pressure transcript of
 * `scenarios/faults/fault-27-summary-not-smaller.yaml` (window 2000, threshold 1000, compactionRetries 0),
 * whose pre-step checks open brackets in turns 2 and 3; `provider.summarizer` is the only change.
 */
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { readLog, type LogEvent } from '@compaction-sim/core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runScenario } from '../../src/run/run-scenario.ts'
import type { ScenarioReport } from '../../src/report/types.ts'
import { REPO_ROOT, tempDir } from '../cli/run-sim.ts'

const BASE = join(REPO_ROOT, 'scenarios/faults/fault-27-summary-not-smaller.yaml')
let tmp: { dir: string; cleanup: () => Promise<void> }
let base = ''

beforeAll(async () => {
  tmp = await tempDir()
  const text = await readFile(BASE, 'utf8')
  base = text.slice(0, text.indexOf('faults:\n'))
})
afterAll(async () => { await tmp.cleanup() })

interface Variant {
  /** The YAML value of `provider.summarizer` (one line), or null for none. */
  summarizer: string | null
  /** Replaces `compactionRetries: 0` (e.g. `compactionRetries: 1\n  maxTokens: 40`). */
  policy?: string
  /** A `faults:` block. */
  faults?: string
}

interface Ran {
  report: ScenarioReport
  events: LogEvent[]
  bytes: string
}

async function run(name: string, v: Variant): Promise<Ran> {
  let text = base.replace('name: fault-27-summary-not-smaller', `name: ${name}`)
  if (v.summarizer !== null) text = text.replace('  contextWindow: 2000\n', `  contextWindow: 2000\n  summarizer: ${v.summarizer}\n`)
  if (v.policy !== undefined) text = text.replace('  compactionRetries: 0\n', `  ${v.policy}\n`)
  if (v.faults !== undefined) text += v.faults
  const file = join(tmp.dir, `${name}.yaml`)
  await writeFile(file, text)
  const report = await runScenario(file, { outDir: join(tmp.dir, name), cwd: REPO_ROOT })
  const log = join(tmp.dir, name, report.artifacts?.log ?? 'missing')
  return { report, events: (await readLog(log, { dialect: 'seed' })).events, bytes: await readFile(log, 'utf8') }
}

const ofType = (events: readonly LogEvent[], type: string): Array<Record<string, unknown>> =>
  events.filter((e) => e.type === type).map((e) => e.data as unknown as Record<string, unknown>)
const failureCodes = (events: readonly LogEvent[]): unknown[] =>
  ofType(events, 'compaction/summary-error').map((d) => (d['failure'] as { code: string }).code)
const summaries = (events: readonly LogEvent[]): string[] => ofType(events, 'compaction/summary')
  .map((d) => (d['summary'] as Array<{ type: string; text?: string }>).map((b) => b.text ?? '').join(''))
const endErrors = (events: readonly LogEvent[]): unknown[] => ofType(events, 'compaction/end').map((d) => d['error'] ?? null)

describe('summarizers in a run', () => {
  it('summarizer: builtin is the default, byte for byte, and compacts successfully', async () => {
    const [explicit, implicit] = [await run('builtin-explicit', { summarizer: 'builtin' }), await run('builtin-default', { summarizer: null })]
    expect(explicit.bytes).toBe(implicit.bytes)
    expect(explicit.report.violations).toEqual([])
    expect(explicit.report.counts?.checkpoints).toBeGreaterThan(0)
    expect(failureCodes(explicit.events)).toEqual([])
  })

  it('summarizer: {fixed: 400} checkpoints summaries of exactly 400 characters', async () => {
    const { report, events } = await run('fixed', { summarizer: '{ fixed: 400 }' })
    expect(report.violations).toEqual([])
    const written = summaries(events)
    expect(written.length).toBeGreaterThan(0)
    expect(written.map((s) => s.length)).toEqual(written.map(() => 400))
    expect(written[0]?.startsWith('## Primary Request and Intent')).toBe(true)
  })

  it('summarizer: {ratio: 0.4} shrinks; {ratio: 1.1} does not: the shrink rule (INV-17, FAULT-27 outcome) with no fault', async () => {
    const shrinking = await run('ratio-04', { summarizer: '{ ratio: 0.4 }' })
    expect(shrinking.report.violations).toEqual([])
    expect(summaries(shrinking.events).length).toBeGreaterThan(0)
    expect(endErrors(shrinking.events)).toContain(null)
    const growing = await run('ratio-11', { summarizer: '{ ratio: 1.1 }' })
    expect(growing.report.violations).toEqual([])
    expect(growing.report.faults).toEqual([])
    expect(summaries(growing.events)).toEqual([])
    expect(failureCodes(growing.events)).toEqual([])
    const errors = endErrors(growing.events)
    expect(errors.length).toBeGreaterThan(1)
    for (const error of errors) expect(String(error)).toMatch(/^summary is not smaller than the shadowed content \((\d+) estimated framed tokens >= (\d+)\)$/)
    // Each framed price is floor(1.1 × the shadowed price) of that bracket.
    for (const error of errors) {
      const [, framed, shadowed] = /\((\d+) estimated framed tokens >= (\d+)\)/.exec(String(error)) ?? []
      expect(Number(framed)).toBe(Math.floor(1.1 * Number(shadowed)))
    }
  })

  it('summarizer: reasoning-only leads to the summary-error path (UNKNOWN, no text) with no fault', async () => {
    const { report, events } = await run('reasoning-only', { summarizer: 'reasoning-only' })
    expect(report.violations).toEqual([])
    const codes = failureCodes(events)
    expect(codes.length).toBeGreaterThan(1)
    expect(new Set(codes)).toEqual(new Set(['UNKNOWN']))
    expect(report.counts?.checkpoints).toBe(0)
  })

  it('summarizer: tool-call leads to the summary-error path too: a tool call is no summary text', async () => {
    const { report, events } = await run('tool-call', { summarizer: 'tool-call' })
    expect(report.violations).toEqual([])
    expect(new Set(failureCodes(events))).toEqual(new Set(['UNKNOWN']))
    expect(report.counts?.checkpoints).toBe(0)
  })

  it('summarizer: {script: [{reasoning, finish: max-tokens}]} gives MAX_TOKENS (FAULT-23-like) with no fault', async () => {
    const { report, events } = await run('script-max-tokens', { summarizer: "{ script: [{ reasoning: 'Let me think.', finish: max-tokens }] }" })
    expect(report.violations).toEqual([])
    expect(new Set(failureCodes(events))).toEqual(new Set(['MAX_TOKENS']))
  })

  it('the cap: a small policy maxTokens makes the builtin summary stop at max-tokens (MAX_TOKENS) with no fault', async () => {
    const { report, events } = await run('small-cap', { summarizer: 'builtin', policy: 'compactionRetries: 0\n  maxTokens: 40' })
    expect(report.violations).toEqual([])
    expect(new Set(failureCodes(events))).toEqual(new Set(['MAX_TOKENS']))
    // A reasoning-heavy attempt spends the whole cap: max-tokens with no text at all.
    const heavy = await run('reasoning-cap', {
      summarizer: `{ script: [{ reasoning: '${'think '.repeat(60)}', text: 'short summary' }] }`,
      policy: 'compactionRetries: 0\n  maxTokens: 40',
    })
    expect(new Set(failureCodes(heavy.events))).toEqual(new Set(['MAX_TOKENS']))
  })

  it('script attempts are counted per route over the scenario: a retry gets attempt 2, later brackets repeat the last', async () => {
    const { report, events } = await run('script-retry', {
      summarizer: "{ script: [{ reasoning: 'nothing yet' }, { text: 'SECOND: fix the quoted key fixture.' }, { text: 'THIRD: add isSeq.' }] }",
      policy: 'compactionRetries: 1',
    })
    expect(report.violations).toEqual([])
    expect(failureCodes(events)).toEqual(['UNKNOWN'])
    const written = summaries(events)
    expect(written[0]).toBe('SECOND: fix the quoted key fixture.')
    expect(written.slice(1)).toEqual(written.slice(1).map(() => 'THIRD: add isSeq.'))
  })

  it('script images and mixed blocks: an image is UNSUPPORTED_CONTENT; text plus reasoning and a call keeps the text', async () => {
    const image = await run('script-image', { summarizer: "{ script: [{ text: 'a summary', images: 1 }] }" })
    expect(new Set(failureCodes(image.events))).toEqual(new Set(['UNSUPPORTED_CONTENT']))
    const mixed = await run('script-mixed', {
      summarizer: "{ script: [{ reasoning: 'r', text: 'KEEP: the summary', toolCalls: [{ name: 'noop' }], finish: stop, chunks: 3 }] }",
    })
    expect(mixed.report.violations).toEqual([])
    expect(new Set(summaries(mixed.events))).toEqual(new Set(['KEEP: the summary']))
  })

  it('FAULT-23…27 reply variants still work on top of any summarizer', async () => {
    const fault = (kind: string): string => `faults:\n- kind: ${kind}\n  when: { purpose: compaction, occurrence: 1 }\n`
    const variant = await run('variant-23', { summarizer: 'reasoning-only', faults: fault('FAULT-23') })
    expect(failureCodes(variant.events)[0]).toBe('MAX_TOKENS')
    expect(failureCodes(variant.events).slice(1)).toEqual(failureCodes(variant.events).slice(1).map(() => 'UNKNOWN'))
    const mixed = await run('variant-26', { summarizer: 'tool-call', faults: fault('FAULT-26') })
    expect(summaries(mixed.events).length).toBe(1) // the mixed variant's text, not the summarizer's tool call
    expect(mixed.report.faults).toEqual([{ id: 'fault-1', kind: 'FAULT-26', fired: 1 }])
  })

  it('script attempts are not restarted by a crash restore: the resumed session continues at attempt 2', async () => {
    const { report, events } = await run('script-crash', {
      summarizer: "{ script: [{ reasoning: 'nothing yet' }, { text: 'SECOND: after the restore.' }] }",
      faults: 'faults:\n- kind: FAULT-55\n  when: { occurrence: 1 }\n',
    })
    expect(report.violations).toEqual([])
    expect(report.counts?.crashes).toBe(1)
    // The child's bracket used attempt 1 (no text) and crashed after its end; the resumed world counted it.
    expect(failureCodes(events)).toEqual(['UNKNOWN'])
    expect(summaries(events)[0]).toBe('SECOND: after the restore.')
  })
})
