/**
 * Young-generation collection for untimed benchmark setup. A `beforeEach` that rebuilds a 100k-event log
 * leaves its fresh structures in V8's new space, and the first scavenge inside the timed sample then copies
 * and promotes them — a cost of the setup that grows with the log, not of the code under test. Two minor
 * GCs (survive once, then promote) settle that before timing. A full `gc()` is deliberately not used:
 * measured here, it made the following samples 3–8× slower at every size (it drops compiled code and
 * feedback), which hides rather than removes noise. `gc` is enabled at run time when node was started
 * without `--expose-gc` (`v8.setFlagsFromString` + a fresh vm context), so `pnpm bench` needs no flag.
 */
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'

type Gc = (options?: { type?: 'major' | 'minor'; execution?: 'sync' | 'async' }) => void

const exposed = (globalThis as { gc?: unknown }).gc
let gc: Gc | undefined = typeof exposed === 'function' ? exposed as Gc : undefined

function resolveGc(): Gc {
  if (gc !== undefined) return gc
  setFlagsFromString('--expose-gc')
  const fn: unknown = runInNewContext('gc')
  if (typeof fn !== 'function') throw new Error('bench: this runtime has no gc() even with --expose-gc')
  gc = fn as Gc
  return gc
}

/** Runs two synchronous scavenges, so the objects the setup just built are promoted and its garbage is freed. */
export function settleYoungGeneration(): void {
  const collect = resolveGc()
  collect({ type: 'minor', execution: 'sync' })
  collect({ type: 'minor', execution: 'sync' })
}
