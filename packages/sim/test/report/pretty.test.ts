/**
 * `renderPretty`: the CI layout is exactly one line per scenario and a summary; the terminal layout adds
 * indented details; neither prints `Replay:` (the commands print it once per failure on stderr); colour
 * off means no escape sequence at all (even when a checker
 * message carries one), colour on differs from it only by SGR sequences; output is deterministic.
 */
import { stripVTControlCharacters } from 'node:util'
import { describe, expect, it } from 'vitest'
import { PRETTY_HEADLINE_CHARS_MAX, renderPretty } from '../../src/report/index.ts'
import { failed, mixedReport, passed, reportOf } from './sample-report.ts'

const ESC = '\u001b'
const STATUS_LINE = /^(PASS |FAIL |SKIP |ERROR) /

describe('renderPretty', () => {
  it('CI layout: header with the seed, one line per scenario, then the summary', () => {
    expect(renderPretty(mixedReport, { color: false, ci: true })).toMatchInlineSnapshot(`
      "compaction-sim 0.1.0 · run run-0123abcd · seed per scenario
      PASS  scenarios/smoke/basic.yaml basic [reference seed=7] brackets=1 prunes=2 offloads=0 retries=1 pressure=41.2% (4120/10000 tokens)
      FAIL  scenarios/policy/threshold-edge.yaml threshold-edge [reference seed=42] brackets=0 prunes=0 offloads=0 retries=0 pressure=9000 tokens violations=1 — counts.brackets: expected 1, got 0 | none (+1 more)
      SKIP  scenarios/policy/threshold-edge.yaml threshold-edge [dsh seed=42] — subject dsh lacks pruning (§14)
      ERROR bad.yaml bad [reference seed=3] — bad.yaml:3:5: /seed must be integer "x"\\u0000
      Summary: 4 scenarios: 1 passed, 1 failed, 1 skipped, 1 error
      "
    `)
  })

  it('CI layout has exactly one status line per scenario, in report order, and no Replay line (stderr has it)', () => {
    const lines = renderPretty(mixedReport, { color: false, ci: true }).trimEnd().split('\n')
    const statusLines = lines.filter((line) => STATUS_LINE.test(line))
    expect(statusLines.map((line) => line.slice(0, 5).trim())).toEqual(['PASS', 'FAIL', 'SKIP', 'ERROR'])
    expect(lines.filter((line) => line.includes('Replay'))).toEqual([])
    expect(lines).toHaveLength(1 + 4 + 1)
    expect(lines.at(-1)).toMatch(/^Summary: /)
  })

  it('keeps a scenario on one line whatever its messages contain, and truncates a long first problem', () => {
    const message = `line1\nline2\r\n${'x'.repeat(400)}`
    const long = { ...failed, violations: [{ id: 'INV-03' as const, seq: 1, message }], expectations: [] }
    const lines = renderPretty(reportOf([long]), { color: false, ci: true }).trimEnd().split('\n')
    expect(lines).toHaveLength(1 + 1 + 1) // header, the scenario, the summary
    const why = lines[1]?.split(' — ')[1] ?? ''
    expect([...why]).toHaveLength(PRETTY_HEADLINE_CHARS_MAX)
    expect(why).toMatch(/^INV-03 @seq 1: line1 line2 x+…$/)
  })

  it('terminal layout lists failed expectations and violations under the scenario (no Replay line)', () => {
    expect(renderPretty(mixedReport, { color: false, ci: false })).toMatchInlineSnapshot(`
      "compaction-sim 0.1.0 · run run-0123abcd · seed per scenario
      PASS  scenarios/smoke/basic.yaml basic [reference seed=7] brackets=1 prunes=2 offloads=0 retries=1 pressure=41.2% (4120/10000 tokens)
      FAIL  scenarios/policy/threshold-edge.yaml threshold-edge [reference seed=42] brackets=0 prunes=0 offloads=0 retries=0 pressure=9000 tokens violations=1
        ✗ counts.brackets: expected 1, got 0 | none
        ✗ INV-12 @seq 17: bracket a|b never closed see <seq 3> & \\u001b[31mred\\u001b[0m
      SKIP  scenarios/policy/threshold-edge.yaml threshold-edge [dsh seed=42] — subject dsh lacks pruning (§14)
      ERROR bad.yaml bad [reference seed=3]
        input error bad.yaml:3:5: /seed must be integer "x"\\u0000

      Summary: 4 scenarios: 1 passed, 1 failed, 1 skipped, 1 error
      "
    `)
  })

  it.each([true, false])('with colour off there is no escape sequence; with colour on only SGR sequences are added (ci=%s)', (ci) => {
    const plain = renderPretty(mixedReport, { color: false, ci })
    const colored = renderPretty(mixedReport, { color: true, ci })
    expect(plain).not.toContain(ESC)
    expect(colored).toContain(`${ESC}[`)
    expect(stripVTControlCharacters(colored)).toBe(plain)
  })

  it('prints the override seed in the header and a green summary when nothing failed', () => {
    const report = reportOf([passed], { seed: 99 })
    const text = renderPretty(report, { color: true, ci: true })
    expect(text.split('\n')[0]).toContain('seed 99')
    expect(text).toContain(`${ESC}[32m${ESC}[1mSummary: 1 scenario: 1 passed, 0 failed, 0 skipped, 0 error`)
    expect(text).not.toContain('Replay:')
  })

  it('is deterministic and does not modify its input', () => {
    const frozen = structuredClone(mixedReport)
    const before = JSON.stringify(frozen)
    expect(renderPretty(frozen, { color: true, ci: false })).toBe(renderPretty(structuredClone(mixedReport), { color: true, ci: false }))
    expect(JSON.stringify(frozen)).toBe(before)
  })
})
