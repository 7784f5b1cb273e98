/**
 * The official-engine subject (`--subject dsh`, `subject: dsh`) lives in the optional package
 * `@compaction-sim/subject-dsh`, so that installing sim does not pull the engine's `@deepseek-ai/*` packages. This
 * module imports that package with a dynamic `import()` only when a run asks for `dsh`, and turns its absence into a
 * `DshSubjectMissingError` that prints the one install command. sim never imports the engine or its types: the
 * package implements sim's `Subject` contract (`types.ts`).
 */
import type { Subject } from './types.ts'
import { checkSubject, SubjectModuleError } from './module.ts'

/** The package that provides `--subject dsh`. */
export const DSH_SUBJECT_PACKAGE = '@compaction-sim/subject-dsh'

/** The one command that makes `--subject dsh` available in the user's project. */
export const DSH_INSTALL_COMMAND = `npm i -D ${DSH_SUBJECT_PACKAGE}`

const INSTALL_HINT = `install it with: ${DSH_INSTALL_COMMAND}`

/** `--subject dsh` was asked for but `@compaction-sim/subject-dsh` is not installed (an input error, exit 2). */
export class DshSubjectMissingError extends Error {
  override readonly name = 'DshSubjectMissingError'
  readonly code = 'SUBJECT_NOT_INSTALLED'

  constructor(options?: ErrorOptions) {
    super(`the dsh subject (the released official DSH engine) is an optional package that is not installed; ${INSTALL_HINT}`, options)
  }
}

/** Imports a module by specifier; the default is the native dynamic `import()` of this module's location. */
export type ModuleImporter = (specifier: string) => Promise<unknown>

const nativeImport: ModuleImporter = (specifier) => import(specifier)

/**
 * True iff `error` is Node's resolution failure for the package `name` itself (`ERR_MODULE_NOT_FOUND` with
 * "Cannot find package '<name>'"). A missing dependency OF that package, or a missing file inside it, names
 * something else and is not "not installed".
 */
export function isPackageNotFound(error: unknown, name: string): boolean {
  if (!(error instanceof Error) || (error as { code?: unknown }).code !== 'ERR_MODULE_NOT_FOUND') return false
  return error.message.startsWith(`Cannot find package '${name}' `)
}

let loaded: Promise<Subject> | null = null

/**
 * The `dsh` subject from `@compaction-sim/subject-dsh` (its `dshSubject` export, shape-checked like a user module:
 * a malformed one is a `SubjectModuleError`).
 * The native import is done once per process and cached; an injected `importer` (tests) is never cached.
 * @param importer - how to import the package (default: native `import()`, resolved from sim's own location).
 * @throws DshSubjectMissingError when the package itself cannot be found; any other import error propagates
 *   unchanged (a broken install or a bug is not "not installed").
 */
export function loadDshSubject(importer?: ModuleImporter): Promise<Subject> {
  if (importer !== undefined) return importDshSubject(importer)
  loaded ??= importDshSubject(nativeImport).catch((err: unknown) => {
    loaded = null
    throw err
  })
  return loaded
}

async function importDshSubject(importer: ModuleImporter): Promise<Subject> {
  let namespace: unknown
  try {
    namespace = await importer(DSH_SUBJECT_PACKAGE)
  } catch (err) {
    if (isPackageNotFound(err, DSH_SUBJECT_PACKAGE)) throw new DshSubjectMissingError({ cause: err })
    throw err
  }
  const exported = (namespace as Record<string, unknown>)['dshSubject']
  if (typeof exported !== 'object' || exported === null) {
    const message = `${DSH_SUBJECT_PACKAGE}: expected a named export \`dshSubject\` implementing Subject, found none`
    throw new SubjectModuleError('SUBJECT_SHAPE', message)
  }
  return checkSubject(exported, DSH_SUBJECT_PACKAGE)
}
