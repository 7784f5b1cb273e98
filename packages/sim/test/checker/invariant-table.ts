/**
 * Renders `packages/sim/src/checker/INVARIANTS.md`: one row per registered invariant (INV-01 … INV-47) with its
 * statement (from the registry), the checker module that implements it (its family's file), and the tests that
 * exercise it: the conformance test of each violating fixture that expects the id (`conformanceCases()`), and
 * every test in `test/checker/` whose title names the id. Derived, never hand-written: the freshness test in
 * `invariant-table.test.ts` fails when the committed file differs. Regenerate with
 * `pnpm tsx packages/sim/test/checker/invariant-table.ts --write`.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { conformanceCases } from '@compaction-sim/fixtures'
import { CHECKS } from '../../src/checker/registry.ts'
import type { CheckId, Family } from '../../src/checker/types.ts'

/** The checker source folder and this test folder. */
export const CHECKER_DIR = fileURLToPath(new URL('../../src/checker/', import.meta.url))
export const TEST_DIR = fileURLToPath(new URL('./', import.meta.url))
/** The table's path. */
export const TABLE_PATH = join(CHECKER_DIR, 'INVARIANTS.md')

/** The module of each §12 family (the registry's `family`; one module per family, issue 5). */
export const FAMILY_MODULE: Record<Family, string> = {
  'log-surface': 'log-surface.ts',
  bracket: 'bracket.ts',
  pruning: 'pruning.ts',
  policy: 'policy.ts',
  recovery: 'recovery.ts',
  offload: 'offload.ts',
  reconstruction: 'reconstruction.ts',
  lifecycle: 'lifecycle.ts',
  world: 'world.ts',
  hardened: 'hardened-policy.ts',
}

/** One test that exercises an invariant: its file (in `test/checker/`) and its title (inside the groups the header names). */
export interface TestRef {
  file: string
  title: string
}

/** One row of the table. */
export interface InvariantRow {
  id: CheckId
  statement: string
  module: string
  tests: TestRef[]
}

const CONFORMANCE_GROUP = 'conformance fixtures › violating logs: the id is reported at its seq, and nothing undeclared'
const PLANTED_GROUP = 'planted violations in Appendix B'
/** `it('…INV-nn…'` with a literal title (single quotes or a template without substitutions). */
const LITERAL_TITLE = /\bit\(\s*(?:'((?:[^'\\]|\\.)*)'|`([^`$]*)`)/g
const RANGE = /(?:INV|WORLD)-\d\d\s*…\s*(?:INV|WORLD)-\d\d/
/** A planted case of `cases.test.ts`: `['INV-nn', 'what', edit]`, titled `INV-nn: what`. */
const PLANTED_ROW = /^\s*\['(INV-\d\d)', '((?:[^'\\]|\\.)*)'/gm

/** The rows, in catalog order. Reads the test sources of `test/checker/` (titles only). */
export function invariantRows(): InvariantRow[] {
  const byId = new Map<CheckId, TestRef[]>(CHECKS.map((c) => [c.id, []]))
  const add = (id: string, ref: TestRef): void => {
    byId.get(id as CheckId)?.push(ref)
  }
  for (const c of conformanceCases()) add(c.expect.id, { file: 'conformance.test.ts', title: `${c.expect.id} ${c.name}` })
  for (const file of readdirSync(TEST_DIR).filter((f) => f.endsWith('.test.ts')).sort()) {
    const source = readFileSync(join(TEST_DIR, file), 'utf8')
    for (const m of source.matchAll(LITERAL_TITLE)) {
      const title = (m[1] ?? m[2] ?? '').replace(/\\'/g, '\'')
      if (RANGE.test(title)) continue // "INV-01 … INV-47" names the catalog, not two invariants
      for (const id of new Set(title.match(/(?:INV|WORLD)-\d\d/g) ?? [])) add(id, { file, title })
    }
    if (file === 'cases.test.ts') {
      for (const m of source.matchAll(PLANTED_ROW)) add(m[1] ?? '', { file, title: `${m[1]}: ${(m[2] ?? '').replace(/\\'/g, '\'')}` })
    }
  }
  return CHECKS.map((c) => ({ id: c.id, statement: c.statement, module: FAMILY_MODULE[c.family], tests: byId.get(c.id) ?? [] }))
}

/** The markdown document (ends with one newline). */
export function renderInvariantTable(rows: readonly InvariantRow[] = invariantRows()): string {
  const cell = (text: string): string => text.replace(/\|/g, '\\|')
  const lines = [
    '# Invariants → checker modules → tests',
    '',
    'Generated from the registry (`registry.ts`), the conformance fixtures and the test titles of `packages/sim/test/checker/`;',
    'do not edit by hand. Regenerate with `pnpm tsx packages/sim/test/checker/invariant-table.ts --write`',
    '(`invariant-table.test.ts` fails when this file is stale). Statements are the registry\'s short paraphrases of §12;',
    'the WORLD rows are the world-truth checks of issue #21 (the log judged against the world record, `world.ts`).',
    `Tests are listed by file, then title; \`conformance.test.ts\` titles sit under "${CONFORMANCE_GROUP}" (one per`,
    `violating fixture of \`@compaction-sim/fixtures\`), \`cases.test.ts\` titles under "${PLANTED_GROUP}".`,
    '',
    '| id | statement | module | tests (file: titles) |',
    '|---|---|---|---|',
  ]
  for (const r of rows) {
    const files = new Map<string, string[]>()
    for (const t of r.tests) files.set(t.file, [...(files.get(t.file) ?? []), t.title])
    const tests = [...files].map(([file, titles]) => `\`${file}\`: ${titles.map(cell).join('; ')}`).join('<br>')
    lines.push(`| ${r.id} | ${cell(r.statement)} | \`${r.module}\` | ${tests} |`)
  }
  return `${lines.join('\n')}\n`
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  if (process.argv.includes('--write')) {
    writeFileSync(TABLE_PATH, renderInvariantTable())
    process.stdout.write(`wrote ${TABLE_PATH}\n`)
  } else process.stdout.write(renderInvariantTable())
}
