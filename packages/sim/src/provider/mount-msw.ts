/**
 * Mounts mock providers in-process with msw (`@compaction-sim/sim/msw`, for projects that use msw themselves; msw
 * is an optional peer dependency — sim's own runs use `mount-intercept.ts`, without msw): `setupServer` with one
 * `http.post`/`http.get` handler per route, each delegating to the provider's WHATWG handler. Requests to
 * any other URL fail (`onUnhandledRequest: 'error'`), so a run can never reach a real provider. msw patches
 * the process's `fetch` and `node:http`: never combine it with nock in one test file or process.
 */
import { http, type HttpHandler } from 'msw'
import { setupServer, type SetupServer } from 'msw/node'
import type { MockProvider } from './mock-provider.ts'

/** A live msw mount. */
export interface MswMount {
  /** The base URL the providers answer under (no trailing slash), e.g. `http://openai.mock/v1`. */
  baseURL: string
  /** The underlying msw server (for `use`/`resetHandlers` in tests). */
  server: SetupServer
  /** Stops intercepting. Idempotent. */
  close(): void
}

function trimmed(baseUrl: string): string {
  return new URL(baseUrl).href.replace(/\/+$/, '')
}

/** The msw handlers of one provider under `baseUrl` (chat completions or messages, model metadata, model list). */
export function mswHandlers(provider: MockProvider, baseUrl: string): HttpHandler[] {
  const base = trimmed(baseUrl)
  return [
    http.post(`${base}/chat/completions`, ({ request }) => provider.handle(request)),
    http.post(`${base}/messages`, ({ request }) => provider.handle(request)), // the anthropic wire
    http.get(`${base}/models/:id`, ({ request }) => provider.handle(request)),
    http.get(`${base}/models`, ({ request }) => provider.handle(request)),
  ]
}

/** Starts msw for `provider` under `baseUrl` (and, optionally, more providers under their own base URLs). */
export function mountMsw(
  provider: MockProvider,
  baseUrl: string,
  more: ReadonlyArray<{ provider: MockProvider; baseUrl: string }> = [],
): MswMount {
  const server = setupServer(...mswHandlers(provider, baseUrl), ...more.flatMap((m) => mswHandlers(m.provider, m.baseUrl)))
  server.listen({ onUnhandledRequest: 'error' })
  let open = true
  return {
    baseURL: trimmed(baseUrl),
    server,
    close(): void {
      if (!open) return
      open = false
      server.close()
    },
  }
}
