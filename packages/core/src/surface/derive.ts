/**
 * Projection from events to model messages (§1.7) and `deriveMessages` (§10.1): the model-visible
 * messages of a log prefix, in surface position order, with the image-offload projection applied.
 */
import type { LogEvent, SessionEvent } from '../log/events.ts'
import type { ContentBlock, Message } from '../log/llm.ts'
import { imageOffloadProjection, type ReadOnlyPathResolver } from '../offload/projection.ts'
import { textOffloadProjection, type TextOffloadMarks } from '../offload/text.ts'

/** True for a message content that projects to no wire message: no blocks, or only `""` text blocks (§1.4.5 rule 4). */
function isEmptySystemContent(content: readonly ContentBlock[]): boolean {
  return content.every((b) => b.type === 'text' && b['text'] === '')
}

/** The message a surface event projects to before registered projections, or null (§1.7). */
export function deriveEventMessage(event: LogEvent): Message | null {
  const e = event as SessionEvent
  switch (e.type) {
    case 'system/message':
      return isEmptySystemContent(e.data.content) ? null : e.data
    case 'user/message':
      return e.data
    case 'assistant/message':
      return e.data.message.content.length === 0 ? null : e.data.message
    case 'tool/result':
      return e.data.message
    default:
      return null
  }
}

/** What `deriveMessages` needs of a session: its surface order, its events and its offload marks. */
export interface DeriveSource {
  readonly nodes: readonly number[]
  event(seq: number): LogEvent | undefined
  offloadedIndexes(seq: number): ReadonlySet<number>
  /** Projected user text blocks of a node (hardened `text/offload`, HARD-5); absent means none. */
  textOffloads?(seq: number): TextOffloadMarks
}

/**
 * The projections a node's message gets on every request (§1.7): image offload (§6.5), then the hardened
 * text projection (HARD-5; a faithful log has no mark, so this is the image projection alone).
 */
export function projectNodeMessage<M extends Message>(
  message: M, seq: number, source: Pick<DeriveSource, 'offloadedIndexes' | 'textOffloads'>, readOnlyPath?: ReadOnlyPathResolver,
): M {
  const offloaded = source.offloadedIndexes(seq)
  const images = offloaded.size > 0 ? imageOffloadProjection(message, offloaded, readOnlyPath) : message
  return textOffloadProjection(images, source.textOffloads?.(seq))
}

/** A derived message together with the surface node it came from. */
export interface DerivedMessage { seq: number; message: Message }

/**
 * The projected messages of the surface in position order, skipping nulls (§10.1), each with its node
 * seq (the association §6.3 selection needs). Throws when a node does not resolve to its event.
 */
export function deriveNodeMessages(source: DeriveSource, readOnlyPath?: ReadOnlyPathResolver): DerivedMessage[] {
  const out: DerivedMessage[] = []
  for (const seq of source.nodes) {
    const event = source.event(seq)
    if (event === undefined) throw new RangeError(`surface node ${seq} does not resolve to a log event`)
    const m = deriveEventMessage(event)
    if (m === null) continue
    out.push({ seq, message: projectNodeMessage(m, seq, source, readOnlyPath) })
  }
  return out
}

/** The model-visible messages of the surface (§10.1 `deriveMessages`). */
export function deriveMessages(source: DeriveSource, readOnlyPath?: ReadOnlyPathResolver): Message[] {
  return deriveNodeMessages(source, readOnlyPath).map((d) => d.message)
}
