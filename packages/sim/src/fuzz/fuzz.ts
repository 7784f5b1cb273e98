/**
 * `runFuzz`: the programmatic API behind `sim fuzz` (issue #8). Generates sessions (configuration + up to
 * `maxCommands` commands) from one seed with fast-check, runs each against the reference core in-process
 * (`run.ts`: fault phase, fault-free convergence phase, the checker after every idle command and on the whole
 * log) and stops at the first failure, which fast-check shrinks. The shrunk run is written as a scenario
 * (`scenarios/regressions/<seed>-<slug>.yaml`) unless it used in-process-only commands.
 *
 * `swarm`: each run draws its own fault mix from the seed — which fault kinds are on and their weights, with
 * at least one kind left out (swarm testing); the mixes are drawn before any run so they can be printed first.
 *
 * `subject: dsh`: each generated session is first run on the reference in-process, then written as a
 * scenario and run by `runScenario` against the official engine; a failing scenario is the finding. Fault
 * kinds the release lacks (its `features`) are left out of the mix.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import fc from 'fast-check'
import { PATH_DEFINITIONS, sumPaths } from '../metrics/paths.ts'
import type { ReportedPath, ScenarioReport } from '../report/types.ts'
import type { Subject } from '../subjects/types.ts'
import {
  commandsArb, configArbitrary, FAULT_KINDS, IN_PROCESS_ONLY, SCENARIO_MIX, type FaultKindName, type FaultMix, type FuzzCommand,
} from './arbitraries.ts'
import type { SessionConfig } from './driver.ts'
import { describeFailure, isFailure, runSession, type SessionOptions, type SessionVerdict } from './run.ts'
import { inProcessOnlyReason, scenarioOf, slugOfFailure, writeScenarioFile } from './scenario-writer.ts'

/** Options of `runFuzz`. */
export interface FuzzOptions {
  /** Root seed (uint32). */
  seed: number
  /** Sessions to generate (before shrinking). */
  runs: number
  /** Draw a fault mix per run from the seed. */
  swarm?: boolean
  /** The fault mix when not swarming (default: every kind with a scenario equivalent). */
  mix?: FaultMix
  /** Commands per session, at most (default 60). */
  maxCommands?: number
  /** Where the shrunk scenario goes (default `scenarios/regressions`); null = do not write one. */
  regressionsDir?: string | null
  /**
   * A scenario-level subject (e.g. `dsh`): sessions are replayed through `runScenario` against it. Absent =
   * the reference core in-process.
   */
  scenarioSubject?: Subject & { readonly fuzzExcludes?: readonly FaultKindName[] }
  /** Runs a written scenario (for `scenarioSubject` and to confirm a shrunk finding replays), when given. */
  runScenarioFile?: (file: string, outDir: string) => Promise<ScenarioReport>
  /** Replays one shrunk failure: the 1-based run, fast-check's `path` and the commands' `replayPath` (as printed). */
  replay?: { run: number; path: string; replayPath: string }
  /** Report an image price on the route (default true); false for subjects that ignore it (D-09). */
  imageTokens?: boolean
  /** TEST-ONLY session internals (a planted engine bug), passed to every in-process session. */
  session?: SessionOptions
  /** Progress and the drawn swarm options (stderr lines). */
  log?: (line: string) => void
}

/** A shrunk failure. */
export interface FuzzFailure {
  /** INV ids first, or LIVENESS, or the model disagreement. */
  description: string
  /** The INV ids of the failure (empty for liveness and disagreements). */
  invariantIds: string[]
  liveness: boolean
  /** The shrunk commands, readable. */
  commands: string[]
  config: SessionConfig
  /** The seed to replay with, fast-check's replay path and the commands' replay path (`--path`, `--replay-path`). */
  seed: number
  path: string
  replayPath: string
  /** 1-based run that failed first (swarm: the run whose mix is in `mix`). */
  run: number
  mix: FaultMix
  /** The scenario written, or why none was. */
  scenarioFile: string | null
  scenarioRefusal: string | null
  /** The replay of the written scenario, when `runScenarioFile` was given. */
  replay: { status: string; invariantIds: string[] } | null
}

/** What a fuzz run found. */
export interface FuzzResult {
  seed: number
  runs: number
  /** Sessions executed (shrink attempts excluded). */
  sessions: number
  /** Per-run mixes when swarming (null otherwise). */
  swarm: FaultMix[] | null
  paths: ReportedPath[]
  failure: FuzzFailure | null
  /** Sessions a scenario subject skipped (features it lacks). */
  skipped: number
}

