import { defineProject } from 'vitest/config'
import { sourceResolution } from '../../vitest.conditions.ts'

export default defineProject({
  ...sourceResolution,
  test: {
    name: 'subject-dsh',
    include: ['test/**/*.test.ts'],
  },
})
