/**
 * Command: a pressure tick — one tool call whose reply reports provider usage at `ratio` of the window, so
 * the next pre-step check (§3.9) measures against a high anchor (§2.5) and may prune or compact.
 */
import { AssistantToolBatchCommand } from './assistant-tool-batch.ts'

/** A one-call batch carrying a usage report near or above the threshold. */
export class PressureTickCommand extends AssistantToolBatchCommand {
  constructor(ratio: number) {
    super(1, ratio, 'pressure')
  }
}
