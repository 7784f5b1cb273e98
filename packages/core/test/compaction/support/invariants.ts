/**
 * A small, independent checker of the bracket invariants INV-10 … INV-19 (§12.2) plus INV-40 and INV-47,
 * for the logs the compaction tests produce. It replays the log through a fresh validating EventLog and
 * judges each bracket event against the prefix before it (so prices and spans are those "at that point").
 */
import { expect } from 'vitest'
import { CHECKPOINT_CLOSE_TAG, CHECKPOINT_OPEN_TAG, CHECKPOINT_PREAMBLE } from '../../../src/constants.ts'
import { EventLog } from '../../../src/log/event-log.ts'
import type { CompactionSummaryData, Dialect, LogEvent, SessionEvent } from '../../../src/log/events.ts'
import type { ContentBlock, Message } from '../../../src/log/llm.ts'
import { fixedPrice } from '../../../src/meter/price.ts'
import { imageOffloadProjection } from '../../../src/offload/projection.ts'
import { deriveEventMessage } from '../../../src/surface/derive.ts'

/** Which fault exemptions apply (§12.0 "fault-exempt"). */
export interface BracketCheckOptions {
  dialect?: Dialect
  /** An injected checkpoint-append fault (FAULT-63): a summary may be followed by `end{error}` (INV-13). */
  replacementFault?: boolean
  /** A close or success-end fault (FAULT-60, FAULT-61): the last bracket may stay open (INV-19). */
  orphan?: boolean
}

interface Open {
  start: SessionEvent<'compaction/start'>
  summary: SessionEvent<'compaction/summary'> | null
  lastError: SessionEvent<'compaction/summary-error'> | null
}

/** Every violation as `"INV-nn seq S: reason"`; [] when the log keeps the bracket invariants. */
export function bracketViolations(events: readonly LogEvent[], options: BracketCheckOptions = {}): string[] {
  const out: string[] = []
  const log = new EventLog({ dialect: options.dialect ?? 'seed' })
  const used = new Set<string>()
  let open: Open | null = null
  let previous: LogEvent | undefined
  const fail = (inv: string, e: LogEvent, reason: string): void => { out.push(`${inv} seq ${e.seq}: ${reason}`) }

  for (const e of events) {
    const ev = e as SessionEvent
    const turn = log.state.openTurn
    // INV-13: the event right after a summary is its checkpoint (exempt: injected replacement fault → end{error}).
    if (previous?.type === 'compaction/summary') {
      const isCheckpoint = ev.type === 'user/message' && typeof ev.surfaceOp === 'object' && ev.data.source.kind === 'plugin' && ev.data.source.plugin === 'compact'
      const exempt = options.replacementFault === true && ev.type === 'compaction/end' && ev.data.error !== undefined
      if (!isCheckpoint && !exempt) fail('INV-13', e, `${ev.type} follows compaction/summary #${previous.seq}`)
    }
    // INV-40: after a summary-error the next bracket event is an offload (IMAGE_OFFLOAD_REQUIRED) or end{error}.
    if (open !== null && open.lastError !== null && (ev.type.startsWith('compaction/') || ev.type === 'image/offload')) {
      const code = open.lastError.data.failure.code
      const ok = (ev.type === 'image/offload' && code === 'IMAGE_OFFLOAD_REQUIRED') || (ev.type === 'compaction/end' && ev.data.error !== undefined)
      if (!ok) fail('INV-40', e, `${ev.type} follows compaction/summary-error #${open.lastError.seq}`)
      open.lastError = null
    }
    switch (ev.type) {
      case 'compaction/start':
        if (open !== null) fail('INV-10', e, `compaction/start while bracket ${open.start.data.compactionId} is open`)
        if (ev.data.compactionId === '') fail('INV-10', e, 'empty compactionId')
        if (used.has(ev.data.compactionId)) fail('INV-47', e, `compactionId ${ev.data.compactionId} reused`)
        used.add(ev.data.compactionId)
        if (ev.data.turn !== turn) fail('INV-11', e, `owner ${String(ev.data.turn)} but open turn ${String(turn)}`)
        open = { start: ev, summary: null, lastError: null }
        break
      case 'compaction/summary':
      case 'compaction/summary-error':
      case 'compaction/end': {
        if (open === null) { fail('INV-10', e, `${ev.type} outside a bracket`); break }
        const s = open.start.data
        if (ev.data.compactionId !== s.compactionId) fail('INV-10', e, `compactionId ${ev.data.compactionId} ≠ ${s.compactionId}`)
        if (ev.data.sourceCommandId !== s.sourceCommandId) fail('INV-10', e, 'sourceCommandId differs from the start')
        if (s.turn !== turn) fail('INV-11', e, `owner ${String(s.turn)} but open turn ${String(turn)}`)
        if (ev.type === 'compaction/summary') {
          if (open.summary !== null) fail('INV-12', e, 'a second compaction/summary')
          open.summary = ev
          checkSummary(log, ev, fail)
        } else if (ev.type === 'compaction/summary-error') {
          if (open.summary !== null) fail('INV-12', e, 'compaction/summary-error after the summary')
          open.lastError = ev
        } else {
          if (ev.data.turn !== s.turn) fail('INV-10', e, `end.turn ${String(ev.data.turn)} ≠ start.turn ${String(s.turn)}`)
          if (ev.data.error === undefined && open.summary === null) fail('INV-12', e, 'successful end without a summary')
          open = null
        }
        break
      }
      case 'user/message':
        if (ev.data.source.kind === 'plugin' && ev.data.source.plugin === 'compact') checkCheckpoint(log, ev, open, previous, fail)
        break
      case 'turn/start':
      case 'turn/end':
        if (open !== null) fail('INV-11', e, `${ev.type} while bracket ${open.start.data.compactionId} is open`)
        break
      case 'session/end-seed':
        open = null
        break
      default:
        break
    }
    log.accept(e)
    previous = e
  }
  if (open !== null && options.orphan !== true) out.push(`INV-19 at EOF: bracket ${open.start.data.compactionId} (#${open.start.seq}) is still open`)
  return out
}

