/**
 * Checker benchmark (run by `bench/run.ts`, or alone: `tsx bench/check.bench.ts [--seed n] [--events n,n]
 * [--kinds compacting,growing] [--runs n] [--e2e no]`): `checkLog` (the programmatic API behind `sim check`) over a
 * generated seed-dialect JSONL log vs. a plain line-by-line `JSON.parse` loop (`readline` over a read stream)
 * over the same file. Each side runs in its own child
 * process so its peak RSS (`process.resourceUsage().maxRSS`) is its own; the end-to-end columns time both as
 * whole processes (the `sim check` CLI with its start-up). Issue #17 targets a throughput ratio ≥ 60% (issue #5
 * had 50%); design §6 wants memory that does not grow with log length beyond the live surface.
 */
import { spawnSync } from 'node:child_process'
import { createReadStream, createWriteStream, existsSync, mkdirSync, renameSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { CallId, TokenMeter, type LogEvent, type Measurement, type ToolCallBlock, type ToolSchema } from '@compaction-sim/core'
import { mulberry32, syntheticLog } from './synthetic-log.ts'

/** Log sizes measured by default, in events (the first shows whether RSS grows with length). */
export const CHECK_SIZES = [250_000, 1_000_000] as const
/**
 * Runs per side and size, interleaved. The fastest wall time of each side is reported (on a shared machine
 * noise only ever adds time), with the CPU time (user + system) of that run, and the largest peak RSS.
 */
export const CHECK_RUNS = 3
/** Generated logs measured by default. */
export const CHECK_KINDS: readonly CheckLogKind[] = ['compacting', 'growing']
/** The issue #17 target (issue #5 had 50%): checker throughput at least this fraction of the JSON.parse loop's. */
export const CHECK_RATIO_MIN = 0.6

/** One row: one generated log, both sides. */
export interface CheckBenchRow {
  kind: CheckLogKind
  /** Events in the log (the compacting log ends at a turn boundary, so it may run a little over the size asked). */
  events: number
  fileMiB: number
  parseMs: number
  checkMs: number
  parseCpuMs: number
  checkCpuMs: number
  /** Checker throughput over the JSON.parse loop's (parse ms / check ms, wall). */
  ratio: number
  /** The same over CPU time (less sensitive to other processes on the machine). */
  cpuRatio: number
  parseRssMiB: number
  checkRssMiB: number
  /** The checker found the generated log valid (it must: the generators write valid logs). */
  ok: boolean
  /**
   * End to end, whole processes timed by the parent (wall, fastest run): `node -e <the same parse loop>` and
   * the `sim check` CLI as a user runs it: the built bin (`node packages/sim/dist/cli/bin.js check --dialect seed`,
   * after `pnpm build`; from source through tsx when there is no build), so CLI start-up and module loading count. Null when not measured (`e2e: false`).
   */
  e2e: { parseMs: number; checkMs: number; ratio: number } | null
}

interface ChildResult {
  events: number
  ms: number
  cpuMs: number
  maxRssKiB: number
  ok: boolean
}

const SELF = fileURLToPath(import.meta.url)
/**
 * The generator's prune pairs shorten tool results with a bench-only rewrite (not §5.1 `pruneContent`) and
 * below the §3.1 default pressure, so the checker rightly reports INV-22/23/25 on them; the bench log leaves
 * them out, so both sides read a log the checker judges valid (the measured path is the no-violation one).
 */
const NO_PRUNES = Number.MAX_SAFE_INTEGER
/** Lines serialised per write while a generated log is written out. */
const WRITE_BATCH_LINES = 10_000

/** Options of `runCheckBench`. */
export interface CheckBenchOptions {
  seed: number
  sizes?: readonly number[]
  kinds?: readonly CheckLogKind[]
  runs?: number
  /** Also time both sides as whole processes (default true). */
  e2e?: boolean
}

/** The CLI the end-to-end side runs: the built bin when `pnpm build` has run, else the source bin through tsx. */
const BUILT_BIN = fileURLToPath(new URL('../packages/sim/dist/cli/bin.js', import.meta.url))
const CLI_ARGS: readonly string[] = existsSync(BUILT_BIN)
  ? [BUILT_BIN]
  : ['--import', 'tsx', '--conditions=source', fileURLToPath(new URL('../packages/sim/src/cli/bin.ts', import.meta.url))]
/** The parse loop of the `parse` child as a plain script (no tsx): the end-to-end baseline. */
const PARSE_SCRIPT = [
  "const { createReadStream } = require('node:fs'); const { createInterface } = require('node:readline');",
  '(async () => { let n = 0; for await (const line of createInterface({ input: createReadStream(process.argv[1]), crlfDelay: Infinity })) {',
  'const v = JSON.parse(line); if (v.seq !== undefined) n++ } process.stdout.write(`${n}\\n`) })()',
].join(' ')

/** Wall time of one whole process; throws when it exits with another status than `status`. */
function wholeProcessMs(args: readonly string[], status: number): number {
  const started = performance.now()
  const r = spawnSync(process.execPath, args, { encoding: 'utf8', maxBuffer: 1 << 24 })
  const ms = performance.now() - started
  if (r.status !== status) throw new Error(`check bench: ${args.slice(-4).join(' ')} exited ${r.status}: ${r.stderr}`)
  return ms
}

/** Measures both sides on a generated log of each kind and size. Logs are cached under the OS temp folder. */
export async function runCheckBench(options: CheckBenchOptions): Promise<CheckBenchRow[]> {
  const rows: CheckBenchRow[] = []
  for (const kind of options.kinds ?? CHECK_KINDS) {
    for (const size of options.sizes ?? CHECK_SIZES) {
      const file = await generatedLog(kind, options.seed, size)
      const parse: ChildResult[] = []
      const check: ChildResult[] = []
      for (let r = 0; r < (options.runs ?? CHECK_RUNS); r++) {
        parse.push(child('parse', file))
        check.push(child('check', file))
      }
      const events = parse[0]?.events ?? 0
      for (const x of [...parse, ...check]) {
        if (x.events !== events) throw new Error(`check bench: children disagree on the event count of ${file} (${events} vs ${x.events})`)
      }
      let e2e: CheckBenchRow['e2e'] = null
      if (options.e2e ?? true) {
        const parseMs: number[] = []
        const checkMs: number[] = []
        for (let r = 0; r < (options.runs ?? CHECK_RUNS); r++) {
          parseMs.push(wholeProcessMs(['-e', PARSE_SCRIPT, file], 0))
          checkMs.push(wholeProcessMs([...CLI_ARGS, 'check', '--dialect', 'seed', file], 0))
        }
        const pe = Math.min(...parseMs)
        const ce = Math.min(...checkMs)
        e2e = { parseMs: pe, checkMs: ce, ratio: pe / ce }
      }
      const p = fastest(parse)
      const c = fastest(check)
      rows.push({
        kind,
        events,
        fileMiB: statSync(file).size / 2 ** 20,
        parseMs: p.ms,
        checkMs: c.ms,
        parseCpuMs: p.cpuMs,
        checkCpuMs: c.cpuMs,
        ratio: p.ms / c.ms,
        cpuRatio: p.cpuMs / c.cpuMs,
        parseRssMiB: Math.max(...parse.map((x) => x.maxRssKiB)) / 1024,
        checkRssMiB: Math.max(...check.map((x) => x.maxRssKiB)) / 1024,
        ok: check.every((x) => x.ok),
        e2e,
      })
    }
  }
  return rows
}

/** Renders the rows as a table. */
export function formatCheckRows(rows: readonly CheckBenchRow[]): string {
  const header = [
    'log', 'events', 'MiB', 'JSON.parse ms (cpu)', 'check ms (cpu)', 'ratio (cpu)', 'parse RSS MiB', 'check RSS MiB', 'valid',
    'e2e parse ms', 'e2e sim check ms', 'e2e ratio',
  ]
  const pct = (x: number): string => `${(x * 100).toFixed(1)}%`
  const body = rows.map((r) => [
    r.kind, r.events.toLocaleString('en-US'), r.fileMiB.toFixed(0), `${r.parseMs.toFixed(0)} (${r.parseCpuMs.toFixed(0)})`,
    `${r.checkMs.toFixed(0)} (${r.checkCpuMs.toFixed(0)})`, `${pct(r.ratio)} (${pct(r.cpuRatio)})`, r.parseRssMiB.toFixed(0),
    r.checkRssMiB.toFixed(0), r.ok ? 'yes' : 'NO',
    r.e2e === null ? '-' : r.e2e.parseMs.toFixed(0), r.e2e === null ? '-' : r.e2e.checkMs.toFixed(0), r.e2e === null ? '-' : pct(r.e2e.ratio),
  ])
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((row) => (row[i] ?? '').length)))
  const line = (cells: readonly string[]): string => cells.map((c, i) => c.padStart(widths[i] ?? 0)).join('  ')
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...body.map(line)].join('\n')
}

