/**
 * The seeded model-based suite of issue #8: ≥ 200 runs of up to 60 commands against the reference core
 * (in-process, gated scripted provider, no HTTP). After every command the plain-data model agrees with the
 * subject (phase, turns, tool pairing, lock, generation); after each run the fault-free phase must converge
 * (liveness) and the checker (§12, INV-01…47) must find no violation on the whole log. Seed: `FC_SEED`.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { FC_SEED, fcParams } from '../../../core/test/support/seed.ts'
import { commandsArb, configArb, FULL_MIX } from '../../src/fuzz/arbitraries.ts'
import { describeFailure, isFailure, runSession } from '../../src/fuzz/run.ts'
import { PATH_DEFINITIONS, sumPaths } from '../../src/metrics/paths.ts'
import type { ReportedPath } from '../../src/report/types.ts'

const RUNS = 200

describe('model-based sessions (issue #8)', () => {
  it(`${RUNS} sessions: the model agrees after every command, the session converges, no invariant breaks (seed ${FC_SEED})`, async () => {
    const tables: ReportedPath[][] = []
    let commands = 0
    await fc.assert(fc.asyncProperty(configArb, commandsArb(FULL_MIX, 60), async (config, cmds) => {
      const verdict = await runSession(config, cmds)
      tables.push(verdict.paths)
      commands += verdict.driver.commandsRun
      if (isFailure(verdict)) throw new Error(describeFailure(verdict))
    }), fcParams({ numRuns: RUNS }))
    const total = sumPaths(tables)
    console.log(`model suite: ${RUNS} runs, ${commands} commands; paths: ${total.map((p) => `${p.path}=${p.reached}`).join(' ')}`)
    expect(tables).toHaveLength(RUNS)
    // The suite must exercise the protocol, not idle: most paths are reached by the fixed-seed run.
    expect(total.filter((p) => p.reached > 0).length).toBeGreaterThanOrEqual(Math.floor(PATH_DEFINITIONS.length / 2))
  }, 300_000)
})
