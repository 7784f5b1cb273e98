/**
 * Issue #21 "Seeds", at test size: a scenario whose `expect` is pinned to its seed (`seedSpecific: true`) is judged
 * (and can fail) under its own seed, and under another seed reports its expectations as not evaluated, never
 * failed, while its invariants stay judged; `sim run --seeds` runs a tiny generated scenario whose final-pressure
 * bound breaks under one seed only and reports exactly that seed with its `Replay:` line and exit 1, writes each
 * seed's report (equal to the `sim run --seed <k>` report) and the merged one, gives the same bytes with 2 worker
 * threads loaded from source as inline (a crash scenario's child starting from a worker thread too); bad `--seeds` values and flag combinations are exit 2 naming the flag.
 */
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RunReport } from '../../src/report/types.ts'
import { validateRunReport } from '../../src/report/index.ts'
import { REPO_ROOT, runSim, tempDir } from '../cli/run-sim.ts'

/**
 * A one-turn `coding-session` with no pressure. Its final pressure under seeds 4, 5, 6 is about 720, 1390 and
 * 750 tokens (seed 5 draws two steps), so `tokensMax: 1000` holds for seeds 4 and 6 and breaks for seed 5.
 */
const scenario = (seed: number, pinned: boolean): string => `name: tiny-seeded
seed: ${seed}
provider: { wire: openai, model: mock-128k, contextWindow: 128000 }
transcript:
  generate:
    generator: coding-session
    turns: 1
    params: { stepsPerTurn: [1, 2], toolCallsPerStep: [1, 1], hugeOutputChance: 0, imageChance: 0, statedFacts: 0, corrections: 0 }
expect:
${pinned ? '  seedSpecific: true\n' : ''}  finalPressure: { tokensMax: 1000 }
`

let tmp: { dir: string; cleanup: () => Promise<void> }
let free = ''
let pinned = ''

beforeAll(async () => {
  tmp = await tempDir()
  free = join(tmp.dir, 'free.yaml')
  pinned = join(tmp.dir, 'pinned.yaml')
  await writeFile(free, scenario(4, false))
  await writeFile(pinned, scenario(5, true))
})
afterAll(async () => { await tmp.cleanup() })

const json = (text: string): RunReport => JSON.parse(text) as RunReport
const env = { CI: 'true' }

describe('expect.seedSpecific', () => {
  it('is judged under the scenario\'s own seed, and can fail there', async () => {
    const run = await runSim(['run', pinned, '--out-dir', join(tmp.dir, 'own'), '--reporter', 'json'], { env })
    expect(run.exitCode).toBe(1)
    const [s] = json(run.stdout).scenarios
    expect(s?.status).toBe('failed')
    const bound = s?.expectations.find((e) => e.name === 'finalPressure.tokensMax')
    expect(bound).toMatchObject({ passed: false, expected: '≤ 1000' })
    expect(bound?.notEvaluated).toBeUndefined()
    expect(run.stderr).toContain(`Replay: pnpm sim run ${pinned} --seed 5`)
  })

  it('is reported as not evaluated (seed-specific) under another seed, never failed; the invariants stay judged', async () => {
    const out = join(tmp.dir, 'other')
    const run = await runSim(['run', pinned, '--seed', '4', '--out-dir', out, '--reporter', 'json', '--reporter', 'pretty'], { env })
    expect(run.exitCode, run.stderr).toBe(0)
    const report = json(await readFile(join(out, 'report.json'), 'utf8'))
    expect(validateRunReport(report)).toEqual([])
    const [s] = report.scenarios
    expect(s?.status).toBe('passed')
    expect(s?.expectations).toEqual([
      { name: 'invariants', passed: true, expected: 'no violation of any invariant', actual: 'none' },
      { name: 'finalPressure.tokensMax', passed: true, expected: '≤ 1000', actual: 'not evaluated (seed-specific)', notEvaluated: 'seed-specific' },
    ])
    expect(run.stdout).toMatch(/^PASS .* not evaluated \(seed-specific\): 1 expectation$/m)
    expect(await readFile(join(out, 'report.md'), 'utf8')).toContain('its seed-specific expectations (`expect.seedSpecific`) were not evaluated')
  })

  it('an unpinned expectation is judged under every seed: the same bound fails under seed 5', async () => {
    const run = await runSim(['run', free, '--seed', '5', '--out-dir', join(tmp.dir, 'free5'), '--reporter', 'json'], { env })
    expect(run.exitCode).toBe(1)
    expect(json(run.stdout).scenarios[0]?.expectations.find((e) => e.name === 'finalPressure.tokensMax')?.passed).toBe(false)
  })
})

