/**
 * User subjects (`--subject module:<path>`): the loader accepts a default or named `subject` export, refuses
 * anything else with an error naming the path and the missing member (exit 2 from the CLI), and a subject's
 * declared features decide which scenarios it runs (the rest are skipped with the reason).
 */
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadScenario } from '../../src/scenario/load.ts'
import { resolveScenario } from '../../src/scenario/resolve.ts'
import { runScenario } from '../../src/run/run-scenario.ts'
import { missingFeatureReason, requiredFeatures } from '../../src/subjects/features.ts'
import { loadModuleSubject, SubjectModuleError, subjectModulePath } from '../../src/subjects/module.ts'
import { referenceSubject } from '../../src/subjects/reference.ts'
import { REPO_ROOT, normalise, runSim, tempDir } from '../cli/run-sim.ts'

let tmp: { dir: string; cleanup: () => Promise<void> }
beforeAll(async () => {
  tmp = await tempDir()
  const modules: Record<string, string> = {
    'named.mjs': `export const subject = { name: 'named', features: ['crash'], runSession: async () => { throw new Error('not run') } }\n`,
    'default.mjs': `export default { name: 'dflt', runSession: async () => { throw new Error('not run') } }\n`,
    'nothing.mjs': `export const other = 1\n`,
    'no-run.mjs': `export default { name: 'no-run' }\n`,
    'bad-feature.mjs': `export default { name: 'bad', features: ['teleport'], runSession: async () => ({}) }\n`,
    'throws.mjs': `throw new Error('boom at import')\n`,
  }
  for (const [name, text] of Object.entries(modules)) await writeFile(join(tmp.dir, name), text)
})
afterAll(async () => { await tmp.cleanup() })

/** The loader's error for `file` (relative to the temp dir). */
async function loadError(file: string): Promise<SubjectModuleError> {
  const error = await loadModuleSubject(`module:${file}`, tmp.dir).then(() => null, (e: unknown) => e)
  if (!(error instanceof SubjectModuleError)) throw new Error(`expected a SubjectModuleError for ${file}, got ${String(error)}`)
  return error
}

describe('loadModuleSubject', () => {
  it('takes the default export, else the named export `subject`, and remembers the module path', async () => {
    const named = await loadModuleSubject('module:named.mjs', tmp.dir)
    expect(named.name).toBe('named')
    expect(subjectModulePath(named)).toBe(join(tmp.dir, 'named.mjs'))
    expect((await loadModuleSubject(join(tmp.dir, 'default.mjs'))).name).toBe('dflt')
    expect(subjectModulePath(referenceSubject)).toBeNull()
  })

  it('names the path and the missing or malformed member', async () => {
    expect((await loadError('missing.mjs')).message).toMatch(/^missing\.mjs: subject module not found/)
    expect((await loadError('nothing.mjs')).message).toBe('nothing.mjs: expected a default export or a named export `subject` implementing Subject, found neither')
    expect((await loadError('no-run.mjs')).message)
      .toBe('no-run.mjs: the subject\'s `runSession` must be a function (options) => Promise<SubjectSessionResult>; it is missing')
    expect((await loadError('bad-feature.mjs')).message).toMatch(/^bad-feature\.mjs: unknown feature "teleport" in `features`; expected one of manualCompaction,/)
    const thrown = await loadError('throws.mjs')
    expect([thrown.code, thrown.message]).toEqual(['SUBJECT_IMPORT', 'throws.mjs: the subject module failed to import: Error: boom at import'])
  })

  it('sim run / sim conform: a bad subject module is an input error (exit 2) naming the path and member', async () => {
    const bad = join(tmp.dir, 'no-run.mjs')
    const run = await runSim(['run', join(REPO_ROOT, 'scenarios/smoke/no-pressure.yaml'), '--subject', `module:${bad}`, '--out-dir', tmp.dir])
    expect(run.exitCode).toBe(2)
    expect(normalise(run.stderr, { [tmp.dir]: '<tmp>' })).toContain('--subject: <tmp>/no-run.mjs: the subject\'s `runSession` must be a function')
    const conform = await runSim(['conform', '--subject', 'dsh-like'])
    expect(conform.exitCode).toBe(2)
    expect(conform.stderr).toMatch(/--subject: expected reference(, dsh)? or module:<path>, got "dsh-like"/)
  })
})

describe('sim run --subject module:<path>', () => {
  it('runs the scenario with the user subject and puts the flag into the replay command', async () => {
    const example = join(REPO_ROOT, 'examples/subject-core-adapter/subject.ts')
    const file = join(REPO_ROOT, 'scenarios/smoke/no-pressure.yaml')
    const run = await runSim(['run', file, '--subject', `module:${example}`, '--reporter', 'json', '--out-dir', join(tmp.dir, 'run')])
    expect(run.exitCode, run.stderr).toBe(0)
    const [scenario] = (JSON.parse(run.stdout) as { scenarios: Array<{ subject: string; status: string; replay: string }> }).scenarios
    expect([scenario?.subject, scenario?.status]).toEqual(['core-adapter-example', 'passed'])
    expect(scenario?.replay).toBe(`pnpm sim run scenarios/smoke/no-pressure.yaml --seed 1 --subject module:${example}`)
  })
})

describe('subject features', () => {
  const resolved = async (file: string): ReturnType<typeof resolveScenario> extends infer R ? Promise<R> : never => {
    const path = join(REPO_ROOT, file)
    return resolveScenario(await loadScenario(path), { file: path })
  }

  it('derives what a scenario needs from its faults, manual actions and expectations', async () => {
    const needs = async (file: string): Promise<string[]> => requiredFeatures(await resolved(file)).map((n) => n.feature)
    expect(await needs('scenarios/smoke/no-pressure.yaml')).toEqual([])
    expect(await needs('scenarios/smoke/anthropic-wire.yaml')).toEqual(['anthropicWire'])
    expect(await needs('scenarios/policy/compact-now-idle.yaml')).toEqual(['manualCompaction'])
    expect(await needs('scenarios/policy/compact-region-explicit.yaml')).toEqual(['explicitRegion'])
    expect(await needs('scenarios/faults/fault-12-image-offload-required.yaml')).toEqual(['imageOffload'])
    expect(await needs('scenarios/faults/fault-20-summary-call-fails.yaml')).toEqual(['summaryError'])
    expect(await needs('scenarios/crash/fault-51-after-summary-error.yaml')).toContain('crash')
    expect(await needs('packages/sim/conformance/pack-v1/may/series-after-compaction.yaml')).toEqual(['seriesHeaders'])
  })

  it('a subject lacking a needed feature gets the scenario skipped with the feature and its cause', async () => {
    const scenario = await resolved('scenarios/policy/compact-now-idle.yaml')
    const bare = { name: 'bare', features: [], runSession: referenceSubject.runSession }
    expect(missingFeatureReason(scenario, bare))
      .toBe('subject bare does not declare the feature this scenario needs: manualCompaction (manual compactNow after turn 1 (§3.7))')
    expect(missingFeatureReason(scenario, referenceSubject)).toBeNull()
    const report = await runScenario(scenario.file, { outDir: tmp.dir, subject: bare })
    expect([report.status, report.subject, report.skipReason]).toEqual(['skipped', 'bare', missingFeatureReason(scenario, bare)])
  })
})
