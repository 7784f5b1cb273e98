/**
 * Starts `sim serve` as a real child process (`node --import tsx packages/sim/src/cli/bin.ts serve …`, cwd
 * the repository root), waits for its ready line, collects every stdout JSON line, and stops it with a
 * signal. Bounded: the ready line must arrive within `READY_TIMEOUT_MS`, the exit within `EXIT_TIMEOUT_MS`.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process'
import { join } from 'node:path'
import { REPO_ROOT } from '../../cli/run-sim.ts'

const READY_TIMEOUT_MS = 30_000
const EXIT_TIMEOUT_MS = 10_000

/** The ready line of `sim serve`. */
export interface ReadyLine {
  type: 'ready'
  baseURL: string
  seed: number
  wire: string
  model: string
  faults: string[]
}

/** A running `sim serve` child. */
export interface ServeChild {
  ready: ReadyLine
  /** Every JSON line printed so far (the ready line first). */
  lines: Array<Record<string, unknown>>
  stderr(): string
  /** Sends `signal` and resolves with the exit code once the process ended. */
  stop(signal?: NodeJS.Signals): Promise<number | null>
  /** Sends `signal` without waiting; false once the process is gone. */
  signal(signal: NodeJS.Signals): boolean
  /** Resolves with the exit code and the terminating signal (null unless killed by one) once the process ended. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>
}

/** Spawns `sim serve <args>` and resolves at its ready line; rejects when it exits or times out first. */
export function startServe(args: readonly string[], env: Record<string, string> = {}): Promise<ServeChild> {
  const child: ChildProcessWithoutNullStreams = spawn(
    process.execPath, ['--import', 'tsx', join(REPO_ROOT, 'packages/sim/src/cli/bin.ts'), 'serve', ...args],
    { cwd: REPO_ROOT, env: { PATH: process.env['PATH'] ?? '', CI: 'true', ...env } },
  )
  const lines: Array<Record<string, unknown>> = []
  let stderr = ''
  let buffer = ''
  const ended = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal }))
  })
  const exited = ended.then((e) => e.code)
  return new Promise<ServeChild>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error(`sim serve printed no ready line within ${READY_TIMEOUT_MS} ms; stderr: ${stderr}`))
    }, READY_TIMEOUT_MS)
    child.stderr.on('data', (b: Buffer) => { stderr += b.toString('utf8') })
    child.stdout.on('data', (b: Buffer) => {
      buffer += b.toString('utf8')
      let nl = buffer.indexOf('\n')
      while (nl !== -1) {
        const line = JSON.parse(buffer.slice(0, nl)) as Record<string, unknown>
        buffer = buffer.slice(nl + 1)
        lines.push(line)
        if (line['type'] === 'ready') {
          clearTimeout(timer)
          resolve({
            ready: line as unknown as ReadyLine,
            lines,
            stderr: () => stderr,
            signal: (signal) => child.kill(signal),
            exited: ended,
            stop: async (signal = 'SIGTERM') => {
              child.kill(signal)
              const kill = setTimeout(() => child.kill('SIGKILL'), EXIT_TIMEOUT_MS)
              const code = await exited
              clearTimeout(kill)
              return code
            },
          })
        }
        nl = buffer.indexOf('\n')
      }
    })
    void exited.then((code) => {
      clearTimeout(timer)
      reject(new Error(`sim serve exited with ${code} before its ready line; stderr: ${stderr}`))
    })
  })
}
