/**
 * Broken example: the HTTP client retries 429 and 5xx answers by itself, below the runtime, so neither the log
 * nor the request capture shows the failed attempt or the retry (the generic retry policy of §1.4.13 never
 * sees it: no `llm/retry`, no budget spent). The world served one more request than the capture holds.
 *
 * Fails `sim conform --level must` with **WORLD-06** (`faults/fault-16-transient-retry.yaml`).
 */
import { withFetch } from './support.ts'

export default withFetch('broken-hidden-retry', (fetch) => async (input, init) => {
  const first = await fetch(input, init)
  if (first.status !== 429 && first.status < 500) return first
  await first.body?.cancel()
  return fetch(input, init) // "just retry once": the body is a string, so it can be sent again
})
