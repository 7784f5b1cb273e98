/**
 * §12.1 Log and surface: INV-01 … INV-09. INV-01 … INV-04's per-line parts are judged by the input stage
 * (`input.ts`) and reported through the dispatcher; this module adds the parts that need the fold: the
 * assistant message against its own attempt (INV-04), replacement spans (INV-05, INV-06), surface identity
 * (INV-07), pairing balance (INV-08) and the turn/step state machine (INV-09).
 */
import {
  assembleAttempt, jsonEqual, TOOL_NOT_STARTED, TOOL_OUTCOME_UNKNOWN,
  type ContentBlock, type LogEvent, type SessionEvent,
} from '@compaction-sim/core'
import type { CheckerModel } from './model.ts'
import { at, blockText, hasNonWhitespace, sameSeqs, seqList } from './support.ts'
import type { InvariantCheck } from './types.ts'
import { plural } from '../plural.ts'

type Check = InvariantCheck<CheckerModel>

const SURFACE_TYPES = ['system/message', 'user/message', 'assistant/message', 'tool/result'] as const

/** INV-01: judged per line by the input stage (`Sequencer`); registered here for its statement and coverage. */
const inv01: Check = {
  id: 'INV-01',
  family: 'log-surface',
  statement: 'Contiguous sequence: the k-th event line holds seq k; no gaps or duplicates.',
  create: () => ({}),
}

/** INV-02: judged per line by the input stage (shape, lossless JSON, known or ignorable types). */
const inv02: Check = {
  id: 'INV-02',
  family: 'log-surface',
  statement: 'Envelope well-formedness: string type, number time, object data, lossless JSON, every type known or ignorable.',
  create: () => ({}),
}

/** INV-03: judged per line by the input stage (surfaceOp iff surface-eligible, provenance only on eligible types). */
const inv03: Check = {
  id: 'INV-03',
  family: 'log-surface',
  statement: 'Surface metadata only on surface-eligible types: surfaceOp present iff eligible; sourceEventSeqs only on eligible types.',
  create: () => ({}),
}

/** The content a cancelled stream keeps (§1.4.6): text and reasoning blocks with a non-whitespace character. */
function interruptedContent(blocks: readonly ContentBlock[]): ContentBlock[] {
  return blocks.filter((b) => hasNonWhitespace(blockText(b) ?? ''))
}

/** INV-04: provenance shape per line (input stage) plus an assistant message against its own attempt (§1.4.7). */
const inv04: Check = {
  id: 'INV-04',
  family: 'log-surface',
  statement: 'Provenance well-formed: unique earlier seqs, non-empty except on assistant/message; an assistant message cites exactly its attempt\'s chunks, and its content and usage are their assembly.',
  create: (_ctx, r) => ({
    types: ['assistant/message'],
    before: (event, _item, m) => {
      const e = event as SessionEvent<'assistant/message'>
      const cited = e.sourceEventSeqs
      if (cited === undefined) return
      if (cited.length === 0) {
        if (e.data.message.content.length > 0) r.violation(e.seq, `an empty provenance list means a known empty stream, but the message has ${plural(e.data.message.content.length, 'content block')}`)
        return
      }
      const step = m.step
      if (step === null || step.turn !== e.data.turn || step.step !== e.data.step) return // INV-09 reports the placement
      if (!sameSeqs(cited, step.attempt)) {
        r.violation(e.seq, `cites chunks ${seqList(cited)} but the chunks of its own attempt are ${seqList(step.attempt)}`)
        return
      }
      let assembled
      try {
        assembled = assembleAttempt(step.attemptChunks)
      } catch (error) {
        r.violation(e.seq, `its chunks ${seqList(cited)} cannot be assembled: ${error instanceof Error ? error.message : String(error)}`)
        return
      }
      const expected = e.data.interrupted === true ? interruptedContent(assembled.blocks) : assembled.blocks
      if (!jsonEqual(e.data.message.content, expected)) {
        r.violation(e.seq, `its content is not the assembly of its chunks ${seqList(cited)} (§1.4.6)${e.data.interrupted === true ? ' for an interrupted stream' : ''}`)
      }
      if (e.data.usage !== undefined && !jsonEqual(e.data.usage, assembled.usage)) {
        r.violation(e.seq, assembled.usage === undefined
          ? 'it carries usage but its attempt streamed no usage chunk'
          : 'its usage differs from the last usage chunk of its attempt (§1.4.7)')
      }
    },
  }),
}

