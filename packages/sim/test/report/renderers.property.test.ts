/**
 * Properties of the renderers over arbitrary strings (any UTF-16, lone surrogates and control characters
 * included) in every free-text field of a report:
 * - JUnit stays well-formed XML and its counts equal the status tallies;
 * - every Markdown table row has as many cells as its header, and the summary table one row per scenario;
 * - pretty CI output has exactly one status line per scenario and, with colour off, no ESC at all;
 * - all three are deterministic (equal input → equal bytes).
 * Seeds follow the project convention (`FC_SEED`, printed once).
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { fcParams } from '../../../core/test/support/seed.ts'
import { renderJunit, renderMarkdown, renderPretty } from '../../src/report/index.ts'
import type { RunReport, ScenarioReport, ScenarioStatus } from '../../src/report/types.ts'
import { passed, reportOf } from './sample-report.ts'
import { elementsNamed, parseXml } from './xml.ts'

/** Any UTF-16 text, biased towards the characters the escapers care about. */
const text = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({ unit: fc.constantFrom('|', '\\', '`', '\n', '\r', '<', '&', ']', '>', '\u001b', '\u0000', '\ud800', 'a', ' '), maxLength: 20 }),
)
const status = fc.constantFrom<ScenarioStatus>('passed', 'failed', 'skipped', 'error')

const scenario: fc.Arbitrary<ScenarioReport> = fc.record({
  status, file: text, name: text, subject: text, replay: text, reason: text, message: text, expected: text, actual: text, seed: fc.nat(),
}).map((r) => ({
  ...passed,
  status: r.status,
  file: r.file,
  name: r.name,
  subject: r.subject,
  seed: r.seed,
  replay: r.replay,
  ...(r.status === 'skipped' ? { skipReason: r.reason } : {}),
  ...(r.status === 'error' ? { error: r.reason } : {}),
  violations: r.status === 'failed' ? [{ id: 'INV-07', seq: r.seed, message: r.message }] : [],
  expectations: [{ name: r.message, passed: r.status !== 'failed', expected: r.expected, actual: r.actual }],
}))

const report: fc.Arbitrary<RunReport> = fc.tuple(fc.array(scenario, { maxLength: 6 }), text)
  .map(([scenarios, runId]) => ({ ...reportOf(scenarios), runId }))

/** Cells of a GFM table row: split at every `|` not directly after a backslash (GFM's rule, also in code spans). */
function cellCount(row: string): number {
  let count = 1
  let previous = ''
  for (const char of row.trim().slice(1, -1)) {
    if (char === '|' && previous !== '\\') count += 1
    previous = char
  }
  return count
}

describe('renderers over arbitrary strings', () => {
  it('junit is well-formed and counts the statuses', () => {
    fc.assert(fc.property(report, (r) => {
      const xml = renderJunit(r)
      const root = parseXml(xml)
      expect(root.attributes['tests']).toBe(String(r.summary.total))
      expect(root.attributes['failures']).toBe(String(r.summary.failed))
      expect(root.attributes['errors']).toBe(String(r.summary.error))
      expect(root.attributes['skipped']).toBe(String(r.summary.skipped))
      expect(elementsNamed(root, 'testcase')).toHaveLength(r.scenarios.length)
      expect(renderJunit(structuredClone(r))).toBe(xml)
    }), fcParams({ numRuns: 100 }))
  }, 60_000)

  it('markdown tables keep their shape', () => {
    fc.assert(fc.property(report, (r) => {
      const markdown = renderMarkdown(r)
      const lines = markdown.split('\n')
      let header = 0
      for (const [i, line] of lines.entries()) {
        if (!line.startsWith('|')) continue
        if (i === 0 || !lines[i - 1]?.startsWith('|')) header = cellCount(line)
        expect(cellCount(line)).toBe(header)
      }
      const summaryRows = lines.slice(lines.findIndex((l) => l.startsWith('| Status |'))).findIndex((l) => !l.startsWith('|'))
      expect(summaryRows).toBe(2 + r.scenarios.length)
      expect(renderMarkdown(structuredClone(r))).toBe(markdown)
    }), fcParams({ numRuns: 100 }))
  }, 60_000)

  it('pretty CI output has one line per scenario and no ESC with colour off', () => {
    fc.assert(fc.property(report, (r) => {
      const out = renderPretty(r, { color: false, ci: true })
      expect(out).not.toContain('\u001b')
      const lines = out.trimEnd().split('\n')
      // Header, one line per scenario, the summary: no Replay lines (the commands print them on stderr).
      expect(lines).toHaveLength(1 + r.scenarios.length + 1)
      expect(lines.filter((l) => /^(PASS |FAIL |SKIP |ERROR) /.test(l))).toHaveLength(r.scenarios.length)
      expect(renderPretty(structuredClone(r), { color: false, ci: true })).toBe(out)
    }), fcParams({ numRuns: 100 }))
  }, 60_000)
})
