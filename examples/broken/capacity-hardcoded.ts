/**
 * Broken subject: a hard-coded capacity.
 *
 * Bug: the adapter's route metadata (§2.7) answers every model with a 128k window from a static table
 * instead of the route's real one, so the pressure threshold (§3.4) is computed against a window the
 * route does not have: the subject compacts far too late, or only after an overflow.
 * Real-world analogue: `const CONTEXT = { default: 128_000 }` in an adapter written for one provider and
 * then pointed at a smaller (or self-hosted) model.
 * Why this id: the log is consistent with the capacity it claims; only the world knows the route's true
 * window (no capacity fault is declared, so they must agree).
 *
 * @fails WORLD-02 smoke/basic-pressure
 */
import { exampleSubject } from '../subject-core-adapter/subject.ts'

/** The one window the buggy table knows. */
const TABLE_WINDOW = 128_000

export default {
  ...exampleSubject({
    adapter: (inner) => ({
      resolveModel: async (provider, model, signal) => ({ ...await inner.resolveModel(provider, model, signal), context: { contextWindow: TABLE_WINDOW } }),
      stream: (options) => inner.stream(options),
    }),
  }),
  name: 'broken-capacity-hardcoded',
}
