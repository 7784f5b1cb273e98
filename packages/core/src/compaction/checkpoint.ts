/**
 * The checkpoint a summary compaction lands (§1.4.4, §1.6, §8.5): its source constructor and test, and
 * the framing of a text summary inside the Appendix A preamble and tags. Every compaction backend builds
 * its checkpoint with these, so checkers can recognise and re-derive it (INV-14, INV-15, INV-18).
 */
import { CHECKPOINT_CLOSE_TAG, CHECKPOINT_OPEN_TAG, CHECKPOINT_PREAMBLE } from '../constants.ts'
import type { ContentBlock, MessageSource, TextBlock } from '../log/llm.ts'

/** The source of a checkpoint message (§1.6); `sourceCommandId` only for a manual compaction started by a command. */
export type CompactCheckpointSource = {
  kind: 'plugin'
  plugin: 'compact'
  compactionId: string
  sourceCommandId?: string
}

/**
 * §1.6 `compactCheckpointSource`: the checkpoint source of bracket `compactionId`, with `sourceCommandId`
 * only when one is given (key order kind, plugin, compactionId, sourceCommandId, as the §1.4.4 example).
 */
export function compactCheckpointSource(compactionId: string, sourceCommandId?: string): CompactCheckpointSource {
  const source: CompactCheckpointSource = { kind: 'plugin', plugin: 'compact', compactionId }
  if (sourceCommandId !== undefined) source.sourceCommandId = sourceCommandId
  return source
}

/** §1.6 `isCompactCheckpointSource`: true iff `source.kind === 'plugin' && source.plugin === 'compact'`. */
export function isCompactCheckpointSource(source: MessageSource): boolean {
  return source.kind === 'plugin' && source.plugin === 'compact'
}

/**
 * §8.5 `frame(summary)`: `[text(CHECKPOINT_PREAMBLE + "\n\n<compacted-summary>"), ...summary, text("</compacted-summary>")]`
 * (INV-18). The summary blocks are copied as plain `{type, text}` blocks, so the result shares no object
 * with `summary` (a logged summary and its checkpoint are frozen independently).
 */
export function frameCheckpoint(summary: readonly TextBlock[]): ContentBlock[] {
  return [
    { type: 'text', text: `${CHECKPOINT_PREAMBLE}\n\n${CHECKPOINT_OPEN_TAG}` },
    ...summary.map((b): TextBlock => ({ type: 'text', text: b.text })),
    { type: 'text', text: CHECKPOINT_CLOSE_TAG },
  ]
}
