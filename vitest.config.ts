import { defineConfig } from 'vitest/config'

// One project per package; tests live in each package's test/ folder (design.md §3).
export default defineConfig({
  test: {
    projects: ['packages/*'],
  },
})
