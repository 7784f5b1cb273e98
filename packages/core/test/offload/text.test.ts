/**
 * The hardened text projection (`hardening.oversizedUserText`, HARD-5, packages/core/docs/hardened.md): the pure
 * functions, the log's validation of `text/offload`, the agent's pre-request step and the summary request.
 */
import { describe, expect, it } from 'vitest'
import { Seq } from '../../src/brand.ts'
import { LogError } from '../../src/errors.ts'
import { EventLog } from '../../src/log/event-log.ts'
import type { TextOffloadData } from '../../src/log/events.ts'
import type { ContentBlock, UserMessage } from '../../src/log/llm.ts'
import {
  isTextOffloadPlaceholder, oversizedTextBlocks, oversizedTextBound, textOffloadPlaceholder, textOffloadProjection, userTextReadOnlyPath,
} from '../../src/offload/text.ts'
import { withEngine } from '../agent/engine.ts'
import { prompt, say, world } from '../agent/harness.ts'

const PASTE = 'x'.repeat(9000) // 2250 + 4 = 2254 tokens; the harness route window is 4000, so the bound is 2000
const ON = { hardening: { oversizedUserText: true } }

/** The text of a block (undefined for a missing or non-text block). */
function textOf(block: ContentBlock | undefined): string | undefined {
  return block?.type === 'text' ? String((block as { text: string }).text) : undefined
}

function mark(seq: number, blockIndex: number, tokens = 2254): TextOffloadData {
  return { seq: Seq(seq), blockIndex, tokens, bound: 2000, path: userTextReadOnlyPath('m-u1', blockIndex) }
}

describe('text projection functions', () => {
  it('derives the read-only path from the message id and the block index', () => {
    expect(userTextReadOnlyPath('m-u1', 0)).toBe('user-text/m-u1.0.txt')
    expect(userTextReadOnlyPath('a/b c', 2)).toBe('user-text/a_b_c.2.txt')
  })

  it('floors the bound', () => {
    expect(oversizedTextBound(0.5, 8000)).toBe(4000)
    expect(oversizedTextBound(0.3, 1001)).toBe(300)
    expect(oversizedTextBound(1, 4000)).toBe(4000)
  })

  it('states what moved and where, and recognises only its own placeholders', () => {
    const p = textOffloadPlaceholder(mark(3, 0), 9000)
    expect(p).toContain('9000 characters (2254 tokens, above the 2000-token limit for one block)')
    expect(p).toContain('read-only copy: user-text/m-u1.0.txt')
    expect(isTextOffloadPlaceholder(p)).toBe(true)
    expect(isTextOffloadPlaceholder(`${p} `)).toBe(false)
    expect(isTextOffloadPlaceholder(PASTE)).toBe(false)
  })

  it('replaces exactly the marked text blocks, in place, and returns the input when nothing is marked', () => {
    const content: ContentBlock[] = [{ type: 'text', text: 'short' }, { type: 'text', text: PASTE }, { type: 'text', text: PASTE }]
    const message: UserMessage = { id: 'm-u1' as never, role: 'user', content, source: { kind: 'user' } }
    expect(textOffloadProjection(message, new Map())).toBe(message)
    expect(textOffloadProjection(message, undefined)).toBe(message)
    const projected = textOffloadProjection(message, new Map([[1, mark(3, 1)]]))
    expect(projected.id).toBe('m-u1')
    expect(projected.content[0]).toBe(content[0])
    expect(isTextOffloadPlaceholder(String(textOf(projected.content[1])))).toBe(true)
    expect(projected.content[2]).toBe(content[2])
    expect(message.content[1]).toEqual({ type: 'text', text: PASTE }) // the original is untouched
  })

  it('selects text blocks strictly above the bound that are not marked yet', () => {
    const content: ContentBlock[] = [{ type: 'text', text: 'x'.repeat(7984) }, { type: 'text', text: 'x'.repeat(7988) }, { type: 'text', text: PASTE }]
    // 1996 + 4 = 2000 (not above), 1997 + 4 = 2001, 2254
    expect(oversizedTextBlocks(content, 2000, undefined)).toEqual([{ blockIndex: 1, tokens: 2001 }, { blockIndex: 2, tokens: 2254 }])
    expect(oversizedTextBlocks(content, 2000, new Map([[2, mark(0, 2)]]))).toEqual([{ blockIndex: 1, tokens: 2001 }])
  })
})

