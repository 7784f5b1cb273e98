/**
 * The scripted inputs of protocol.md Appendix B driven through the real loop and engine: the one production
 * `produceRunningExample` of `@compaction-sim/fixtures` (as `test/compaction` already uses its hand-built
 * log), so the script exists once. Its log is the subject of the §13.4 crash tests and of a §10.5 check.
 */
import { APPENDIX_B_SYSTEM_PROMPT, produceRunningExample } from '@compaction-sim/fixtures'
import type { ConversationCapture } from '../../src/agent/agent.ts'
import type { LogEvent } from '../../src/log/events.ts'

/** The system prompt of the running example (#2), for loops that continue a restored session. */
export { APPENDIX_B_SYSTEM_PROMPT }

/** What the session produced: its events (seq 0 … 66, #51 compaction/start, …) and every conversation request. */
export interface AppendixBSession {
  events: readonly LogEvent[]
  captures: ConversationCapture[]
}

/** Runs the three turns of Appendix B through `Agent` + `CompactionEngine` (fresh objects on every call). */
export async function appendixBSession(): Promise<AppendixBSession> {
  const run = await produceRunningExample()
  return { events: run.events, captures: run.captures }
}
