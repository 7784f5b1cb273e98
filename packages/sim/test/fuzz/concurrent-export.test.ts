/**
 * Issue #16: a fuzz run whose §13.6 interleavings landed during a summary call exports as a scenario — the racing
 * `compactNow` (FAULT-70) and the foreign appends (FAULT-77 surface, FAULT-78 log-only) become `concurrent:` items
 * before the summary call's first chunk — and `sim run` replays it on the reference subject with the same outcomes.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import fc from 'fast-check'
import { afterAll, describe, expect, it } from 'vitest'
import { AssistantTextCommand } from '../../src/fuzz/commands/assistant-text.ts'
import { ConcurrentCompactionCommand } from '../../src/fuzz/commands/concurrent-compaction.ts'
import { ForeignAppendCommand } from '../../src/fuzz/commands/foreign-append.ts'
import { UserTurnCommand } from '../../src/fuzz/commands/user-turn.ts'
import type { SessionConfig } from '../../src/fuzz/driver.ts'
import { runSession } from '../../src/fuzz/run.ts'
import { inProcessOnlyReason, scenarioOf, writeScenarioFile } from '../../src/fuzz/scenario-writer.ts'
import { runScenario } from '../../src/run/run-scenario.ts'

const CONFIG: SessionConfig = {
  contextWindow: 16_000, imageTokens: null, policy: { thresholdRatio: 0.9, retainTokens: 0, compactionRetries: 0 }, pruner: null,
}

const dirs: string[] = []
afterAll(async () => { await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true }))) })

/** The first seed whose scheduler lets the racing command land during the summary call (deterministic). */
async function overlapping(make: (s: fc.Scheduler) => fc.AsyncCommand<never, never>): Promise<Awaited<ReturnType<typeof runSession>>> {
  for (let seed = 1; seed <= 40; seed++) {
    const [scheduler] = fc.sample(fc.scheduler(), { seed, numRuns: 1 })
    if (scheduler === undefined) continue
    const commands = [
      new UserTurnCommand(400, 0), new AssistantTextCommand(300, null),
      new UserTurnCommand(400, 0), new AssistantTextCommand(300, null),
      make(scheduler),
    ] as never[]
    const verdict = await runSession(CONFIG, commands)
    if (verdict.driver.trace.concurrent.length > 0) return verdict
  }
  throw new Error('no seed in 1…40 interleaved the command with the summary call')
}

describe('sim fuzz exports §13.6 interleavings as concurrent: items', () => {
  it.each([
    ['a racing compactNow (FAULT-70)', (s: fc.Scheduler) => new ConcurrentCompactionCommand(s), 'compact-now', 'FAULT-70', 'rejected ManualCompactionError[busy]'],
    ['a foreign surface append (FAULT-77)', (s: fc.Scheduler) => new ForeignAppendCommand('surface', s), 'append-surface', 'FAULT-77', 'a foreign user/message was appended'],
    ['a foreign log-only append (FAULT-78)', (s: fc.Scheduler) => new ForeignAppendCommand('log-only', s), 'append-log-only', 'FAULT-78', 'a foreign ignorable inbox/note'],
  ] as const)('%s', async (_, make, action, fault, outcome) => {
    const verdict = await overlapping(make as never)
    expect(verdict.violations).toEqual([])
    const trace = verdict.driver.trace
    expect(inProcessOnlyReason(trace)).toBeNull()
    const scenario = scenarioOf(trace, CONFIG, { name: 'fuzz-concurrent', seed: 1, description: 'exported' })
    expect(scenario.concurrent).toEqual([{ during: 'summary', occurrence: 1, at: 'before-first-chunk', do: action }])
    expect(scenario.faults?.map((f) => f.kind)).toContain(fault)
    expect(scenario.manual?.[0]).toEqual({ action: 'compactNow', afterTurn: 2 })
    const dir = await mkdtemp(join(tmpdir(), 'sim-fuzz-concurrent-'))
    dirs.push(dir)
    const file = join(dir, 'exported.yaml')
    await writeScenarioFile(file, scenario, ['exported by concurrent-export.test.ts'])
    const report = await runScenario(file, { outDir: join(dir, 'out') })
    expect({ status: report.status, error: report.error, violations: report.violations }).toEqual({ status: 'passed', error: undefined, violations: [] })
    expect(report.warnings?.find((w) => w.startsWith('concurrent[0]'))).toContain(`${action} during summary 1 before-first-chunk: ${outcome}`)
  }, 120_000)
})
