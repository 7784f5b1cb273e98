/**
 * Packaging guards (issue #17): built output stays out of git — no tracked path under any `dist/` and
 * `.gitignore` ignores `dist/` — and the root's lazy command table (`COMMANDS` in `cli/main.ts`, all that
 * `sim --help` shows) names each command exactly as its module does.
 */
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { ExitCode } from '../../src/cli/exit-codes.ts'
import { COMMANDS } from '../../src/cli/main.ts'
import { createOutput } from '../../src/cli/output.ts'
import { REPO_ROOT } from './run-sim.ts'

describe('dist freshness', () => {
  it('git tracks no file under a dist/ folder', () => {
    const tracked = execFileSync('git', ['ls-files', '-z'], { cwd: REPO_ROOT, encoding: 'utf8', maxBuffer: 64 << 20 }).split('\0')
    expect(tracked.length).toBeGreaterThan(100)
    expect(tracked.filter((path) => /(^|\/)dist\//.test(path))).toEqual([])
  })

  it('.gitignore ignores dist/', () => {
    const lines = readFileSync(join(REPO_ROOT, '.gitignore'), 'utf8').split('\n').map((l) => l.trim())
    expect(lines.some((l) => l === 'dist/' || l === 'dist' || l === '/dist/' || l === '**/dist/')).toBe(true)
  })
})

describe('the lazy command table', () => {
  it('each entry has the command and description of the module it loads', async () => {
    const out = createOutput({ stdout: { write: () => undefined }, stderr: { write: () => undefined }, env: {}, isTTY: false }, 0, false)
    for (const lazy of COMMANDS) {
      const module = await lazy.module({ out, exitCode: ExitCode.Ok })
      expect({ command: module.command, describe: module.describe }).toEqual({ command: lazy.command, describe: lazy.describe })
    }
    expect(COMMANDS.map((c) => c.command.split(' ')[0])).toEqual(['inspect', 'check', 'run', 'conform', 'serve', 'sweep', 'report', 'import', 'fuzz', 'init'])
  }, 120_000) // imports every command module: slow on a loaded machine
})
