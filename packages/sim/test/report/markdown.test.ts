/**
 * `renderMarkdown`: one summary row per scenario with the right number of cells whatever the strings
 * hold (`|`, line breaks, HTML, backticks), a details section only for failed/errored scenarios with
 * expectations, violations and the replay command, a time column only with `timings`, and stable bytes.
 */
import { describe, expect, it } from 'vitest'
import { markdownCell, markdownCode, markdownFence, renderMarkdown } from '../../src/report/index.ts'
import type { ScenarioReport } from '../../src/report/types.ts'
import { errored, failed, mixedReport, passed, reportOf, skipped } from './sample-report.ts'

/** The cells of a GFM table row: split at every `|` not directly after a backslash (GFM's rule, also in code spans). */
function cellsOf(row: string): string[] {
  const cells: string[] = []
  let current = ''
  let previous = ''
  for (const char of row.trim().slice(1, -1)) {
    if (char === '|' && previous !== '\\') {
      cells.push(current.trim())
      current = ''
    } else {
      current += char
    }
    previous = char
  }
  cells.push(current.trim())
  return cells
}

/** The rows of the first table after `heading` (header and alignment rows included). */
function tableAfter(markdown: string, heading: RegExp): string[] {
  const lines = markdown.split('\n')
  const start = lines.findIndex((line) => heading.test(line))
  const first = lines.findIndex((line, i) => i > start && line.startsWith('|'))
  const end = lines.findIndex((line, i) => i > first && !line.startsWith('|'))
  return lines.slice(first, end < 0 ? undefined : end)
}

describe('markdown escaping', () => {
  it('escapes cells: pipes, line breaks, HTML, emphasis and control characters', () => {
    expect(markdownCell('a|b\nc\r\nd')).toBe('a\\|b<br>c<br>d')
    expect(markdownCell('<img src=x> & *x* _y_ [l](u) `c`')).toBe('&lt;img src=x&gt; &amp; \\*x\\* \\_y\\_ \\[l\\](u) \\`c\\`')
    expect(markdownCell('back\\|slash')).toBe('back\\\\\\|slash')
    expect(markdownCell('esc\u001b[0m')).toBe('esc\\\\u001b\\[0m')
    expect(cellsOf(`| ${markdownCell('x|y\\|z\\')} | 2 |`)).toHaveLength(2)
  })

  it('makes code spans and fences longer than any backtick run inside', () => {
    expect(markdownCode('a.yaml')).toBe('`a.yaml`')
    expect(markdownCode('a`b``c')).toBe('```a`b``c```')
    expect(markdownCode('`x`')).toBe('`` `x` ``')
    expect(markdownCode('a|b\nc')).toBe('`a\\|b c`')
    expect(markdownCode('a\\|b')).toBe('`a\\\\|b`')
    expect(markdownCode('a|b', false)).toBe('`a|b`')
    expect(cellsOf(`| ${markdownCode('x\\|y|')} | ${markdownCell('x\\')} | 3 |`)).toHaveLength(3)
    expect(markdownFence('echo ```', 'sh')).toBe('````sh\necho ```\n````')
  })
})

