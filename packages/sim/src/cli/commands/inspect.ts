/**
 * `sim inspect <log>`: prints the folded state at the end of a session log. A thin shell over
 * `inspectLog`: the table (or, with `--json`, one JSON document) is this command's data and goes to
 * stdout; a torn final line is a warning on stderr and still exits 0.
 */
import type { ChalkInstance } from 'chalk'
import type { Argv, CommandModule } from 'yargs'
import { DIALECTS, type Dialect } from '@compaction-sim/core'
import { inspectLog, type InspectResult } from '../../inspect.ts'
import { ExitCode } from '../exit-codes.ts'
import type { CommandContext } from '../context.ts'

/** Parsed arguments of `sim inspect`. */
export interface InspectArgs {
  log: string
  dialect: Dialect
  'known-type': string[]
  json: boolean
}

/** The `inspect` command module; results and the exit code go through `ctx`. */
export function inspectCommand(ctx: CommandContext): CommandModule<object, InspectArgs> {
  return {
    command: 'inspect <log>',
    describe: 'Print the folded state at the end of a session log',
    builder: (yargs: Argv) => yargs
      .positional('log', { type: 'string', demandOption: true, describe: 'Session log (JSONL)' })
      .option('dialect', {
        choices: DIALECTS,
        default: 'seed' as Dialect,
        describe: 'Log dialect (no auto-detection)',
      })
      .option('known-type', {
        type: 'string',
        array: true,
        nargs: 1,
        default: [] as string[],
        describe: 'Accept this foreign log-only event type (repeatable)',
      })
      .option('json', { type: 'boolean', default: false, describe: 'Print one JSON document instead of the table' })
      .example('$0 inspect session.jsonl', 'Print the folded state as a table')
      .example('$0 inspect session.jsonl --json', 'Print it as one JSON document') as Argv<InspectArgs>,
    handler: async (args) => {
      const result = await inspectLog(args.log, { dialect: args.dialect, knownTypes: args['known-type'] })
      const out = ctx.out
      if (result.meterError !== undefined) out.warn(`${result.file}: cannot meter this log: ${result.meterError}`)
      if (result.tornTail !== null) {
        out.warn(`${result.file}:${result.tornTail.line}: torn final line dropped (${result.tornTail.reason})`)
      }
      if (args.json) out.json(result)
      else out.data(formatInspect(result, out.color))
      ctx.exitCode = ExitCode.Ok
    },
  }
}

/** Renders `result` as the two-column table `sim inspect` prints (no trailing newline). */
export function formatInspect(result: InspectResult, color: ChalkInstance): string {
  const none = color.dim('none')
  const brackets = result.openBrackets.map((b) => {
    const owner = b.turn === null ? 'between turns' : `turn ${b.turn}`
    const state = b.live ? color.yellow('live') : color.dim('stale')
    return `${b.compactionId} start #${b.startSeq} ${owner} ${state}`
  })
  const rows: Array<[string, string]> = [
    ['file', result.file],
    ['dialect', result.dialect],
    ['events', String(result.events)],
    ['surface', `[${result.surface.join(', ')}] (${plural(result.surface.length, 'node')})`],
    ['replaceGeneration', String(result.replaceGeneration)],
    ['offloads', String(result.offloadCount)],
    ['series epoch', result.header === null ? `${result.seriesEpoch} now`
      : `${result.seriesEpoch} now, ${result.header.seriesEpochAtHeader} at header`],
    ['request header', formatHeader(result.header, none)],
    ['open turn', result.openTurn === null ? none : String(result.openTurn)],
    ['open step', result.openStep === null ? none : `turn ${result.openStep.turn} step ${result.openStep.step}`],
    ['open brackets', brackets.length === 0 ? none : brackets.join('\n')],
    ['last end-seed', result.lastEndSeed === null ? none : `#${result.lastEndSeed}`],
    ['pressure', formatPressure(result.meter, none)],
    ['surface tokens', result.meter === null ? none : String(result.meter.surfaceTokens)],
    ['budgets', result.budgets === null ? none
      : `window ${result.budgets.contextWindow}, threshold ${result.budgets.thresholdTokens}, retain ${result.budgets.retainTokens} (${result.budgets.policySource})`],
  ]
  const width = Math.max(...rows.map(([label]) => label.length)) + 2
  return rows.map(([label, value]) => {
    const [first = '', ...rest] = value.split('\n')
    const pad = ' '.repeat(width - label.length)
    return [`${color.bold(label)}${pad}${first}`, ...rest.map((line) => `${' '.repeat(width)}${line}`)].join('\n')
  }).join('\n')
}

function formatPressure(meter: InspectResult['meter'], none: string): string {
  if (meter === null) return none
  const sign = meter.surfaceDeltaTokens >= 0 ? '+' : '−'
  return `${meter.totalTokens} tokens (baseline ${meter.baseline} ${meter.baselineTokens} ${sign} ${Math.abs(meter.surfaceDeltaTokens)} surface delta)`
}

function formatHeader(header: InspectResult['header'], none: string): string {
  if (header === null) return none
  const starts = header.startsSeries ? ', startsSeries' : ''
  return `#${header.seq} ${header.reason}${starts} (${header.provider}/${header.model})`
}

function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`
}
