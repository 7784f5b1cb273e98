/**
 * Broken subject: the HTTP client retries 429 and 5xx by itself.
 *
 * Bug: the fetch the adapter uses retries a 429 or 5xx answer up to twice before the adapter sees it, so
 * retries happen that the log never shows: no `llm/retry` (§1.4.13), no attempt, a retry budget the
 * policy does not control, and requests the capture (§1.1) does not hold.
 * Real-world analogue: the OpenAI and Anthropic SDKs' default `maxRetries: 2`, or `ky`/`got`/`urllib3`
 * retry options, left on under an agent loop that has its own retry policy.
 * Why this id: the log and capture agree with each other (INV-43 sees one request per attempt); only the
 * world served the hidden retries.
 *
 * @fails WORLD-06 faults/fault-16-transient-retry
 */
import type { Subject } from '@compaction-sim/sim'
import { exampleSubject } from '../subject-core-adapter/subject.ts'

/** How often the client retries by itself. */
const CLIENT_RETRIES = 2

/** `inner` retrying a 429 or 5xx answer `CLIENT_RETRIES` times (without waiting: the world's time is virtual). */
function retryingFetch(inner: typeof fetch): typeof fetch {
  return async (input, init) => {
    let response = await inner(input, init)
    for (let i = 0; i < CLIENT_RETRIES && (response.status === 429 || response.status >= 500); i++) {
      await response.body?.cancel()
      response = await inner(input, init)
    }
    return response
  }
}

const working = exampleSubject()
const subject: Subject = {
  ...working,
  name: 'broken-sdk-retries',
  runSession: (options) => working.runSession({ ...options, fetch: retryingFetch(options.fetch ?? fetch) }),
}
export default subject
