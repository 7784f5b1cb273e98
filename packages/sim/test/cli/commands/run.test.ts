/**
 * Selecting and stopping in `sim run` (issue #17): `--filter <regex>` on scenario names, `--tag` (any of the
 * given tags), `--bail [n]` (the rest reported as skipped with the reason), a folder argument expanding to
 * the YAML files under it (recursively, sorted), and the input errors of each (exit 2 naming the flag).
 * The scenarios are copies of the smoke scenario `no-pressure` with their own names and tags.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { scenarioFiles } from '../../../src/cli/commands/run.ts'
import type { RunReport } from '../../../src/report/types.ts'
import { normalise, REPO_ROOT, runSim, tempDir } from '../run-sim.ts'

let tmp: { dir: string; cleanup: () => Promise<void> }
let cat: string

/** A copy of no-pressure named `name` with `tags`, optionally with an expectation that fails. */
async function scenario(path: string, name: string, tags: string[], failing = false): Promise<void> {
  let text = (await readFile(join(REPO_ROOT, 'scenarios/smoke/no-pressure.yaml'), 'utf8')).replace(/^tags: .*\n/m, '')
  text = text.replace('name: no-pressure\n', `name: ${name}\n${tags.length === 0 ? '' : `tags: [${tags.join(', ')}]\n`}`)
  if (failing) text = text.replace('    brackets: 0\n', '    brackets: 2\n')
  await writeFile(path, text)
}

beforeAll(async () => {
  tmp = await tempDir()
  cat = join(tmp.dir, 'cat')
  await mkdir(join(cat, 'b', 'deep'), { recursive: true })
  await mkdir(join(cat, '.hidden'), { recursive: true })
  await scenario(join(cat, 'a-one.yaml'), 'alpha-one', ['smoke', 'fast'], true)
  await scenario(join(cat, 'b', 'b-two.yaml'), 'beta-two', ['slow'], true)
  await scenario(join(cat, 'b', 'deep', 'c-three.yml'), 'gamma-three', [])
  await scenario(join(cat, '.hidden', 'skip.yaml'), 'hidden', [])
  await writeFile(join(cat, 'b', 'notes.txt'), 'not a scenario\n')
})
afterAll(async () => { await tmp.cleanup() })

const report = (stdout: string): RunReport => JSON.parse(stdout) as RunReport
const names = (r: RunReport): string[] => r.scenarios.map((s) => `${s.name}:${s.status}`)

describe('sim run selection', () => {
  it('a folder argument expands to every *.yaml/*.yml under it, recursively and sorted (dot-folders left out)', () => {
    expect(scenarioFiles([cat], tmp.dir).map((f) => f.slice(cat.length))).toEqual(['/a-one.yaml', '/b/b-two.yaml', '/b/deep/c-three.yml'])
    expect(scenarioFiles(['cat/b/'], tmp.dir)).toEqual(['cat/b/b-two.yaml', 'cat/b/deep/c-three.yml'])
  })

  it('--filter keeps the scenarios whose name matches the regular expression', async () => {
    const run = await runSim(['run', cat, '--filter', '^(alpha|gamma)-', '--reporter', 'json', '--out-dir', join(tmp.dir, 'f')])
    expect(names(report(run.stdout))).toEqual(['alpha-one:failed', 'gamma-three:passed'])
    expect(run.exitCode).toBe(1)
  })

  it('--tag keeps the scenarios carrying any of the tags (repeatable or a comma list); with --filter both must hold', async () => {
    const any = await runSim(['run', cat, '--tag', 'fast', '--tag', 'slow', '--reporter', 'json', '--out-dir', join(tmp.dir, 't1')])
    expect(names(report(any.stdout))).toEqual(['alpha-one:failed', 'beta-two:failed'])
    const comma = await runSim(['run', cat, '--tag', 'smoke,slow', '--filter', 'two', '--reporter', 'json', '--out-dir', join(tmp.dir, 't2')])
    expect(names(report(comma.stdout))).toEqual(['beta-two:failed'])
  })

  it('a selection that matches nothing, a bad regex and an empty tag are usage errors naming the flag', async () => {
    const none = await runSim(['run', cat, '--tag', 'nope'])
    expect([none.exitCode, none.stderr.split('\n')[0]]).toEqual([2, 'error: no scenario matches --tag nope (3 scenarios listed)'])
    const regex = await runSim(['run', cat, '--filter', 'a(b'])
    expect([regex.exitCode, regex.stderr.split('\n')[0]]).toEqual([
      2, 'error: --filter: invalid regular expression "a(b": Invalid regular expression: /a(b/: Unterminated group',
    ])
    expect((await runSim(['run', cat, '--tag', 'a,,b'])).stderr).toContain('error: --tag: empty tag')
  })

  it('--bail stops after the first failure; the rest are in the report as skipped with the reason', async () => {
    const run = await runSim(['run', cat, '--reporter', 'json', '--out-dir', join(tmp.dir, 'bail'), '--bail'])
    expect(run.exitCode).toBe(1)
    const r = report(run.stdout)
    expect(names(r)).toEqual(['alpha-one:failed', 'beta-two:skipped', 'gamma-three:skipped'])
    expect(r.summary).toEqual({ total: 3, passed: 0, failed: 1, skipped: 2, error: 0 })
    expect(r.scenarios[1]).toMatchObject({ skipReason: 'not run: --bail 1 stopped the run after 1 failure', seed: 1 })
    expect(run.stderr.split('\n').filter((l) => l.startsWith('Replay: '))).toHaveLength(1)
  })

  it('--bail 2 runs until the second failure; --bail with a non-number is a usage error with a hint', async () => {
    const run = await runSim(['run', cat, '--bail', '2', '--reporter', 'json', '--out-dir', join(tmp.dir, 'bail2')])
    expect(names(report(run.stdout))).toEqual(['alpha-one:failed', 'beta-two:failed', 'gamma-three:skipped'])
    expect(report(run.stdout).scenarios[2]?.skipReason).toBe('not run: --bail 2 stopped the run after 2 failures')
    const bad = await runSim(['run', cat, '--bail', 'x.yaml'])
    expect([bad.exitCode, bad.stderr.split('\n')[0]]).toEqual([
      2, 'error: --bail: expected a positive integer, got "x.yaml" (put --bail after the files, or write --bail=1)',
    ])
    expect((await runSim(['run', cat, '--bail', '0'])).exitCode).toBe(2)
  })
})

