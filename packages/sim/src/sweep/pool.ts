/**
 * Runs sweep jobs on a tinypool worker pool (issue #10, design §4 item 8), or inline when one worker is asked
 * for; each worker thread starts from `worker.js` (from `dist`) or loads the TypeScript job runner through tsx (`worker-entry.mjs`, from source; `world/child-entry.ts`). Results are handed
 * to `onResult` as they finish; the caller merges them by job index, so completion order never reaches the
 * report. An abort signal stops dispatching and cancels the pool's queued and running jobs (inline, the running job finishes).
 */
import { availableParallelism } from 'node:os'
import { Tinypool } from 'tinypool'
import { workerEntryUrl, workerExecArgv } from '../world/child-entry.ts'
import { runSweepJob, type SweepJob, type SweepJobResult } from './job.ts'

/** Options of `runJobs`. */
export interface PoolOptions {
  /** Worker threads; 1 runs the jobs in this thread, one after the other. */
  workers: number
  onResult: (result: SweepJobResult) => void
  signal?: AbortSignal
}

/** The default worker count: the machine's available parallelism. */
export function defaultWorkers(): number {
  return Math.max(1, availableParallelism())
}

/**
 * Runs every job; resolves with the finished results (in completion order) when all finished or, after an
 * abort, when the running ones did. Rejects on an internal failure of a job (a bug of sim).
 */
export async function runJobs(jobs: readonly SweepJob[], options: PoolOptions): Promise<SweepJobResult[]> {
  const done: SweepJobResult[] = []
  const finish = (r: SweepJobResult): void => {
    done.push(r)
    options.onResult(r)
  }
  if (options.workers <= 1) {
    for (const job of jobs) {
      if (options.signal?.aborted === true) break
      finish(await runSweepJob(job))
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
  const onAbort = (): void => controller.abort()
  options.signal?.addEventListener('abort', onAbort, { once: true })
  try {
    const settled = await Promise.allSettled(jobs.map(async (job) => {
      const result = await pool.run(job, { signal: controller.signal }) as SweepJobResult
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