/** Draws `runs` swarm mixes from `seed`: each kind on with probability ~0.6 and a weight 1…10; never all on or all off. */
export function drawSwarm(seed: number, runs: number, allowed: readonly FaultKindName[] = FAULT_KINDS): FaultMix[] {
  const kindArb = fc.option(fc.integer({ min: 1, max: 10 }), { nil: null, freq: 2 })
  const arb = fc.tuple(...allowed.map(() => kindArb)).filter((ws) => ws.some((w) => w === null) && ws.some((w) => w !== null))
  return fc.sample(arb, { seed, numRuns: runs })
    .map((ws) => Object.fromEntries(allowed.flatMap((k, i) => (ws[i] === null || ws[i] === undefined ? [] : [[k, ws[i]]]))))
}

/** One line per mix: `run n: kind=w …`. */
export function describeMix(mix: FaultMix): string {
  const on = FAULT_KINDS.filter((k) => mix[k] !== undefined)
  return on.length === 0 ? '(conversation only)' : on.map((k) => `${k}=${mix[k]}`).join(' ')
}

/** Runs the fuzzer (module doc). Never throws for a finding; `failure` holds it. */
export async function runFuzz(options: FuzzOptions): Promise<FuzzResult> {
  const log = options.log ?? (() => {})
  const maxCommands = options.maxCommands ?? 60
  const excluded = new Set<FaultKindName>(options.scenarioSubject?.fuzzExcludes ?? [])
  if (options.scenarioSubject !== undefined) for (const k of IN_PROCESS_ONLY) excluded.add(k)
  const allowed = FAULT_KINDS.filter((k) => !excluded.has(k))
  const baseMix: FaultMix = Object.fromEntries(
    Object.entries(options.mix ?? SCENARIO_MIX).filter(([k]) => !excluded.has(k as FaultKindName)),
  )
  const swarm = options.swarm === true ? drawSwarm(options.seed, options.runs, allowed) : null
  if (swarm !== null) {
    log(`swarm: ${swarm.length} per-run fault mixes drawn from seed ${options.seed} (kind=weight; absent = off)`)
    for (const k of allowed) {
      const on = swarm.filter((m) => m[k] !== undefined)
      const mean = on.length === 0 ? 0 : on.reduce((s, m) => s + (m[k] ?? 0), 0) / on.length
      log(`  ${k.padEnd(15)} on in ${String(on.length).padStart(5)} of ${swarm.length} runs, mean weight ${mean.toFixed(1)}`)
    }
    for (const [i, m] of swarm.slice(0, 5).entries()) log(`  run ${i + 1}: ${describeMix(m)}`)
    if (swarm.length > 5) log(`  … (${swarm.length - 5} more)`)
  }
  const tables: ReportedPath[][] = []
  let sessions = 0
  let skipped = 0
  let collecting = true
  const outDir = options.scenarioSubject === undefined ? null : await mkdtemp(join(tmpdir(), 'sim-fuzz-'))
  const judge = async (config: SessionConfig, cmds: Iterable<FuzzCommand>): Promise<SessionVerdict> => {
    const verdict = await runSession(config, cmds, options.session ?? {})
    const count = (paths: ReportedPath[]): void => {
      if (!collecting) return
      sessions++
      tables.push(paths)
    }
    if (isFailure(verdict) || options.scenarioSubject === undefined || outDir === null || options.runScenarioFile === undefined) {
      count(verdict.paths)
      return verdict
    }
    // Scenario subject: replay the reference's session through the subject; its own log's paths count.
    if (inProcessOnlyReason(verdict.driver.trace) !== null) return verdict
    const file = join(outDir, `session-${sessions}.yaml`)
    const meta = { name: 'fuzz-session', seed: options.seed, description: 'sim fuzz session' }
    await writeScenarioFile(file, scenarioOf(verdict.driver.trace, config, meta), [])
    const report = await options.runScenarioFile(file, outDir)
    if (report.status === 'skipped' && collecting) skipped++
    else count(report.paths ?? [])
    if (report.status === 'failed' || report.status === 'error') {
      const ids = [...new Set(report.violations.map((v) => v.id))]
      const failed = report.expectations.filter((e) => !e.passed).map((e) => `${e.name}: ${e.actual}`)
      const violations = report.violations.map((v) => ({ ...v, id: v.id as never }))
      return { ...verdict, violations, internal: ids.length === 0 ? [report.error ?? failed.join('; ')] : [] }
    }
    return verdict
  }
  let failure: FuzzFailure | null = null
  const runsOf = swarm === null
    ? [{ mix: baseMix, seed: options.seed, numRuns: options.runs }]
    : swarm.map((mix, i) => ({ mix, seed: (options.seed + i) >>> 0, numRuns: 1 }))
  const replay = options.replay
  try {
    for (const [index, run] of runsOf.entries()) {
      if (replay !== undefined && swarm !== null && index !== replay.run - 1) continue
      // The last failing execution is the shrunk counterexample (fast-check only keeps failing candidates).
      const last: { verdict: SessionVerdict | null } = { verdict: null }
      const configs = configArbitrary(options.imageTokens !== false)
      const commands = commandsArb(run.mix, maxCommands, replay?.replayPath)
      const result = await fc.check(fc.asyncProperty(configs, commands, async (config, cmds) => {
        const verdict = await judge(config, cmds)
        if (isFailure(verdict)) {
          collecting = false
          last.verdict = verdict
          throw new Error(describeFailure(verdict))
        }
      }), { seed: run.seed, numRuns: run.numRuns, ...(replay === undefined ? {} : { path: replay.path, endOnFailure: true }) })
      if (swarm !== null && (index + 1) % 100 === 0) log(`  ${index + 1} runs`)
      if (!result.failed || result.counterexample === null || last.verdict === null) continue
      const [config, cmds] = result.counterexample
      failure = await report(last.verdict, config, [...cmds].map(String), result, index, run.mix, options)
      break
    }
  } finally {
    if (outDir !== null) await rm(outDir, { recursive: true, force: true })
  }
  const paths = sumPaths(tables)
  return { seed: options.seed, runs: options.runs, sessions, swarm, paths, failure, skipped }
}

