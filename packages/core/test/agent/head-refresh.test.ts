/**
 * HARD-7 (`hardening.headRefresh`, issue #19, docs/hardened.md): a changed system prompt replaces the system head
 * (a head-only replacement citing the replaced head) instead of appending a copy at the tail (§1.4.5 rule 2). The
 * faithful default keeps §1.4.5 exactly (agent.test.ts covers it; the first case here is the contrast).
 */
import { describe, expect, it } from 'vitest'
import { restoreSession } from '../../src/agent/restore.ts'
import type { SessionEvent } from '../../src/log/events.ts'
import type { BasicCompactionConfig } from '../../src/policy/config.ts'
import { systemHeadCount } from '../../src/range/select.ts'
import { withEngine } from './engine.ts'
import { prompt, say, world, type World } from './harness.ts'

const HARDENED: BasicCompactionConfig = { hardening: { headRefresh: true } }

/** The `system/message`s on the current surface, in position order, as [position, text]. */
function surfaceSystems(w: World): Array<[number, string]> {
  return w.log.nodes.flatMap((seq, i) => {
    const e = w.log.event(seq)
    return e?.type === 'system/message' ? [[i, ((e as SessionEvent<'system/message'>).data.content[0] as { text: string }).text] as [number, string]] : []
  })
}

/** A prompt that changes every step open (a clock line), like a harness that renders the time into it. */
function volatile(): () => string {
  let n = 0
  return () => `You are a careful coding agent.\nclock: 10:0${n++}`
}

