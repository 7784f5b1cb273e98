/**
 * `sim run` streams (issue #17): each scenario's line is written when that scenario is final — before the
 * next scenario has written its log and before report.json exists (ordering signals from the file system,
 * no timing) — and under CI the streamed bytes equal `renderPretty(report, { ci: true })`. On a terminal the
 * lines carry an `n/N` counter and the elapsed time, and the failures are repeated with `Replay:` at the end.
 */
import { existsSync } from 'node:fs'
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { main } from '../../src/cli/main.ts'
import { renderPretty } from '../../src/report/pretty.ts'
import type { RunReport } from '../../src/report/types.ts'
import { normalise, REPO_ROOT, tempDir } from './run-sim.ts'

const SMOKE = join(REPO_ROOT, 'scenarios/smoke')
let tmp: { dir: string; cleanup: () => Promise<void> }
beforeAll(async () => { tmp = await tempDir() })
afterAll(async () => { await tmp.cleanup() })

/** One write to a stream, with what existed on disk at that moment. */
interface Write { stream: 'stdout' | 'stderr'; text: string; logs: string[]; report: boolean }

async function runObserved(argv: string[], outDir: string, env: Record<string, string>, isTTY: boolean): Promise<{ code: number; writes: Write[] }> {
  const writes: Write[] = []
  const logs = ['smoke--basic-pressure.jsonl', 'smoke--no-pressure.jsonl', 'smoke--overflow-recovery.jsonl']
  const sink = (stream: Write['stream']) => ({
    write: (text: string) => {
      writes.push({ stream, text, logs: logs.filter((l) => existsSync(join(outDir, l))), report: existsSync(join(outDir, 'report.json')) })
    },
  })
  const code = await main([...argv, '--out-dir', outDir], { stdout: sink('stdout'), stderr: sink('stderr'), env, isTTY })
  return { code, writes }
}

describe('sim run streams its results', () => {
  it('under CI: one line per scenario as it finishes, before the next scenario ran; the bytes equal renderPretty', async () => {
    const out = join(tmp.dir, 'ci')
    const { code, writes } = await runObserved(['run', `${SMOKE}/*.yaml`], out, { CI: 'true' }, false)
    expect(code).toBe(0)
    const stdout = writes.filter((w) => w.stream === 'stdout')
    const lineOf = (name: string): Write | undefined => stdout.find((w) => w.text.includes(` ${name} [reference`))
    // Scenario k's line is on stdout before scenario k+1 wrote its log, and all of them before report.json.
    expect([lineOf('basic-pressure')?.logs, lineOf('no-pressure')?.logs, lineOf('overflow-recovery')?.logs]).toEqual([
      ['smoke--basic-pressure.jsonl'],
      ['smoke--basic-pressure.jsonl', 'smoke--no-pressure.jsonl'],
      ['smoke--basic-pressure.jsonl', 'smoke--no-pressure.jsonl', 'smoke--overflow-recovery.jsonl'],
    ])
    expect(stdout.map((w) => w.report)).toEqual([false, false, false, false, false, true])
    const report = JSON.parse(await readFile(join(out, 'report.json'), 'utf8')) as RunReport
    expect(stdout.map((w) => w.text).join('')).toBe(renderPretty(report, { color: false, ci: true }))
  })

  it('on a terminal: [n/N elapsed] on each line, details under a failure, and the failures again with Replay: at the end', async () => {
    const text = await readFile(join(SMOKE, 'no-pressure.yaml'), 'utf8')
    const wrong = join(tmp.dir, 'wrong.yaml')
    await writeFile(wrong, text.replace('    brackets: 0\n', '    brackets: 2\n'))
    const out = join(tmp.dir, 'tty')
    const { code, writes } = await runObserved(['run', join(SMOKE, 'no-pressure.yaml'), wrong, '--no-color'], out, {}, true)
    expect(code).toBe(1)
    const failLine = writes.find((w) => w.stream === 'stdout' && w.text.includes('FAIL'))
    expect(failLine?.report).toBe(false)
    const shown = (stream: Write['stream']): string =>
      normalise(writes.filter((w) => w.stream === stream).map((w) => w.text).join(''), { [tmp.dir]: '<tmp>' }).replace(/\d+\.\ds\b/g, '<t>s')
        .replace(/run-own-[0-9a-f]{10}/g, 'run-own-<id>') // the id hashes the file list, which holds the random <tmp>
    expect(shown('stdout')).toMatchInlineSnapshot(`
      "compaction-sim 0.1.0 · run run-own-<id> · seed per scenario
      [1/2 <t>s] PASS  scenarios/smoke/no-pressure.yaml no-pressure [reference seed=1] brackets=0 prunes=0 offloads=0 retries=0 pressure=0.1% (148/128000 tokens) drift=max +0.00% mean -16.13%
      [2/2 <t>s] FAIL  <tmp>/wrong.yaml no-pressure [reference seed=1] brackets=0 prunes=0 offloads=0 retries=0 pressure=0.1% (148/128000 tokens) drift=max +0.00% mean -16.13%
        ✗ counts.brackets: expected 2, got 0

      Summary: 2 scenarios: 1 passed, 1 failed, 0 skipped, 0 error
      Finished in <t>s
      "
    `)
    expect(shown('stderr')).toMatchInlineSnapshot(`
      "sim run: 2 scenarios, seed of each scenario, output <tmp>/tty
      reports: <tmp>/tty/report.json, report.md, junit.xml
      1 failure:
      FAIL  <tmp>/wrong.yaml no-pressure [reference seed=1] brackets=0 prunes=0 offloads=0 retries=0 pressure=0.1% (148/128000 tokens) drift=max +0.00% mean -16.13% — counts.brackets: expected 2, got 0
      Replay: pnpm sim run <tmp>/wrong.yaml --seed 1
      "
    `)
  })

  it('--reporter html alone: stdout stays empty; stderr has the summary line and the page path', async () => {
    const out = join(tmp.dir, 'html')
    const { code, writes } = await runObserved(['run', join(SMOKE, 'no-pressure.yaml'), '--reporter', 'html'], out, { CI: 'true' }, false)
    expect(code).toBe(0)
    expect(writes.filter((w) => w.stream === 'stdout')).toEqual([])
    expect(normalise(writes.map((w) => w.text).join(''), { [tmp.dir]: '<tmp>' })).toMatchInlineSnapshot(`
      "sim run: 1 scenario, seed of each scenario, output <tmp>/html
      Summary: 1 scenario: 1 passed, 0 failed, 0 skipped, 0 error
      reports: <tmp>/html/report.json, report.md, junit.xml, index.html
      html report: <tmp>/html/index.html
      "
    `)
    expect(existsSync(join(out, 'index.html'))).toBe(true)
  })
})
