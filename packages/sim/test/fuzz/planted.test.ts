/**
 * The fuzzer finds a planted engine bug (issue #8 "Done when"): a copy of the reference engine whose
 * checkpoint `user/message` lists its provenance in the wrong order (§7.7: `sourceEventSeqs` must be
 * [startSeq, summarySeq, ...shadowedSeqs], INV-14), planted through the engine's test-only `append` hook.
 * The fuzzer must find it, shrink it to ≤ 10 commands, and write a scenario that `sim run`'s programmatic
 * API (`runScenario`, with the same planted engine as the subject) fails with the same INV id.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import type { EventDraft, EventLog, SessionEvent } from '@compaction-sim/core'
import { FC_SEED } from '../../../core/test/support/seed.ts'
import { SCENARIO_MIX } from '../../src/fuzz/arbitraries.ts'
import { runFuzz } from '../../src/fuzz/fuzz.ts'
import { runScenario } from '../../src/run/run-scenario.ts'
import { runReferenceSession } from '../../src/subjects/reference.ts'
import type { Subject } from '../../src/subjects/types.ts'

/** The planted bug: every checkpoint's provenance reversed (a checkpoint is a bracket's replacement user/message). */
function reversedProvenance(log: EventLog): (draft: EventDraft) => SessionEvent {
  return (draft) => {
    if (draft.type === 'user/message' && typeof draft.surfaceOp === 'object' && draft.sourceEventSeqs !== undefined) {
      return log.append({ ...draft, sourceEventSeqs: [...draft.sourceEventSeqs].reverse() })
    }
    return log.append(draft)
  }
}

const planted: Subject = {
  name: 'reference-planted',
  runSession: (options) => runReferenceSession(options, { plantAppend: reversedProvenance }),
}

const dirs: string[] = []
afterAll(async () => { await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true }))) })

describe('sim fuzz finds a planted bug (issue #8)', () => {
  it(`finds reversed provenance, shrinks to ≤ 10 commands, writes a scenario sim run fails with INV-14 (seed ${FC_SEED})`, async () => {
    const dir = await mkdtemp(join(tmpdir(), 'sim-planted-'))
    dirs.push(dir)
    const result = await runFuzz({
      seed: FC_SEED, runs: 200, mix: SCENARIO_MIX, regressionsDir: join(dir, 'regressions'),
      session: { plantAppend: reversedProvenance },
      runScenarioFile: (file, outDir) => runScenario(file, { outDir, subject: planted }),
    })
    const failure = result.failure
    expect(failure).not.toBeNull()
    if (failure === null) return
    console.log(`planted bug: ${failure.description}\n  shrunk to ${failure.commands.length}: ${failure.commands.join(', ')}`)
    expect(failure.invariantIds).toContain('INV-14')
    expect(failure.commands.length).toBeLessThanOrEqual(10)
    expect(failure.scenarioFile).toMatch(new RegExp(`regressions/${failure.seed}-inv-14[a-z0-9-]*\\.yaml$`))
    expect(failure.replay).toEqual({ status: 'failed', invariantIds: expect.arrayContaining(['INV-14']) })
    const text = await readFile(failure.scenarioFile ?? '', 'utf8')
    expect(text).toContain(`fast-check path ${failure.path}`)

    // The unplanted reference passes the same scenario: the failure is the planted bug, not the scenario.
    const clean = await runScenario(failure.scenarioFile ?? '', { outDir: join(dir, 'clean') })
    expect(clean.violations).toEqual([])
    expect(clean.status).toBe('passed')

    // The printed replay (fast-check path + command replayPath) reproduces the shrunk failure directly.
    const again = await runFuzz({
      seed: FC_SEED, runs: 200, mix: SCENARIO_MIX, regressionsDir: null, session: { plantAppend: reversedProvenance },
      replay: { run: failure.run, path: failure.path, replayPath: failure.replayPath },
    })
    expect(again.failure?.commands).toEqual(failure.commands)
    expect(again.failure?.invariantIds).toEqual(failure.invariantIds)
  }, 60_000)
})
