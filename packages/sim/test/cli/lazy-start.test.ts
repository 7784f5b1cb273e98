/**
 * Issue #17 "lazy start": `sim --version` and `sim --help` load no command module, and a crash child starts
 * from a lean entry that loads the subject, the store and the world but no checker, report or CLI module.
 * Each case spawns the real entry from source (`node --conditions=source --import tsx …`) with one more
 * `--import`: a hook (written to a temp folder) that appends every module URL Node loads to a file.
 */
import { spawnSync } from 'node:child_process'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { REPO_ROOT } from './run-sim.ts'

let dir: string
let register: string

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'sim-lazy-start-'))
  await writeFile(join(dir, 'hooks.mjs'), [
    `import { appendFileSync } from 'node:fs'`,
    `let out`,
    `export function initialize(data) { out = data.out }`,
    `export async function load(url, context, next) { appendFileSync(out, url + '\\n'); return next(url, context) }`,
    '',
  ].join('\n'))
  register = join(dir, 'register.mjs')
  await writeFile(register, [
    `import { register } from 'node:module'`,
    `register(new URL('./hooks.mjs', import.meta.url), { data: { out: process.env.SIM_TRACE_OUT } })`,
    '',
  ].join('\n'))
})
afterAll(async () => {
  await rm(dir, { recursive: true, force: true })
})

/** Runs `entry args` from source with the tracing hook; returns its output and the repository modules it loaded (root-relative). */
function traced(name: string, entry: string, args: string[]): { status: number | null; stdout: string; modules: Promise<string[]> } {
  const out = join(dir, `${name}.txt`)
  const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1', SIM_TRACE_OUT: out }
  delete env['FORCE_COLOR']
  delete env['NODE_OPTIONS']
  const child = spawnSync(process.execPath, ['--conditions=source', '--import', 'tsx', '--import', pathToFileURL(register).href, entry, ...args], {
    cwd: REPO_ROOT, env, encoding: 'utf8', timeout: 120_000,
  })
  expect(child.error).toBeUndefined()
  const root = pathToFileURL(REPO_ROOT).href
  const modules = readFile(out, 'utf8').then((text) => text.split('\n')
    .filter((url) => url.startsWith(`${root}/packages/`) && !url.includes('/node_modules/'))
    .map((url) => url.slice(root.length + 1)))
  return { status: child.status, stdout: child.stdout, modules }
}

/** Module paths that only a command's implementation loads. */
const HEAVY = /\/cli\/commands\/|\/checker\/|\/run\/|\/subjects\/|\/report\/|\/scenario\/|\/sweep\/|^packages\/(core|fixtures)\//

describe('lazy start', () => {
  it('sim --version loads only the CLI root (no command module, no core, no checker)', async () => {
    const run = traced('version', 'packages/sim/src/cli/bin.ts', ['--version'])
    expect(run.status).toBe(0)
    expect(run.stdout).toMatch(/^\d+\.\d+\.\d+\n$/)
    const modules = await run.modules
    expect(modules).toContain('packages/sim/src/cli/main.ts')
    expect(modules.filter((m) => HEAVY.test(m))).toEqual([])
  }, 150_000)

  it('sim --help lists every command yet loads no command module', async () => {
    const run = traced('help', 'packages/sim/src/cli/bin.ts', ['--help'])
    expect(run.status).toBe(0)
    for (const command of ['inspect', 'check', 'run', 'conform', 'serve', 'sweep', 'report', 'import', 'fuzz']) expect(run.stdout).toContain(`sim ${command}`)
    const modules = await run.modules
    expect(modules.filter((m) => HEAVY.test(m))).toEqual([])
    expect(modules.every((m) => m.startsWith('packages/sim/src/cli/'))).toBe(true)
  }, 150_000)

  it('the crash child loads the subject, the store and the world, but no checker, report, CLI or sweep module', async () => {
    // Without a job argument the child fails after its imports ran (exit 3), which is all this needs.
    const run = traced('crash-child', 'packages/sim/src/world/crash-child.ts', [])
    expect(run.status).toBe(3)
    const modules = await run.modules
    expect(modules).toEqual(expect.arrayContaining([
      'packages/sim/src/subjects/reference.ts', 'packages/core/src/log/store.ts', 'packages/sim/src/run/world.ts',
    ]))
    expect(modules.filter((m) => /\/(checker|report|cli|sweep|metrics\/cache)\b|\/subjects\/dsh/.test(m))).toEqual([])
  }, 150_000)
})
