/**
 * `renderJunit`: the XML is well-formed (read back with a strict little parser) even when strings carry
 * characters XML 1.0 forbids; the tests/failures/errors/skipped attributes agree with the scenarios at
 * every level; failures list expectations, violations and the replay line; no time attribute appears
 * unless the report has `timings`; output is deterministic.
 */
import { describe, expect, it } from 'vitest'
import { renderJunit, xmlAttribute, xmlText } from '../../src/report/index.ts'
import type { ScenarioReport } from '../../src/report/types.ts'
import { errored, failed, mixedReport, passed, reportOf, skipped } from './sample-report.ts'
import { elementsNamed, parseXml, type XmlElement } from './xml.ts'

const counts = (element: XmlElement | undefined): Record<string, string | undefined> => ({
  tests: element?.attributes['tests'], failures: element?.attributes['failures'], errors: element?.attributes['errors'],
  skipped: element?.attributes['skipped'],
})

describe('the test XML reader', () => {
  it.each([
    ['<a><b></a>', /closes/],
    ['<a>&foo;</a>', /unknown entity/],
    ['<a>x & y</a>', /raw &/],
    ['<a>\u0001</a>', /forbidden character/],
    ['<a>&#x1b;</a>', /bad reference/],
    ['<a x="1" x="2"/>', /duplicate attribute/],
    ['<a x="<"/>', /raw </],
    ['<a/><b/>', /after the root/],
    ['<a>', /unclosed/],
  ])('rejects %j', (source, error) => {
    expect(() => parseXml(source)).toThrow(error)
  })

  it('decodes entities and references', () => {
    const root = parseXml('<?xml version="1.0"?>\n<a k="x&#10;&quot;y&apos;">&lt;&amp;&gt;&#x263A;</a>')
    expect(root).toEqual({ name: 'a', attributes: { k: 'x\n"y\'' }, children: [], text: '<&>☺' })
  })
})

describe('xml escaping', () => {
  it('escapes markup and makes forbidden characters visible', () => {
    expect(xmlText('a<b>&c ]]>')).toBe('a&lt;b&gt;&amp;c ]]&gt;')
    expect(xmlText('nul\u0000 esc\u001b bell\u0007 ffff\uffff tab\tnl\n')).toBe('nul\\u0000 esc\\u001b bell\\u0007 ffff\\uffff tab\tnl\n')
    expect(xmlText('lone \ud800 and \udc00 pair \ud83d\ude00')).toBe('lone \\ud800 and \\udc00 pair \ud83d\ude00')
    expect(xmlAttribute('"q" \'a\'\t\r\n')).toBe('&quot;q&quot; &apos;a&apos;&#9;&#13;&#10;')
  })
})

describe('renderJunit', () => {
  const xml = renderJunit(mixedReport)
  const root = parseXml(xml)

  it('is well-formed and counts tests, failures, errors and skipped at every level', () => {
    expect(root.name).toBe('testsuites')
    expect(counts(root)).toEqual({ tests: '4', failures: '1', errors: '1', skipped: '1' })
    const suites = root.children
    expect(suites.map((s) => [s.name, s.attributes['name']])).toEqual([
      ['testsuite', 'scenarios/smoke'], ['testsuite', 'scenarios/policy'], ['testsuite', '.'],
    ])
    expect(suites.map(counts)).toEqual([
      { tests: '1', failures: '0', errors: '0', skipped: '0' },
      { tests: '2', failures: '1', errors: '0', skipped: '1' },
      { tests: '1', failures: '0', errors: '1', skipped: '0' },
    ])
    for (const suite of suites) {
      expect(elementsNamed(suite, 'testcase')).toHaveLength(Number(suite.attributes['tests']))
      expect(elementsNamed(suite, 'failure')).toHaveLength(Number(suite.attributes['failures']))
      expect(elementsNamed(suite, 'error')).toHaveLength(Number(suite.attributes['errors']))
      expect(elementsNamed(suite, 'skipped')).toHaveLength(Number(suite.attributes['skipped']))
    }
  })

  it('names each test case by file, scenario, subject and seed', () => {
    expect(elementsNamed(root, 'testcase').map((c) => c.attributes)).toEqual([
      { classname: passed.file, name: 'basic [subject=reference seed=7]', file: passed.file },
      { classname: failed.file, name: 'threshold-edge [subject=reference seed=42]', file: failed.file },
      { classname: skipped.file, name: 'threshold-edge [subject=dsh seed=42]', file: skipped.file },
      { classname: errored.file, name: 'bad [subject=reference seed=3]', file: errored.file },
    ])
  })

  it('lists failed expectations and violations in the failure, with the replay line in its body', () => {
    const [failure] = elementsNamed(root, 'failure')
    expect(failure?.attributes['message']).toBe(
      'counts.brackets: expected 1, got 0 | none; INV-12 @seq 17: bracket a|b never closed\nsee <seq 3> & \\u001b[31mred\\u001b[0m',
    )
    expect(failure?.text.split('\n')).toEqual([
      'expectation counts.brackets: expected 1, got 0 | none',
      'violation INV-12 @seq 17: bracket a|b never closed',
      'see <seq 3> & \\u001b[31mred\\u001b[0m',
      'seed: 42',
      `Replay: ${failed.replay}`,
    ])
  })

  it('gives the skip reason and the error with its kind', () => {
    expect(elementsNamed(root, 'skipped')[0]?.attributes).toEqual({ message: skipped.skipReason })
    const [error] = elementsNamed(root, 'error')
    expect(error?.attributes).toEqual({ message: 'bad.yaml:3:5: /seed must be integer "x"\\u0000', type: 'input' })
    expect(error?.text).toContain(`Replay: ${errored.replay}`)
  })

  it('survives every character XML 1.0 forbids, in names, messages and bodies', () => {
    const nasty = 'n\u0000\u0008\u000b\u000c\u001f\ufffe\uffff\ud800"<&>]]>\'\t\r\n'
    const scenario: ScenarioReport = { ...failed, name: nasty, violations: [{ id: 'INV-01', seq: 0, message: nasty }], replay: nasty }
    const parsed = parseXml(renderJunit(reportOf([scenario])))
    const [testcase] = elementsNamed(parsed, 'testcase')
    expect(testcase?.attributes['name']).toBe(
      'n\\u0000\\u0008\\u000b\\u000c\\u001f\\ufffe\\uffff\\ud800"<&>]]>\'\t\r\n [subject=reference seed=42]',
    )
  })

  it('has no time or timestamp attribute without timings', () => {
    expect(xml).not.toMatch(/\btime(stamp)?=/)
  })

  it('reports seconds at every level when timings are present', () => {
    const timed = reportOf([{ ...passed, timings: { ms: 1500 } }, { ...failed, file: 'scenarios/smoke/x.yaml', timings: { ms: 25 } }], {
      timings: { ms: 1600 },
    })
    const parsed = parseXml(renderJunit(timed))
    expect(parsed.attributes['time']).toBe('1.600')
    expect(parsed.children.map((s) => s.attributes['time'])).toEqual(['1.525'])
    expect(elementsNamed(parsed, 'testcase').map((c) => c.attributes['time'])).toEqual(['1.500', '0.025'])
  })

  it('is deterministic and carries the run id and seed as suite properties', () => {
    expect(renderJunit(structuredClone(mixedReport))).toBe(xml)
    const properties = elementsNamed(root.children[0] ?? root, 'property').map((p) => [p.attributes['name'], p.attributes['value']])
    expect(properties).toEqual([['runId', 'run-0123abcd'], ['seed', 'per scenario'], ['version', '0.1.0']])
  })
})
