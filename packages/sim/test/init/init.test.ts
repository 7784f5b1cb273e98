/**
 * Issue #17 `sim init`: scaffolds subject, vitest file and workflow from the package's templates (byte for
 * byte), and what it writes works — the generated JS subject conforms at level `must` over the whole pack
 * (`sim conform` in-process, crash scenarios in a child process), the TS one on a crash scenario, and the
 * generated `conformance.test.mjs` runs under a plain vitest (an empty config: no `server.deps.inline`).
 * A second `sim init` refuses with exit 2 naming the files, and a single existing target makes it write
 * nothing at all.
 *
 * The scaffolds go to `packages/sim/.tmp/` (gitignored), inside the workspace, so the templates' imports by
 * package name (`@compaction-sim/core`, `@compaction-sim/sim/conformance`) resolve as in a user's project.
 */
import { execFile } from 'node:child_process'
import { mkdir, mkdtemp, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { initFiles } from '../../src/init/init.ts'
import type { RunReport } from '../../src/report/types.ts'
import { normalise, REPO_ROOT, runSim } from '../cli/run-sim.ts'

const exec = promisify(execFile)
/** `packages/sim/.tmp/`: inside the workspace, ignored by git. */
const TMP_ROOT = fileURLToPath(new URL('../../.tmp/', import.meta.url))
/** Generous: the whole pack with its crash children on a loaded 2-core machine. */
const PACK_TIMEOUT_MS = 600_000

let root: string
beforeAll(async () => {
  await mkdir(TMP_ROOT, { recursive: true })
  root = await mkdtemp(join(TMP_ROOT, 'init-'))
})
afterAll(async () => {
  await rm(root, { recursive: true, force: true })
})

/** A fresh empty project folder under `root`. */
async function project(name: string): Promise<string> {
  const dir = join(root, name)
  await mkdir(dir)
  return dir
}

/** Every file under `dir`, relative and sorted. */
async function listFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true })
  return entries.filter((e) => e.isFile()).map((e) => relative(dir, join(e.parentPath, e.name))).sort()
}

/** Output with the project folder (as `sim init` prints it, relative to the working directory) replaced by `<dir>`. */
function shown(text: string, dir: string): string {
  return normalise(text, { [relative(process.cwd(), dir)]: '<dir>', [dir]: '<dir>' })
}

/** This process's environment without the outer vitest's and pnpm's variables (for a nested vitest). */
function cleanEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {}
  for (const [key, value] of Object.entries(process.env)) {
    if (/^(VITEST|npm_|NODE_OPTIONS$|TEST$|PNPM_SCRIPT_SRC_DIR$)/i.test(key)) continue
    env[key] = value
  }
  return { ...env, CI: 'true', NO_COLOR: '1' }
}

