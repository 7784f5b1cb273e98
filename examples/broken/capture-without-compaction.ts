/**
 * Broken example: the request capture (§1.1) records conversation requests only and leaves out the summary
 * calls. Every §12 check passes, INV-44 (the summarizer request shape) included, because it judges captured
 * requests and has none to judge; the world served summary calls the capture does not show.
 *
 * Fails `sim conform --level must` with **WORLD-06** (`smoke/basic-pressure.yaml`).
 */
import { withResult } from './support.ts'

export default withResult('broken-capture-without-compaction', (result) => ({
  ...result,
  requests: result.requests.filter((r) => r.purpose === 'conversation').map((r, index) => ({ ...r, index })),
}))
