/**
 * The crash child (§13.4): run by `runCrashingSession` as `node --import tsx crash-child.ts <job JSON>`.
 * It loads and resolves the scenario, builds its transcript and provider world, mounts the mock provider
 * in-process (`mount-intercept.ts`), and runs the reference subject with `onDurable` wired to the crash ack channel, so
 * the parent can SIGKILL it right after the crash-point event is fsync'ed, and `onRequest` wired to the job's
 * capture file (when given), so the killed session's requests reach the run's capture. Exit codes if it is not killed:
 * 0 the session finished before the crash point, 2 the scenario is invalid, 3 anything else, 4 its own watchdog
 * elapsed at the crash point. It sends the ready line (`crash.ts`) once the scenario, transcript and mock are loaded.
 */
import { createChildWorld, childRequestHook } from './crash-counters.ts'
import { scenarioTranscript } from '../run/transcript.ts'
import { mountIntercept } from '../provider/mount-intercept.ts'
import { ScenarioError } from '../scenario/errors.ts'
import { loadScenario } from '../scenario/load.ts'
import { resolveScenario } from '../scenario/resolve.ts'
import { runReferenceSession } from '../subjects/reference.ts'
import { crashAckChannel, parseCrashJob } from './crash.ts'

/** Where the child mounts the mock provider; the in-process interception answers it, so it never resolves on the network. */
export const CRASH_CHILD_BASE_URL = 'http://crash-child.mock.sim.test/v1'

async function main(): Promise<void> {
  const job = parseCrashJob(process.argv[2])
  const scenario = resolveScenario(await loadScenario(job.scenarioFile), { file: job.scenarioFile })
  const transcript = await scenarioTranscript(scenario, job.seed)
  // The provider's own clock only stamps captures and response metadata, which die with the child.
  const world = createChildWorld(job, scenario, transcript)
  const mount = mountIntercept(world.provider, CRASH_CHILD_BASE_URL)
  const channel = crashAckChannel(job)
  const onRequest = childRequestHook(job, world)
  // Loaded and about to start: the parent's startup watchdog ends here (issue #18).
  channel.ready()
  try {
    await runReferenceSession({
      scenario, transcript, logPath: job.logPath, baseUrl: mount.baseURL, seed: job.seed, resume: job.resume, onDurable: channel.ack,
      hooks: world.hooks, ...(onRequest === undefined ? {} : { onRequest }),
    })
  } finally {
    mount.close()
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`crash child: ${error instanceof Error ? error.stack ?? error.message : String(error)}\n`)
  process.exit(error instanceof ScenarioError ? 2 : 3)
})