describe('sim init', () => {
  it('writes the JS scaffold from the templates, lists it on stdout, and its subject conforms at level must', async () => {
    const dir = await project('js')
    const run = await runSim(['init', '--dir', dir])
    expect(run.exitCode, run.stderr).toBe(0)
    expect(shown(run.stdout, dir)).toMatchInlineSnapshot(`
      "<dir>/subject.mjs
      <dir>/conformance.test.mjs
      <dir>/.github/workflows/conformance.yml
      "
    `)
    expect(shown(run.stderr, dir)).toMatchInlineSnapshot(`
      "sim init: wrote 3 files. Next:
        cd <dir> && npm i -D @compaction-sim/core @compaction-sim/sim vitest
        cd <dir> && npx vitest run    # the conformance pack as vitest tests, level must
        npx sim conform --subject module:./<dir>/subject.mjs    # the same from the CLI (what the workflow runs)
      Then replace the core pieces in <dir>/subject.mjs with your own backend, keeping the contract its header describes.
      "
    `)
    expect(await listFiles(dir)).toEqual(['.github/workflows/conformance.yml', 'conformance.test.mjs', 'subject.mjs'])
    for (const file of initFiles('js')) expect(await readFile(join(dir, file.target))).toEqual(await readFile(file.template))
    const workflow = await readFile(join(dir, '.github/workflows/conformance.yml'), 'utf8')
    expect(workflow).toContain('npx sim conform --subject module:./subject.mjs --level must\n          --reporter junit --reporter github')
    expect(await readFile(join(dir, 'subject.mjs'), 'utf8')).toMatch(/from '@compaction-sim\/core'/)

    const outDir = join(dir, 'reports')
    const conform = await runSim(['conform', '--subject', `module:${join(dir, 'subject.mjs')}`, '--level', 'must', '--reporter', 'json', '--out-dir', outDir])
    expect(conform.exitCode, conform.stderr).toBe(0)
    const report = JSON.parse(conform.stdout) as RunReport
    expect(report.summary.failed + report.summary.error).toBe(0)
    expect(report.scenarios.filter((s) => s.status === 'skipped').map((s) => s.skipReason?.replace(/ \(.*$/, ''))).toEqual([
      'subject my-adapter does not declare the feature this scenario needs: sessions',
      'subject my-adapter does not declare the feature this scenario needs: unroutableSummarizer',
      'subject my-adapter does not declare the feature this scenario needs: explicitRegion',
    ])
    expect(report.summary.passed).toBe(report.summary.total - 3)
    // The crash scenarios ran the generated subject again in a child process.
    expect(report.scenarios.filter((s) => s.counts?.crashes === 1).length).toBeGreaterThanOrEqual(5)
    expect(conform.stderr).toContain('my-adapter conforms at level must (pack v3)')
  }, PACK_TIMEOUT_MS)

  it('the generated conformance.test.mjs runs under vitest (only the source condition added): a crash and a smoke scenario pass', async () => {
    const dir = await project('vitest')
    expect((await runSim(['init', '--dir', dir])).exitCode).toBe(0)
    // The user's project would have no config at all (the packed-install test runs it that way, against dist).
    // In the repo there is no dist, so this config only adds the workspace's `source` export condition (and
    // stops vitest from finding packages/sim's config).
    const conditions = JSON.stringify(['source', 'module', 'node', 'development|production'])
    await writeFile(join(dir, 'vitest.config.mjs'), `export default { resolve: { conditions: ${conditions} }, ssr: { resolve: { conditions: ${conditions} } } }\n`)
    const vitest = join(REPO_ROOT, 'node_modules', 'vitest', 'vitest.mjs')
    const args = [vitest, 'run', '--reporter=json', '--outputFile=result.json', '-t', 'fault-53-after-checkpoint|smoke/basic-pressure']
    const failure = await exec(process.execPath, args, { cwd: dir, env: cleanEnv(), timeout: PACK_TIMEOUT_MS - 60_000 })
      .then(() => null, (err: { code?: number; stderr?: string }) => `exit ${err.code}: ${err.stderr ?? ''}`)
    expect(failure, 'vitest on the generated conformance.test.mjs').toBeNull()
    const result = JSON.parse(await readFile(join(dir, 'result.json'), 'utf8')) as {
      numPassedTests: number; numFailedTests: number; testResults: Array<{ assertionResults: Array<{ title: string; status: string }> }>
    }
    const passed = result.testResults.flatMap((r) => r.assertionResults).filter((a) => a.status === 'passed').map((a) => a.title).sort()
    expect(passed).toEqual(['pack-v1/crash/fault-53-after-checkpoint.yaml', 'pack-v1/smoke/basic-pressure.yaml'])
    expect(result.numFailedTests).toBe(0)
  }, PACK_TIMEOUT_MS)

  it('--ts writes subject.ts and conformance.test.ts, and the TS subject passes a crash scenario', async () => {
    const dir = await project('ts')
    const run = await runSim(['init', '--ts', '--dir', dir])
    expect(run.exitCode, run.stderr).toBe(0)
    expect(await listFiles(dir)).toEqual(['.github/workflows/conformance.yml', 'conformance.test.ts', 'subject.ts'])
    for (const file of initFiles('ts')) expect(await readFile(join(dir, file.target))).toEqual(await readFile(file.template))
    expect(shown(run.stderr, dir)).toContain('npm i -D @compaction-sim/core @compaction-sim/sim vitest tsx')
    expect(await readFile(join(dir, 'conformance.test.ts'), 'utf8')).toContain("new URL('./subject.ts', import.meta.url)")
    const workflow = await readFile(join(dir, '.github/workflows/conformance.yml'), 'utf8')
    expect(workflow).toContain('NODE_OPTIONS: --import tsx')
    expect(workflow).toContain('npx sim conform --subject module:./subject.ts --level must')
    const conform = await runSim([
      'conform', '--subject', `module:${join(dir, 'subject.ts')}`, '--filter', 'fault-53', '--reporter', 'json', '--out-dir', join(dir, 'reports'),
    ])
    expect(conform.exitCode, conform.stderr).toBe(0)
    const report = JSON.parse(conform.stdout) as RunReport
    expect(report.scenarios.map((s) => [s.status, s.counts?.crashes])).toEqual([['passed', 1]])
  }, PACK_TIMEOUT_MS)

  it('a second sim init refuses with exit 2, names every existing file and changes nothing', async () => {
    const dir = await project('twice')
    expect((await runSim(['init', '--dir', dir])).exitCode).toBe(0)
    await writeFile(join(dir, 'subject.mjs'), '// my own subject\n')
    const before = await Promise.all(initFiles('js').map((f) => stat(join(dir, f.target))))
    const again = await runSim(['init', '--dir', dir])
    expect(again.exitCode).toBe(2)
    expect(again.stdout).toBe('')
    expect(shown(again.stderr, dir)).toMatchInlineSnapshot(`
      "error: sim init: <dir>/subject.mjs, <dir>/conformance.test.mjs, <dir>/.github/workflows/conformance.yml already exist; nothing was written (sim init never overwrites: move or delete them, or scaffold into another folder with --dir)
      "
    `)
    expect(await readFile(join(dir, 'subject.mjs'), 'utf8')).toBe('// my own subject\n')
    const after = await Promise.all(initFiles('js').map((f) => stat(join(dir, f.target))))
    expect(after.map((s) => s.mtimeMs)).toEqual(before.map((s) => s.mtimeMs))
    // --ts targets other names for the subject and the test, but the workflow is the same file: still refused.
    const ts = await runSim(['init', '--ts', '--dir', dir])
    expect(ts.exitCode).toBe(2)
    expect(shown(ts.stderr, dir)).toContain('sim init: <dir>/.github/workflows/conformance.yml already exists; nothing was written')
    expect(await listFiles(dir)).toEqual(['.github/workflows/conformance.yml', 'conformance.test.mjs', 'subject.mjs'])
  })

  it('one existing target (even a dangling link) is enough to write nothing at all', async () => {
    const dir = await project('one')
    await mkdir(join(dir, '.github/workflows'), { recursive: true })
    await writeFile(join(dir, '.github/workflows/conformance.yml'), 'name: mine\n')
    const run = await runSim(['init', '--dir', dir])
    expect(run.exitCode).toBe(2)
    expect(shown(run.stderr, dir)).toContain('error: sim init: <dir>/.github/workflows/conformance.yml already exists; nothing was written')
    expect(shown(run.stderr, dir)).toContain('move or delete it,')
    expect(await listFiles(dir)).toEqual(['.github/workflows/conformance.yml'])
    expect(await readFile(join(dir, '.github/workflows/conformance.yml'), 'utf8')).toBe('name: mine\n')

    const linked = await project('link')
    await exec('ln', ['-s', join(linked, 'nowhere'), join(linked, 'conformance.test.mjs')])
    const viaLink = await runSim(['init', '--dir', linked])
    expect(viaLink.exitCode).toBe(2)
    expect(shown(viaLink.stderr, linked)).toContain('sim init: <dir>/conformance.test.mjs already exists')
    expect(await listFiles(linked)).toEqual([])
  })

  it('--dir creates a missing folder and refuses a file (exit 2)', async () => {
    const dir = join(root, 'created', 'nested')
    expect((await runSim(['init', '--dir', dir])).exitCode).toBe(0)
    expect(await listFiles(dir)).toEqual(['.github/workflows/conformance.yml', 'conformance.test.mjs', 'subject.mjs'])
    const file = join(root, 'a-file')
    await writeFile(file, '')
    const run = await runSim(['init', '--dir', file])
    expect(run.exitCode).toBe(2)
    expect(shown(run.stderr, file)).toMatchInlineSnapshot(`
      "error: <dir>: not a directory; sim init writes into a project folder
      "
    `)
  })

  it('--help names the flags, the files and the refusal', async () => {
    const run = await runSim(['init', '--help'])
    expect(run.exitCode).toBe(0)
    expect(run.stdout).toMatchInlineSnapshot(`
      "sim init

      Scaffold conformance for your adapter: subject, test, CI workflow

      Options:
            --color    Colour output; --no-color disables it                 [boolean]
            --debug    Stack traces for internal errors                      [boolean]
        -h, --help     Show help                                             [boolean]
            --version  Show version number                                   [boolean]
            --ts       Write subject.ts and conformance.test.ts instead of .mjs
                                                            [boolean] [default: false]
            --dir      The project folder to write into (created when missing)
                                                               [string] [default: "."]

      Examples:
        sim init                                 Scaffold a JavaScript subject in the
                                                 working directory
        sim init --ts --dir packages/my-adapter  A TypeScript subject in another
                                                 folder

      Writes subject.mjs (a commented subject built on @compaction-sim/core),
      conformance.test.mjs (defineConformanceSuite, for vitest) and
      .github/workflows/conformance.yml (sim conform with the junit and github
      reporters); with --ts, subject.ts and conformance.test.ts. Never overwrites:
      when any of them exists, nothing is written and sim init exits 2 naming it.
      "
    `)
  })
})
