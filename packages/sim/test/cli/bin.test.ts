import { spawnSync } from 'node:child_process'
import { describe, expect, it } from 'vitest'
import { REPO_ROOT } from './run-sim.ts'

describe('the real entry point', () => {
  it('node --conditions=source --import tsx packages/sim/src/cli/bin.ts --help exits 0 and lists inspect', () => {
    const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1' }
    delete env['FORCE_COLOR']
    const child = spawnSync(process.execPath, ['--conditions=source', '--import', 'tsx', 'packages/sim/src/cli/bin.ts', '--help'], {
      cwd: REPO_ROOT,
      env,
      encoding: 'utf8',
      timeout: 300_000, // a liveness bound for one tsx start-up on a loaded machine, not a speed check
    })
    expect(child.error).toBeUndefined()
    expect(child.stderr).toBe('')
    expect(child.status).toBe(0)
    expect(child.stdout).toMatch(/sim inspect <log>/)
  }, 330_000)
})