/** Which generated log a row reads: the fold bench's growing surface, or one whose surface compaction keeps bounded. */
export type CheckLogKind = 'growing' | 'compacting'

async function generatedLog(kind: CheckLogKind, seed: number, size: number): Promise<string> {
  const folder = join(tmpdir(), 'compaction-sim-bench')
  mkdirSync(folder, { recursive: true })
  const file = join(folder, `check-${kind}-v3-${seed}-${size}.jsonl`)
  if (existsSync(file)) return file
  const events = kind === 'growing'
    ? syntheticLog({ seed, eventCount: size, pruneEveryEvents: NO_PRUNES })
    : await compactingLog(seed, size)
  const partial = `${file}.partial`
  const out = createWriteStream(partial)
  for (let i = 0; i < events.length; i += WRITE_BATCH_LINES) {
    const text = events.slice(i, i + WRITE_BATCH_LINES).map((e) => `${JSON.stringify(e)}\n`).join('')
    if (!out.write(text)) await new Promise<void>((resolve) => out.once('drain', () => resolve()))
  }
  await new Promise<void>((resolve, reject) => out.end((error?: Error | null) => (error ? reject(error) : resolve())))
  renameSync(partial, file)
  return file
}

const COMPACTING_ROUTE = { provider: 'mock', model: 'mock-128k', contextWindow: 128_000 }
const READ_TOOL: ToolSchema = {
  name: 'read',
  description: 'Read a UTF-8 text file from the workspace.',
  parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
}
const WORDS = ['the', 'test', 'fails', 'because', 'float', 'sum', 'compare', 'strict', 'helper', 'module', 'returns', 'value', 'expected']
/** Turns between manual compactions: enough that the surface stays far below the 128k route's threshold. */
const TURNS_PER_COMPACTION = 4

