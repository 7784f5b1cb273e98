/**
 * §10.5 reconstruction theorem (INV-43) on the loop's captured conversation requests: every request is a
 * pure function of the log prefix at its dispatch, and requests between two headers append-extend each other.
 */
import { describe, expect, it } from 'vitest'
import { restoreSession } from '../../src/agent/restore.ts'
import { answer, callRead, fail, image, prompt, say, world } from './harness.ts'
import { reconstructionViolations } from './reconstruction.ts'
import { appendixBSession } from './appendix-b-session.ts'

describe('§10.5 reconstruction theorem', () => {
  it('holds across tools, parallel calls, an image offload retry and a transient retry', async () => {
    const w = world({
      conversation: [
        callRead(['c1', 'c2']),
        say('both read'),
        fail({ message: 'too many images', code: 'IMAGE_OFFLOAD_REQUIRED', offloadImages: 1 }),
        fail({ message: 'outage', code: 'SERVER' }),
        callRead(['c3']),
        say('done'),
      ],
      executeTool: answer((id) => `contents of ${id}`),
    })
    await w.agent.runTurn(prompt('read both'))
    await w.agent.runTurn(prompt('look', [image('1', 'a.png'), image('2', 'b.png')]))
    expect(w.captures).toHaveLength(6)
    expect(w.captures.map((c) => c.outcome)).toEqual(['tool-calls', 'stop', 'error', 'error', 'tool-calls', 'stop'])
    expect(reconstructionViolations(w.log.events, w.captures)).toEqual([])
  })

  it('holds for the first requests of a restored lifecycle (resume header)', async () => {
    const first = world({ conversation: [callRead(['c1']), say('x')] })
    await first.agent.runTurn(prompt('one'))
    const restored = restoreSession(first.log.events, { dialect: 'seed', clock: () => 0 })
    const second = world({ conversation: [say('y')], log: restored.log })
    await second.agent.runTurn(prompt('two'))
    expect(reconstructionViolations(second.log.events, second.captures)).toEqual([])
    expect(second.ofType('request/header').at(-1)?.data.reason).toBe('resume')
  })

  it('holds through pruning, an in-bracket offload and a summary replacement (Appendix B inputs)', async () => {
    const run = await appendixBSession()
    expect(run.captures).toHaveLength(6)
    expect(reconstructionViolations(run.events, run.captures)).toEqual([])
  })
})
