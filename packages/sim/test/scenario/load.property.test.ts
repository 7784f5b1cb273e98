/**
 * Fuzzing `parseScenario` (design §8): on any text it returns a scenario or throws a `ScenarioError` whose
 * every line names the file (and a `line:column` inside the text when it has one), never another
 * exception, never a hang; a generated valid scenario survives a YAML round trip and resolves. Seeds
 * follow the project convention (`FC_SEED`, printed once).
 */
import fc from 'fast-check'
import { stringify } from 'yaml'
import { describe, expect, it } from 'vitest'
import { fcParams } from '../../../core/test/support/seed.ts'
import { ScenarioError } from '../../src/scenario/errors.ts'
import { parseScenario } from '../../src/scenario/load.ts'
import { resolveScenario } from '../../src/scenario/resolve.ts'
import { FAULT_KINDS, type Scenario } from '../../src/scenario/types.ts'

const FILE = 'fuzz/x.yaml'

const VALID = `name: fuzz
seed: 9
provider: { wire: deepseek, model: m, contextWindow: 1000 }
policy: { thresholdRatio: 0.5, retainTokens: 40 }
pruner: { thresholdChars: 300, headChars: 100, tailChars: 50 }
transcript:
  inline:
    turns:
      - user: hi
        steps:
          - reply: { text: look, toolCalls: [{ name: ls, arguments: { dir: . } }] }
            toolResults: [{ content: "a b c" }]
          - reply: done
faults:
  - { kind: FAULT-01, when: { requestIndex: 1 }, params: { delivery: after-chunks, chunks: 2 } }
expect:
  outcome: [completed]
  counts: { brackets: { min: 0, max: 2 } }
  events: [turn/start, { type: turn/end, data: { turn: 1 } }]
`

/** Asserts the contract: a Scenario, or a ScenarioError whose issues are all located inside `text`. */
function checkContract(text: string): void {
  let scenario: Scenario
  try {
    scenario = parseScenario(text, FILE)
  } catch (error) {
    if (!(error instanceof ScenarioError)) throw error
    expect(error.issues.length).toBeGreaterThan(0)
    const lines = text.split('\n').length
    for (const issue of error.issues) {
      if (issue.code === 'TOO_LARGE' || issue.line === undefined) continue
      expect(issue.line).toBeGreaterThanOrEqual(1)
      expect(issue.line).toBeLessThanOrEqual(lines)
      expect(issue.column).toBeGreaterThanOrEqual(1)
    }
    for (const line of error.message.split('\n')) expect(line.startsWith(`${FILE}:`)).toBe(true)
    return
  }
  // What parses also resolves: the loader already ran every rule of resolveScenario.
  expect(resolveScenario(scenario, { file: FILE }).name).toBe(scenario.name)
}

const yamlToken = fc.constantFrom(
  'name:', 'seed:', 'provider:', 'wire: openai', 'model: m', 'contextWindow:', 'transcript:', 'inline:', 'turns:', 'user: hi',
  'steps:', 'reply: ok', 'faults:', 'kind: FAULT-01', 'expect:', 'counts:', '__proto__:', 'constructor:', '<<: *a', '&a', '*a', '*b',
  '!!str', '!!binary', '!foo', '!!map', '? ', '- ', '-', ':', ',', '[', ']', '{', '}', '"', "'", '#', '|', '>-', '\n', '\n  ', '\n    ',
  '  ', '\t', '1', '-1', '0x1F', '1e400', '.inf', '-.nan', 'null', '~', 'true', 'FALSE', '%YAML 1.2\n', '---\n', '...\n', '\uFEFF',
  '\u0000', '\r\n', 'é', '🙂', '\\', '@', '`',
)

/** Random edits of the valid document: delete, duplicate or replace a slice. */
const mutatedValid = fc.array(
  fc.record({ at: fc.nat(VALID.length), length: fc.nat(12), insert: fc.oneof(fc.string({ maxLength: 8 }), yamlToken) }),
  { minLength: 1, maxLength: 6 },
).map((edits) => edits.reduce((text, { at, length, insert }) => text.slice(0, at) + insert + text.slice(at + length), VALID))

