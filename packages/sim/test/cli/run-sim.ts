/**
 * Test helpers: run `main()` in-process with a captured `CliIo`, and normalise output for inline
 * snapshots (ANSI stripped, temporary and repository paths replaced by `<tmp>` and `<root>`).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { stripVTControlCharacters } from 'node:util'
import { main } from '../../src/cli/main.ts'
import type { ExitCode } from '../../src/cli/exit-codes.ts'

/** The repository root (four levels above this file). */
export const REPO_ROOT = fileURLToPath(new URL('../../../../', import.meta.url)).replace(/\/$/, '')

/** What one in-process run of `sim` produced. */
export interface SimRun {
  exitCode: ExitCode
  stdout: string
  stderr: string
}

/** Options of `runSim`: the environment (default: empty, so the caller's NO_COLOR/CI do not leak in) and TTY. */
export interface RunSimOptions {
  env?: Record<string, string>
  isTTY?: boolean
  /** The working directory `sim` sees (config files, relative paths); default the process's. */
  cwd?: string
}

/** Runs `sim <argv>` in-process and captures stdout, stderr and the exit code. Never throws. */
export async function runSim(argv: string[], options: RunSimOptions = {}): Promise<SimRun> {
  let stdout = ''
  let stderr = ''
  const exitCode = await main(argv, {
    stdout: { write: (text: string) => { stdout += text } },
    stderr: { write: (text: string) => { stderr += text } },
    env: options.env ?? {},
    isTTY: options.isTTY ?? false,
    ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
  })
  return { exitCode, stdout, stderr }
}

/** True when `text` contains an ANSI escape sequence. */
export function hasAnsi(text: string): boolean {
  return stripVTControlCharacters(text) !== text
}

/** Strips ANSI escapes and replaces `paths` (longest first) by their placeholders. */
export function normalise(text: string, paths: Record<string, string> = {}): string {
  let out = stripVTControlCharacters(text)
  const entries = Object.entries({ ...paths, [REPO_ROOT]: '<root>' }).sort((a, b) => b[0].length - a[0].length)
  for (const [path, placeholder] of entries) out = out.split(path).join(placeholder)
  return out
}

/** A temporary directory for one test; `cleanup` removes it. */
export async function tempDir(): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'sim-cli-'))
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) }
}

/** Writes `lines` as a JSONL file in `dir` (objects are JSON-encoded; strings are written raw). */
export async function writeLog(dir: string, name: string, lines: ReadonlyArray<object | string>, finalNewline = true): Promise<string> {
  const path = join(dir, name)
  const text = lines.map((l) => (typeof l === 'string' ? l : JSON.stringify(l))).join('\n')
  await writeFile(path, finalNewline ? `${text}\n` : text)
  return path
}
