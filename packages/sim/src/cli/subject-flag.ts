/**
 * The `--subject` flag of `sim run`, `sim conform` and `sim fuzz`: `reference` (the reference core), `dsh` (the
 * released official engine, from the optional package `@compaction-sim/subject-dsh`, imported only when named) or
 * `module:<path>` (a user module implementing `Subject`, `subjects/module.ts`). Bad values, an uninstalled dsh
 * package and unloadable modules are `UsageError`s (exit 2) naming the path, the missing member or the install command.
 */
import { DshSubjectMissingError, loadDshSubject, type ModuleImporter } from '../subjects/dsh-loader.ts'
import { isModuleSubject, loadModuleSubject, SubjectModuleError } from '../subjects/module.ts'
import { referenceSubject } from '../subjects/reference.ts'
import type { Subject } from '../subjects/types.ts'
import { UsageError } from './exit-codes.ts'

/**
 * The subject a `--subject` value names: `reference`, `dsh` or `module:<path>` (a user module, relative to `cwd`).
 * A missing or malformed module, or `dsh` without its package, is a `UsageError` (exit 2) naming the path and
 * member, or printing the install command.
 * @param importer - how `dsh` imports its package (tests); the native `import()` when omitted.
 */
export async function subjectFromFlag(spec: string, cwd: string, importer?: ModuleImporter): Promise<Subject> {
  if (spec === 'reference') return referenceSubject
  if (spec !== 'dsh' && !isModuleSubject(spec)) {
    throw new UsageError(`--subject: expected reference, dsh or module:<path>, got ${JSON.stringify(spec)}`)
  }
  try {
    return spec === 'dsh' ? await loadDshSubject(importer) : await loadModuleSubject(spec, cwd)
  } catch (err) {
    if (err instanceof SubjectModuleError || err instanceof DshSubjectMissingError) {
      throw new UsageError(`--subject: ${err.message}`, { cause: err })
    }
    throw err
  }
}


/**
 * The `--subject` values of `sim run`, repeatable and comma-separated (`--subject reference,dsh`), in order,
 * each once. An empty entry or a repeated subject is a `UsageError` (exit 2).
 */
export function subjectSpecs(value: string | readonly string[] | undefined): string[] {
  if (value === undefined) return []
  const specs = (typeof value === 'string' ? [value] : [...value]).flatMap((v) => String(v).split(',')).map((v) => v.trim())
  if (specs.some((s) => s === '')) throw new UsageError(`--subject: empty entry in ${JSON.stringify(value)}`)
  const dup = specs.find((s, i) => specs.indexOf(s) !== i)
  if (dup !== undefined) throw new UsageError(`--subject: ${dup} is named twice`)
  return specs
}
