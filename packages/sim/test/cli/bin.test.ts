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
      timeout: 60_000,
    })
    expect(child.error).toBeUndefined()
    expect(child.stderr).toBe('')
    expect(child.status).toBe(0)
    expect(child.stdout).toMatch(/sim inspect <log>/)
  }, 70_000)
})
