/**
 * Broken subject: the SSE reader drops the final usage chunk.
 *
 * Bug: the stream reader stops at the finish reason and never reads the `choices: []` chunk that carries
 * `usage`, so every reply is logged without the usage the provider reported (§1.4.7): the meter never gets a
 * provider anchor (§2.5) and cost reports read zero.
 * Real-world analogue: an SSE loop that `break`s on `finish_reason` and so never reads the trailing usage
 * chunk that `stream_options.include_usage` asks for.
 * Why this id: a reply without usage is a legal log; only the world knows it reported usage.
 *
 * @fails WORLD-05 smoke/basic-pressure
 */
import type { Subject } from '@compaction-sim/sim'
import { exampleSubject } from '../subject-core-adapter/subject.ts'

/** Removes every SSE data line whose chunk has no choices (the usage chunk), keeping the rest of the stream intact. */
function withoutUsageChunks(body: ReadableStream<Uint8Array>): ReadableStream<Uint8Array> {
  const decoder = new TextDecoder()
  const encoder = new TextEncoder()
  let pending = ''
  const keep = (frame: string): boolean => {
    const data = /^data: (.*)$/m.exec(frame)?.[1]
    if (data === undefined || data === '[DONE]') return true
    try {
      const chunk = JSON.parse(data) as { choices?: unknown[] }
      return Array.isArray(chunk.choices) && chunk.choices.length > 0
    } catch {
      return true
    }
  }
  return body.pipeThrough(new TransformStream<Uint8Array, Uint8Array>({
    transform(bytes, controller) {
      pending += decoder.decode(bytes, { stream: true })
      const frames = pending.split('\n\n')
      pending = frames.pop() ?? ''
      for (const frame of frames) if (keep(frame)) controller.enqueue(encoder.encode(`${frame}\n\n`))
    },
    flush(controller) {
      if (pending !== '' && keep(pending)) controller.enqueue(encoder.encode(pending))
    },
  }))
}

/** `inner` with the usage chunks cut out of every event stream. */
function droppingFetch(inner: typeof fetch): typeof fetch {
  return async (input, init) => {
    const response = await inner(input, init)
    if (response.body === null || !(response.headers.get('content-type') ?? '').includes('text/event-stream')) return response
    return new Response(withoutUsageChunks(response.body), { status: response.status, headers: response.headers })
  }
}

const working = exampleSubject()
const subject: Subject = {
  ...working,
  name: 'broken-usage-dropped',
  runSession: (options) => working.runSession({ ...options, fetch: droppingFetch(options.fetch ?? fetch) }),
}
export default subject
