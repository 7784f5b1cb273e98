/**
 * Broken subject: the capacity is never reported.
 *
 * Bug: the adapter reads the window from a field this provider does not send, finds nothing and reports
 * the route's capacity as unknown (§2.7); the subject then never compacts on pressure (§3.5 needs a
 * capacity) and learns of the limit only from overflows.
 * Real-world analogue: parsing `max_model_len` (vLLM) from a provider that says `context_length`
 * (OpenRouter), or `context_window` from one that says `max_input_tokens`.
 * Why this id: an unknown capacity is a legal log (request/context without `contextWindow`); only the
 * world knows that the route has a window, so WORLD-02 reports the missing one.
 *
 * @fails WORLD-02 smoke/basic-pressure
 */
import { exampleSubject } from '../subject-core-adapter/subject.ts'

export default {
  ...exampleSubject({
    adapter: (inner) => ({
      resolveModel: async (provider, model, signal) => {
        const { context: _ignored, ...info } = await inner.resolveModel(provider, model, signal)
        return info
      },
      stream: (options) => inner.stream(options),
    }),
  }),
  name: 'broken-capacity-missing',
}
