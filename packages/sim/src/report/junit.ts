/**
 * `junit.xml` for CI test UIs (GitLab, Jenkins, CircleCI, Azure; design §7), a pure function of the
 * `RunReport`. Mapping: `<testsuites>` → one `<testsuite>` per scenario folder (in first-appearance order)
 * → one `<testcase classname="<file>" name="<scenario> [subject=… seed=…]" file="<file>">` per scenario,
 * holding `<failure>` (failed expectations and violations; the body ends with the replay command),
 * `<skipped>` or `<error>`. No `time` or `timestamp` attribute unless the report carries `timings`.
 * XML 1.0: characters it forbids even as references (most C0 controls, lone surrogates, U+FFFE/U+FFFF)
 * are written as visible `\uXXXX` text.
 */
import { assertNever } from '@compaction-sim/core'
import {
  describeExpectation, describeViolation, escapeCodeUnits, failedExpectations, problemsOf, runSeed, seconds, truncate,
} from './text.ts'
import type { RunReport, ScenarioReport } from './types.ts'

/** Characters XML 1.0 does not allow anywhere (not even as `&#…;`), plus lone UTF-16 surrogates. */
function xmlForbidden(text: string): (code: number, index: number) => boolean {
  const isHigh = (code: number): boolean => code >= 0xd800 && code <= 0xdbff
  const isLow = (code: number): boolean => code >= 0xdc00 && code <= 0xdfff
  return (code, index) => {
    if (code < 0x20) return code !== 0x09 && code !== 0x0a && code !== 0x0d
    if (code === 0xfffe || code === 0xffff) return true
    if (isHigh(code)) return !isLow(text.charCodeAt(index + 1))
    if (isLow(code)) return !isHigh(text.charCodeAt(index - 1))
    return false
  }
}

/** Character data: `&`, `<`, `>` as entities, forbidden characters as visible escapes. */
export function xmlText(text: string): string {
  return escapeCodeUnits(text, xmlForbidden(text)).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')
}

