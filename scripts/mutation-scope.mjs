// @ts-check
/**
 * The modules of the mutation run (`pnpm mutate`) and the tests that judge each one, shared by
 * `stryker.config.mjs` (what to mutate) and `vitest.mutate.config.ts` (what to run).
 *
 * `MUTATE_MODULES` (comma-separated names of `MODULES`, default all) narrows one run to some modules, e.g.
 * `MUTATE_MODULES=policy,range pnpm mutate`. Results of every run accumulate in the one incremental file, so
 * module-by-module runs add up to the whole report. An unknown name throws, naming the valid ones.
 */

/**
 * Per module: the source files to mutate (root-relative globs) and the test files of each vitest project
 * that own it (globs relative to the package root).
 * @type {Readonly<Record<string, { mutate: string[]; core: string[]; sim: string[] }>>}
 */
export const MODULES = Object.freeze({
  policy: { mutate: ['packages/core/src/policy/**/*.ts'], core: ['test/policy/**/*.test.ts', 'test/compaction/policy-faults.test.ts'], sim: [] },
  range: { mutate: ['packages/core/src/range/**/*.ts'], core: ['test/range/**/*.test.ts'], sim: [] },
  // The checker-side cases with hand-written prune results also judge core's pruneContent.
  prune: { mutate: ['packages/core/src/prune/**/*.ts'], core: ['test/prune/**/*.test.ts'], sim: ['test/checker/shared-core-rules.test.ts'] },
  compaction: { mutate: ['packages/core/src/compaction/**/*.ts'], core: ['test/compaction/**/*.test.ts'], sim: [] },
  meter: { mutate: ['packages/core/src/meter/**/*.ts'], core: ['test/meter/**/*.test.ts'], sim: [] },
  // cli.test.ts drives the whole CLI through subprocess-sized runs and adds nothing a checker mutant needs;
  // invariant-table.test.ts only compares a generated document (INVARIANTS.md) with a fresh rendering.
  checker: {
    mutate: ['packages/sim/src/checker/**/*.ts'], core: [],
    sim: ['test/checker/**/*.test.ts', '!test/checker/cli.test.ts', '!test/checker/invariant-table.test.ts'],
  },
})

/**
 * The modules selected by `MUTATE_MODULES` (all when unset or empty).
 * @returns {string[]}
 * @throws {Error} when a name is not a key of `MODULES`
 */
export function selectedModules() {
  const raw = process.env['MUTATE_MODULES'] ?? ''
  const names = raw.split(',').map((s) => s.trim()).filter((s) => s !== '')
  if (names.length === 0) return Object.keys(MODULES)
  for (const name of names) {
    if (!(name in MODULES)) throw new Error(`MUTATE_MODULES: unknown module "${name}"; expected some of ${Object.keys(MODULES).join(', ')}`)
  }
  return names
}

/**
 * The union of one field over the selected modules, in module order and without duplicates.
 * @param {'mutate' | 'core' | 'sim'} field
 * @returns {string[]}
 */
export function selected(field) {
  return [...new Set(selectedModules().flatMap((name) => MODULES[name]?.[field] ?? []))]
}
