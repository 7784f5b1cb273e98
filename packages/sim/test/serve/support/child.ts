/**
 * Starts `sim serve` as a real child process (`node --import tsx packages/sim/src/cli/bin.ts serve …`, cwd
 * the repository root), waits for its ready line, collects every stdout JSON line, and stops it with a
 * signal. Bounded by liveness watchdogs only (issue #18): the ready line must arrive within `READY_TIMEOUT_MS`,
 * the exit after a signal within `EXIT_TIMEOUT_MS` (then SIGKILL), both × `SIM_WATCHDOG_SCALE` and both
 * minutes, so a slow machine is never a failure; a fired watchdog rejects with `watchdog: waited … for …`.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process'
import { join } from 'node:path'
import { CRASH_STARTUP_MS_DEFAULT } from '../../../src/world/crash.ts'
import { scaledWatchdogMs, watchdogMessage } from '../../../src/world/watchdog.ts'
import { REPO_ROOT } from '../../cli/run-sim.ts'

/** Spawn → ready line, before scaling: the crash harness's startup bound (5 min). */
const READY_TIMEOUT_MS = CRASH_STARTUP_MS_DEFAULT
/** Signal → exit, before scaling. */
const EXIT_TIMEOUT_MS = 60_000

/** The hook timeout a test file needs around `startServe` (the ready watchdog plus a minute). */
export const SERVE_HOOK_TIMEOUT_MS = scaledWatchdogMs(READY_TIMEOUT_MS + 60_000)

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
    process.execPath, ['--conditions=source', '--import', 'tsx', join(REPO_ROOT, 'packages/sim/src/cli/bin.ts'), 'serve', ...args],
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
    const readyMs = scaledWatchdogMs(READY_TIMEOUT_MS)
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error(`${watchdogMessage('the ready line of sim serve', readyMs)}; stderr: ${stderr}`))
    }, readyMs)
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
              const kill = setTimeout(() => child.kill('SIGKILL'), scaledWatchdogMs(EXIT_TIMEOUT_MS))
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
