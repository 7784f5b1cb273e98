// @ts-check
/**
 * Prints the score per module and every surviving or uncovered mutant of the mutation run, from every module
 * report in `reports/mutation/modules/` (or the report files given as arguments): one line per mutant with
 * `file:line:column`, the mutator and the replacement. Checker files count under their chunk
 * (`scripts/mutation-scope.mjs`). A source file in several reports counts once, from the newest report.
 * A group (`checker`) gets a row of its own, the sum of its chunks, naming any chunk not scored yet.
 * Exit 0, or 2 when there is no report to read; it only reads.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { GROUPS, MODULES } from './mutation-scope.mjs'

const DIR = 'reports/mutation/modules'
/** @type {string[]} */
let files = process.argv.slice(2)
if (files.length === 0) {
  try {
    files = readdirSync(DIR).filter((f) => f.endsWith('.json')).map((f) => join(DIR, f))
  } catch {
    files = []
  }
  if (files.length === 0) {
    console.error(`mutation-survivors: no module report in ${DIR}/ (run \`pnpm mutate\` or scripts/mutate-all.sh first)`)
    process.exit(2)
  }
}
files.sort((a, b) => statSync(a).mtimeMs - statSync(b).mtimeMs)
/** @typedef {{ source: string; mutants: Array<{ mutatorName: string; replacement?: string; status: string; location: { start: { line: number; column: number }; end: { line: number; column: number } } }> }} FileResult */
/** @type {{ files: Record<string, FileResult> }} */
const report = { files: {} }
for (const file of files) Object.assign(report.files, JSON.parse(readFileSync(file, 'utf8')).files)

/** The module of a source path: core's top folder under src/, or the checker chunk that names the file. */
function moduleOf(path) {
  const m = /packages\/core\/src\/([^/]+)\//.exec(path)
  if (m?.[1] !== undefined) return m[1]
  if (!path.includes('packages/sim/src/checker/')) return 'other'
  const named = Object.entries(MODULES).find(([name, mod]) => name !== 'checker-run' && mod.mutate.some((g) => path.endsWith(g)))
  return named?.[0] ?? 'checker-run'
}

/** @type {Map<string, Record<string, number>>} */
const perModule = new Map()
const lines = []
for (const [path, { source, mutants }] of Object.entries(report.files)) {
  const counts = perModule.get(moduleOf(path)) ?? {}
  perModule.set(moduleOf(path), counts)
  const srcLines = source.split('\n')
  for (const m of mutants) {
    counts[m.status] = (counts[m.status] ?? 0) + 1
    if (m.status !== 'Survived' && m.status !== 'NoCoverage') continue
    const { line, column } = m.location.start
    const code = (srcLines[line - 1] ?? '').trim().slice(0, 100)
    lines.push(`${m.status === 'Survived' ? 'S' : 'N'} ${path}:${line}:${column} ${m.mutatorName} → ${JSON.stringify(m.replacement ?? '').slice(0, 80)}  | ${code}`)
  }
}
console.log('module           killed timeout survived no-cov ignored  score(covered)')
/** @type {Array<[string, Record<string, number>, string]>} */
const rows = [...perModule].sort().map(([name, c]) => [name, c, ''])
for (const [group, names] of Object.entries(GROUPS)) {
  /** @type {Record<string, number>} */
  const sum = {}
  for (const name of names) for (const [status, n] of Object.entries(perModule.get(name) ?? {})) sum[status] = (sum[status] ?? 0) + n
  const missing = names.filter((name) => !perModule.has(name))
  rows.push([`${group} (sum)`, sum, missing.length === 0 ? '' : `  not scored: ${missing.join(', ')}`])
}
for (const [name, c, note] of rows) {
  const killed = c['Killed'] ?? 0
  const timeout = c['Timeout'] ?? 0
  const survived = c['Survived'] ?? 0
  const noCov = c['NoCoverage'] ?? 0
  const detected = killed + timeout
  const score = (100 * detected) / Math.max(1, detected + survived + noCov)
  const covered = (100 * detected) / Math.max(1, detected + survived)
  console.log(`${name.padEnd(16)} ${String(killed).padStart(6)} ${String(timeout).padStart(7)} ${String(survived).padStart(8)} ${String(noCov).padStart(6)} ${String(c['Ignored'] ?? 0).padStart(7)}  ${score.toFixed(2)}% (${covered.toFixed(2)}%)${note}`)
}
for (const l of lines) console.log(l)