/**
 * A valid seed-dialect log of at least `size` events (it ends at a turn boundary, so it may run a little
 * over) whose live surface stays bounded: turns of 1–3 steps with tool rounds (tool outputs 200–4,000
 * characters), and every few turns a manual `compactNow` between turns (§3.7, R = 0) that replaces all but
 * the newest unit with a checkpoint; the next turn logs a `series` header (§10.3).
 */
async function compactingLog(seed: number, size: number): Promise<LogEvent[]> {
  // Loaded here, not at the top: the measured child processes import this file and must not hold the fixtures.
  const { LogBuilder } = await import('@compaction-sim/fixtures')
  /** A `LogBuilder` whose meter folds incrementally (the fixture builder re-meters the whole log per query). */
  class IncrementalBuilder extends LogBuilder {
    private meter: TokenMeter | undefined
    override measure(): Measurement {
      this.meter ??= new TokenMeter({ events: this.events }, { dialect: this.dialect })
      return this.meter.measure()
    }
  }
  const random = mulberry32(seed)
  const int = (lo: number, hi: number): number => lo + Math.floor(random() * (hi - lo + 1))
  const prose = (charsMin: number, charsMax: number): string => {
    const chars = int(charsMin, charsMax)
    let out = ''
    while (out.length < chars) out += `${WORDS[int(0, WORDS.length - 1)] ?? 'x'} `
    return out.trimEnd()
  }
  const b = new IncrementalBuilder({ route: COMPACTING_ROUTE, tools: [READ_TOOL] })
  let ids = 0
  let seriesDue = false
  for (let turn = 1; b.events.length < size; turn++) {
    b.turnStart()
    b.stepStart()
    if (turn === 1) b.system('You are a careful test agent. Use tools when needed.')
    b.user([{ type: 'text', text: prose(20, 200) }], `m-u${++ids}`)
    if (turn === 1) {
      b.header('initial')
      b.context()
    } else if (seriesDue) {
      b.header('series')
      seriesDue = false
    }
    const steps = int(1, 3)
    for (let step = 1; step <= steps; step++) {
      if (step > 1) b.stepStart()
      if (step < steps) {
        const calls: ToolCallBlock[] = Array.from({ length: int(1, 2) }, () => {
          const id = `call_${++ids}`
          return { type: 'tool-call', id: CallId(id), name: 'read', arguments: JSON.stringify({ path: `src/file-${id}.ts` }) }
        })
        b.reply([{ type: 'text', text: prose(40, 400) }, ...calls], `m-a${++ids}`)
        for (const call of calls) {
          b.call(call)
          b.result(call.id, prose(200, 4000), `m-t${++ids}`)
        }
      } else b.reply([{ type: 'text', text: prose(40, 400) }], `m-a${++ids}`)
      b.stepEnd()
    }
    b.turnEnd()
    if (turn % TURNS_PER_COMPACTION === 0) {
      const shadowed = b.selectRange(0)
      if (shadowed !== null) {
        b.compact({ compactionId: `cmp-${turn}`, sourceCommandId: `cmd-${turn}`, turn: null, shadowed, summaryText: prose(200, 600) })
        seriesDue = true
      }
    }
  }
  return b.events
}

