/**
 * Broken example: the SSE reader drops the final usage chunk (it stops at the finish reason and never reads the
 * `choices: []` chunk that carries `usage`), so every reply is logged without the usage the provider reported
 * (§1.4.7): the meter never gets a provider anchor.
 *
 * Fails `sim conform --level must` with **WORLD-05** (`smoke/basic-pressure.yaml`).
 */
import { withFetch } from './support.ts'

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

export default withFetch('broken-usage-dropped', (fetch) => async (input, init) => {
  const response = await fetch(input, init)
  if (response.body === null || !(response.headers.get('content-type') ?? '').includes('text/event-stream')) return response
  return new Response(withoutUsageChunks(response.body), { status: response.status, headers: response.headers })
})
