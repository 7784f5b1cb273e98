/**
 * Broken subject: a summary is applied after another writer replaced a node of its span.
 *
 * Bug: the bracket never revalidates (§7.6): when the summary returns, the implementation commits it anyway —
 * its `compaction/summary` keeps the span it selected at entry, and the checkpoint replaces the span as it lies
 * on the surface *now*, so it shadows the other writer's replacement instead of the node the summary covers.
 * The reference core detects the drift and closes the bracket `changed` (§13.6 FAULT-73: "the foreign replacement
 * stays, no checkpoint"); this subject turns that recorded failure into a commit.
 * Real-world analogue: "the summary is ready, apply it" without re-reading the session; a positional splice of
 * the stale range, with the provenance copied from the selection.
 * Why this id: INV-14 (checkpoint provenance and correlation) is the promise broken: the checkpoint's
 * `sourceEventSeqs` and the summary's `shadowedSeqs` name the selected nodes, but the fold shadows the foreign
 * replacement. Run on the catalog scenario (the pack has no §13.6 entry yet), through the reference subject's
 * test-only `plantAppend` seam (the engine's bracket append path, as for fuzz findings).
 *
 * @fails INV-14 scenarios/faults/fault-73-foreign-replacement-first-node.yaml
 */
import {
  CompactionId, MessageId, selectCompactableRange, TokenMeter, type CompactableRange, type EventDraft, type EventLog, type SessionEvent,
} from '@compaction-sim/core'
import { runReferenceSession, type Subject } from '@compaction-sim/sim'

/** The engine's append path with the bug: a `changed` close becomes summary + stale checkpoint + success end. */
function applyAfterForeign(log: EventLog): (draft: EventDraft) => SessionEvent {
  let selected: CompactableRange | null = null
  let startSeq = -1
  return (draft) => {
    if (draft.type === 'compaction/start' && draft.data.turn === null) {
      // What a manual compactNow selects (§3.7 step 3b): recorded once, never re-read.
      selected = selectCompactableRange(log, new TokenMeter(log, { dialect: log.dialect }).measure(), 0)
      startSeq = log.length
    }
    const error = draft.type === 'compaction/end' ? draft.data.error : undefined
    if (draft.type !== 'compaction/end' || selected === null || error === undefined || !error.includes('changed')) return log.append(draft)
    const span = selected
    selected = null
    const compactionId = CompactionId(draft.data.compactionId)
    const text = { type: 'text' as const, text: '## Primary Request and Intent\n- continue the task' }
    const summary = log.append({
      time: draft.time, type: 'compaction/summary',
      data: {
        compactionId, summary: [text], shadowedRange: { start: span.start, end: span.end }, shadowedSeqs: [...span.shadowedSeqs],
        shadowedTokenCount: 40, provider: 'openai', model: 'mock-128k',
      },
    })
    // The stale range spliced positionally: its first position now holds the foreign replacement.
    const nodes = log.state.surface.nodes
    const first = nodes[span.startPosition] ?? span.start
    const shadowed = nodes.slice(span.startPosition, span.endPosition + 1)
    log.append({
      time: draft.time, type: 'user/message', surfaceOp: { op: 'replace', start: first, end: span.end },
      sourceEventSeqs: [startSeq as never, summary.seq, ...span.shadowedSeqs, ...shadowed.filter((s) => !span.shadowedSeqs.includes(s))],
      data: {
        id: MessageId(`m-checkpoint-stale-${summary.seq}`), role: 'user', content: [text],
        source: { kind: 'plugin', plugin: 'compact', compactionId },
      },
    })
    return log.append({ time: draft.time, type: 'compaction/end', data: { compactionId, turn: null } })
  }
}

const subject: Subject = {
  name: 'broken-apply-after-foreign',
  runSession: (options) => runReferenceSession(options, { plantAppend: applyAfterForeign }),
}
export default subject
