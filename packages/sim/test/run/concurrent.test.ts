/**
 * The `concurrent:` block (issue #16; §11, §13.6 FAULT-70…79, §13.7 FAULT-80…84): loading and validation (bad input
 * is a ScenarioError naming file and field), the subject feature it needs, every point kind run by the reference
 * subject through the catalog's FAULT-70…84 scenarios, and determinism of the seed-driven scheduler (`at: seed`):
 * the same seed gives the same interleaving and a byte-identical log, and seeds differ in where the action lands.
 */
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runScenario } from '../../src/run/run-scenario.ts'
import { ScenarioError } from '../../src/scenario/errors.ts'
import { parseScenario } from '../../src/scenario/load.ts'
import { resolveScenario, type ResolvedScenario } from '../../src/scenario/resolve.ts'
import type { ConcurrentAction, Scenario } from '../../src/scenario/types.ts'
import { missingFeatureReason, requiredFeatures } from '../../src/subjects/features.ts'
import { referenceSubject } from '../../src/subjects/reference.ts'
import { REPO_ROOT, tempDir } from '../cli/run-sim.ts'

const FILE = '/work/scenarios/faults/x.yaml'

function scenarioWith(concurrent: ConcurrentAction[]): Scenario {
  return {
    name: 'concurrent', seed: 1, provider: { wire: 'openai', model: 'mock', contextWindow: 4000 },
    transcript: { inline: { turns: [{ user: 'hi', steps: [{ reply: 'hello' }] }, { user: 'again', steps: [{ reply: 'ok' }] }] } },
    manual: [{ action: 'compactNow', afterTurn: 1 }],
    concurrent,
  }
}

function issuesOf(concurrent: ConcurrentAction[]): string[] {
  try {
    resolveScenario(scenarioWith(concurrent), { file: FILE })
  } catch (err) {
    if (!(err instanceof ScenarioError)) throw err
    expect(err.file).toBe(FILE)
    return err.issues.map((i) => `${i.path}: ${i.reason}`)
  }
  return []
}

let tmp: { dir: string; cleanup: () => Promise<void> }
beforeAll(async () => { tmp = await tempDir() })
afterAll(async () => { await tmp.cleanup() })

