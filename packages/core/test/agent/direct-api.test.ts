/**
 * `requestHeaders: 'omit'` (direct API use, §13.1 FAULT-09): the loop dispatches without logging
 * `request/header` or `request/context`, so the log has no routed target (§2.7) and an overflow on a session
 * with compactable history is not recovered — the turn ends with the original failure, nothing is compacted.
 */
import { describe, expect, it } from 'vitest'
import type { LlmFailure } from '../../src/log/llm.ts'
import { fail, prompt, say, world } from './harness.ts'
import { withEngine } from './engine.ts'

const OVERFLOW: LlmFailure = { message: 'request exceeds the context window', code: 'CONTEXT_WINDOW_EXCEEDED' }
const LONG = 'The helper sums its operands and the test compares the float result exactly. '.repeat(26)

describe('direct API use (requestHeaders: omit)', () => {
  it('FAULT-09: no header is ever logged, and the overflow on compactable history ends the turn uncompacted', async () => {
    const w = world({
      makeEngine: withEngine(), compaction: [say('## Primary Request and Intent\n- keep going')],
      conversation: [say(LONG), fail(OVERFLOW)], agent: { requestHeaders: 'omit' },
    })
    await w.agent.runTurn(prompt('Why does the float test fail?'))
    const outcome = await w.agent.runTurn(prompt('Fix it.'))
    expect(outcome.reason).toEqual({ kind: 'error', error: OVERFLOW })
    expect([w.ofType('request/header'), w.ofType('request/context'), w.ofType('compaction/start')].map((e) => e.length)).toEqual([0, 0, 0])
    expect(w.captures).toHaveLength(2)
  })

  it('the default logs the header (the same world then recovers by compaction)', async () => {
    const w = world({
      makeEngine: withEngine(), compaction: [say('## Primary Request and Intent\n- keep going')],
      conversation: [say(LONG), fail(OVERFLOW), say('fixed')],
    })
    await w.agent.runTurn(prompt('Why does the float test fail?'))
    const outcome = await w.agent.runTurn(prompt('Fix it.'))
    expect(outcome.reason).toEqual({ kind: 'completed' })
    expect(w.ofType('request/header').length).toBeGreaterThan(0)
    expect(w.ofType('compaction/start')).toHaveLength(1)
  })
})
