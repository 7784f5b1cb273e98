/**
 * `provider.summarizer` at the scenario boundary (issue #15): every one-line form resolves to its frozen
 * spec; a bad value — unknown preset, ratio ≤ 0, fixed < 1, two kinds at once, a script shorter than a fault
 * that streams its reply — is a `ScenarioError` (exit 2) naming `file:line:column`, the JSON path and what
 * was expected.
 */
import { describe, expect, it } from 'vitest'
import { PRESET_SPECS } from '../../src/provider/summarizers.ts'
import { ScenarioError } from '../../src/scenario/errors.ts'
import { parseScenario } from '../../src/scenario/load.ts'
import { resolveScenario } from '../../src/scenario/resolve.ts'
import type { Scenario } from '../../src/scenario/types.ts'

const FILE = 'scenarios/world/x.yaml'

function scenarioText(summarizer: string, faults = ''): string {
  return `name: summarizer
seed: 1
provider:
  wire: openai
  model: mock
  contextWindow: 4000
  summarizer: ${summarizer}
transcript:
  inline:
    turns:
      - user: hi
        steps:
          - reply: hello
${faults}`
}

function resolved(summarizer: string, faults = ''): unknown {
  const text = scenarioText(summarizer, faults)
  return resolveScenario(parseScenario(text, FILE), { file: FILE }).provider.summarizer
}

function messageOf(summarizer: string, faults = ''): string {
  try {
    parseScenario(scenarioText(summarizer, faults), FILE)
  } catch (error) {
    if (error instanceof ScenarioError) return error.message
    throw error
  }
  throw new Error('expected a ScenarioError')
}

describe('provider.summarizer', () => {
  it('resolves every one-line form to a frozen spec', () => {
    expect(resolved('builtin')).toEqual({ kind: 'builtin' })
    expect(resolved('reasoning-only')).toBe(PRESET_SPECS['reasoning-only'])
    expect(resolved('tool-call')).toBe(PRESET_SPECS['tool-call'])
    expect(resolved('{ ratio: 1.1 }')).toEqual({ kind: 'ratio', ratio: 1.1 })
    expect(resolved('{ fixed: 400 }')).toEqual({ kind: 'fixed', chars: 400 })
    const script = resolved("{ script: [{ reasoning: '…', finish: max-tokens }, { toolCalls: [{ name: f, arguments: { a: 1 } }], chunks: 2, latencyMs: 5 }] }")
    expect(script).toEqual({
      kind: 'script',
      attempts: [{ reasoning: '…', finish: 'max-tokens' }, { toolCalls: [{ name: 'f', arguments: '{"a":1}' }], chunks: 2, latencyMs: 5 }],
    })
    expect(Object.isFrozen(script)).toBe(true)
    const none = resolveScenario(parseScenario(scenarioText('builtin').replace('  summarizer: builtin\n', ''), FILE), { file: FILE })
    expect(none.provider.summarizer).toEqual({ kind: 'builtin' })
  })

  it.each([
    ['an unknown preset', 'thinking', `${FILE}:7:15: /provider/summarizer must be one of "builtin", "reasoning-only", "tool-call", "forgets-paths" (got "thinking")`],
    ['ratio 0', '{ ratio: 0 }', `${FILE}:7:24: /provider/summarizer/ratio must be > 0 (got 0)`],
    ['a negative ratio', '{ ratio: -0.5 }', `${FILE}:7:24: /provider/summarizer/ratio must be > 0 (got -0.5)`],
    ['fixed 0', '{ fixed: 0 }', `${FILE}:7:24: /provider/summarizer/fixed must be >= 1 (got 0)`],
    ['two kinds', '{ fixed: 10, ratio: 0.5 }', `${FILE}:7:15: /provider/summarizer must have exactly one of the keys fixed, ratio, script, upstream`],
    ['no kind', '{}', `${FILE}:7:15: /provider/summarizer must have exactly one of the keys fixed, ratio, script, upstream`],
    ['an empty script', '{ script: [] }', `${FILE}:7:25: /provider/summarizer/script must NOT have fewer than 1 items`],
    ['an unknown attempt key', '{ script: [{ txt: a }] }', `${FILE}:7:28: /provider/summarizer/script/0 has unknown key "txt" (did you mean "text"?)`],
  ])('refuses %s with file:line:column', (_name, value, message) => {
    expect(messageOf(value)).toBe(message)
  })

  it('refuses a script with fewer attempts than an after-chunks compaction fault streams, naming both', () => {
    const fault = (occurrence: number, count = 1): string => `faults:
  - kind: FAULT-21
    when: { purpose: compaction, occurrence: ${occurrence} }
    params: { delivery: after-chunks, chunks: 2, count: ${count} }
`
    const script = "{ script: [{ text: 'one' }, { text: 'two' }] }"
    expect(messageOf(script, fault(3))).toBe(`${FILE}:7:25: /provider/summarizer/script has 2 attempts, but /faults/0 (fault-1, FAULT-21, `
      + 'delivery after-chunks) streams the scripted reply of compaction attempt 3: give at least 3 attempts')
    expect(messageOf(script, fault(2, 2))).toContain('of compaction attempt 3: give at least 3 attempts')
    // Covered: the fault streams attempt 2, which the script has.
    expect(resolved(script, fault(2))).toMatchObject({ kind: 'script' })
    // A fault answering instead of the reply (before headers) needs no scripted attempt; nor does a reply variant.
    const before = 'faults:\n  - kind: FAULT-20\n    when: { purpose: compaction, occurrence: 5 }\n'
    expect(resolved(script, before)).toMatchObject({ kind: 'script' })
    expect(resolved(script, 'faults:\n  - kind: FAULT-23\n    when: { occurrence: 9 }\n')).toMatchObject({ kind: 'script' })
  })

  it('typed callers get the same value checks from resolveScenario (SEMANTIC issues at the JSON path)', () => {
    const raw = (summarizer: unknown): Scenario => ({
      name: 's', seed: 1, provider: { wire: 'openai', model: 'm', summarizer: summarizer as never },
      transcript: { inline: { turns: [{ user: 'hi', steps: [{ reply: 'hello' }] }] } },
    })
    const reasons = (summarizer: unknown): string[] => {
      try {
        resolveScenario(raw(summarizer), { file: FILE })
      } catch (error) {
        if (error instanceof ScenarioError) return error.issues.map((i) => `${i.path} ${i.reason}`)
        throw error
      }
      return []
    }
    expect(reasons('nope')).toEqual(['/provider/summarizer names no summarizer preset (got "nope"; presets: builtin, reasoning-only, tool-call, forgets-paths)'])
    expect(reasons({ ratio: 0 })).toEqual(['/provider/summarizer/ratio must be above 0 and at most 100 (got 0); ≥ 1 gives a summary that does not shrink'])
    expect(reasons({ fixed: 0.5 })).toEqual(['/provider/summarizer/fixed must be an integer from 1 to 4000000 characters (got 0.5)'])
    expect(reasons({ fixed: 1, ratio: 1 })).toEqual(['/provider/summarizer must have exactly one of the keys fixed, ratio, script, upstream (got fixed, ratio)'])
    expect(reasons({ script: [] })).toEqual(['/provider/summarizer/script must list at least one attempt'])
    expect(reasons({ script: [{ chunks: 0 }] })).toEqual(['/provider/summarizer/script/0/chunks must be a positive integer (got 0)'])
  })
})