describe('concurrent: loading and validation', () => {
  it('resolves an item with its defaults (at: seed, occurrence 1, node first, signal live)', () => {
    const s = resolveScenario(scenarioWith([{ during: 'summary', do: 'replace-node' }]), { file: FILE })
    expect(s.concurrent).toEqual([{
      index: 0, during: 'summary', occurrence: 1, at: 'seed', chunk: null, turn: null, step: 1, afterTurn: null,
      do: 'replace-node', node: 'first', signal: 'live', imageTokens: null, start: null, end: null,
    }])
  })

  it('names the field of each bad combination', () => {
    expect(issuesOf([{ during: 'summary', at: 'after-resolve', chunk: 2, do: 'append-surface' }]))
      .toEqual(['/concurrent/0/chunk: applies only with at: after-chunk'])
    expect(issuesOf([{ during: 'summary', at: 'after-chunk', do: 'append-surface' }]))
      .toEqual(['/concurrent/0/chunk: is required with at: after-chunk'])
    expect(issuesOf([{ during: 'idle', afterTurn: 1, do: 'abort-turn' }]))
      .toEqual(['/concurrent/0/do: abort-turn cannot run during idle (it can during summary, pre-step)'])
    expect(issuesOf([{ during: 'pre-step', do: 'compact-now' }])).toEqual(['/concurrent/0/turn: is required with during: pre-step'])
    expect(issuesOf([{ during: 'pre-step', turn: 3, do: 'compact-now' }]))
      .toEqual(['/concurrent/0/turn: names a turn the transcript does not have (it has 2)'])
    expect(issuesOf([{ during: 'idle', afterTurn: 0, do: 'compact-region', start: 0 }])).toEqual([
      '/concurrent/0/end: is required with do: compact-region',
      '/concurrent/0/do: compact-region cannot run during idle (it can during summary, flush)',
    ])
    // FAULT-80's pre-aborted signal: only when nothing is in flight.
    expect(issuesOf([{ during: 'summary', do: 'compact-now', signal: 'aborted' }]))
      .toEqual(['/concurrent/0/signal: aborted applies only with during: idle (FAULT-80: the call itself throws, nothing is in flight)'])
    expect(issuesOf([{ during: 'summary', do: 'append-surface', node: 'middle', afterTurn: 1 }])).toEqual([
      '/concurrent/0/afterTurn: applies only with during: idle',
      '/concurrent/0/node: applies only with do: replace-node',
    ])
  })

  it('rejects an unknown action through the schema, naming the file and the field', () => {
    const text = [
      'name: x', 'seed: 1', 'provider: {wire: openai, model: m, contextWindow: 4000}',
      'transcript: {inline: {turns: [{user: hi, steps: [{reply: hello}]}]}}',
      'concurrent:', '- during: summary', '  do: explode',
    ].join('\n')
    expect(() => parseScenario(text, 'bad.yaml')).toThrow(ScenarioError)
    expect(() => parseScenario(text, 'bad.yaml')).toThrow(/bad\.yaml.*\/concurrent\/0\/do/s)
  })

  it('needs the subject feature concurrency; a subject without it gets the reason', () => {
    const s: ResolvedScenario = resolveScenario(scenarioWith([{ during: 'summary', do: 'append-log-only' }]), { file: FILE })
    expect(requiredFeatures(s).map((n) => n.feature)).toContain('concurrency')
    const lacking = { ...referenceSubject, name: 'lacking', features: ['manualCompaction'] as const }
    expect(missingFeatureReason(s, lacking)).toMatch(/concurrency \(concurrent\[0\] append-log-only during summary/)
  })

  it('refuses a FAULT-70…84 fault without a concurrent: block (it is how the fault is realised)', async () => {
    const raw: Scenario = { ...scenarioWith([]), faults: [{ kind: 'FAULT-73' }] }
    delete raw.concurrent
    const path = join(tmp.dir, 'no-block.yaml')
    await writeFile(path, JSON.stringify(raw))
    const report = await runScenario(path, { outDir: join(tmp.dir, 'no-block'), cwd: tmp.dir })
    expect(report.status).toBe('error')
    expect(JSON.stringify(report)).toMatch(/faults\/0\/kind.*FAULT-73 is realised by the scenario's concurrent: block/)
  })
})

/** Each catalog scenario of §13.6/§13.7 and the point kind it exercises. */
const CATALOG: ReadonlyArray<readonly [string, string]> = [
  ['fault-70-compact-now-during-auto-bracket', 'summary before-first-chunk (automatic bracket)'],
  ['fault-71-compact-region-during-manual-bracket', 'summary after chunk 1'],
  ['fault-72-compact-now-during-open-turn', 'pre-step'],
  ['fault-73-foreign-replacement-first-node', 'summary after chunk 1'],
  ['fault-74-foreign-replacement-middle-node', 'summary before-first-chunk'],
  ['fault-75-price-change-during-summary', 'summary after chunk 2 (automatic bracket)'],
  ['fault-76-surface-append-during-auto-summary', 'summary after chunk 1 (automatic bracket)'],
  ['fault-77-surface-append-during-manual-summary', 'summary after chunk 1'],
  ['fault-78-log-only-append-during-summary', 'summary after chunk 1, both modes'],
  ['fault-79-foreign-replacement-after-resolve', 'summary after-resolve'],
  ['fault-80-compact-now-pre-aborted', 'idle'],
  ['fault-81-caller-abort-after-summary', 'summary after-resolve'],
  ['fault-82-agent-cancels-maintenance', 'summary before-first-chunk'],
  ['fault-83-turn-aborted-before-pre-step', 'pre-step'],
  ['fault-84-caller-abort-during-flush', 'flush'],
]

describe('concurrent: every point kind on the reference subject (the §13.6/§13.7 catalog)', () => {
  it.each(CATALOG)('%s passes with its §13 outcome (%s), and its fault fired', async (name) => {
    const report = await runScenario(join(REPO_ROOT, 'scenarios/faults', `${name}.yaml`), { outDir: join(tmp.dir, name), cwd: REPO_ROOT })
    const failed = report.expectations?.filter((e) => !e.passed).map((e) => `${e.name}: ${e.actual}`) ?? []
    expect({ status: report.status, failed, violations: report.violations }).toEqual({ status: 'passed', failed: [], violations: [] })
    expect(report.faults?.every((f) => f.fired > 0)).toBe(true)
    expect(report.warnings?.some((w) => w.startsWith('concurrent[0] ') && !w.includes('never ran'))).toBe(true)
  }, 60_000)
})

describe('concurrent: an item whose point never comes', () => {
  it('fails the scenario with a concurrent[<i>] expectation naming where it was due', async () => {
    const text = await readFile(join(REPO_ROOT, 'scenarios/faults/fault-77-surface-append-during-manual-summary.yaml'), 'utf8')
    const path = join(tmp.dir, 'never.yaml')
    await writeFile(path, text.replace('- during: summary\n', '- during: summary\n  occurrence: 5\n'))
    const report = await runScenario(path, { outDir: join(tmp.dir, 'never'), cwd: tmp.dir })
    expect(report.status).toBe('failed')
    const item = report.expectations?.find((e) => e.name === 'concurrent[0]')
    expect(item).toMatchObject({ passed: false, expected: 'runs at its point' })
    expect(item?.actual).toBe('concurrent[0] append-surface never ran: summary call 5 chunk 1 was not reached (the run made 1 summary call and 1 manual flush)')
    // The scenario's FAULT-77 never fired either.
    expect(report.expectations?.find((e) => e.name === 'faults.fault-1')?.passed).toBe(false)
  }, 60_000)
})

describe('concurrent: at: seed (the seed-driven fast-check scheduler)', () => {
  /** FAULT-77's scenario with the append's point left to the scheduler. */
  async function seeded(): Promise<string> {
    const text = await readFile(join(REPO_ROOT, 'scenarios/faults/fault-77-surface-append-during-manual-summary.yaml'), 'utf8')
    const cut = text.indexOf('concurrent:')
    const path = join(tmp.dir, 'seeded.yaml')
    await writeFile(path, `${text.slice(0, cut)}concurrent:\n- during: summary\n  do: append-surface\n`)
    return path
  }

  async function run(path: string, seed: number, out: string): Promise<{ log: string; where: string }> {
    const report = await runScenario(path, { outDir: join(tmp.dir, out), cwd: tmp.dir, seed })
    expect(report.status).toBe('passed')
    const where = report.warnings?.find((w) => w.startsWith('concurrent[0]')) ?? ''
    return { log: await readFile(join(tmp.dir, out, report.artifacts?.log ?? ''), 'utf8'), where }
  }

  it('the same seed gives the same interleaving and a byte-identical log; seeds move the action between points', async () => {
    const path = await seeded()
    const a = await run(path, 7, 'seed-a')
    const b = await run(path, 7, 'seed-b')
    expect(b.log).toBe(a.log)
    expect(b.where).toBe(a.where)
    expect(a.where).toMatch(/^concurrent\[0\] append-surface during summary 1 .* \(seed\): a foreign user\/message was appended at #\d+$/)
    const places = new Set<string>()
    for (const seed of [1, 2, 3, 4, 5, 6]) places.add((await run(path, seed, `seed-${seed}`)).where.replace(/ at #\d+$/, ''))
    expect(places.size).toBeGreaterThan(1)
  }, 120_000)
})
