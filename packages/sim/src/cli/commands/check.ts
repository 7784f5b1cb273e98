/**
 * `sim check <log...>`: judges session logs against the invariant catalog of §12. A thin shell over
 * `checkLog`: the verdicts (grouped by invariant, or one `--json` document) are this command's data on
 * stdout; unreadable inputs are `file:line: reason` on stderr. Exit 0 when nothing is violated, 1 when
 * anything is, 2 when an input cannot be read, 3 when a check itself failed (a bug in sim).
 */
import type { ChalkInstance } from 'chalk'
import type { Argv, CommandModule } from 'yargs'
import { DIALECTS, type Dialect } from '@compaction-sim/core'
import { CHECKS_BY_ID } from '../../checker/registry.ts'
import { checkLog, type CheckReport, type CheckResult } from '../../checker/run.ts'
import type { CheckId, CoverageStatus, Violation } from '../../checker/types.ts'
import { ExitCode } from '../exit-codes.ts'
import type { CommandContext } from '../context.ts'

/** Parsed arguments of `sim check`. */
export interface CheckArgs {
  logs: string[]
  dialect: Dialect
  manifest: string | undefined
  requests: string | undefined
  world: string | undefined
  'known-type': string[]
  json: boolean
}

/** How the world checks' coverage names a missing world record (`checker/world.ts`). */
const NO_WORLD_REASON = 'no world record'

/** Violations shown per invariant in the pretty output (the JSON document always has all of them). */
const PRETTY_VIOLATIONS_PER_ID_MAX = 20

/** The `check` command module; verdicts and the exit code go through `ctx`. */
export function checkCommand(ctx: CommandContext): CommandModule<object, CheckArgs> {
  return {
    command: 'check <logs..>',
    describe: 'Check logs against every invariant INV-01 … INV-47',
    builder: (yargs: Argv) => yargs
      .positional('logs', { type: 'string', array: true, demandOption: true, describe: 'Session logs (.jsonl, .jsonl.zstd, DSH packed chunk rows)' })
      .option('dialect', {
        choices: DIALECTS,
        default: 'seed' as Dialect,
        describe: 'Log dialect: seed (protocol.md) or dsh-0.1.0-rc.8 (the released engine, §14.1); never guessed',
      })
      .option('manifest', {
        type: 'string',
        describe: 'Run manifest (§1.1); default: <log>.manifest.json, else run-manifest.json beside the log, else the §3.1 defaults',
      })
      .option('requests', { type: 'string', describe: 'Request capture (JSONL, §1.1): enables the wire-level invariants INV-39, INV-43, INV-44' })
      .option('world', {
        type: 'string',
        describe: 'World record (sim run: <slug>.world.json; sim serve --capture: <capture stem>.world.json): enables the world-truth checks WORLD-01 … WORLD-06 (needs --requests)',
      })
      .option('known-type', {
        type: 'string',
        array: true,
        nargs: 1,
        default: [] as string[],
        describe: 'Accept this foreign log-only event type without ignorable (repeatable, §14.1)',
      })
      .option('json', { type: 'boolean', default: false, describe: 'Print exactly one JSON document: {"files":[…]}' })
      .example('$0 check session.jsonl', 'Check one log; violations grouped by invariant')
      .example('$0 check session.jsonl --requests session.requests.jsonl --world requests.world.json', 'Also judge the log against what the world (sim serve) answered')
      .epilog(
        'With --world (and --requests) the log is also judged against the world record: WORLD-01 … WORLD-06. '
        + 'The output names where policy and pruner facts came from (policySource: manifest | defaults). Exit codes: 0 no violation, '
        + '1 any violation, 2 an unreadable log, manifest or capture (file:line and reason on stderr), 3 an internal error of sim.',
      )
      .example('$0 check --dialect dsh-0.1.0-rc.8 recorded/*.jsonl --json', 'Check logs of the released engine as one JSON document') as Argv<CheckArgs>,
    handler: async (args) => {
      const out = ctx.out
      if (args.world !== undefined && args.requests === undefined) {
        out.error('--world needs --requests: the world record is joined to the log through the request capture (§1.1)')
        ctx.exitCode = ExitCode.Usage
        return
      }
      const results: CheckResult[] = []
      for (const log of args.logs) {
        const options = { dialect: args.dialect, knownTypes: args['known-type'] } as Parameters<typeof checkLog>[1]
        if (args.manifest !== undefined) options.manifest = args.manifest
        if (args.requests !== undefined) options.requests = args.requests
        if (args.world !== undefined) options.world = args.world
        results.push(await checkLog(log, options))
      }
      for (const r of results) {
        if (r.kind === 'input-error') out.error(r.error.message)
        else {
          if (r.tornTail !== null) out.warn(`${r.path ?? '<events>'}:${r.tornTail.line}: torn final line dropped (${r.tornTail.reason})`)
          for (const f of r.internalErrors) out.error(`internal error in ${f.id}: ${f.message}`)
        }
      }
      if (args.json) out.json({ files: results.map(jsonFile) })
      else out.data(formatCheck(results, out.color))
      ctx.exitCode = exitCodeOf(results)
    },
  }
}

