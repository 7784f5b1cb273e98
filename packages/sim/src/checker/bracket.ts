/**
 * §12.2 The bracket: INV-10 … INV-19. Judged on the model's open bracket of the current lifecycle (an open
 * bracket is forgotten at an end-seed, §11.3) and on the checkpoint that lands right after the bracket's
 * `compaction/summary` (§7.7).
 */
import {
  CHECKPOINT_CLOSE_TAG, CHECKPOINT_OPEN_TAG, CHECKPOINT_PREAMBLE, deriveEventMessage, fixedPrice, jsonEqual, TOOL_OUTCOME_UNKNOWN,
  type ContentBlock, type LogEvent, type MessageSource, type SessionEvent,
} from '@compaction-sim/core'
import type { BracketState, CheckerModel } from './model.ts'
import {
  at, blockText, hasFault, hasNonWhitespace, isCheckpointEvent, isCheckpointSource, missingEndSeedNote, sameSeqs, seqList, sourceField, summaryBefore,
} from './support.ts'
import type { InvariantCheck } from './types.ts'

type Check = InvariantCheck<CheckerModel>

const BRACKET_TYPES = ['compaction/start', 'compaction/summary', 'compaction/summary-error', 'compaction/end'] as const

type BracketEvent = SessionEvent<'compaction/start' | 'compaction/summary' | 'compaction/summary-error' | 'compaction/end'>

/** The open bracket when `e` carries its id; null when no bracket is open or `e` names another one. */
function ownBracket(e: BracketEvent, m: CheckerModel): BracketState | null {
  const b = m.bracket
  return b !== null && b.start.data.compactionId === e.data.compactionId ? b : null
}

/** INV-10: one bracket at a time per lifecycle; every bracket event carries the open bracket's ids and owner. */
const inv10: Check = {
  id: 'INV-10',
  family: 'bracket',
  statement: 'Bracket pairing and identity: start only when no bracket is open in the lifecycle; summary, summary-error and end only inside the open bracket with its compactionId and sourceCommandId; end.turn equals start.turn; ids are non-empty.',
  create: (_ctx, r) => ({
    types: BRACKET_TYPES,
    before: (event, item, m) => {
      const e = event as BracketEvent
      const b = m.bracket
      if (e.type === 'compaction/start') {
        if (b !== null) r.violation(e.seq, `compaction/start ${e.data.compactionId} while bracket ${b.start.data.compactionId} (${at(b.start.seq)}) is still open${missingEndSeedNote(item, m)}`)
        return
      }
      if (b === null) {
        r.violation(e.seq, `${e.type} ${e.data.compactionId} outside any open bracket`)
        return
      }
      const start = b.start.data
      if (e.data.compactionId !== start.compactionId) {
        r.violation(e.seq, `${e.type} carries compactionId ${e.data.compactionId}; the open bracket (${at(b.start.seq)}) is ${start.compactionId}`)
      }
      if (e.data.sourceCommandId !== start.sourceCommandId) {
        r.violation(e.seq, `${e.type} carries sourceCommandId ${String(e.data.sourceCommandId)}; the bracket's (${at(b.start.seq)}) is ${String(start.sourceCommandId)}`)
      }
      if (e.type === 'compaction/end' && e.data.turn !== start.turn) {
        r.violation(e.seq, `compaction/end turn ${String(e.data.turn)} differs from the start's turn ${String(start.turn)} (${at(b.start.seq)})`)
      }
    },
  }),
}

/**
 * Append faults whose bracket is left open for good (§13.5): FAULT-60 (success-path end refused) and FAULT-61
 * (end{error} refused) leave a live orphan, and "every later entry point in this lifecycle reports busy" — so
 * the session's later turns start and end while it is open.
 */
const ORPHAN_APPEND_FAULTS = ['FAULT-60', 'FAULT-61']

/**
 * INV-11: numeric-owner brackets inside their turn, null-owner brackets between turns, no turn boundary inside a
 * bracket. Reading for a declared FAULT-60/61 (consistent with INV-19's "the fault's expected orphan"): a turn
 * boundary crossing an open bracket is held back, and reported only if that bracket later shows another event
 * (then it was no orphan); a bracket that stays open to the end of the log or to an end-seed is the orphan.
 */
