/**
 * The scripted inputs of protocol.md Appendix B driven through the real loop and engine (the same inputs
 * as `packages/fixtures/src/running-example.ts`, kept here so core tests do not depend on the fixtures
 * package): the produced log is the subject of the §13.4 crash tests and of a §10.5 check.
 */
import type { ConversationCapture } from '../../src/agent/agent.ts'
import type { ScriptedReply } from '../../src/adapter/scripted.ts'
import type { EventLog } from '../../src/log/event-log.ts'
import type { ContentBlock, TokenUsage } from '../../src/log/llm.ts'
import { withEngine } from './engine.ts'
import { answer, world, type World } from './harness.ts'

/** The system prompt of the running example (#2). */
export const APPENDIX_B_SYSTEM_PROMPT = 'You are a careful coding agent. Inspect files with tools before proposing edits.'

const T1 = 'The assertion compares floats with strict equality; 0.1 + 0.2 is 0.30000000000000004, so the expectation needs toBeCloseTo. '
const T2 = 'The second screenshot shows the same float comparison failure in CI. '
const T3 = 'export const add = (a: number, b: number) => a + b\n'
const T4 = 'math.ts only defines add(); the test should use toBeCloseTo for the float sum. '
const S = '## Primary Request and Intent\n- Find why the float test in math.spec.ts fails and fix it.\n## Current Work\n- Reading math.ts.'

const image = (digit: string, name: string): ContentBlock => ({
  type: 'image',
  attachment: { attachmentId: `sha256:${digit.repeat(64)}`, mediaType: 'image/png', bytes: 48213, width: 1024, height: 768, name },
})
const reply = (blocks: ContentBlock[], usage: TokenUsage): ScriptedReply => ({ kind: 'reply', blocks, usage })
const read = (id: string, path: string): ContentBlock => ({ type: 'tool-call', id: id as never, name: 'read', arguments: JSON.stringify({ path }) })

/** What the session produced. */
export interface AppendixBSession {
  log: EventLog
  captures: ConversationCapture[]
  world: World
}

/** Runs the three turns of Appendix B; the events carry the Appendix B seqs (#51 compaction/start, …). */
export async function appendixBSession(): Promise<AppendixBSession> {
  const w = world({
    makeEngine: withEngine({ pruner: true }),
    systemPrompt: () => APPENDIX_B_SYSTEM_PROMPT,
    conversation: [
      reply([read('call_1', 'math.spec.ts')], { inputTokens: 150, outputTokens: 20 }),
      reply([{ type: 'text', text: T1.repeat(3) }], { inputTokens: 1400, outputTokens: 90 }),
      { kind: 'fail', failure: { message: 'request carries more images than the route accepts', code: 'IMAGE_OFFLOAD_REQUIRED', offloadImages: 1 } },
      reply([{ type: 'text', text: T2.repeat(4) }], { inputTokens: 400, cacheReadTokens: 1300, outputTokens: 70 }),
      reply([read('call_2', 'math.ts')], { inputTokens: 200, cacheReadTokens: 1600, outputTokens: 15 }),
      reply([{ type: 'text', text: T4.repeat(3) }], { inputTokens: 2100, outputTokens: 80 }),
    ],
    compaction: [
      { kind: 'fail', failure: { message: 'summary request carries more images than the route accepts', code: 'IMAGE_OFFLOAD_REQUIRED', offloadImages: 1 } },
      reply([{ type: 'reasoning', text: '(hidden)' }, { type: 'text', text: S }], { inputTokens: 400, cacheReadTokens: 1600, outputTokens: 160 }),
    ],
    executeTool: answer((id) => id === 'call_1' ? 'L'.repeat(12000) : T3.repeat(150)),
  })
  const text = (value: string): ContentBlock => ({ type: 'text', text: value })
  await w.agent.runTurn({ content: [text('The test in math.spec.ts fails. Find out why.')] })
  await w.agent.runTurn({ content: [text('Here are two screenshots of the failing CI run.'), image('1', 'ci-1.png'), image('2', 'ci-2.png')] })
  await w.agent.runTurn({ content: [text('Open math.ts and show me the helper used by the test.')] })
  return { log: w.log, captures: w.captures, world: w }
}
