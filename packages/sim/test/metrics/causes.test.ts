/**
 * §9.4 causes that the worked example (§9.5) does not reach: `tools-change` (divergence 0 against a source),
 * `route-change` (no source under this key while the last completed request was under another), and `none`
 * for a first request and after a TTL expiry; plus §9.3's "0 if keys differ".
 */
import { MessageId, type CapturedRequest, type Message, type ToolSchema } from '@compaction-sim/core'
import { describe, expect, it } from 'vitest'
import { scenarioCacheOf } from '../../src/metrics/cache.ts'
import { resolveCacheContract } from '../../src/metrics/contracts.ts'
import { cacheKeyOf, commonPrefix, segmentRequest } from '../../src/metrics/segments.ts'

const user = (id: string, text: string): Message => ({
  id: MessageId(id), role: 'user', content: [{ type: 'text', text }], source: { kind: 'user' },
})
const tool = (name: string): ToolSchema => ({ name, description: name, parameters: { type: 'object', properties: {} } })

function request(index: number, model: string, tools: ToolSchema[], messages: Message[], time = index): CapturedRequest {
  return { index, logRevisionAtDispatch: index, time, purpose: 'conversation', provider: 'p', model, messages, tools, outcome: 'stop' }
}

const a = user('a', 'A'.repeat(400))
const b = user('b', 'B'.repeat(40))

describe('§9.4 causes without a surface change', () => {
  it('tools-change, route-change, none (first request, TTL expiry)', () => {
    const requests = [
      request(0, 'm1', [tool('read')], [a]),
      request(1, 'm1', [tool('read'), tool('write')], [a, b]),
      request(2, 'm2', [tool('read')], [a]),
      request(3, 'm2', [tool('read')], [a], 10_000_000),
    ]
    const cache = scenarioCacheOf({
      requests, events: [], dialect: 'seed', spec: resolveCacheContract({ ttlMs: 60_000 }), imageTokens: () => undefined,
      scriptedUsage: () => false,
    })
    expect(cache.requests.map((r) => [r.index, r.divergence, r.cause, r.cached])).toEqual([
      [0, null, 'none', 0],
      [1, 0, 'tools-change', 0],
      [2, null, 'route-change', 0],
      [3, null, 'none', 0],
    ])
    // Request 1 recomputes only the message it shares with request 0; request 3 recomputes its whole (expired) prompt.
    expect(cache.requests.map((r) => r.recomputed)).toEqual([0, 108, 0, cache.requests[3]?.prompt])
    expect(cache.requests[3]?.prompt).toBeGreaterThan(108)
  })

  it('lcp is 0 across cache keys even for identical segments', () => {
    const one = segmentRequest(cacheKeyOf('p', 'm1'), [a], undefined, undefined)
    const two = segmentRequest(cacheKeyOf('p', 'm2'), [a], undefined, undefined)
    expect(commonPrefix(one, two)).toBe(0)
    expect(commonPrefix(one, segmentRequest(cacheKeyOf('p', 'm1'), [a, b], undefined, undefined))).toBe(2)
  })
})