/** An attribute value (for double quotes): as `xmlText`, plus quotes, and tab/CR/LF as references so parsers keep them. */
export function xmlAttribute(text: string): string {
  return xmlText(text)
    .replace(/"/g, '&quot;').replace(/'/g, '&apos;')
    .replace(/\t/g, '&#9;').replace(/\n/g, '&#10;').replace(/\r/g, '&#13;')
}

/** Longest `message` attribute, in characters: the full list is in the element's body. */
export const JUNIT_MESSAGE_CHARS_MAX = 1000

interface Suite {
  name: string
  cases: ScenarioReport[]
}

/** The POSIX folder of a scenario file (`.` for a bare file name). */
function folderOf(file: string): string {
  const slash = file.lastIndexOf('/')
  return slash <= 0 ? (slash === 0 ? '/' : '.') : file.slice(0, slash)
}

function suitesOf(scenarios: readonly ScenarioReport[]): Suite[] {
  const byName = new Map<string, Suite>()
  for (const scenario of scenarios) {
    const name = folderOf(scenario.file)
    let suite = byName.get(name)
    if (suite === undefined) {
      suite = { name, cases: [] }
      byName.set(name, suite)
    }
    suite.cases.push(scenario)
  }
  return [...byName.values()]
}

interface Tally {
  tests: number
  failures: number
  errors: number
  skipped: number
}

function tally(scenarios: readonly ScenarioReport[]): Tally {
  const t: Tally = { tests: scenarios.length, failures: 0, errors: 0, skipped: 0 }
  for (const s of scenarios) {
    switch (s.status) {
      case 'passed': break
      case 'failed': t.failures += 1; break
      case 'error': t.errors += 1; break
      case 'skipped': t.skipped += 1; break
      default: assertNever(s.status, 'scenario status')
    }
  }
  return t
}

const attrs = (pairs: ReadonlyArray<readonly [string, string | undefined]>): string =>
  pairs.filter((pair): pair is readonly [string, string] => pair[1] !== undefined).map(([k, v]) => ` ${k}="${xmlAttribute(v)}"`).join('')

const tallyAttrs = (t: Tally): Array<[string, string]> =>
  [['tests', String(t.tests)], ['failures', String(t.failures)], ['errors', String(t.errors)], ['skipped', String(t.skipped)]]

/** Sum of the scenarios' `timings.ms`, or undefined when none of them was timed. */
function suiteMs(scenarios: readonly ScenarioReport[]): number | undefined {
  const timed = scenarios.filter((s) => s.timings !== undefined)
  return timed.length === 0 ? undefined : timed.reduce((sum, s) => sum + (s.timings?.ms ?? 0), 0)
}

function message(scenario: ScenarioReport): string {
  return truncate(problemsOf(scenario).join('; '), JUNIT_MESSAGE_CHARS_MAX)
}

function failureBody(scenario: ScenarioReport): string {
  const lines: string[] = []
  if (scenario.status === 'error') lines.push(`error: ${scenario.error ?? 'the scenario could not run'}`)
  for (const e of failedExpectations(scenario)) lines.push(`expectation ${describeExpectation(e)}`)
  for (const v of scenario.violations) lines.push(`violation ${describeViolation(v)}`)
  lines.push(`seed: ${scenario.seed}`, `Replay: ${scenario.replay}`)
  return xmlText(lines.join('\n'))
}

function testcase(scenario: ScenarioReport): string[] {
  const open = `    <testcase${attrs([
    ['classname', scenario.file],
    ['name', `${scenario.name} [subject=${scenario.subject} seed=${scenario.seed}]`],
    ['file', scenario.file],
    ['time', scenario.timings === undefined ? undefined : seconds(scenario.timings.ms)],
  ])}`
  switch (scenario.status) {
    case 'passed':
      return [`${open}/>`]
    case 'skipped':
      return [`${open}>`, `      <skipped${attrs([['message', scenario.skipReason ?? 'skipped']])}/>`, '    </testcase>']
    case 'failed': {
      const failure = `<failure${attrs([['message', message(scenario)], ['type', 'failed']])}>${failureBody(scenario)}</failure>`
      return [`${open}>`, `      ${failure}`, '    </testcase>']
    }
    case 'error': {
      const type = scenario.errorKind ?? 'error'
      const error = `<error${attrs([['message', message(scenario)], ['type', type]])}>${failureBody(scenario)}</error>`
      return [`${open}>`, `      ${error}`, '    </testcase>']
    }
    default:
      return assertNever(scenario.status, 'scenario status')
  }
}

/** The report as JUnit XML (UTF-8, ending in a newline). Deterministic: equal reports give equal bytes. */
export function renderJunit(report: RunReport): string {
  const total = tally(report.scenarios)
  const lines = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites${attrs([
      ['name', report.tool.name], ...tallyAttrs(total), ['time', report.timings === undefined ? undefined : seconds(report.timings.ms)],
    ])}>`,
  ]
  for (const suite of suitesOf(report.scenarios)) {
    const ms = suiteMs(suite.cases)
    const time = ms === undefined ? undefined : seconds(ms)
    lines.push(`  <testsuite${attrs([['name', suite.name], ...tallyAttrs(tally(suite.cases)), ['time', time]])}>`)
    lines.push('    <properties>')
    lines.push(`      <property${attrs([['name', 'runId'], ['value', report.runId]])}/>`)
    lines.push(`      <property${attrs([['name', 'seed'], ['value', runSeed(report)]])}/>`)
    lines.push(`      <property${attrs([['name', 'version'], ['value', report.tool.version]])}/>`)
    lines.push('    </properties>')
    for (const scenario of suite.cases) lines.push(...testcase(scenario))
    lines.push('  </testsuite>')
  }
  lines.push('</testsuites>')
  return `${lines.join('\n')}\n`
}