const inv11: Check = {
  id: 'INV-11',
  family: 'bracket',
  statement: 'Owner enclosure: a numeric-owner bracket\'s events occur while that turn is open, a null-owner bracket\'s while no turn is open; no turn/start or turn/end while a bracket is open (except a repair run before an end-seed).',
  create: (ctx, r) => {
    const orphanFault = hasFault(ctx.inputs, ORPHAN_APPEND_FAULTS)
    /** Turn boundaries crossing a possibly orphaned bracket, by its compactionId (only with an orphan fault). */
    const heldBack = new Map<string, Array<{ seq: number; message: string }>>()
    const crossing = (seq: number, message: string, id: string): void => {
      if (!orphanFault) {
        r.violation(seq, message)
        return
      }
      const held = heldBack.get(id) ?? []
      held.push({ seq, message: `${message}, and the bracket continues at a later event (it is no FAULT-60/61 orphan)` })
      heldBack.set(id, held)
    }
    const enclosed = (seq: number, what: string, owner: number | null, m: CheckerModel): void => {
      const open = m.turn?.number ?? null
      if (owner === null && open !== null) r.violation(seq, `${what} of a turn: null bracket occurs while turn ${open} is open`)
      if (owner !== null && open !== owner) r.violation(seq, `${what} of a bracket owned by turn ${owner} occurs while ${open === null ? 'no turn' : `turn ${open}`} is open`)
    }
    return {
      types: [...BRACKET_TYPES, 'turn/start', 'turn/end', 'user/message'],
      before: (event, item, m) => {
        const b = m.bracket
        switch (event.type) {
          case 'turn/start':
          case 'turn/end':
            if (b !== null && !item.repair) {
              const id = b.start.data.compactionId
              crossing(event.seq, `${event.type} while bracket ${id} (${at(b.start.seq)}) is open${missingEndSeedNote(item, m)}`, id)
            }
            return
          case 'user/message':
            if (b !== null && isCheckpointEvent(event) && summaryBefore(event, m) !== null) enclosed(event.seq, 'the checkpoint', b.start.data.turn, m)
            return
          case 'compaction/start':
            enclosed(event.seq, 'compaction/start', (event as SessionEvent<'compaction/start'>).data.turn, m)
            return
          default: {
            if (b === null) return
            const held = heldBack.get(b.start.data.compactionId)
            if (held !== undefined) {
              heldBack.delete(b.start.data.compactionId)
              for (const h of held) r.violation(h.seq, h.message)
            }
            enclosed(event.seq, event.type, b.start.data.turn, m)
          }
        }
      },
    }
  },
}

/** INV-12: at most one summary, no summary-error after it, and a successful end requires exactly one. */
const inv12: Check = {
  id: 'INV-12',
  family: 'bracket',
  statement: 'One summary per bracket: at most one compaction/summary; no summary-error after it; an end without error requires exactly one summary.',
  create: (_ctx, r) => ({
    types: ['compaction/summary', 'compaction/summary-error', 'compaction/end'],
    before: (event, _item, m) => {
      const e = event as BracketEvent
      const b = ownBracket(e, m)
      if (b === null) return
      const seen = b.summary === null ? '' : ` (${at(b.summary.seq)})`
      if (e.type === 'compaction/summary' && b.summaries >= 1) r.violation(e.seq, `a second compaction/summary in bracket ${b.start.data.compactionId}; the first is${seen}`)
      if (e.type === 'compaction/summary-error' && b.summaries >= 1) r.violation(e.seq, `compaction/summary-error after the bracket's summary${seen}`)
      if (e.type === 'compaction/end' && e.data.error === undefined && b.summaries !== 1) {
        r.violation(e.seq, `compaction/end without error, but the bracket (${at(b.start.seq)}) has ${b.summaries} summaries (exactly one is required)`)
      }
    },
  }),
}

