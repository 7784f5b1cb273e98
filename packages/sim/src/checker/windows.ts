/**
 * The §12.0 windows of a whole log, for callers outside the checker (the `perPreStep` expectation, issue #15).
 * It folds the events through the checker's own `CheckerModel`, so a window here is exactly the one INV-24,
 * INV-25, INV-31 and INV-46 judge by: a pre-step window opens at a `turn/start` or `step/end` of an open turn
 * and closes at the next `step/start` or `turn/end`; an overflow window opens at a failed finish chunk with
 * `CONTEXT_WINDOW_EXCEEDED` and closes at the next chunk of that step, `step/end` or `turn/end`.
 */
import type { Dialect, LogEvent } from '@compaction-sim/core'
import { CheckerModel, type Window } from './model.ts'
import { resolveRunInputs } from './run-inputs.ts'
import type { FoldItem } from './types.ts'

/**
 * The window in force after each event of `events` (index i = after folding `events[i]`): an event at index
 * i > 0 lies in `windowsAfter[i - 1]`, and a request dispatched at log revision L (L events written) in
 * `windowsAfter[L - 1]`. Windows are shared objects: the same `Window` fills every index it spans.
 * The events must be one log in file order (as `readLog` returns them); the fold is lenient, never throws on
 * a broken log, and judges nothing.
 */
export function windowsAfter(events: readonly LogEvent[], dialect: Dialect): Array<Window | null> {
  const model = new CheckerModel(dialect, resolveRunInputs(null, null, dialect))
  return events.map((event, index) => {
    const item: FoldItem = {
      index, line: null, seq: event.seq, type: event.type, event, problems: [], duplicate: false, repair: false, tornFinal: false,
      excerpt: '',
    }
    model.fold(item, event)
    return model.window
  })
}
