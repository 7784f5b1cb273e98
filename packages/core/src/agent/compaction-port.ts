/**
 * What the loop needs of a compaction engine (§3.6, §3.7, §3.9): `CompactionEngine` satisfies it
 * structurally. A port rather than the class, so a test or a third-party backend can stand in for the
 * basic engine (§0.2: the backend is replaceable; the loop's listeners are not).
 */
import type { CompactionResult } from '../compaction/bracket.ts'
import type { IdleAdmission, RouteContextNotes } from '../compaction/engine.ts'

/** The engine calls the loop makes. */
export interface AgentCompactionEngine {
  /** §3.9 pre-step listener: below pressure writes nothing; never throws (failures are warnings). */
  preStep(signal?: AbortSignal): Promise<void>
  /**
   * §3.6: overflow compaction (may prune, then at most one bracket with `R = 0`). Throws on busy (before
   * pruning), summary failures and commit failures; a prune may have landed before it throws.
   */
  compactIfNeeded(trigger: 'context-overflow', signal: AbortSignal): Promise<CompactionResult | null>
  /** §3.7: manual idle compaction through the agent's admission. */
  compactNow(options: { signal?: AbortSignal; sourceCommandId?: string; admission: IdleAdmission }): Promise<CompactionResult | null>
  /**
   * Hardened HARD-8 (`hardening.capacitySanity`): the optional fields of the route's next `request/context`
   * (calibration factor, capacity warning); absent or `{}` under the protocol.
   */
  routeContextNotes?(provider: string, model: string): RouteContextNotes
}