describe('sim run --seeds', () => {
  let inline: { exitCode: number; stdout: string; stderr: string }
  const out = (name: string): string => join(tmp.dir, name)

  beforeAll(async () => {
    inline = await runSim(['run', free, pinned, '--seeds', '4..6', '--workers', '1', '--out-dir', out('inline')], { env })
  }, 120_000)

  it('reports every failing (scenario, seed) with its Replay line, a summary count, and exit 1', () => {
    expect(inline.exitCode).toBe(1)
    expect(inline.stdout).toContain('· seed 4..6')
    const lines = inline.stdout.split('\n')
    expect(lines.find((l) => l.includes('free.yaml'))).toMatch(/^FAIL .*\[reference seeds=4\.\.6\] 2 passed, 1 failed — seed 5: finalPressure\.tokensMax: expected ≤ 1000, got \d+$/)
    expect(lines.find((l) => l.includes('pinned.yaml'))).toMatch(/^FAIL .* 2 passed, 1 failed seed-specific: not evaluated under 2 seeds — seed 5: /)
    expect(inline.stdout).toContain('Summary: 6 runs (2 scenarios × 3 seeds): 4 passed, 2 failed, 0 skipped, 0 error; seed-specific expectations not evaluated in 2 runs')
    const replays = inline.stderr.split('\n').filter((l) => l.startsWith('Replay: '))
    expect(replays).toEqual([`Replay: pnpm sim run ${free} --seed 5`, `Replay: pnpm sim run ${pinned} --seed 5`])
  })

  it('writes the merged report (scenario by scenario, seeds in order) and each seed\'s report, equal to sim run --seed k', async () => {
    const merged = json(await readFile(join(out('inline'), 'report.json'), 'utf8'))
    expect(validateRunReport(merged)).toEqual([])
    expect([merged.seed, merged.seeds]).toEqual([null, [4, 5, 6]])
    expect(await readFile(join(out('inline'), 'report.md'), 'utf8')).toContain('· seed 4..6 · **6 runs: 4 passed, 2 failed, 0 skipped, 0 error**')
    expect(merged.scenarios.map((s) => `${s.file.endsWith('free.yaml') ? 'free' : 'pinned'} ${s.seed} ${s.status}`)).toEqual([
      'free 4 passed', 'free 5 failed', 'free 6 passed', 'pinned 4 passed', 'pinned 5 failed', 'pinned 6 passed',
    ])
    const log = merged.scenarios[1]?.artifacts?.log ?? ''
    expect(log).toMatch(/^seed-5\/.*free\.jsonl$/)
    const single = await runSim(['run', free, pinned, '--seed', '6', '--out-dir', out('single6')], { env })
    expect(single.exitCode).toBe(0)
    expect(await readFile(join(out('inline'), 'seed-6', 'report.json'), 'utf8')).toBe(await readFile(join(out('single6'), 'report.json'), 'utf8'))
    const name = log.replace(/^seed-5\//, '')
    expect(await readFile(join(out('inline'), 'seed-6', name), 'utf8')).toBe(await readFile(join(out('single6'), name), 'utf8'))
  })

  it('gives the same report with 2 worker threads (loaded from source through tsx) as inline', async () => {
    const pooled = await runSim(['run', free, pinned, '--seeds', '4..6', '--workers', '2', '--out-dir', out('pooled')], { env })
    expect(pooled.exitCode, pooled.stderr).toBe(1)
    expect(pooled.stdout).toBe(inline.stdout)
    expect(await readFile(join(out('pooled'), 'report.json'), 'utf8')).toBe(await readFile(join(out('inline'), 'report.json'), 'utf8'))
  }, 300_000)

  it('a crash scenario runs its crash child from a worker thread too (the child starts from source, not a missing .js)', async () => {
    const crash = join(REPO_ROOT, 'scenarios/crash/fault-53-after-checkpoint.yaml')
    const run = await runSim(['run', crash, '--seeds', '1..2', '--workers', '2', '--out-dir', out('crash'), '--reporter', 'json'], { env })
    expect(run.exitCode, run.stderr).toBe(0)
    expect(json(run.stdout).scenarios.map((s) => [s.seed, s.status, s.counts?.crashes])).toEqual([[1, 'passed', 1], [2, 'passed', 1]])
  }, 300_000)

  it('accepts a comma list, in the order given', async () => {
    const run = await runSim(['run', free, '--seeds', '6,4', '--workers', '1', '--out-dir', out('list'), '--reporter', 'json'], { env })
    expect(run.exitCode).toBe(0)
    const report = json(run.stdout)
    expect([report.seeds, report.scenarios.map((s) => s.seed)]).toEqual([[6, 4], [6, 4]])
  })

  it.each([
    [['--seeds', '5..1'], '--seeds: the range 5..1 runs backwards'],
    [['--seeds', 'x'], '--seeds: "x" is not a seed or a range'],
    [['--seeds', '1,,2'], '--seeds: empty entry'],
    [['--seeds', '1,2,1'], '--seeds: seed 1 is named twice'],
    [['--seeds', '4294967296'], '--seeds: "4294967296" is above 4294967295'],
    [['--seeds', '1..3', '--seed', '2'], '--seeds cannot be combined with --seed'],
    [['--seeds', '1..3', '--workers', '0'], '--workers: expected an integer 1 … 256, got "0"'],
    [['--workers', '2'], '--workers applies to --seeds runs only'],
  ])('refuses %j with exit 2 and a message naming the flag', async (flags, message) => {
    const run = await runSim(['run', free, ...flags, '--out-dir', out('bad')], { env })
    expect(run.exitCode).toBe(2)
    expect(run.stderr).toContain(`error: ${message}`)
  })
})
