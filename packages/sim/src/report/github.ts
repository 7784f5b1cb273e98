/**
 * The `github` reporter: GitHub Actions workflow-command annotations (`::error file=…,line=…,title=…::…`)
 * pointing at the scenario file and the YAML line of the failing expectation, and a Markdown job summary
 * appended to `$GITHUB_STEP_SUMMARY` when that variable is set. `githubAnnotations`, `renderGithubAnnotations`
 * and `renderGithubSummary` are pure functions of the `RunReport` (lines come from an injected
 * `LineLocator`); `scenarioLineLocator` and `writeGithubReport` are the small I/O around them.
 */
import { appendFileSync, readFileSync } from 'node:fs'
import { stripVTControlCharacters } from 'node:util'
import { LineCounter, isMap, isScalar, isSeq, parseDocument, type Node } from 'yaml'
import type { ExpectationResult, RunReport, ScenarioReport } from './types.ts'

/** One annotation. `line` null = the file as a whole. */
export interface GithubAnnotation {
  level: 'error' | 'warning'
  file: string
  line: number | null
  title: string
  message: string
}

/** The 1-based line of the YAML node at JSON pointer `pointer` in scenario `file`, or null when unknown. */
export type LineLocator = (file: string, pointer: string) => number | null

/** Annotations per failing or errored scenario: one per violated invariant id, one per failed expectation. */
export function githubAnnotations(report: RunReport, locate: LineLocator = () => null): GithubAnnotation[] {
  return report.scenarios.flatMap((s) => scenarioAnnotations(s, locate))
}

function scenarioAnnotations(s: ScenarioReport, locate: LineLocator): GithubAnnotation[] {
  const where = `${s.name} [${s.subject} seed=${s.seed}]`
  if (s.status === 'error') {
    const at = /:(\d+):\d+(?::|\b)/.exec(s.error ?? '')
    const line = at?.[1] === undefined ? locate(s.file, '/name') : Number(at[1])
    return [{ level: 'error', file: s.file, line, title: s.errorKind === 'internal' || s.errorKind === 'watchdog' ? `${s.errorKind} error` : 'input error', message: `${where}: ${s.error ?? 'error'}` }]
  }
  if (s.status !== 'failed') return []
  const out: GithubAnnotation[] = []
  const invariantsLine = locate(s.file, '/expect/invariants') ?? locate(s.file, '/name')
  const ids = [...new Set(s.violations.map((v) => v.id))].sort()
  for (const id of ids) {
    const found = s.violations.filter((v) => v.id === id)
    const first = found[0]
    if (first === undefined) continue
    const more = found.length > 1 ? ` (+${found.length - 1} more)` : ''
    out.push({ level: 'error', file: s.file, line: invariantsLine, title: id, message: `${where}: seq ${first.seq}: ${first.message}${more}\nReplay: ${s.replay}` })
  }
  for (const e of s.expectations) {
    if (e.passed || e.name === 'invariants') continue
    out.push({
      level: 'error', file: s.file, line: locate(s.file, expectationPointer(e)) ?? locate(s.file, '/expect') ?? locate(s.file, '/name'),
      title: e.name, message: `${where}: expected ${e.expected}, got ${e.actual}\nReplay: ${s.replay}`,
    })
  }
  return out
}

/** The JSON pointer of the `expect` item an expectation judges (`outcome[2]` → `/expect/outcome/2`). */
export function expectationPointer(e: Pick<ExpectationResult, 'name'>): string {
  if (e.name === 'durable') return '/faults'
  const path = e.name.replace(/\[(\d+)\]/g, '.$1').split('.').filter((p) => p !== '')
  return `/expect/${path.join('/')}`
}

/** Workflow-command lines (one per annotation, each ending in a newline). */
export function renderGithubAnnotations(report: RunReport, locate?: LineLocator): string {
  return githubAnnotations(report, locate).map((a) => {
    const props = [`file=${escapeProperty(a.file)}`]
    if (a.line !== null) props.push(`line=${a.line}`)
    props.push(`title=${escapeProperty(a.title)}`)
    return `::${a.level} ${props.join(',')}::${escapeData(a.message)}\n`
  }).join('')
}

