import { defineProject } from 'vitest/config'
import { sourceResolution } from '../../vitest.conditions.ts'

export default defineProject({
  ...sourceResolution,
  test: {
    name: 'sim',
    include: ['test/**/*.test.ts'],
    // Issue #18: vitest's 5 s default fails quick tests on a loaded machine; these defaults fit a 10× slower
    // one. Property tests and tests that spawn processes declare their own bounds; none asserts a duration.
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
})
