/**
 * The differential of `sim run --subject reference,dsh` (issue #7): one ScenarioReport per (scenario, subject), a
 * `differential` section whose differences are all explained by §14 rules on a real pair of runs, and a planted
 * difference (a shadowed message edited in the dsh log) classified `unexplained`, which makes the run exit 1.
 */
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { readLog, type LogEvent } from '@compaction-sim/core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runExitCode } from '../../src/cli/commands/run.ts'
import { subjectSpecs } from '../../src/cli/subject-flag.ts'
import { renderMarkdown } from '../../src/report/markdown.ts'
import { renderPretty } from '../../src/report/pretty.ts'
import type { RunReport } from '../../src/report/types.ts'
import { validateRunReport } from '../../src/report/validate.ts'
import { compareLogs, differentialOf } from '../../src/run/differential.ts'
import { runScenarios } from '../../src/run/run-scenario.ts'
import { loadDshSubject } from '../../src/subjects/dsh-loader.ts'
import { referenceSubject } from '../../src/subjects/reference.ts'
import { REPO_ROOT, tempDir } from '../cli/run-sim.ts'

const FILE = join(REPO_ROOT, 'scenarios/smoke/basic-pressure.yaml')
let tmp: { dir: string; cleanup: () => Promise<void> }
let report: RunReport

beforeAll(async () => {
  tmp = await tempDir()
  // The dsh subject comes from the optional package @compaction-sim/subject-dsh, loaded by name as `--subject dsh` does.
  const dshSubject = await loadDshSubject()
  report = await runScenarios([FILE], { outDir: tmp.dir, cwd: REPO_ROOT, subjects: [referenceSubject, dshSubject] })
}, 300_000)
afterAll(async () => { await tmp.cleanup() })

describe('sim run --subject reference,dsh', () => {
  it('reports each scenario once per subject and a schema-valid differential with every difference explained by §14', () => {
    expect(report.scenarios.map((s) => [s.subject, s.status, s.dialect])).toEqual([
      ['reference', 'passed', 'seed'], ['dsh', 'passed', 'dsh-0.1.0-rc.8'],
    ])
    expect(validateRunReport(report)).toEqual([])
    const d = report.differential
    expect(d?.summary).toMatchObject({ scenarios: 1, compared: 1, unexplained: 0 })
    const rules = d?.scenarios[0]?.differences.map((x) => [x.aspect, x.verdict, x.rule])
    expect(rules).toEqual([['surface', 'explained', 'D-02'], ['pressure', 'explained', '§14.1 checkpoint framing']])
    expect(runExitCode(report)).toBe(0)
    expect(renderPretty(report, { color: false, ci: true })).toContain(
      'Differential (reference vs dsh): 1 compared, 0 skipped, 0 identical, 2 explained (§14), 0 unexplained',
    )
    expect(renderMarkdown(report)).toContain('| basic-pressure | dsh | surface | explained (D-02) |')
  })

  it('classifies a planted difference (a shadowed message edited in the dsh log) as unexplained, and the run exits 1', async () => {
    const dsh = report.scenarios[1]
    const ref = report.scenarios[0]
    if (dsh?.artifacts === undefined || ref?.artifacts === undefined) throw new Error('no artifacts')
    const path = join(tmp.dir, dsh.artifacts.log)
    const original = await readFile(path, 'utf8')
    const events = [...(await readLog(path, { dialect: 'dsh-0.1.0-rc.8' })).events]
    const summary = events.find((e) => e.type === 'compaction/summary')
    const shadowed = (summary?.data as { shadowedSeqs?: number[] } | undefined)?.shadowedSeqs ?? []
    const victim = shadowed.map((s) => events[s]).find((e) => e?.type === 'user/message')
    expect(victim).toBeDefined()
    const planted = events.map((e): LogEvent => (e === victim ? JSON.parse(JSON.stringify(e).replace('Find out why', 'Find out how')) : e))
    const baseEvents = [...(await readLog(join(tmp.dir, ref.artifacts.log), { dialect: 'seed' })).events]
    const diffs = compareLogs(
      { subject: 'reference', events: baseEvents, dialect: 'seed', tokens: null },
      { subject: 'dsh', events: planted, dialect: 'dsh-0.1.0-rc.8', tokens: null },
    )
    expect(diffs.filter((x) => x.verdict === 'unexplained').map((x) => [x.aspect, x.note])).toEqual([
      ['shadowed', 'bracket 1: shadowed messages differ by content'],
    ])
    await writeFile(path, planted.map((e) => `${JSON.stringify(e)}\n`).join(''))
    try {
      const tampered: RunReport = { ...report, differential: await differentialOf(report.scenarios, tmp.dir, ['reference', 'dsh']) }
      expect(tampered.differential?.summary.unexplained).toBe(1)
      expect(runExitCode(tampered)).toBe(1)
      expect(renderMarkdown(tampered)).toContain('| basic-pressure | dsh | shadowed | ❌ **unexplained** |')
    } finally {
      await writeFile(path, original)
    }
  })

  it('parses --subject as a comma list or a repeated flag, refusing empty or repeated entries', () => {
    expect(subjectSpecs('reference,dsh')).toEqual(['reference', 'dsh'])
    expect(subjectSpecs(['reference', 'dsh'])).toEqual(['reference', 'dsh'])
    expect(subjectSpecs(undefined)).toEqual([])
    expect(() => subjectSpecs('reference,,dsh')).toThrow(/empty entry/)
    expect(() => subjectSpecs('dsh,dsh')).toThrow(/named twice/)
  })
})
