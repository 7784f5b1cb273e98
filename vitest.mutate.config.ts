/**
 * The vitest configuration of the mutation run (`pnpm mutate`, see `stryker.config.mjs`): only the test
 * files that own the modules being mutated (`scripts/mutation-scope.mjs`, narrowed by `MUTATE_MODULES`), so
 * each mutant is judged by its module's tests and a run finishes in reasonable time on a shared machine.
 * `pnpm test` never uses it.
 */
import { fileURLToPath } from 'node:url'
import { defineConfig } from 'vitest/config'
import { BaseSequencer, type TestSpecification } from 'vitest/node'
import { SOURCE_CONDITIONS } from './vitest.conditions.ts'
// @ts-expect-error -- a plain ESM helper shared with stryker.config.mjs; it carries JSDoc types only
import { selected } from './scripts/mutation-scope.mjs'

/**
 * The workspace packages resolved to this copy of the repository. pnpm links them through node_modules
 * symlinks, which Stryker's sandbox shares with the original checkout; without these aliases a test in the
 * sandbox would import the original, unmutated `@compaction-sim/core` and every mutant reached that way
 * would survive.
 */
const alias = [
  { find: /^@compaction-sim\/core$/, replacement: fileURLToPath(new URL('./packages/core/src/index.ts', import.meta.url)) },
  { find: /^@compaction-sim\/fixtures$/, replacement: fileURLToPath(new URL('./packages/fixtures/src/index.ts', import.meta.url)) },
]

/**
 * Vitest's own order (files that failed last first, then the slowest), with the property files moved to the
 * end. A mutant stops at its first failing test (Stryker's bail), and a property file is the slowest way to
 * find one: run first, it made every mutant a unit test would have caught wait for it.
 */
class PropertyFilesLast extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files)
    const isProperty = (file: TestSpecification): boolean => file.moduleId.endsWith('.property.test.ts')
    return [...sorted.filter((f) => !isProperty(f)), ...sorted.filter(isProperty)]
  }
}

/** One vitest project per package that has tests in scope. */
function project(name: 'core' | 'sim', globs: string[]) {
  const include = globs.filter((g) => !g.startsWith('!'))
  const exclude = globs.filter((g) => g.startsWith('!')).map((g) => g.slice(1))
  // The `source` condition too, so any other workspace import (a subpath export) resolves to sources, never to a stale dist.
  return {
    root: `packages/${name}`, resolve: { alias, conditions: SOURCE_CONDITIONS }, ssr: { resolve: { conditions: SOURCE_CONDITIONS } },
    // One module graph per worker instead of one per test file: every mutant re-runs its covering files, and
    // re-importing core and the checker for each of them was half of a mutant's time (isolate: true took
    // 29.6 s for the checker's 330 tests on one worker, false 14.5 s; the same 330 pass either way).
    test: { name, include, exclude, isolate: false },
  }
}

const core = selected('core') as string[]
const sim = selected('sim') as string[]

export default defineConfig({
  test: {
    sequence: { sequencer: PropertyFilesLast },
    projects: [...(core.length > 0 ? [project('core', core)] : []), ...(sim.length > 0 ? [project('sim', sim)] : [])],
  },
})
