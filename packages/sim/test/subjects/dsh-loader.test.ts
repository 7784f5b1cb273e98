/**
 * `--subject dsh` comes from the optional package `@compaction-sim/subject-dsh` (issue #17): sim imports it only when
 * asked. Without it — a real `ERR_MODULE_NOT_FOUND` from resolving the package where it is not installed — the CLI
 * exits 2 with the one install command, for the flag and for `subject: dsh` in a scenario; a missing dependency of
 * the package is NOT reported as "not installed"; a package without `dshSubject` is a shape error (exit 2).
 */
import { spawnSync } from 'node:child_process'
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { classifyError, UsageError } from '../../src/cli/exit-codes.ts'
import { subjectFromFlag } from '../../src/cli/subject-flag.ts'
import {
  DSH_INSTALL_COMMAND, DSH_SUBJECT_PACKAGE, DshSubjectMissingError, isPackageNotFound, loadDshSubject, type ModuleImporter,
} from '../../src/subjects/dsh-loader.ts'
import { SubjectModuleError } from '../../src/subjects/module.ts'
import { normalise, REPO_ROOT, tempDir } from '../cli/run-sim.ts'

let tmp: { dir: string; cleanup: () => Promise<void> }
/** A native `import()` resolved from a temp folder outside the repository, where no package is installed. */
let importFromEmptyDir: ModuleImporter

beforeAll(async () => {
  tmp = await tempDir()
  const probe = join(tmp.dir, 'probe.mjs')
  await writeFile(probe, 'export const load = (specifier) => import(specifier)\n')
  importFromEmptyDir = ((await import(pathToFileURL(probe).href)) as { load: ModuleImporter }).load
})
afterAll(async () => { await tmp.cleanup() })

describe('loading the optional dsh subject', () => {
  it('turns the real "Cannot find package" of the package itself into DshSubjectMissingError naming the install command', async () => {
    const err = await loadDshSubject(importFromEmptyDir).then(() => null, (e: unknown) => e)
    expect(err).toBeInstanceOf(DshSubjectMissingError)
    expect((err as Error).message).toBe(
      'the dsh subject (the released official DSH engine) is an optional package that is not installed; '
      + 'install it with: npm i -D @compaction-sim/subject-dsh',
    )
    // The cause is Node's own resolution error for exactly that package.
    const cause = (err as Error).cause
    expect((cause as { code?: string }).code).toBe('ERR_MODULE_NOT_FOUND')
    expect(isPackageNotFound(cause, DSH_SUBJECT_PACKAGE)).toBe(true)
  })

  it('rethrows a missing dependency OF the package unchanged (a broken install is not "not installed")', async () => {
    const inner = join(tmp.dir, 'inner.mjs')
    await writeFile(inner, "export * from '@deepseek-ai/dsh-not-installed'\n")
    const importer: ModuleImporter = () => import(pathToFileURL(inner).href)
    const err = await loadDshSubject(importer).then(() => null, (e: unknown) => e)
    expect(err).not.toBeInstanceOf(DshSubjectMissingError)
    expect((err as { code?: string }).code).toBe('ERR_MODULE_NOT_FOUND')
    expect((err as Error).message).toMatch(/^Cannot find package '@deepseek-ai\/dsh-not-installed' /)
    expect(isPackageNotFound(err, DSH_SUBJECT_PACKAGE)).toBe(false)
  })

  it('refuses a package without a dshSubject export as a SubjectModuleError', async () => {
    await expect(loadDshSubject(async () => ({ somethingElse: 1 }))).rejects.toThrow(SubjectModuleError)
    await expect(loadDshSubject(async () => ({ dshSubject: { name: 'dsh' } }))).rejects.toThrow(/`runSession` must be a function/)
  })

  it('--subject dsh without the package is a UsageError (exit 2) that prints the install command', async () => {
    const err = await subjectFromFlag('dsh', tmp.dir, importFromEmptyDir).then(() => null, (e: unknown) => e)
    expect(err).toBeInstanceOf(UsageError)
    const verdict = classifyError(err)
    expect(verdict.exitCode).toBe(2)
    expect(verdict.message).toContain(DSH_INSTALL_COMMAND)
  })

  it('loads the installed package by name in this repository (root devDependency) as the dsh subject', async () => {
    const subject = await loadDshSubject()
    expect([subject.name, subject.dialect, subject.features]).toEqual(['dsh', 'dsh-0.1.0-rc.8', ['timeouts']])
    expect(await loadDshSubject()).toBe(subject)
  }, 60_000)
})

