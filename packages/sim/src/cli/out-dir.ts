/**
 * The `--out-dir` check shared by `sim run`, `sim sweep`, `sim conform` and `sim report merge`: a path that
 * exists but is not a folder (or lies under a file) is the user's mistake, exit 2 with the path named — not
 * an `ENOTDIR`/`EEXIST` from `mkdir` deep inside a run, which would surface as a bug of sim (exit 3).
 * Read-only: nothing is created here, so an input error found later leaves no empty folder behind.
 */
import { statSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { UsageError } from './exit-codes.ts'

/**
 * Checks that `outDir` (relative to `cwd`) is a folder or can be created as one.
 * @param flag the flag named in the message (`--out-dir`).
 * @throws UsageError when `outDir` or one of its parents exists and is not a folder.
 */
export function checkOutDir(outDir: string, cwd: string, flag = '--out-dir'): void {
  let path = resolve(cwd, outDir)
  for (let depth = 0; depth < 4096; depth++) {
    let isDirectory: boolean
    try {
      isDirectory = statSync(path).isDirectory()
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code
      if (code === 'ENOTDIR') throw new UsageError(`${flag}: ${outDir} is under a file, not a folder`)
      if (code !== 'ENOENT') throw new UsageError(`${flag}: cannot use ${outDir} (${code ?? String(err)})`)
      const parent = dirname(path)
      if (parent === path) return
      path = parent
      continue
    }
    if (isDirectory) return
    throw new UsageError(path === resolve(cwd, outDir)
      ? `${flag}: ${outDir} exists and is not a folder`
      : `${flag}: ${outDir} is under ${path}, which is a file, not a folder`)
  }
}