describe('renderMarkdown', () => {
  const markdown = renderMarkdown(mixedReport)

  it('has a summary table with one row per scenario and the header cell count on every row', () => {
    const rows = tableAfter(markdown, /^# compaction-sim run/)
    expect(rows).toHaveLength(2 + mixedReport.scenarios.length)
    const header = cellsOf(rows[0] ?? '')
    expect(header).toEqual([
      'Status', 'Scenario', 'Subject', 'Seed', 'Brackets', 'Prunes', 'Offloads', 'Retries', 'Final pressure', 'Violations',
    ])
    for (const row of rows) expect(cellsOf(row)).toHaveLength(header.length)
    expect(cellsOf(rows[2] ?? '')).toEqual([
      '✅ passed', '`scenarios/smoke/basic.yaml` basic', 'reference', '7', '1', '2', '0', '1', '41.2% (4120/10000 tokens)', '0',
    ])
    expect(cellsOf(rows[4] ?? '').slice(0, 5)).toEqual([
      '⏭️ skipped', '`scenarios/policy/threshold-edge.yaml` threshold-edge', 'dsh', '42', '–',
    ])
  })

  it('details failed and errored scenarios only: expectations, violations, error and replay', () => {
    const sections = markdown.split(/^### /m).slice(1)
    expect(sections.map((s) => s.split('\n')[0])).toEqual([
      '❌ **failed**: `scenarios/policy/threshold-edge.yaml` threshold-edge',
      '💥 **error**: `bad.yaml` bad',
    ])
    const [failedSection = '', errorSection = ''] = sections
    const expectations = tableAfter(failedSection, /^\*\*Expectations\*\* \(1 of 2 failed\)$/)
    expect(expectations.slice(2).map(cellsOf)).toEqual([
      ['✅', '`outcome[0]`', 'completed', 'completed'],
      ['❌', '`counts.brackets`', '1', '0 \\| none'],
    ])
    const violations = tableAfter(failedSection, /^\*\*Violations\*\* \(1\)$/)
    expect(violations.slice(2).map(cellsOf)).toEqual([
      ['INV-12', '17', 'bracket a\\|b never closed<br>see &lt;seq 3&gt; &amp; \\\\u001b\\[31mred\\\\u001b\\[0m'],
    ])
    expect(failedSection).toContain(`**Replay**\n\n\`\`\`sh\n${failed.replay}\n\`\`\``)
    expect(errorSection).toContain('**Error** (input)\n\n```\nbad.yaml:3:5: /seed must be integer "x"\\u0000\n```')
    expect(errorSection).toContain(`\`\`\`sh\n${errored.replay}\n\`\`\``)
    expect(markdown).not.toContain(passed.replay)
    expect(markdown).not.toContain(skipped.replay)
  })

  it('has no details section and no time column when all passed without timings', () => {
    const text = renderMarkdown(reportOf([passed]))
    expect(text).not.toContain('## Failures')
    expect(text).not.toContain('Time (s)')
    expect(text).toContain('**1 scenario: 1 passed, 0 failed, 0 skipped, 0 error**')
  })

  it('adds a time column and the run duration only when timings are present', () => {
    const timed: ScenarioReport = { ...passed, timings: { ms: 1234 } }
    const text = renderMarkdown(reportOf([timed, failed], { timings: { ms: 2000 } }))
    const rows = tableAfter(text, /^# compaction-sim run/)
    expect(cellsOf(rows[0] ?? '').at(-1)).toBe('Time (s)')
    expect(rows.slice(2).map((row) => cellsOf(row).at(-1))).toEqual(['1.234', '–'])
    expect(text).toContain(' · 2.000 s')
  })

  it('renders the sample report', () => {
    expect(markdown).toMatchInlineSnapshot(`
      "# compaction-sim run \`run-0123abcd\`

      compaction-sim 0.1.0 · seed per scenario · **4 scenarios: 1 passed, 1 failed, 1 skipped, 1 error**

      | Status | Scenario | Subject | Seed | Brackets | Prunes | Offloads | Retries | Final pressure | Violations |
      | --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |
      | ✅ passed | \`scenarios/smoke/basic.yaml\` basic | reference | 7 | 1 | 2 | 0 | 1 | 41.2% (4120/10000 tokens) | 0 |
      | ❌ **failed** | \`scenarios/policy/threshold-edge.yaml\` threshold-edge | reference | 42 | 0 | 0 | 0 | 0 | 9000 tokens | 1 |
      | ⏭️ skipped | \`scenarios/policy/threshold-edge.yaml\` threshold-edge | dsh | 42 | – | – | – | – | – | 0 |
      | 💥 **error** | \`bad.yaml\` bad | reference | 3 | – | – | – | – | – | 0 |

      ## Failures

      ### ❌ **failed**: \`scenarios/policy/threshold-edge.yaml\` threshold-edge

      Subject \`reference\` · seed 42 · dialect \`dsh-0.1.0-rc.8\`

      **Expectations** (1 of 2 failed)

      | Result | Expectation | Expected | Actual |
      | --- | --- | --- | --- |
      | ✅ | \`outcome[0]\` | completed | completed |
      | ❌ | \`counts.brackets\` | 1 | 0 \\| none |

      **Violations** (1)

      | Invariant | Seq | Message |
      | --- | ---: | --- |
      | INV-12 | 17 | bracket a\\|b never closed<br>see &lt;seq 3&gt; &amp; \\\\u001b\\[31mred\\\\u001b\\[0m |

      **Replay**

      \`\`\`sh
      pnpm sim run scenarios/policy/threshold-edge.yaml --seed 42
      \`\`\`

      ### 💥 **error**: \`bad.yaml\` bad

      Subject \`reference\` · seed 3 · dialect \`seed\`

      **Error** (input)

      \`\`\`
      bad.yaml:3:5: /seed must be integer "x"\\u0000
      \`\`\`

      **Replay**

      \`\`\`sh
      pnpm sim run bad.yaml --seed 3
      \`\`\`
      "
    `)
  })

  it('is deterministic', () => {
    expect(renderMarkdown(structuredClone(mixedReport))).toBe(markdown)
    expect(markdown.endsWith('\n')).toBe(true)
  })
})
