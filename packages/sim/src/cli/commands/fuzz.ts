/**
 * `sim fuzz [--seed n] [--runs N] [--swarm] [--subject reference|dsh|module:path] [--require-paths a,b]`:
 * model-based fuzzing (issue #8), a thin shell over `runFuzz`. stderr: the seed first, the drawn swarm
 * options, progress, and on a finding its description, the shrunk commands, the scenario written under
 * `scenarios/regressions/` and the replay commands. stdout: the path-coverage table (or `--json`: one
 * document). Exit 0 nothing found and every required path reached, 1 a finding (an invariant, a liveness
 * violation or a model disagreement) or a required path not reached, 2 a bad flag, 3 a bug of sim.
 */
import { performance } from 'node:perf_hooks'
import type { Argv, CommandModule } from 'yargs'
import { FAULT_KINDS, FULL_MIX, type FaultKindName } from '../../fuzz/arbitraries.ts'
import { describeMix, PATH_IDS, runFuzz, type FuzzOptions, type FuzzResult } from '../../fuzz/fuzz.ts'
import { PATH_DEFINITIONS } from '../../metrics/paths.ts'
import { runScenario } from '../../run/run-scenario.ts'
import type { Subject, SubjectFeature } from '../../subjects/types.ts'
import { ExitCode, UsageError } from '../exit-codes.ts'
import type { CommandContext } from '../context.ts'
import { subjectFromFlag } from '../subject-flag.ts'
import { parseIntegerFlag, parseSeedFlag } from '../flags.ts'
import { plural } from '../../plural.ts'

/** Parsed arguments of `sim fuzz`. */
export interface FuzzArgs {
  seed: number | undefined
  runs: number
  swarm: boolean
  subject: string
  'require-paths': string | undefined
  'max-commands': number
  'regressions-dir': string
  json: boolean
  'replay-run': number | undefined
  path: string | undefined
  'replay-path': string | undefined
}

/** The default seed (printed; pass `--seed` to vary it). */
export const DEFAULT_FUZZ_SEED = 20261130

/** Fuzz kinds a subject without a feature cannot run (its scenarios would be skipped). */
const KINDS_NEEDING: ReadonlyArray<[SubjectFeature, FaultKindName]> = [
  ['imageOffload', 'image-offload'], ['manualCompaction', 'compact-now'], ['explicitRegion', 'compact-region'],
]

