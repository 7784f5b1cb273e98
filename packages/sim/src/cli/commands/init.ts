/**
 * `sim init [--ts] [--dir <path>]`: scaffolds conformance for an adapter author (a thin shell over
 * `scaffoldConformance`, imported when the command runs): a commented subject module on `@compaction-sim/core`,
 * a vitest file using `defineConformanceSuite` and a GitHub Actions workflow running `sim conform`. stdout
 * lists the files written (one path per line); stderr says what to do next. Exit 0 written, 2 refused —
 * a target already exists (every one is named and nothing is written; there is no overwrite flag) or
 * `--dir` is a file — 3 a bug of sim.
 */
import { join, relative } from 'node:path'
import type { Argv, CommandModule } from 'yargs'
import { ExitCode } from '../exit-codes.ts'
import type { CommandContext } from '../context.ts'

/** Parsed arguments of `sim init`. */
export interface InitArgs {
  ts: boolean
  dir: string
}

/** The `init` command module. */
export function initCommand(ctx: CommandContext): CommandModule<object, InitArgs> {
  return {
    command: 'init',
    describe: 'Scaffold conformance for your adapter: subject, test, CI workflow',
    builder: (yargs: Argv) => yargs
      .option('ts', { type: 'boolean', default: false, describe: 'Write subject.ts and conformance.test.ts instead of .mjs' })
      .option('dir', { type: 'string', default: '.', describe: 'The project folder to write into (created when missing)' })
      .epilogue('Writes subject.mjs (a commented subject built on @compaction-sim/core), conformance.test.mjs ' +
        '(defineConformanceSuite, for vitest) and .github/workflows/conformance.yml (sim conform with the junit and github ' +
        'reporters); with --ts, subject.ts and conformance.test.ts. Never overwrites: when any of them exists, nothing is ' +
        'written and sim init exits 2 naming it.')
      .example('$0 init', 'Scaffold a JavaScript subject in the working directory')
      .example('$0 init --ts --dir packages/my-adapter', 'A TypeScript subject in another folder') as Argv<InitArgs>,
    handler: async (args) => {
      const { InitConflictError, scaffoldConformance } = await import('../../init/init.ts')
      const out = ctx.out
      const cwd = process.cwd()
      let result
      try {
        result = await scaffoldConformance({ dir: args.dir, language: args.ts ? 'ts' : 'js', cwd })
      } catch (err) {
        if (!(err instanceof InitConflictError)) throw err
        out.error(err.message)
        ctx.exitCode = ExitCode.Usage
        return
      }
      const shown = (target: string): string => relative(cwd, join(result.dir, target)) || target
      for (const file of result.written) out.io.stdout.write(`${shown(file.target)}\n`)
      const subject = shown(result.subject)
      const inDir = relative(cwd, result.dir) === '' ? '' : `cd ${relative(cwd, result.dir)} && `
      out.info(`sim init: wrote ${result.written.length} files. Next:`)
      out.info(`  ${inDir}npm i -D @compaction-sim/core @compaction-sim/sim vitest${args.ts ? ' tsx' : ''}`)
      out.info(`  ${inDir}npx vitest run    # the conformance pack as vitest tests, level must`)
      const loader = args.ts ? 'NODE_OPTIONS=\'--import tsx\' ' : ''
      out.info(`  ${loader}npx sim conform --subject module:./${subject}    # the same from the CLI (what the workflow runs)`)
      out.info(`Then replace the core pieces in ${subject} with your own backend, keeping the contract its header describes.`)
    },
  }
}
