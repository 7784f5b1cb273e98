/**
 * The recorded rc.8 fixture logs (`transcripts/recorded/dsh-0.1.0-rc.8/`) for the checker tests (issue #18):
 * one listing that fails loudly. A missing or empty fixture folder is a broken checkout, not "nothing to
 * test", so it throws instead of returning `[]` — a test file that lists the logs at collection time fails.
 */
import { readdirSync } from 'node:fs'
import { fixturePath } from '@compaction-sim/fixtures'

/** The folder of the logs recorded from the official engine. */
export const RECORDED_DIR = fixturePath('recorded/dsh-0.1.0-rc.8')

/**
 * The names of the recorded logs ending in one of `suffixes`, sorted. Throws (ENOENT naming the folder) when
 * the folder is missing, and when it holds no such log.
 */
export function recordedLogNames(suffixes: readonly string[] = ['.jsonl']): string[] {
  const names = readdirSync(RECORDED_DIR).filter((f) => suffixes.some((s) => f.endsWith(s))).sort()
  if (names.length === 0) throw new Error(`${RECORDED_DIR}: no recorded log (${suffixes.join(', ')}): the fixture folder is empty`)
  return names
}
