/**
 * Broken example: the model lookup hard-codes a 128k window instead of reading the route's metadata, so the
 * subject records (and plans with) a capacity the route does not have (§2.7): it never compacts on time and
 * relies on provider-confirmed overflow alone.
 *
 * Fails `sim conform --level must` with **WORLD-02** (`smoke/basic-pressure.yaml`).
 */
import { withFetch } from './support.ts'

export default withFetch('broken-wrong-capacity', (fetch) => async (input, init) => {
  const response = await fetch(input, init)
  const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url
  if (!/\/models\/[^/]+$/.test(url) || response.status !== 200) return response
  const info = await response.json() as Record<string, unknown>
  return Response.json({ ...info, context_window: 128_000 }) // "every model we use has 128k"
})
