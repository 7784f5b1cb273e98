/**
 * Image-offload selection and recording (§6.1, §6.3, §6.4, §6.8): which image occurrences of a
 * rejected request to offload, oldest first, and the `image/offload` event that marks them durably.
 */
import { assertNever } from '../errors.ts'
import type { EventLog } from '../log/event-log.ts'
import type { OffloadTarget, SessionEvent } from '../log/events.ts'
import type { LlmFailure, Message } from '../log/llm.ts'
import { messageContent } from '../log/session-state.ts'
import { countImages } from './projection.ts'

/** The canonical failure code of an adapter's image-budget rejection (§1.2.1, §6.1). */
export const IMAGE_OFFLOAD_REQUIRED = 'IMAGE_OFFLOAD_REQUIRED'

/** One message of the rejected request with the surface node it was derived from (as `deriveNodeMessages` returns). */
export interface RequestNode {
  readonly seq: number
  readonly message: Message
}

/** Why an offload selection was refused. */
export type OffloadErrorCode =
  | 'COUNT' // the requested count is not a positive integer (§6.1); the caller must not select at all

/** A refused offload selection. */
export class OffloadError extends Error {
  override readonly name = 'OffloadError'
  readonly code: OffloadErrorCode

  constructor(code: OffloadErrorCode, message: string) {
    super(message)
    this.code = code
  }
}

/**
 * `offloadImages` of an `IMAGE_OFFLOAD_REQUIRED` failure when it is a positive safe integer (§6.1);
 * undefined for any other code or a missing, non-integer or non-positive count (not handleable: the
 * failure stays authoritative).
 */
export function offloadCountOf(failure: LlmFailure): number | undefined {
  if (failure.code !== IMAGE_OFFLOAD_REQUIRED) return undefined
  const k: unknown = failure.offloadImages
  return typeof k === 'number' && Number.isSafeInteger(k) && k > 0 ? k : undefined
}

/**
 * §6.3 selection over the rejected request's nodes, in request order: only nodes whose event is a
 * `user/message` or `tool/result` (never system or assistant output), only seqs in `region` when it is
 * given (the bracket's selected region for a summary request, §6.8), images numbered depth-first over
 * the node's original event message (§6.2), already-offloaded indexes skipped, stopping at `count`.
 * Returns one target per node with ascending indexes, in request order; fewer than `count` occurrences
 * when fewer exist (partial relief, Q-11); `[]` when none is selectable (not handleable) and always in the
 * rc.8 dialect, which has no offload path (D-06). Throws `OffloadError('COUNT')` unless `count` is a
 * positive safe integer. Repeated seqs in `requestNodes` are visited once.
 */
export function selectOffload(
  requestNodes: readonly RequestNode[],
  log: EventLog,
  count: number,
  region?: ReadonlySet<number>,
): OffloadTarget[] {
  if (!Number.isSafeInteger(count) || count <= 0) {
    throw new OffloadError('COUNT', `an offload selection needs a positive integer count, got ${count} (§6.1)`)
  }
  if (!dialectOffloads(log)) return []
  const targets: OffloadTarget[] = []
  const visited = new Set<number>()
  let selected = 0
  for (const node of requestNodes) {
    if (selected === count) break
    if (visited.has(node.seq)) continue
    visited.add(node.seq)
    if (region !== undefined && !region.has(node.seq)) continue
    const event = log.event(node.seq)
    if (event === undefined || (event.type !== 'user/message' && event.type !== 'tool/result')) continue
    const images = countImages(messageContent(event))
    const offloaded = log.offloadedIndexes(node.seq)
    const indexes: number[] = []
    for (let index = 0; index < images && selected < count; index++) {
      if (offloaded.has(index)) continue
      indexes.push(index)
      selected++
    }
    if (indexes.length > 0) targets.push({ seq: event.seq, imageIndexes: indexes })
  }
  return targets
}

/**
 * Appends `image/offload { targets }` (§6.4) with `time = clock()` and returns the written event. The
 * targets are copied, so the caller's arrays are not frozen by the log. The `EventLog` validates §6.4
 * (current user/tool nodes, in-range, not-yet-offloaded, unique, ascending, at least one index) and
 * throws `LogError` (code `OFFLOAD`) otherwise, writing nothing.
 */
export function appendOffload(log: EventLog, targets: readonly OffloadTarget[], clock: () => number): SessionEvent<'image/offload'> {
  const copy = targets.map((t): OffloadTarget => ({ seq: t.seq, imageIndexes: [...t.imageIndexes] }))
  return log.append({ time: clock(), type: 'image/offload', data: { targets: copy } }) as SessionEvent<'image/offload'>
}

function dialectOffloads(log: EventLog): boolean {
  switch (log.dialect) {
    case 'seed':
      return true
    case 'dsh-0.1.0-rc.8':
      return false
    default:
      return assertNever(log.dialect, 'dialect')
  }
}
