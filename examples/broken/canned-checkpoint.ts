/**
 * Broken example: the backend does not trust the summarizer's text and stores a canned checkpoint instead
 * ("Earlier conversation condensed."), in both `compaction/summary.summary` and the checkpoint message. The log
 * is consistent with itself; the world returned another text (§8.4, §8.5).
 *
 * Fails `sim conform --level must` with **WORLD-04** (`smoke/basic-pressure.yaml`); INV-43 sees it too, since the
 * requests after it carried the real checkpoint, not the one the log holds.
 */
import { withLog } from './support.ts'

const CANNED = 'Earlier conversation condensed.'

export default withLog('broken-canned-checkpoint', (event, events) => {
  if (event.type === 'compaction/summary') return { ...event, data: { ...event.data, summary: [{ type: 'text', text: CANNED }] } }
  const previous = events[event.seq - 1]
  if (event.type !== 'user/message' || previous?.type !== 'compaction/summary') return event
  const content = event.data['content'] as Array<Record<string, unknown>>
  return { ...event, data: { ...event.data, content: [content[0], { type: 'text', text: CANNED }, content.at(-1)] } }
})