/** The `fuzz` command module. */
export function fuzzCommand(ctx: CommandContext): CommandModule<object, FuzzArgs> {
  return {
    command: 'fuzz',
    describe: 'Model-based fuzzing: random sessions, faults, shrinking to a scenario',
    builder: (yargs: Argv) => yargs
      .option('seed', { type: 'string', describe: `Root seed, uint32 (default ${DEFAULT_FUZZ_SEED})` })
      .coerce('seed', (value: unknown) => (value === undefined ? undefined : parseSeedFlag('--seed', value)))
      .option('runs', { type: 'string', default: '100', describe: 'Sessions to generate' })
      .coerce('runs', (value: unknown) => parseIntegerFlag('--runs', value, 1, Number.MAX_SAFE_INTEGER))
      .option('swarm', { type: 'boolean', default: false, describe: 'Draw the fault kinds and weights of each run from the seed' })
      .option('subject', { type: 'string', default: 'reference', describe: 'reference (in-process), dsh, or module:<path>' })
      .option('require-paths', { type: 'string', describe: 'Comma-separated path ids that must be reached (exit 1 otherwise)' })
      .option('max-commands', { type: 'string', default: '60', describe: 'Commands per session, at most' })
      .coerce('max-commands', (value: unknown) => parseIntegerFlag('--max-commands', value, 1, Number.MAX_SAFE_INTEGER))
      .option('regressions-dir', { type: 'string', default: 'scenarios/regressions', describe: 'Where a shrunk failure is written' })
      .option('json', { type: 'boolean', default: false, describe: 'Print one JSON document' })
      .option('replay-run', { type: 'string', describe: 'With --swarm: the 1-based run to replay' })
      .coerce('replay-run', (value: unknown) => (value === undefined ? undefined : parseIntegerFlag('--replay-run', value, 1, Number.MAX_SAFE_INTEGER)))
      .option('path', { type: 'string', describe: 'fast-check path of a printed failure (replay)' })
      .option('replay-path', { type: 'string', describe: 'fast-check command replayPath of a printed failure (replay)' })
      .example('$0 fuzz --swarm --runs 1000', 'Swarm-fuzz the reference core')
      .example('$0 fuzz --require-paths summary-commit,prune-only-relief', 'Fail unless these paths are reached') as Argv<FuzzArgs>,
    handler: async (args) => {
      const out = ctx.out
      const seed = args.seed ?? DEFAULT_FUZZ_SEED
      const required = requiredPaths(args['require-paths'])
      out.info(`sim fuzz: seed ${seed}, ${plural(args.runs, 'run')}${args.swarm ? ', swarm' : ''}, subject ${args.subject}`)
      const options: FuzzOptions = {
        seed, runs: args.runs, swarm: args.swarm, mix: FULL_MIX, maxCommands: args['max-commands'], regressionsDir: args['regressions-dir'],
        log: (line) => out.info(line),
        runScenarioFile: (file, outDir) => runScenario(file, { outDir }),
      }
      if (args.subject !== 'reference') {
        const subject = await subjectFromFlag(args.subject, process.cwd())
        const excludes = excludedKinds(subject)
        out.info(`subject ${subject.name}: sessions replay as scenarios; left out of the mix: ${excludes.join(', ') || 'nothing'}`)
        options.scenarioSubject = Object.assign(Object.create(subject) as Subject, { fuzzExcludes: excludes })
        // Route-declared image prices are seed-only like image offload (D-09, D-12): left out with it.
        if (excludes.includes('image-offload')) options.imageTokens = false
        options.runScenarioFile = (file, outDir) => runScenario(file, { outDir, subject })
      }
      if (args.path !== undefined || args['replay-path'] !== undefined) {
        if (args.path === undefined || args['replay-path'] === undefined) throw new UsageError('--path and --replay-path go together')
        options.replay = { run: args['replay-run'] ?? 1, path: args.path, replayPath: args['replay-path'] }
      }
      const started = performance.now()
      const result = await runFuzz(options)
      const seconds = ((performance.now() - started) / 1000).toFixed(1)
      const missing = required.filter((id) => (result.paths.find((p) => p.path === id)?.reached ?? 0) === 0)
      if (args.json) out.json({ ...result, swarm: result.swarm?.length ?? null, missingPaths: missing, seconds: Number(seconds) })
      else out.io.stdout.write(coverageTable(result))
      const reached = result.paths.filter((p) => p.reached > 0).length
      out.info(`${plural(result.sessions, 'session')} in ${seconds} s, seed ${seed}; ${reached} of ${result.paths.length} paths reached` +
        (result.skipped > 0 ? `; ${plural(result.skipped, 'session')} skipped by the subject` : ''))
      const f = result.failure
      if (f !== null) {
        out.error(`${f.liveness ? 'LIVENESS violation' : 'finding'}: ${f.description}`)
        const mix = result.swarm === null ? '' : `, mix ${describeMix(f.mix)}`
        out.info(`shrunk to ${plural(f.commands.length, 'command')} (run ${f.run}${mix}): ${f.commands.join(', ')}`)
        if (f.scenarioFile !== null) {
          const ids = f.replay === null || f.replay.invariantIds.length === 0 ? '' : `, ${f.replay.invariantIds.join(', ')}`
          out.info(`scenario: ${f.scenarioFile}${f.replay === null ? '' : ` (sim run: ${f.replay.status}${ids})`}`)
          out.info(`Replay: pnpm sim run ${f.scenarioFile}`)
        }
        if (f.scenarioRefusal !== null) out.info(`no scenario: ${f.scenarioRefusal}`)
        out.info(`seed ${f.seed}, fast-check path ${f.path}, replayPath ${f.replayPath}`)
        const flags = [`--seed ${seed}`, `--runs ${args.runs}`, ...(args.swarm ? ['--swarm'] : []),
          ...(args.subject === 'reference' ? [] : [`--subject ${args.subject}`]),
          ...(result.swarm === null ? [] : [`--replay-run ${f.run}`]),
          `--path '${f.path}'`, `--replay-path '${f.replayPath}'`]
        out.info(`Replay: pnpm sim fuzz ${flags.join(' ')}`)
      }
      if (missing.length > 0) out.error(`required ${missing.length === 1 ? 'path' : 'paths'} not reached: ${missing.join(', ')}`)
      ctx.exitCode = f !== null || missing.length > 0 ? ExitCode.Failed : ExitCode.Ok
    },
  }
}

/** The `--require-paths` ids, validated against the coverage table (an unknown id is a usage error). */
export function requiredPaths(value: string | undefined): string[] {
  if (value === undefined) return []
  const ids = value.split(',').map((s) => s.trim()).filter((s) => s !== '')
  const unknown = ids.filter((id) => !PATH_IDS.includes(id))
  if (unknown.length > 0) throw new UsageError(`--require-paths: unknown path ${unknown.join(', ')} (known: ${PATH_IDS.join(', ')})`)
  return ids
}

/** Fuzz kinds a subject cannot run: missing features, plus the dsh harness's unsupported transient retries (FAULT-16). */
export function excludedKinds(subject: Subject): FaultKindName[] {
  const features = subject.features
  const out = features === undefined ? [] : KINDS_NEEDING.filter(([f]) => !features.includes(f)).map(([, k]) => k)
  if (subject.name === 'dsh') out.push('transient')
  return FAULT_KINDS.filter((k) => out.includes(k))
}

/** The coverage table as Markdown: path id, reached count, definition with its §. */
export function coverageTable(result: FuzzResult): string {
  const rows = PATH_DEFINITIONS.map((d) => {
    const reached = result.paths.find((p) => p.path === d.id)?.reached ?? 0
    return `| \`${d.id}\` | ${reached} | ${d.definition} (${d.section}) |`
  })
  return `${['| path | reached | definition |', '|---|---:|---|', ...rows].join('\n')}\n`
}