/** The Markdown job summary: totals, then each failed, errored and skipped scenario with its reasons. */
export function renderGithubSummary(report: RunReport, title = 'compaction-sim'): string {
  const { summary } = report
  const verdict = summary.failed + summary.error === 0 ? '✅' : '❌'
  const lines = [
    `## ${verdict} ${title}: ${summary.passed}/${summary.total} passed`,
    '',
    `Run \`${report.runId}\` · seed ${report.seed ?? 'per scenario'} · ${report.tool.name} ${report.tool.version}`,
    '',
    '| passed | failed | skipped | error |',
    '|---:|---:|---:|---:|',
    `| ${summary.passed} | ${summary.failed} | ${summary.skipped} | ${summary.error} |`,
    '',
  ]
  const bad = report.scenarios.filter((s) => s.status === 'failed' || s.status === 'error')
  if (bad.length > 0) {
    lines.push('### Failures', '', '| scenario | subject | what failed | replay |', '|---|---|---|---|')
    for (const s of bad) lines.push(`| \`${cell(s.file)}\` | ${cell(s.subject)} | ${cell(failureSummary(s))} | \`${cell(s.replay)}\` |`)
    lines.push('')
  }
  const skipped = report.scenarios.filter((s) => s.status === 'skipped')
  if (skipped.length > 0) {
    lines.push(`<details><summary>${skipped.length} skipped</summary>`, '')
    for (const s of skipped) lines.push(`- \`${cell(s.file)}\`: ${cell(s.skipReason ?? 'skipped')}`)
    lines.push('', '</details>', '')
  }
  return `${lines.join('\n')}\n`
}

function failureSummary(s: ScenarioReport): string {
  if (s.status === 'error') return `${s.errorKind ?? 'error'}: ${s.error ?? ''}`
  const ids = [...new Set(s.violations.map((v) => v.id))].sort()
  const failed = s.expectations.filter((e) => !e.passed && e.name !== 'invariants').map((e) => `${e.name}: expected ${e.expected}, got ${e.actual}`)
  return [...ids, ...failed].join('; ')
}

/** A Markdown table cell: no pipes, newlines or control characters. */
function cell(text: string): string {
  return printable(text).replaceAll('|', '\\|').replace(/\r?\n/g, ' ')
}

/** `text` without ANSI sequences and control characters other than CR and LF (a log's bytes are untrusted). */
function printable(text: string): string {
  // eslint-disable-next-line no-control-regex -- removing control characters is the point
  return stripVTControlCharacters(text).replace(/[\u0000-\u0009\u000b\u000c\u000e-\u001f\u007f]/g, '')
}

/** Escapes a workflow-command message (GitHub's rules: `%`, CR, LF; control characters are dropped). */
export function escapeData(text: string): string {
  return printable(text).replaceAll('%', '%25').replaceAll('\r', '%0D').replaceAll('\n', '%0A')
}

/** Escapes a workflow-command property value (the data rules plus `:` and `,`). */
export function escapeProperty(text: string): string {
  return escapeData(text).replaceAll(':', '%3A').replaceAll(',', '%2C')
}

/**
 * A `LineLocator` over scenario files read from disk (each parsed once): the line of the node at the
 * pointer, else of its nearest existing ancestor; null for an unreadable file. `read` is injectable for tests.
 */
export function scenarioLineLocator(read: (file: string) => string = (f) => readFileSync(f, 'utf8')): LineLocator {
  const cache = new Map<string, { doc: ReturnType<typeof parseDocument>; lines: LineCounter } | null>()
  return (file, pointer) => {
    if (!cache.has(file)) {
      try {
        const lines = new LineCounter()
        cache.set(file, { doc: parseDocument(read(file), { lineCounter: lines }), lines })
      } catch {
        cache.set(file, null) // unreadable or unparsable: annotations then carry no line
      }
    }
    const parsed = cache.get(file) ?? null
    if (parsed === null) return null
    const path = pointer.split('/').slice(1).map((p) => p.replaceAll('~1', '/').replaceAll('~0', '~'))
    for (let n = path.length; n >= 0; n--) {
      const node = nodeAt(parsed.doc.contents, path.slice(0, n))
      const offset = node?.range?.[0]
      if (offset !== undefined) return parsed.lines.linePos(offset).line
    }
    return null
  }
}

/** The node at `path` under `root` (map keys' nodes for the last map segment, so the line is the key's). */
function nodeAt(root: unknown, path: readonly string[]): Node | null {
  let node: unknown = root
  for (const [i, segment] of path.entries()) {
    if (isMap(node)) {
      const pair = node.items.find((p) => isScalar(p.key) && String(p.key.value) === segment)
      if (pair === undefined) return null
      node = i === path.length - 1 ? pair.key : pair.value
    } else if (isSeq(node) && /^\d+$/.test(segment)) {
      node = node.items[Number(segment)] ?? null
    } else {
      return null
    }
  }
  return (node ?? null) as Node | null
}

/** Where `writeGithubReport` writes: stdout for annotations, the environment for `GITHUB_STEP_SUMMARY`. */
export interface GithubSink {
  stdout: { write(text: string): unknown }
  env: Readonly<Record<string, string | undefined>>
}

/** Prints the annotations and, when `GITHUB_STEP_SUMMARY` is set, appends the job summary to that file. */
export function writeGithubReport(report: RunReport, sink: GithubSink, options: { locate?: LineLocator; title?: string } = {}): void {
  sink.stdout.write(renderGithubAnnotations(report, options.locate ?? scenarioLineLocator()))
  const summaryFile = sink.env['GITHUB_STEP_SUMMARY']
  if (summaryFile !== undefined && summaryFile !== '') appendFileSync(summaryFile, renderGithubSummary(report, options.title))
}
