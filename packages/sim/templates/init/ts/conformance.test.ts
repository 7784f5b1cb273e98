/**
 * Conformance of ./subject.ts, written by `sim init --ts`: one vitest test per scenario of the compaction-sim
 * conformance pack; a scenario your subject's `features` do not cover is skipped with the reason, a failure
 * names the violated invariants (INV-nn), the failed expectations and a one-line replay command.
 * Run it with `npx vitest run` (needs `vitest` and `@compaction-sim/sim` among your devDependencies).
 */
import { fileURLToPath } from 'node:url'
import { defineConformanceSuite } from '@compaction-sim/sim/conformance'

defineConformanceSuite({
  // A module path, not an imported object: crash scenarios run your subject again in a child process.
  subject: fileURLToPath(new URL('./subject.ts', import.meta.url)),
  // 'must': every invariant holds; 'should': the scenarios' expected outcomes too; 'may': optional features as well.
  level: 'must',
})