describe('text/offload in the log', () => {
  function logWithUser(): EventLog {
    const log = new EventLog({ dialect: 'seed' })
    log.append({ time: 1, type: 'user/message', data: { id: 'm-u1' as never, role: 'user', content: [{ type: 'text', text: PASTE }, { type: 'text', text: 'tail' }], source: { kind: 'user' } }, surfaceOp: 'append' })
    log.append({ time: 2, type: 'turn/start', data: { turn: 1 } })
    return log
  }

  it('folds a valid mark and refuses a second one for the same block', () => {
    const log = logWithUser()
    log.append({ time: 3, type: 'text/offload', data: mark(0, 0) })
    expect(log.textOffloads(0).get(0)?.path).toBe('user-text/m-u1.0.txt')
    expect(textOf(log.deriveMessages()[0]?.content[0])).toMatch(/^\[user text moved out of this request/)
    expect(log.deriveMessages()[0]?.content[1]).toEqual({ type: 'text', text: 'tail' })
    expect(() => log.append({ time: 4, type: 'text/offload', data: mark(0, 0) })).toThrow(/already offloaded/)
  })

  it('refuses a mark naming a non-user node, a missing block or a malformed payload', () => {
    const log = logWithUser()
    expect(() => log.append({ time: 3, type: 'text/offload', data: mark(1, 0) })).toThrow(LogError)
    expect(() => log.append({ time: 3, type: 'text/offload', data: mark(0, 5) })).toThrow(/out of range/)
    expect(() => log.append({ time: 3, type: 'text/offload', data: { ...mark(0, 0), path: '' } })).toThrow(LogError)
    expect(log.length).toBe(2)
  })
})

describe('the agent under hardening.oversizedUserText', () => {
  it('projects a paste above the bound before the request; later turns do not project it again', async () => {
    const w = world({ config: ON, conversation: [say('read it'), say('ok')] })
    await w.agent.runTurn(prompt(PASTE))
    expect(w.types()).toEqual([
      'turn/start', 'step/start', 'system/message', 'user/message', 'request/header', 'request/context', 'text/offload',
      'assistant/chunk', 'assistant/chunk', 'assistant/chunk', 'assistant/chunk', 'assistant/message', 'step/end', 'turn/end',
    ])
    const user = w.ofType('user/message')[0]
    expect(w.ofType('text/offload')[0]?.data).toEqual({ seq: user?.seq, blockIndex: 0, tokens: 2254, bound: 2000, path: 'user-text/m-u1.0.txt' })
    const sent = textOf(w.captures[0]?.messages[1]?.content[0])
    expect(isTextOffloadPlaceholder(String(sent))).toBe(true)
    expect(user?.data.content[0]).toEqual({ type: 'text', text: PASTE }) // the log keeps the text: never a deletion
    await w.agent.runTurn(prompt('next'))
    expect(w.ofType('text/offload')).toHaveLength(1)
    expect(isTextOffloadPlaceholder(String(textOf(w.captures[1]?.messages[1]?.content[0])))).toBe(true)
  })

  it('leaves text at the bound and every faithful run alone', async () => {
    const at = world({ config: ON, conversation: [say('ok')] })
    await at.agent.runTurn(prompt('x'.repeat(7984))) // exactly 2000 tokens
    expect(at.ofType('text/offload')).toEqual([])
    const faithful = world({ conversation: [say('ok')] })
    await faithful.agent.runTurn(prompt(PASTE))
    expect(faithful.ofType('text/offload')).toEqual([])
    expect(faithful.captures[0]?.messages[1]?.content[0]).toEqual({ type: 'text', text: PASTE })
  })

  it('honours maxWindowRatio', async () => {
    const w = world({ config: { hardening: { oversizedUserText: { maxWindowRatio: 0.6 } } }, conversation: [say('ok')] })
    await w.agent.runTurn(prompt(PASTE)) // 2254 ≤ 2400
    expect(w.ofType('text/offload')).toEqual([])
  })

  it('sends the placeholder, not the text, in the summary request', async () => {
    const w = world({
      config: ON, makeEngine: withEngine(),
      conversation: [say('The log shows the parser failing on the third line of every chunk. '.repeat(12)), say('ok')],
      compaction: [say('## Primary Request and Intent\n- the user pasted a log')],
    })
    await w.agent.runTurn(prompt(PASTE))
    await w.agent.runTurn(prompt('two'))
    const result = await w.agent.compactNow()
    expect(result?.shadowedSeqs).toContain(w.ofType('user/message')[0]?.seq) // the paste is in the summarized region
    const summaryRequest = w.adapter.requests.find((r) => r.purpose === 'compaction')
    expect(summaryRequest).toBeDefined()
    const texts = JSON.stringify(summaryRequest?.messages)
    expect(texts).not.toContain(PASTE)
    expect(texts).toContain('read-only copy: user-text/m-u1.0.txt')
  })
})

describe('the engine under hardening.oversizedUserText', () => {
  it('projects a paste no request carried under the rule before a manual compaction selects and measures', async () => {
    // The paste was sent under the faithful policy; the session continues (a restore) with the rule on.
    const before = world({ conversation: [say('The log shows the parser failing on the third line of every chunk. '.repeat(12)), say('ok')] })
    await before.agent.runTurn(prompt(PASTE))
    await before.agent.runTurn(prompt('two'))
    const w = world({
      config: ON, makeEngine: withEngine(), events: before.log.events,
      conversation: [], compaction: [say('## Primary Request and Intent\n- the user pasted a log')],
    })
    await w.agent.compactNow()
    const offload = w.ofType('text/offload')
    expect(offload).toHaveLength(1)
    const start = w.ofType('compaction/start')[0]
    expect(offload[0]?.seq).toBeLessThan(start?.seq ?? -1)
    const summaryRequest = w.adapter.requests.find((r) => r.purpose === 'compaction')
    expect(JSON.stringify(summaryRequest?.messages)).not.toContain(PASTE)
  })

  it('writes nothing for a faithful engine', async () => {
    const before = world({ conversation: [say('The log shows the parser failing on the third line of every chunk. '.repeat(12))] })
    await before.agent.runTurn(prompt(PASTE))
    const w = world({ makeEngine: withEngine(), events: before.log.events, conversation: [], compaction: [say('## Primary Request and Intent\n- a log')] })
    await w.agent.compactNow().catch(() => null)
    expect(w.ofType('text/offload')).toEqual([])
  })
})
