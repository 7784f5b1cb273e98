/**
 * `defineConformanceSuite` (`@compaction-sim/sim/conformance`): registers one vitest test per scenario of
 * the conformance pack for a user's subject, so an adapter author proves conformance with `vitest run` in
 * their own CI. `describe`/`test` come from the user's `vitest` (a peer dependency). Each test runs its
 * scenario with `runScenario`, judges it at the chosen level (`pack.ts`) and fails with the violated INV ids,
 * the failed expectations and a replay command; a scenario the subject's features do not cover, or that
 * sim cannot simulate, is skipped with the reason (`ctx.skip`).
 */
import { join } from 'node:path'
import { beforeAll, describe, test } from 'vitest'
import { runScenario } from '../run/run-scenario.ts'
import type { ScenarioReport } from '../report/types.ts'
import { checkSubject, loadModuleSubject, MODULE_SUBJECT_PREFIX } from '../subjects/module.ts'
import type { Subject } from '../subjects/types.ts'
import { CRASH_STARTUP_MS_DEFAULT, CRASH_WATCHDOG_MS_DEFAULT } from '../world/crash.ts'
import { scaledWatchdogMs } from '../world/watchdog.ts'
import { entriesAt, judgeScenario, loadPack, type ConformanceLevel } from './pack.ts'
import { plural } from '../plural.ts'

/** Options of `defineConformanceSuite`. */
export interface ConformanceSuiteOptions {
  /**
   * The subject: an object implementing `Subject`, or the path of a module exporting one (absolute or
   * relative to `process.cwd()`; needed for crash scenarios, which run the subject in a child process).
   */
  subject: Subject | string
  /** Default `must`. */
  level?: ConformanceLevel
  /** Where logs, manifests and captures go (default `reports/conformance/<level>` under the working directory). */
  outDir?: string
  /**
   * Per-scenario vitest timeout in ms, used as given. Default: the crash harness's startup and liveness
   * watchdogs plus a minute (11 min), × `SIM_WATCHDOG_SCALE`, so a hung crash child ends as the harness's
   * `watchdog: waited …` error rather than a bare vitest timeout. Not a verdict bound: no test is judged by speed.
   */
  timeoutMs?: number
  /** Name of the enclosing `describe` (default `compaction-sim conformance pack v<n> (<level>)`). */
  name?: string
}

/** Default per-scenario timeout before scaling: longer than the crash harness's watchdogs together (issue #18). */
const SCENARIO_TIMEOUT_MS_DEFAULT = CRASH_STARTUP_MS_DEFAULT + CRASH_WATCHDOG_MS_DEFAULT + 60_000

/** Registers the suite (call it at the top level of a vitest test file). */
export function defineConformanceSuite(options: ConformanceSuiteOptions): void {
  const pack = loadPack()
  const level = options.level ?? 'must'
  const timeoutMs = options.timeoutMs ?? scaledWatchdogMs(SCENARIO_TIMEOUT_MS_DEFAULT)
  const outDir = options.outDir ?? join(process.cwd(), 'reports', 'conformance', level)
  // A subject object comes from the user's code: check its shape here, as the module loader does.
  let subject: Subject | null = typeof options.subject === 'string' ? null : checkSubject(options.subject, 'defineConformanceSuite({ subject })')
  describe(options.name ?? `${pack.name} v${pack.version} (${level})`, () => {
    beforeAll(async () => {
      if (typeof options.subject === 'string') {
        subject = await loadModuleSubject(withPrefix(options.subject))
      }
    })
    // Registered before a module subject loads: the feature-promoted `may` entries too, skipped in the test body
    // for a subject that does not declare their feature.
    for (const entry of entriesAt(pack, level, undefined)) {
      const name = entry.file.replaceAll('\\', '/').split('/conformance/').at(-1) ?? entry.file
      test(name, async (ctx) => {
        if (subject === null) throw new Error('the subject module did not load (see the beforeAll error)')
        if (!entriesAt(pack, level, subject.features).includes(entry)) {
          ctx.skip(`a ${entry.level} entry: the subject does not declare ${entry.feature ?? 'its feature'}`)
        }
        const report = judgeScenario(await runScenario(entry.file, { outDir, subject }), level)
        if (typeof options.subject === 'string') report.replay += ` --subject ${withPrefix(options.subject)}`
        if (report.status === 'skipped') ctx.skip(report.skipReason ?? 'skipped')
        if (report.status !== 'passed') throw new Error(failureText(report))
      }, timeoutMs)
    }
  })
}

/** `path` as a `--subject` value (`module:<path>`). */
function withPrefix(path: string): string {
  return path.startsWith(MODULE_SUBJECT_PREFIX) ? path : `${MODULE_SUBJECT_PREFIX}${path}`
}

/** The failure message of one scenario: violated invariants, failed expectations, the replay command. */
export function failureText(report: ScenarioReport): string {
  const lines = [`${report.name} [${report.subject} seed=${report.seed}] ${report.status}`]
  if (report.error !== undefined) lines.push(`  error: ${report.error}`)
  for (const v of report.violations.slice(0, 20)) lines.push(`  ${v.id} at seq ${v.seq}: ${v.message}`)
  if (report.violations.length > 20) lines.push(`  … and ${plural(report.violations.length - 20, 'more violation')}`)
  for (const e of report.expectations) if (!e.passed) lines.push(`  ${e.name}: expected ${e.expected}, got ${e.actual}`)
  lines.push(`  Replay: ${report.replay}`)
  return lines.join('\n')
}
