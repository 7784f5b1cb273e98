/**
 * §12.8 Lifecycle: INV-45 … INV-47. The lock is the log itself (§11.1): the latest unmatched
 * `compaction/start` after the newest end-seed is live; one before it is stale and blocks nothing.
 */
import type { LogEvent, SessionEvent } from '@compaction-sim/core'
import type { CheckerModel } from './model.ts'
import { at, isCheckpointSource, missingEndSeedNote, sourceField } from './support.ts'
import type { InvariantCheck } from './types.ts'

type Check = InvariantCheck<CheckerModel>

/** INV-45: no compaction/start while a live unmatched start exists (§11.1 `lockState`). */
const inv45: Check = {
  id: 'INV-45',
  family: 'lifecycle',
  statement: 'Lock discipline: no compaction/start while a live unmatched start exists (after the latest end-seed); a stale orphan blocks nothing.',
  create: (_ctx, r) => ({
    types: ['compaction/start'],
    before: (e, item, m) => {
      const lock = m.state.lock
      if (lock.state === 'live') r.violation(e.seq, `compaction/start while the lock is live: ${lock.bracket.compactionId} (${at(lock.bracket.startSeq)}) is unmatched in this lifecycle${missingEndSeedNote(item, m)}`)
    },
  }),
}

/** Bracket events other than the start that must stay in the start's window (INV-46); the checkpoint is matched by its source. */
const BRACKET_LATER_TYPES = ['compaction/summary', 'compaction/summary-error', 'compaction/end', 'user/message'] as const

/**
 * INV-46: brackets and prunes sit where their entry point runs (§3.5–§3.10, §11.6). The placement of a bracket is
 * judged at its start; for a pressure or overflow bracket, every later event of it (summary, summary-error, its
 * checkpoint, end) must still lie in the window the start opened in, and the first that does not is reported
 * (once per bracket). An in-bracket `image/offload` directly follows its summary-error (INV-37) and a prune's
 * replacement directly follows the prune (INV-20), so judging those neighbours covers them.
 */
const inv46: Check = {
  id: 'INV-46',
  family: 'lifecycle',
  statement: 'Compaction placement: pressure brackets and prune runs in pre-step windows; overflow prunes and brackets in overflow windows of the failed step; turn: null brackets between turns; explicit-region brackets inside their owning turn; every event of a pressure or overflow bracket in its window.',
  create: (ctx, r) => {
    /** Start seq of the last bracket reported for an out-of-window event (one report per bracket). */
    let reportedStart = -1
    const later = (event: LogEvent, m: CheckerModel): void => {
      const b = m.bracket
      if (b === null || (b.mode !== 'pressure' && b.mode !== 'overflow') || b.start.seq === reportedStart) return
      const id = b.start.data.compactionId
      if (event.type === 'user/message') {
        const source = (event as SessionEvent<'user/message'>).data.source
        if (!isCheckpointSource(source) || sourceField(source, 'compactionId') !== id) return
      } else if ((event as SessionEvent<'compaction/summary' | 'compaction/summary-error' | 'compaction/end'>).data.compactionId !== id) {
        return // another bracket's event: INV-10 reports it
      }
      const w = m.window
      if (w !== null && w.openSeq === b.windowSeq) return
      reportedStart = b.start.seq
      const kind = b.mode === 'pressure' ? 'pre-step' : 'overflow'
      const where = w === null ? 'outside any pre-step or overflow window' : `in the ${w.kind} window opened at ${at(w.openSeq)}`
      r.violation(event.seq, `${event.type} of the ${b.mode} bracket ${id} (${at(b.start.seq)}) lies ${where}, not in the ${kind} window ` +
        `opened at ${at(b.windowSeq ?? -1)} where the bracket started: every event of the bracket lies in its window`)
    }
    return {
      types: ['compaction/start', 'compaction/prune', ...BRACKET_LATER_TYPES],
      before: (event, _item, m) => {
        const open = m.turn?.number ?? null
        if (event.type === 'compaction/prune') {
          if (m.window === null) r.violation(event.seq, 'a prune outside any pre-step or overflow window')
          return
        }
        if (event.type !== 'compaction/start') {
          later(event, m)
          return
        }
        const e = event as SessionEvent<'compaction/start'>
        const owner = e.data.turn
        if (ctx.inputs.explicitRegionStarts.has(e.seq)) {
          if (owner === null || owner !== open) r.violation(e.seq, `an explicit-region bracket owned by ${owner === null ? 'no turn' : `turn ${owner}`} while ${open === null ? 'no turn' : `turn ${open}`} is open`)
          return
        }
        if (owner === null) {
          if (open !== null) r.violation(e.seq, `a manual (turn: null) bracket while turn ${open} is open`)
          return
        }
        const w = m.window
        if (w === null) r.violation(e.seq, `an automatic bracket owned by turn ${owner} outside any pre-step or overflow window${open === null ? ' (no turn is open)' : ''}`)
        else if (w.turn !== owner) r.violation(e.seq, `an automatic bracket owned by turn ${owner} in a ${w.kind} window of turn ${w.turn}`)
      },
    }
  },
}

/** INV-47: each compactionId opens one bracket, and no event uses the id of a bracket that has ended. */
const inv47: Check = {
  id: 'INV-47',
  family: 'lifecycle',
  statement: 'Compaction identity uniqueness: a compactionId is used by exactly one compaction/start; no event carries a compactionId whose bracket has ended.',
  create: (_ctx, r) => {
    const late = (seq: number, id: string, what: string, m: CheckerModel): void => {
      const openHere = m.bracket !== null && m.bracket.start.data.compactionId === id
      if (!openHere && m.endedIds.has(id)) r.violation(seq, `${what} carries compactionId ${id}, whose bracket (${at(m.usedIds.get(id) ?? -1)}) has already ended`)
    }
    return {
      types: ['compaction/start', 'compaction/summary', 'compaction/summary-error', 'compaction/end', 'user/message'],
      before: (event, _item, m) => {
        if (event.type === 'user/message') {
          const source = (event as SessionEvent<'user/message'>).data.source
          const id = isCheckpointSource(source) ? sourceField(source, 'compactionId') : undefined
          if (typeof id === 'string') late(event.seq, id, 'a checkpoint', m)
          return
        }
        const e = event as SessionEvent<'compaction/start' | 'compaction/summary' | 'compaction/summary-error' | 'compaction/end'>
        const id = e.data.compactionId
        if (e.type === 'compaction/start') {
          const first = m.usedIds.get(id)
          if (first !== undefined) r.violation(e.seq, `compactionId ${id} was already used by compaction/start ${at(first)}`)
          return
        }
        late(e.seq, id, e.type, m)
      },
    }
  },
}

/** The §12.8 checks, in id order. */
export const LIFECYCLE_CHECKS: readonly Check[] = [inv45, inv46, inv47]
