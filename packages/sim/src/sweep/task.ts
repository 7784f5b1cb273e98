/**
 * The tasks a worker thread of the pool runs (`pool.ts`, `worker.ts`): a `sim sweep` job (one scenario, seed
 * and policy cell) or a `sim run --seeds` job (one scenario under one seed). Tagged, so one pool and one
 * worker entry serve both commands.
 */
import { assertNever } from '@compaction-sim/core'
import { runSweepJob, type SweepJob, type SweepJobResult } from './job.ts'
import { runSeedJob, type SeedJob, type SeedJobResult } from './seed-job.ts'

/** One task of the pool; plain data (structured-clonable). */
export type PoolTask = { kind: 'sweep'; job: SweepJob } | { kind: 'seed'; job: SeedJob }

/** The result of a task, tagged like it. */
export type PoolResult = { kind: 'sweep'; result: SweepJobResult } | { kind: 'seed'; result: SeedJobResult }

/** Runs one task in this thread. */
export async function runPoolTask(task: PoolTask): Promise<PoolResult> {
  switch (task.kind) {
    case 'sweep': return { kind: 'sweep', result: await runSweepJob(task.job) }
    case 'seed': return { kind: 'seed', result: await runSeedJob(task.job) }
    default: return assertNever(task, 'pool task')
  }
}
