/**
 * The one seed convention of the property tests: every fast-check run uses `FC_SEED` when set, else a
 * fixed default, and prints the seed so a failure can be replayed with `FC_SEED=<n> pnpm test`.
 */
import type { Parameters } from 'fast-check'

const DEFAULT_SEED = 20261130

/** The seed of this run. */
export const FC_SEED: number = process.env['FC_SEED'] !== undefined ? Number(process.env['FC_SEED']) : DEFAULT_SEED

/** fast-check parameters with the run's seed; the seed is printed once per file. */
export function fcParams<T>(extra: Parameters<T> = {}): Parameters<T> {
  return { seed: FC_SEED, numRuns: 100, ...extra }
}

if (!Number.isSafeInteger(FC_SEED)) throw new Error(`FC_SEED must be an integer, got ${process.env['FC_SEED']}`)
console.log(`fast-check seed ${FC_SEED} (replay: FC_SEED=${FC_SEED} pnpm test)`)
