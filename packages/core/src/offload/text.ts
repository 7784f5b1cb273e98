/**
 * The text projection of the hardened profile (`hardening.oversizedUserText`, HARD-5,
 * `packages/core/docs/hardened.md`): what image offload (§6) does for images, for one user text block too
 * large for its route. A `text/offload` event marks the block durably; every later conversation and summary
 * request carries a short placeholder naming the block, its size and a read-only path instead of the text.
 * The event log keeps the text verbatim (never a deletion). Pure functions of a message and its marks.
 */
import { Seq } from '../brand.ts'
import type { EventLog } from '../log/event-log.ts'
import type { EventDraft, SessionEvent, TextOffloadData } from '../log/events.ts'
import type { ContentBlock, Message, TextBlock } from '../log/llm.ts'
import { blockPrice } from '../meter/price.ts'

const PLACEHOLDER_OPENING = '[user text moved out of this request because it is larger than this route allows: '
const PLACEHOLDER_ENDING = '. Read it there, in parts, if you need it.]'

/** The text-offload marks of one node: `blockIndex` → its event data. */
export type TextOffloadMarks = ReadonlyMap<number, TextOffloadData>

/**
 * The read-only path of a user text block, derived from the message id like the attachment handles of §6.5:
 * `user-text/<message id>.<block index>.txt` (characters outside `[A-Za-z0-9._-]` of the id become `_`).
 */
export function userTextReadOnlyPath(messageId: string, blockIndex: number): string {
  return `user-text/${messageId.replace(/[^A-Za-z0-9._-]/g, '_')}.${blockIndex}.txt`
}

/** The bound of a route (`floor(maxWindowRatio × contextWindow)`): a user text block priced above it is projected. */
export function oversizedTextBound(maxWindowRatio: number, contextWindow: number): number {
  return Math.floor(maxWindowRatio * contextWindow)
}

/** The placeholder of one projected block: what moved (size, price, bound) and where it can be read. */
export function textOffloadPlaceholder(mark: TextOffloadData, chars: number): string {
  return `${PLACEHOLDER_OPENING}${chars} characters (${mark.tokens} tokens, above the ${mark.bound}-token limit for one block); ` +
    `read-only copy: ${mark.path}${PLACEHOLDER_ENDING}`
}

/** True exactly for strings `textOffloadPlaceholder` can produce. */
export function isTextOffloadPlaceholder(text: string): boolean {
  return text.startsWith(PLACEHOLDER_OPENING) && text.endsWith(PLACEHOLDER_ENDING)
}

/**
 * Replaces each marked top-level text block of `message` by its placeholder, in place (indexes, other blocks
 * and the message id unchanged). Returns the input itself when nothing is marked. A mark that does not name
 * a text block is ignored (the log validation refuses such a mark before it is folded).
 */
export function textOffloadProjection<M extends Message>(message: M, marks: TextOffloadMarks | undefined): M {
  if (marks === undefined || marks.size === 0) return message
  const content = message.content.map((b, i): ContentBlock => {
    const mark = marks.get(i)
    if (mark === undefined || b.type !== 'text') return b
    const text: TextBlock = { type: 'text', text: textOffloadPlaceholder(mark, (b as TextBlock).text.length) }
    return text
  })
  return { ...message, content }
}

/** One user text block above the bound, not yet projected. */
export interface OversizedText { blockIndex: number; tokens: number }

/**
 * The text blocks of a user message priced (structural `blockPrice`, §2.2) above `bound` and not in `marks`,
 * in block order.
 */
export function oversizedTextBlocks(content: readonly ContentBlock[], bound: number, marks: TextOffloadMarks | undefined): OversizedText[] {
  const out: OversizedText[] = []
  for (const [i, b] of content.entries()) {
    if (b.type !== 'text' || marks?.has(i) === true) continue
    const tokens = blockPrice(b)
    if (tokens > bound) out.push({ blockIndex: i, tokens })
  }
  return out
}

/**
 * The rule's pre-request step: for every current appended `user/message` node (surface order; checkpoints,
 * which replace, are not user text) and each of its text
 * blocks priced above `bound` that is not yet projected, appends one `text/offload` (time `clock()`, through
 * `append`, the log's own by default), so the
 * request built next carries the placeholder. Returns the written events (none when nothing is oversized).
 */
export function offloadOversizedText(
  log: EventLog, bound: number, clock: () => number, append: (draft: EventDraft<'text/offload'>) => SessionEvent = (d) => log.append(d),
): SessionEvent<'text/offload'>[] {
  const written: SessionEvent<'text/offload'>[] = []
  for (const seq of log.nodes) { // text/offload is log-only: appending it leaves the surface as it is
    const event = log.event(seq) as SessionEvent | undefined
    if (event?.type !== 'user/message' || event.surfaceOp !== 'append') continue // a checkpoint is not user text
    const message = event.data
    for (const block of oversizedTextBlocks(message.content, bound, log.textOffloads(seq))) {
      const data: TextOffloadData = {
        seq: Seq(seq), blockIndex: block.blockIndex, tokens: block.tokens, bound, path: userTextReadOnlyPath(message.id, block.blockIndex),
      }
      written.push(append({ time: clock(), type: 'text/offload', data }) as SessionEvent<'text/offload'>)
    }
  }
  return written
}
