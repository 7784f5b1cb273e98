import { describe, expect, it } from 'vitest'
import { main } from '../../src/cli/main.ts'
import { TINY_EVENTS } from './tiny-log.ts'
import { normalise, runSim, tempDir, writeLog } from './run-sim.ts'

/** Runs `sim inspect` on a valid log with a stdout that throws: an unexpected failure inside sim. */
async function runWithBrokenStdout(argv: string[], env: Record<string, string> = {}): Promise<{ exitCode: number; stderr: string }> {
  const { dir, cleanup } = await tempDir()
  try {
    const log = await writeLog(dir, 'tiny.jsonl', TINY_EVENTS)
    let stderr = ''
    const exitCode = await main(['inspect', log, ...argv], {
      stdout: { write: () => { throw new RangeError('stdout exploded') } },
      stderr: { write: (text: string) => { stderr += text } },
      env,
      isTTY: false,
    })
    return { exitCode, stderr }
  } finally {
    await cleanup()
  }
}

describe('sim root', () => {
  it('--help lists the commands and global options on stdout, exit 0', async () => {
    const run = await runSim(['--help'])
    expect(run.exitCode).toBe(0)
    expect(run.stderr).toBe('')
    expect(normalise(run.stdout)).toMatchInlineSnapshot(`
      "sim <command> [options]

      Commands:
        sim inspect <log>           Print the folded state at the end of a session log
        sim check <logs..>          Check logs against every invariant INV-01 … INV-47
        sim run <files..>           Run scenarios against a mocked provider and check
                                    them
        sim conform                 Run the conformance pack against a subject
        sim serve                   Serve the mock provider over real HTTP (loopback)
        sim sweep <files..>         Run scenarios over a grid of policies (Pareto
                                    report)
        sim report <command>        Work with report folders (merge shards)
        sim import <format> <file>  Import a real session (OpenAI, Anthropic, Claude
                                    Code, Codex, DSH) as a scenario
        sim fuzz                    Model-based fuzzing: random sessions, faults,
                                    shrinking to a scenario
        sim init                    Scaffold conformance for your adapter: subject,
                                    test, CI workflow

      Options:
            --color    Colour output; --no-color disables it                 [boolean]
            --debug    Stack traces for internal errors                      [boolean]
        -h, --help     Show help                                             [boolean]
            --version  Show version number                                   [boolean]
      "
    `)
  })

  it('inspect --help documents its flags', async () => {
    const run = await runSim(['inspect', '--help'])
    expect(run.exitCode).toBe(0)
    expect(normalise(run.stdout)).toMatchInlineSnapshot(`
      "sim inspect <log>

      Print the folded state at the end of a session log

      Positionals:
        log  Session log (JSONL)                                   [string] [required]

      Options:
            --color       Colour output; --no-color disables it              [boolean]
            --debug       Stack traces for internal errors                   [boolean]
        -h, --help        Show help                                          [boolean]
            --version     Show version number                                [boolean]
            --dialect     Log dialect (no auto-detection)
                                 [choices: "seed", "dsh-0.1.0-rc.8"] [default: "seed"]
            --known-type  Accept this foreign log-only event type (repeatable)
                                                                 [array] [default: []]
            --json        Print one JSON document instead of the table
                                                            [boolean] [default: false]

      Examples:
        sim inspect session.jsonl         Print the folded state as a table
        sim inspect session.jsonl --json  Print it as one JSON document
      "
    `)
  })

  it('--version prints the package version', async () => {
    const run = await runSim(['--version'])
    expect(run.exitCode).toBe(0)
    expect(run.stdout).toMatch(/^\d+\.\d+\.\d+\n$/)
  })

  it('an unknown flag is a usage error: exit 2, message on stderr, nothing on stdout', async () => {
    const run = await runSim(['inspect', 'x.jsonl', '--bogus'])
    expect(run.exitCode).toBe(2)
    expect(run.stdout).toBe('')
    expect(normalise(run.stderr)).toMatchInlineSnapshot(`
      "error: Unknown argument: bogus
      Run 'sim --help' for usage.
      "
    `)
  })

  it('an unknown command is a usage error', async () => {
    const run = await runSim(['frobnicate'])
    expect(run.exitCode).toBe(2)
    expect(normalise(run.stderr)).toMatchInlineSnapshot(`
      "error: Unknown argument: frobnicate
      Run 'sim --help' for usage.
      "
    `)
  })

  it('no command is a usage error', async () => {
    const run = await runSim([])
    expect(run.exitCode).toBe(2)
    expect(normalise(run.stderr)).toMatchInlineSnapshot(`
      "error: a command is required
      Run 'sim --help' for usage.
      "
    `)
  })

  it('a missing positional is a usage error', async () => {
    const run = await runSim(['inspect'])
    expect(run.exitCode).toBe(2)
    expect(normalise(run.stderr)).toMatchInlineSnapshot(`
      "error: Not enough non-option arguments: got 0, need at least 1
      Run 'sim --help' for usage.
      "
    `)
  })

  it('an invalid --dialect choice is a usage error', async () => {
    const run = await runSim(['inspect', 'x.jsonl', '--dialect', 'dsh-9'])
    expect(run.exitCode).toBe(2)
    expect(normalise(run.stderr)).toMatchInlineSnapshot(`
      "error: Invalid values:
        Argument: dialect, Given: "dsh-9", Choices: "seed", "dsh-0.1.0-rc.8"
      Run 'sim --help' for usage.
      "
    `)
  })

  it('an unexpected error is an internal error: exit 3, a short message, no stack', async () => {
    const run = await runWithBrokenStdout([])
    expect(run.exitCode).toBe(3)
    expect(run.stderr).toMatchInlineSnapshot(`
      "error: internal error: RangeError: stdout exploded
      This is a bug in sim. Rerun with --debug (or DEBUG=1) for the stack trace.
      "
    `)
  })

  it('--debug (or DEBUG=1) adds the stack of an internal error', async () => {
    for (const run of [await runWithBrokenStdout(['--debug']), await runWithBrokenStdout([], { DEBUG: '1' })]) {
      expect(run.exitCode).toBe(3)
      expect(run.stderr).toMatch(/^error: internal error: RangeError: stdout exploded\nRangeError: stdout exploded\n\s+at /)
    }
  })
})
