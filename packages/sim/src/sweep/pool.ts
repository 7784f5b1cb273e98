/**
 * Runs pool tasks — `sim sweep` jobs (issue #10, design §4 item 8) and `sim run --seeds` jobs (issue #21) — on a
 * tinypool worker pool, or inline when one worker is asked for; each worker thread starts from `worker.js` (from
 * `dist`) or loads the TypeScript task runner through tsx (`worker-entry.mjs`, from source; `world/child-entry.ts`).
 * Results are handed to `onResult` as they finish; the caller merges them by job index, so completion order never
 * reaches the report. An abort signal stops dispatching and cancels the pool's queued and running jobs (inline,
 * the running job finishes).
 */
import { setMaxListeners } from 'node:events'
import { availableParallelism } from 'node:os'
import { Tinypool } from 'tinypool'
import { workerEntryUrl, workerExecArgv } from '../world/child-entry.ts'
import type { SweepJob, SweepJobResult } from './job.ts'
import type { SeedJob, SeedJobResult } from './seed-job.ts'
import { runPoolTask, type PoolResult, type PoolTask } from './task.ts'

/** Options of `runJobs` and `runSeedJobs`. */
export interface PoolOptions<R = SweepJobResult> {
  /** Worker threads; 1 runs the jobs in this thread, one after the other. */
  workers: number
  onResult: (result: R) => void
  signal?: AbortSignal
}

/** The default worker count: the machine's available parallelism. */
export function defaultWorkers(): number {
  return Math.max(1, availableParallelism())
}

/**
 * Runs every sweep job; resolves with the finished results (in completion order) when all finished or, after an
 * abort, when the running ones did. Rejects on an internal failure of a job (a bug of sim).
 */
export async function runJobs(jobs: readonly SweepJob[], options: PoolOptions): Promise<SweepJobResult[]> {
  return runTasks(jobs.map((job) => ({ kind: 'sweep', job })), options, (r) => (r.kind === 'sweep' ? r.result : mismatch(r)))
}

/** Runs every `sim run --seeds` job, like `runJobs`. */
export async function runSeedJobs(jobs: readonly SeedJob[], options: PoolOptions<SeedJobResult>): Promise<SeedJobResult[]> {
  return runTasks(jobs.map((job) => ({ kind: 'seed', job })), options, (r) => (r.kind === 'seed' ? r.result : mismatch(r)))
}

function mismatch(result: PoolResult): never {
  throw new Error(`the pool answered a ${result.kind} result to a task of another kind`)
}

async function runTasks<R>(tasks: readonly PoolTask[], options: PoolOptions<R>, unwrap: (result: PoolResult) => R): Promise<R[]> {
  const done: R[] = []
  const finish = (r: PoolResult): void => {
    const result = unwrap(r)
    done.push(result)
    options.onResult(result)
  }
  if (options.workers <= 1) {
    for (const task of tasks) {
      if (options.signal?.aborted === true) break
      finish(await runPoolTask(task))
    }
    return done
  }
  const pool = new Tinypool({
    filename: workerEntryUrl(),
    execArgv: workerExecArgv(),
    minThreads: options.workers,
    maxThreads: options.workers,
  })
  const controller = new AbortController()
  // Every queued `pool.run` listens on this one signal: not a leak, so no MaxListenersExceededWarning for long runs.
  setMaxListeners(tasks.length + 1, controller.signal)
  const onAbort = (): void => controller.abort()
  options.signal?.addEventListener('abort', onAbort, { once: true })
  try {
    const settled = await Promise.allSettled(tasks.map(async (task) => {
      const result = await pool.run(task, { signal: controller.signal }) as PoolResult
      finish(result)
    }))
    const failure = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected')
    if (failure !== undefined && options.signal?.aborted !== true) throw failure.reason
    return done
  } finally {
    options.signal?.removeEventListener('abort', onAbort)
    await pool.destroy()
  }
}
