/**
 * User subjects (`--subject module:<path>`): loads an ES module whose default export — or named export
 * `subject` — implements the `Subject` contract (`types.ts`), and validates its shape at this boundary, so
 * a third-party backend or adapter runs the whole scenario catalog. A module that cannot be imported or
 * does not fit the contract is a `SubjectModuleError` (an input error, exit 2) naming the path and the
 * missing or malformed member. `.ts` modules load because sim itself runs under tsx (or vitest).
 */
import { stat } from 'node:fs/promises'
import { isAbsolute, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { childEntryFile } from '../world/child-entry.ts'
import { SUBJECT_FEATURES, type Subject } from './types.ts'

/** The `--subject` prefix that names a user module. */
export const MODULE_SUBJECT_PREFIX = 'module:'

/** A user subject module that cannot be loaded or does not implement `Subject` (exit 2). */
export class SubjectModuleError extends Error {
  override readonly name = 'SubjectModuleError'
  /** Stable code for callers: the module is missing, fails to import, or has the wrong shape. */
  readonly code: 'SUBJECT_NOT_FOUND' | 'SUBJECT_IMPORT' | 'SUBJECT_SHAPE'

  constructor(code: SubjectModuleError['code'], message: string, options?: ErrorOptions) {
    super(message, options)
    this.code = code
  }
}

/** The crash child entry for user subjects (`module-crash-child.ts`; its second argument is the module path). */
export const MODULE_CRASH_CHILD = childEntryFile(new URL('./module-crash-child.ts', import.meta.url))

/** The module path each loaded subject came from, so a crash child can import it again (§13.4). */
const modulePaths = new WeakMap<Subject, string>()

/** The absolute module path a subject was loaded from by `loadModuleSubject`, or null for in-process ones. */
export function subjectModulePath(subject: Subject): string | null {
  return modulePaths.get(subject) ?? null
}

/** True iff `spec` (a `--subject` value) names a user module. */
export function isModuleSubject(spec: string): boolean {
  return spec.startsWith(MODULE_SUBJECT_PREFIX)
}

/**
 * Imports the module at `path` (absolute, or relative to `cwd`; a `module:` prefix is accepted) and returns
 * its subject: the default export if it is an object, else the named export `subject`. Throws
 * `SubjectModuleError` naming the path for a missing file, an import failure or a shape error.
 */
export async function loadModuleSubject(path: string, cwd: string = process.cwd()): Promise<Subject> {
  const bare = isModuleSubject(path) ? path.slice(MODULE_SUBJECT_PREFIX.length) : path
  if (bare === '') throw new SubjectModuleError('SUBJECT_NOT_FOUND', '--subject module:<path>: the path is empty')
  const absolute = isAbsolute(bare) ? bare : resolve(cwd, bare)
  const isFile = await stat(absolute).then((s) => s.isFile(), () => false)
  if (!isFile) throw new SubjectModuleError('SUBJECT_NOT_FOUND', `${bare}: subject module not found (resolved to ${absolute})`)
  let namespace: Record<string, unknown>
  try {
    namespace = await import(pathToFileURL(absolute).href) as Record<string, unknown>
  } catch (err) {
    const reason = err instanceof Error ? `${err.name}: ${err.message}` : String(err)
    throw new SubjectModuleError('SUBJECT_IMPORT', `${bare}: the subject module failed to import: ${reason}`, { cause: err })
  }
  const subject = subjectOf(namespace, bare)
  modulePaths.set(subject, absolute)
  return subject
}

/**
 * Validates a module namespace as a `Subject` (the boundary check of `loadModuleSubject`, exported for
 * `defineConformanceSuite`, which takes subjects in-process). `where` names the module in messages.
 */
export function subjectOf(namespace: Record<string, unknown>, where: string): Subject {
  const exported = isObject(namespace['default']) ? namespace['default'] : namespace['subject']
  if (!isObject(exported)) {
    throw new SubjectModuleError('SUBJECT_SHAPE', `${where}: expected a default export or a named export \`subject\` implementing Subject, found neither`)
  }
  return checkSubject(exported, where)
}

/** Checks an object against the `Subject` contract; throws `SubjectModuleError` naming the first bad member. */
export function checkSubject(value: object, where: string): Subject {
  const v = value as Record<string, unknown>
  const bad = (member: string, expected: string, got: unknown): never => {
    const found = got === undefined ? 'it is missing' : `got ${got === null ? 'null' : typeof got}`
    throw new SubjectModuleError('SUBJECT_SHAPE', `${where}: the subject's \`${member}\` must be ${expected}; ${found}`)
  }
  if (typeof v['name'] !== 'string' || v['name'] === '') bad('name', 'a non-empty string', v['name'])
  if (typeof v['runSession'] !== 'function') bad('runSession', 'a function (options) => Promise<SubjectSessionResult>', v['runSession'])
  const features = v['features']
  if (features !== undefined) {
    if (!Array.isArray(features)) bad('features', `an array of ${SUBJECT_FEATURES.join(', ')}`, features)
    const known = new Set<string>(SUBJECT_FEATURES)
    for (const f of features as unknown[]) {
      if (typeof f !== 'string' || !known.has(f)) {
        throw new SubjectModuleError('SUBJECT_SHAPE', `${where}: unknown feature ${JSON.stringify(f)} in \`features\`; expected one of ${SUBJECT_FEATURES.join(', ')}`)
      }
    }
  }
  return value as Subject
}

function isObject(value: unknown): value is object {
  return typeof value === 'object' && value !== null
}
