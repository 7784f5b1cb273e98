/**
 * The invariant table of the closing note (`src/checker/INVARIANTS.md`) is derived from the registry and the
 * tests, so it cannot drift: the committed file must equal a fresh rendering, every registered id has a row
 * whose module file exists, and every test it cites is in an existing test file that holds its title.
 */
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { CHECKS } from '../../src/checker/registry.ts'
import { CHECKER_DIR, invariantRows, renderInvariantTable, TABLE_PATH, TEST_DIR } from './invariant-table.ts'

describe('the invariant table (id → module → tests)', () => {
  const rows = invariantRows()

  it('is fresh: the committed INVARIANTS.md equals a new rendering', () => {
    const committed = existsSync(TABLE_PATH) ? readFileSync(TABLE_PATH, 'utf8') : ''
    expect(committed === renderInvariantTable(rows), 'stale: run pnpm tsx packages/sim/test/checker/invariant-table.ts --write').toBe(true)
  })

  it('has one row per registered id, in catalog order, each naming an existing module that registers it', () => {
    expect(rows.map((r) => r.id)).toEqual(CHECKS.map((c) => c.id))
    for (const r of rows) {
      const source = readFileSync(join(CHECKER_DIR, r.module), 'utf8')
      expect(source, `${r.id} in ${r.module}`).toContain(`'${r.id}'`)
    }
  })

  it('cites at least one test per id, each in an existing test file', () => {
    for (const r of rows) {
      expect(r.tests.length, r.id).toBeGreaterThan(0)
      for (const t of r.tests) {
        expect(existsSync(join(TEST_DIR, t.file)), `${r.id}: ${t.file}`).toBe(true)
        expect(t.title, r.id).toContain(r.id)
      }
    }
  })
})
