/**
 * `sim import <format> <file> [-o scenario.yaml]` (issue #20): turns a real session file into a scenario
 * that `sim run` replays. The scenario goes to `-o` (and a sidecar `<name>.transcript.jsonl` when the
 * transcript is too large to inline) or to stdout; what was dropped and what was redacted go to stderr and
 * into the scenario's header comment. Secrets are redacted unless `--keep-secrets`. Bad input exits 2 with
 * `file:line: /field reason` (JSONL formats) or `file: /json/path reason` (JSON formats).
 */
import { writeFile } from 'node:fs/promises'
import { basename, dirname, isAbsolute, join, resolve as resolvePath } from 'node:path'
import type { Argv, CommandModule } from 'yargs'
import { IMPORT_FORMATS, importSession, type ImportFormat } from '../../import/index.ts'
import { droppedLines, importedScenario, redactionLine } from '../../import/write.ts'
import { SCENARIO_BYTES_MAX } from '../../scenario/load.ts'
import type { CommandContext } from '../context.ts'
import { ExitCode, UsageError } from '../exit-codes.ts'

/** Parsed arguments of `sim import`. */
export interface ImportArgs {
  format: ImportFormat
  file: string
  output?: string
  'keep-secrets': boolean
  wire: 'openai' | 'anthropic'
  'context-window': number
  name?: string
}

/** Default context window of the written scenario's mock provider. */
export const IMPORT_CONTEXT_WINDOW_DEFAULT = 128_000

/** The `import` command module. */
export function importCommand(ctx: CommandContext): CommandModule<object, ImportArgs> {
  const cwdOf = (): string => ctx.out.io.cwd ?? process.cwd()
  return {
    command: 'import <format> <file>',
    describe: 'Import a real session (OpenAI, Anthropic, Claude Code, Codex, DSH) as a scenario',
    builder: (yargs: Argv) => yargs
      .positional('format', { choices: IMPORT_FORMATS, demandOption: true, describe: 'Format of the session file' })
      .positional('file', { type: 'string', demandOption: true, describe: 'The session file (JSON array or JSONL, by format)' })
      .option('output', {
        alias: 'o', type: 'string',
        describe: 'Write the scenario here (default stdout); a large transcript goes beside it as <name>.transcript.jsonl',
      })
      .option('keep-secrets', { type: 'boolean', default: false, describe: 'Do not redact API keys, tokens, private keys and emails' })
      .option('wire', { choices: ['openai', 'anthropic'] as const, default: 'openai' as const, describe: 'Wire of the scenario\'s mock provider' })
      .option('context-window', {
        type: 'number', default: IMPORT_CONTEXT_WINDOW_DEFAULT, describe: 'Context window (tokens) of the scenario\'s mock provider',
      })
      .option('name', { type: 'string', describe: 'Scenario name (default: derived from the file name)' })
      .example('$0 import claude-code ~/.claude/projects/p/s.jsonl -o s.yaml', 'A Claude Code session as a scenario')
      .example('$0 import openai-chat messages.json > chat.yaml', 'A Chat Completions message array, scenario on stdout')
      .epilogue(
        'Formats: openai-chat (Chat Completions messages), openai-responses (Responses API items), anthropic-messages '
        + '(Messages API messages), claude-code (Claude Code session JSONL), codex (Codex CLI rollout JSONL), dsh (DSH session log).\n'
        + 'Secrets (API keys, tokens, JWTs, private keys, emails) become [REDACTED:<kind>] unless --keep-secrets; '
        + 'the README lists the patterns. Dropped items are listed on stderr and in the scenario\'s header comment.',
      ) as Argv<ImportArgs>,
    handler: async (args) => {
      const out = ctx.out
      const cwd = cwdOf()
      const abs = (p: string): string => (isAbsolute(p) ? p : resolvePath(cwd, p))
      const window = args['context-window']
      if (!Number.isInteger(window) || window < 1) throw new UsageError(`--context-window must be a positive integer (got ${String(window)})`)
      const result = await importSession(args.format, abs(args.file), { keepSecrets: args['keep-secrets'], shown: args.file })
      const output = args.output === undefined ? null : abs(args.output)
      const stem = (output === null ? basename(args.file) : basename(output)).replace(/\.(ya?ml|jsonl?|json)$/i, '')
      const name = args.name ?? (stem.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '') || 'imported')
      const scenario = importedScenario({
        format: args.format, source: args.file, name, transcript: result.transcript, dropped: result.dropped,
        redacted: result.redacted, keepSecrets: args['keep-secrets'], wire: args.wire, contextWindow: window,
        sidecar: output === null ? null : `${stem}.transcript.jsonl`,
      })
      if (output === null) {
        out.data(scenario.yaml.replace(/\n$/, ''))
        if (Buffer.byteLength(scenario.yaml) > SCENARIO_BYTES_MAX) {
          out.warn(`the scenario exceeds the ${SCENARIO_BYTES_MAX}-byte scenario limit, so sim run refuses it: use -o, which moves the transcript to a sidecar file`)
        }
      } else {
        if (scenario.sidecarText !== null) await writeFile(join(dirname(output), `${stem}.transcript.jsonl`), scenario.sidecarText)
        await writeFile(output, scenario.yaml)
        out.info(`wrote ${args.output}${scenario.sidecarText === null ? '' : ` and ${stem}.transcript.jsonl`} (${result.transcript.turns.length} turns)`)
      }
      out.info(args['keep-secrets'] ? 'secrets: kept (--keep-secrets)' : `secrets redacted: ${redactionLine(result.redacted)}`)
      if (result.dropped.length === 0) out.info('dropped: nothing')
      else out.info([`dropped (${result.dropped.length}):`, ...droppedLines(result.dropped).map((l) => `  ${l}`)].join('\n'))
      ctx.exitCode = ExitCode.Ok
    },
  }
}
