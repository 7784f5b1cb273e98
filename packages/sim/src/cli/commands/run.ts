/**
 * `sim run <files|folders|globs...>`: runs scenarios against the reference subject and the mock provider (a
 * thin shell over `runScenarios`). A folder stands for the YAML files under it; `--filter <regex>` (scenario
 * names) and `--tag <t>` (any of the tags) select; `--bail [n]` stops after n failures and reports the rest
 * as skipped. Defaults for subject, reporters, out-dir and seed may come from the working directory's config
 * (`run-config.ts`); flags override it. Always writes `report.json`, `report.md` and `junit.xml` into the
 * output folder (default `reports/<run-id>/`), and `index.html` with `--reporter html`. Output streams as each
 * scenario finishes (`run-stream.ts`): stdout carries the chosen reporters (pretty by default, streamed;
 * `json` is exactly the report); stderr carries the seed, the summary when pretty is not chosen, and at the
 * end every failure again with its `Replay: <command>` line. Exit 0 when every scenario passed or was
 * skipped, 1 when one failed, 2 for an input error (bad flag or config, no file matched or selected, an
 * out-dir that is a file, a schema-invalid scenario named by `file:line:column`), 3 for a bug of sim.
 * `--record` (issue #20) lets upstream summarizers reach their URL and store what the cassette lacks beside each
 * scenario; without it they replay the cassette and a missing entry is an input error (exit 2).
 */
import { statSync } from 'node:fs'
import { mkdir, writeFile } from 'node:fs/promises'
import { isAbsolute, join, resolve as resolvePath } from 'node:path'
import { performance } from 'node:perf_hooks'
import type { Argv, CommandModule } from 'yargs'
import { renderHtml, renderJunit, renderMarkdown, validateRunReport } from '../../report/index.ts'
import type { RunReport, ScenarioReport } from '../../report/types.ts'
import { expandGlob, isGlob } from '../../run/globs.ts'
import { displayPath, runIdOf, runScenarios, seedsRunIdOf, TOOL_VERSION } from '../../run/run-scenario.ts'
import { runSeeds } from '../../run/run-seeds.ts'
import { seedFolder } from '../../report/merge.ts'
import { seedsText } from '../../report/text.ts'
import { defaultWorkers } from '../../sweep/pool.ts'
import { loadScenario } from '../../scenario/load.ts'
import { ExitCode, UsageError } from '../exit-codes.ts'
import type { CommandContext } from '../context.ts'
import { subjectFromFlag, subjectSpecs } from '../subject-flag.ts'
import { writeGithubReport } from '../../report/github.ts'
import { inShard, parseShard } from '../../sweep/shard.ts'
import { parseIntegerFlag, parseSeedFlag, parseSeedsFlag } from '../flags.ts'
import { checkOutDir } from '../out-dir.ts'
import { plural } from '../../plural.ts'
import { describeRunConfig, loadRunConfig, REPORTERS, type Reporter } from '../run-config.ts'
import { createRunStream } from '../run-stream.ts'
import { createSeedsStream } from '../seeds-stream.ts'

export { REPORTERS, type Reporter }

/** Parsed arguments of `sim run` (flags only: the config file's values are applied in the handler). */
export interface RunArgs {
  files: string[]
  seed: number | undefined
  reporter: Reporter[] | undefined
  'out-dir': string | undefined
  timings: boolean
  subject: string | string[] | undefined
  shard: string | undefined
  filter: RegExp | undefined
  tag: string[] | undefined
  bail: number | undefined
  seeds: number[] | undefined
  workers: number | undefined
  record: boolean
}

/** Bound on the files one directory argument may expand to. */
export const DIRECTORY_FILES_MAX = 100_000

/**
 * The scenario files named by `args`, in order, each once: a glob expands to its matches (sorted), a directory
 * to every `*.yaml`/`*.yml` file under it (recursively, sorted; dot-folders and node_modules skipped), a plain
 * path is kept as given. Throws `UsageError` for a glob or directory that yields nothing.
 */