/** 3 if a check failed internally, else 2 if an input was unreadable, else 1 if anything was violated, else 0. */
export function exitCodeOf(results: readonly CheckResult[]): ExitCode {
  if (results.some((r) => r.kind === 'report' && r.internalErrors.length > 0)) return ExitCode.Internal
  if (results.some((r) => r.kind === 'input-error')) return ExitCode.Usage
  if (results.some((r) => r.kind === 'report' && !r.ok)) return ExitCode.Failed
  return ExitCode.Ok
}

/** One entry of the `--json` document: exactly path, dialect, events, ok, policySource, violations (plus `error` when unreadable). */
function jsonFile(r: CheckResult): Record<string, unknown> {
  if (r.kind === 'input-error') {
    return { path: r.path, dialect: r.dialect, events: 0, ok: false, policySource: null, violations: [], error: r.error.message }
  }
  return {
    path: r.path,
    dialect: r.dialect,
    events: r.events,
    ok: r.ok,
    policySource: r.policySource,
    violations: r.violations.map((v) => ({ id: v.id, seq: v.seq, message: v.message })),
  }
}

/** Renders the pretty report of `sim check` (no trailing newline). */
export function formatCheck(results: readonly CheckResult[], color: ChalkInstance): string {
  const blocks = results.map((r) => r.kind === 'input-error'
    ? `${color.bold(r.path ?? '<events>')}\n  ${color.red('unreadable:')} ${r.error.message}`
    : formatReport(r, color))
  const failed = results.filter((r) => r.kind === 'input-error' || !r.ok).length
  const summary = failed === 0
    ? color.green(`${plural(results.length, 'log')} checked, no violations`)
    : color.red(`${plural(results.length, 'log')} checked, ${failed} with violations or errors`)
  return [...blocks, summary].join('\n\n')
}

function formatReport(r: CheckReport, color: ChalkInstance): string {
  const policy = r.policySource === 'manifest' ? `policy from ${r.manifestPath ?? 'the given manifest'}` : 'policy: §3.1 defaults (no manifest)'
  const lines = [`${color.bold(r.path ?? '<events>')}  ${color.dim(`${r.dialect}, ${plural(r.events, 'event')}, ${policy}`)}`]
  if (r.violations.length === 0 && r.suppressed === 0) lines.push(`  ${color.green('ok')} no violations`)
  const groups = new Map<CheckId, Violation[]>()
  for (const v of r.violations) {
    const list = groups.get(v.id)
    if (list === undefined) groups.set(v.id, [v])
    else list.push(v)
  }
  for (const id of [...groups.keys()].sort()) {
    const list = groups.get(id) ?? []
    const statement = CHECKS_BY_ID.get(id)?.statement ?? ''
    lines.push(`  ${color.red(id)} ${color.bold(`${plural(list.length, 'violation')}`)}  ${color.dim(statement)}`)
    for (const v of list.slice(0, PRETTY_VIOLATIONS_PER_ID_MAX)) {
      lines.push(`    #${v.seq}  ${v.message}`)
      if (v.excerpt !== undefined) lines.push(`          ${color.dim(v.excerpt)}`)
    }
    if (list.length > PRETTY_VIOLATIONS_PER_ID_MAX) lines.push(color.dim(`    … ${list.length - PRETTY_VIOLATIONS_PER_ID_MAX} more (see --json)`))
  }
  if (r.suppressed > 0) lines.push(color.dim(`  … ${r.suppressed} further violations not recorded (per-invariant bound)`))
  const notes = new Map<string, string[]>()
  for (const c of r.coverage) {
    if (c.status === 'evaluated') continue
    // Without --world the world-truth checks cannot run; that is the ordinary case and not worth a line.
    if (c.id.startsWith('WORLD-') && c.status === 'not-evaluated' && c.reason.startsWith(NO_WORLD_REASON)) continue
    const key = `${COVERAGE_LABEL[c.status]}: ${c.reason}`
    const list = notes.get(key)
    const id = c.status === 'partial' ? `${c.id} (${plural(c.skipped, 'instance')} skipped)` : c.id
    if (list === undefined) notes.set(key, [id])
    else list.push(id)
  }
  for (const [key, ids] of notes) {
    const [label = '', reason = ''] = key.split(/: (.*)/s)
    lines.push(color.dim(`  ${label}: ${ids.join(', ')} — ${reason}`))
  }
  if (r.meterTaint !== null) lines.push(color.dim(`  pressure figures are not exact from #${r.meterTaint.seq} on: ${r.meterTaint.reason}`))
  return lines.join('\n')
}

const COVERAGE_LABEL: Record<Exclude<CoverageStatus, 'evaluated'>, string> = {
  partial: 'partly evaluated',
  'not-evaluated': 'not evaluated',
  'not-applicable': 'not applicable',
}

function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`
}
