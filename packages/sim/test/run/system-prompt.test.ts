/**
 * The volatile system prompt of a scenario (`volatileSystemPrompt`, issue #19 HARD-7, `src/run/system-prompt.ts`):
 * a fixed prompt is returned as is; a volatile one changes at every step or once per turn, reproducibly.
 */
import { describe, expect, it } from 'vitest'
import { environmentBlock, systemPromptRenderer, volatileSystemPromptOf } from '../../src/run/system-prompt.ts'
import { parseScenario } from '../../src/scenario/load.ts'
import { resolveScenario } from '../../src/scenario/resolve.ts'

const SCENARIO = (volatile: string): string => `name: v
seed: 3
provider: { wire: openai, model: mock-4k, contextWindow: 4000 }
transcript:
  inline:
    systemPrompt: be brief
    ${volatile}
    turns: [{ user: hi, steps: [{ reply: hello }] }]
`

function renderAt(render: () => string, at: { turn: number; step: number } | null, set: (v: typeof at) => void): string {
  set(at)
  return render()
}

describe('volatileSystemPrompt', () => {
  it('without volatility the transcript prompt is returned unchanged', () => {
    const render = systemPromptRenderer('be brief', null, 7, () => ({ turn: 3, step: 2 }))
    expect(render()).toBe('be brief')
  })

  it('every: step renders a different environment block at each step open, and the same one again for the same step', () => {
    let at: { turn: number; step: number } | null = null
    const render = systemPromptRenderer('be brief', { every: 'step' }, 7, () => at)
    const set = (v: typeof at): void => { at = v }
    const seen = new Set<string>()
    for (let turn = 1; turn <= 3; turn++) for (let step = 1; step <= 20; step++) seen.add(renderAt(render, { turn, step }, set))
    expect(seen.size).toBe(60)
    const one = renderAt(render, { turn: 2, step: 5 }, set)
    expect(one).toMatch(/^be brief\n\n<environment>\nDate and time: 2026-01-05T\d\d:\d\d:\d\dZ\n/)
    expect(one.endsWith('\n</environment>')).toBe(true)
    expect(renderAt(render, { turn: 2, step: 5 }, set)).toBe(one)
  })

  it('every: turn changes only between turns', () => {
    let at: { turn: number; step: number } | null = { turn: 1, step: 1 }
    const render = systemPromptRenderer('', { every: 'turn' }, 7, () => at)
    const first = render()
    at = { turn: 1, step: 4 }
    expect(render()).toBe(first)
    at = { turn: 2, step: 1 }
    expect(render()).not.toBe(first)
    expect(first.startsWith('<environment>')).toBe(true) // an empty base prompt is the block alone
  })

  it('is a function of the seed', () => {
    expect(environmentBlock(7, 1, 1)).toBe(environmentBlock(7, 1, 1))
    expect(environmentBlock(7, 1, 1)).not.toBe(environmentBlock(8, 1, 1))
  })

  it('resolves from the inline form (absent = fixed) and refuses an unknown cadence with its path', () => {
    const resolved = (text: string) => resolveScenario(parseScenario(text, 'v.yaml'), { file: 'v.yaml' })
    expect(volatileSystemPromptOf(resolved(SCENARIO('volatileSystemPrompt: { every: turn }')).transcript)).toEqual({ every: 'turn' })
    expect(volatileSystemPromptOf(resolved(SCENARIO('facts: []')).transcript)).toBeNull()
    expect(() => parseScenario(SCENARIO('volatileSystemPrompt: { every: minute }'), 'v.yaml')).toThrow(/volatileSystemPrompt\/every/)
  })
})