describe('parseScenario never throws anything but ScenarioError', () => {
  it('on random strings', () => {
    fc.assert(fc.property(fc.string({ unit: 'binary', maxLength: 400 }), checkContract), fcParams({ numRuns: 300 }))
  }, 60_000)

  it('on YAML-ish token soup', () => {
    fc.assert(fc.property(fc.array(yamlToken, { maxLength: 80 }).map((t) => t.join('')), checkContract), fcParams({ numRuns: 400 }))
  }, 120_000)

  it('on random edits of a valid scenario', () => {
    expect(() => checkContract(VALID)).not.toThrow()
    expect(parseScenario(VALID, FILE).name).toBe('fuzz')
    fc.assert(fc.property(mutatedValid, checkContract), fcParams({ numRuns: 400 }))
  }, 600_000)

  it('on arbitrary JSON values serialised as YAML, at the root and in place of known keys', () => {
    const anyValue = fc.jsonValue({ maxDepth: 4 })
    const doc = fc.record({
      name: fc.oneof(fc.constant('ok'), anyValue), seed: fc.oneof(fc.nat(), anyValue), provider: anyValue,
      transcript: fc.oneof(anyValue, fc.constant({ generate: { generator: 'g', turns: 1 } })), faults: anyValue, expect: anyValue,
    }, { requiredKeys: [] })
    fc.assert(fc.property(fc.oneof(anyValue, doc), (value) => checkContract(stringify(value))), fcParams({ numRuns: 300 }))
  }, 180_000)

  it('on deep nesting and alias chains', () => {
    const deep = fc.tuple(fc.integer({ min: 1, max: 3000 }), fc.constantFrom('[', '{a: ', '- ', '  - ')).map(([n, open]) => open.repeat(n))
    const aliases = fc.integer({ min: 1, max: 8 }).map((levels) => Array.from({ length: levels }, (_, i) =>
      i === 0 ? 'a0: &a0 [x, x, x, x, x, x, x, x]' : `a${i}: &a${i} [${Array(8).fill(`*a${i - 1}`).join(', ')}]`).join('\n'))
    fc.assert(fc.property(fc.oneof(deep, aliases), checkContract), fcParams({ numRuns: 60 }))
  }, 120_000)
})

/**
 * Fault kinds a scenario may declare on their own. FAULT-41 needs a scripted capacity report, FAULT-43 an invalid
 * policy and FAULT-66 a `manual: prune` action; resolution refuses them without (config-faults and
 * persistence-faults tests cover those rules).
 */
const STANDALONE_KINDS = FAULT_KINDS.filter((k) => !['FAULT-41', 'FAULT-43', 'FAULT-66'].includes(k))

describe('valid scenarios survive a YAML round trip', () => {
  const scenario: fc.Arbitrary<Scenario> = fc.record({
    name: fc.stringMatching(/^[a-z0-9][a-z0-9-]{0,20}$/),
    seed: fc.nat({ max: 4294967295 }),
    provider: fc.record({
      wire: fc.constantFrom('openai' as const, 'deepseek' as const),
      model: fc.string({ minLength: 1, maxLength: 20 }),
      contextWindow: fc.integer({ min: 1000, max: 1_000_000 }),
    }),
    policy: fc.record({ thresholdRatio: fc.double({ min: 0.5, max: 1, noNaN: true }), retainRatio: fc.double({ min: 0.01, max: 0.4, noNaN: true }) }),
    transcript: fc.record({
      inline: fc.record({
        turns: fc.array(fc.record({ user: fc.string({ maxLength: 40 }), steps: fc.tuple(fc.record({ reply: fc.string({ maxLength: 40 }) })) }),
          { minLength: 1, maxLength: 4 }).map((turns) => turns.map((t) => ({ user: t.user, steps: [...t.steps] }))),
      }),
    }),
    faults: fc.array(fc.record({ kind: fc.constantFrom(...STANDALONE_KINDS) }), { maxLength: 5 }),
  })

  it('parses back to the same object and resolves', () => {
    fc.assert(fc.property(scenario, (value) => {
      const parsed = parseScenario(stringify(value), FILE)
      expect(parsed).toEqual(value)
      expect(resolveScenario(parsed, { file: FILE }).faults).toHaveLength(value.faults?.length ?? 0)
    }), fcParams({ numRuns: 150 }))
  }, 60_000)
})
