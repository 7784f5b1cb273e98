/**
 * A test crash child (§13.4): replays the events of a stored JSONL log (`job.scenarioFile`) into a fresh
 * durable log (`job.logPath`) the way a subject writes — an `EventLog` whose listener fires each accepted
 * event at a `JsonlLogStore` without waiting — and acknowledges every event from the store's `onDurable`
 * hook. All events are queued at once, so only the hook's blocking keeps later events off the disk.
 * Exits 0 after a full replay (the crash point never came), 3 on any error. With the extra argument
 * `sleep-before-ready=<ms>` it sleeps that long before its ready line (a slow start-up, issue #18).
 */
import { EventLog, JsonlLogStore, readLog } from '@compaction-sim/core'
import { crashAckChannel, parseCrashJob } from '../../../src/world/crash.ts'

async function main(): Promise<void> {
  const job = parseCrashJob(process.argv[2])
  const source = await readLog(job.scenarioFile, { dialect: 'seed' })
  const channel = crashAckChannel(job)
  const sleep = /^sleep-before-ready=(\d+)$/.exec(process.argv[3] ?? '')
  if (sleep !== null) await new Promise((resolve) => setTimeout(resolve, Number(sleep[1])))
  // Loaded and about to start: the parent's startup watchdog ends here (issue #18).
  channel.ready()
  const { store } = await JsonlLogStore.open(job.logPath, { dialect: 'seed', create: true, onDurable: channel.ack })
  const log = new EventLog({ dialect: 'seed' })
  let failure: unknown
  log.subscribe((event) => {
    store.append([event]).catch((error: unknown) => {
      failure ??= error
    })
  })
  for (const event of source.events) log.accept(event)
  await store.close()
  if (failure !== undefined) throw failure
}

main().catch((error: unknown) => {
  process.stderr.write(`append-child: ${error instanceof Error ? error.stack ?? error.message : String(error)}\n`)
  process.exit(3)
})