/** INV-13: the event after a summary is its checkpoint replacement (torn-final and FAULT-63 exempt). */
const inv13: Check = {
  id: 'INV-13',
  family: 'bracket',
  statement: 'Summary adjacency: the event right after a compaction/summary is its checkpoint replacement (exempt: torn-final summary, injected replacement-append fault followed by end{error}).',
  create: (ctx, r) => {
    const appendFault = hasFault(ctx.inputs, ['FAULT-63'], (f) => f.target === 'append' && f.when.eventType === 'user/message')
    let awaitingEnd: number | null = null
    return {
      input: (item, m) => {
        const prev = m.prevItem
        if (prev !== null && !prev.duplicate && prev.event?.type === 'compaction/summary' && !prev.tornFinal) {
          const e = item.event
          const op = e !== null && !item.duplicate && 'surfaceOp' in e ? e.surfaceOp : undefined
          const checkpoint = e !== null && e.type === 'user/message' && typeof op === 'object'
          if (!checkpoint) {
            if (appendFault) awaitingEnd = prev.seq
            else r.violation(item.seq, `the event after compaction/summary ${at(prev.seq)} is ${item.type}, not its checkpoint replacement`)
          }
        }
        if (awaitingEnd !== null && item.event !== null && !item.duplicate && item.type.startsWith('compaction/') && item.seq !== awaitingEnd) {
          const end = item.event as SessionEvent<'compaction/end'>
          if (item.type !== 'compaction/end' || end.data.error === undefined) {
            r.violation(item.seq, `after compaction/summary ${at(awaitingEnd)} without its checkpoint (injected append fault), the next bracket event must be compaction/end with error; found ${item.type}`)
          }
          awaitingEnd = null
        }
      },
      end: (m) => {
        const last = m.prevItem
        if (last !== null && !last.duplicate && last.event?.type === 'compaction/summary' && !last.tornFinal && !appendFault) {
          r.violation(last.seq, 'the log ends right after a compaction/summary: its checkpoint replacement is missing')
        }
      },
    }
  },
}

/** INV-14: the checkpoint correlates with its bracket and summary, and shadows exactly the summary's nodes. */
const inv14: Check = {
  id: 'INV-14',
  family: 'bracket',
  statement: 'Checkpoint provenance and correlation: compact source with the bracket\'s ids, span equal to the summary\'s shadowedRange, sourceEventSeqs exactly [startSeq, summarySeq, ...shadowedSeqs], and the fold shadows exactly shadowedSeqs.',
  create: (_ctx, r) => ({
    // The replacement right after a summary stored under another type (its compact source, if any, is the input stage's).
    input: (item, m) => {
      const e = item.event
      if (e === null || item.duplicate || e.type === 'user/message' || !('surfaceOp' in e) || typeof e.surfaceOp !== 'object') return
      const prev = m.prevItem
      if (prev === null || prev.duplicate || prev.event?.type !== 'compaction/summary' || prev.seq !== item.seq - 1) return
      const data = e.data as { source?: MessageSource; message?: { source?: MessageSource } }
      if (isCheckpointSource(data.source) || isCheckpointSource(data.message?.source)) return
      r.violation(item.seq, `the replacement after compaction/summary ${at(prev.seq)} is stored as ${e.type}: the checkpoint is one user/message with source {kind:'plugin', plugin:'compact'} (§1.4.4)`)
    },
    types: ['user/message'],
    before: (event, _item, m) => {
      const e = event as SessionEvent<'user/message'>
      const source = e.data.source
      if (isCheckpointSource(source)) {
        const id = sourceField(source, 'compactionId')
        if (typeof id !== 'string' || id === '') r.violation(e.seq, 'a checkpoint source without a compactionId cannot be correlated with its bracket (§1.6)')
      }
      const summary = summaryBefore(e, m)
      const b = m.bracket
      if (summary === null || b === null || b.summary !== summary) return
      const start = b.start
      if (!isCheckpointSource(source)) {
        r.violation(e.seq, `the replacement after compaction/summary ${at(summary.seq)} has source ${JSON.stringify(source)}, not {kind:'plugin', plugin:'compact'}`)
      } else {
        if (sourceField(source, 'compactionId') !== start.data.compactionId) r.violation(e.seq, `checkpoint compactionId ${String(sourceField(source, 'compactionId'))} differs from its bracket's ${start.data.compactionId} (${at(start.seq)})`)
        if (sourceField(source, 'sourceCommandId') !== start.data.sourceCommandId) r.violation(e.seq, `checkpoint sourceCommandId ${String(sourceField(source, 'sourceCommandId'))} differs from its bracket's ${String(start.data.sourceCommandId)}`)
      }
      const op = e.surfaceOp
      if (typeof op !== 'object') return
      const range = summary.data.shadowedRange
      if (op.start !== range.start || op.end !== range.end) {
        r.violation(e.seq, `checkpoint span ${op.start}…${op.end} differs from the summary's shadowedRange ${range.start}…${range.end} (${at(summary.seq)})`)
      }
      const expected = [start.seq, summary.seq, ...summary.data.shadowedSeqs]
      const cited = e.sourceEventSeqs ?? []
      if (!sameSeqs(cited, expected)) r.violation(e.seq, `sourceEventSeqs ${seqList(cited)} must be exactly [startSeq, summarySeq, ...shadowedSeqs] = ${seqList(expected)}`)
      const span = m.span(op.start, op.end)
      if (span.ok && !sameSeqs(span.seqs, summary.data.shadowedSeqs)) {
        r.violation(e.seq, `the fold shadows ${seqList(span.seqs)} but the summary (${at(summary.seq)}) names shadowedSeqs ${seqList(summary.data.shadowedSeqs)}`)
      }
    },
  }),
}

