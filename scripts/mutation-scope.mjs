// @ts-check
/**
 * The modules of the mutation run (`pnpm mutate`) and the tests that judge each one, shared by
 * `stryker.config.mjs` (what to mutate) and `vitest.mutate.config.ts` (what to run).
 *
 * `MUTATE_MODULES` (comma-separated names of `MODULES` or `GROUPS`, default all) narrows one run to some
 * modules, e.g. `MUTATE_MODULES=policy,range pnpm mutate`. Each module set keeps its own incremental state
 * (`reports/mutation/state/<set>.json`, committed) and JSON report (`reports/mutation/modules/<set>.json`), so
 * module-by-module runs (`scripts/mutate-all.sh`) add up to the whole report (`scripts/mutation-survivors.mjs`). The sim checker is split into chunks (`checker-bracket`, `checker-model`, …) small enough
 * to score one per session; the group name `checker` still means all of them. An unknown name throws,
 * naming the valid ones.
 */

/**
 * The checker's tests: every chunk is judged by all of them (a checker mutant may be caught by any case), except
 * the property tests. Nearly every checker test covers nearly every checker mutant (each runs `checkLog`), so a
 * surviving mutant runs the whole set, and the four property files took 3.9 s of its 5.4 s (one worker,
 * uninstrumented). Without them a score is a lower bound: any mutant killed without them is killed with them.
 * The chunks checker-meter, checker-policy and checker-bracket were first scored with them included.
 */
const CHECKER_TESTS = Object.freeze([
  'test/checker/**/*.test.ts', '!test/checker/cli.test.ts', '!test/checker/invariant-table.test.ts', '!test/checker/**/*.property.test.ts',
])

/** The files of the named checker chunks (base names without `.ts`); the rest form `checker-run`. */
const CHECKER_CHUNK_FILES = [
  'bracket', 'model', 'input', 'run-inputs', 'log-surface', 'live-events', 'lookahead', 'offload', 'recovery', 'policy', 'pruning',
  'meter', 'windows', 'hardened-capacity', 'hardened-head', 'hardened-policy', 'hardened-room', 'hardened-selection', 'hardened-text',
]

/**
 * One checker chunk: the named files of packages/sim/src/checker, judged by `CHECKER_TESTS`.
 * @param {string[]} files base names without `.ts`
 * @returns {{ mutate: string[]; core: string[]; sim: string[] }}
 */
function checkerChunk(files) {
  return { mutate: files.map((f) => `packages/sim/src/checker/${f}.ts`), core: [], sim: [...CHECKER_TESTS] }
}

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
  // The hardened rules' engine paths (HARD-5 projection, HARD-8 calibration) are judged by their own test files too.
  compaction: { mutate: ['packages/core/src/compaction/**/*.ts'], core: ['test/compaction/**/*.test.ts', 'test/offload/text.test.ts', 'test/meter/calibration.test.ts'], sim: [] },
  meter: { mutate: ['packages/core/src/meter/**/*.ts'], core: ['test/meter/**/*.test.ts'], sim: [] },
  // The checker, in chunks; `checker-run` takes every checker file no other chunk names (a new file lands there).
  // cli.test.ts drives the whole CLI through subprocess-sized runs and adds nothing a checker mutant needs;
  // invariant-table.test.ts only compares a generated document (INVARIANTS.md) with a fresh rendering.
  'checker-bracket': checkerChunk(['bracket']),
  'checker-model': checkerChunk(['model']),
  'checker-input': checkerChunk(['input', 'run-inputs']),
  'checker-surface': checkerChunk(['log-surface', 'live-events', 'lookahead']),
  'checker-offload': checkerChunk(['offload', 'recovery']),
  'checker-policy': checkerChunk(['policy', 'pruning']),
  'checker-meter': checkerChunk(['meter', 'windows']),
  // The checks of the hardened rules (HARD-1…8), split off checker-run so that each chunk scores in under an hour.
  'checker-hardened': checkerChunk(['hardened-capacity', 'hardened-head', 'hardened-policy', 'hardened-room', 'hardened-selection', 'hardened-text']),
  'checker-run': {
    mutate: ['packages/sim/src/checker/**/*.ts', ...CHECKER_CHUNK_FILES.map((f) => `!packages/sim/src/checker/${f}.ts`)],
    core: [], sim: [...CHECKER_TESTS],
  },
})

/**
 * Names that stand for several modules of `MODULES`.
 * @type {Readonly<Record<string, readonly string[]>>}
 */
export const GROUPS = Object.freeze({
  checker: Object.freeze(Object.keys(MODULES).filter((name) => name.startsWith('checker-'))),
})

/**
 * The modules selected by `MUTATE_MODULES` (all when unset or empty), groups expanded, without duplicates.
 * @returns {string[]}
 * @throws {Error} when a name is neither a key of `MODULES` nor of `GROUPS`
 */
export function selectedModules() {
  const raw = process.env['MUTATE_MODULES'] ?? ''
  const names = raw.split(',').map((s) => s.trim()).filter((s) => s !== '')
  if (names.length === 0) return Object.keys(MODULES)
  /** @type {string[]} */
  const out = []
  for (const name of names) {
    const group = GROUPS[name]
    if (group !== undefined) out.push(...group)
    else if (name in MODULES) out.push(name)
    else throw new Error(`MUTATE_MODULES: unknown module "${name}"; expected some of ${[...Object.keys(MODULES), ...Object.keys(GROUPS)].join(', ')}`)
  }
  return [...new Set(out)]
}

/**
 * The union of one field over the selected modules, in module order and without duplicates.
 * @param {'mutate' | 'core' | 'sim'} field
 * @returns {string[]}
 */
export function selected(field) {
  return [...new Set(selectedModules().flatMap((name) => MODULES[name]?.[field] ?? []))]
}

/**
 * The name of the selected module set, for its state file and report (`stryker.config.mjs`): the selected
 * modules joined by `+` (one module: its name), or `all` when every module is selected.
 * @returns {string}
 */
export function stateKey() {
  const names = selectedModules()
  return names.length === Object.keys(MODULES).length ? 'all' : names.join('+')
}
