/**
 * The one mechanism behind the schema generators (style rule 16) of the scenario and run-report formats: a
 * JSON Schema is the source of truth, ajv standalone compiles it into a committed `validate.generated.cjs`
 * (CommonJS: ajv's standalone output calls `require()` even with `esm: true`), and `--check` writes nothing
 * and exits 1 when a generated file is stale, 2 on bad arguments. Each format's `build-validator.ts` only
 * names its paths, its ajv options and its extra outputs.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname } from 'node:path'
import { parseArgs } from 'node:util'
import type { Ajv, SchemaObject } from 'ajv'
import standaloneModule from 'ajv/dist/standalone/index.js'

/** One output file: its absolute path and the exact text it must hold. */
export interface GeneratedFile { path: string; content: string }

/** What a generator is: its name in messages, the command that regenerates, and its outputs. */
export interface SchemaGenerator {
  /** Prefix of every message, e.g. `scenario-schema`. */
  name: string
  /** The command a user runs to regenerate, e.g. `pnpm scenario:schema`. */
  command: string
  /** Every file the generator owns, with the content it must have. */
  files: () => GeneratedFile[]
}

/** The standalone validator text for `schema` compiled by `ajv`, headed by the `@generated` note. */
export function standaloneValidator(ajv: Ajv, schema: SchemaObject, note: string, command: string): string {
  const validate = ajv.compile(schema)
  // ajv's CJS entry sets `module.exports.default` to itself, so `.default` is the function under tsx and under TS's NodeNext view alike.
  const code = standaloneModule.default(ajv, validate)
  return [`// @generated — ${note}; do not edit.`, `// Regenerate with \`${command}\` (\`--check\` fails when stale).`, '/* eslint-disable */', code.trimEnd(), '']
    .join('\n')
}

/** The files of `generator` whose content on disk differs from what it produces (missing = stale). */
export function staleGeneratedFiles(generator: SchemaGenerator): string[] {
  return generator.files().filter((file) => readOrUndefined(file.path) !== file.content).map((file) => file.path)
}

function readOrUndefined(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8')
  } catch {
    return undefined // a missing or unreadable file is reported as stale by the caller
  }
}

/** Runs `generator` with `argv` (without node and script): writes its files, or checks them with `--check`; returns the exit code. */
export function runSchemaGenerator(generator: SchemaGenerator, argv: readonly string[]): number {
  let check: boolean
  try {
    check = parseArgs({ args: [...argv], options: { check: { type: 'boolean', default: false } }, strict: true }).values.check === true
  } catch (error) {
    process.stderr.write(`${generator.name}: ${error instanceof Error ? error.message : String(error)}\nusage: build-validator [--check]\n`)
    return 2
  }
  if (check) {
    const stale = staleGeneratedFiles(generator)
    if (stale.length > 0) {
      process.stderr.write(`${generator.name}: stale (run \`${generator.command}\`): ${stale.join(', ')}\n`)
      return 1
    }
    process.stdout.write(`${generator.name}: generated files are fresh\n`)
    return 0
  }
  for (const file of generator.files()) {
    mkdirSync(dirname(file.path), { recursive: true })
    writeFileSync(file.path, file.content)
    process.stdout.write(`${generator.name}: wrote ${file.path}\n`)
  }
  return 0
}
