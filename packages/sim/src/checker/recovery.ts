/**
 * §12.5 Recovery: INV-32 … INV-35. An overflow window opens at a failed finish with
 * `CONTEXT_WINDOW_EXCEEDED` and ends at the next chunk of the same step (a retry), `step/end` or `turn/end`
 * (§12.0); these checks judge what may happen at each end.
 */
import type { LlmFailure, SessionEvent } from '@compaction-sim/core'
import type { CheckerModel, Window } from './model.ts'
import { at } from './support.ts'
import type { InvariantCheck } from './types.ts'

type Check = InvariantCheck<CheckerModel>

/** The overflow window a chunk of the open step closes by being a retry dispatch, or null. */
function retryOf(e: SessionEvent<'assistant/chunk'>, m: CheckerModel): Window | null {
  const w = m.window
  const s = m.step
  if (w === null || w.kind !== 'overflow' || s === null || s.attemptOpen) return null
  if (s.turn !== e.data.turn || s.step !== e.data.step || w.step !== s.step) return null
  return w
}

/** INV-32: a same-step retry after an overflow failure needs a surface replacement since the failure. */
const inv32: Check = {
  id: 'INV-32',
  family: 'recovery',
  statement: 'Overflow retry only on generation proof: after a CONTEXT_WINDOW_EXCEEDED failure, another attempt in the same step occurs only if replaceGeneration increased since the failure.',
  create: (_ctx, r) => ({
    types: ['assistant/chunk'],
    before: (event, _item, m) => {
      const e = event as SessionEvent<'assistant/chunk'>
      const w = retryOf(e, m)
      if (w === null) return
      const generation = m.state.surface.replaceGeneration
      if (generation <= w.generationAtOpen) {
        r.violation(e.seq, `retry in step ${e.data.turn}.${e.data.step} after the overflow failure ${at(w.openSeq)} without a surface replacement (replaceGeneration still ${generation})`)
      }
    },
  }),
}

/** INV-33: overflow-recovered retries since the turn's last assistant message stay within maxOverflowRetries. */
const inv33: Check = {
  id: 'INV-33',
  family: 'recovery',
  statement: 'Overflow retry cap: within a turn, overflow-recovered retries since its most recent assistant/message (or turn/start) are at most the routed policy\'s maxOverflowRetries.',
  create: (_ctx, r) => {
    let retries = 0
    return {
      types: ['turn/start', 'assistant/message', 'assistant/chunk'],
      before: (event, _item, m) => {
        if (event.type === 'turn/start' || event.type === 'assistant/message') {
          retries = 0
          return
        }
        const e = event as SessionEvent<'assistant/chunk'>
        if (retryOf(e, m) === null) return
        retries++
        const route = m.routedTarget()
        if (route === null) {
          r.skip(e.seq, 'no routed target: maxOverflowRetries cannot be resolved')
          return
        }
        const cap = m.policy(route).maxOverflowRetries
        if (retries > cap) r.violation(e.seq, `overflow-recovered retry number ${retries} since the last assistant message exceeds maxOverflowRetries ${cap} of ${route.provider}/${route.model}`)
      },
    }
  },
}

/** INV-34: an overflow window that ends without a retry leaves the original failure as the turn's error. */
const inv34: Check = {
  id: 'INV-34',
  family: 'recovery',
  statement: 'Original overflow failure preserved: if an overflow window ends without a retry and the turn is not aborted, the turn ends {kind:\'error\'} with the code and message of the last failed finish (crash-repair exempt).',
  create: (_ctx, r) => {
    let unrecovered: Window | null = null
    return {
      types: ['turn/start', 'step/end', 'turn/end'],
      before: (event, item, m) => {
        if (event.type === 'turn/start') {
          unrecovered = null
          return
        }
        if (m.window?.kind === 'overflow') unrecovered = m.window
        if (event.type !== 'turn/end' || unrecovered === null) return
        const w = unrecovered
        unrecovered = null
        const reason = (event as SessionEvent<'turn/end'>).data.reason
        if (reason.kind === 'aborted' || (reason.kind === 'interrupted' && item.repair)) return
        const last: LlmFailure | null = m.turn?.lastFailure?.failure ?? w.failure
        if (last === null) return
        if (reason.kind !== 'error') {
          r.violation(event.seq, `the overflow failure ${at(w.openSeq)} was not recovered, but the turn ends ${reason.kind} instead of {kind:'error'} with it`)
          return
        }
        if (reason.error.code !== last.code || reason.error.message !== last.message) {
          r.violation(event.seq, `the turn ends with error ${reason.error.code} "${reason.error.message}", not the last failed finish's ${last.code} "${last.message}"`)
        }
      },
    }
  },
}

const PROTOCOL_CODES: ReadonlySet<string> = new Set(['CONTEXT_WINDOW_EXCEEDED', 'IMAGE_OFFLOAD_REQUIRED'])

/** INV-35: the generic retry policy never retries the two protocol codes (§3.10). */
const inv35: Check = {
  id: 'INV-35',
  family: 'recovery',
  statement: 'Protocol codes never use the generic retry budget: no llm/retry has failure.code CONTEXT_WINDOW_EXCEEDED or IMAGE_OFFLOAD_REQUIRED.',
  create: (_ctx, r) => ({
    types: ['llm/retry'],
    before: (event) => {
      const e = event as SessionEvent<'llm/retry'>
      if (PROTOCOL_CODES.has(e.data.failure.code)) r.violation(e.seq, `llm/retry for ${e.data.failure.code}: overflow recovery and image offload never use the generic retry budget`)
    },
  }),
}

/** The §12.5 checks, in id order. */
export const RECOVERY_CHECKS: readonly Check[] = [inv32, inv33, inv34, inv35]
