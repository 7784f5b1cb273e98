/**
 * Broken subject: a context-window overflow labelled as a transient server error.
 *
 * Bug: the adapter's error mapping knows a handful of statuses and sends the rest to `SERVER`, so the
 * provider's `400 context_length_exceeded` (§1.2.2 → `CONTEXT_WINDOW_EXCEEDED`) comes out as `SERVER`. The
 * agent then retries it through the generic budget (`llm/retry`, §1.4.13) instead of recovering by
 * compaction (§3.10), and every retry overflows the same way.
 * Real-world analogue: `if (status >= 500 || !KNOWN_4XX.has(status)) return 'server_error'` in a home-grown
 * OpenAI client, or a proxy that rewrites upstream 4xx into 502.
 * Why this id: the log is consistent with itself (a SERVER failure may be retried, INV-35 sees no protocol
 * code), so only the world's truth shows it: the world answered the overflow class, the log says SERVER.
 *
 * @fails WORLD-01 faults/fault-01-overflow-thrown
 */
import { FailureCode } from '@compaction-sim/core'
import { exampleSubject } from '../subject-core-adapter/subject.ts'
import { relabelFailures } from './support/adapter.ts'

export default {
  ...exampleSubject({
    adapter: (inner) => relabelFailures(inner, (failure) =>
      failure.code === FailureCode.CONTEXT_WINDOW_EXCEEDED ? { ...failure, code: FailureCode.SERVER } : failure),
  }),
  name: 'broken-overflow-as-server',
}