/** The replace op of a surface event, or null for an append. */
function replaceOf(e: LogEvent): { start: number; end: number } | null {
  const op = 'surfaceOp' in e ? e.surfaceOp : undefined
  return typeof op === 'object' && op !== null ? op : null
}

/** INV-05: the span of every replacement resolves on the surface by position, and provenance covers it. */
const inv05: Check = {
  id: 'INV-05',
  family: 'log-surface',
  statement: 'Replacement validity and coverage: start and end are current nodes, pos(start) ≤ pos(end), and sourceEventSeqs covers every node of the positional span.',
  create: (_ctx, r) => ({
    types: SURFACE_TYPES,
    before: (e, _item, m) => {
      const op = replaceOf(e)
      if (op === null) return
      const span = m.span(op.start, op.end)
      if (!span.ok) {
        r.violation(e.seq, `replacement ${op.start}…${op.end}: ${span.reason}`)
        return
      }
      const cited = new Set<number>(('sourceEventSeqs' in e ? e.sourceEventSeqs : undefined) ?? [])
      const missing = span.seqs.filter((s) => !cited.has(s))
      if (missing.length > 0) r.violation(e.seq, `sourceEventSeqs must cite every node of the span ${seqList(span.seqs)}; missing ${seqList(missing)}`)
    },
  }),
}

/** `data` of a tool/result with `message.content[0].content` blanked (the one field a prune may change, §1.4.9). */
function blankedResult(data: unknown): unknown {
  const d = data as { message?: { content?: unknown[] } }
  const content = d.message?.content
  if (d.message === undefined || !Array.isArray(content) || content.length === 0) return data
  const first = content[0] as Record<string, unknown>
  return { ...d, message: { ...d.message, content: [{ ...first, content: null }, ...content.slice(1)] } }
}

/** INV-06: a tool-result replacement rewrites exactly one tool/result node, and only its inner content. */
const inv06: Check = {
  id: 'INV-06',
  family: 'log-surface',
  statement: 'Tool-result rewrite is content-only: it shadows exactly one tool/result node and the two events\' data are equal after blanking message.content[0].content.',
  create: (_ctx, r) => ({
    types: ['tool/result'],
    before: (e, _item, m) => {
      const op = replaceOf(e)
      if (op === null) return
      const span = m.span(op.start, op.end)
      if (!span.ok) return // INV-05
      if (span.seqs.length !== 1) {
        r.violation(e.seq, `a tool/result replacement shadows exactly one node; this one shadows ${seqList(span.seqs)}`)
        return
      }
      const old = m.event(span.seqs[0] as number)
      if (old === undefined || old.type !== 'tool/result') {
        r.violation(e.seq, `a tool/result replacement must replace a tool/result node; ${at(op.start)} is ${old?.type ?? 'unknown'}`)
        return
      }
      if (!jsonEqual(blankedResult(old.data), blankedResult(e.data))) {
        r.violation(e.seq, `differs from ${at(op.start)} outside message.content[0].content (ids, source, toolCallId, isError, turn, step, error, meta and extra fields must be copied, §1.4.9)`)
      }
    },
  }),
}

/** INV-07: a line that repeats an already-folded surface event would put a node on the surface twice or resurrect it. */
const inv07: Check = {
  id: 'INV-07',
  family: 'log-surface',
  statement: 'Replacement generation counts replace events; surface nodes are unique; a shadowed seq never re-enters the surface.',
  create: (_ctx, r) => ({
    input: (item, m) => {
      if (!item.duplicate || item.event === null || !('surfaceOp' in item.event) || item.event.surfaceOp === undefined) return
      const s = item.event.seq
      if (m.state.surface.isShadowed(s)) r.violation(item.index, `a second copy of ${at(s)} would return a shadowed node to the surface`)
      else if (m.position(s) >= 0) r.violation(item.index, `a second copy of ${at(s)} would put node ${s} on the surface twice`)
    },
  }),
}

/** INV-08: the tool-pairing balance over the surface in position order never goes negative (§4.1). */
const inv08: Check = {
  id: 'INV-08',
  family: 'log-surface',
  statement: 'Tool-pairing balance never negative over the current surface in position order.',
  create: (_ctx, r) => {
    let negative = false
    return {
      types: SURFACE_TYPES,
      after: (e, _item, m) => {
        const at0 = m.state.surface.firstNegativePosition
        const now = at0 >= 0
        if (now && !negative) {
          const node = m.nodes[at0]
          r.violation(e.seq, `tool pairing goes negative after node ${at(node ?? -1)} at position ${at0}: a tool result without an open call`)
        }
        negative = now
      },
    }
  },
}

