/**
 * The in-process mount without msw (`mount-intercept.ts`): a route answers with the handler's Response (over
 * `fetch` and `node:http`), a `/models/:id` route matches exactly one more segment, `Response.error()` is a
 * network error, any other URL is refused with an error naming it, and after `close()` nothing is intercepted.
 * (`http.request` is called through the module object: the interception patches it there, at mount time.)
 */
import http from 'node:http'
import { afterEach, expect, it } from 'vitest'
import { interceptRoutes, type InterceptRoute } from '../../src/provider/mount-intercept.ts'

const BASE = 'http://intercept.mock/v1'
let stop: (() => void) | null = null
afterEach(() => {
  stop?.()
  stop = null
})

const routes: InterceptRoute[] = [
  { method: 'POST', base: BASE, path: '/chat/completions', handle: async (r) => Response.json({ echo: await r.text() }) },
  { method: 'GET', base: BASE, path: '/models/:id', handle: (r) => Response.json({ id: new URL(r.url).pathname.split('/').at(-1) }) },
  { method: 'GET', base: BASE, path: '/broken', handle: () => Response.error() },
]

/** GET `url` with `node:http`; resolves to the status and body, or rejects with the request's error. */
function httpGet(url: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    http.request(url, (res) => {
      let body = ''
      res.setEncoding('utf8').on('data', (c: string) => (body += c)).on('end', () => resolve({ status: res.statusCode ?? 0, body }))
    }).on('error', reject).end()
  })
}

it('answers the routes over fetch and node:http, and refuses everything else naming the URL', async () => {
  stop = interceptRoutes(routes)
  const chat = await fetch(`${BASE}/chat/completions`, { method: 'POST', body: 'hi' })
  expect(await chat.json()).toEqual({ echo: 'hi' })
  expect(await httpGet(`${BASE}/models/m-1?x=1`)).toEqual({ status: 200, body: '{"id":"m-1"}' })
  await expect(fetch(`${BASE}/models/a/b`)).rejects.toThrow(TypeError)
  await expect(fetch(`${BASE}/chat/completions`)).rejects.toThrow(TypeError) // GET: wrong method
  const refused = await httpGet('http://elsewhere.example/v1/models/x').then(() => null, (err: Error) => err.message)
  expect(refused).toContain('no mock provider route for GET http://elsewhere.example/v1/models/x')
  await expect(fetch(`${BASE}/broken`)).rejects.toThrow(TypeError)
})

it('close() stops intercepting and is idempotent', async () => {
  const close = interceptRoutes(routes)
  close()
  close()
  // Nothing answers the mock host any more: the request goes to DNS and fails, not with the mock's message.
  const err = await fetch(`${BASE}/models/m-1`).then(() => new Error('answered'), (e: Error & { cause?: unknown }) => e)
  expect(err.message).not.toBe('answered')
  expect(String(err.cause ?? err.message)).not.toContain('no mock provider route')
})
