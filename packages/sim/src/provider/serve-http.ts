/**
 * Serves a mock provider on a real `node:http` server (loopback by default, design §8), for adapters
 * written in any language and for tests of real socket behaviour. Fault delivery matches the other mounts:
 * a planned network error destroys the socket before any byte is written (reset before headers); every
 * other response calls `flushHeaders()` before its body, so a body that errors later reaches the client
 * as a failure *after* headers (style §6 pitfall: without the flush both look like a reset). Each frame is
 * written to the socket before the next is read, so a cut after N frames delivers exactly N.
 */
import { once } from 'node:events'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { MockProvider } from './mock-provider.ts'

/** Options of `serveHttp`. */
export interface ServeHttpOptions {
  /** Interface to bind. Default `127.0.0.1`. */
  host?: string
  /** Port; 0 picks a free one. Default 0. */
  port?: number
  /** Path prefix of the returned `baseURL`. Default `/v1`. */
  basePath?: string
  /** Bound on one request body in bytes (larger → 413 and the socket is closed). Default 64 MiB. */
  bodyBytesMax?: number
}

/** A running server. */
export interface HttpServing {
  /** e.g. `http://127.0.0.1:40123/v1`. */
  baseURL: string
  /** Closes every connection and the listener. Idempotent. */
  close(): Promise<void>
}

async function readBody(req: IncomingMessage, bytesMax: number): Promise<Buffer | undefined> {
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of req) {
    const b = chunk as Buffer
    size += b.length
    if (size > bytesMax) return undefined
    chunks.push(b)
  }
  return Buffer.concat(chunks)
}

async function serve(
  provider: Pick<MockProvider, 'handle'>, req: IncomingMessage, res: ServerResponse, origin: string, bytesMax: number,
): Promise<void> {
  const body = await readBody(req, bytesMax)
  if (body === undefined) {
    res.writeHead(413, { 'content-type': 'application/json', 'connection': 'close' })
    res.end(JSON.stringify({ error: { message: 'request body too large', type: 'invalid_request_error', param: null, code: null } }))
    return
  }
  const controller = new AbortController()
  res.once('close', () => {
    if (!res.writableFinished) controller.abort(new Error('client went away'))
  })
  const headers = new Headers()
  for (let i = 0; i + 1 < req.rawHeaders.length; i += 2) headers.append(req.rawHeaders[i] as string, req.rawHeaders[i + 1] as string)
  const init: RequestInit = { method: req.method ?? 'GET', headers, signal: controller.signal }
  if (init.method !== 'GET' && init.method !== 'HEAD') init.body = body
  const response = await provider.handle(new Request(`${origin}${req.url ?? '/'}`, init))
  // A network error, or an answer that comes after the client went away (fault delivery `after-timeout`): nothing is written.
  if (response.type === 'error' || controller.signal.aborted) {
    req.socket.destroy()
    return
  }
  const out: Record<string, string> = {}
  response.headers.forEach((value, name) => {
    out[name] = value
  })
  res.writeHead(response.status, out)
  res.flushHeaders()
  if (response.body === null) {
    res.end()
    return
  }
  const reader = response.body.getReader()
  controller.signal.addEventListener(
    'abort',
    () => {
      reader.cancel().catch(() => undefined /* the body already ended or failed */)
    },
    { once: true },
  )
  try {
    for (;;) {
      const { done, value } = await reader.read()
      if (done) break
      // Wait until the frame reached the socket: a cut destroys the socket next, and must not drop frames already sent.
      await new Promise<void>((resolve, reject) => {
        res.write(value, (err) => (err === undefined || err === null ? resolve() : reject(err)))
      })
    }
    res.end()
  } catch {
    // the provider's body failed after headers (a planned cut) or the client left: drop the connection
    res.destroy()
  }
}

/** Starts a real HTTP server for `provider` (anything with the provider's `handle`); resolves once it listens. */
export async function serveHttp(provider: Pick<MockProvider, 'handle'>, options: ServeHttpOptions = {}): Promise<HttpServing> {
  const host = options.host ?? '127.0.0.1'
  const bytesMax = options.bodyBytesMax ?? 64 * 1024 * 1024
  let origin = ''
  const server = createServer((req, res) => {
    serve(provider, req, res, origin, bytesMax).catch(() => {
      // a failure of the handler itself (a bug) or of the socket: the client sees a reset
      res.destroy()
    })
  })
  server.listen(options.port ?? 0, host)
  await once(server, 'listening')
  const address = server.address() as AddressInfo
  const hostPart = address.family === 'IPv6' ? `[${address.address}]` : address.address
  origin = `http://${hostPart}:${address.port}`
  let closed: Promise<void> | undefined
  return {
    baseURL: `${origin}${(options.basePath ?? '/v1').replace(/\/+$/, '')}`,
    close(): Promise<void> {
      closed ??= new Promise<void>((resolve, reject) => {
        server.close((err) => (err === undefined ? resolve() : reject(err)))
        server.closeAllConnections()
      })
      return closed
    },
  }
}
