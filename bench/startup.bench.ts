/**
 * Start-up and end-to-end cost of the built CLI (issue #17), measured as the CPU time (user + system) of
 * child processes — the figure a user's CI pays — not wall time, which a shared machine distorts:
 * - `sim --version` of the built bin against `node -e 0` (medians of interleaved runs; target ≤ 2×);
 * - one smoke scenario end to end (`sim run scenarios/smoke/basic-pressure.yaml`);
 * - the whole catalog (`sim run 'scenarios/**\/*.yaml'`), crash children included, against the figure
 *   measured before the lazy start (same machine, from source with tsx, `CATALOG_CPU_S_BEFORE`).
 * Child CPU comes from the kernel's count of reaped children (`/proc/self/stat` cutime + cstime), so every
 * descendant the child waited for (crash children) is included. Linux only; needs `pnpm build` first.
 */
import { spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = fileURLToPath(new URL('../', import.meta.url))
/** The built bin (`pnpm build`); the bench measures what an installed package runs. */
export const BUILT_BIN = join(ROOT, 'packages/sim/dist/cli/bin.js')
/** Target of the start-up ratio `sim --version` / `node -e 0`. */
export const VERSION_RATIO_MAX = 2
/**
 * The catalog's CPU before this change: `/usr/bin/time node --import tsx packages/sim/src/cli/bin.ts run
 * 'scenarios/**\/*.yaml'` on the unmodified tree (84 scenarios): user 26.02 s + sys 7.00 s. The issue's own figure was 35.7 s.
 */
export const CATALOG_CPU_S_BEFORE = 33.02
/** Interleaved runs per command of the start-up comparison. */
const STARTUP_RUNS = 15
/** The kernel's clock ticks per second for /proc times (USER_HZ, 100 on Linux). */
const TICKS_PER_SECOND = 100

/** One measured command. */
export interface StartupRow {
  name: string
  cpuMs: number
  wallMs: number
  runs: number
}

/** Cumulative CPU of this process's reaped children in ms, or null when /proc is not there. */
function childrenCpuMs(): number | null {
  if (!existsSync('/proc/self/stat')) return null
  const stat = readFileSync('/proc/self/stat', 'utf8')
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  // After the command name: field 3 is fields[0]; cutime and cstime are fields 16 and 17.
  return ((Number(fields[13]) + Number(fields[14])) * 1000) / TICKS_PER_SECOND
}

/** Runs `args` with node once; returns its CPU and wall time. Throws when it fails. */
function measure(args: readonly string[], cwd = ROOT): { cpuMs: number; wallMs: number } {
  const before = childrenCpuMs() ?? 0
  const started = performance.now()
  const child = spawnSync(process.execPath, args, { cwd, encoding: 'utf8', maxBuffer: 256 << 20, env: { ...process.env, CI: 'true', NO_COLOR: '1' } })
  const wallMs = performance.now() - started
  if (child.status !== 0) throw new Error(`bench: node ${args.join(' ')} exited ${child.status}: ${child.stderr.slice(0, 2000)}`)
  return { cpuMs: (childrenCpuMs() ?? 0) - before, wallMs }
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[mid] ?? 0 : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2
}

/** The result of `runStartupBench`, or why it did not run. */
export type StartupBench = { skipped: string } | { rows: StartupRow[]; versionRatio: number; catalogRatio: number }

/** Measures the three items; `catalog: false` leaves out the (minutes-long) catalog run. */
export function runStartupBench(options: { catalog?: boolean } = {}): StartupBench {
  if (childrenCpuMs() === null) return { skipped: 'needs /proc (Linux) to read child CPU time' }
  if (!existsSync(BUILT_BIN)) return { skipped: `no built bin at ${BUILT_BIN}: run pnpm build first` }
  const sim: number[] = []
  const bare: number[] = []
  const simWall: number[] = []
  const bareWall: number[] = []
  measure([BUILT_BIN, '--version']) // warm the file cache once
  for (let i = 0; i < STARTUP_RUNS; i++) {
    const a = measure([BUILT_BIN, '--version'])
    const b = measure(['-e', '0'])
    sim.push(a.cpuMs)
    simWall.push(a.wallMs)
    bare.push(b.cpuMs)
    bareWall.push(b.wallMs)
  }
  const rows: StartupRow[] = [
    { name: 'sim --version (built bin)', cpuMs: median(sim), wallMs: median(simWall), runs: STARTUP_RUNS },
    { name: 'node -e 0', cpuMs: median(bare), wallMs: median(bareWall), runs: STARTUP_RUNS },
  ]
  const out = mkdtempSync(join(tmpdir(), 'sim-bench-startup-'))
  try {
    const smoke = measure([BUILT_BIN, 'run', 'scenarios/smoke/basic-pressure.yaml', '--out-dir', join(out, 'smoke')])
    rows.push({ name: 'sim run scenarios/smoke/basic-pressure.yaml', ...smoke, runs: 1 })
    let catalogRatio = Number.NaN
    if (options.catalog !== false) {
      const catalog = measure([BUILT_BIN, 'run', 'scenarios/**/*.yaml', '--out-dir', join(out, 'catalog')])
      rows.push({ name: "sim run 'scenarios/**/*.yaml' (the catalog)", ...catalog, runs: 1 })
      catalogRatio = catalog.cpuMs / 1000 / CATALOG_CPU_S_BEFORE
    }
    return { rows, versionRatio: median(sim) / median(bare), catalogRatio }
  } finally {
    rmSync(out, { recursive: true, force: true })
  }
}

/** The table and ratios `pnpm bench` prints. */
export function formatStartupRows(result: StartupBench): string {
  if ('skipped' in result) return `  skipped: ${result.skipped}`
  const lines = result.rows.map((r) => `  ${r.name.padEnd(46)} ${(r.cpuMs / 1000).toFixed(3).padStart(8)} s CPU  ${(r.wallMs / 1000).toFixed(2).padStart(7)} s wall  (${r.runs === 1 ? '1 run' : `median of ${r.runs}`})`)
  const version = result.versionRatio <= VERSION_RATIO_MAX ? 'ok' : 'OVER TARGET'
  lines.push(`  version ratio sim --version / node -e 0: ${result.versionRatio.toFixed(2)}x (target ≤ ${VERSION_RATIO_MAX}x) ${version}`)
  if (!Number.isNaN(result.catalogRatio)) {
    lines.push(`  catalog CPU now / before (${CATALOG_CPU_S_BEFORE} s): ${result.catalogRatio.toFixed(2)}x (goal ≤ 0.5x)`)
  }
  return lines.join('\n')
}