describe('sim run --help', () => {
  it('documents every flag and says which config was read (none in an empty folder)', async () => {
    const empty = join(tmp.dir, 'empty')
    await mkdir(empty, { recursive: true })
    const run = await runSim(['run', '--help'], { cwd: empty })
    expect(run.exitCode).toBe(0)
    expect(normalise(run.stdout)).toMatchInlineSnapshot(`
      "sim run <files..>

      Run scenarios against a mocked provider and check them

      Positionals:
        files  Scenario YAML files, folders (every *.yaml under them) or quoted globs
               (e.g. "scenarios/**/*.yaml")           [array] [required] [default: []]

      Options:
            --color     Colour output; --no-color disables it                [boolean]
            --debug     Stack traces for internal errors                     [boolean]
        -h, --help      Show help                                            [boolean]
            --version   Show version number                                  [boolean]
            --seed      Seed (uint32) for every scenario instead of each file's own
                                                                              [string]
            --seeds     Run every scenario once per seed: a range a..b or a comma list
                        (1..20, 1,5,9); reports every failing seed with its replay
                                                                              [string]
            --workers   Worker threads of --seeds (default: the available cores; 1
                        runs in this process)                                 [string]
            --reporter  Output formats, repeatable (default pretty); html writes
                        index.html
            [array] [choices: "pretty", "json", "markdown", "junit", "html", "github"]
            --out-dir   Where logs, manifests, captures and reports go (default
                        reports/<run-id>/)                                    [string]
            --filter    Only scenarios whose name matches this regular expression
                                                                              [string]
            --tag       Only scenarios carrying this tag (repeatable or a comma list:
                        any of them)                                           [array]
            --bail      Stop after n failed or errored scenarios (default 1); the rest
                        are reported as skipped                               [string]
            --timings   Add wall-clock durations to the report (no longer byte-stable)
                                                            [boolean] [default: false]
            --record    Upstream summarizers (summarizer: {upstream: …}) call their
                        URL for the compaction requests <scenario>.cassette.json lacks
                        and store the replies there; without it runs replay the
                        cassette offline and a missing entry exits 2
                                                            [boolean] [default: false]
            --subject   Who runs the sessions: reference (default), dsh (the official
                        engine 0.1.0-rc.8) or module:<path>; a comma list or repeated
                        flag runs each scenario under each and adds a differential
                                                                              [string]
            --shard     Run slice i of n of the scenario list (i/n, a stable hash of
                        each path); merge with sim report merge               [string]

      Examples:
        sim run "scenarios/**/*.yaml"             Run the whole catalog (quote the
                                                  glob; sim expands ** itself)
        sim run scenarios --filter "^fault-0"     Scenarios named fault-0…, stopping
        --bail                                    at the first failure
        sim run                                   One scenario, one seed, the report
        scenarios/smoke/basic-pressure.yaml       on stdout
        --seed 42 --reporter json
        sim run "scenarios/**/*.yaml" --seeds     Every scenario under seeds 1 to 20,
        1..20                                     in parallel workers
        OPENAI_API_KEY=… sim run my-session.yaml  Record a real summarizer once into
        --record                                  my-session.cassette.json
        sim run my-session.yaml                   Replay it: offline, byte-identical
                                                  report

      Config: none (sim.config.json, sim.config.yaml, package.json "sim")
      A config sets defaults for subject, reporters, outDir and seed; flags win.
      "
    `)
  })
})
