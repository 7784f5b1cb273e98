/**
 * Issue #16: any exit code outside 0/1/2/3 is a bug. A run whose promise can never settle (here a user subject
 * whose session never resolves and leaves nothing in the event loop) used to end in Node's exit 13 ("unsettled
 * top-level await") with no word; the bin's settle guard makes it exit 3 and names the pending scenario, subject,
 * seed and turn. The subprocess runs the real entry from source, as `pnpm sim` does.
 */
import { spawnSync } from 'node:child_process'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { UNSETTLED_MESSAGE, unsettledReport } from '../../src/cli/settle-guard.ts'
import { REPO_ROOT, tempDir } from './run-sim.ts'

let tmp: { dir: string; cleanup: () => Promise<void> }
beforeAll(async () => { tmp = await tempDir() })
afterAll(async () => { await tmp.cleanup() })

/** A subject that begins turn 1 and then waits on a promise nothing settles (no timer, no socket). */
const HANGING_SUBJECT = `export default {
  name: 'hanging',
  runSession: async (options) => {
    options.hooks?.beginTurn?.(1, { setModel: () => {} })
    await new Promise(() => {})
  },
}
`

/** Runs `sim <args>` from source in a child process (CI mode, no colour). */
function sim(args: string[]): { status: number | null; stdout: string; stderr: string } {
  const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1', CI: 'true' }
  delete env['FORCE_COLOR']
  delete env['NODE_OPTIONS']
  const child = spawnSync(process.execPath, ['--conditions=source', '--import', 'tsx', 'packages/sim/src/cli/bin.ts', ...args], {
    cwd: REPO_ROOT, env, encoding: 'utf8', timeout: 300_000, // a liveness bound for a tsx start-up on a loaded machine
  })
  expect(child.error).toBeUndefined()
  return { status: child.status, stdout: child.stdout, stderr: child.stderr }
}

describe('the settle guard of the bin', () => {
  it('turns a session that never settles into exit 3 naming the scenario, subject, seed and turn (not exit 13)', async () => {
    const subject = join(tmp.dir, 'hanging-subject.mjs')
    await writeFile(subject, HANGING_SUBJECT)
    const run = sim(['run', 'scenarios/smoke/no-pressure.yaml', '--subject', `module:${subject}`, '--out-dir', join(tmp.dir, 'out')])
    expect(run.status).toBe(3)
    const lines = run.stderr.split('\n')
    const at = lines.indexOf(UNSETTLED_MESSAGE)
    expect(at).toBeGreaterThanOrEqual(0)
    expect(lines.slice(at, at + 3)).toEqual([
      UNSETTLED_MESSAGE,
      '  pending: scenario scenarios/smoke/no-pressure.yaml [hanging seed=1]: the subject\'s session, in turn 1; no request yet'
        + ' (replay: pnpm sim run scenarios/smoke/no-pressure.yaml --seed 1)',
      'This is a bug in sim or in the subject; exit 3 instead of Node\'s exit 13.',
    ])
  }, 330_000)

  it('turns an exception nobody catches (Node: exit 1, read as "a check failed") into exit 3', async () => {
    const subject = join(tmp.dir, 'throwing-subject.mjs')
    await writeFile(subject, `export default {
  name: 'throwing',
  runSession: async () => {
    setImmediate(() => { throw new Error('thrown outside the session promise') })
    await new Promise((resolve) => setTimeout(resolve, 60_000))
  },
}
`)
    const run = sim(['run', 'scenarios/smoke/no-pressure.yaml', '--subject', `module:${subject}`, '--out-dir', join(tmp.dir, 'out-throw')])
    expect(run.status).toBe(3)
    expect(run.stderr).toContain('internal error: uncaught Error: thrown outside the session promise\n')
  }, 330_000)

  it('says so when nothing registered what it waits on', () => {
    expect(unsettledReport([])).toBe(`${UNSETTLED_MESSAGE}\n  pending: nothing registered (the wait is outside a scenario run)\n`
      + 'This is a bug in sim or in the subject; exit 3 instead of Node\'s exit 13.\n')
  })
})
