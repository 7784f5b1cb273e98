/**
 * Export conditions of the vitest projects: `source` first, so the workspace packages resolve to their
 * TypeScript sources (`exports["."].source`) and tests run on a fresh clone with no `dist/`; then vite's
 * default server conditions (`module`, `node`, `development|production`), which a custom list replaces.
 */
export const SOURCE_CONDITIONS = ['source', 'module', 'node', 'development|production']

/** The `resolve` and `ssr.resolve` settings every project config spreads in (vitest runs tests in vite's SSR environment). */
export const sourceResolution = {
  resolve: { conditions: SOURCE_CONDITIONS },
  ssr: { resolve: { conditions: SOURCE_CONDITIONS } },
}
