/**
 * Broken example: the adapter does not pass on the provider's `offloadImages` count; "to be safe" it asks for
 * every image to go, so the offload path (§6.3) removes all eligible images where the provider demanded n. The
 * log is consistent with itself (each offload names images that exist); the world asked for fewer. Only a
 * subject that declares `imageOffload` runs this scenario at `must` (pack v2 promotes the image-offload entries).
 *
 * Fails `sim conform --level must` with **WORLD-03** (`faults/fault-12-image-offload-required.yaml`).
 */
import { withFetch } from './support.ts'

export default withFetch('broken-offload-everything', (fetch) => async (input, init) => {
  const response = await fetch(input, init)
  if (response.status !== 400) return response
  const text = await response.text()
  let body: { error?: Record<string, unknown> }
  try {
    body = JSON.parse(text) as { error?: Record<string, unknown> }
  } catch {
    return new Response(text, { status: 400, headers: response.headers })
  }
  const error = body.error
  if (error?.['type'] !== 'image_offload_required') return new Response(text, { status: 400, headers: response.headers })
  return Response.json({ error: { ...error, offloadImages: 1_000 } }, { status: 400, headers: response.headers })
})
