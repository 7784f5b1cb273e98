// @ts-check
/**
 * StrykerJS configuration of the mutation run (`pnpm mutate`; never part of `pnpm test` or CI).
 *
 * Mutates core's policy, range, prune, compaction and meter modules and the sim checker, and judges every
 * mutant with the vitest projects of `vitest.mutate.config.ts`. The run is incremental: results are kept in
 * `reports/mutation/state/<modules>.json` (committed, see `reports/README.md`), so a re-run tests only mutants
 * whose code or covering tests changed (`pnpm mutate --force` re-tests everything). Some modules only:
 * `MUTATE_MODULES=policy pnpm mutate` (modules and checker chunks in `scripts/mutation-scope.mjs`). StrykerJS
 * writes back only the files a run mutated, so every module set has its own state file and JSON report
 * (`reports/mutation/modules/<modules>.json`): a run of one module never forgets another's results. Concurrency stays at 1 by default because the run is
 * meant for shared 2-core machines; raise it with `--concurrency <n>` on a quiet one.
 */
import { selected, stateKey } from './scripts/mutation-scope.mjs'

/** One state file and one JSON report per module set (StrykerJS keeps only the mutated files in each). */
const key = stateKey()

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: 'vitest',
  vitest: { configFile: 'vitest.mutate.config.ts', related: false },
  plugins: ['@stryker-mutator/vitest-runner'],
  // packages/core/src/{policy,range,prune,compaction,meter} and packages/sim/src/checker, or the MUTATE_MODULES subset
  mutate: selected('mutate'),
  coverageAnalysis: 'perTest',
  // Static mutants (module-level constants, check tables) need a fresh module graph and every test per mutant,
  // which multiplies the run time; they are reported as Ignored. `pnpm mutate --ignoreStatic false` includes them.
  ignoreStatic: true,
  concurrency: 1,
  incremental: true,
  incrementalFile: `reports/mutation/state/${key}.json`,
  reporters: ['html', 'json', 'progress-append-only', 'clear-text'],
  htmlReporter: { fileName: `reports/mutation/html/${key}.html` },
  jsonReporter: { fileName: `reports/mutation/modules/${key}.json` },
  clearTextReporter: { allowColor: false, logTests: false, reportScoreTable: true },
  tempDirName: '.tmp/stryker',
  cleanTempDir: 'always',
  ignorePatterns: ['reports', '.tmp', 'dist'],
  // A busy shared machine runs tests slowly; these bounds only separate a mutant's infinite loop from slowness.
  // Generous, because a `Timeout` counts as detected: under a load of 12 on 2 cores a 30 s margin turned
  // ordinary slowness into "timeouts". A real infinite loop costs these three minutes once.
  timeoutMS: 180000,
  timeoutFactor: 3,
  dryRunTimeoutMinutes: 60,
  thresholds: { high: 90, low: 80, break: null },
}
