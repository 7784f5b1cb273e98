/**
 * Broken example: the HTTP layer maps every error status to a retryable server error before the adapter
 * classifies it, so the provider's 400 `context_length_exceeded` reaches the runtime as a 503 and is labelled
 * `SERVER`: overflow recovery (§3.10) never runs, and the generic retry policy retries the oversized request
 * through its budget. The log is consistent with itself; only the world knows the answer was an overflow.
 *
 * Fails `sim conform --level must` with **WORLD-01** (`faults/fault-01-overflow-thrown.yaml`).
 */
import { withFetch } from './support.ts'

export default withFetch('broken-overflow-as-server', (fetch) => async (input, init) => {
  const response = await fetch(input, init)
  if (response.status < 400 || response.status === 429 || response.status >= 500) return response
  const text = await response.text()
  return new Response(text, { status: 503, headers: response.headers }) // "any error: try again later"
})
