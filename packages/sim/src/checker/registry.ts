/**
 * Every invariant check of §12, keyed by its stable id (design §4 item 6), then the world-truth checks WORLD-01 …
 * WORLD-06 (issue #21). The registry is the one list the dispatcher runs; a test asserts that INV-01 … INV-47
 * and the WORLD ids are each registered exactly once.
 */
import { InvariantError } from '@compaction-sim/core'
import { BRACKET_CHECKS } from './bracket.ts'
import { LIFECYCLE_CHECKS } from './lifecycle.ts'
import { LOG_SURFACE_CHECKS } from './log-surface.ts'
import type { CheckerModel } from './model.ts'
import { OFFLOAD_CHECKS } from './offload.ts'
import { POLICY_CHECKS } from './policy.ts'
import { PRUNING_CHECKS } from './pruning.ts'
import { RECONSTRUCTION_CHECKS } from './reconstruction.ts'
import { RECOVERY_CHECKS } from './recovery.ts'
import type { CheckId, InvariantCheck } from './types.ts'
import { WORLD_CHECKS } from './world.ts'

/** Every registered check, in catalog order. */
export const CHECKS: readonly InvariantCheck<CheckerModel>[] = [
  ...LOG_SURFACE_CHECKS,
  ...BRACKET_CHECKS,
  ...PRUNING_CHECKS,
  ...POLICY_CHECKS,
  ...RECOVERY_CHECKS,
  ...OFFLOAD_CHECKS,
  ...RECONSTRUCTION_CHECKS,
  ...LIFECYCLE_CHECKS,
  ...WORLD_CHECKS,
]

/** The registered checks by id. Throws at load if an id is registered twice (a bug in sim). */
export const CHECKS_BY_ID: ReadonlyMap<CheckId, InvariantCheck<CheckerModel>> = (() => {
  const map = new Map<CheckId, InvariantCheck<CheckerModel>>()
  for (const c of CHECKS) {
    if (map.has(c.id)) throw new InvariantError(`invariant ${c.id} is registered twice`)
    map.set(c.id, c)
  }
  return map
})()
