/**
 * Builds one workspace package (run from its folder by its `build` script): removes `dist/`, compiles
 * `src/` with `tsc -p tsconfig.build.json` (JS, `.d.ts`, declaration and source maps; `.ts` import
 * specifiers rewritten to `.js`), then copies the run-time assets tsc does not emit — the `.cjs` ajv
 * validators and `.json` files under `src/` — to the same place under `dist/`, and makes the package's
 * `bin` files executable. Exits with tsc's status when it fails.
 */
import { spawnSync } from 'node:child_process'
import { chmodSync, copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join, relative } from 'node:path'

/** File endings under `src/` that code reads at run time and tsc does not emit. */
const ASSET = /\.(cjs|json)$/

const cwd = process.cwd()
rmSync(join(cwd, 'dist'), { recursive: true, force: true })
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc')
const result = spawnSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { cwd, stdio: 'inherit' })
if (result.status !== 0) process.exit(result.status ?? 1)

/** Every file under `dir`, recursively. */
function* walk(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) yield* walk(path)
    else yield path
  }
}

const src = join(cwd, 'src')
for (const file of walk(src)) {
  if (!ASSET.test(file)) continue
  const target = join(cwd, 'dist', relative(src, file))
  mkdirSync(dirname(target), { recursive: true })
  copyFileSync(file, target)
}

const manifest = JSON.parse(readFileSync(join(cwd, 'package.json'), 'utf8'))
const bins = typeof manifest.bin === 'string' ? [manifest.bin] : Object.values(manifest.bin ?? {})
for (const bin of bins) {
  const path = join(cwd, bin)
  if (!existsSync(path)) {
    process.stderr.write(`build: the bin ${bin} was not emitted\n`)
    process.exit(1)
  }
  chmodSync(path, 0o755)
}