function child(mode: 'parse' | 'check', file: string): ChildResult {
  const r = spawnSync(process.execPath, ['--conditions=source', '--import', 'tsx', SELF, '--child', mode, file], { encoding: 'utf8', maxBuffer: 1 << 20 })
  if (r.status !== 0) throw new Error(`check bench child (${mode}) exited ${r.status}: ${r.stderr}`)
  return JSON.parse(r.stdout) as ChildResult
}

function fastest(runs: readonly ChildResult[]): ChildResult {
  return runs.reduce((a, b) => (b.ms < a.ms ? b : a))
}

/** The measured side of one child process: reads `file` and prints one JSON `ChildResult` on stdout. */
async function childMain(mode: string, file: string): Promise<void> {
  let events = 0
  let ok = true
  // `checkLog`, the programmatic API behind `sim check` (the CLI adds argument parsing and printing, and loads
  // every other command), is loaded — and compiled by tsx — before the clock starts, and only by the check side.
  const checkLog = mode === 'check' ? (await import('../packages/sim/src/checker/run.ts')).checkLog : null
  const started = performance.now()
  const cpuStarted = process.cpuUsage()
  if (mode === 'parse') {
    const lines = createInterface({ input: createReadStream(file), crlfDelay: Infinity })
    for await (const line of lines) {
      const value = JSON.parse(line) as { seq?: unknown }
      if (value.seq !== undefined) events++
    }
  } else {
    const result = await (checkLog as NonNullable<typeof checkLog>)(file, { dialect: 'seed' })
    if (result.kind !== 'report') throw new Error(`check bench: ${result.error.message}`)
    events = result.events
    ok = result.ok
  }
  const ms = performance.now() - started
  const cpu = process.cpuUsage(cpuStarted)
  const cpuMs = (cpu.user + cpu.system) / 1000
  process.stdout.write(`${JSON.stringify({ events, ms, cpuMs, maxRssKiB: process.resourceUsage().maxRSS, ok } satisfies ChildResult)}\n`)
}

if (process.argv[1] === SELF) {
  const { values, positionals } = parseArgs({
    args: process.argv.slice(2),
    options: {
      child: { type: 'string' }, seed: { type: 'string', default: '1' }, events: { type: 'string' }, runs: { type: 'string' },
      kinds: { type: 'string' }, e2e: { type: 'string', default: 'yes' },
    },
    allowPositionals: true,
    strict: true,
  })
  if (values.child !== undefined) await childMain(values.child, positionals[0] ?? '')
  else {
    const sizes = values.events?.split(',').map(Number)
    const kinds = values.kinds?.split(',') as CheckLogKind[] | undefined
    const rows = await runCheckBench({
      seed: Number(values.seed), ...(sizes ? { sizes } : {}), ...(kinds ? { kinds } : {}),
      ...(values.runs ? { runs: Number(values.runs) } : {}), e2e: values.e2e !== 'no',
    })
    process.stdout.write(`${formatCheckRows(rows)}\n`)
  }
}
