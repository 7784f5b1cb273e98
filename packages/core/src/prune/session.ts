/**
 * `pruneSession` (§5.4): one model-free pass over the surface that rewrites every oversized tool
 * result as a single-node replacement, each preceded by its `compaction/prune` metering event (§2.6).
 * The original events stay in the log untouched; only the surface changes.
 */
import type { CallId, Seq } from '../brand.ts'
import { assertNever, LogError } from '../errors.ts'
import type { EventDraft, LogEvent, SessionEvent } from '../log/events.ts'
import type { EventLog } from '../log/event-log.ts'
import type { ContentBlock, ToolResultMessage } from '../log/llm.ts'
import { fixedPrice } from '../meter/price.ts'
import { harnessReadOnlyPath, imageOffloadProjection, type ReadOnlyPathResolver } from '../offload/projection.ts'
import type { PruneSpec } from './config.ts'
import { measuredChars, pruneContent } from './content.ts'

/** One rewritten tool result (§5.4). `charsAfter` includes the marker; both are measured code points (§5.2). */
export interface PrunedEntry {
  originalSeq: Seq
  replacementSeq: Seq
  callId: CallId
  charsBefore: number
  charsAfter: number
}

/** The outcome of one pass: entries in snapshot (surface) order and Σ (charsBefore − charsAfter). */
export interface PruneResult {
  pruned: PrunedEntry[]
  charsRemoved: number
}

/** Options of `pruneSession` that the log alone cannot supply. */
export interface PruneSessionOptions {
  /** Read-only path of offloaded attachments used by the projection (§6.5); the harness path by default. */
  readOnlyPath?: ReadOnlyPathResolver
}

/** Why `pruneSession` refused or stopped. */
export type PruneErrorCode =
  | 'NO_OPEN_TURN' // a tool/result replacement is turn work (§1.3, §5.4 rule 4); nothing was written
  | 'LOCKED' // a live compaction bracket is open: prunes never land inside one (INV-24, §3.6); nothing was written
  | 'REJECTED' // the Session refused a pair; earlier pairs of this pass stay durable (§5.4 rule 4)

/** A refused or interrupted prune pass. `result` lists the pairs that were written before the error. */
export class PruneError extends Error {
  override readonly name = 'PruneError'
  readonly code: PruneErrorCode
  /** The pairs this pass wrote before stopping (empty for the pre-checks). */
  readonly result: PruneResult

  constructor(code: PruneErrorCode, message: string, result: PruneResult, options?: ErrorOptions) {
    super(message, options)
    this.code = code
    this.result = result
  }
}

/**
 * Runs one §5.4 pass over `log`: snapshots the surface's `tool/result` nodes in position order, prunes
 * each node's current input message (the offload projection in the seed dialect; the raw event message
 * in the rc.8 dialect, D-08) with `pruneContent`, and for every rewrite appends the
 * `compaction/prune` + `tool/result` replacement pair atomically via `log.appendMeteredReplacement`, so a
 * refused replacement never leaves a dangling metering event. Each event's `time` is one `clock()`
 * reading. Checks the open turn (and, in the seed dialect, the absence of a live lock) before writing
 * anything. Returns `{ pruned: [], charsRemoved: 0 }` when nothing exceeds the threshold. Throws
 * `PruneError` (`NO_OPEN_TURN`, `LOCKED`: nothing written; `REJECTED`: the Session refused a pair,
 * earlier pairs stay, the `LogError` is the cause). Only the compaction backend may call it, and only
 * after pressure or overflow qualified (§5.4 rule 6).
 */
export function pruneSession(log: EventLog, spec: PruneSpec, clock: () => number, options: PruneSessionOptions = {}): PruneResult {
  const result: PruneResult = { pruned: [], charsRemoved: 0 }
  if (log.state.openTurn === null) {
    const reason = 'pruneSession needs an open turn: a tool/result replacement is turn work (§1.3, §5.4 rule 4)'
    throw new PruneError('NO_OPEN_TURN', reason, result)
  }
  if (lockBlocksPruning(log)) {
    throw new PruneError('LOCKED', 'pruneSession refused: a live compaction bracket is open (INV-24, §3.6)', result)
  }
  const readOnlyPath = options.readOnlyPath ?? harnessReadOnlyPath
  const candidates: Array<SessionEvent<'tool/result'>> = []
  for (const seq of log.nodes) {
    const event = log.event(seq)
    if (isToolResult(event)) candidates.push(event)
  }
  for (const event of candidates) {
    const seq = event.seq
    const input = pruneInput(log, event, readOnlyPath)
    const block = input.content[0]
    const newInner = pruneContent(block.content, spec, log.dialect)
    if (newInner === null) continue
    const charsBefore = measuredChars(block.content, log.dialect)
    const charsAfter = measuredChars(newInner, log.dialect)
    const range = { start: seq, end: seq }
    const metering: EventDraft<'compaction/prune'> = {
      time: clock(),
      type: 'compaction/prune',
      data: { shadowedRange: { ...range }, shadowedSeqs: [seq], shadowedTokenCount: fixedPrice(input) },
    }
    const replacement: EventDraft<'tool/result'> = {
      time: clock(),
      type: 'tool/result',
      data: withInnerContent(event.data, newInner),
      surfaceOp: { op: 'replace', ...range },
      sourceEventSeqs: [seq],
    }
    let written: SessionEvent
    try {
      written = log.appendMeteredReplacement(metering, replacement)[1]
    } catch (err) {
      if (!(err instanceof LogError)) throw err
      throw new PruneError('REJECTED', `the Session refused the prune of node ${seq}: ${err.message}`, result, { cause: err })
    }
    result.pruned.push({ originalSeq: seq, replacementSeq: written.seq, callId: block.toolCallId, charsBefore, charsAfter })
    result.charsRemoved += charsBefore - charsAfter
  }
  return result
}

/** The message the pruner reads for a node (§5.4 "projected"; D-08 for the rc.8 dialect). */
function pruneInput(log: EventLog, event: SessionEvent<'tool/result'>, readOnlyPath: ReadOnlyPathResolver): ToolResultMessage {
  switch (log.dialect) {
    case 'seed':
      return imageOffloadProjection(event.data.message, log.offloadedIndexes(event.seq), readOnlyPath)
    case 'dsh-0.1.0-rc.8':
      return event.data.message
    default:
      return assertNever(log.dialect, 'dialect')
  }
}

/** Seed: a live lock refuses pruning (INV-24). rc.8: upstream prunes without looking at the lock. */
function lockBlocksPruning(log: EventLog): boolean {
  switch (log.dialect) {
    case 'seed':
      return log.state.lock.state === 'live'
    case 'dsh-0.1.0-rc.8':
      return false
    default:
      return assertNever(log.dialect, 'dialect')
  }
}

/** `data` with `message.content[0].content := inner`; every other field, known or unknown, kept in its key order (§1.4.9). */
function withInnerContent(data: ToolResultData, inner: ContentBlock[]): ToolResultData {
  const [first, ...rest] = data.message.content
  const content = [{ ...first, content: inner }, ...rest] as ToolResultMessage['content']
  return { ...data, message: { ...data.message, content } }
}

type ToolResultData = SessionEvent<'tool/result'>['data']

function isToolResult(event: LogEvent | undefined): event is SessionEvent<'tool/result'> {
  return event !== undefined && event.type === 'tool/result'
}
