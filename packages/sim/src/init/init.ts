/**
 * `sim init` (issue #17): scaffolds conformance for an adapter author into a project folder — a commented
 * subject module built on `@compaction-sim/core` (`subject.mjs`, or `subject.ts` for TypeScript), a vitest
 * file running the pack through `defineConformanceSuite` (`conformance.test.mjs|ts`) and a GitHub Actions
 * workflow running `sim conform` (`.github/workflows/conformance.yml`).
 *
 * The templates are real files of this package (`templates/init/<js|ts>/`, type-checked and linted with the
 * repository), read at run time next to this module, and copied byte for byte. Refusing is the rule: when
 * any target already exists, nothing at all is written and `InitConflictError` names every existing one.
 * There is no overwrite option.
 */
import { lstat, mkdir, readFile, stat, writeFile } from 'node:fs/promises'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

/** The language of the scaffold: a plain ES module (`js`, the default) or TypeScript (`ts`). */
export type InitLanguage = 'js' | 'ts'

/** Options of `scaffoldConformance`. */
export interface InitOptions {
  /** The project folder to write into (absolute, or relative to `cwd`); created when missing. */
  dir: string
  language: InitLanguage
  /** What a relative `dir` is resolved against (default `process.cwd()`). */
  cwd?: string
}

/** One file of the scaffold: where it goes and where its template lives. */
export interface InitFile {
  /** POSIX path relative to the project folder (`subject.mjs`, `.github/workflows/conformance.yml`). */
  target: string
  /** Absolute path of the template file it is copied from. */
  template: string
}

/** What `scaffoldConformance` wrote. */
export interface InitResult {
  /** The absolute project folder. */
  dir: string
  language: InitLanguage
  /** The files written, in the order of `initFiles`. */
  written: InitFile[]
  /** The subject module's path relative to the project folder (`subject.mjs` or `subject.ts`). */
  subject: string
}

/** Why a scaffold was refused (exit 2): a target exists (`INIT_EXISTS`) or the folder is not one (`INIT_NOT_A_DIR`). */
export class InitConflictError extends Error {
  override readonly name = 'InitConflictError'
  readonly code: 'INIT_EXISTS' | 'INIT_NOT_A_DIR'
  /** The absolute paths that are in the way. */
  readonly paths: readonly string[]

  constructor(code: InitConflictError['code'], message: string, paths: readonly string[]) {
    super(message)
    this.code = code
    this.paths = paths
  }
}

/** The folder of the templates: `templates/init/` of this package (the same depth from `src/` and a built `dist/`). */
const TEMPLATES_DIR = fileURLToPath(new URL('../../templates/init/', import.meta.url))

/** The scaffold of `language`: subject, vitest file and workflow, in the order they are written and listed. */
export function initFiles(language: InitLanguage): InitFile[] {
  const ext = language === 'ts' ? 'ts' : 'mjs'
  const dir = join(TEMPLATES_DIR, language)
  return [
    { target: `subject.${ext}`, template: join(dir, `subject.${ext}`) },
    { target: `conformance.test.${ext}`, template: join(dir, `conformance.test.${ext}`) },
    { target: '.github/workflows/conformance.yml', template: join(dir, 'conformance.yml') },
  ]
}

/**
 * Writes the scaffold into `options.dir`. Reads every template first and checks every target, so it either
 * writes all files or none. Throws `InitConflictError` when any target exists (naming all of them) or when
 * `dir` is a file; other I/O errors propagate.
 */
export async function scaffoldConformance(options: InitOptions): Promise<InitResult> {
  const dir = resolve(options.cwd ?? process.cwd(), options.dir)
  const dirStat = await stat(dir).catch(() => null)
  if (dirStat !== null && !dirStat.isDirectory()) {
    throw new InitConflictError('INIT_NOT_A_DIR', `${options.dir}: not a directory; sim init writes into a project folder`, [dir])
  }
  const files = initFiles(options.language)
  const contents = await Promise.all(files.map((f) => readFile(f.template)))
  const existing: string[] = []
  for (const file of files) {
    const path = join(dir, file.target)
    if (await exists(path)) existing.push(path)
  }
  if (existing.length > 0) {
    const names = existing.map((p) => relative(options.cwd ?? process.cwd(), p) || p)
    throw new InitConflictError(
      'INIT_EXISTS',
      `sim init: ${names.join(', ')} already exist${existing.length === 1 ? 's' : ''}; nothing was written (sim init never overwrites:` +
        ` move or delete ${existing.length === 1 ? 'it' : 'them'}, or scaffold into another folder with --dir)`,
      existing,
    )
  }
  const written: InitFile[] = []
  for (const [i, file] of files.entries()) {
    const path = join(dir, file.target)
    await mkdir(dirname(path), { recursive: true })
    // `wx`: fail rather than overwrite a file that appeared since the check above.
    await writeFile(path, contents[i] ?? '', { flag: 'wx' }).catch((err: unknown) => {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err
      throw new InitConflictError('INIT_EXISTS', `sim init: ${path} appeared while writing; it was left as it is`, [path])
    })
    written.push(file)
  }
  return { dir, language: options.language, written, subject: files[0]?.target ?? '' }
}

/** True when something (file, folder, even a dangling link) exists at `path`. */
async function exists(path: string): Promise<boolean> {
  return lstat(path).then(() => true, () => false)
}
