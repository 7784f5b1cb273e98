/**
 * The `sim run` config (issue #17): `sim.config.json`, `sim.config.yaml` or `"sim"` in package.json in the
 * working directory sets subject, reporters, outDir and seed; flags override it; `sim run --help` names the
 * file read (or says none was); an unknown key or a wrong type is exit 2 naming the file and the field.
 */
import { existsSync } from 'node:fs'
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { describeRunConfig, loadRunConfig } from '../../src/cli/run-config.ts'
import type { RunReport } from '../../src/report/types.ts'
import { REPO_ROOT, runSim, tempDir } from './run-sim.ts'

const NO_PRESSURE = join(REPO_ROOT, 'scenarios/smoke/no-pressure.yaml')
let tmp: { dir: string; cleanup: () => Promise<void> }
let n = 0
beforeAll(async () => { tmp = await tempDir() })
afterAll(async () => { await tmp.cleanup() })

/** A fresh project folder holding `files`. */
async function project(files: Record<string, string>): Promise<string> {
  const dir = join(tmp.dir, `p${n++}`)
  await mkdir(dir, { recursive: true })
  for (const [name, text] of Object.entries(files)) await writeFile(join(dir, name), text)
  return dir
}

/** The message `loadRunConfig` throws in `dir`. */
function problem(dir: string): string {
  try {
    loadRunConfig(dir)
  } catch (err) {
    return (err as Error).message
  }
  throw new Error('the config was accepted')
}

describe('sim run config', () => {
  it('reads sim.config.json, sim.config.yaml or package.json "sim"; none is null', async () => {
    expect(loadRunConfig(await project({ 'sim.config.json': '{"seed": 5, "reporters": ["json"], "outDir": "out"}' }))).toEqual({
      source: 'sim.config.json', config: { seed: 5, reporters: ['json'], outDir: 'out' },
    })
    expect(loadRunConfig(await project({ 'sim.config.yaml': 'subject: reference\nreporters: markdown\n' }))).toEqual({
      source: 'sim.config.yaml', config: { subject: ['reference'], reporters: ['markdown'] },
    })
    expect(loadRunConfig(await project({ 'package.json': '{"name": "x", "sim": {"seed": 9}}' }))).toEqual({
      source: 'package.json ("sim")', config: { seed: 9 },
    })
    expect(loadRunConfig(await project({ 'package.json': '{"name": "x"}' }))).toBeNull()
    expect(loadRunConfig(await project({}))).toBeNull()
  })

  it('an unknown key, a wrong type, a bad value, malformed text and two config files are refused naming the file and field', async () => {
    expect(problem(await project({ 'sim.config.json': '{"outdir": "x"}' })))
      .toBe('sim.config.json: outdir: unknown key; allowed keys: subject, reporters, outDir, seed')
    expect(problem(await project({ 'sim.config.yaml': 'seed: -1\n' })))
      .toBe('sim.config.yaml: seed: expected an unsigned 32-bit integer (0 … 4294967295), got -1')
    expect(problem(await project({ 'sim.config.yaml': 'reporters: [pretty, pdf]\n' })))
      .toBe('sim.config.yaml: reporters: expected one of pretty, json, markdown, junit, html, github or a list of them, got ["pretty","pdf"]')
    expect(problem(await project({ 'package.json': '{"sim": {"subject": 7}}' })))
      .toBe('package.json ("sim"): sim.subject: expected a subject (reference, dsh or module:<path>) or a list of them, got 7')
    expect(problem(await project({ 'package.json': '{"sim": []}' })))
      .toBe('package.json ("sim"): sim: expected an object with keys subject, reporters, outDir, seed')
    expect(problem(await project({ 'sim.config.json': '{"seed": 1,}' }))).toMatch(/^sim\.config\.json: invalid JSON: /)
    expect(problem(await project({ 'sim.config.json': '{}', 'sim.config.yaml': '{}' })))
      .toBe('sim.config.json and sim.config.yaml both exist: keep one config file')
  })

  it('sim run uses the config, and a flag overrides it', async () => {
    const dir = await project({ 'sim.config.json': JSON.stringify({ seed: 77, reporters: ['json'], outDir: 'from-config' }) })
    const run = await runSim(['run', NO_PRESSURE], { cwd: dir })
    expect(run.exitCode).toBe(0)
    expect((JSON.parse(run.stdout) as RunReport).seed).toBe(77)
    expect(existsSync(join(dir, 'from-config', 'report.json'))).toBe(true)
    expect(run.stderr.split('\n')[0]).toBe('sim run: 1 scenario, seed 77, output from-config, config sim.config.json')
    const flagged = await runSim(['run', NO_PRESSURE, '--seed', '3', '--reporter', 'markdown', '--out-dir', 'from-flag'], { cwd: dir })
    expect(flagged.exitCode).toBe(0)
    expect(flagged.stdout).toMatch(/^# /) // markdown, not the config's json
    const written = JSON.parse(await readFile(join(dir, 'from-flag', 'report.json'), 'utf8')) as RunReport
    expect(written.seed).toBe(3)
  })

  it('sim run with a bad config exits 2 naming the file and field, before running anything', async () => {
    const dir = await project({ 'sim.config.yaml': 'seed: lots\n' })
    const run = await runSim(['run', NO_PRESSURE], { cwd: dir })
    expect([run.exitCode, run.stderr.split('\n')[0]]).toEqual([2, 'error: sim.config.yaml: seed: expected an unsigned 32-bit integer (0 … 4294967295), got "lots"'])
    const subject = await runSim(['run', NO_PRESSURE], { cwd: await project({ 'sim.config.json': '{"subject": "nope"}' }) })
    expect([subject.exitCode, subject.stderr.split('\n').find((l) => l.startsWith('error:'))]).toEqual([
      2, 'error: sim.config.json: subject: expected reference, dsh or module:<path>, got "nope"',
    ])
  })

  it('sim run --help says which config was read, or that none was', async () => {
    const dir = await project({ 'sim.config.yaml': 'seed: 1\noutDir: x\n' })
    const help = await runSim(['run', '--help'], { cwd: dir })
    expect(help.stdout).toContain('\nConfig: read sim.config.yaml (sets outDir, seed)\n')
    expect((await runSim(['run', '--help'], { cwd: await project({}) })).stdout).toContain(
      '\nConfig: none (sim.config.json, sim.config.yaml, package.json "sim")\n',
    )
    expect(describeRunConfig(await project({ 'sim.config.json': '{"x": 1}' })))
      .toBe('Config: refused, sim.config.json: x: unknown key; allowed keys: subject, reporters, outDir, seed')
  })
})
