/**
 * The crash child for user subjects (§13.4): like `world/crash-child.ts`, but the session is run by the
 * user module named by the second argument (`node --import tsx module-crash-child.ts <job JSON> <module>`),
 * loaded and validated by `loadModuleSubject`. The subject must honour `onDurable` as its store's hook
 * (feature `crash`). Exit codes if it is not killed: 0 finished before the crash point, 2 bad scenario or
 * module, 3 anything else, 4 its own watchdog elapsed at the crash point. It sends the ready line (`world/crash.ts`)
 * once the module, scenario, transcript and mock are loaded.
 */
import { createChildWorld, childRequestHook } from '../world/crash-counters.ts'
import { scenarioTranscript } from '../run/transcript.ts'
import { mountIntercept } from '../provider/mount-intercept.ts'
import { ScenarioError } from '../scenario/errors.ts'
import { loadScenario } from '../scenario/load.ts'
import { resolveScenario } from '../scenario/resolve.ts'
import { crashAckChannel, parseCrashJob } from '../world/crash.ts'
import { loadModuleSubject, SubjectModuleError } from './module.ts'

/** Where the child mounts the mock provider; the in-process interception answers it, so it never resolves on the network. */
const BASE_URL = 'http://module-crash-child.mock.sim.test/v1'

async function main(): Promise<void> {
  const job = parseCrashJob(process.argv[2])
  const modulePath = process.argv[3]
  if (modulePath === undefined) throw new SubjectModuleError('SUBJECT_NOT_FOUND', 'module crash child: expected the subject module as the second argument')
  const subject = await loadModuleSubject(modulePath)
  const scenario = resolveScenario(await loadScenario(job.scenarioFile), { file: job.scenarioFile })
  const transcript = await scenarioTranscript(scenario, job.seed)
  const world = createChildWorld(job, scenario, transcript)
  const mount = mountIntercept(world.provider, BASE_URL)
  const channel = crashAckChannel(job)
  const onRequest = childRequestHook(job, world)
  // Loaded and about to start: the parent's startup watchdog ends here (issue #18).
  channel.ready()
  try {
    await subject.runSession({
      scenario, transcript, logPath: job.logPath, baseUrl: mount.baseURL, seed: job.seed, resume: job.resume, onDurable: channel.ack,
      hooks: world.hooks, ...(onRequest === undefined ? {} : { onRequest }),
    })
  } finally {
    mount.close()
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`module crash child: ${error instanceof Error ? error.stack ?? error.message : String(error)}\n`)
  process.exit(error instanceof ScenarioError || error instanceof SubjectModuleError ? 2 : 3)
})
