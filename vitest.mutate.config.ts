/**
 * The vitest configuration of the mutation run (`pnpm mutate`, see `stryker.config.mjs`): only the test
 * files that own the modules being mutated (`scripts/mutation-scope.mjs`, narrowed by `MUTATE_MODULES`), so
 * each mutant is judged by its module's tests and a run finishes in reasonable time on a shared machine.
 * `pnpm test` never uses it.
 */
import { defineConfig } from 'vitest/config'
// @ts-expect-error -- a plain ESM helper shared with stryker.config.mjs; it carries JSDoc types only
import { selected } from './scripts/mutation-scope.mjs'

/** One vitest project per package that has tests in scope. */
function project(name: 'core' | 'sim', globs: string[]) {
  const include = globs.filter((g) => !g.startsWith('!'))
  const exclude = globs.filter((g) => g.startsWith('!')).map((g) => g.slice(1))
  return { extends: false, root: `packages/${name}`, test: { name, include, exclude } }
}

const core = selected('core') as string[]
const sim = selected('sim') as string[]

export default defineConfig({
  test: {
    projects: [...(core.length > 0 ? [project('core', core)] : []), ...(sim.length > 0 ? [project('sim', sim)] : [])],
  },
})
