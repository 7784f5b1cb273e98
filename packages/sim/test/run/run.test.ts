/**
 * `sim run` end to end (issue #6 "Done when"): the smoke scenarios pass through the real CLI over msw,
 * two runs with one seed are byte-identical, a wrong expectation exits 1 with a `Replay:` line that
 * reproduces it, and a schema-invalid scenario exits 2 naming `file:line:column` and the expected value.
 */
import { readdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { checkLog } from '../../src/checker/run.ts'
import type { RunReport } from '../../src/report/types.ts'
import { REPO_ROOT, runSim, tempDir } from '../cli/run-sim.ts'

const SMOKE = join(REPO_ROOT, 'scenarios/smoke')
let tmp: { dir: string; cleanup: () => Promise<void> }

beforeAll(async () => { tmp = await tempDir() })
afterAll(async () => { await tmp.cleanup() })

/** Every file of `dir` with its bytes, sorted by name. */
async function filesOf(dir: string): Promise<Array<[string, string]>> {
  const names = (await readdir(dir)).sort()
  return Promise.all(names.map(async (n) => [n, await readFile(join(dir, n), 'utf8')] as [string, string]))
}

describe('sim run', () => {
  it('runs the smoke scenarios over the mock provider: exit 0, every artifact written, each log passes sim check', async () => {
    const out = join(tmp.dir, 'smoke')
    const run = await runSim(['run', `${SMOKE}/*.yaml`, '--out-dir', out, '--reporter', 'json'])
    expect(run.stderr).not.toContain('Replay:')
    expect(run.exitCode).toBe(0)
    const report = JSON.parse(run.stdout) as RunReport
    expect(report.summary).toEqual({ total: 4, passed: 4, failed: 0, skipped: 0, error: 0 })
    expect(report.scenarios.map((s) => [s.name, s.status, s.counts?.brackets])).toEqual([
      ['anthropic-wire', 'passed', 2], ['basic-pressure', 'passed', 1], ['no-pressure', 'passed', 0], ['overflow-recovery', 'passed', 1],
    ])
    expect(JSON.parse(await readFile(join(out, 'report.json'), 'utf8'))).toEqual(report)
    const names = (await readdir(out)).sort()
    expect(names).toContain('report.md')
    expect(names).toContain('junit.xml')
    for (const s of report.scenarios) {
      const artifacts = s.artifacts
      if (artifacts === undefined) throw new Error(`${s.name} has no artifacts`)
      expect(names).toEqual(expect.arrayContaining([artifacts.log, artifacts.manifest, artifacts.requests]))
      // `sim check` finds the manifest as the log's sibling (§1.1) and accepts the capture.
      const check = await checkLog(join(out, artifacts.log), { dialect: 'seed', requests: join(out, artifacts.requests) })
      expect(check.kind === 'report' && check.policySource === 'manifest' && check.ok).toBe(true)
    }
  })

  it('two runs with the same seed write byte-identical reports, logs, manifests and captures', async () => {
    const a = join(tmp.dir, 'same-a')
    const b = join(tmp.dir, 'same-b')
    const first = await runSim(['run', `${SMOKE}/*.yaml`, '--seed', '123', '--out-dir', a, '--reporter', 'json'])
    const second = await runSim(['run', `${SMOKE}/*.yaml`, '--seed', '123', '--out-dir', b, '--reporter', 'json'])
    expect([first.exitCode, second.exitCode]).toEqual([0, 0])
    expect(second.stdout).toBe(first.stdout)
    const filesA = await filesOf(a)
    expect(filesA.length).toBe(19) // per scenario: log, manifest, capture, world record; then the report
    expect(await filesOf(b)).toEqual(filesA)
    expect((JSON.parse(first.stdout) as RunReport).scenarios.every((s) => s.seed === 123)).toBe(true)
  })

  it('a deliberately wrong expectation exits 1 and prints a Replay: line that reproduces the failure', async () => {
    const text = await readFile(join(SMOKE, 'no-pressure.yaml'), 'utf8')
    const file = join(tmp.dir, 'wrong-expectation.yaml')
    await writeFile(file, text.replace('    brackets: 0\n', '    brackets: 2\n'))
    const run = await runSim(['run', file, '--seed', '77', '--out-dir', join(tmp.dir, 'wrong')])
    expect(run.exitCode).toBe(1)
    const replays = run.stderr.split('\n').filter((l) => l.startsWith('Replay: '))
    expect(replays).toEqual([`Replay: pnpm sim run ${file} --seed 77`])
    expect(run.stdout).not.toContain('Replay:') // exactly one per failure on a terminal: stderr's
    // Execute the replay (`pnpm sim` is `main`): the same expectation fails again.
    const argv = (replays[0] ?? '').slice('Replay: pnpm sim '.length).split(' ')
    const again = await runSim([...argv, '--out-dir', join(tmp.dir, 'replayed'), '--reporter', 'json'])
    expect(again.exitCode).toBe(1)
    const failed = (JSON.parse(again.stdout) as RunReport).scenarios[0]?.expectations.filter((e) => !e.passed)
    expect(failed).toEqual([{ name: 'counts.brackets', passed: false, expected: '2', actual: '0' }])
  })

  it('a schema-invalid scenario exits 2 and names file:line:column and the expected value', async () => {
    const text = await readFile(join(SMOKE, 'no-pressure.yaml'), 'utf8')
    const file = join(tmp.dir, 'invalid.yaml')
    await writeFile(file, text.replace('wire: openai', 'wire: grpc'))
    const run = await runSim(['run', file, '--out-dir', join(tmp.dir, 'invalid')])
    expect(run.exitCode).toBe(2)
    expect(run.stderr).toContain(`error: ${file}:12:9: /provider/wire must be one of "openai", "deepseek", "anthropic" (got "grpc")`)
  })

  it('FAULT-50: a child is SIGKILLed after compaction/start; the restored log passes the checker, no acked event lost', async () => {
    const text = await readFile(join(SMOKE, 'basic-pressure.yaml'), 'utf8')
    const file = join(tmp.dir, 'crash-after-start.yaml')
    await writeFile(file, `${text.slice(0, text.indexOf('expect:'))}faults:\n  - { kind: FAULT-50 }\n`)
    const run = await runSim(['run', file, '--out-dir', join(tmp.dir, 'crash'), '--reporter', 'json'])
    expect(run.exitCode).toBe(0)
    const s = (JSON.parse(run.stdout) as RunReport).scenarios[0]
    expect(s?.counts?.crashes).toBe(1)
    expect(s?.faults).toEqual([{ id: 'fault-1', kind: 'FAULT-50', fired: 1 }])
    expect(s?.outcomes?.map((o) => o.kind)).toEqual(['completed', 'completed', 'interrupted'])
    expect(s?.violations).toEqual([])
    expect(s?.expectations.find((e) => e.name === 'durable')).toMatchObject({ passed: true, actual: 'all present' })
    type Crashes = { crashes: Array<{ afterSeq: number }> }
    const manifest = JSON.parse(await readFile(join(tmp.dir, 'crash', s?.artifacts?.manifest ?? ''), 'utf8')) as Crashes
    const lines = (await readFile(join(tmp.dir, 'crash', s?.artifacts?.log ?? ''), 'utf8')).trim().split('\n')
    const after = manifest.crashes.map((c) => (JSON.parse(lines[c.afterSeq] ?? '{}') as { type?: string }).type)
    const next = manifest.crashes.map((c) => (JSON.parse(lines[c.afterSeq + 1] ?? '{}') as { type?: string }).type)
    expect([after, next]).toEqual([['compaction/start'], ['turn/end']]) // the repair closer follows the crash point
    // The capture holds the killed child's requests: one per turn, all dispatched before the crash point (the
    // restored session has no turn left to run).
    type Captured = { index: number; logRevisionAtDispatch: number; purpose: string }
    const requestsPath = join(tmp.dir, 'crash', s?.artifacts?.requests ?? '')
    const captured = (await readFile(requestsPath, 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as Captured)
    const crashSeq = manifest.crashes[0]?.afterSeq ?? -1
    const expected = [0, 1, 2, 3].map((i) => [i, 'conversation', true])
    expect(captured.map((r) => [r.index, r.purpose, r.logRevisionAtDispatch < crashSeq])).toEqual(expected)
    const check = await runSim(['check', join(tmp.dir, 'crash', s?.artifacts?.log ?? ''), '--requests', requestsPath])
    expect([check.exitCode, check.stdout.includes('no violations')]).toEqual([0, true])
    expect(check.stdout).not.toContain('not evaluated: INV-43')
  })

  it('FAULT-09 and FAULT-11 really run: no header and no compaction; busy before pruning under a FAULT-60 orphan', async () => {
    const faults = join(REPO_ROOT, 'scenarios/faults')
    const names = ['fault-09-overflow-without-request-header.yaml', 'fault-11-overflow-while-lock-live.yaml']
    const files = names.map((f) => join(faults, f))
    const out = join(tmp.dir, 'f09-f11')
    const run = await runSim(['run', ...files, '--out-dir', out, '--reporter', 'json'])
    expect(run.exitCode).toBe(0)
    const [f09, f11] = (JSON.parse(run.stdout) as RunReport).scenarios
    expect([f09?.status, f11?.status]).toEqual(['passed', 'passed'])
    const log09 = await readFile(join(out, f09?.artifacts?.log ?? ''), 'utf8')
    expect([log09.includes('"type":"request/header"'), log09.includes('"type":"compaction/start"')]).toEqual([false, false])
    expect(f11?.faults).toEqual([{ id: 'orphan', kind: 'FAULT-60', fired: 1 }, { id: 'overflow', kind: 'FAULT-11', fired: 1 }])
    const busy = /^overflow compaction failed: busy: compaction \S+ \(started at seq \d+\) is still open; preserving/
    expect(f11?.warnings?.at(-1)).toMatch(busy)
    expect(f11?.violations).toEqual([])
  })

  it('refuses a bad --seed and an unmatched glob with exit 2', async () => {
    expect((await runSim(['run', `${SMOKE}/*.yaml`, '--seed', '-1'])).exitCode).toBe(2)
    const none = await runSim(['run', `${SMOKE}/*.nothing`])
    expect([none.exitCode, none.stderr.includes('no file matches')]).toEqual([2, true])
  })
})
