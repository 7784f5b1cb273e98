/**
 * The one seeded PRNG of a simulated run (AGENTS.md "Determinism"): every random choice of the world and
 * the subject draws from a fork of the run's stream, keyed by the scenario seed (or the `--seed`
 * override). It is the fixtures' xoshiro128** `Prng`, so transcripts generated from the same seed agree.
 */
import { Prng, isUint32 } from '@compaction-sim/fixtures'

export { Prng, isUint32 }

/** Labels of the independent streams a run forks, so adding draws to one never shifts another. */
export type WorldStream = 'ids' | 'provider' | 'subject'

/** The run's root stream for `seed` (a uint32; throws `RangeError` otherwise). */
export function worldPrng(seed: number): Prng {
  return new Prng(seed)
}

/** The independent stream `label` of the run keyed by `seed`. */
export function worldStream(seed: number, label: WorldStream): Prng {
  return worldPrng(seed).fork(label)
}
