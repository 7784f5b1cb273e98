/**
 * Checks of the hardened profile's selection rules (issue #19, packages/core/docs/hardened.md). They run only
 * when the run manifest's `compaction` resolves (`resolveCompactionConfig`) to a hardening spec with the rule
 * on; a faithful run never registers them, so its reports are unchanged.
 *
 * HARD-6 (`hardening.openTurnPrompt`): no checkpoint written while a turn is open shadows that turn's own
 * user prompt (the first appended `user/message` after its `turn/start`).
 */
import type { LogEvent } from '@compaction-sim/core'
import type { CheckerModel } from './model.ts'
import { at, hardenedRuleOn } from './support.ts'
import type { InvariantCheck } from './types.ts'

type Check = InvariantCheck<CheckerModel>

/** HARD-6: a compaction inside an open turn never summarizes that turn's own user prompt. */
const hard6: Check = {
  id: 'HARD-6',
  family: 'policy',
  statement: 'Open turn prompt kept (hardened openTurnPrompt): no compaction/summary written while a turn is open lists that turn\'s own user prompt in shadowedSeqs.',
  applicability: hardenedRuleOn('openTurnPrompt', 'faithful §4.2'),
  create: (_ctx, r) => {
    let open = false
    let prompt: number | null = null
    return {
      types: ['turn/start', 'turn/end', 'user/message', 'compaction/summary'],
      after: (e: LogEvent) => {
        switch (e.type) {
          case 'turn/start':
            open = true
            prompt = null
            return
          case 'turn/end':
            open = false
            prompt = null
            return
          case 'user/message':
            if (open && prompt === null && 'surfaceOp' in e && e.surfaceOp === 'append') prompt = e.seq
            return
          case 'compaction/summary': {
            if (!open || prompt === null) return
            const shadowed = (e.data as { shadowedSeqs?: readonly number[] }).shadowedSeqs ?? []
            if (shadowed.includes(prompt)) {
              r.violation(e.seq, `the summary shadows the open turn's own user prompt ${at(prompt)} (hardening.openTurnPrompt keeps it verbatim)`)
            }
            return
          }
          default:
            return
        }
      },
    }
  },
}

/** The hardened selection checks, in HARD-id order. */
export const HARDENED_SELECTION_CHECKS: readonly Check[] = [hard6]