/** INV-15: a checkpoint is always a replacement landing right after its own bracket's summary. */
const inv15: Check = {
  id: 'INV-15',
  family: 'bracket',
  statement: 'Checkpoints only inside their bracket: a user/message with a compact checkpoint source is a replacement immediately after its bracket\'s compaction/summary.',
  create: (_ctx, r) => ({
    types: ['user/message'],
    before: (event, _item, m) => {
      if (!isCheckpointEvent(event)) return
      const e = event
      if (typeof e.surfaceOp !== 'object') {
        r.violation(e.seq, 'a checkpoint is appended; checkpoints only ever replace the span they summarise')
        return
      }
      const summary = summaryBefore(e, m)
      const b = m.bracket
      if (summary === null) {
        r.violation(e.seq, 'a checkpoint lands without its compaction/summary right before it')
        return
      }
      if (b === null || b.summary !== summary || summary.data.compactionId !== sourceField(e.data.source, 'compactionId')) {
        r.violation(e.seq, `a checkpoint follows compaction/summary ${at(summary.seq)}, which is not the summary of its own open bracket`)
      }
    },
  }),
}

/** INV-16: the summary record is consistent and its shadow price is Σ P_fixed of its projected nodes now. */
const inv16: Check = {
  id: 'INV-16',
  family: 'bracket',
  statement: 'Summary record consistency: non-empty shadowedSeqs whose ends are shadowedRange, shadowedTokenCount = Σ P_fixed of their projected messages now, summary is text only with visible text, llmStreamCall implies rawOutput.',
  create: (_ctx, r) => ({
    types: ['compaction/summary'],
    before: (event, _item, m) => {
      const e = event as SessionEvent<'compaction/summary'>
      const d = e.data
      const seqs = d.shadowedSeqs
      if (seqs.length === 0) return // reported by the input stage
      if (d.shadowedRange.start !== seqs[0] || d.shadowedRange.end !== seqs[seqs.length - 1]) {
        r.violation(e.seq, `shadowedRange ${d.shadowedRange.start}…${d.shadowedRange.end} does not match the first and last of shadowedSeqs ${seqList(seqs)}`)
      }
      if (!Number.isSafeInteger(d.shadowedTokenCount) || d.shadowedTokenCount < 0) {
        r.violation(e.seq, `shadowedTokenCount ${d.shadowedTokenCount} is not a non-negative integer`)
      } else {
        const notLive = seqs.filter((s) => m.position(s) < 0)
        if (notLive.length > 0) r.violation(e.seq, `shadowedSeqs name ${seqList(notLive)}, which are not current surface nodes`)
        else {
          let sum = 0
          for (const s of seqs) sum += m.meter.fixedPriceOf(s)
          if (sum !== d.shadowedTokenCount) r.violation(e.seq, `shadowedTokenCount ${d.shadowedTokenCount} differs from Σ P_fixed of the projected messages of ${seqList(seqs)} = ${sum} (§2.6)`)
        }
      }
      const blocks = d.summary as ContentBlock[]
      if (blocks.some((b) => b.type !== 'text')) r.violation(e.seq, 'summary holds a block that is not text')
      else if (!blocks.some((b) => hasNonWhitespace(blockText(b) ?? ''))) r.violation(e.seq, 'summary has no text block with a non-whitespace character (§8.4 step 5)')
    },
  }),
}

/** INV-17: the framed checkpoint prices below the shadow price of what it replaces (both P_fixed, §7.5). */
const inv17: Check = {
  id: 'INV-17',
  family: 'bracket',
  statement: 'Replacement smaller than source: P_fixed(checkpoint message) < shadowedTokenCount of its summary.',
  create: (_ctx, r) => ({
    types: ['user/message'],
    before: (e, _item, m) => {
      const summary = summaryBefore(e, m)
      if (summary === null) return
      const message = deriveEventMessage(e)
      const price = message === null ? 0 : fixedPrice(message)
      if (price >= summary.data.shadowedTokenCount) {
        r.violation(e.seq, `the checkpoint prices ${price} (P_fixed), not below the shadowedTokenCount ${summary.data.shadowedTokenCount} of ${at(summary.seq)} (§7.5)`)
      }
    },
  }),
}

