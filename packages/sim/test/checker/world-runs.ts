/**
 * A catalog scenario run for the world-truth tests (WORLD-01 … WORLD-06): `sim run`'s log, request capture and
 * world record as written, read back from the run's output folder.
 */
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { expect } from 'vitest'
import type { CapturedRequest, RunManifest } from '@compaction-sim/core'
import type { WorldRecord } from '../../src/provider/world-record.ts'
import { runScenario } from '../../src/run/run-scenario.ts'
import { REPO_ROOT } from '../cli/run-sim.ts'

/** A log event as read back from the file (editable by a test). */
export type RawEvent = { seq: number; type: string; data: Record<string, unknown>; [k: string]: unknown }

/** One scenario's artifacts, as `sim run` wrote them. */
export interface Run {
  events: RawEvent[]
  requests: CapturedRequest[]
  world: WorldRecord
  manifest: string | RunManifest
  worldText: string
}

const lines = (text: string): unknown[] => text.split('\n').filter((l) => l.trim() !== '').map((l) => JSON.parse(l) as unknown)

/** Runs the catalog scenario `file` (repo-relative) into `outDir`, expects it to pass, and reads its artifacts. */
export async function runOf(file: string, outDir: string): Promise<Run> {
  const report = await runScenario(join(REPO_ROOT, file), { outDir, cwd: REPO_ROOT })
  expect(report.status, `${file}: ${JSON.stringify(report.violations)}`).toBe('passed')
  const stem = join(outDir, (report.artifacts?.log ?? '').replace(/\.jsonl$/, ''))
  const worldText = await readFile(`${stem}.world.json`, 'utf8')
  return {
    events: lines(await readFile(`${stem}.jsonl`, 'utf8')) as RawEvent[],
    requests: lines(await readFile(`${stem}.requests.jsonl`, 'utf8')) as CapturedRequest[],
    world: JSON.parse(worldText) as WorldRecord,
    manifest: `${stem}.manifest.json`,
    worldText,
  }
}
