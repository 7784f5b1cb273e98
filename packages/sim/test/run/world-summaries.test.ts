/**
 * The world's summary wiring (issue #15, `run/summaries.ts`): a scripted attempt's `chunks` cut its reply into
 * SSE content events, its `latencyMs` advances the provider's virtual clock before the first byte and, past the
 * caller's virtual timeout, the call times out (TIMEOUT); attempts are counted per route — a faulted attempt
 * consumes its scripted reply — and continue after the requests of an earlier process (a crash child).
 */
import { COMPACTION_INSTRUCTION, PURPOSE_HEADER, type CapturedRequest } from '@compaction-sim/core'
import { describe, expect, it } from 'vitest'
import { scenarioTranscript } from '../../src/run/transcript.ts'
import { createWorld } from '../../src/run/world.ts'
import { resolveScenario } from '../../src/scenario/resolve.ts'
import type { FaultConfig, Scenario, SummarizerConfig } from '../../src/scenario/types.ts'

const FILE = '/work/scenarios/world/x.yaml'

async function worldOf(summarizer: SummarizerConfig, options: { faults?: FaultConfig[]; callerTimeoutMs?: number } = {}) {
  const raw: Scenario = {
    name: 'summaries', seed: 1, provider: { wire: 'openai', model: 'mock', contextWindow: 4000, summarizer },
    transcript: { inline: { turns: [{ user: 'hi', steps: [{ reply: 'hello' }] }] } }, faults: options.faults ?? [],
  }
  const scenario = resolveScenario(raw, { file: FILE })
  const clock = 1_000
  return createWorld({
    scenario, transcript: await scenarioTranscript(scenario, 1), now: () => clock,
    ...(options.callerTimeoutMs === undefined ? {} : { callerTimeoutMs: options.callerTimeoutMs }),
  })
}

/** One streaming compaction request (the region is one user message) to the world's provider. */
function compaction(world: Awaited<ReturnType<typeof worldOf>>, signal?: AbortSignal): Promise<Response> {
  const body = {
    model: 'mock', stream: true, max_tokens: 1000,
    messages: [{ role: 'user', content: 'Fix the build.' }, { role: 'user', content: COMPACTION_INSTRUCTION }],
  }
  return world.provider.handle(new Request('http://mock.test/v1/chat/completions', {
    method: 'POST', headers: { 'content-type': 'application/json', [PURPOSE_HEADER]: 'compaction' }, body: JSON.stringify(body),
    ...(signal === undefined ? {} : { signal }),
  }))
}

/** The `delta.content` pieces of an SSE body. */
async function contentPieces(response: Response): Promise<string[]> {
  const text = await response.text()
  return text.split('\n\n').filter((f) => f.startsWith('data: {')).flatMap((f) => {
    const chunk = JSON.parse(f.slice('data: '.length)) as { choices: Array<{ delta?: { content?: string } }> }
    const piece = chunk.choices[0]?.delta?.content
    return piece === undefined || piece === '' ? [] : [piece]
  })
}

describe('world summaries', () => {
  it('chunks: a scripted attempt streams its text in that many content events', async () => {
    const world = await worldOf({ script: [{ text: 'abcdefghijklmnopqrstuvwxyz0123456789', chunks: 4 }, { text: 'x'.repeat(200) }] })
    const pieces = await contentPieces(await compaction(world))
    expect(pieces).toEqual(['abcdefghi', 'jklmnopqr', 'stuvwxyz0', '123456789'])
    // Without chunks, the mock's default 64-unit pieces.
    expect((await contentPieces(await compaction(world))).map((p) => p.length)).toEqual([64, 64, 64, 8])
  })

  it('latencyMs advances the provider clock before the first byte; the next request arrives that much later', async () => {
    const world = await worldOf({ script: [{ text: 'slow summary', latencyMs: 30_000 }, { text: 'fast' }] })
    expect(await contentPieces(await compaction(world))).toEqual(['slow summary'])
    await compaction(world)
    expect(world.provider.captured.map((c) => c.time)).toEqual([1_000, 31_000])
  })

  it('a latency at or past the caller’s virtual timeout never arrives: the call times out (TIMEOUT)', async () => {
    const world = await worldOf({ script: [{ text: 'too slow', latencyMs: 120_000 }] }, { callerTimeoutMs: 60_000 })
    const timeout = world.hooks.adapterTimeout?.()
    if (timeout === undefined) throw new Error('the world gives no adapter timeout')
    const response = compaction(world, timeout)
    await expect(response.then((r) => r.type)).resolves.toBe('error')
    expect(timeout.aborted).toBe(true)
    expect(String((timeout.reason as Error).message)).toMatch(/^TIMEOUT/)
    expect(world.provider.captured[0]?.expectedFailureCode).toBe('TIMEOUT')
  })

  it('a fault answering attempt 1 consumes it: the retry gets scripted attempt 2', async () => {
    const world = await worldOf({ script: [{ text: 'FIRST' }, { text: 'SECOND' }] }, {
      faults: [{ kind: 'FAULT-20', when: { purpose: 'compaction', occurrence: 1 } }],
    })
    expect((await compaction(world)).status).toBe(500)
    expect(await contentPieces(await compaction(world))).toEqual(['SECOND'])
  })

  it('attempts continue after the compaction requests of an earlier process (a crash child), per route', async () => {
    const world = await worldOf({ script: [{ text: 'FIRST' }, { text: 'SECOND' }, { text: 'THIRD' }] })
    const earlier = (purpose: 'compaction' | 'conversation', model = 'mock') => ({ purpose, model } as unknown as CapturedRequest)
    world.countEarlierRequests([earlier('conversation'), earlier('compaction'), earlier('compaction', 'other-model')])
    expect(await contentPieces(await compaction(world))).toEqual(['SECOND'])
    expect(await contentPieces(await compaction(world))).toEqual(['THIRD'])
    expect(await contentPieces(await compaction(world))).toEqual(['THIRD'])
  })
})
