/**
 * One job of `sim run --seeds` (issue #21): a scenario under one seed, run through `runScenario` exactly as
 * `sim run <file> --seed <k>` runs it (same artifacts, same report entry), into that seed's folder. Pure data
 * in and out, so a worker thread of the sweep pool (`pool.ts`, `worker.ts`) can run it.
 */
import type { ScenarioReport } from '../report/types.ts'
import { runScenario } from '../run/run-scenario.ts'
import type { Subject } from '../subjects/types.ts'
import { subjectFromFlag } from '../cli/subject-flag.ts'

/** What a seed job needs; plain data (structured-clonable). */
export interface SeedJob {
  /** Position in the run's job list (scenario by scenario, seeds in order): results are merged in this order. */
  index: number
  /** Scenario file as the run was given it (absolute, or relative to `cwd`). */
  file: string
  /** Stem of its artifacts (`slugsOf` over the run's file list, so repeated stems are numbered as in `sim run`). */
  slug: string
  seed: number
  /** The seed's folder: artifacts of every scenario under this seed. */
  outDir: string
  cwd: string
  /** The `--subject` value (`reference`, `dsh`, `module:<path>`), or null for each scenario's own subject. */
  subject: string | null
  timings: boolean
}

/** A finished seed job: the scenario's report entry, as `runScenario` returned it. */
export interface SeedJobResult {
  index: number
  report: ScenarioReport
}

/** Subjects this thread loaded, by `--subject` value (a module subject is imported once per thread). */
const loaded = new Map<string, Promise<Subject>>()

/** Runs `job`. Never throws for a scenario problem (it becomes the entry's status); a bad subject was refused before any job. */
export async function runSeedJob(job: SeedJob): Promise<SeedJobResult> {
  let subject: Subject | undefined
  if (job.subject !== null) {
    let pending = loaded.get(job.subject)
    if (pending === undefined) {
      pending = subjectFromFlag(job.subject, job.cwd)
      loaded.set(job.subject, pending)
    }
    subject = await pending
  }
  const report = await runScenario(job.file, {
    outDir: job.outDir, cwd: job.cwd, seed: job.seed, timings: job.timings, ...(subject === undefined ? {} : { subject }),
  }, job.slug)
  return { index: job.index, report }
}
