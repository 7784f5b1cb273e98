/**
 * Mounts a mock provider with nock, for clients built on `node:http` (and fetch) that msw does not suit.
 * Persistent interceptors delegate to the same WHATWG handler as the msw mount: the request is rebuilt as a
 * `Request`, the `Response` is replayed with its status, headers and streamed body. A planned network
 * error (`Response.error()`) destroys the request before headers (`ECONNRESET`); a body that errors after
 * headers errors the response stream. While mounted, non-loopback hosts are refused (`disableNetConnect`).
 * Never combine with msw in one test file or process (after msw closes, nock stays disarmed).
 */
import { Readable } from 'node:stream'
import type { ReadableStream as NodeReadableStream } from 'node:stream/web'
import nock from 'nock'
import type { MockProvider } from './mock-provider.ts'

/** A live nock mount. */
export interface NockMount {
  /** The base URL the provider answers under (no trailing slash). */
  baseURL: string
  /** Removes this mount's interceptors and re-allows network connections. Idempotent. */
  close(): void
}

/** Raised into the intercepted request for a planned reset before headers. */
class MockConnectionReset extends Error {
  override readonly name = 'MockConnectionReset'
  readonly code = 'ECONNRESET'
}

type NockResult = [number, string | Readable, Record<string, string>]

/** Starts nock interceptors for `provider` under `baseUrl`. */
export function mountNock(provider: MockProvider, baseUrl: string): NockMount {
  const base = new URL(baseUrl)
  const origin = base.origin
  const basePath = base.pathname.replace(/\/+$/, '')
  const reply = async function (this: nock.ReplyFnContext, uri: string, body: nock.Body): Promise<NockResult> {
    const controller = new AbortController()
    this.req.once('close', () => controller.abort(new Error('client closed the request')))
    const init: RequestInit = { method: this.req.method, headers: this.req.headers, signal: controller.signal }
    if (this.req.method !== 'GET' && this.req.method !== 'HEAD') init.body = typeof body === 'string' ? body : JSON.stringify(body)
    const response = await provider.handle(new Request(`${origin}${uri}`, init))
    if (response.type === 'error') throw new MockConnectionReset('mock provider: connection reset before headers')
    const headers: Record<string, string> = {}
    response.headers.forEach((value, name) => {
      headers[name] = value
    })
    const stream = response.body === null ? '' : Readable.fromWeb(response.body as NodeReadableStream<Uint8Array>)
    return [response.status, stream, headers]
  }
  const scope = nock(origin).persist()
  const chat = (uri: string): boolean => uri === `${basePath}/chat/completions` || uri === `${basePath}/messages` // anthropic wire
  const interceptors = [scope.post(chat), scope.get((uri) => uri.startsWith(`${basePath}/models`))]
  for (const i of interceptors) i.reply(reply)
  nock.disableNetConnect()
  nock.enableNetConnect(/^(127\.0\.0\.1|localhost|\[::1\])(:\d+)?$/)
  let open = true
  return {
    baseURL: `${origin}${basePath}`,
    close(): void {
      if (!open) return
      open = false
      for (const i of interceptors) nock.removeInterceptor(i)
      scope.persist(false)
      nock.enableNetConnect()
    },
  }
}