describe('HARD-7 head refresh', () => {
  it('faithful (the contrast): a volatile prompt appends one system/message per step at the tail', async () => {
    const w = world({ conversation: [say('1'), say('2'), say('3')], systemPrompt: volatile() })
    for (const text of ['one', 'two', 'three']) await w.agent.runTurn(prompt(text))
    expect(w.ofType('system/message').every((e) => e.surfaceOp === 'append')).toBe(true)
    expect(surfaceSystems(w).map(([i]) => i)).toEqual([0, 3, 6])
  })

  it('replaces the head with provenance: one system/message on the surface, at position 0, with the newest text', async () => {
    const w = world({ config: HARDENED, conversation: [say('1'), say('2'), say('3')], systemPrompt: volatile() })
    for (const text of ['one', 'two', 'three']) await w.agent.runTurn(prompt(text))
    const systems = w.ofType('system/message')
    expect(systems).toHaveLength(3)
    expect(systems[0]?.surfaceOp).toBe('append')
    for (let k = 1; k < systems.length; k++) {
      const prev = systems[k - 1]?.seq as number
      expect(systems[k]?.surfaceOp).toEqual({ op: 'replace', start: prev, end: prev })
      expect(systems[k]?.sourceEventSeqs).toEqual([prev])
      expect(w.log.events[(systems[k]?.seq ?? 0) - 1]?.type).toBe('step/start') // same place as the faithful append
    }
    expect(surfaceSystems(w)).toEqual([[0, 'You are a careful coding agent.\nclock: 10:02']])
    expect(systemHeadCount(w.log)).toBe(1)
    expect(w.log.state.surface.replaceGeneration).toBe(2)
    // The conversation request of the last step carries one system message: the refreshed head.
    const last = w.captures[w.captures.length - 1]
    expect(last?.messages.filter((m) => m.role === 'system')).toHaveLength(1)
    expect(last?.messages[0]).toMatchObject({ role: 'system', content: [{ type: 'text', text: 'You are a careful coding agent.\nclock: 10:02' }] })
  })

  it('compares with the head, not with the last appended system message: an unchanged prompt writes nothing', async () => {
    let systemPrompt = 'A'
    const w = world({ config: HARDENED, conversation: [say('1'), say('2'), say('3')], systemPrompt: () => systemPrompt })
    await w.agent.runTurn(prompt('one'))
    systemPrompt = 'B'
    await w.agent.runTurn(prompt('two'))
    await w.agent.runTurn(prompt('three'))
    expect(w.ofType('system/message').map((e) => (e.data.content[0] as { text: string }).text)).toEqual(['A', 'B'])
  })

  it('on a log that already holds a tail copy (written faithful), the head is what is compared and replaced', async () => {
    let systemPrompt = 'A'
    const faithful = world({ conversation: [say('1'), say('2')], systemPrompt: () => systemPrompt })
    await faithful.agent.runTurn(prompt('one'))
    systemPrompt = 'B'
    await faithful.agent.runTurn(prompt('two')) // §1.4.5 rule 2: B appended at the tail, A stays the head
    const headA = faithful.log.nodes[0] as number
    const hardened = world({ config: HARDENED, log: faithful.log, conversation: [say('3')], systemPrompt: () => 'B' })
    await hardened.agent.runTurn(prompt('three'))
    const refreshed = hardened.ofType('system/message').at(-1)
    expect(refreshed?.surfaceOp).toEqual({ op: 'replace', start: headA, end: headA })
    expect(surfaceSystems(hardened).map(([i, text]) => [i, text])).toEqual([[0, 'B'], [3, 'B']])
  })

  it('without a system head (empty initial prompt) the first non-empty prompt is appended at the tail as §1.4.5 says', async () => {
    let systemPrompt = ''
    const w = world({ config: HARDENED, conversation: [say('1'), say('2')], systemPrompt: () => systemPrompt })
    await w.agent.runTurn(prompt('one'))
    systemPrompt = 'now'
    await w.agent.runTurn(prompt('two'))
    const s = w.ofType('system/message')
    expect(s).toHaveLength(1)
    expect(s[0]?.surfaceOp).toBe('append')
    expect(w.log.state.surface.position(s[0]?.seq ?? -1)).toBe(2)
    expect(systemHeadCount(w.log)).toBe(0)
  })

  it('after a restore, a new loop compares with the restored head and replaces that one', async () => {
    let systemPrompt = 'A'
    const first = world({ config: HARDENED, conversation: [say('1'), say('2')], systemPrompt: () => systemPrompt })
    await first.agent.runTurn(prompt('one'))
    systemPrompt = 'B'
    await first.agent.runTurn(prompt('two'))
    const headB = first.log.nodes[0] as number
    const { log } = restoreSession(first.log.events, { dialect: 'seed', clock: () => 1_700_000_100_000 })
    const same = world({ config: HARDENED, log, conversation: [say('3')], systemPrompt: () => 'B' })
    await same.agent.runTurn(prompt('three'))
    expect(same.ofType('system/message')).toHaveLength(2) // nothing new: B is the head
    const changed = world({ config: HARDENED, log, conversation: [say('4')], systemPrompt: () => 'C' })
    await changed.agent.runTurn(prompt('four'))
    const c = changed.ofType('system/message').at(-1)
    expect(c?.surfaceOp).toEqual({ op: 'replace', start: headB, end: headB })
    expect(c?.sourceEventSeqs).toEqual([headB])
    expect(surfaceSystems(changed)).toEqual([[0, 'C']])
  })

  it('compaction keeps the refreshed head out of the span and sends it as the §8.2 systemHead', async () => {
    const long = 'The float comparison fails because 0.1 + 0.2 is not exactly 0.3 in binary floating point. '.repeat(30)
    const w = world({
      config: HARDENED, makeEngine: withEngine(), systemPrompt: volatile(),
      compaction: [say('## Primary Request and Intent\n- fix the float test')],
      conversation: [say(long), say('ok'), say('done')],
    })
    await w.agent.runTurn(prompt('one'))
    await w.agent.runTurn(prompt('two'))
    const head = w.log.nodes[0] as number
    expect((w.log.event(head) as SessionEvent<'system/message'>).surfaceOp).toEqual({ op: 'replace', start: 2, end: 2 })
    const result = await w.agent.compactNow()
    expect(result).not.toBeNull()
    const summary = w.ofType('compaction/summary')[0]
    expect(summary?.data.shadowedSeqs).not.toContain(head)
    expect(w.log.nodes[0]).toBe(head)
    const request = w.adapter.requests.find((r) => r.purpose === 'compaction')
    expect(request?.messages[0]).toMatchObject({ role: 'system', content: [{ type: 'text', text: 'You are a careful coding agent.\nclock: 10:01' }] })
    await w.agent.runTurn(prompt('three'))
    expect(surfaceSystems(w)).toEqual([[0, 'You are a careful coding agent.\nclock: 10:02']])
  })
})
