/**
 * The tinypool worker of `sim sweep` (design §4 item 8): each task is one `SweepJob`, run in this worker
 * thread's own module instance (its own msw server and mock mount), so jobs on different threads never share
 * state. Loaded through tsx's ESM hooks (`pool.ts` passes `--import tsx`).
 */
import { runSweepJob, type SweepJob, type SweepJobResult } from './job.ts'

/** Runs one job (tinypool calls the default export with the task). */
export default async function runTask(job: SweepJob): Promise<SweepJobResult> {
  return runSweepJob(job)
}
