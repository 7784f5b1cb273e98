/**
 * Broken subject: cached prompt tokens counted twice.
 *
 * Bug: the adapter copies `prompt_tokens` into `inputTokens` and also reports
 * `prompt_tokens_details.cached_tokens` as `cacheReadTokens`, but §1.2's buckets are disjoint
 * (`inputTokens` = uncached input only), so every cache hit is counted twice: the meter's anchors
 * (§2.5) and the cost report overstate the context exactly when caching works.
 * Real-world analogue: mapping OpenAI usage to Anthropic-style buckets without subtracting the cached part.
 * Why this id: the logged usage is internally consistent (the assistant message's usage is its stream's
 * usage, INV-04); only the world knows what it reported.
 *
 * @fails WORLD-05 smoke/basic-pressure
 */
import { exampleSubject } from '../subject-core-adapter/subject.ts'
import { rewriteChunks } from './support/adapter.ts'

export default {
  ...exampleSubject({
    adapter: (inner) => rewriteChunks(inner, (chunk) =>
      chunk.type === 'usage' && chunk.usage.cacheReadTokens !== undefined
        ? [{ type: 'usage', usage: { ...chunk.usage, inputTokens: chunk.usage.inputTokens + chunk.usage.cacheReadTokens } }]
        : [chunk]),
  }),
  name: 'broken-usage-cache-double-counted',
}