const FORBIDDEN_IN_CHECKPOINT: ReadonlySet<string> = new Set(['image', 'reasoning', 'tool-call'])

/** INV-18: checkpoint content is the framed summary (seed: exact constants; rc.8: structure only, §14.1). */
const inv18: Check = {
  id: 'INV-18',
  family: 'bracket',
  statement: 'Checkpoint framing: content is [text(PREAMBLE + "\\n\\n<compacted-summary>"), ...summary, text("</compacted-summary>")] with summary equal to compaction/summary.summary; no image, reasoning or tool-call blocks.',
  create: (ctx, r) => ({
    types: ['user/message'],
    before: (event, _item, m) => {
      const summary = summaryBefore(event, m)
      if (summary === null) return
      const e = event as SessionEvent<'user/message'>
      const content = e.data.content
      const bad = content.find((b) => FORBIDDEN_IN_CHECKPOINT.has(b.type))
      if (bad !== undefined) r.violation(e.seq, `the checkpoint holds a ${bad.type} block`)
      const first = content[0]
      const last = content[content.length - 1]
      const middle = content.slice(1, -1)
      const opening = `\n\n${CHECKPOINT_OPEN_TAG}`
      const firstOk = ctx.dialect === 'seed'
        ? jsonEqual(first, { type: 'text', text: `${CHECKPOINT_PREAMBLE}${opening}` })
        : first?.type === 'text' && (blockText(first) ?? '').endsWith(opening)
      if (content.length < 2 || !firstOk) {
        r.violation(e.seq, ctx.dialect === 'seed'
          ? 'the first checkpoint block is not text(CHECKPOINT_PREAMBLE + "\\n\\n<compacted-summary>") (§8.5)'
          : 'the first checkpoint block does not end with "\\n\\n<compacted-summary>" (§14.1)')
        return
      }
      if (!jsonEqual(last, { type: 'text', text: CHECKPOINT_CLOSE_TAG })) r.violation(e.seq, 'the last checkpoint block is not text("</compacted-summary>") (§8.5)')
      if (!jsonEqual(middle, summary.data.summary)) r.violation(e.seq, `the framed blocks differ from compaction/summary.summary of ${at(summary.seq)}`)
    },
  }),
}

/** Faults after which an open bracket at the end of the log is the expected orphan (§13.4, §13.5). */
const ORPHAN_FAULTS = ['FAULT-50', 'FAULT-51', 'FAULT-52', 'FAULT-53', 'FAULT-60', 'FAULT-61']

/** True for events only crash repair writes (§11.4): an interrupted turn/end, an outcome-unknown synthetic result. */
function repairOnly(e: LogEvent | null): boolean {
  if (e === null) return false
  if (e.type === 'turn/end') return (e as SessionEvent<'turn/end'>).data.reason.kind === 'interrupted'
  if (e.type === 'tool/result') {
    // A pruned copy of a synthetic result (a §5.4 replacement keeps its error) is no repair closer (issue #8 fuzz finding).
    const result = e as SessionEvent<'tool/result'>
    return typeof result.surfaceOp !== 'object' && result.data.error?.code === TOOL_OUTCOME_UNKNOWN
  }
  return false
}

/** INV-19: no bracket is left open unless a declared crash or close fault explains it; repair never writes compaction events. */
const inv19: Check = {
  id: 'INV-19',
  family: 'bracket',
  statement: 'Lock released at quiescence: no bracket open at the end of a log without crash/close faults; a crash-repair run never contains a compaction/* event.',
  create: (ctx, r) => ({
    types: [...BRACKET_TYPES, 'compaction/prune'],
    before: (e, _item, m) => {
      const prev = m.prevItem
      if (prev !== null && !prev.duplicate && repairOnly(prev.event)) {
        r.violation(e.seq, `${e.type} follows crash-repair closer ${at(prev.seq)}: repair closes turns, steps and tool calls, never a bracket (§11.4)`)
      }
    },
    end: (m) => {
      const b = m.bracket
      if (b === null) return
      const crash = [...ctx.inputs.crashes].some((s) => s >= b.start.seq)
      if (crash || hasFault(ctx.inputs, ORPHAN_FAULTS)) return
      r.violation(b.start.seq, `bracket ${b.start.data.compactionId} (${at(b.start.seq)}) is still open at the end of the log and no crash or close fault explains it`)
    },
  }),
}

/** The §12.2 checks, in id order. */
export const BRACKET_CHECKS: readonly Check[] = [inv10, inv11, inv12, inv13, inv14, inv15, inv16, inv17, inv18, inv19]
