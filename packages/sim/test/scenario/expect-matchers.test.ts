/**
 * The issue #15 matcher grammar at the input boundary: `/source/flags` regex literals, the `{ contains }` /
 * `{ matches }` objects inside `data`, the text content a `text` matcher reads, and the refusals — a bad regex,
 * an unknown rejection kind, `role`/`equals` without `message` — as `ScenarioError`s naming `file:line:column`
 * (exit 2 through `sim run`).
 */
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { partialMatch } from '../../src/run/expectations.ts'
import { ScenarioError } from '../../src/scenario/errors.ts'
import { parseScenario } from '../../src/scenario/load.ts'
import { parseRegexLiteral, textOf } from '../../src/scenario/string-matcher.ts'
import { normalise, runSim, tempDir } from '../cli/run-sim.ts'

const HEAD = `name: m
seed: 1
provider: {wire: openai, model: m, contextWindow: 4000}
transcript:
  inline:
    turns:
    - user: hi
      steps: [{reply: hello}]
expect:
`

function refusal(expectYaml: string): string {
  try {
    parseScenario(HEAD + expectYaml, 'x.yaml')
  } catch (error) {
    if (error instanceof ScenarioError) return error.message
    throw error
  }
  throw new Error('expected a ScenarioError')
}

describe('regex literals', () => {
  it('accepts /source/flags with the flags i, m, s, u', () => {
    expect(parseRegexLiteral('/fix(ed)? the bug/i')).toEqual({ source: 'fix(ed)? the bug', flags: 'i' })
    expect(parseRegexLiteral('/a\\/b/msu')).toEqual({ source: 'a\\/b', flags: 'msu' })
  })

  it('refuses a plain string, a stateful or repeated flag, an empty source and a syntax error', () => {
    expect(['fix the bug', '/x/g', '/x/ii', '//i', '/(unclosed/'].map((s) => Object.values(parseRegexLiteral(s))[0])).toMatchInlineSnapshot(`
      [
        ""fix the bug" is not a /source/flags regular expression",
        ""/x/g" has the flag "g"; allowed: i, m, s, u",
        ""/x/ii" repeats the flag "i"",
        ""//i" has an empty source",
        ""/(unclosed/" is not a valid regular expression: Invalid regular expression: /(unclosed/: Unterminated group",
      ]
    `)
  })
})

describe('data and text matchers', () => {
  it('a { contains } / { matches } object inside data tests a string and never matches a non-string', () => {
    expect(partialMatch({ model: { contains: 'mock' } }, { model: 'mock-8k' })).toBe(true)
    expect(partialMatch({ model: { matches: '/^MOCK-\\d+k$/i' } }, { model: 'mock-8k' })).toBe(true)
    expect(partialMatch({ model: { matches: '/^gpt/' } }, { model: 'mock-8k' })).toBe(false)
    expect(partialMatch({ model: { contains: 'mock' } }, { model: { contains: 'mock' } })).toBe(false)
    expect(partialMatch({ list: [{ contains: 'a' }, 'b'] }, { list: ['xax', 'b'] })).toBe(true)
  })

  it('the text content is every text block, at any depth, in order, joined by newlines (reasoning excluded)', () => {
    const data = {
      role: 'user',
      content: [
        { type: 'text', text: 'one' },
        { type: 'reasoning', text: 'hidden' },
        { type: 'tool-result', content: [{ type: 'text', text: 'two' }] },
      ],
    }
    expect(textOf(data)).toBe('one\ntwo')
    expect(textOf({ turn: 1 })).toBe('')
  })
})

describe('refusals name file:line:column', () => {
  it('a bad regex in an event text, in data, in a warning, a request and a summarized node', () => {
    expect(refusal(`  events:
  - {type: user/message, text: {matches: '/(x/'}}
  - {type: compaction/summary, data: {model: {matches: 'plain'}}}
  warnings:
  - {matches: '/x/g'}
  requests:
  - {matches: '/a/z'}
  summarized:
  - {first: {text: {matches: '/[/'}}}
`)).toMatchInlineSnapshot(`
  "x.yaml:11:42: /expect/events/0/text/matches "/(x/" is not a valid regular expression: Invalid regular expression: /(x/: Unterminated group
  x.yaml:12:56: /expect/events/1/data/model/matches "plain" is not a /source/flags regular expression
  x.yaml:14:15: /expect/warnings/0/matches "/x/g" has the flag "g"; allowed: i, m, s, u
  x.yaml:16:15: /expect/requests/0/matches "/a/z" has the flag "z"; allowed: i, m, s, u
  x.yaml:18:30: /expect/summarized/0/first/text/matches "/[/" is not a valid regular expression: Invalid regular expression: /[/: Unterminated character class"
`)
  })

  it('an unknown rejection kind, and a request test without its message position', () => {
    expect(refusal(`  rejections: {overflow: 1, pairing: {min: 1}}
`)).toMatchInlineSnapshot(`"x.yaml:10:16: /expect/rejections has unknown key "overflow"; allowed keys: window, pairing, images, maxOutput, fault, unclassified, total"`)
    expect(refusal(`  requests:
  - {role: system, equals: first, every: true, absent: true}
`)).toMatchInlineSnapshot(`
  "x.yaml:11:5: /expect/requests/0 sets both every and absent; choose one
  x.yaml:11:12: /expect/requests/0/role tests the role of a message: give message (its position)
  x.yaml:11:28: /expect/requests/0/equals compares one message: give message (its position)"
`)
    expect(refusal(`  warnings:
  - {contains: a, matches: '/b/'}
`)).toMatchInlineSnapshot(`"x.yaml:11:5: /expect/warnings/0 must have exactly one of the keys "contains" or "matches""`)
  })
})

describe('sim run', () => {
  let tmp: { dir: string; cleanup: () => Promise<void> }
  beforeAll(async () => { tmp = await tempDir() })
  afterAll(async () => { await tmp.cleanup() })

  it('exits 2 on a bad regex, naming file:line:column and the reason', async () => {
    const file = join(tmp.dir, 'bad-regex.yaml')
    await writeFile(file, `${HEAD}  events:\n  - {type: user/message, text: {matches: '/fix(/'}}\n`)
    const run = await runSim(['run', file, '--out-dir', join(tmp.dir, 'out')])
    expect(run.exitCode).toBe(2)
    expect(normalise(run.stderr, { [tmp.dir]: '<tmp>' })).toContain(
      '<tmp>/bad-regex.yaml:11:42: /expect/events/0/text/matches "/fix(/" is not a valid regular expression',
    )
  }, 60_000)
})
