/**
 * Broken subject: a failed summary call is swallowed and a canned summary is committed.
 *
 * Bug: the adapter catches any failure of a compaction call (§8.2 `purpose: 'compaction'`) and answers a
 * fixed "summary unavailable" text as if the model had written it, so the bracket commits a checkpoint
 * (§7.7) that replaces real history with nothing, instead of closing with the error (§7.8).
 * Real-world analogue: `try { summary = await summarize(history) } catch { summary = 'Earlier conversation
 * omitted.' }` in a memory/condenser module.
 * Why this id: the log shows a successful summary call, consistent with itself; the world record shows
 * that the summary call failed. (The checker also reports WORLD-06 today: its join will not pair the
 * world's failed summary call with the capture's successful one, so it calls the world's calls unlogged.)
 *
 * @fails WORLD-04 faults/fault-20-summary-call-fails
 */
import type { StreamChunk } from '@compaction-sim/core'
import { exampleSubject } from '../subject-core-adapter/subject.ts'
import { rewriteChunks } from './support/adapter.ts'

/** The fallback "summary". */
const CANNED = 'Earlier conversation omitted to save context.'

/** The chunks of a one-text-block reply that stops normally. */
const cannedReply: StreamChunk[] = [
  { type: 'block-start', index: 0, blockType: 'text' },
  { type: 'text-delta', index: 0, text: CANNED },
  { type: 'block-end', index: 0, block: { type: 'text', text: CANNED } },
  { type: 'finish', reason: { kind: 'stop' } },
]

export default {
  ...exampleSubject({
    adapter: (inner) => rewriteChunks(inner, (chunk, { options }) =>
      options.purpose === 'compaction' && chunk.type === 'finish' && chunk.reason.kind === 'error' ? structuredClone(cannedReply) : [chunk]),
  }),
  name: 'broken-canned-summary',
}