export function scenarioFiles(args: readonly string[], cwd: string): string[] {
  const files: string[] = []
  for (const arg of args) {
    if (isGlob(arg)) {
      const matched = expandGlob(arg, cwd)
      if (matched.length === 0) throw new UsageError(`no file matches ${arg}`)
      files.push(...matched)
    } else if (isDirectory(resolvePath(cwd, arg))) {
      const base = arg.replace(/\/+$/, '') || '/'
      const escaped = base.replace(/[*?[]/g, '[$&]')
      const matched = [...new Set([...expandGlob(`${escaped}/**/*.yaml`, cwd), ...expandGlob(`${escaped}/**/*.yml`, cwd)])].sort()
      if (matched.length === 0) throw new UsageError(`no scenario file (*.yaml, *.yml) under ${arg}`)
      if (matched.length > DIRECTORY_FILES_MAX) throw new UsageError(`${arg} holds more than ${DIRECTORY_FILES_MAX} YAML files`)
      files.push(...matched)
    } else files.push(arg)
  }
  return [...new Set(files)]
}

/** What `--filter` and `--tag` select: a name pattern and tags (any of them), each optional. */
export interface ScenarioSelection {
  filter?: RegExp
  tags?: readonly string[]
}

/**
 * The files of `files` whose scenario matches `selection`: its `name` matches `filter` and (when tags are
 * given) it carries at least one of `tags`. A file that cannot be loaded is kept, so its error is reported
 * by the run instead of being filtered away. Order is kept.
 */
export async function selectScenarios(files: readonly string[], selection: ScenarioSelection): Promise<string[]> {
  const { filter, tags = [] } = selection
  if (filter === undefined && tags.length === 0) return [...files]
  const kept: string[] = []
  for (const file of files) {
    let scenario
    try {
      scenario = await loadScenario(file)
    } catch {
      kept.push(file) // unloadable: kept, so the run reports its input error
      continue
    }
    if (filter !== undefined && !filter.test(scenario.name)) continue
    if (tags.length > 0 && !(scenario.tags ?? []).some((t) => tags.includes(t))) continue
    kept.push(file)
  }
  return kept
}

/** The exit code of a finished run: 3 internal error, else 2 input error, else 1 failed, else 0. */
export function runExitCode(report: RunReport): ExitCode {
  const errors = report.scenarios.filter((s) => s.status === 'error')
  if (errors.some((s) => s.errorKind !== 'input')) return ExitCode.Internal
  if (errors.length > 0) return ExitCode.Usage
  if ((report.differential?.summary.unexplained ?? 0) > 0) return ExitCode.Failed
  return report.summary.failed > 0 ? ExitCode.Failed : ExitCode.Ok
}

/** The `run` command module. */
export function runCommand(ctx: CommandContext): CommandModule<object, RunArgs> {
  const cwdOf = (): string => ctx.out.io.cwd ?? process.cwd()
  return {
    command: 'run <files..>',
    describe: 'Run scenarios against a mocked provider and check them',
    builder: (yargs: Argv) => yargs
      .positional('files', {
        type: 'string', array: true, demandOption: true,
        describe: 'Scenario YAML files, folders (every *.yaml under them) or quoted globs (e.g. "scenarios/**/*.yaml")',
      })
      .option('seed', { type: 'string', describe: 'Seed (uint32) for every scenario instead of each file\'s own' })
      .coerce('seed', (value: unknown) => (value === undefined ? undefined : parseSeedFlag('--seed', value)))
      .option('seeds', {
        type: 'string',
        describe: 'Run every scenario once per seed: a range a..b or a comma list (1..20, 1,5,9); reports every failing seed with its replay',
      })
      .coerce('seeds', (value: unknown) => (value === undefined ? undefined : parseSeedsFlag('--seeds', value)))
      .option('workers', { type: 'string', describe: 'Worker threads of --seeds (default: the available cores; 1 runs in this process)' })
      .coerce('workers', (value: unknown) => (value === undefined ? undefined : parseIntegerFlag('--workers', value, 1, WORKERS_MAX)))
      .option('reporter', {
        choices: REPORTERS, array: true,
        describe: 'Output formats, repeatable (default pretty); html writes index.html',
      })
      .option('out-dir', { type: 'string', describe: 'Where logs, manifests, captures and reports go (default reports/<run-id>/)' })
      .option('filter', { type: 'string', describe: 'Only scenarios whose name matches this regular expression' })
      .coerce('filter', (value: unknown) => (value === undefined ? undefined : parseFilter(value)))
      .option('tag', { type: 'string', array: true, describe: 'Only scenarios carrying this tag (repeatable or a comma list: any of them)' })
      .coerce('tag', (value: unknown) => (value === undefined ? undefined : parseTags(value)))
      .option('bail', { type: 'string', describe: 'Stop after n failed or errored scenarios (default 1); the rest are reported as skipped' })
      .coerce('bail', (value: unknown) => (value === undefined ? undefined : parseBail(value)))
      .option('timings', { type: 'boolean', default: false, describe: 'Add wall-clock durations to the report (no longer byte-stable)' })
      .option('record', {
        type: 'boolean', default: false,
        describe: 'Upstream summarizers (summarizer: {upstream: …}) call their URL for the compaction requests '
          + '<scenario>.cassette.json lacks and store the replies there; without it runs replay the cassette offline '
          + 'and a missing entry exits 2',
      })
      .option('subject', {
        type: 'string',
        describe: 'Who runs the sessions: reference (default), dsh (the official engine 0.1.0-rc.8) or module:<path>; '
          + 'a comma list or repeated flag runs each scenario under each and adds a differential',
      })
      .option('shard', {
        type: 'string', describe: 'Run slice i of n of the scenario list (i/n, a stable hash of each path); merge with sim report merge',
      })
      .example('$0 run "scenarios/**/*.yaml"', 'Run the whole catalog (quote the glob; sim expands ** itself)')
      .example('$0 run scenarios --filter "^fault-0" --bail', 'Scenarios named fault-0…, stopping at the first failure')
      .example('$0 run scenarios/smoke/basic-pressure.yaml --seed 42 --reporter json', 'One scenario, one seed, the report on stdout')
      .example('$0 run "scenarios/**/*.yaml" --seeds 1..20', 'Every scenario under seeds 1 to 20, in parallel workers')
      .example('OPENAI_API_KEY=… $0 run my-session.yaml --record', 'Record a real summarizer once into my-session.cassette.json')
      .example('$0 run my-session.yaml', 'Replay it: offline, byte-identical report')
      .epilogue(`${describeRunConfig(cwdOf())}\nA config sets defaults for subject, reporters, outDir and seed; flags win.`) as
        Argv<RunArgs>,
    handler: async (args) => {
      const out = ctx.out
      const cwd = cwdOf()
      const abs = (p: string): string => (isAbsolute(p) || cwd === process.cwd() ? p : resolvePath(cwd, p))
      const loaded = loadRunConfig(cwd)
      const config = loaded?.config ?? {}
      checkSeedsFlags(args)
      // --seeds replaces the config's seed, as --seed would.
      const seed = args.seeds === undefined ? args.seed ?? config.seed : undefined
      const reporters = new Set<Reporter>(args.reporter ?? config.reporters ?? ['pretty'])
      const listed = scenarioFiles(args.files, cwd).map(abs)
      const selection = {
        ...(args.filter === undefined ? {} : { filter: args.filter }), ...(args.tag === undefined ? {} : { tags: args.tag }),
      }
      const allFiles = await selectScenarios(listed, selection)
      if (allFiles.length === 0) {
        const by = [args.filter === undefined ? '' : `--filter ${args.filter.source}`, args.tag === undefined ? '' : `--tag ${args.tag.join(',')}`]
        throw new UsageError(`no scenario matches ${by.filter((b) => b !== '').join(' and ')} (${plural(listed.length, 'scenario')} listed)`)
      }
      // --shard i/n (issue #10): a stable slice of the list; the report records the whole list for `sim report merge`.
      const shard = args.shard === undefined ? undefined : parseShard(args.shard)
      const files = shard === undefined ? allFiles : inShard(allFiles, (f) => f, shard)
      const runId = args.seeds === undefined ? runIdOf(allFiles, seed ?? null) : seedsRunIdOf(allFiles, args.seeds)
      const outDir = args['out-dir'] ?? config.outDir
        ?? join('reports', shard === undefined ? runId : `${runId}-shard-${shard.index}-of-${shard.count}`)
      checkOutDir(outDir, cwd)
      const configNote = loaded === null ? '' : `, config ${loaded.source}`
      const seedNote = args.seeds === undefined ? `seed ${seed ?? 'of each scenario'}` : `${plural(args.seeds.length, 'seed')} (${seedsText(args.seeds)})`
      out.info(`sim run: ${plural(files.length, 'scenario')}, ${seedNote}, output ${outDir}${configNote}`)
      const specs = subjectSpecs(args.subject ?? config.subject)
      const subjects = []
      for (const spec of specs) {
        try {
          subjects.push(await subjectFromFlag(spec, cwd))
        } catch (err) {
          if (args.subject !== undefined || loaded === null || !(err instanceof UsageError)) throw err
          throw new UsageError(`${loaded.source}: subject: ${err.message.replace(/^--subject: /, '')}`, { cause: err })
        }
      }
      const subject = subjects.length === 1 ? subjects[0] : undefined
      const specOf = new Map(subjects.map((s, i) => [s.name, specs[i]]))
      // A non-reference subject's replay names it (the scenario alone would run the reference core).
      const withSubjectReplay = (s: ScenarioReport): void => {
        const spec = specOf.get(s.subject)
        if (spec !== undefined && spec !== 'reference') s.replay += ` --subject ${spec}`
      }
      const ci = !out.io.isTTY || isSet(out.io.env['CI'])
      if (args.seeds !== undefined) {
        const workers = args.workers ?? defaultWorkers()
        ctx.exitCode = await runSeedsCommand(files, {
          out, cwd, outDir, dir: abs(outDir), seeds: args.seeds, workers, subject: specs[0] ?? null, reporters, ci,
          timings: args.timings, withReplay: withSubjectReplay,
        })
        return
      }
      const stream = createRunStream({ out, pretty: reporters.has('pretty'), ci, now: () => performance.now() })
      stream.start({ tool: { name: 'compaction-sim', version: TOOL_VERSION }, runId: runIdOf(files.map((f) => displayPath(f, cwd)), seed ?? null), seed: seed ?? null })
      const report = await runScenarios(files, {
        outDir: abs(outDir), cwd, ...(seed === undefined ? {} : { seed }), timings: args.timings, ...(subject === undefined ? {} : { subject }),
        ...(subjects.length > 1 ? { subjects } : {}),
        ...(args.bail === undefined ? {} : { bailAfter: args.bail }),
        ...(args.record ? { record: true, env: out.io.env } : {}),
        onScenario: (s, done, total) => {
          withSubjectReplay(s)
          stream.scenario(s, done, total)
        },
      })
      if (shard !== undefined) report.shard = { index: shard.index, count: shard.count, files: allFiles.map((f) => displayPath(f, cwd)) }
      const written = await writeRunReports(report, { out, dir: abs(outDir), shownDir: outDir, reporters })
      stream.finish(report, written)
      ctx.exitCode = runExitCode(report)
    },
  }
}

/** Most worker threads `--workers` accepts. */
export const WORKERS_MAX = 256

/** Flags `--seeds` cannot be combined with, and `--workers` without `--seeds`: each a `UsageError` naming both. */
function checkSeedsFlags(args: RunArgs): void {
  if (args.seeds === undefined) {
    if (args.workers !== undefined) throw new UsageError('--workers applies to --seeds runs only')
    return
  }
  if (args.seed !== undefined) throw new UsageError('--seeds cannot be combined with --seed (name the seed in --seeds)')
  if (args.shard !== undefined) throw new UsageError('--seeds cannot be combined with --shard')
  if (args.bail !== undefined) throw new UsageError('--seeds cannot be combined with --bail')
  if (args.record) throw new UsageError('--seeds cannot be combined with --record (record once with one seed, then replay under many)')
  if (subjectSpecs(args.subject).length > 1) throw new UsageError('--seeds runs one subject: --subject names several')
}

/** Where `writeRunReports` writes and what it prints. */
interface ReportSinks {
  out: CommandContext['out']
  /** The output folder (absolute) and as the user named it. */
  dir: string
  shownDir: string
  reporters: ReadonlySet<Reporter>
}

/**
 * Checks `report` against its schema, writes `report.json`, `report.md` and `junit.xml` (and `index.html` with
 * `--reporter html`) into the output folder and the chosen stdout formats (pretty streamed already); returns the
 * lines naming what was written.
 */
async function writeRunReports(report: RunReport, sinks: ReportSinks): Promise<string[]> {
  const { out, dir, shownDir, reporters } = sinks
  const problems = validateRunReport(report)
  if (problems.length > 0) throw new Error(`the run report does not match its schema: ${problems.slice(0, 3).join('; ')}`)
  await mkdir(dir, { recursive: true })
  await writeFile(join(dir, 'report.json'), `${JSON.stringify(report, null, 2)}\n`)
  await writeFile(join(dir, 'report.md'), renderMarkdown(report))
  await writeFile(join(dir, 'junit.xml'), renderJunit(report))
  for (const reporter of reporters) {
    switch (reporter) {
      case 'pretty': break // streamed as the run went
      case 'json': out.json(report); break
      case 'markdown': out.io.stdout.write(renderMarkdown(report)); break
      case 'junit': out.io.stdout.write(renderJunit(report)); break
      case 'html': await writeFile(join(dir, 'index.html'), renderHtml(report)); break
      case 'github': writeGithubReport(report, { stdout: out.io.stdout, env: out.io.env }); break
      default: break
    }
  }
  const written = [`reports: ${join(shownDir, 'report.json')}, report.md, junit.xml${reporters.has('html') ? ', index.html' : ''}`]
  if (reporters.has('html')) written.push(`html report: ${join(shownDir, 'index.html')}`)
  return written
}

/** What the `--seeds` branch of the handler needs. */
interface SeedsCommandOptions {
  out: CommandContext['out']
  cwd: string
  /** The output folder as the user named it, and absolute. */
  outDir: string
  dir: string
  seeds: readonly number[]
  workers: number
  subject: string | null
  reporters: ReadonlySet<Reporter>
  ci: boolean
  timings: boolean
  /** Appends `--subject <spec>` to a non-reference entry's replay. */
  withReplay: (s: ScenarioReport) => void
}

/**
 * `sim run --seeds` (issue #21): every file under every seed on the worker pool (`run/run-seeds.ts`). Writes each
 * seed's `report.json` into `seed-<k>/` beside its artifacts, and the merged report (one row per scenario and
 * seed) into the output folder with the usual formats. Returns the exit code (`runExitCode` of the merged report).
 */
async function runSeedsCommand(files: readonly string[], options: SeedsCommandOptions): Promise<ExitCode> {
  const { out, cwd, seeds } = options
  const stream = createSeedsStream({ out, pretty: options.reporters.has('pretty'), ci: options.ci, now: () => performance.now() })
  const shown = files.map((f) => displayPath(f, cwd))
  stream.start({ tool: { name: 'compaction-sim', version: TOOL_VERSION }, runId: seedsRunIdOf(shown, seeds), seed: null, seeds: [...seeds] })
  const started = performance.now()
  const run = await runSeeds(files, {
    seeds, workers: options.workers, outDir: options.dir, cwd, subject: options.subject, timings: options.timings,
    onFile: (rows, i) => {
      for (const row of rows) options.withReplay(row)
      stream.file(rows, i + 1, files.length)
    },
  })
  for (const { seed, report } of run.perSeed) {
    const problems = validateRunReport(report)
    if (problems.length > 0) throw new Error(`the report of seed ${seed} does not match its schema: ${problems.slice(0, 3).join('; ')}`)
    await writeFile(join(options.dir, seedFolder(seed), 'report.json'), `${JSON.stringify(report, null, 2)}\n`)
  }
  const merged = run.merged
  if (options.timings) merged.timings = { ms: Math.round(performance.now() - started) }
  const written = await writeRunReports(merged, { out, dir: options.dir, shownDir: options.outDir, reporters: options.reporters })
  written.push(`per seed: ${join(options.outDir, `${seedFolder(seeds[0] ?? 0)}/report.json`)}${seeds.length > 1 ? ` … ${seedFolder(seeds.at(-1) ?? 0)}/report.json` : ''}`)
  stream.finish(merged, written)
  return runExitCode(merged)
}

/** `--filter`: a JavaScript regular expression (no flags) tested against each scenario's name. */
function parseFilter(value: unknown): RegExp {
  const text = String(value)
  try {
    return new RegExp(text)
  } catch (err) {
    throw new UsageError(`--filter: invalid regular expression ${JSON.stringify(text)}: ${(err as Error).message}`)
  }
}

/** `--tag a --tag b,c` → `['a', 'b', 'c']`; an empty entry is refused. */
function parseTags(value: unknown): string[] {
  const tags = (Array.isArray(value) ? value : [value]).flatMap((v) => String(v).split(',')).map((t) => t.trim())
  if (tags.some((t) => t === '')) throw new UsageError(`--tag: empty tag in ${JSON.stringify(value)}`)
  return [...new Set(tags)]
}

/** `--bail` alone means 1; `--bail n` needs n ≥ 1. */
function parseBail(value: unknown): number {
  if (value === '' || value === true) return 1
  const text = String(value)
  if (!/^\d+$/.test(text)) {
    throw new UsageError(`--bail: expected a positive integer, got ${JSON.stringify(text)} (put --bail after the files, or write --bail=1)`)
  }
  return parseIntegerFlag('--bail', text, 1, Number.MAX_SAFE_INTEGER)
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory()
  } catch {
    return false // missing or unreadable: kept as a plain path, whose run reports the problem
  }
}

function isSet(value: string | undefined): boolean {
  return value !== undefined && value !== '' && value !== '0' && value.toLowerCase() !== 'false'
}
