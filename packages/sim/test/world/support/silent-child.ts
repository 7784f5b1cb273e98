/**
 * A test crash child that hangs (issue #18): it parses its job, sends the ready line only when its second
 * argument is `ready`, and then neither acknowledges anything nor exits, so only a watchdog of the parent
 * can end it. Bounded: it exits 3 on its own after 10 minutes.
 */
import { crashAckChannel, parseCrashJob } from '../../../src/world/crash.ts'

/** How long the child hangs before it gives up by itself. */
const HANG_MS_MAX = 600_000

const channel = crashAckChannel(parseCrashJob(process.argv[2]))
if (process.argv[3] === 'ready') channel.ready()
setTimeout(() => {
  process.stderr.write(`silent-child: not killed within ${HANG_MS_MAX} ms\n`)
  process.exit(3)
}, HANG_MS_MAX)
