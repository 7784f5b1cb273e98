/** `sim fuzz` through `main` (issue #8): flags, exit codes, the coverage table and `--require-paths`. */
import { describe, expect, it } from 'vitest'
import { PATH_DEFINITIONS } from '../../src/metrics/paths.ts'
import { runSim } from '../cli/run-sim.ts'

describe('sim fuzz', () => {
  it('a non-numeric count names the flag and the text as given (not NaN): exit 2', async () => {
    const runs = await runSim(['fuzz', '--runs', 'abc'])
    expect([runs.exitCode, runs.stderr.split('\n')[0]]).toEqual([2, 'error: --runs: expected an integer 1 … 9007199254740991, got "abc"'])
    const seed = await runSim(['fuzz', '--seed', '1e3'])
    expect([seed.exitCode, seed.stderr.split('\n')[0]]).toEqual([2, 'error: --seed: expected an unsigned 32-bit integer (0 … 4294967295), got "1e3"'])
  })

  it('prints the seed first, the path-coverage table on stdout, exit 0 when nothing is found', async () => {
    const run = await runSim(['fuzz', '--runs', '20', '--seed', '7'], { env: { CI: 'true' } })
    expect(run.stderr.split('\n')[0]).toBe('sim fuzz: seed 7, 20 runs, subject reference')
    expect(run.exitCode).toBe(0)
    const rows = run.stdout.trim().split('\n')
    expect(rows.slice(0, 2)).toEqual(['| path | reached | definition |', '|---|---:|---|'])
    expect(rows.slice(2).map((r) => r.split('|')[1]?.trim())).toEqual(PATH_DEFINITIONS.map((p) => `\`${p.id}\``))
    expect(run.stderr).toMatch(/^20 sessions in [\d.]+ s, seed 7; \d+ of 17 paths reached$/m)
  }, 60_000)

  it('--swarm prints the drawn options first; --json is one document; the same seed gives the same counts', async () => {
    const a = await runSim(['fuzz', '--runs', '12', '--swarm', '--json'], { env: { CI: 'true' } })
    const b = await runSim(['fuzz', '--runs', '12', '--swarm', '--json'], { env: { CI: 'true' } })
    expect(a.exitCode).toBe(0)
    expect(a.stderr).toMatch(/^sim fuzz: seed 20261130, 12 runs, swarm, subject reference\n/)
    expect(a.stderr).toMatch(/^swarm: 12 per-run fault mixes drawn from seed 20261130/m)
    expect(a.stderr).toMatch(/^ {2}run 1: /m)
    const docA = JSON.parse(a.stdout) as { sessions: number; paths: unknown[]; swarm: number; seconds: number }
    const docB = JSON.parse(b.stdout) as typeof docA
    expect(docA.sessions).toBe(12)
    expect(docA.swarm).toBe(12)
    expect(docA.paths).toEqual(docB.paths)
  }, 60_000)

  it('--require-paths: an unknown id is a usage error (exit 2); an unreached one fails (exit 1)', async () => {
    const bad = await runSim(['fuzz', '--runs', '1', '--require-paths', 'summary-commit,no-such-path'], { env: { CI: 'true' } })
    expect(bad.exitCode).toBe(2)
    expect(bad.stderr).toContain('--require-paths: unknown path no-such-path')
    const argv = ['fuzz', '--runs', '1', '--max-commands', '1', '--require-paths', 'live-orphan-busy']
    const unreached = await runSim(argv, { env: { CI: 'true' } })
    expect(unreached.exitCode).toBe(1)
    expect(unreached.stderr).toContain('required path not reached: live-orphan-busy')
  }, 60_000)
})