async function report(
  verdict: SessionVerdict, config: SessionConfig, commands: string[], result: fc.RunDetails<[SessionConfig, Iterable<FuzzCommand>]>,
  runIndex: number, mix: FaultMix, options: FuzzOptions,
): Promise<FuzzFailure> {
  const description = describeFailure(verdict)
  const invariantIds = verdict.disagreement === null ? [...new Set(verdict.violations.map((v) => v.id))] : []
  const seed = result.seed
  const failure: FuzzFailure = {
    description, invariantIds, liveness: verdict.disagreement === null && invariantIds.length === 0 && verdict.liveness !== null,
    commands, config, seed, path: result.counterexamplePath ?? '', replayPath: replayPathOf(result.counterexample?.[1]),
    run: runIndex + 1, mix,
    scenarioFile: null, scenarioRefusal: null, replay: null,
  }
  const refusal = inProcessOnlyReason(verdict.driver.trace)
  const dir = options.regressionsDir === undefined ? 'scenarios/regressions' : options.regressionsDir
  if (refusal !== null) failure.scenarioRefusal = refusal
  else if (dir !== null) {
    const slug = slugOfFailure(description)
    const file = join(dir, `${seed}-${slug}.yaml`)
    const scenario = scenarioOf(verdict.driver.trace, config, {
      name: `fuzz-${seed}-${slug}`, seed,
      description: `Found by sim fuzz (seed ${seed}, shrunk to ${commands.length} commands): ${description}`.slice(0, 2000),
    })
    await writeScenarioFile(file, scenario, [
      `Shrunk by sim fuzz: ${description}`.slice(0, 300),
      `seed ${seed}, fast-check path ${failure.path}, replayPath ${failure.replayPath}`,
      `commands: ${commands.join(', ')}`.slice(0, 1000),
      `replay: pnpm sim run ${file}`,
    ])
    failure.scenarioFile = file
    if (options.runScenarioFile !== undefined) {
      const outDir = await mkdtemp(join(tmpdir(), 'sim-fuzz-replay-'))
      try {
        const r = await options.runScenarioFile(file, outDir)
        failure.replay = { status: r.status, invariantIds: [...new Set(r.violations.map((v) => v.id))] }
      } finally {
        await rm(outDir, { recursive: true, force: true })
      }
    }
  }
  return failure
}

/** fast-check's command replay path, from a command sequence's printed form (its `replayPath="…"` comment). */
function replayPathOf(commands: Iterable<FuzzCommand> | undefined): string {
  return /replayPath="([^"]*)"/.exec(String(commands))?.[1] ?? ''
}

/** Path ids of the coverage table (for `--require-paths` validation). */
export const PATH_IDS: readonly string[] = PATH_DEFINITIONS.map((p) => p.id)
