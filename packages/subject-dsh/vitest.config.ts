import { defineProject } from 'vitest/config'

export default defineProject({
  test: {
    name: 'subject-dsh',
    include: ['test/**/*.test.ts'],
  },
})