/** Step-scoped types that must name the open turn and step. */
const STEP_TYPES = ['assistant/chunk', 'assistant/message', 'tool/call', 'llm/retry', 'llm/retry-started'] as const

/**
 * INV-09: the turn/step state machine, appended results answering pending calls, and turn-only events; and the
 * §11.4 repair rule: a crash-repair run answers every call of the interrupted turn that had no result exactly once.
 * A call the run leaves unanswered is reported at the repair `turn/end {interrupted}` (the spec states the rule as a
 * precondition of that event, and the run's end is where "left unanswered" becomes certain); a second answer is
 * reported at the synthetic result that answers an already answered call.
 */
const inv09: Check = {
  id: 'INV-09',
  family: 'log-surface',
  statement: 'Turn and step structure: turns consecutive and never nested, steps restart at 1 and are consecutive, step events name the open step, appended results answer a pending call, request/* and result rewrites inside a turn; a crash-repair run answers every unanswered call of the interrupted turn exactly once.',
  create: (_ctx, r) => {
    /** Call id → seq of the appended `tool/result` that answered it in the open turn (to name a second answer). */
    const answered = new Map<string, number>()
    /** An appended result names the open step and answers a pending `tool/call` (repair-run results: a call of the turn). */
    const toolResult = (e: SessionEvent<'tool/result'>, repair: boolean, m: CheckerModel): void => {
      const turn = m.turn
      if (replaceOf(e) !== null) {
        if (turn === null) r.violation(e.seq, 'a tool-result replacement (prune) outside an open turn')
        return
      }
      const callId = e.data.message.source.callId
      const code = e.data.error?.code
      if (repair && (code === TOOL_NOT_STARTED || code === TOOL_OUTCOME_UNKNOWN)) {
        // §11.4: a synthetic repair result names the open turn and the step of the message that requested the call.
        if (turn === null || turn.number !== e.data.turn) {
          r.violation(e.seq, `synthetic repair result names turn ${e.data.turn}, ${turn === null ? 'but no turn is open' : `the open turn is ${turn.number}`}`)
          return
        }
        const open = m.openCalls.get(callId)
        if (open === undefined) {
          const first = answered.get(callId)
          r.violation(e.seq, first !== undefined
            ? `synthetic repair result answers call ${callId} a second time (${at(first)} already answered it): ` +
              'a repair run answers each unanswered call exactly once (§11.4)'
            : `synthetic repair result answers call ${callId}, which no assistant message of turn ${turn.number} left unanswered`)
          return
        }
        answered.set(callId, e.seq)
        if (open.step !== e.data.step) r.violation(e.seq, `synthetic repair result names step ${e.data.step}, the call ${callId} was requested in step ${open.step}`)
        // §11.4: OUTCOME_UNKNOWN (citing exactly its tool/call) iff a tool/call was logged, else NOT_STARTED without provenance.
        const cited = e.sourceEventSeqs
        if (open.callSeq !== null) {
          if (code !== TOOL_OUTCOME_UNKNOWN) r.violation(e.seq, `call ${callId} was dispatched (tool/call ${at(open.callSeq)}): its repair result must be TOOL_OUTCOME_UNKNOWN, not ${code}`)
          else if (cited === undefined || cited.length !== 1 || cited[0] !== open.callSeq) r.violation(e.seq, `the TOOL_OUTCOME_UNKNOWN result must cite exactly its tool/call [${open.callSeq}]`)
        } else {
          if (code !== TOOL_NOT_STARTED) r.violation(e.seq, `call ${callId} was never dispatched (no tool/call): its repair result must be TOOL_NOT_STARTED, not ${code}`)
          else if (cited !== undefined) r.violation(e.seq, 'a TOOL_NOT_STARTED repair result carries no provenance (no tool/call was logged)')
        }
        return
      }
      if (!answered.has(callId)) answered.set(callId, e.seq)
      const step = m.step
      if (step === null) {
        r.violation(e.seq, `tool/result of step ${e.data.turn}.${e.data.step} with no open step`)
        return
      }
      if (step.turn !== e.data.turn || step.step !== e.data.step) {
        r.violation(e.seq, `tool/result names step ${e.data.turn}.${e.data.step}, the open step is ${step.turn}.${step.step}`)
        return
      }
      if (!step.pendingCalls.has(callId) && code !== TOOL_NOT_STARTED) {
        r.violation(e.seq, `tool/result answers call ${callId}, which is not a pending tool/call of step ${step.turn}.${step.step}`)
      }
    }
    /** The calls a repair `turn/end` leaves without any result (§11.4), in request order. */
    const unanswered = (seq: number, turn: number, m: CheckerModel): void => {
      const calls = [...m.openCalls].map(([id, c]) => `${id} (step ${c.step}${c.callSeq === null ? '' : `, tool/call ${at(c.callSeq)}`})`)
      r.violation(seq, `the crash-repair run closes turn ${turn} leaving ${calls.length} tool call(s) unanswered: ${calls.join(', ')}; ` +
        'repair answers every call of the interrupted turn that had no result exactly once before its turn/end (§11.4)')
    }
    return {
      types: ['turn/start', 'turn/end', 'step/start', 'step/end', 'tool/result', 'request/header', 'request/context', ...STEP_TYPES],
      before: (event, item, m) => {
        const e = event as SessionEvent
        const turn = m.turn
        const step = m.step
        switch (e.type) {
          case 'turn/start':
            answered.clear()
            if (turn !== null) r.violation(e.seq, `turn ${e.data.turn} starts while turn ${turn.number} (${at(turn.startSeq)}) is open: turns never nest`)
            if (e.data.turn !== m.lastTurnNumber + 1) r.violation(e.seq, `turn ${e.data.turn} does not follow turn ${m.lastTurnNumber}: turns start at the next number`)
            return
          case 'turn/end':
            if (turn === null) r.violation(e.seq, `turn/end ${e.data.turn} with no open turn`)
            else if (turn.number !== e.data.turn) r.violation(e.seq, `turn/end names turn ${e.data.turn}, the open turn is ${turn.number}`)
            if (step !== null) r.violation(e.seq, `turn/end while step ${step.turn}.${step.step} (${at(step.startSeq)}) is open`)
            if (item.repair && e.data.reason.kind === 'interrupted' && turn !== null && m.openCalls.size > 0) {
              unanswered(e.seq, turn.number, m)
            }
            answered.clear()
            return
          case 'step/start':
            if (turn === null) r.violation(e.seq, `step ${e.data.turn}.${e.data.step} starts outside a turn`)
            else if (turn.number !== e.data.turn) r.violation(e.seq, `step/start names turn ${e.data.turn}, the open turn is ${turn.number}`)
            else if (e.data.step !== turn.lastStep + 1) r.violation(e.seq, `step ${e.data.step} does not follow step ${turn.lastStep} of turn ${turn.number}: steps restart at 1 and are consecutive`)
            if (step !== null) r.violation(e.seq, `step/start while step ${step.turn}.${step.step} (${at(step.startSeq)}) is open`)
            return
          case 'step/end':
            if (step === null) r.violation(e.seq, `step/end ${e.data.turn}.${e.data.step} with no open step`)
            else if (step.turn !== e.data.turn || step.step !== e.data.step) r.violation(e.seq, `step/end names step ${e.data.turn}.${e.data.step}, the open step is ${step.turn}.${step.step}`)
            return
          case 'request/header':
          case 'request/context':
            if (turn === null) r.violation(e.seq, `${e.type} outside an open turn`)
            return
          case 'tool/result':
            toolResult(e, item.repair, m)
            return
          case 'assistant/chunk':
          case 'assistant/message':
          case 'tool/call':
          case 'llm/retry':
          case 'llm/retry-started':
            if (step === null) r.violation(e.seq, `${e.type} of step ${e.data.turn}.${e.data.step} with no open step`)
            else if (step.turn !== e.data.turn || step.step !== e.data.step) r.violation(e.seq, `${e.type} names step ${e.data.turn}.${e.data.step}, the open step is ${step.turn}.${step.step}`)
            return
          default:
            return
        }
      },
    }
  },
}

/** The §12.1 checks, in id order. */
export const LOG_SURFACE_CHECKS: readonly Check[] = [inv01, inv02, inv03, inv04, inv05, inv06, inv07, inv08, inv09]
