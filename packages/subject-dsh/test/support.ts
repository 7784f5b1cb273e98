/** Test helpers of `@compaction-sim/subject-dsh`: the repository root (scenarios live there) and a temporary folder. */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

/** The repository root (three levels above this file). */
export const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url)).replace(/\/$/, '')

/** A temporary directory for one test file; `cleanup` removes it. */
export async function tempDir(): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'subject-dsh-'))
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) }
}
