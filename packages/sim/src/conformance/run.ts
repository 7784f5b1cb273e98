/**
 * `runConformance`: the programmatic API behind `sim conform` — runs the conformance pack's entries for a
 * level against one subject with `runScenarios` and judges the report at that level (`pack.ts`). The
 * report is an ordinary `RunReport`, so every renderer (pretty, junit, github, …) applies.
 */
import { runScenarios } from '../run/run-scenario.ts'
import type { RunReport } from '../report/types.ts'
import type { Subject } from '../subjects/types.ts'
import { entriesAt, judgeReport, loadPack, type ConformanceLevel, type ConformancePack } from './pack.ts'

/** Options of `runConformance`. */
export interface ConformOptions {
  subject: Subject
  /** Default `must`. */
  level?: ConformanceLevel
  /** Where logs, manifests and captures go (created if missing). */
  outDir: string
  /** Working directory report paths are relative to (default `process.cwd()`). */
  cwd?: string
  /** Only entries whose file path contains this text (for a quick re-run of one scenario). */
  filter?: string
  /** The `--subject` value that reproduces the subject (appended to each replay command), e.g. `module:./subject.ts`. */
  subjectFlag?: string
  /** The pack (default: the shipped `conformance/pack.json`). */
  pack?: ConformancePack
}

/** What `runConformance` returns: the judged report and what it was judged against. */
export interface ConformanceResult {
  report: RunReport
  level: ConformanceLevel
  pack: { name: string; version: number }
}

/** Runs the pack at `options.level` for `options.subject`; never rejects for a failing subject (see the report). */
export async function runConformance(options: ConformOptions): Promise<ConformanceResult> {
  const pack = options.pack ?? loadPack()
  const level = options.level ?? 'must'
  const filter = options.filter
  const files = entriesAt(pack, level, options.subject.features).map((e) => e.file).filter((f) => filter === undefined || f.replaceAll('\\', '/').includes(filter))
  const raw = await runScenarios(files, {
    outDir: options.outDir, subject: options.subject, ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
  })
  const report = judgeReport(raw, level)
  if (options.subjectFlag !== undefined) {
    const flag = /^[\w./:-]+$/.test(options.subjectFlag) ? options.subjectFlag : `'${options.subjectFlag.replaceAll("'", "'\\''")}'`
    for (const s of report.scenarios) s.replay = `${s.replay} --subject ${flag}`
  }
  return { report, level, pack: { name: pack.name, version: pack.version } }
}
