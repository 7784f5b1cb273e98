/**
 * Issue #11 "done when": `defineConformanceSuite` works from a fresh project outside the workspace that
 * installs the packed packages. `pnpm pack` core, fixtures and sim (which must rewrite `workspace:*` to
 * versions), install the tarballs with npm from the registry into a temp project (npm `overrides` point the
 * packages' own `@compaction-sim/*` dependencies at the same tarballs), copy in the example subject, write the
 * README's few-line vitest file, run vitest there and read its JSON result: every pack test passes except the
 * two the example's features skip. Slow (network install, ~30 s): one test, generous timeout.
 */
import { execFile } from 'node:child_process'
import { copyFile, mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, expect, it } from 'vitest'
import { REPO_ROOT } from '../cli/run-sim.ts'

const exec = promisify(execFile)
const PACKAGES = ['core', 'fixtures', 'sim'] as const
const dirs: string[] = []
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true })
})

/** The environment of the nested tools: this process's, without the outer vitest's and pnpm's own variables. */
function cleanEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {}
  for (const [key, value] of Object.entries(process.env)) {
    if (/^(VITEST|npm_|NODE_OPTIONS$|TEST$|PNPM_SCRIPT_SRC_DIR$)/i.test(key)) continue
    env[key] = value
  }
  return { ...env, CI: 'true', NO_COLOR: '1' }
}

/** The test file an adapter author writes (README "Conformance for adapter authors"). */
const SUITE = `import { fileURLToPath } from 'node:url'
import { defineConformanceSuite } from '@compaction-sim/sim/conformance'

defineConformanceSuite({
  subject: fileURLToPath(new URL('./subject.ts', import.meta.url)),
  level: 'must',
})
`

it('defineConformanceSuite runs the pack for the example subject in a fresh project that installs the packed packages', async () => {
  const project = await mkdtemp(join(tmpdir(), 'sim-conformance-consumer-'))
  dirs.push(project)
  const packs = join(project, 'packs')
  await mkdir(packs)
  const env = cleanEnv()
  for (const name of PACKAGES) await exec('pnpm', ['pack', '--pack-destination', packs], { cwd: join(REPO_ROOT, 'packages', name), env })
  const tarballs = (await readdir(packs)).sort()
  expect(tarballs).toEqual(['compaction-sim-core-0.1.0.tgz', 'compaction-sim-fixtures-0.1.0.tgz', 'compaction-sim-sim-0.1.0.tgz'])
  const { stdout: simManifest } = await exec('tar', ['-xzOf', join(packs, 'compaction-sim-sim-0.1.0.tgz'), 'package/package.json'])
  expect(simManifest).not.toContain('workspace:')
  expect(JSON.parse(simManifest).dependencies['@compaction-sim/core']).toBe('0.1.0')

  const tarball = (name: string): string => `file:packs/compaction-sim-${name}-0.1.0.tgz`
  await writeFile(join(project, 'package.json'), `${JSON.stringify({
    name: 'conformance-consumer',
    private: true,
    type: 'module',
    dependencies: {
      '@compaction-sim/core': tarball('core'),
      '@compaction-sim/fixtures': tarball('fixtures'),
      '@compaction-sim/sim': tarball('sim'),
      vitest: '4.1.12',
    },
    overrides: { '@compaction-sim/core': '$@compaction-sim/core', '@compaction-sim/fixtures': '$@compaction-sim/fixtures' },
  }, null, 2)}\n`)
  await exec('npm', ['install', '--no-audit', '--no-fund', '--ignore-scripts', '--loglevel=error'], { cwd: project, env, timeout: 150_000 })
  await copyFile(join(REPO_ROOT, 'examples/subject-core-adapter/subject.ts'), join(project, 'subject.ts'))
  await writeFile(join(project, 'conformance.test.ts'), SUITE)

  const vitest = join(project, 'node_modules', 'vitest', 'vitest.mjs')
  const failure = await exec(process.execPath, [vitest, 'run', '--reporter=json', '--outputFile=result.json'], { cwd: project, env, timeout: 120_000 })
    .then(() => null, (err: { code?: number; stderr?: string }) => `exit ${err.code}: ${err.stderr ?? ''}`)
  expect(failure, 'vitest in the consumer project').toBeNull()
  const json = JSON.parse(await readFile(join(project, 'result.json'), 'utf8')) as {
    numPassedTests: number; numFailedTests: number; numPendingTests: number; numTotalTests: number
  }
  expect(json.numFailedTests).toBe(0)
  expect(json.numPendingTests).toBe(2) // explicitRegion and unroutableSummarizer: not declared by the example
  expect(json.numPassedTests).toBe(json.numTotalTests - 2)
  expect(json.numTotalTests).toBeGreaterThanOrEqual(45)
}, 180_000)