/** Asserts `log` keeps INV-10 … INV-19 (with the given exemptions). */
export function expectBracketInvariants(log: EventLog, options: BracketCheckOptions = {}): void {
  expect(bracketViolations(log.events, { dialect: log.dialect, ...options })).toEqual([])
}

type Fail = (inv: string, e: LogEvent, reason: string) => void

function projected(log: EventLog, seq: number): Message | null {
  const event = log.event(seq)
  if (event === undefined) return null
  const m = deriveEventMessage(event)
  return m === null ? null : imageOffloadProjection(m, log.offloadedIndexes(seq))
}

/** INV-16 against the prefix before the summary. */
function checkSummary(log: EventLog, e: SessionEvent<'compaction/summary'>, fail: Fail): void {
  const d: CompactionSummaryData = e.data
  if (d.shadowedSeqs.length === 0) fail('INV-16', e, 'empty shadowedSeqs')
  if (d.shadowedRange.start !== d.shadowedSeqs[0] || d.shadowedRange.end !== d.shadowedSeqs.at(-1)) fail('INV-16', e, 'shadowedRange is not the first/last shadowed seq')
  let price = 0
  for (const s of d.shadowedSeqs) {
    const m = projected(log, s)
    if (m !== null) price += fixedPrice(m)
  }
  if (price !== d.shadowedTokenCount) fail('INV-16', e, `shadowedTokenCount ${d.shadowedTokenCount} ≠ Σ P_fixed ${price}`)
  if (!d.summary.every((b) => b.type === 'text')) fail('INV-16', e, 'non-text summary block')
  if (!d.summary.some((b) => b.text.trim() !== '')) fail('INV-16', e, 'summary without non-whitespace text')
  if (d.llmStreamCall === true && d.rawOutput === undefined) fail('INV-16', e, 'llmStreamCall without rawOutput')
}

/** INV-14, INV-15, INV-17, INV-18 against the prefix before the checkpoint. */
function checkCheckpoint(log: EventLog, e: SessionEvent<'user/message'>, open: Open | null, previous: LogEvent | undefined, fail: Fail): void {
  const op = e.surfaceOp
  const summary = open?.summary ?? null
  if (typeof op !== 'object' || open === null || summary === null || previous?.seq !== summary.seq) {
    fail('INV-15', e, 'a checkpoint that is not a replacement right after its bracket\'s summary')
    return
  }
  const source = e.data.source as { compactionId?: unknown; sourceCommandId?: unknown }
  const d = summary.data
  if (source.compactionId !== open.start.data.compactionId) fail('INV-14', e, 'source.compactionId differs from the bracket')
  if (source.sourceCommandId !== open.start.data.sourceCommandId) fail('INV-14', e, 'source.sourceCommandId differs from the bracket')
  if (op.start !== d.shadowedRange.start || op.end !== d.shadowedRange.end) fail('INV-14', e, 'surfaceOp differs from shadowedRange')
  const expected = [open.start.seq, summary.seq, ...d.shadowedSeqs]
  if (JSON.stringify(e.sourceEventSeqs) !== JSON.stringify(expected)) fail('INV-14', e, `sourceEventSeqs ${JSON.stringify(e.sourceEventSeqs)} ≠ ${JSON.stringify(expected)}`)
  const surface = log.state.surface
  const i = surface.position(op.start)
  const j = surface.position(op.end)
  if (JSON.stringify(surface.nodes.slice(i, j + 1)) !== JSON.stringify(d.shadowedSeqs)) fail('INV-14', e, 'the fold shadows other nodes than shadowedSeqs')
  if (fixedPrice(e.data) >= d.shadowedTokenCount) fail('INV-17', e, `P_fixed ${fixedPrice(e.data)} ≥ ${d.shadowedTokenCount}`)
  const framed: ContentBlock[] = [
    { type: 'text', text: `${CHECKPOINT_PREAMBLE}\n\n${CHECKPOINT_OPEN_TAG}` }, ...d.summary, { type: 'text', text: CHECKPOINT_CLOSE_TAG },
  ]
  if (JSON.stringify(e.data.content) !== JSON.stringify(framed)) fail('INV-18', e, 'checkpoint content is not the framed summary')
}
