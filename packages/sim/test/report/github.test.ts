/**
 * The `github` reporter: workflow-command annotations at the scenario file and the YAML line of the failing
 * expectation (escaped per GitHub's rules), and the Markdown job summary appended to `$GITHUB_STEP_SUMMARY`.
 */
import { copyFile, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  escapeData, escapeProperty, expectationPointer, githubAnnotations, renderGithubAnnotations, renderGithubSummary, scenarioLineLocator,
  writeGithubReport,
} from '../../src/report/github.ts'
import { REPO_ROOT, runSim, tempDir } from '../cli/run-sim.ts'
import { errored, failed, mixedReport, passed, reportOf, skipped } from './sample-report.ts'

/** The failing sample scenario's file, with its `expect` block where the annotations should point. */
const THRESHOLD_EDGE = [
  'name: threshold-edge', // 1
  'seed: 42', // 2
  'expect:', // 3
  '  invariants: [INV-12, INV-30]', // 4
  '  outcome: [completed]', // 5
  '  counts:', // 6
  '    brackets: 1', // 7
  '',
].join('\n')

const locate = scenarioLineLocator((file) => {
  if (file === failed.file) return THRESHOLD_EDGE
  throw new Error(`no such file ${file}`)
})

describe('github annotations', () => {
  it('point at the invariants line for a violation and the expectation line for a failed expectation; errors carry their own line', () => {
    expect(renderGithubAnnotations(mixedReport, locate)).toMatchInlineSnapshot(`
      "::error file=scenarios/policy/threshold-edge.yaml,line=4,title=INV-12::threshold-edge [reference seed=42]: seq 17: bracket a|b never closed%0Asee <seq 3> & red%0AReplay: pnpm sim run scenarios/policy/threshold-edge.yaml --seed 42
      ::error file=scenarios/policy/threshold-edge.yaml,line=7,title=counts.brackets::threshold-edge [reference seed=42]: expected 1, got 0 | none%0AReplay: pnpm sim run scenarios/policy/threshold-edge.yaml --seed 42
      ::error file=bad.yaml,line=3,title=input error::bad [reference seed=3]: bad.yaml:3:5: /seed must be integer "x"
      "
    `)
  })

  it('passed and skipped scenarios give no annotation; an unknown line is left out', () => {
    expect(githubAnnotations(reportOf([passed, skipped]), locate)).toEqual([])
    const [first] = githubAnnotations(reportOf([failed]))
    expect(first).toMatchObject({ file: failed.file, line: null, title: 'INV-12' })
    expect(renderGithubAnnotations(reportOf([failed]))).toMatch(/^::error file=scenarios\/policy\/threshold-edge\.yaml,title=INV-12::/)
  })

  it('maps expectation names to JSON pointers, and a missing node to its nearest ancestor', () => {
    expect(['outcome[2]', 'counts.brackets', 'finalPressure.ratioMax', 'events[0]', 'finalSurfaceNodes', 'durable'].map((name) => expectationPointer({ name })))
      .toEqual(['/expect/outcome/2', '/expect/counts/brackets', '/expect/finalPressure/ratioMax', '/expect/events/0', '/expect/finalSurfaceNodes', '/faults'])
    expect(locate(failed.file, '/expect/outcome/0')).toBe(5)
    expect(locate(failed.file, '/expect/counts/prunes')).toBe(6)
    expect(locate(failed.file, '/faults')).toBe(1)
    expect(locate('missing.yaml', '/name')).toBeNull()
  })

  it('escapes data and properties per the workflow-command rules', () => {
    expect(escapeData('50% done\r\nnext')).toBe('50%25 done%0D%0Anext')
    expect(escapeProperty('a:b,c%')).toBe('a%3Ab%2Cc%25')
  })
})

describe('github job summary', () => {
  let tmp: { dir: string; cleanup: () => Promise<void> }
  beforeAll(async () => { tmp = await tempDir() })
  afterAll(async () => { await tmp.cleanup() })

  it('renders totals, failures with their reasons and replay, and the skipped list', () => {
    expect(renderGithubSummary(reportOf([passed, failed, skipped, errored]), 'conformance')).toMatchInlineSnapshot(`
      "## ❌ conformance: 1/4 passed

      Run \`run-0123abcd\` · seed per scenario · compaction-sim 0.1.0

      | passed | failed | skipped | error |
      |---:|---:|---:|---:|
      | 1 | 1 | 1 | 1 |

      ### Failures

      | scenario | subject | what failed | replay |
      |---|---|---|---|
      | \`scenarios/policy/threshold-edge.yaml\` | reference | INV-12; counts.brackets: expected 1, got 0 \\| none | \`pnpm sim run scenarios/policy/threshold-edge.yaml --seed 42\` |
      | \`bad.yaml\` | reference | input: bad.yaml:3:5: /seed must be integer "x" | \`pnpm sim run bad.yaml --seed 3\` |

      <details><summary>1 skipped</summary>

      - \`scenarios/policy/threshold-edge.yaml\`: subject dsh lacks pruning (§14)

      </details>

      "
    `)
    expect(renderGithubSummary(reportOf([passed]))).toMatch(/^## ✅ compaction-sim: 1\/1 passed/)
  })

  it('writeGithubReport prints annotations and appends the summary only when GITHUB_STEP_SUMMARY is set', async () => {
    const summaryFile = join(tmp.dir, 'summary.md')
    await writeFile(summaryFile, 'earlier step\n')
    let stdout = ''
    const sink = { stdout: { write: (t: string) => { stdout += t } } }
    writeGithubReport(reportOf([failed]), { ...sink, env: { GITHUB_STEP_SUMMARY: summaryFile } }, { locate })
    expect(stdout.split('\n').filter((l) => l.startsWith('::error ')).length).toBe(2)
    const written = await readFile(summaryFile, 'utf8')
    expect(written.startsWith('earlier step\n## ❌ compaction-sim: 0/1 passed')).toBe(true)
    writeGithubReport(reportOf([failed]), { ...sink, env: {} }, { locate })
    expect(await readFile(summaryFile, 'utf8')).toBe(written)
  })
})

describe('sim run --reporter github', () => {
  let tmp: { dir: string; cleanup: () => Promise<void> }
  beforeAll(async () => { tmp = await tempDir() })
  afterAll(async () => { await tmp.cleanup() })

  it('annotates a failed expectation at its line in the scenario file (exit 1)', async () => {
    const file = join(tmp.dir, 'no-pressure-wrong.yaml')
    await copyFile(join(REPO_ROOT, 'scenarios/smoke/no-pressure.yaml'), file)
    const text = (await readFile(file, 'utf8')).replace(/^ {4}brackets: 0$/m, '    brackets: 1')
    await writeFile(file, text)
    const line = text.split('\n').indexOf('    brackets: 1') + 1
    const run = await runSim(['run', file, '--reporter', 'github', '--out-dir', join(tmp.dir, 'out')])
    expect(run.exitCode).toBe(1)
    expect(run.stdout.replaceAll(tmp.dir, '<tmp>').split('%0A')[0])
      .toBe(`::error file=<tmp>/no-pressure-wrong.yaml,line=${line},title=counts.brackets::no-pressure [reference seed=1]: expected 1, got 0`)
  })
})