/**
 * The real CLI in a child process with a resolve hook that resolves `@compaction-sim/subject-dsh` (and only it) from
 * an empty temp folder, so Node's own resolver fails for it exactly as in a project that never installed it.
 */
function simWithoutDsh(args: string[], emptyDir: string, hook: string): { status: number | null; stdout: string; stderr: string } {
  const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1', CI: 'true' }
  delete env['FORCE_COLOR']
  // `--conditions=source`: workspace packages resolve to their TypeScript sources wherever they export that condition.
  const node = ['--conditions=source', '--import', 'tsx', '--import', pathToFileURL(hook).href]
  const child = spawnSync(process.execPath, [...node, 'packages/sim/src/cli/bin.ts', ...args], {
    cwd: REPO_ROOT, env, encoding: 'utf8', timeout: 120_000,
  })
  if (child.error !== undefined) throw child.error
  return { status: child.status, stdout: normalise(child.stdout, { [emptyDir]: '<tmp>' }), stderr: normalise(child.stderr, { [emptyDir]: '<tmp>' }) }
}

describe('sim without @compaction-sim/subject-dsh installed (real CLI, real resolver)', () => {
  let hook: string

  beforeAll(async () => {
    const parentUrl = pathToFileURL(join(tmp.dir, 'parent.mjs')).href
    const hooks = `export async function resolve(specifier, context, next) {
  if (specifier === ${JSON.stringify(DSH_SUBJECT_PACKAGE)}) return next(specifier, { ...context, parentURL: ${JSON.stringify(parentUrl)} })
  return next(specifier, context)
}
`
    await writeFile(join(tmp.dir, 'hide-hooks.mjs'), hooks)
    hook = join(tmp.dir, 'hide-subject-dsh.mjs')
    await writeFile(hook, `import { register } from 'node:module'\nregister(${JSON.stringify(pathToFileURL(join(tmp.dir, 'hide-hooks.mjs')).href)})\n`)
  })

  it('sim run --subject dsh exits 2 and prints the install command', () => {
    const run = simWithoutDsh(['run', 'scenarios/smoke/no-pressure.yaml', '--subject', 'dsh', '--out-dir', join(tmp.dir, 'out')], tmp.dir, hook)
    // Only the error line: the run's header line belongs to the run command's own output format.
    expect(run.stderr.split('\n').filter((line) => line.startsWith('error:'))).toEqual([
      `error: --subject: the dsh subject (the released official DSH engine) is an optional package that is not installed; install it with: ${
        DSH_INSTALL_COMMAND}`,
    ])
    expect(DSH_INSTALL_COMMAND).toBe('npm i -D @compaction-sim/subject-dsh')
    expect(run.status).toBe(2)
  }, 130_000)

  it('a scenario with subject: dsh reports an input error naming the install command, and the run exits 2', async () => {
    const text = await readFile(join(REPO_ROOT, 'scenarios/smoke/no-pressure.yaml'), 'utf8')
    const file = join(tmp.dir, 'dsh-scenario.yaml')
    await writeFile(file, text.replace(/^# yaml-language-server.*\n/, '').replace(/^seed: 1$/m, 'seed: 1\nsubject: dsh'))
    const run = simWithoutDsh(['run', file, '--out-dir', join(tmp.dir, 'out-yaml'), '--reporter', 'json'], tmp.dir, hook)
    const report = JSON.parse(run.stdout) as { scenarios: Array<{ status: string; errorKind?: string; error?: string }> }
    expect(report.scenarios.map((s) => [s.status, s.errorKind, s.error])).toEqual([[
      'error', 'input', `the dsh subject (the released official DSH engine) is an optional package that is not installed; install it with: ${DSH_INSTALL_COMMAND}`,
    ]])
    expect(run.status).toBe(2)
  }, 130_000)
})
