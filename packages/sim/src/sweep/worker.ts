/**
 * The tinypool worker of `sim sweep` and `sim run --seeds` (design §4 item 8): each task is one `PoolTask`, run
 * in this worker thread's own module instance (its own msw server and mock mount), so jobs on different threads
 * never share state. From source it is loaded through tsx (`worker-entry.mjs`); from `dist` it is `worker.js`.
 */
import { runPoolTask, type PoolResult, type PoolTask } from './task.ts'

/** Runs one task (tinypool calls the default export with the task). */
export default async function runTask(task: PoolTask): Promise<PoolResult> {
  return runPoolTask(task)
}
